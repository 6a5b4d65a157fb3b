//! Rust dylib plugins through the C ABI of [`yohost_contract::abi`].
//!
//! The library is copied to a private folder only this user can write, under
//! a name that is the SHA-256 of its bytes, before it is opened: the dynamic
//! loader caches libraries by path, so a changed file at the same path loads
//! as new code, and a file planted under that name is never loaded. Calls run on a worker
//! thread of the plugin's own ([`crate::call::worker`]); a hook past its deadline
//! is abandoned and its worker retired (native code cannot be interrupted;
//! dylib plugins are trusted code, not sandboxed).

use crate::call::codec::{decode_msgpack_reply, encode_msgpack_args};
use crate::call::error::CallError;
use crate::call::logging::{plugin_log, LogLevel};
use crate::call::plugin::{CallLimits, Plugin, PluginRun};
use crate::call::worker::WorkerSlot;
use crate::load::discovery::Candidate;
use crate::load::error::LoadError;
use crate::load::loaded::Loaded;
use crate::load::{private_dir, source};
use crate::model::limits::MAX_LIBRARY_BYTES;
use crate::model::sync::lock;
use libloading::Library;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::ffi::c_void;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use yohost_contract::abi::{self, Buffer, HostApi, PluginEntry};
use yohost_contract::{Hook, HookCall, RunInfo, ABI_VERSION, DATA_DIR_SYMBOL, ENTRY_SYMBOL};

/// Load a dylib plugin.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    let path = &candidate.entry;
    let invalid = |message: String| LoadError::Invalid {
        path: path.clone(),
        message,
    };
    let private = private_copy(path)?;
    // SAFETY: loading a library runs its initializers; dylib plugins are
    // trusted code by design (see the crate docs).
    let library = unsafe { Library::new(&private) }
        .map_err(|e| invalid(format!("cannot load the library: {e}")))?;
    // SAFETY: the symbol's type is fixed by the ABI; a library built with
    // yohost-sdk exports exactly this signature.
    let entry_fn = unsafe {
        library.get::<extern "C" fn() -> *const PluginEntry>(ENTRY_SYMBOL.as_bytes())
    }
    .map_err(|_| {
        invalid(format!(
            "not a yohost plugin: the library exports no `{ENTRY_SYMBOL}` (build it with yohost-sdk's `export_plugin!`)"
        ))
    })?;
    let entry = entry_fn();
    if entry.is_null() {
        return Err(invalid(format!("`{ENTRY_SYMBOL}` returned no entry table")));
    }
    // SAFETY: every ABI version starts with `abi_version: u32`; nothing else
    // is read before the version is checked.
    let version = unsafe { std::ptr::read(entry as *const u32) };
    if version != ABI_VERSION {
        return Err(LoadError::IncompatibleApi {
            path: path.clone(),
            message: format!(
                "built for dylib ABI version {version}, but this host speaks version {ABI_VERSION}; rebuild it against this yohost-sdk"
            ),
        });
    }
    // SAFETY: the version matches, so the table has this layout, and it is
    // static data of the library, which `DylibPlugin` keeps loaded.
    let table: &'static PluginEntry = unsafe { &*entry };
    let name = unsafe { std::slice::from_raw_parts(table.name, table.name_len) };
    let name = String::from_utf8_lossy(name).into_owned();
    let hooks = declared_hooks(table.hooks, Hook::from_abi_number).map_err(|number| {
        LoadError::IncompatibleApi {
            path: path.clone(),
            message: format!(
                "declares hook number {number}, which this host does not know: it was built against a newer yohost-contract; update yohost, or rebuild the plugin against the yohost-sdk of this host"
            ),
        }
    })?;
    // Log lines carry the name the host gives the plugin (the registry's
    // rule: a manifest's name wins over the library's own).
    let host_name = if candidate.named_by_manifest || name.is_empty() {
        candidate.name.clone()
    } else {
        name.clone()
    };
    if let Some(dir) = &candidate.data_dir {
        tell_data_dir(&library, dir);
    }
    let plugin = Arc::new(DylibPlugin {
        name: host_name.into(),
        table,
        library: Arc::new(library),
        worker: Arc::new(WorkerSlot::new(&format!("dylib-{name}"))),
    });
    let mut loaded = Loaded::new(plugin, hooks);
    loaded.name = Some(name);
    Ok(loaded)
}

/// Tell the library its data folder through its optional export
/// [`DATA_DIR_SYMBOL`] (yohost-sdk's `export_plugin!` defines it); a
/// library without it is not told.
fn tell_data_dir(library: &Library, dir: &Path) {
    // SAFETY: the symbol's type is fixed by the contract.
    let told =
        unsafe { library.get::<extern "C" fn(*const u8, usize)>(DATA_DIR_SYMBOL.as_bytes()) };
    if let Ok(tell) = told {
        let path = dir.as_os_str().as_encoded_bytes();
        tell(path.as_ptr(), path.len());
    }
}

/// The hooks the `hooks` word of an entry table declares, each by its
/// stable number ([`Hook::abi_number`]), read with `hook_of` (the hook of a
/// number the host knows). A number the host does not know is returned as
/// the error: a plugin built against a newer contract is refused, never
/// loaded without a hook it claims (a policy whose hook is never called).
fn declared_hooks<H: Ord>(
    bits: u32,
    hook_of: impl Fn(u32) -> Option<H>,
) -> Result<BTreeSet<H>, u32> {
    (0..u32::BITS)
        .filter(|n| bits & (1 << n) != 0)
        .map(|n| hook_of(n).ok_or(n))
        .collect()
}

/// Copy the library into the private folder `dylib` (see
/// [`crate::load::private_dir`]) as `<sha256>.<ext>`, and return the copy's path.
/// Every native library the host or an adapter opens goes through this copy,
/// so a changed file at the same path loads as new code.
///
/// A copy already there is reused only when its bytes have the same SHA-256
/// (checked once per process while the file stays the same, see
/// `verified`);
/// anything else under that name (a planted or half-written file) is
/// replaced by a fresh copy, written under a new name (`O_EXCL`) and
/// renamed into place.
pub fn private_copy(path: &Path) -> Result<PathBuf, LoadError> {
    let bytes =
        source::read_bytes(path, MAX_LIBRARY_BYTES).map_err(|problem| LoadError::Unreadable {
            path: path.to_path_buf(),
            problem,
        })?;
    let folder =
        private_dir::cache_folder("dylib").map_err(|problem| LoadError::NoPrivateFolder {
            path: path.to_path_buf(),
            problem,
        })?;
    let copy_failed = |e: std::io::Error| LoadError::Invalid {
        path: path.to_path_buf(),
        message: format!("cannot copy the library into {}: {e}", folder.display()),
    };
    let digest = sha256_hex(&bytes);
    let copy = folder.join(format!("{digest}.{}", std::env::consts::DLL_EXTENSION));
    if verified(&copy) {
        return Ok(copy);
    }
    let before = identity(&copy);
    if source::read_bytes(&copy, MAX_LIBRARY_BYTES).is_ok_and(|old| sha256_hex(&old) == digest) {
        remember_verified(&copy, before);
        return Ok(copy);
    }
    let partial = write_new(&folder, &digest, &bytes).map_err(copy_failed)?;
    std::fs::rename(&partial, &copy).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        copy_failed(e)
    })?;
    Ok(copy)
}

/// A file's identity and last change: a write to it, or another file
/// renamed over it, changes it.
type Identity = (u64, u64, u64, i64, i64, i64, i64);

/// The copies this process checked, with their identity when checked.
static VERIFIED: std::sync::Mutex<Option<std::collections::HashMap<PathBuf, Identity>>> =
    std::sync::Mutex::new(None);

#[cfg(unix)]
fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    ))
}

/// Without a file's inode, every copy is checked each time.
#[cfg(not(unix))]
fn identity(_path: &Path) -> Option<Identity> {
    None
}

/// Whether `copy` is the very file this process already checked, unchanged
/// since: then its bytes need not be read and hashed again for each plugin
/// that loads the same library.
fn verified(copy: &Path) -> bool {
    let known = lock(&VERIFIED).as_ref().and_then(|v| v.get(copy).copied());
    known.is_some_and(|known| identity(copy) == Some(known))
}

/// Remember that `copy` was checked, if it is still the file it was
/// (`before`) when the check began.
fn remember_verified(copy: &Path, before: Option<Identity>) {
    let Some(before) = before else { return };
    if identity(copy) == Some(before) {
        lock(&VERIFIED)
            .get_or_insert_with(Default::default)
            .insert(copy.to_path_buf(), before);
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Write `bytes` to a file of `folder` that did not exist before, and
/// return its path.
fn write_new(folder: &Path, digest: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let partial = folder.join(format!(
            "{digest}.{}-{}.part",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
        {
            Ok(mut file) => {
                file.write_all(bytes)?;
                return Ok(partial);
            }
            // Left over by an earlier process with the same id: next name.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

struct DylibPlugin {
    name: Arc<str>,
    table: &'static PluginEntry,
    /// Keeps `table` valid while any worker may still run its code.
    library: Arc<Library>,
    worker: Arc<WorkerSlot>,
}

#[async_trait::async_trait]
impl Plugin for DylibPlugin {
    async fn open_run(&self, run: &RunInfo) -> Result<Arc<dyn PluginRun>, CallError> {
        Ok(Arc::new(DylibRun {
            name: Arc::clone(&self.name),
            run_id: run.run_id.as_str().into(),
            table: self.table,
            library: Arc::clone(&self.library),
            worker: Arc::clone(&self.worker),
        }))
    }
}

struct DylibRun {
    name: Arc<str>,
    /// The run's id, which every log line of its calls carries.
    run_id: Arc<str>,
    table: &'static PluginEntry,
    library: Arc<Library>,
    worker: Arc<WorkerSlot>,
}

/// What a plugin's `log` callback writes on behalf of: lives on the calling
/// thread's stack for the duration of one call.
struct LogTarget<'a> {
    run_id: &'a str,
    plugin: &'a str,
}

extern "C" fn host_log(ctx: *const c_void, level: u32, msg: *const u8, len: usize) {
    if ctx.is_null() || msg.is_null() {
        return;
    }
    // SAFETY: `ctx` is the `LogTarget` of the call in progress, and the
    // plugin passes a message it owns for the duration of this call.
    let (target, message) = unsafe {
        (
            &*(ctx as *const LogTarget<'_>),
            std::slice::from_raw_parts(msg, len),
        )
    };
    let level = match level {
        abi::LOG_ERROR => LogLevel::Error,
        abi::LOG_WARN => LogLevel::Warn,
        abi::LOG_DEBUG => LogLevel::Debug,
        _ => LogLevel::Info,
    };
    plugin_log(
        target.run_id,
        target.plugin,
        level,
        &String::from_utf8_lossy(message),
    );
}

/// What the plugin's code answered: its status and the bytes it wrote.
struct Answer {
    status: i32,
    bytes: Vec<u8>,
}

/// Run the plugin's code for one call on this thread, on input the caller
/// encoded. Only two buffers cross threads, the input and the answer: the
/// call's typed values are built, read and freed on the caller's thread,
/// whose caches hold them.
fn call_native(
    table: &'static PluginEntry,
    target: &LogTarget<'_>,
    hook_number: u32,
    input: &[u8],
) -> Answer {
    let host = HostApi {
        ctx: target as *const LogTarget<'_> as *const c_void,
        log: host_log,
    };
    let mut out = Buffer::EMPTY;
    // SAFETY: `host`, `input` and `out` are valid for the whole call, as the
    // ABI requires.
    let status = unsafe { (table.call)(&host, hook_number, input.as_ptr(), input.len(), &mut out) };
    let bytes = if out.ptr.is_null() {
        Vec::new()
    } else {
        // SAFETY: the plugin wrote `len` initialized bytes at `ptr`.
        unsafe { std::slice::from_raw_parts(out.ptr, out.len) }.to_vec()
    };
    (table.free)(out);
    Answer { status, bytes }
}

/// The plugin's answer to `call`, read.
fn read_answer(hook: Hook, answer: Answer) -> Result<Value, CallError> {
    let bytes = answer.bytes;
    match answer.status {
        abi::STATUS_OK => decode_msgpack_reply(hook, &bytes),
        abi::STATUS_ERROR => Err(CallError::Guest(
            String::from_utf8_lossy(&bytes).into_owned(),
        )),
        abi::STATUS_PANIC => Err(CallError::Crashed(format!(
            "panicked: {}",
            String::from_utf8_lossy(&bytes)
        ))),
        other => Err(CallError::Crashed(format!(
            "returned unknown status {other}"
        ))),
    }
}

#[async_trait::async_trait]
impl PluginRun for DylibRun {
    async fn call(&self, call: HookCall, _limits: CallLimits) -> Result<Value, CallError> {
        let input = encode_msgpack_args(&call)?;
        // The argument is held once, encoded: the typed call goes now.
        let hook = call.hook();
        drop(call);
        let hook_number = hook.abi_number();
        let table = self.table;
        let library = Arc::clone(&self.library);
        let name = Arc::clone(&self.name);
        let run_id = Arc::clone(&self.run_id);
        let answer = self
            .worker
            .run(move || {
                let _library = library; // keep the code loaded while it runs
                let target = LogTarget {
                    run_id: &run_id,
                    plugin: &name,
                };
                call_native(table, &target, hook_number, &input)
            })
            .await
            .map_err(|e| CallError::Crashed(e.to_string()))?;
        read_answer(hook, answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hooks of a host that knows one hook more than this contract,
    /// under the next number (10).
    #[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum NextHook {
        Released(Hook),
        AfterModel,
    }

    fn next_hook_of(number: u32) -> Option<NextHook> {
        match number {
            10 => Some(NextHook::AfterModel),
            n => Hook::from_abi_number(n).map(NextHook::Released),
        }
    }

    /// The `hooks` word the SDK writes for a plugin with `hooks`.
    fn sdk_word(hooks: &'static [Hook]) -> u32 {
        yohost_sdk::Hooks::__derived_by_the_plugin_attribute(hooks).mask()
    }

    #[test]
    fn a_dylib_of_today_declares_the_same_hooks_to_a_host_that_knows_a_new_number() {
        let word = sdk_word(&Hook::ALL);
        assert_eq!(
            declared_hooks(word, Hook::from_abi_number),
            Ok(Hook::ALL.into_iter().collect())
        );
        assert_eq!(
            declared_hooks(word, next_hook_of),
            Ok(Hook::ALL.into_iter().map(NextHook::Released).collect())
        );
    }

    #[test]
    fn a_hook_number_the_host_does_not_know_is_refused_and_a_host_that_knows_it_reads_it() {
        let word = sdk_word(&[Hook::BeforeTool]) | 1 << 10;
        assert_eq!(declared_hooks(word, Hook::from_abi_number), Err(10));
        assert_eq!(
            declared_hooks(word, next_hook_of),
            Ok([NextHook::Released(Hook::BeforeTool), NextHook::AfterModel].into())
        );
    }

    #[test]
    fn loads_at_once_each_get_the_whole_copy() {
        let dir = tempfile::tempdir().unwrap();
        // Unique content, so no earlier copy exists.
        let mut bytes = format!("{:?}", std::time::SystemTime::now()).into_bytes();
        bytes.resize(4 << 20, b'x');
        let lib = dir.path().join("libraced.so");
        std::fs::write(&lib, &bytes).unwrap();
        let copies: Vec<PathBuf> = std::thread::scope(|s| {
            let loads: Vec<_> = (0..8).map(|_| s.spawn(|| private_copy(&lib))).collect();
            loads
                .into_iter()
                .map(|l| l.join().unwrap().unwrap())
                .collect()
        });
        for copy in &copies {
            assert!(std::fs::read(copy).unwrap() == bytes, "a whole copy");
        }
        std::fs::remove_file(&copies[0]).unwrap();
    }
}
