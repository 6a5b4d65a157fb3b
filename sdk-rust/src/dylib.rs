//! The dylib side of the C ABI (see `yohost_contract::abi`). Used through
//! [`export_plugin!`](crate::export_plugin); not called directly.

use crate::{dispatch, instance, Plugin};
use std::path::PathBuf;
use std::sync::OnceLock;
pub use yohost_contract::abi::PluginEntry;
use yohost_contract::abi::{Buffer, HostApi, STATUS_ERROR, STATUS_OK, STATUS_PANIC};
use yohost_contract::Hook;

/// The data folder the host told this library ([`keep_data_dir`]).
static DATA_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Keep the data folder the host tells the library through
/// `yohost_plugin_data_dir` ([`DATA_DIR_SYMBOL`](yohost_contract::DATA_DIR_SYMBOL)).
/// The first folder told is kept: a library the host loads for two plugins
/// (the same bytes in two folders) is one library, with one set of statics.
///
/// # Safety
///
/// `path` must point to `len` readable bytes, or be null.
pub unsafe fn keep_data_dir(path: *const u8, len: usize) {
    if path.is_null() {
        return;
    }
    // SAFETY: the caller passes `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(path, len) };
    #[cfg(unix)]
    let dir = PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes));
    #[cfg(not(unix))]
    let dir = PathBuf::from(String::from_utf8_lossy(bytes).into_owned());
    let _ = DATA_DIR.set(dir);
}

/// The data folder the host told the library, if it did.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn data_dir() -> Option<PathBuf> {
    DATA_DIR.get().cloned()
}

/// Hand `bytes` to the host; it gives them back through [`free`].
fn give(bytes: Vec<u8>, out: *mut Buffer) {
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    let buffer = Buffer {
        ptr: bytes.as_mut_ptr(),
        len: bytes.len(),
        cap: bytes.capacity(),
    };
    // SAFETY: the host passes a valid, writable `out` for every call.
    unsafe { out.write(buffer) };
}

/// The entry table's `call`: decode, dispatch, encode, with panics caught.
///
/// # Safety
///
/// `host` must be valid for the call, `input` must point to `input_len`
/// readable bytes, and `out` must be writable: the host guarantees all three.
pub unsafe extern "C" fn call<P: Plugin>(
    host: *const HostApi,
    hook: u32,
    input: *const u8,
    input_len: usize,
    out: *mut Buffer,
) -> i32 {
    let outcome = std::panic::catch_unwind(|| {
        let _current = crate::log::CurrentHost::enter(host);
        let hook =
            Hook::from_abi_number(hook).ok_or_else(|| format!("unknown hook number {hook}"))?;
        // SAFETY: the host owns `input` for the duration of this call.
        let input = unsafe { std::slice::from_raw_parts(input, input_len) };
        let mut args = rmp_serde::Deserializer::from_read_ref(input);
        let reply = dispatch(instance::<P>(), hook, &mut args)?;
        rmp_serde::to_vec_named(&reply).map_err(|e| format!("cannot encode the reply: {e}"))
    });
    match outcome {
        Ok(Ok(bytes)) => {
            give(bytes, out);
            STATUS_OK
        }
        Ok(Err(message)) => {
            give(message.into_bytes(), out);
            STATUS_ERROR
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".into());
            give(message.into_bytes(), out);
            STATUS_PANIC
        }
    }
}

/// The entry table's `free`: release a buffer [`call`] gave the host.
pub extern "C" fn free(buffer: Buffer) {
    if !buffer.ptr.is_null() {
        // SAFETY: `buffer` came from `give`, which leaked exactly this Vec.
        drop(unsafe { Vec::from_raw_parts(buffer.ptr, buffer.len, buffer.cap) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BeforeToolArgs, BeforeToolReply, Hook, RunInfo};
    use std::ffi::c_void;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static LOGGED: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn count_log(_: *const c_void, _: u32, _: *const u8, len: usize) {
        LOGGED.fetch_add(len, Ordering::SeqCst);
    }

    #[derive(Default)]
    struct Denier;

    #[crate::plugin]
    impl Plugin for Denier {
        const NAME: &'static str = "denier";
        fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
            crate::info("judging");
            match call.args["text"].as_str() {
                Some("panic") => panic!("boom"),
                Some("error") => Err("cannot".into()),
                _ => Ok(BeforeToolReply::Deny(format!("no {}", call.tool))),
            }
        }
    }

    fn call_with(text: &str) -> (i32, Vec<u8>) {
        let host = HostApi {
            ctx: std::ptr::null(),
            log: count_log,
        };
        let args = BeforeToolArgs {
            run: RunInfo::default(),
            tool: "bash".into(),
            call_id: "c".into(),
            args: serde_json::json!({"text": text}),
            user_request: None,
            latest_user_text: None,
        };
        let input = rmp_serde::to_vec_named(&args).unwrap();
        let mut out = Buffer::EMPTY;
        let hook = Hook::BeforeTool.abi_number();
        // SAFETY: every pointer is valid for the call.
        let status = unsafe { call::<Denier>(&host, hook, input.as_ptr(), input.len(), &mut out) };
        // The host copies the bytes out, then hands the buffer back once.
        let bytes = unsafe { std::slice::from_raw_parts(out.ptr, out.len) }.to_vec();
        free(out);
        (status, bytes)
    }

    #[test]
    fn a_reply_crosses_as_messagepack_in_a_buffer_the_plugin_frees() {
        let (status, bytes) = call_with("ls");
        assert_eq!(status, STATUS_OK);
        let reply: serde_json::Value = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!(reply, serde_json::json!({"deny": "no bash"}));
        assert!(
            LOGGED.load(Ordering::SeqCst) >= "judging".len(),
            "the log went to the host"
        );
        free(Buffer::EMPTY); // an empty buffer owns nothing
    }

    #[test]
    fn errors_and_panics_come_back_as_statuses_with_messages() {
        let (status, bytes) = call_with("error");
        assert_eq!(
            (status, bytes.as_slice()),
            (STATUS_ERROR, b"cannot".as_slice())
        );
        let (status, bytes) = call_with("panic");
        assert_eq!(
            (status, bytes.as_slice()),
            (STATUS_PANIC, b"boom".as_slice())
        );
    }
}
