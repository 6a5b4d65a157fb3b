//! A dylib built for a later ABI version than the host speaks.

#[repr(C)]
pub struct FutureEntry {
    abi_version: u32,
}

static ENTRY: FutureEntry = FutureEntry { abi_version: 99 };

#[no_mangle]
pub extern "C" fn yohost_plugin_entry() -> *const FutureEntry {
    &ENTRY
}
