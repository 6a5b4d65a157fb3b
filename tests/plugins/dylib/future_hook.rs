//! A dylib of the current ABI built against a newer contract: besides
//! `before_tool` (number 2) it declares hook number 10, which this contract
//! does not have. The host must refuse it, naming the number, rather than
//! load it without a hook it claims (a policy of a hook left uncalled).

use yohost_contract::abi::{Buffer, HostApi, PluginEntry, STATUS_OK};

/// MessagePack `nil`: allow.
static REPLY: [u8; 1] = [0xc0];

unsafe extern "C" fn call(
    _: *const HostApi,
    _: u32,
    _: *const u8,
    _: usize,
    out: *mut Buffer,
) -> i32 {
    // SAFETY: the host passes a writable `out`; the static is never freed.
    out.write(Buffer {
        ptr: REPLY.as_ptr() as *mut u8,
        len: REPLY.len(),
        cap: 0,
    });
    STATUS_OK
}

extern "C" fn free(_: Buffer) {}

static ENTRY: PluginEntry = PluginEntry {
    abi_version: yohost_contract::ABI_VERSION,
    name: b"future-hook".as_ptr(),
    name_len: 11,
    hooks: 1 << 2 | 1 << 10,
    call,
    free,
};

#[no_mangle]
pub extern "C" fn yohost_plugin_entry() -> *const PluginEntry {
    &ENTRY
}
