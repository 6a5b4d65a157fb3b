//! What only Node has, found by the walk of a plugin's import graph
//! ([`super::modules`]): names a flavor's stand-in for a Node built-in
//! lacks, whether imported (a hard need: importing a missing name is a link
//! error) or read from the module's namespace (a soft one: the read is
//! `undefined`), and npm packages with a native addon. Each is a
//! [`NodeNeed`] for the Node routing ([`crate::NodeNeeds`]).

use super::flavor::Builtin;
use super::guard::MAX_SOURCE_BYTES;
use super::module_set::{module_name, GatherError};
use super::packages::{PackageError, Packages, Request};
use super::transpile::{exports_of, Transpiled};
use crate::load::routing::NodeNeed;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Every name `file` takes from `builtin` must be one it exports. Names
/// the flavor's stand-in for a Node built-in lacks are a need for Node
/// (Node's own module has them).
pub(super) fn check_names(
    file: &Path,
    builtin: &Builtin,
    module: &Transpiled,
    packages: &Packages,
) -> Result<Option<NodeNeed>, GatherError> {
    let exported = exports_of(builtin.source);
    let missing = lacking(builtin, &exported, &module.names);
    if missing.is_empty() {
        return Ok(None);
    }
    if let Err(PackageError::NodeBuiltin(node_module)) =
        packages.resolve(file, builtin.specifier, Request::Import)
    {
        return Ok(Some(NodeNeed::Names {
            file: file.to_path_buf(),
            module: node_module,
            names: missing.join(", "),
        }));
    }
    let mut offered: Vec<&str> = exported.iter().map(String::as_str).collect();
    offered.sort_unstable();
    Err(GatherError::Refused(format!(
        "{} imports {} from \"{}\", which the host does not provide (it provides: {})",
        file.display(),
        missing.join(", "),
        builtin.specifier,
        offered.join(", ")
    )))
}

/// The names `file` imports from `builtin` that it does not export, when
/// `builtin` stands in for a package the flavor owns: bound to `undefined`,
/// as a package's own loader (pi's jiti) binds a name a newer version no
/// longer exports. Each is added to the module's `source` once (an
/// `export` of `undefined` under that name), and said in a warning, so a
/// call that then fails is traced to it.
pub(super) fn bind_missing_to_undefined(
    file: &Path,
    builtin: &Builtin,
    module: &Transpiled,
    source: &mut std::borrow::Cow<'static, str>,
    warnings: &mut Vec<String>,
) {
    let exported = exports_of(builtin.source);
    let mut names: Vec<&str> = module
        .names
        .iter()
        .filter(|(specifier, name)| specifier == builtin.specifier && !exported.contains(name))
        .map(|(_, name)| name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for (index, name) in names.into_iter().enumerate() {
        // The name as a JavaScript string (JSON's quoting is valid there),
        // so no name, whatever it holds, is read as code.
        let quoted = serde_json::to_string(name).unwrap_or_default();
        let exported = format!(" as {quoted} }};");
        if source.contains(&exported) {
            continue;
        }
        let binding = format!("__yohost_undefined_{}_{index}", source.len());
        let line = format!("\nconst {binding} = undefined; export {{ {binding}{exported}\n");
        source.to_mut().push_str(&line);
        warnings.push(format!(
            "{} imports `{name}` from \"{}\", which it does not export (any more): it is `undefined`, as in its own host, and fails where it is used",
            file.display(),
            builtin.specifier
        ));
    }
}

/// The members `file` reads from the namespace of `builtin` that its
/// stand-in lacks, when it stands in for a Node built-in (Node's own module
/// has them). Any other module's namespace may lack a member a file reads:
/// the read is `undefined`, as it would be anywhere.
pub(super) fn check_members(
    file: &Path,
    builtin: &Builtin,
    module: &Transpiled,
    packages: &Packages,
) -> Option<NodeNeed> {
    let missing = lacking(builtin, &exports_of(builtin.source), &module.members);
    if missing.is_empty() {
        return None;
    }
    match packages.resolve(file, builtin.specifier, Request::Import) {
        Err(PackageError::NodeBuiltin(node_module)) => Some(NodeNeed::Members {
            file: file.to_path_buf(),
            module: node_module,
            names: missing.join(", "),
        }),
        _ => None,
    }
}

/// The names of `taken` (`(specifier, name)` pairs) that are `builtin`'s
/// and not among its `exported` names, quoted.
fn lacking(builtin: &Builtin, exported: &[String], taken: &[(String, String)]) -> Vec<String> {
    taken
        .iter()
        .filter(|(specifier, name)| specifier == builtin.specifier && !exported.contains(name))
        .map(|(_, name)| format!("`{name}`"))
        .collect()
}

/// The npm packages of a plugin that hold a native addon, found once per
/// package.
#[derive(Default)]
pub(super) struct NativeAddons {
    /// Package folder → what shows it is native, if it is.
    seen: HashMap<PathBuf, Option<String>>,
}

impl NativeAddons {
    /// The need for Node when `target` (what `specifier` in `file`
    /// resolved to) is a native addon or a file of a package with one.
    pub(super) fn need(
        &mut self,
        base_dir: &Path,
        file: &Path,
        specifier: &str,
        target: &Path,
    ) -> Option<NodeNeed> {
        let evidence = if target.extension().is_some_and(|e| e == "node") {
            Some(module_name(base_dir, target))
        } else {
            let package = package_folder(target)?;
            self.seen
                .entry(package.clone())
                .or_insert_with(|| native_evidence(&package))
                .clone()
        }?;
        Some(NodeNeed::NativeAddon {
            file: file.to_path_buf(),
            package: specifier.to_string(),
            evidence,
        })
    }
}

/// The folder of the npm package `file` belongs to: the one right under
/// its last `node_modules` (`@scope/name` for a scoped one).
fn package_folder(file: &Path) -> Option<PathBuf> {
    let parts: Vec<_> = file.components().collect();
    let at = parts
        .iter()
        .rposition(|c| c.as_os_str() == "node_modules")?;
    let scoped = parts
        .get(at + 1)?
        .as_os_str()
        .to_string_lossy()
        .starts_with('@');
    let end = at + if scoped { 3 } else { 2 };
    (end < parts.len()).then(|| parts[..end].iter().collect())
}

/// What shows that the package in `folder` has a native addon: a
/// `binding.gyp`, `"gypfile": true` in its `package.json`, or a `.node`
/// file (in its first four levels, skipping its own `node_modules`; at
/// most 4096 entries are looked at).
fn native_evidence(folder: &Path) -> Option<String> {
    if folder.join("binding.gyp").is_file() {
        return Some("binding.gyp".into());
    }
    let manifest =
        crate::load::source::read_text(&folder.join("package.json"), MAX_SOURCE_BYTES).ok();
    let gypfile = manifest
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|p| p.get("gypfile") == Some(&serde_json::Value::Bool(true)));
    if gypfile {
        return Some("\"gypfile\": true".into());
    }
    let mut budget = 4096usize;
    let mut queue = vec![(folder.to_path_buf(), 0)];
    while let Some((dir, depth)) = queue.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            budget = budget.checked_sub(1)?;
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < 4 && entry.file_name() != "node_modules" {
                queue.push((path, depth + 1));
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "node") {
                let inside = path.strip_prefix(folder).unwrap_or(&path);
                return Some(inside.display().to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_name_is_exported_as_undefined_whatever_it_holds() {
        const STAND_IN: Builtin = Builtin {
            specifier: "@owned/pkg",
            source: "export const kept = 1;\n",
        };
        // A name an extension controls: quotes and a comment's end, which
        // must stay a name and never become code.
        let hostile = "a\"*/ globalThis.pwned = 1; /*";
        let module = Transpiled {
            code: String::new(),
            imports: vec!["@owned/pkg".into()],
            names: ["kept", "gone", hostile, "gone"]
                .iter()
                .map(|n| ("@owned/pkg".to_string(), n.to_string()))
                .collect(),
            members: Vec::new(),
            dynamic: Vec::new(),
            lines: None,
        };
        let mut source = std::borrow::Cow::Borrowed(STAND_IN.source);
        let mut warnings = Vec::new();
        for _ in 0..2 {
            bind_missing_to_undefined(
                Path::new("x.ts"),
                &STAND_IN,
                &module,
                &mut source,
                &mut warnings,
            );
        }
        let mut exported = exports_of(&source);
        exported.sort();
        assert_eq!(exported, [hostile, "gone", "kept"], "{source}");
        assert!(!source.contains("globalThis.pwned = 1; /*\n"), "{source}");
        assert_eq!(warnings.len(), 2, "each name once: {warnings:?}");
    }

    #[test]
    fn packages_with_a_native_addon_are_found_by_their_marks() {
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("node_modules");
        for (file, text) in [
            ("gyp/binding.gyp", "{}"),
            ("gyp/index.js", ""),
            ("flag/package.json", "{\"gypfile\": true}"),
            ("@scope/built/prebuilds/linux-x64/x.node", ""),
            ("plain/package.json", "{}"),
        ] {
            let path = modules.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let evidence = |package: &str| native_evidence(&modules.join(package));
        assert_eq!(evidence("gyp").as_deref(), Some("binding.gyp"));
        assert_eq!(evidence("flag").as_deref(), Some("\"gypfile\": true"));
        assert_eq!(
            evidence("@scope/built").as_deref(),
            Some("prebuilds/linux-x64/x.node")
        );
        assert_eq!(evidence("plain"), None);
        assert_eq!(
            package_folder(&modules.join("@scope/built/lib/a.js")),
            Some(modules.join("@scope/built"))
        );
        assert_eq!(package_folder(&dir.path().join("own/a.js")), None);
    }
}
