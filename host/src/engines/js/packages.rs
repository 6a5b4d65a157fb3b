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

use oxc_resolver::{ResolveError, ResolveOptions, Resolver};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    /// A Node built-in module the flavor does not provide.
    #[error("`{0}` is a Node built-in module, which is not available to this plugin")]
    NodeBuiltin(String),
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
    require: Resolver,
    types: Mutex<HashMap<PathBuf, Option<String>>>,
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
        Self {
            folder: folder.to_path_buf(),
            import: Resolver::new(options(&["import", "module", "default"])),
            require: Resolver::new(options(&["require", "node", "default"])),
            types: Mutex::new(HashMap::new()),
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
            Request::Import => &self.import,
            Request::Require => &self.require,
        };
        let dir = from.parent().unwrap_or(&self.folder);
        let resolution = resolver
            .resolve(dir, specifier)
            .map_err(|e| self.explain(specifier, e))?;
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
            _ if has_module_syntax(source) => Format::Module,
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
                let mut types = self.types.lock().unwrap_or_else(|p| p.into_inner());
                return types
                    .entry(manifest.clone())
                    .or_insert_with(|| {
                        let text = std::fs::read_to_string(&manifest).ok()?;
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

/// Whether plain JavaScript `source` uses ES module syntax (`import` or
/// `export` declarations, `import.meta`).
fn has_module_syntax(source: &str) -> bool {
    use oxc::allocator::Allocator;
    use oxc::parser::Parser;
    use oxc::span::SourceType;
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::mjs()).parse();
    parsed.module_record.has_module_syntax
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
