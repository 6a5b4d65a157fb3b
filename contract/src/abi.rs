//! The C ABI between the host and a dylib plugin.
//!
//! A dylib exports one symbol, [`ENTRY_SYMBOL`](crate::ENTRY_SYMBOL): an
//! `extern "C" fn() -> *const PluginEntry`. The host reads `abi_version`
//! first and refuses any version but [`ABI_VERSION`](crate::ABI_VERSION)
//! before it touches another field, so later versions may change the rest.
//!
//! Payloads cross as MessagePack bytes. **Ownership:** the host owns the
//! input buffer for the duration of `call`; the plugin allocates the output
//! [`Buffer`] and the host hands it back to the plugin's `free` exactly once.
//! Nothing allocated on one side is freed on the other.

use std::ffi::c_void;

/// `call` succeeded: the output holds the MessagePack reply.
pub const STATUS_OK: i32 = 0;
/// The hook returned an error: the output holds a UTF-8 message.
pub const STATUS_ERROR: i32 = 1;
/// The hook panicked (caught at the boundary): the output holds the message.
pub const STATUS_PANIC: i32 = 2;

/// Log levels passed to [`HostApi::log`].
pub const LOG_ERROR: u32 = 1;
/// Warning level.
pub const LOG_WARN: u32 = 2;
/// Info level.
pub const LOG_INFO: u32 = 3;
/// Debug level.
pub const LOG_DEBUG: u32 = 4;

/// Bytes allocated by the plugin and returned to it through `free`.
#[repr(C)]
#[derive(Debug)]
pub struct Buffer {
    /// Start of the bytes (null when empty).
    pub ptr: *mut u8,
    /// Number of initialized bytes.
    pub len: usize,
    /// Capacity of the allocation, for the plugin's own `free`.
    pub cap: usize,
}

impl Buffer {
    /// An empty buffer that owns nothing.
    pub const EMPTY: Buffer = Buffer {
        ptr: std::ptr::null_mut(),
        len: 0,
        cap: 0,
    };
}

/// What the host offers a plugin during one call. Valid only during that
/// call.
#[repr(C)]
pub struct HostApi {
    /// Opaque to the plugin; passed back to `log`.
    pub ctx: *const c_void,
    /// Write a log line for this call (it carries the call's `run_id`).
    pub log: extern "C" fn(ctx: *const c_void, level: u32, msg: *const u8, len: usize),
}

/// The table a dylib plugin exports.
#[repr(C)]
pub struct PluginEntry {
    /// Must equal [`ABI_VERSION`](crate::ABI_VERSION).
    pub abi_version: u32,
    /// The plugin's name, UTF-8.
    pub name: *const u8,
    /// Length of `name`.
    pub name_len: usize,
    /// Bit `1 << hook.abi_number()` is set for each hook the plugin
    /// implements ([`Hook::abi_number`](crate::Hook::abi_number)). A host
    /// refuses a plugin that sets the bit of a hook it does not know (one
    /// built against a newer contract); a new hook takes a new bit, so the
    /// bits of an older plugin keep their meaning.
    pub hooks: u32,
    /// Run one hook. `hook` is its ABI number ([`Hook::abi_number`](crate::Hook::abi_number)); `input` is the MessagePack
    /// argument; the reply (or error message) is written to `out`.
    pub call: unsafe extern "C" fn(
        host: *const HostApi,
        hook: u32,
        input: *const u8,
        input_len: usize,
        out: *mut Buffer,
    ) -> i32,
    /// Release a buffer this plugin wrote to `out`.
    pub free: extern "C" fn(buffer: Buffer),
}

// The entry table is immutable static data.
unsafe impl Sync for PluginEntry {}
