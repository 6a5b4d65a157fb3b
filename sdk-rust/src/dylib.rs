//! The dylib side of the C ABI (see `yohost_contract::abi`). Used through
//! [`export_plugin!`](crate::export_plugin); not called directly.

use crate::{dispatch, instance, Plugin};
pub use yohost_contract::abi::PluginEntry;
use yohost_contract::abi::{Buffer, HostApi, STATUS_ERROR, STATUS_OK, STATUS_PANIC};
use yohost_contract::Hook;

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
// The pointers are valid by the ABI's contract with the host, which is the
// only caller; the function must stay safe to fit the entry table's type.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub extern "C" fn call<P: Plugin>(
    host: *const HostApi,
    hook: u32,
    input: *const u8,
    input_len: usize,
    out: *mut Buffer,
) -> i32 {
    let outcome = std::panic::catch_unwind(|| {
        let _current = crate::log::CurrentHost::enter(host);
        let hook = *Hook::ALL
            .get(hook as usize)
            .ok_or_else(|| format!("unknown hook number {hook}"))?;
        // SAFETY: the host owns `input` for the duration of this call.
        let input = unsafe { std::slice::from_raw_parts(input, input_len) };
        let args: serde_json::Value = rmp_serde::from_slice(input)
            .map_err(|e| format!("the host sent an argument this plugin cannot read: {e}"))?;
        let reply = dispatch(instance::<P>(), hook, args)?;
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
