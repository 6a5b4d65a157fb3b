//! The versions of the `yohost:plugin` WIT package the host speaks, and
//! which one a component was built for.
//!
//! Each released version is frozen under `contract/wit/since_v<version>/`
//! and bound by a module of its own (`since_v0_1_0`, …) that converts
//! between its types and the contract's. A new hook is a new version that
//! adds it: the versions before it stay bound, so a component built for any
//! of them keeps loading, and is never called with a hook its version does
//! not have (the host calls only the hooks a plugin lists).

use super::sandbox::State;
use crate::call::error::CallError;
use serde_json::Value;
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Engine, Store};
use yohost_contract::{Hook, HookCall};

/// The package every version shares; a version is `<package>@<version>`.
pub(super) const PACKAGE: &str = "yohost:plugin";

/// One version of the package, bound by the host: its imports, and how its
/// exports answer in the contract's types.
pub(super) trait WitVersion: Send + Sync {
    /// The version, as in the package name (`0.1.0`).
    fn version(&self) -> &'static str;

    /// Give `linker` what a component of this version imports from the host
    /// (`host`), beside every other version's.
    fn add_to_linker(&self, linker: &mut Linker<State>) -> wasmtime::Result<()>;

    /// A component of this version, linked: fails if it does not export
    /// this version's `guest` as this version defines it.
    fn prepare(&self, pre: InstancePre<State>) -> wasmtime::Result<Box<dyn VersionedPre>>;
}

/// A component linked for its version, ready to instantiate.
pub(super) trait VersionedPre: Send + Sync {
    /// A new instance in `store`.
    fn instantiate(&self, store: &mut Store<State>) -> wasmtime::Result<Box<dyn VersionedGuest>>;
}

/// An instance's `guest` exports, answering in the contract's types. Every
/// method's outer error is a trap.
pub(super) trait VersionedGuest: Send {
    /// The plugin's own name.
    fn name(&self, store: &mut Store<State>) -> wasmtime::Result<String>;

    /// The hooks the plugin implements, as contract hooks.
    fn hooks(&self, store: &mut Store<State>) -> wasmtime::Result<Vec<Hook>>;

    /// Call the plugin's hook for `call`: its reply in the contract's JSON
    /// form, or the plugin's own error or a bad reply.
    fn call(
        &self,
        store: &mut Store<State>,
        call: &HookCall,
    ) -> wasmtime::Result<Result<Value, CallError>>;
}

/// The version of `versions` whose `guest` the component exports, or why it
/// cannot load, in words that say what to do: a version newer than every
/// one known needs a newer host (or a rebuild against this host's SDK), an
/// older one a rebuild.
pub(super) fn pick(
    versions: &'static [&'static dyn WitVersion],
    engine: &Engine,
    component: &Component,
) -> Result<&'static dyn WitVersion, String> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    if let Some(known) = versions.iter().find(|v| {
        exports
            .iter()
            .any(|name| *name == format!("{PACKAGE}/guest@{}", v.version()))
    }) {
        return Ok(*known);
    }
    let imports = ty.imports(engine).map(|(name, _)| name.to_string());
    let theirs = exports.iter().cloned().chain(imports).find_map(|name| {
        name.strip_prefix(PACKAGE)?
            .strip_prefix('/')?
            .split_once('@')
            .map(|(_, v)| v.to_string())
    });
    let spoken = versions
        .iter()
        .map(|v| format!("{PACKAGE}@{}", v.version()))
        .collect::<Vec<_>>()
        .join(", ");
    let newest = versions.last().map_or("", |v| v.version());
    Err(match theirs {
        Some(version) if numbers(&version) > numbers(newest) => format!(
            "built against {PACKAGE}@{version}, newer than this host speaks ({spoken}): update yohost, or rebuild the plugin against the yohost-sdk of this host"
        ),
        Some(version) => format!(
            "built against {PACKAGE}@{version}, which this host does not speak ({spoken}): rebuild it against the yohost-sdk of this host"
        ),
        None => format!(
            "not a yohost plugin: the component exports no `{PACKAGE}/guest` (build it with yohost-sdk's `export_plugin!` and the `wasm` feature)"
        ),
    })
}

/// A version's numbers, for ordering (`0.10.0` after `0.9.0`); a part that
/// is not a number counts as 0.
pub(super) fn numbers(version: &str) -> Vec<u64> {
    version
        .split(['.', '-', '+'])
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_number_not_by_text() {
        assert!(numbers("0.10.0") > numbers("0.9.0"));
        assert!(numbers("1.0.0") > numbers("0.99.9"));
        assert!(numbers("0.1.0") < numbers("0.2.0"));
    }
}
