//! Write yohost plugins in Rust.
//!
//! Implement [`Plugin`] (every hook has a no-op default) in a block marked
//! [`#[plugin]`](macro@plugin), and export it with [`export_plugin!`]. The
//! attribute derives the hooks the host calls from the hook methods the
//! block defines: define `before_tool` and the host calls it; there is no
//! list to keep in step.
//!
//! ```
//! use yohost_sdk::*;
//!
//! #[derive(Default)]
//! struct NoRm;
//!
//! #[plugin]
//! impl Plugin for NoRm {
//!     const NAME: &'static str = "no-rm";
//!
//!     fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
//!         let command = call.args["command"].as_str().unwrap_or("");
//!         if call.tool == "bash" && command.contains("rm -rf") {
//!             return Ok(BeforeToolReply::Deny("rm -rf is not allowed".into()));
//!         }
//!         Ok(BeforeToolReply::Allow)
//!     }
//! }
//!
//! export_plugin!(NoRm);
//! ```
//!
//! Build it as a dylib with `crate-type = ["cdylib"]`. The same source
//! builds as a Wasm component: enable this crate's `wasm` feature and run
//! `cargo build --target wasm32-wasip2`; on a `wasm` target
//! [`export_plugin!`] emits the exports of the `yohost:plugin@0.1.0` world
//! (`wit/plugin.wit`) instead of the dylib entry symbol, and the log
//! functions write through the host's `log` import.
//!
//! A hook returns `Err(message)` to fail: the host then fails closed (a
//! failing `before_tool` denies the call, and so on). A panic is caught at
//! the boundary and treated the same way.
//!
//! A hand-written hook list is refused, with the attribute:
//!
//! ```compile_fail
//! use yohost_sdk::*;
//!
//! #[derive(Default)]
//! struct Listed;
//!
//! #[plugin]
//! impl Plugin for Listed {
//!     const NAME: &'static str = "listed";
//!     const HOOKS: &'static [Hook] = &[Hook::BeforeTool]; // error: remove `HOOKS`
//! }
//! ```
//!
//! and without it, where the impl lacks the derived set:
//!
//! ```compile_fail,E0046
//! use yohost_sdk::*;
//!
//! #[derive(Default)]
//! struct Unmarked;
//!
//! impl Plugin for Unmarked {
//!     const NAME: &'static str = "unmarked";
//!     fn before_tool(&self, _: BeforeToolArgs) -> Result<BeforeToolReply, String> {
//!         Ok(BeforeToolReply::Allow)
//!     }
//! }
//! ```

// Lets generated code name this crate as `yohost_sdk` from inside it too.
extern crate self as yohost_sdk;

#[doc(hidden)]
pub mod dylib;
mod log;
#[cfg(all(feature = "wasm", target_family = "wasm"))]
#[doc(hidden)]
pub mod wasm;
#[cfg(all(feature = "wasm", target_family = "wasm"))]
#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

pub use log::{debug, error, info, warn};
pub use serde_json::{json, Value};
pub use yohost_contract::{
    AfterToolArgs, AfterToolReply, BeforeModelArgs, BeforeModelReply, BeforeToolArgs,
    BeforeToolReply, CallToolArgs, ContentBlock, FinishArgs, Hook, OnEventArgs, OnInputArgs,
    OnInputReply, OnStopArgs, OnStopReply, RunInfo, ToolOutputData, ToolReply, ToolSpec,
    ABI_VERSION,
};
pub use yohost_sdk_macros::plugin;

/// The plugin's data folder: an absolute path outside the plugin directory,
/// made by the host before the plugin loads, where what it keeps survives
/// runs and reloads (writing there never reloads it). A dylib is told it by
/// the host when it loads; a Wasm component reads it from
/// `YOHOST_DATA_DIR`, the one folder it may write without a grant. In
/// `yohost check` it is named but not made. `None` outside a host (in unit
/// tests) and on a host that gives the plugin no data folder.
pub fn data_dir() -> Option<std::path::PathBuf> {
    #[cfg(target_family = "wasm")]
    return std::env::var_os("YOHOST_DATA_DIR").map(std::path::PathBuf::from);
    #[cfg(not(target_family = "wasm"))]
    return dylib::data_dir();
}

/// A yohost plugin. One value serves every run; the host may call `&self`
/// hooks from several threads at once.
pub trait Plugin: Default + Send + Sync + 'static {
    /// The plugin's name (a `plugin.toml` beside it may override it).
    const NAME: &'static str;

    /// The hooks this plugin implements, the only ones the host calls.
    /// Written by [`#[plugin]`](macro@plugin) from the block's methods.
    #[doc(hidden)]
    const DERIVED_HOOKS: Hooks;

    /// Tools to offer for a run.
    fn tools(&self, _run: &RunInfo) -> Result<Vec<ToolSpec>, String> {
        Ok(Vec::new())
    }

    /// Run one of this plugin's tools.
    fn call_tool(&self, call: CallToolArgs) -> Result<ToolReply, String> {
        Err(format!(
            "{} offers no tool named `{}`",
            Self::NAME,
            call.tool
        ))
    }

    /// Judge a tool call: allow, deny, or rewrite its arguments.
    fn before_tool(&self, _call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        Ok(BeforeToolReply::Allow)
    }

    /// Edit a tool call's output.
    fn after_tool(&self, _call: AfterToolArgs) -> Result<AfterToolReply, String> {
        Ok(AfterToolReply::default())
    }

    /// Add a note before a model request, or stop the run.
    fn before_model(&self, _turn: BeforeModelArgs) -> Result<BeforeModelReply, String> {
        Ok(BeforeModelReply::Continue)
    }

    /// Judge a prompted run's input.
    fn on_input(&self, _input: OnInputArgs) -> Result<OnInputReply, String> {
        Ok(OnInputReply::Pass)
    }

    /// Verify the model's final answer.
    fn on_stop(&self, _stop: OnStopArgs) -> Result<OnStopReply, String> {
        Ok(OnStopReply::Accept)
    }

    /// Observe an event of the run.
    fn on_event(&self, _event: OnEventArgs) -> Result<(), String> {
        Ok(())
    }

    /// The run ended.
    fn finish(&self, _finish: FinishArgs) -> Result<(), String> {
        Ok(())
    }
}

/// The set of hooks a [`Plugin`] implements, as derived by
/// [`#[plugin]`](macro@plugin) from the hook methods of its impl block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hooks(&'static [Hook]);

impl Hooks {
    /// The set written by the attribute; not for hand use.
    #[doc(hidden)]
    pub const fn __derived_by_the_plugin_attribute(hooks: &'static [Hook]) -> Self {
        Hooks(hooks)
    }

    /// The hooks, in the order the impl block defines them.
    pub const fn as_slice(self) -> &'static [Hook] {
        self.0
    }

    /// The bitmask that crosses the dylib boundary: bit
    /// `hook.abi_number()` for each hook.
    pub const fn mask(self) -> u32 {
        let mut mask = 0u32;
        let mut i = 0;
        while i < self.0.len() {
            mask |= 1 << self.0[i].abi_number();
            i += 1;
        }
        mask
    }
}

/// The plugin value of this library (or Wasm instance), made on first use.
pub(crate) fn instance<P: Plugin>() -> &'static P {
    use std::any::{Any, TypeId};
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static INSTANCES: OnceLock<Mutex<HashMap<TypeId, &'static (dyn Any + Send + Sync)>>> =
        OnceLock::new();
    let map = INSTANCES.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    let any = *map
        .entry(TypeId::of::<P>())
        .or_insert_with(|| Box::leak(Box::new(P::default())));
    any.downcast_ref::<P>().expect("one instance per type")
}

/// Run `hook` on `plugin` with its argument read straight from `args` (the
/// dylib export's MessagePack, with no JSON tree in between), returning the
/// JSON reply.
#[doc(hidden)]
pub fn dispatch<'de, P: Plugin, D: serde::Deserializer<'de>>(
    plugin: &P,
    hook: Hook,
    args: D,
) -> Result<Value, String> {
    fn from<'de, T: serde::Deserialize<'de>, D: serde::Deserializer<'de>>(
        args: D,
    ) -> Result<T, String> {
        T::deserialize(args)
            .map_err(|e| format!("the host sent an argument this plugin cannot read: {e}"))
    }
    Ok(match hook {
        Hook::Tools => json!(plugin.tools(&from(args)?)?),
        Hook::CallTool => plugin.call_tool(from(args)?)?.to_json(),
        Hook::BeforeTool => plugin.before_tool(from(args)?)?.to_json(),
        Hook::AfterTool => plugin.after_tool(from(args)?)?.to_json(),
        Hook::BeforeModel => plugin.before_model(from(args)?)?.to_json(),
        Hook::OnInput => plugin.on_input(from(args)?)?.to_json(),
        Hook::OnStop => plugin.on_stop(from(args)?)?.to_json(),
        Hook::OnEvent => {
            plugin.on_event(from(args)?)?;
            Value::Null
        }
        Hook::Finish => {
            plugin.finish(from(args)?)?;
            Value::Null
        }
        // An app hook (`Hook::APP`), which the SDK's `Plugin` does not
        // offer: a host never asks a plugin for a hook it did not declare.
        Hook::Command => return Err("this plugin has no `command` hook".into()),
    })
}

/// Export a [`Plugin`] type as this library's yohost plugin: the dylib
/// entry symbol on native targets, the `yohost:plugin` component exports on
/// `wasm` targets (with this crate's `wasm` feature).
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        /// Told by the host (`yohost_contract::DATA_DIR_SYMBOL`): see
        /// `yohost_sdk::data_dir`.
        ///
        /// # Safety
        ///
        /// `path` points to `len` readable bytes, as the host passes them.
        #[cfg(not(target_family = "wasm"))]
        #[no_mangle]
        pub unsafe extern "C" fn yohost_plugin_data_dir(path: *const u8, len: usize) {
            // SAFETY: the host passes `len` readable bytes for the call.
            unsafe { $crate::dylib::keep_data_dir(path, len) }
        }

        #[cfg(not(target_family = "wasm"))]
        #[no_mangle]
        pub extern "C" fn yohost_plugin_entry() -> *const $crate::dylib::PluginEntry {
            static ENTRY: $crate::dylib::PluginEntry = $crate::dylib::PluginEntry {
                abi_version: $crate::ABI_VERSION,
                name: <$plugin as $crate::Plugin>::NAME.as_ptr(),
                name_len: <$plugin as $crate::Plugin>::NAME.len(),
                hooks: <$plugin as $crate::Plugin>::DERIVED_HOOKS.mask(),
                call: $crate::dylib::call::<$plugin>,
                free: $crate::dylib::free,
            };
            &ENTRY
        }

        #[cfg(target_family = "wasm")]
        type __YohostComponent = $crate::wasm::Component<$plugin>;
        #[cfg(target_family = "wasm")]
        $crate::wasm::export_component!(__YohostComponent with_types_in $crate::wasm);
    };
}
