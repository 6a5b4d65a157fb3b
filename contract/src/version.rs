//! Version constants of the plugin interface.

/// The dylib ABI version. A dylib's entry table carries the version it was
/// built for; the host refuses any other before calling a hook.
pub const ABI_VERSION: u32 = 1;

/// The symbol every dylib plugin exports: an `extern "C"` function that
/// returns a pointer to its entry table.
pub const ENTRY_SYMBOL: &str = "yohost_plugin_entry";

/// The symbol a dylib plugin may export to be told its data folder: an
/// `extern "C" fn(path: *const u8, len: usize)`, called once after the
/// entry table is accepted and before any hook, with the folder's path as
/// bytes (valid only during the call). Optional, so it is not part of
/// [`ABI_VERSION`]: a library without it is not told, and one that has it
/// on a host that does not call it finds no folder.
pub const DATA_DIR_SYMBOL: &str = "yohost_plugin_data_dir";

/// The newest version of the WIT package of Wasm components, the one the SDK
/// builds against: `wit/since_v<version>/plugin.wit` in this crate, frozen.
/// Hosts also speak every earlier released version.
pub const WIT_PACKAGE: &str = "yohost:plugin@0.1.0";
