//! A path outside a Wasm plugin's grants fails as a denial a person can act
//! on, not as a missing file.
//!
//! The guest's libc (wasi-libc) resolves a path against the preopened
//! directories itself, and answers `ENOENT` without asking the host when no
//! preopen holds it (`/etc/passwd` with only `data` granted). So every
//! sandbox also preopens a *deny root*, `ROOT` (`/`), which holds every
//! path no grant holds (wasi-libc picks the longest matching preopen, so a
//! granted folder still wins for its own paths). The deny root is a
//! read-only, empty and already removed directory, and the functions below,
//! which replace WASI's own in the linker, refuse every lookup through it
//! with `access` (`EACCES`, Rust's `PermissionDenied`) and log the path and
//! the grant to add. A `..` that leads out of a granted folder is refused by
//! WASI itself (`not-permitted`, answered as `access` here), and so is a
//! write to a folder granted for reading only; both are logged the same way.

use super::sandbox::{State, ROOT};
use std::sync::Arc;
use wasmtime::component::{Linker, Resource};
use wasmtime::StoreContextMut;
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::sync::filesystem::{preopens, types as fs};
use wasmtime_wasi::p2::FsResult;

/// The WASI filesystem interfaces whose functions are replaced (the linker
/// serves every 0.2.x import from them).
const TYPES: &str = "wasi:filesystem/types@0.2.12";
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

/// The identity of a preopened directory: its host handle's address (the
/// context holds the handle for the store's life, so it is not reused).
fn identity(state: &mut State, fd: &Resource<Descriptor>) -> Option<usize> {
    match state.filesystem().table.get(fd) {
        Ok(Descriptor::Dir(dir)) => Some(Arc::as_ptr(&dir.dir) as usize),
        _ => None,
    }
}

/// What the guest asked for, as a log line names it.
struct Request<'a> {
    fd: &'a Resource<Descriptor>,
    path: &'a str,
    write: bool,
}

/// Log that `request` is not granted, naming the path as the guest gave it
/// (relative to the preopen `under`, when it is one) and the grant to add.
fn log_denied(state: &State, under: Option<&str>, request: &Request<'_>) {
    let path = match under {
        Some(under) => join(under, request.path),
        None => request.path.to_string(),
    };
    let (verb, key) = if request.write {
        ("writing", "write")
    } else {
        ("reading", "read")
    };
    tracing::warn!(
        run_id = %state.run_id,
        plugin = %state.plugin,
        path = %path,
        "plugin '{}': {verb} {path} is not granted: add its folder to `capabilities.{key}` in the plugin's plugin.toml",
        state.plugin
    );
}

/// `path` under the preopen named `under`.
fn join(under: &str, path: &str) -> String {
    let path = path.trim_start_matches("./");
    let path = if path == "." { "" } else { path };
    match (under.trim_end_matches('/'), path) {
        ("", p) => format!("/{p}"),
        (u, "") => u.to_string(),
        (u, p) => format!("{u}/{p}"),
    }
}

/// Replace `name`, a read of a path at a descriptor (`stat-at`,
/// `metadata-hash-at`), with `real` behind the deny root.
fn read_at<R>(
    types: &mut wasmtime::component::LinkerInstance<'_, State>,
    name: &str,
    real: fn(
        &mut wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
        Resource<Descriptor>,
        fs::PathFlags,
        String,
    ) -> FsResult<R>,
) -> wasmtime::Result<()>
where
    R: wasmtime::component::ComponentType + wasmtime::component::Lower + Send + Sync + 'static,
{
    types.func_wrap(
        name,
        move |mut store: StoreContextMut<'_, State>,
              (fd, path_flags, path): (Resource<Descriptor>, fs::PathFlags, String)| {
            let borrowed = Resource::<Descriptor>::new_borrow(fd.rep());
            let request = Request {
                fd: &fd,
                path: &path,
                write: false,
            };
            let result = guarded(&mut store, request, |view| {
                real(view, borrowed, path_flags, path.clone())
            })?;
            Ok((result,))
        },
    )
}

/// Refuse `request` when it goes through the deny root; else run `real`,
/// and log its refusal when it leaves a granted folder by `..` (answered
/// as `access` too) or writes to a folder granted for reading only.
fn guarded<R>(
    store: &mut StoreContextMut<'_, State>,
    request: Request<'_>,
    real: impl FnOnce(&mut wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>) -> FsResult<R>,
) -> wasmtime::Result<Result<R, fs::ErrorCode>> {
    let state = store.data_mut();
    let dir = identity(state, request.fd);
    if dir.is_some() && dir == state.deny_root {
        log_denied(state, Some(ROOT), &request);
        return Ok(Err(fs::ErrorCode::Access));
    }
    let mut view = state.filesystem();
    let result = real(&mut view);
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(e) => {
            let mut code = fs::Host::convert_error_code(&mut view, e)?;
            let escape = request.path.split('/').any(|c| c == "..");
            if escape && code == fs::ErrorCode::NotPermitted {
                // Said as the deny root says it.
                code = fs::ErrorCode::Access;
            }
            if matches!(code, fs::ErrorCode::NotPermitted | fs::ErrorCode::Access)
                && (escape || request.write)
            {
                let under = dir
                    .and_then(|d| state.preopens.iter().find(|(id, _)| *id == d))
                    .map(|(_, name)| name.as_str());
                log_denied(state, under, &request);
            }
            Ok(Err(code))
        }
    }
}

/// Replace WASI's preopen listing (to learn which descriptor is the deny
/// root) and its lookups by path.
pub(super) fn add_to_linker(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.instance(PREOPENS)?.func_wrap(
        "get-directories",
        |mut store: StoreContextMut<'_, State>, (): ()| {
            let state = store.data_mut();
            let dirs = preopens::Host::get_directories(&mut state.filesystem())?;
            for (fd, name) in &dirs {
                if let Some(id) = identity(state, fd) {
                    if name == ROOT && state.deny_root_wanted {
                        state.deny_root = Some(id);
                    }
                    if !state.preopens.iter().any(|(known, _)| *known == id) {
                        state.preopens.push((id, name.clone()));
                    }
                }
            }
            Ok((dirs,))
        },
    )?;
    let mut types = linker.instance(TYPES)?;
    types.func_wrap(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, State>,
         (fd, path_flags, path, oflags, flags): (
            Resource<Descriptor>,
            fs::PathFlags,
            String,
            fs::OpenFlags,
            fs::DescriptorFlags,
        )| {
            let write = flags
                .intersects(fs::DescriptorFlags::WRITE | fs::DescriptorFlags::MUTATE_DIRECTORY)
                || oflags.intersects(fs::OpenFlags::CREATE | fs::OpenFlags::TRUNCATE);
            let owned = Resource::<Descriptor>::new_borrow(fd.rep());
            let request = Request {
                fd: &fd,
                path: &path,
                write,
            };
            let result = guarded(&mut store, request, |view| {
                fs::HostDescriptor::open_at(view, owned, path_flags, path.clone(), oflags, flags)
            })?;
            Ok((result,))
        },
    )?;
    read_at(
        &mut types,
        "[method]descriptor.stat-at",
        |view, fd, flags, path| fs::HostDescriptor::stat_at(view, fd, flags, path),
    )?;
    read_at(
        &mut types,
        "[method]descriptor.metadata-hash-at",
        |view, fd, flags, path| fs::HostDescriptor::metadata_hash_at(view, fd, flags, path),
    )?;
    types.func_wrap(
        "[method]descriptor.readlink-at",
        |mut store: StoreContextMut<'_, State>, (fd, path): (Resource<Descriptor>, String)| {
            let borrowed = Resource::<Descriptor>::new_borrow(fd.rep());
            let request = Request {
                fd: &fd,
                path: &path,
                write: false,
            };
            let result = guarded(&mut store, request, |view| {
                fs::HostDescriptor::readlink_at(view, borrowed, path.clone())
            })?;
            Ok((result,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.read-directory",
        |mut store: StoreContextMut<'_, State>, (fd,): (Resource<Descriptor>,)| {
            let borrowed = Resource::<Descriptor>::new_borrow(fd.rep());
            let request = Request {
                fd: &fd,
                path: ".",
                write: false,
            };
            let result = guarded(&mut store, request, |view| {
                fs::HostDescriptor::read_directory(view, borrowed)
            })?;
            Ok((result,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_named_as_the_guest_gave_them() {
        assert_eq!(join("/", "etc/passwd"), "/etc/passwd");
        assert_eq!(join("/", "."), "/");
        assert_eq!(join("data", "../secret/key.txt"), "data/../secret/key.txt");
        assert_eq!(join("/etc", "x"), "/etc/x");
    }
}
