//! A CommonJS or JSON file of a plugin, gathered into its module set: its
//! facade and definition (the interop of [`super::commonjs`]), the
//! built-ins and packages it requires, and what it needs from Node.

use super::commonjs::{self, Required};
use super::flavor::Served;
use super::module_files::{is_own, outside_own, read_source, refused_import};
use super::module_set::{module_name, GatherError, ModuleSet};
use super::node_needs::NativeAddons;
use super::packages::{Format, PackageError, Packages, Request};
use crate::load::grants::Confined;
use crate::load::routing::{NodeNeed, NodeNeeds};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Where a plugin's modules are found: its folder, its packages and the
/// flavor's built-ins; and what it needs from Node.
pub(super) struct Found<'a> {
    pub(super) base_dir: &'a Path,
    pub(super) own: &'a [PathBuf],
    pub(super) folder: &'a Confined,
    pub(super) packages: &'a Packages,
    pub(super) served: Served<'a>,
    pub(super) native: &'a mut NativeAddons,
    pub(super) needs: &'a mut NodeNeeds,
}

/// Add CommonJS or JSON `file` (module `name`) to `set`: its facade and its
/// definition, and the built-ins it requires. Returns the files it requires
/// that must be gathered too.
pub(super) fn gather_commonjs(
    found: &mut Found<'_>,
    file: &Path,
    name: &str,
    source: &str,
    format: Format,
    set: &mut ModuleSet,
) -> Result<Vec<PathBuf>, GatherError> {
    let mut queue = Vec::new();
    let (facade, definition, imports) = if format == Format::Json {
        let definition = commonjs::json_definition(name, source);
        let facade = commonjs::facade(name, &Default::default());
        (facade, definition, vec![commonjs::RUNTIME.to_string()])
    } else {
        let analysis = commonjs::analyze(file, source).map_err(GatherError::Invalid)?;
        let mut required = Vec::new();
        for specifier in &analysis.requires {
            let target = if let Some(builtin) = found
                .served
                .builtins
                .iter()
                .find(|b| b.specifier == specifier)
            {
                set.sources
                    .entry(builtin.specifier.to_string())
                    .or_insert(Cow::Borrowed(builtin.source));
                Required::Module(builtin.specifier.to_string())
            } else if let Some(package) = found.served.owner(specifier) {
                Required::Missing(found.served.not_served(file, specifier, package))
            } else {
                match found.packages.resolve(file, specifier, Request::Require) {
                    Ok(target) if !is_own(found.own, &target) => {
                        return Err(outside_own(found.own, file, specifier, &target))
                    }
                    Ok(target) => match found.native.need(found.base_dir, file, specifier, &target)
                    {
                        Some(need) => {
                            found.needs.add(need);
                            Required::Missing(format!("'{specifier}' needs Node"))
                        }
                        None => {
                            let module = module_name(found.base_dir, &target);
                            let is_module = read_source(found.folder, found.base_dir, &target)
                                .is_ok_and(|text| {
                                    found.packages.format_of(&target, &text) == Format::Module
                                });
                            queue.push(target);
                            if is_module {
                                Required::Module(module)
                            } else {
                                Required::CommonJs(module)
                            }
                        }
                    },
                    Err(PackageError::NodeBuiltin(module)) => {
                        let missing = format!("Cannot find module '{module}'");
                        found.needs.add(NodeNeed::Builtin {
                            file: file.to_path_buf(),
                            module,
                        });
                        Required::Missing(missing)
                    }
                    Err(
                        refused @ (PackageError::Outside { .. } | PackageError::Unreadable { .. }),
                    ) => {
                        return Err(refused_import(
                            file,
                            specifier,
                            found.served.builtins,
                            &refused,
                        ))
                    }
                    Err(other) => {
                        Required::Missing(format!("Cannot find module '{specifier}': {other}"))
                    }
                }
            };
            required.push((specifier.clone(), target));
        }
        let (definition, imports) = commonjs::definition(name, source, &required);
        (
            commonjs::facade(name, &analysis.exports),
            definition,
            imports,
        )
    };
    let definition_name = commonjs::definition_name(name);
    for import in imports {
        set.links
            .insert((definition_name.clone(), import.clone()), import);
    }
    for import in [definition_name.clone(), commonjs::RUNTIME.to_string()] {
        set.links.insert((name.to_string(), import.clone()), import);
    }
    set.sources
        .entry(commonjs::RUNTIME.to_string())
        .or_insert(Cow::Borrowed(commonjs::RUNTIME_SOURCE));
    set.sources.insert(definition_name, Cow::Owned(definition));
    set.sources.insert(name.to_string(), Cow::Owned(facade));
    Ok(queue)
}
