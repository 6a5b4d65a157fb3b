//! The module loader: only what [`ModuleSet`] linked at load, with the
//! built-in modules' bytecode cached for the whole process.

use crate::engines::js::module_set::ModuleSet;
use crate::model::sync::lock;
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{Ctx, Module};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Resolves only what [`ModuleSet`] linked at load.
pub(super) struct PluginResolver(pub(super) Arc<ModuleSet>);

impl Resolver for PluginResolver {
    fn resolve<'js>(
        &mut self,
        _ctx: &Ctx<'js>,
        base: &str,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if let Some(target) = self.0.resolve(base, name) {
            return Ok(target.to_string());
        }
        // The host imports the entry and the flavor's shape by name; plugin
        // code reaches the shape only through a link (never).
        let from_host = !self.0.sources.contains_key(base);
        let host_only = name == self.0.shape || self.0.prelude.as_deref() == Some(name);
        if name == self.0.entry || (from_host && host_only) {
            return Ok(name.to_string());
        }
        Err(rquickjs::Error::new_resolving_message(
            base,
            name,
            "plugins may import only their own files and the built-in modules found at load",
        ))
    }
}

/// Serves the sources of [`ModuleSet`].
pub(super) struct PluginLoader(pub(super) Arc<ModuleSet>);

impl Loader for PluginLoader {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _attributes: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        match self.0.sources.get(name) {
            Some(Cow::Borrowed(builtin)) => builtin_module(ctx, name, builtin),
            Some(Cow::Owned(source)) => {
                let module = Module::declare(ctx.clone(), name, source.as_str())?;
                if let Some(url) = self.0.file_url(name) {
                    module.meta()?.set("url", url)?;
                }
                Ok(module)
            }
            None => Err(rquickjs::Error::new_loading(name)),
        }
    }
}

/// The bytecode of each built-in module this process compiled, by its name
/// (the bytecode holds it, and its imports resolve from it) and its source
/// (a `&'static str` of the host's binary, so its address and length name
/// it; one source may serve several names). Entries are never removed:
/// there are as many as the host has built-ins, and loaded modules may keep
/// pointing into their bytes.
type BuiltinKey = (String, usize, usize);
static BUILTIN_BYTECODE: std::sync::Mutex<BTreeMap<BuiltinKey, &'static [u8]>> =
    std::sync::Mutex::new(BTreeMap::new());

/// The built-in module `name` whose source is `builtin`: compiled the first
/// time in this process, then read from its bytecode, which skips parsing
/// the SDK's and the flavors' modules again for every plugin.
fn builtin_module<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    builtin: &'static str,
) -> rquickjs::Result<Module<'js, Declared>> {
    let key = (name.to_string(), builtin.as_ptr() as usize, builtin.len());
    let known = lock(&BUILTIN_BYTECODE).get(&key).copied();
    if let Some(bytecode) = known {
        // SAFETY: these bytes were written by `Module::write` of this very
        // QuickJS build, from the same source, and are never freed.
        return unsafe { Module::load(ctx.clone(), bytecode) };
    }
    let module = Module::declare(ctx.clone(), name, builtin)?;
    let bytecode = module.write(rquickjs::WriteOptions::default())?;
    lock(&BUILTIN_BYTECODE)
        .entry(key)
        .or_insert_with(|| Vec::leak(bytecode));
    Ok(module)
}
