//! The modules a plugin may load: its own files and the built-in modules of
//! its [`super::Flavor`], resolved and transpiled at load.
//!
//! The whole static import graph is walked before any code runs. A relative
//! import must name a file inside the plugin's folder, with symlinks
//! resolved (a symlinked file or folder that leads out is refused), and the
//! file is read through a handle on that folder, so a symlink swapped in
//! afterwards cannot lead out either; a bare import names a built-in
//! module, else a package in the plugin's `node_modules`
//! (`packages`), which must also lie inside the folder;
//! anything else refuses the plugin with the import named. CommonJS and
//! JSON files go through the interop wrapper (`commonjs`).
//! A dynamic `import("./x")` of one of the plugin's own files is gathered
//! too, leniently: a file it names that is not there, or cannot be read, is
//! left out, and the import fails when it runs (a `catch` may fall back,
//! as in Node); one too large for the embedded engine sends the plugin to
//! Node. At run time the engine's resolver serves only what was found
//! here, so a dynamic `import()` of anything else fails too.
//!
//! What only Node has (a Node built-in outside the flavor's table, or names
//! a flavor's Node module lacks, or an npm package with a native addon:
//! `node_needs`) does not stop the walk: it is collected, and a graph whose only lack is
//! Node ends as `GatherError::NeedsNode`, which the Node routing ([`crate::NodeNeeds`]) sends
//! to Node. Any other refusal wins over it.

use super::commonjs;
use super::commonjs_gather::{gather_commonjs, Found};
use super::flavor::Served;
use super::module_files::{confine, in_package, read_source, refused_import, relative, unreadable};
use super::module_set::{module_name, GatherError, ModuleSet};
use super::node_needs::{bind_missing_to_undefined, check_members, check_names, NativeAddons};
use super::packages::{Format, PackageError, Packages, Request};
use super::transpile::transpile_embedded;
use crate::load::grants::{Confined, FileError};
use crate::load::routing::{NodeNeed, NodeNeeds};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Whether `file` is JavaScript (as compiled or bundled), not TypeScript.
fn is_javascript(file: &Path) -> bool {
    matches!(
        file.extension().and_then(|e| e.to_str()),
        Some("js" | "mjs" | "cjs")
    )
}

/// A built-in module (defined with the flavors, named here as adapter
/// crates import it).
pub use super::flavor::Builtin;

/// The host's `fetch` (`yohost:fetch`) and the bytes it uses
/// (`yohost:bytes`), for a flavor that installs `fetch` in its prelude:
/// list both among its internals.
pub use super::flavor::{BYTES, FETCH};

/// The name of the module that stands for several entries.
const ENTRIES: &str = "<entries>";

/// Walk the import graph from `entries` (at least one), within `base_dir`:
/// every file they import or require must resolve inside one of `own` (the
/// plugin's own paths, resolved:
/// [`Candidate::own_paths`](crate::load::discovery::Candidate::own_paths)).
/// With several entries (a pi package has them), the set's entry is a
/// module whose default export holds their namespaces, in order, under
/// `Symbol.for("yohost.entries")`, for the flavor's shape.
pub(crate) fn gather(
    base_dir: &Path,
    own: &[PathBuf],
    entries: &[PathBuf],
    served: Served<'_>,
) -> Result<ModuleSet, GatherError> {
    let (mut set, mut needs) = gather_with_needs(base_dir, own, entries, served)?;
    if !needs.is_empty() {
        for need in std::mem::take(&mut set.member_needs).0 {
            needs.add(need);
        }
        return Err(GatherError::NeedsNode(needs));
    }
    Ok(set)
}

/// [`gather`], the modules gathered whatever they need from Node, with
/// those needs (the soft ones, members, stay in the set): what the Node
/// engine reads the plugin's use of its flavor's built-ins from.
pub(crate) fn gather_with_needs(
    base_dir: &Path,
    own: &[PathBuf],
    entries: &[PathBuf],
    served: Served<'_>,
) -> Result<(ModuleSet, NodeNeeds), GatherError> {
    let builtins = served.builtins;
    let base_dir = base_dir
        .canonicalize()
        .map_err(|e| GatherError::Invalid(format!("cannot read {}: {e}", base_dir.display())))?;
    let folder = Confined::open(&base_dir)
        .map_err(|e| GatherError::Invalid(format!("cannot read {}: {e}", base_dir.display())))?;
    let entries = entries
        .iter()
        .map(|entry| {
            entry
                .canonicalize()
                .map_err(|e| GatherError::Invalid(format!("cannot read {}: {e}", entry.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<String> = entries.iter().map(|e| module_name(&base_dir, e)).collect();
    let mut set = ModuleSet {
        entry: names.first().cloned().unwrap_or_default(),
        base_dir: base_dir.clone(),
        ..ModuleSet::default()
    };
    if names.len() > 1 {
        set.entry = ENTRIES.to_string();
        let mut source = String::new();
        for (at, name) in names.iter().enumerate() {
            source.push_str(&format!(
                "import * as e{at} from {};\n",
                serde_json::json!(name)
            ));
            set.links
                .insert((ENTRIES.to_string(), name.clone()), name.clone());
        }
        let list: Vec<String> = (0..names.len()).map(|at| format!("e{at}")).collect();
        source.push_str(&format!(
            "export default Object.freeze({{ [Symbol.for(\"yohost.entries\")]: Object.freeze([{}]) }});\n",
            list.join(", ")
        ));
        set.sources.insert(ENTRIES.to_string(), Cow::Owned(source));
    }
    let packages = Packages::new(&base_dir);
    let mut native = NativeAddons::default();
    let mut needs = NodeNeeds::default();
    let mut queue = entries;
    // The files reached only through a dynamic import: one too large for
    // the embedded engine sends the plugin to Node, as a package's bundle
    // does; one that cannot be read is left out, and its import fails when
    // it runs.
    let mut dynamic_only: Vec<PathBuf> = Vec::new();
    while let Some(file) = queue.pop() {
        let name = module_name(&base_dir, &file);
        if set.sources.contains_key(&name) {
            continue;
        }
        let source = match read_source(&folder, &base_dir, &file) {
            // A bundle too large for the embedded engine (a package's file,
            // compiled JavaScript, or one only a dynamic import names) loads
            // on Node, which has no such limit; TypeScript over it is refused.
            Err(FileError::TooLarge { limit, .. })
                if in_package(&base_dir, &file)
                    || is_javascript(&file)
                    || dynamic_only.contains(&file) =>
            {
                needs.add(NodeNeed::Large { file, limit });
                continue;
            }
            Err(_) if dynamic_only.contains(&file) => continue,
            read => read.map_err(unreadable)?,
        };
        set.files.insert(name.clone());
        let format = packages.format_of(&file, &source);
        if format != Format::Module {
            let mut found = Found {
                base_dir: &base_dir,
                own,
                folder: &folder,
                packages: &packages,
                served,
                native: &mut native,
                needs: &mut needs,
            };
            queue.extend(gather_commonjs(
                &mut found, &file, &name, &source, format, &mut set,
            )?);
            continue;
        }
        let module =
            transpile_embedded(&file, &source).map_err(|e| GatherError::Invalid(e.message))?;
        for specifier in &module.imports {
            let target = if let Some(builtin) = builtins.iter().find(|b| b.specifier == specifier) {
                let source = set
                    .sources
                    .entry(builtin.specifier.to_string())
                    .or_insert(Cow::Borrowed(builtin.source));
                if served.owner(builtin.specifier).is_some() {
                    bind_missing_to_undefined(&file, builtin, &module, source, &mut set.warnings);
                } else if let Some(need) = check_names(&file, builtin, &module, &packages)? {
                    needs.add(need);
                }
                if let Some(need) = check_members(&file, builtin, &module, &packages) {
                    set.member_needs.add(need);
                }
                builtin.specifier.to_string()
            } else if specifier == commonjs::RUNTIME {
                // `require` in an ES module (`esm_require`).
                set.sources
                    .entry(commonjs::RUNTIME.to_string())
                    .or_insert(Cow::Borrowed(commonjs::RUNTIME_SOURCE));
                commonjs::RUNTIME.to_string()
            } else if specifier.starts_with("./") || specifier.starts_with("../") {
                let target = relative(&base_dir, &file, specifier)?;
                confine(own, &file, specifier, &target)?;
                if let Some(need) = native.need(&base_dir, &file, specifier, &target) {
                    needs.add(need);
                    continue;
                }
                let target_name = module_name(&base_dir, &target);
                if dynamic_only.contains(&file) && !dynamic_only.contains(&target) {
                    dynamic_only.push(target.clone());
                }
                queue.push(target);
                target_name
            } else if let Some(package) = served.owner(specifier) {
                return Err(GatherError::Refused(
                    served.not_served(&file, specifier, package),
                ));
            } else {
                let target = match packages.resolve(&file, specifier, Request::Import) {
                    Err(PackageError::NodeBuiltin(module)) => {
                        needs.add(NodeNeed::Builtin {
                            file: file.clone(),
                            module,
                        });
                        continue;
                    }
                    Err(PackageError::NodeOnly(package)) => {
                        needs.add(NodeNeed::NodeCondition {
                            file: file.clone(),
                            package,
                        });
                        continue;
                    }
                    resolved => {
                        resolved.map_err(|e| refused_import(&file, specifier, builtins, &e))?
                    }
                };
                confine(own, &file, specifier, &target)?;
                if let Some(need) = native.need(&base_dir, &file, specifier, &target) {
                    needs.add(need);
                    continue;
                }
                let target_name = module_name(&base_dir, &target);
                queue.push(target);
                target_name
            };
            set.links.insert((name.clone(), specifier.clone()), target);
        }
        // A dynamic import of one of its own files that is there is served as
        // a static one is; one that is not fails when it runs, as in Node.
        for specifier in &module.dynamic {
            let Ok(target) = relative(&base_dir, &file, specifier) else {
                continue;
            };
            if confine(own, &file, specifier, &target).is_err() {
                continue;
            }
            set.links.insert(
                (name.clone(), specifier.clone()),
                module_name(&base_dir, &target),
            );
            if !queue.contains(&target)
                && !set.sources.contains_key(&module_name(&base_dir, &target))
            {
                dynamic_only.push(target.clone());
            }
            queue.push(target);
        }
        if let Some(lines) = module.lines {
            set.positions.insert(name.clone(), lines);
        }
        set.sources.insert(name, Cow::Owned(module.code));
    }
    Ok((set, needs))
}

#[cfg(test)]
mod tests {
    use super::super::guard::MAX_SOURCE_BYTES;
    use super::*;

    /// Write `text` to `file` under `plugin`, making its folders.
    fn write_file(plugin: &Path, file: &str, text: &str) {
        let path = plugin.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn own(folder: &Path) -> Vec<PathBuf> {
        vec![folder.canonicalize().unwrap()]
    }

    const SDK: Builtin = Builtin {
        specifier: "yohost",
        source: "export const x = 1;",
    };

    /// The test flavor: `yohost` built in, and the package `owned` served
    /// whole, of which only its root and `owned/served` are offered.
    fn sdk() -> Served<'static> {
        const BUILTINS: &[Builtin] = &[
            SDK,
            Builtin {
                specifier: "owned",
                source: "export const o = 1;",
            },
            Builtin {
                specifier: "owned/served",
                source: "export const s = 1;",
            },
        ];
        Served {
            builtins: BUILTINS,
            owned: &["owned"],
        }
    }

    #[test]
    fn a_path_of_an_owned_package_is_never_taken_from_node_modules() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path();
        for (file, text) in [
            ("node_modules/owned/package.json", r#"{"name": "owned", "exports": {"./oauth": "./oauth.js"}}"#),
            ("node_modules/owned/oauth.js", "export const login = 1;"),
            ("node_modules/owned-other/package.json", r#"{"name": "owned-other", "main": "i.js"}"#),
            ("node_modules/owned-other/i.js", "export const other = 1;"),
            ("served.ts", "import { s } from \"owned/served\"; import { other } from \"owned-other\"; console.log(s, other);"),
            ("oauth.ts", "import { login } from \"owned/oauth\"; console.log(login);"),
        ] {
            std::fs::create_dir_all(plugin.join(file).parent().unwrap()).unwrap();
            std::fs::write(plugin.join(file), text).unwrap();
        }
        let set = gather(plugin, &own(plugin), &[plugin.join("served.ts")], sdk()).unwrap();
        assert_eq!(
            set.resolve("served.ts", "owned/served"),
            Some("owned/served")
        );
        assert_eq!(
            set.resolve("served.ts", "owned-other"),
            Some("node_modules/owned-other/i.js")
        );
        let Err(GatherError::Refused(why)) =
            gather(plugin, &own(plugin), &[plugin.join("oauth.ts")], sdk())
        else {
            panic!("a path of an owned package the flavor does not serve is refused");
        };
        assert!(
            why.contains("imports \"owned/oauth\": `owned` is served by the host")
                && why.contains("it serves only owned, owned/served"),
            "{why}"
        );
    }

    #[test]
    fn relative_files_and_builtins_are_linked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("lib")).unwrap();
        std::fs::write(
            dir.path().join("index.ts"),
            "import { x } from \"yohost\"; import { y } from \"./lib/util\"; export default x + y;",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("lib/util.ts"),
            "export const y: number = 2;",
        )
        .unwrap();
        let set = gather(
            dir.path(),
            &own(dir.path()),
            &[dir.path().join("index.ts")],
            sdk(),
        )
        .unwrap();
        assert_eq!(set.entry, "index.ts");
        assert_eq!(set.resolve("index.ts", "./lib/util"), Some("lib/util.ts"));
        assert_eq!(set.resolve("index.ts", "yohost"), Some("yohost"));
        assert_eq!(set.sources.len(), 3);
    }

    #[test]
    fn node_builtins_are_needs_and_escapes_are_refused_even_beside_them() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("p");
        std::fs::create_dir(&plugin).unwrap();
        std::fs::write(dir.path().join("secret.ts"), "export const s = 1;").unwrap();
        std::fs::write(
            plugin.join("a.ts"),
            "import fs from \"node:fs\"; import net from \"net\"; fs.readFileSync(\"/etc/passwd\", net);",
        )
        .unwrap();
        std::fs::write(
            plugin.join("b.ts"),
            "import net from \"node:net\"; import { s } from \"../secret.ts\"; console.log(s, net);",
        )
        .unwrap();
        let Err(GatherError::NeedsNode(needs)) =
            gather(&plugin, &own(&plugin), &[plugin.join("a.ts")], sdk())
        else {
            panic!("node:fs is a need for Node");
        };
        let modules: Vec<&str> = needs
            .0
            .iter()
            .map(|need| match need {
                NodeNeed::Builtin { module, .. } => module.as_str(),
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(modules, ["node:fs", "node:net"]);
        let Err(GatherError::Refused(why)) =
            gather(&plugin, &own(&plugin), &[plugin.join("b.ts")], sdk())
        else {
            panic!("an escape must be refused, whatever else the file needs");
        };
        assert!(why.contains("outside the plugin's folder"), "{why}");
    }

    #[test]
    fn dynamic_imports_of_own_files_are_gathered_and_missing_ones_left_to_fail_when_run() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("p");
        let big = " ".repeat(MAX_SOURCE_BYTES as usize + 1);
        for (file, text) in [
            (
                "a.ts",
                "let m; try { m = await import(\"./dist/api.js\"); } catch { m = await import('../src/api.js'); } export default m;",
            ),
            ("dist/api.js", "export const api = 1;"),
            ("b.ts", "export const lazy = () => import(\"./engine.js\");"),
            ("engine.js", "import \"./chunk.js\";"),
            ("chunk.js", big.as_str()),
        ] {
            write_file(&plugin, file, text);
        }
        let set = gather(&plugin, &own(&plugin), &[plugin.join("a.ts")], sdk()).unwrap();
        assert!(set.sources.contains_key("dist/api.js"), "{:?}", set.links);
        assert_eq!(
            set.links
                .get(&("a.ts".to_string(), "./dist/api.js".to_string())),
            Some(&"dist/api.js".to_string())
        );
        assert!(!set.links.keys().any(|(_, s)| s == "../src/api.js"));
        let Err(GatherError::NeedsNode(needs)) =
            gather(&plugin, &own(&plugin), &[plugin.join("b.ts")], sdk())
        else {
            panic!("a lazily imported file too large for the embedded engine sends it to Node");
        };
        assert!(
            matches!(needs.0.as_slice(), [NodeNeed::Large { file, .. }] if file.ends_with("chunk.js")),
            "{needs}"
        );
    }

    #[test]
    fn a_hash_import_follows_the_package_s_own_imports_to_typescript() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("p");
        for (file, text) in [
            ("package.json", r##"{"type": "module", "imports": {"#lib/*": "./lib/*"}}"##),
            ("a.ts", "import { x } from \"#lib/x\"; import { y } from \"#lib/y.js\"; export default x + y;"),
            ("lib/x.ts", "export const x: number = 1;"),
            ("lib/y.ts", "export const y: number = 2;"),
        ] {
            write_file(&plugin, file, text);
        }
        let set = gather(&plugin, &own(&plugin), &[plugin.join("a.ts")], sdk()).unwrap();
        assert!(set.sources.contains_key("lib/x.ts") && set.sources.contains_key("lib/y.ts"));
    }

    #[test]
    fn a_bundle_over_the_source_limit_is_a_need_and_typescript_over_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("p");
        let big = " ".repeat(MAX_SOURCE_BYTES as usize + 1);
        for (file, text) in [
            ("a.ts", "import \"bundle\";"),
            ("b.ts", "import \"./own.ts\";"),
            ("own.ts", big.as_str()),
            ("c.ts", "import \"./dist/bundle.js\";"),
            ("dist/bundle.js", big.as_str()),
            (
                "node_modules/bundle/package.json",
                "{\"main\": \"index.js\"}",
            ),
            ("node_modules/bundle/index.js", big.as_str()),
        ] {
            write_file(&plugin, file, text);
        }
        let Err(GatherError::NeedsNode(needs)) =
            gather(&plugin, &own(&plugin), &[plugin.join("a.ts")], sdk())
        else {
            panic!("a bundle over the limit is a need for Node");
        };
        let [NodeNeed::Large { file, limit }] = needs.0.as_slice() else {
            panic!("{needs}");
        };
        assert!(file.ends_with("node_modules/bundle/index.js"), "{needs}");
        assert_eq!(*limit, MAX_SOURCE_BYTES);
        let Err(GatherError::Invalid(why)) =
            gather(&plugin, &own(&plugin), &[plugin.join("b.ts")], sdk())
        else {
            panic!("the plugin's own file over the limit is refused");
        };
        assert!(why.contains("own.ts is over the limit of "), "{why}");
        let Err(GatherError::NeedsNode(needs)) =
            gather(&plugin, &own(&plugin), &[plugin.join("c.ts")], sdk())
        else {
            panic!("its own bundled JavaScript over the limit is a need for Node");
        };
        assert!(
            matches!(needs.0.as_slice(), [NodeNeed::Large { file, .. }] if file.ends_with("dist/bundle.js")),
            "{needs}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_files_and_folders_that_lead_out_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("p");
        std::fs::create_dir_all(plugin.join("lib")).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/secret.ts"), "export const s = 1;").unwrap();
        std::fs::write(plugin.join("lib/inner.ts"), "export const s = 2;").unwrap();
        let link =
            |target: &Path, name: &str| std::os::unix::fs::symlink(target, plugin.join(name));
        link(&dir.path().join("outside/secret.ts"), "file.ts").unwrap();
        link(&dir.path().join("outside"), "folder").unwrap();
        link(&plugin.join("lib/inner.ts"), "inside.ts").unwrap();
        for (importer, specifier) in [("a.ts", "./file.ts"), ("b.ts", "./folder/secret.ts")] {
            std::fs::write(
                plugin.join(importer),
                format!("import {{ s }} from \"{specifier}\"; export default s;"),
            )
            .unwrap();
            let Err(GatherError::Refused(why)) =
                gather(&plugin, &own(&plugin), &[plugin.join(importer)], sdk())
            else {
                panic!("{specifier} must be refused");
            };
            assert!(
                why.contains(specifier) && why.contains("outside the plugin's folder"),
                "{why}"
            );
        }
        // A symlink that stays inside is followed, under its real name.
        std::fs::write(
            plugin.join("c.ts"),
            "import { s } from \"./inside.ts\"; export default s;",
        )
        .unwrap();
        let set = gather(&plugin, &own(&plugin), &[plugin.join("c.ts")], sdk()).unwrap();
        assert_eq!(set.resolve("c.ts", "./inside.ts"), Some("lib/inner.ts"));
    }

    #[test]
    fn names_a_builtin_does_not_export_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.ts"),
            "import { x, missing } from \"yohost\"; import other from \"yohost\"; export { gone } from \"yohost\"; console.log(x, missing, other);",
        )
        .unwrap();
        let Err(GatherError::Refused(why)) = gather(
            dir.path(),
            &own(dir.path()),
            &[dir.path().join("a.ts")],
            sdk(),
        ) else {
            panic!("missing names must be refused");
        };
        assert!(
            why.contains("imports `missing`, `default`, `gone` from \"yohost\"")
                && why.contains("it provides: x"),
            "{why}"
        );
    }
}
