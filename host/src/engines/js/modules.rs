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
//! At run time the engine's resolver serves only what was found here, so a
//! dynamic `import()` of anything else fails too.
//!
//! What only Node has (a Node built-in outside the flavor's table, or names
//! a flavor's Node module lacks, or an npm package with a native addon:
//! `node_needs`) does not stop the walk: it is collected, and a graph whose only lack is
//! Node ends as `GatherError::NeedsNode`, which the Node routing ([`crate::NodeNeeds`]) sends
//! to Node. Any other refusal wins over it.

use super::commonjs::{self, Required};
use super::node_needs::{check_members, check_names, NativeAddons};
use super::packages::{Format, PackageError, Packages, Request};
use super::positions::LineMap;
use super::transpile::{transpile, MAX_SOURCE_BYTES};
use super::Flavor;
use crate::load::grants::{lexical, Confined, FileError};
use crate::load::routing::{NodeNeed, NodeNeeds};
use crate::model::sync::lock;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Extensions tried, in order, for a relative import without one.
const EXTENSIONS: [&str; 4] = ["ts", "mts", "js", "mjs"];

/// A built-in module: its specifier and its JavaScript source.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// What plugins import it as (`yohost`, `node:path`, ...).
    pub specifier: &'static str,
    /// Its source, an ES module in plain JavaScript.
    pub source: &'static str,
}

impl Builtin {
    /// The specifiers the module imports. A built-in's source is static,
    /// so it is parsed once per process, not once per plugin that loads it
    /// (a flavor's modules are the same for every plugin of the flavor).
    fn imports(&self) -> Result<Vec<String>, GatherError> {
        type Parsed = std::collections::HashMap<(usize, usize), Vec<String>>;
        static PARSED: std::sync::Mutex<Option<Parsed>> = std::sync::Mutex::new(None);
        let key = (self.source.as_ptr() as usize, self.source.len());
        let parsed = || lock(&PARSED);
        if let Some(imports) = parsed().get_or_insert_with(Parsed::new).get(&key) {
            return Ok(imports.clone());
        }
        let imports = transpile(Path::new(self.specifier), self.source)
            .map_err(|e| GatherError::Invalid(format!("internal: {}", e.message)))?
            .imports;
        parsed()
            .get_or_insert_with(Parsed::new)
            .insert(key, imports.clone());
        Ok(imports)
    }
}

/// Every module of a plugin, ready for the engine.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleSet {
    /// The plugin's folder, symlinks resolved.
    pub base_dir: PathBuf,
    /// The entry module's name.
    pub entry: String,
    /// The flavor's shape module, which only the host imports.
    pub shape: String,
    /// The flavor's prelude module, if it has one, which only the host
    /// imports (before the entry).
    pub prelude: Option<String>,
    /// Module name → JavaScript. Plugin files are named by their path
    /// relative to the plugin's folder; built-ins by their specifier. A
    /// built-in's source is borrowed from the host's binary, so it is
    /// compiled once per process (see the JS engine's loader).
    pub sources: BTreeMap<String, Cow<'static, str>>,
    /// The names in `sources` that are the plugin's files (not built-ins).
    pub files: BTreeSet<String>,
    /// (importing module, specifier) → module name.
    pub links: BTreeMap<(String, String), String>,
    /// Module name → where its code's positions are in its source, for the
    /// plugin's TypeScript files.
    pub positions: BTreeMap<String, LineMap>,
    /// The members the plugin's modules read from Node built-ins' namespaces
    /// that the flavor's stand-ins lack ([`NodeNeed::Members`]): whether
    /// they send it to Node is the engine's choice.
    pub member_needs: NodeNeeds,
}

impl ModuleSet {
    /// The `file:` URL of the plugin file named `name` (its
    /// `import.meta.url`); `None` for a built-in module.
    pub fn file_url(&self, name: &str) -> Option<String> {
        if !self.files.contains(name) {
            return None;
        }
        let path = self.base_dir.join(name);
        let mut url = String::from("file://");
        for byte in path.to_string_lossy().bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                    url.push(byte as char)
                }
                _ => url.push_str(&format!("%{byte:02X}")),
            }
        }
        Some(url)
    }

    /// The module `specifier` names when imported from `base`, if the
    /// plugin may load it.
    pub fn resolve(&self, base: &str, specifier: &str) -> Option<&str> {
        self.links
            .get(&(base.to_string(), specifier.to_string()))
            .map(String::as_str)
    }
}

/// Why a plugin's modules could not be gathered.
#[derive(Debug, Clone)]
pub(crate) enum GatherError {
    /// A file could not be read or transpiled; the message names it.
    Invalid(String),
    /// An import is not allowed; the message names it and says why.
    Refused(String),
    /// Nothing is refused, but the graph needs what only Node has.
    NeedsNode(NodeNeeds),
}

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
    while let Some(file) = queue.pop() {
        let name = module_name(&base_dir, &file);
        if set.sources.contains_key(&name) {
            continue;
        }
        let source = match read_source(&folder, &base_dir, &file) {
            // A package's file too large for the embedded engine (a bundle)
            // loads on Node, which has no such limit.
            Err(FileError::TooLarge { limit, .. }) if in_package(&base_dir, &file) => {
                needs.add(NodeNeed::Large { file, limit });
                continue;
            }
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
        let module = transpile(&file, &source).map_err(|e| GatherError::Invalid(e.message))?;
        for specifier in &module.imports {
            let target = if let Some(builtin) = builtins.iter().find(|b| b.specifier == specifier) {
                if let Some(need) = check_names(&file, builtin, &module, &packages)? {
                    needs.add(need);
                }
                if let Some(need) = check_members(&file, builtin, &module, &packages) {
                    set.member_needs.add(need);
                }
                set.sources
                    .entry(builtin.specifier.to_string())
                    .or_insert(Cow::Borrowed(builtin.source));
                builtin.specifier.to_string()
            } else if specifier.starts_with("./") || specifier.starts_with("../") {
                let target = relative(&base_dir, &file, specifier)?;
                confine(own, &file, specifier, &target)?;
                if let Some(need) = native.need(&base_dir, &file, specifier, &target) {
                    needs.add(need);
                    continue;
                }
                let target_name = module_name(&base_dir, &target);
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
        if let Some(lines) = module.lines {
            set.positions.insert(name.clone(), lines);
        }
        set.sources.insert(name, Cow::Owned(module.code));
    }
    if !needs.is_empty() {
        for need in std::mem::take(&mut set.member_needs).0 {
            needs.add(need);
        }
        return Err(GatherError::NeedsNode(needs));
    }
    Ok(set)
}

/// Add the flavor's own modules to `set`: its shape module, and every
/// module the shape and the built-ins in `set` import. A flavor module may
/// import only the flavor's built-ins and internal modules.
pub(crate) fn add_flavor(set: &mut ModuleSet, flavor: &Flavor) -> Result<(), GatherError> {
    let find = |specifier: &str| {
        flavor
            .builtins
            .iter()
            .chain(flavor.internals)
            .find(|m| m.specifier == specifier)
    };
    let shape = find(flavor.shape).ok_or_else(|| {
        GatherError::Invalid(format!(
            "internal: the flavor has no module `{}` for its shape",
            flavor.shape
        ))
    })?;
    set.shape = shape.specifier.to_string();
    let mut queue: Vec<&Builtin> = vec![shape];
    if let Some(specifier) = flavor.prelude {
        let prelude = find(specifier).ok_or_else(|| {
            GatherError::Invalid(format!(
                "internal: the flavor has no module `{specifier}` for its prelude"
            ))
        })?;
        set.prelude = Some(prelude.specifier.to_string());
        queue.push(prelude);
    }
    queue.extend(
        flavor
            .builtins
            .iter()
            .filter(|b| set.sources.contains_key(b.specifier)),
    );
    let mut seen = std::collections::BTreeSet::new();
    while let Some(module) = queue.pop() {
        if !seen.insert(module.specifier) {
            continue;
        }
        set.sources
            .entry(module.specifier.to_string())
            .or_insert(Cow::Borrowed(module.source));
        for specifier in module.imports()? {
            let target = find(&specifier).ok_or_else(|| {
                GatherError::Invalid(format!(
                    "internal: the flavor's module `{}` imports \"{specifier}\", which the flavor does not have",
                    module.specifier
                ))
            })?;
            set.links.insert(
                (module.specifier.to_string(), specifier.clone()),
                target.specifier.to_string(),
            );
            queue.push(target);
        }
    }
    Ok(())
}

/// Why the import of `specifier` in `file` refuses the plugin.
fn refused_import(
    file: &Path,
    specifier: &str,
    builtins: &[Builtin],
    why: &PackageError,
) -> GatherError {
    let known: Vec<&str> = builtins.iter().map(|b| b.specifier).collect();
    GatherError::Refused(format!(
        "{} imports \"{specifier}\": {why} (a plugin may import its own files with ./, packages installed in its folder's node_modules, and the built-in modules: {})",
        file.display(),
        known.join(", ")
    ))
}

/// What a flavor serves by name: its built-in modules, and the packages it
/// owns whole ([`Flavor::owned`](super::Flavor::owned)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Served<'a> {
    /// The modules plugins may import by bare name.
    pub(crate) builtins: &'a [Builtin],
    /// The packages no path of which comes from the plugin's `node_modules`.
    pub(crate) owned: &'a [&'a str],
}

impl Served<'_> {
    /// The owned package `specifier` is, or lies in.
    fn owner(&self, specifier: &str) -> Option<&str> {
        self.owned.iter().copied().find(|package| {
            specifier
                .strip_prefix(package)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    /// Why `file` may not import `specifier`, a path of owned `package`
    /// the flavor does not serve.
    fn not_served(&self, file: &Path, specifier: &str, package: &str) -> String {
        let offered: Vec<&str> = self
            .builtins
            .iter()
            .map(|b| b.specifier)
            .filter(|s| {
                s.strip_prefix(package)
                    .is_some_and(|r| r.is_empty() || r.starts_with('/'))
            })
            .collect();
        format!(
            "{} imports \"{specifier}\": `{package}` is served by the host, not taken from node_modules, and it serves only {}",
            file.display(),
            offered.join(", ")
        )
    }
}

/// Where a plugin's modules are found: its folder, its packages and the
/// flavor's built-ins; and what it needs from Node.
struct Found<'a> {
    base_dir: &'a Path,
    own: &'a [PathBuf],
    folder: &'a Confined,
    packages: &'a Packages,
    served: Served<'a>,
    native: &'a mut NativeAddons,
    needs: &'a mut NodeNeeds,
}

/// Add CommonJS or JSON `file` (module `name`) to `set`: its facade and its
/// definition, and the built-ins it requires. Returns the files it requires
/// that must be gathered too.
fn gather_commonjs(
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

/// Whether `file` lies in an npm package installed in the plugin's folder
/// (under a `node_modules` folder of `base_dir`).
fn in_package(base_dir: &Path, file: &Path) -> bool {
    file.strip_prefix(base_dir)
        .is_ok_and(|inside| inside.components().any(|c| c.as_os_str() == "node_modules"))
}

/// The source of `file` (symlinks resolved), read through `folder` (the
/// plugin's folder, `base_dir`) when it is inside it. Only the entry can be
/// outside: the manifest named it.
fn read_source(folder: &Confined, base_dir: &Path, file: &Path) -> Result<String, FileError> {
    let read = match file.strip_prefix(base_dir) {
        Ok(inside) => folder.read_text(inside, MAX_SOURCE_BYTES, file),
        Err(_) => {
            let parent = file.parent().unwrap_or(Path::new("/"));
            Confined::open(parent)
                .map_err(|source| FileError::Io {
                    path: parent.to_path_buf(),
                    source,
                })
                .and_then(|dir| {
                    let name = Path::new(file.file_name().unwrap_or_default());
                    dir.read_text(name, MAX_SOURCE_BYTES, file)
                })
        }
    };
    read
}

/// The refusal for a source that could not be read.
fn unreadable(e: FileError) -> GatherError {
    GatherError::Invalid(match e {
        // The others name the file and say what is wrong with it.
        FileError::Io { .. } => format!("cannot read {e}"),
        e => e.to_string(),
    })
}

/// The file a relative `specifier` in `from` names, inside `base_dir`, with
/// symlinks resolved.
fn relative(base_dir: &Path, from: &Path, specifier: &str) -> Result<PathBuf, GatherError> {
    let dir = from.parent().unwrap_or(base_dir);
    let joined = lexical(&dir.join(specifier));
    if !joined.starts_with(base_dir) {
        return Err(GatherError::Refused(format!(
            "{} imports \"{specifier}\", which is outside the plugin's folder {}",
            from.display(),
            base_dir.display()
        )));
    }
    let mut tries = vec![joined.clone()];
    // TypeScript convention: `./util.js` names `util.ts`.
    if let Some(stem) = specifier.strip_suffix(".js") {
        tries.push(lexical(&dir.join(format!("{stem}.ts"))));
    }
    tries.extend(EXTENSIONS.iter().map(|ext| {
        let mut with_ext = joined.clone().into_os_string();
        with_ext.push(format!(".{ext}"));
        PathBuf::from(with_ext)
    }));
    tries.extend(
        EXTENSIONS
            .iter()
            .map(|ext| joined.join(format!("index.{ext}"))),
    );
    let found = tries.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        GatherError::Invalid(format!(
            "{} imports \"{specifier}\", but there is no such file",
            from.display()
        ))
    })?;
    let real = found
        .canonicalize()
        .map_err(|e| GatherError::Invalid(format!("cannot read {}: {e}", found.display())))?;
    if !real.starts_with(base_dir) {
        return Err(GatherError::Refused(format!(
            "{} imports \"{specifier}\", which resolves to {}, outside the plugin's folder {}",
            from.display(),
            real.display(),
            base_dir.display()
        )));
    }
    Ok(real)
}

/// Whether `file` (resolved) is one of the plugin's own paths or inside one.
fn is_own(own: &[PathBuf], file: &Path) -> bool {
    own.iter().any(|o| file.starts_with(o))
}

fn outside_own(own: &[PathBuf], from: &Path, specifier: &str, target: &Path) -> GatherError {
    let own: Vec<String> = own.iter().map(|o| o.display().to_string()).collect();
    GatherError::Refused(format!(
        "{} imports \"{specifier}\", which resolves to {}, outside the plugin's own files ({})",
        from.display(),
        target.display(),
        own.join(", ")
    ))
}

/// Refuse `target` (what `specifier` in `from` resolved to) unless it is
/// one of the plugin's own paths.
fn confine(
    own: &[PathBuf],
    from: &Path,
    specifier: &str,
    target: &Path,
) -> Result<(), GatherError> {
    if is_own(own, target) {
        Ok(())
    } else {
        Err(outside_own(own, from, specifier, target))
    }
}

/// A plugin file's module name: its path relative to the plugin's folder,
/// with `/` separators.
pub(super) fn module_name(base_dir: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(base_dir).unwrap_or(file);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_package_file_over_the_source_limit_is_a_need_and_an_own_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = dir.path().join("p");
        let big = " ".repeat(MAX_SOURCE_BYTES as usize + 1);
        for (file, text) in [
            ("a.ts", "import \"bundle\";"),
            ("b.ts", "import \"./own.js\";"),
            ("own.js", big.as_str()),
            (
                "node_modules/bundle/package.json",
                "{\"main\": \"index.js\"}",
            ),
            ("node_modules/bundle/index.js", big.as_str()),
        ] {
            let path = plugin.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
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
        assert!(why.contains("own.js is over the limit of "), "{why}");
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
