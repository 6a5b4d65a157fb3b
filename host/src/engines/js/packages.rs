//! npm packages: bare imports resolved from the plugin's own `node_modules`
//! with Node's algorithm (`exports`, `main`, conditions, `index` files), by
//! [`oxc_resolver`].
//!
//! What a package file is follows Node too ([`Packages::format_of`]): `.mjs` is an ES
//! module, `.cjs` CommonJS, `.json` JSON, and a `.js` file takes the `type`
//! of its nearest `package.json` (without one, ES module syntax makes it an
//! ES module). A plugin's own files (outside `node_modules`) stay ES modules
//! unless they are `.cjs` or `.json`.
//!
//! A resolved file must lie inside the plugin's folder once symlinks are
//! resolved; Node's built-in modules (`fs`, `node:crypto`, ...) are never
//! resolved here: a plugin gets only the built-ins its flavor provides.

use crate::load::source::{read_bytes, read_text, ReadError};
use crate::model::limits::MAX_SOURCE_BYTES;
use crate::model::sync::lock;
use oxc_resolver::{FileMetadata, FileSystem, FileSystemOs, ResolveError, ResolveOptions};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The resolver, reading through [`Bounded`].
type Resolver = oxc_resolver::ResolverGeneric<Bounded>;

/// The file system the resolver reads `package.json` files through: each
/// read as the host reads every plugin file ([`read_bytes`]: a regular
/// file, opened without blocking, at most [`MAX_SOURCE_BYTES`]). The
/// resolver takes a file it cannot read for a missing one, so a read
/// refused for what the file is (a FIFO, a device, a socket, too large) is
/// also noted in `refused`, and [`Packages::resolve`] refuses the plugin
/// with it.
struct Bounded {
    refused: Arc<Mutex<Vec<(PathBuf, ReadError)>>>,
}

impl Bounded {
    fn read_noted(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        read_bytes(path, MAX_SOURCE_BYTES).map_err(|problem| {
            let error = match &problem {
                ReadError::Io { kind, message } => std::io::Error::new(*kind, message.clone()),
                other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
            };
            if matches!(problem, ReadError::TooLarge { .. })
                || matches!(problem, ReadError::NotRegular(kind) if kind != "a folder")
            {
                lock(&self.refused).push((path.to_path_buf(), problem));
            }
            error
        })
    }
}

impl FileSystem for Bounded {
    fn new() -> Self {
        Bounded {
            refused: Arc::default(),
        }
    }

    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.read_noted(path)
    }

    fn read_to_string(&self, path: &Path) -> std::io::Result<String> {
        FileSystemOs::validate_string(self.read_noted(path)?)
    }

    fn metadata(&self, path: &Path) -> std::io::Result<FileMetadata> {
        FileSystemOs::metadata(path)
    }

    fn symlink_metadata(&self, path: &Path) -> std::io::Result<FileMetadata> {
        FileSystemOs::symlink_metadata(path)
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, ResolveError> {
        FileSystemOs::read_link(path)
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        FileSystemOs::canonicalize(path)
    }
}

/// How a file is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An ES module.
    Module,
    /// A CommonJS module, run through the interop wrapper.
    CommonJs,
    /// A JSON file: `require` gives its parsed value.
    Json,
}

/// Which of Node's resolutions a specifier goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// An `import` or `export ... from` (the `import` condition).
    Import,
    /// A `require(...)` call (the `require` condition).
    Require,
}

/// Why a specifier did not resolve to a file of the plugin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    /// The package is not installed in the plugin's `node_modules`.
    #[error("the package `{package}` is not installed: run `npm install` in {folder}")]
    Missing {
        /// The package's name (`zod`, `@scope/name`).
        package: String,
        /// The plugin's folder.
        folder: PathBuf,
    },
    /// A package that exports itself only under Node's `node` condition.
    #[error("the package `{0}` exports itself only for Node (its `node` condition)")]
    NodeOnly(String),
    /// A Node built-in module the flavor does not provide.
    #[error("`{0}` is a Node built-in module, which is not available to this plugin on the embedded engine (yohost plugins and pi extensions that need it run on Node with `engine = \"node\"` in plugin.toml)")]
    NodeBuiltin(String),
    /// A file the resolution had to read (a `package.json`) is not a
    /// regular file, or is too large.
    #[error("{}: {problem}", file.display())]
    Unreadable {
        /// The file.
        file: PathBuf,
        /// Why it was not read.
        problem: ReadError,
    },
    /// The file lies outside the plugin's folder once symlinks are resolved.
    #[error("it resolves to {}, outside the plugin's folder {}", file.display(), folder.display())]
    Outside {
        /// Where the specifier led.
        file: PathBuf,
        /// The plugin's folder.
        folder: PathBuf,
    },
    /// The package is installed but does not offer what was asked
    /// (`exports` does not list the subpath, a broken `package.json`, ...).
    #[error("{0}")]
    Unresolvable(String),
}

/// Resolves specifiers for one plugin, within its folder.
pub struct Packages {
    folder: PathBuf,
    import: Resolver,
    /// An import as Node's loader resolves it (the `node` condition too):
    /// asked only when `import` finds nothing, to tell a package that
    /// exports itself only for Node.
    node_import: Resolver,
    require: Resolver,
    /// A `#name` import, which the plugin's own `package.json` maps
    /// (`imports`) to its own files: TypeScript ones too, named without
    /// their extension or as `.js`, as pi's loader (jiti) finds them.
    own_import: Resolver,
    types: Mutex<HashMap<PathBuf, Option<String>>>,
    /// The reads the resolvers' file system refused ([`Bounded`]).
    refused: Arc<Mutex<Vec<(PathBuf, ReadError)>>>,
}

impl Packages {
    /// A resolver for the plugin whose (canonical) folder is `folder`.
    pub fn new(folder: &Path) -> Self {
        let options = |conditions: &[&str]| ResolveOptions {
            condition_names: conditions.iter().map(|c| c.to_string()).collect(),
            extensions: [".js", ".mjs", ".cjs", ".json"]
                .iter()
                .map(|e| e.to_string())
                .collect(),
            builtin_modules: true,
            node_path: false,
            symlinks: true,
            ..ResolveOptions::default()
        };
        let own = |conditions: &[&str]| ResolveOptions {
            extensions: [".ts", ".mts", ".tsx", ".js", ".mjs", ".cjs", ".json"]
                .iter()
                .map(|e| e.to_string())
                .collect(),
            extension_alias: vec![(".js".into(), vec![".ts".into(), ".js".into()])],
            ..options(conditions)
        };
        let refused: Arc<Mutex<Vec<(PathBuf, ReadError)>>> = Arc::default();
        let resolver = |options: ResolveOptions| {
            let fs = Bounded {
                refused: Arc::clone(&refused),
            };
            Resolver::new_with_file_system(fs, options)
        };
        Self {
            folder: folder.to_path_buf(),
            import: resolver(options(&["import", "module", "default"])),
            node_import: resolver(options(&["node", "import", "default"])),
            require: resolver(options(&["require", "node", "default"])),
            own_import: resolver(own(&["import", "module", "default"])),
            types: Mutex::new(HashMap::new()),
            refused,
        }
    }

    /// The file `specifier` names when `from` asks for it with `request`.
    /// Relative specifiers are resolved too (CommonJS `require("./x")`).
    pub fn resolve(
        &self,
        from: &Path,
        specifier: &str,
        request: Request,
    ) -> Result<PathBuf, PackageError> {
        let resolver = match request {
            _ if specifier.starts_with('#') => &self.own_import,
            Request::Import => &self.import,
            Request::Require => &self.require,
        };
        let dir = from.parent().unwrap_or(&self.folder);
        let resolution = resolver.resolve(dir, specifier);
        // A `package.json` the resolver could not read for what it is
        // refuses the plugin, whatever the resolver made of its absence.
        if let Some((file, problem)) = lock(&self.refused).first() {
            return Err(PackageError::Unreadable {
                file: file.clone(),
                problem: problem.clone(),
            });
        }
        let resolution = match (resolution, request) {
            (Err(error), Request::Import) if !is_relative(specifier) => {
                if self.node_import.resolve(dir, specifier).is_ok() {
                    return Err(PackageError::NodeOnly(package_name(specifier).to_string()));
                }
                return Err(self.explain(specifier, error));
            }
            (resolution, _) => resolution.map_err(|e| self.explain(specifier, e))?,
        };
        let file = resolution.into_path_buf();
        // The resolver follows symlinks; canonicalize once more so that a
        // link it chose not to follow cannot pass the check.
        let real = file
            .canonicalize()
            .map_err(|e| PackageError::Unresolvable(format!("{}: {e}", file.display())))?;
        if !real.starts_with(&self.folder) {
            return Err(PackageError::Outside {
                file: real,
                folder: self.folder.clone(),
            });
        }
        Ok(real)
    }

    fn explain(&self, specifier: &str, error: ResolveError) -> PackageError {
        match error {
            ResolveError::Builtin { resolved, .. } => PackageError::NodeBuiltin(resolved),
            ResolveError::NotFound(_) if !is_relative(specifier) => PackageError::Missing {
                package: package_name(specifier).to_string(),
                folder: self.folder.clone(),
            },
            other => PackageError::Unresolvable(other.to_string()),
        }
    }

    /// How `file` (inside the plugin's folder) is evaluated, given its
    /// source.
    pub fn format_of(&self, file: &Path, source: &str) -> Format {
        match file.extension().and_then(|e| e.to_str()) {
            Some("mjs" | "mts") => return Format::Module,
            Some("cjs" | "cts") => return Format::CommonJs,
            Some("json") => return Format::Json,
            _ => {}
        }
        let in_package = file
            .strip_prefix(&self.folder)
            .is_ok_and(|rest| rest.components().any(|c| c.as_os_str() == "node_modules"));
        if !in_package {
            return Format::Module;
        }
        match self.package_type(file).as_deref() {
            Some("module") => Format::Module,
            Some("commonjs") => Format::CommonJs,
            _ if has_module_syntax(file, source) => Format::Module,
            _ => Format::CommonJs,
        }
    }

    /// The `type` of the nearest `package.json` above `file`, within the
    /// plugin's folder.
    fn package_type(&self, file: &Path) -> Option<String> {
        let mut dir = file.parent();
        while let Some(current) = dir {
            if !current.starts_with(&self.folder) {
                return None;
            }
            let manifest = current.join("package.json");
            if manifest.is_file() {
                let mut types = lock(&self.types);
                return types
                    .entry(manifest.clone())
                    .or_insert_with(|| {
                        let text = read_text(&manifest, MAX_SOURCE_BYTES).ok()?;
                        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
                        json.get("type")?.as_str().map(String::from)
                    })
                    .clone();
            }
            dir = current.parent();
        }
        None
    }
}

/// Whether `specifier` is relative (`./x`, `../x`).
pub fn is_relative(specifier: &str) -> bool {
    specifier.starts_with("./")
        || specifier.starts_with("../")
        || specifier == "."
        || specifier == ".."
}

/// The package a bare specifier names: `zod` for `zod/v4`, `@scope/name`
/// for `@scope/name/sub`.
pub fn package_name(specifier: &str) -> &str {
    let mut parts = specifier.splitn(3, '/');
    let first = parts.next().unwrap_or(specifier);
    if first.starts_with('@') {
        match parts.next() {
            Some(second) => &specifier[..first.len() + 1 + second.len()],
            None => first,
        }
    } else {
        first
    }
}

/// Whether plain JavaScript `source` (of `file`) uses ES module syntax
/// (`import` or `export` declarations, `import.meta`). A source the parse
/// guard refuses (too large, nested too deep) does not: it is then taken
/// for CommonJS, whose analysis refuses it with the reason.
fn has_module_syntax(file: &Path, source: &str) -> bool {
    use oxc::allocator::Allocator;
    use oxc::parser::Parser;
    use oxc::span::SourceType;
    super::guard::guarded(file, source, || {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, source, SourceType::mjs()).parse();
        parsed.module_record.has_module_syntax
    })
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_keep_their_scope() {
        assert_eq!(package_name("zod"), "zod");
        assert_eq!(package_name("zod/v4/core"), "zod");
        assert_eq!(
            package_name("@deepseek-ai/schemastery"),
            "@deepseek-ai/schemastery"
        );
        assert_eq!(package_name("@scope/name/sub/path"), "@scope/name");
        assert_eq!(package_name("@scope"), "@scope");
    }

    #[test]
    fn package_files_follow_node_and_own_files_stay_modules() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().canonicalize().unwrap();
        let esm = folder.join("node_modules/esm");
        let cjs = folder.join("node_modules/cjs");
        std::fs::create_dir_all(&esm).unwrap();
        std::fs::create_dir_all(&cjs).unwrap();
        std::fs::write(esm.join("package.json"), r#"{"type":"module"}"#).unwrap();
        std::fs::write(cjs.join("package.json"), r#"{"name":"cjs"}"#).unwrap();
        let packages = Packages::new(&folder);
        let plain = "module.exports = 1;";
        assert_eq!(packages.format_of(&esm.join("a.js"), plain), Format::Module);
        assert_eq!(
            packages.format_of(&cjs.join("a.js"), plain),
            Format::CommonJs
        );
        assert_eq!(
            packages.format_of(&cjs.join("b.js"), "export const x = 1;"),
            Format::Module
        );
        assert_eq!(
            packages.format_of(&esm.join("c.cjs"), plain),
            Format::CommonJs
        );
        assert_eq!(
            packages.format_of(&cjs.join("d.mjs"), plain),
            Format::Module
        );
        assert_eq!(packages.format_of(&cjs.join("e.json"), "{}"), Format::Json);
        assert_eq!(
            packages.format_of(&folder.join("own.js"), plain),
            Format::Module
        );
    }
}
