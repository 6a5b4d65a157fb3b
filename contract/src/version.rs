//! Version constants of the plugin interface.

/// The dylib ABI version. A dylib's entry table carries the version it was
/// built for; the host refuses any other before calling a hook.
pub const ABI_VERSION: u32 = 1;

/// The symbol every dylib plugin exports: an `extern "C"` function that
/// returns a pointer to its entry table.
pub const ENTRY_SYMBOL: &str = "yohost_plugin_entry";

/// The newest version of the WIT package of Wasm components, the one the SDK
/// builds against: `wit/since_v<version>/plugin.wit` in this crate, frozen.
/// Hosts also speak every earlier released version.
pub const WIT_PACKAGE: &str = "yohost:plugin@0.1.0";
