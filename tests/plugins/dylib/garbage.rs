//! A dylib that speaks the ABI but answers every hook with bytes that are
//! not MessagePack.

use yohost_contract::abi::{Buffer, HostApi, PluginEntry, STATUS_OK};

static REPLY: [u8; 3] = [0xc1, 0xc1, 0xc1];

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
    name: b"garbage".as_ptr(),
    name_len: 7,
    hooks: 1 << 2, // before_tool
    call,
    free,
};

#[no_mangle]
pub extern "C" fn yohost_plugin_entry() -> *const PluginEntry {
    &ENTRY
}
