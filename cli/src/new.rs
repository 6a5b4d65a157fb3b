//! `yohost new KIND NAME [DIR]`: a plugin to start from, in a folder of
//! its own, that builds, type-checks and loads as it is.
//!
//! Every scaffold is a `before_tool` policy that denies `rm -rf` in `bash`,
//! with a `plugin.toml` that names the plugin, its mode and its grants
//! (none). The templates are files of this crate (`templates/`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The kinds of plugin `yohost new` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A Rust plugin loaded as a native library (trusted code).
    Rust,
    /// A Rust plugin built as a sandboxed Wasm component.
    Wasm,
    /// A TypeScript plugin (no build step).
    Ts,
    /// A Python plugin (trusted code).
    Python,
    /// A pi extension, loaded through the pi adapter.
    Pi,
}

/// Arguments of `yohost new`.
#[derive(clap::Args)]
pub struct NewArgs {
    /// What to make.
    kind: Kind,
    /// The plugin's name: 1 to 64 lower-case letters, digits, `-` and `_`,
    /// starting with a letter.
    name: String,
    /// The folder to make (default: ./NAME); if it exists, it must be empty.
    dir: Option<PathBuf>,
    /// Depend on the SDKs of the yohost checkout at this path. Default: the
    /// checkout this `yohost` was built from, while it still holds them
    /// (the SDKs are not published yet); otherwise the published packages.
    #[arg(long)]
    sdk_repo: Option<PathBuf>,
}

/// The checkout this command was built from.
const BUILT_FROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The checkout whose SDKs a scaffold depends on: `given`, else the one this
/// command was built from if it still holds the SDKs.
fn sdk_checkout(given: Option<&Path>) -> Option<PathBuf> {
    match given {
        Some(repo) => Some(repo.to_path_buf()),
        None => {
            let built_from = Path::new(BUILT_FROM);
            let holds = [
                "sdk-rust/Cargo.toml",
                "sdk-ts/yohost.d.ts",
                "sdk-python/pyproject.toml",
            ]
            .iter()
            .all(|sdk| built_from.join(sdk).is_file());
            holds.then(|| yohost::internal::lexical(built_from))
        }
    }
}

const LIB_RS: &str = include_str!("../templates/lib.rs");
const RUST_CARGO: &str = include_str!("../templates/rust.Cargo.toml");
const RUST_MANIFEST: &str = include_str!("../templates/rust.plugin.toml");
const WASM_CARGO: &str = include_str!("../templates/wasm.Cargo.toml");
const WASM_MANIFEST: &str = include_str!("../templates/wasm.plugin.toml");
const TS_INDEX: &str = include_str!("../templates/index.ts");
const TS_MANIFEST: &str = include_str!("../templates/ts.plugin.toml");
const TS_CONFIG: &str = include_str!("../templates/ts.tsconfig.json");
const TS_PACKAGE: &str = include_str!("../templates/ts.package.json");
const PYTHON_PLUGIN: &str = include_str!("../templates/plugin.py");
const PYTHON_MANIFEST: &str = include_str!("../templates/python.plugin.toml");
const PI_INDEX: &str = include_str!("../templates/pi.index.ts");
const PI_MANIFEST: &str = include_str!("../templates/pi.plugin.toml");

/// The version of the SDKs a scaffold depends on: this command's.
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Make the scaffold and say how to build and check it.
pub fn new(args: NewArgs) -> Result<ExitCode, String> {
    check_name(&args.name)?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    let repo = sdk_checkout(args.sdk_repo.as_deref());
    let files = files(&args, repo.as_deref())?;
    make_empty_dir(&dir)?;
    for (path, text) in &files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    println!("made plugin '{}' in {}", args.name, dir.display());
    match args.kind {
        Kind::Rust => println!("build it: cd {} && cargo build", dir.display()),
        Kind::Wasm => println!(
            "build it: cd {} && cargo build --release --target wasm32-wasip2",
            dir.display()
        ),
        Kind::Ts => println!(
            "type-check it: cd {} && npm install && npm run check",
            dir.display()
        ),
        Kind::Python => println!(
            "type-check it: pip install {} mypy && mypy --strict {}",
            match &repo {
                Some(repo) => repo.join("sdk-python").display().to_string(),
                None => "yohost".into(),
            },
            dir.join("plugin.py").display()
        ),
        Kind::Pi => {}
    }
    if repo.is_none() && args.kind != Kind::Pi {
        println!(
            "note: it depends on the published SDK, which is not published yet: \
             make it again with --sdk-repo PATH (a yohost checkout) to use the checkout's"
        );
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    println!(
        "then: yohost check {} (the folder that holds the plugin)",
        parent.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// A name that is a valid plugin name, crate name, package name and
/// string in every template's language.
fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if first_ok && rest_ok && name.len() <= 64 {
        Ok(())
    } else {
        Err(format!(
            "the name {name:?} is not 1 to 64 lower-case letters, digits, `-` and `_` starting with a letter"
        ))
    }
}

/// Make `dir`, or accept it if it is an empty folder.
fn make_empty_dir(dir: &Path) -> Result<(), String> {
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("{} exists and is not empty", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))
        }
        Err(e) => Err(format!("cannot use {}: {e}", dir.display())),
    }
}

/// A string literal valid in JSON and in TOML.
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// Where an SDK of the checkout `repo` is, as a quoted literal.
fn sdk_path(repo: &Path, sdk: &str) -> Result<String, String> {
    let path = std::path::absolute(repo.join(sdk))
        .map_err(|e| format!("cannot resolve {}: {e}", repo.display()))?;
    Ok(quoted(&path.to_string_lossy()))
}

/// The scaffold's files: (path in the folder, contents), depending on the
/// SDKs of the checkout `repo`, or on the published ones.
fn files(args: &NewArgs, repo: Option<&Path>) -> Result<Vec<(&'static str, String)>, String> {
    let name = args.name.as_str();
    let lib = name.replace('-', "_");
    let fill = |template: &str, extra: &[(&str, &str)]| {
        extra
            .iter()
            .fold(template.replace("{{name}}", name), |text, (key, value)| {
                text.replace(&format!("{{{{{key}}}}}"), value)
            })
    };
    let rust_sdk = |features: &str| -> Result<String, String> {
        Ok(match repo {
            Some(repo) => format!("{{ path = {}{features} }}", sdk_path(repo, "sdk-rust")?),
            None => format!("{{ version = {}{features} }}", quoted(SDK_VERSION)),
        })
    };
    Ok(match args.kind {
        Kind::Rust => {
            let entry = format!(
                "target/debug/{}{lib}{}",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            );
            let sdk = rust_sdk("")?;
            vec![
                ("Cargo.toml", fill(RUST_CARGO, &[("sdk", &sdk)])),
                ("src/lib.rs", fill(LIB_RS, &[])),
                ("plugin.toml", fill(RUST_MANIFEST, &[("entry", &entry)])),
                (".gitignore", "target/\n".to_string()),
            ]
        }
        Kind::Wasm => {
            let entry = format!("target/wasm32-wasip2/release/{lib}.wasm");
            let sdk = rust_sdk(", features = [\"wasm\"]")?;
            vec![
                ("Cargo.toml", fill(WASM_CARGO, &[("sdk", &sdk)])),
                ("src/lib.rs", fill(LIB_RS, &[])),
                ("plugin.toml", fill(WASM_MANIFEST, &[("entry", &entry)])),
                (".gitignore", "target/\n".to_string()),
            ]
        }
        Kind::Ts => {
            let (types, package) = match repo {
                Some(repo) => {
                    let sdk = std::path::absolute(repo.join("sdk-ts"))
                        .map_err(|e| format!("cannot resolve {}: {e}", repo.display()))?;
                    (
                        quoted(&sdk.join("yohost.d.ts").to_string_lossy()),
                        quoted(&format!("file:{}", sdk.display())),
                    )
                }
                None => (
                    quoted("./node_modules/yohost/yohost.d.ts"),
                    quoted(&format!("^{SDK_VERSION}")),
                ),
            };
            vec![
                ("index.ts", fill(TS_INDEX, &[])),
                ("plugin.toml", fill(TS_MANIFEST, &[])),
                ("tsconfig.json", fill(TS_CONFIG, &[("types", &types)])),
                ("package.json", fill(TS_PACKAGE, &[("yohost", &package)])),
            ]
        }
        Kind::Python => vec![
            ("plugin.py", fill(PYTHON_PLUGIN, &[])),
            ("plugin.toml", fill(PYTHON_MANIFEST, &[])),
        ],
        Kind::Pi => vec![
            ("index.ts", fill(PI_INDEX, &[])),
            ("plugin.toml", fill(PI_MANIFEST, &[])),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_must_fit_every_language_of_the_templates() {
        for good in ["guard", "no-rm", "a_1", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Guard",
            "1st",
            "-x",
            "a b",
            "../x",
            "a\"b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_placeholder_is_filled() {
        for kind in [Kind::Rust, Kind::Wasm, Kind::Ts, Kind::Python, Kind::Pi] {
            for sdk_repo in [None, Some(PathBuf::from("/repo"))] {
                let args = NewArgs {
                    kind,
                    name: "guard".into(),
                    dir: None,
                    sdk_repo,
                };
                assert!(
                    sdk_checkout(args.sdk_repo.as_deref()).is_some(),
                    "the checkout this test runs in holds the SDKs"
                );
                for (path, text) in files(&args, args.sdk_repo.as_deref()).unwrap() {
                    assert!(!text.contains("{{"), "{kind:?} {path}: {text}");
                }
            }
        }
    }
}
