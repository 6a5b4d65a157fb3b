//! Servers configured as their READMEs say: started by a launcher that
//! fetches the server as it starts (`npx -y NAME`, `bunx NAME`,
//! `uvx NAME`, `pipx run NAME`). In the sandbox no launcher could reach a
//! registry or write its cache, so none is run: the command is read as the
//! name of a package, and the copy installed in the plugin's folder
//! (`yohost add mcp:npm:NAME` or `mcp:pypi:NAME` put it there) is started
//! instead, with no network and no cache. A package that is not installed
//! there refuses the server, saying which `yohost add` installs it.
//!
//! - npm: `node_modules/NAME` in the folder; its `bin` (the only one, or
//!   the one the command names) runs with `node`.
//! - PyPI: the virtualenv `venv/` in the folder; the program it installed
//!   runs with that virtualenv's `python` (so the virtualenv may move with
//!   its folder).
//!
//! A version in the command (`NAME@1.2.3`, `NAME==1.2.3`) must be the one
//! installed.

use std::path::{Path, PathBuf};

/// The folder of a plugin's PyPI server: a virtualenv.
pub const VENV: &str = "venv";

/// How a server's command starts it.
#[derive(Debug, PartialEq)]
pub enum Launch {
    /// As written: the command is no launcher.
    AsWritten,
    /// The installed copy of the package a launcher names.
    Installed {
        /// The program: `node`, or the virtualenv's `python`.
        command: String,
        /// Its arguments: the package's program, then the server's own.
        args: Vec<String>,
        /// What the program needs to read outside the folder and the
        /// system's folders: the Python installation a virtualenv was made
        /// from.
        reads: Vec<PathBuf>,
    },
    /// A launcher whose package cannot be started from the folder: why,
    /// and what to do.
    Missing(String),
}

/// The registry a launcher fetches from.
#[derive(Clone, Copy)]
enum Registry {
    Npm,
    Pypi,
}

/// What a launcher's arguments name.
struct Named<'a> {
    /// The package, without its version.
    package: &'a str,
    /// The version the arguments pin, if any.
    version: Option<&'a str>,
    /// The program of the package to run, when it is not the package's
    /// own (`npx -p PKG PROGRAM`, `uvx --from PKG PROGRAM`).
    program: Option<&'a str>,
    /// The server's own arguments.
    rest: &'a [String],
}

/// The package a launcher's command fetches as it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchedPackage {
    /// `npm` or `pypi`.
    pub registry: &'static str,
    /// The package's name.
    pub package: String,
    /// The one version the command pins, if it pins one.
    pub version: Option<String>,
}

/// The package that `command args` fetches as it starts, if the command is
/// a launcher (`npx`, `bunx`, `uvx`, `pipx run`) that names one.
pub fn launched_package(command: &str, args: &[String]) -> Option<LaunchedPackage> {
    let (_, registry, args) = launcher(command, args)?;
    let named = name(registry, args)?;
    Some(LaunchedPackage {
        registry: match registry {
            Registry::Npm => "npm",
            Registry::Pypi => "pypi",
        },
        package: named.package.to_string(),
        version: named.version.map(str::to_string),
    })
}

/// The launcher `command` is, its registry, and the arguments it reads.
fn launcher<'a>(command: &'a str, args: &'a [String]) -> Option<(&'a str, Registry, &'a [String])> {
    let launcher = Path::new(command).file_name()?.to_str()?;
    match launcher {
        "npx" | "bunx" => Some((launcher, Registry::Npm, args)),
        "uvx" => Some((launcher, Registry::Pypi, args)),
        "pipx" if args.first().is_some_and(|a| a == "run") => {
            Some((launcher, Registry::Pypi, &args[1..]))
        }
        _ => None,
    }
}

/// How `command args` starts the server whose plugin folder is `folder`.
pub fn resolve(command: &str, args: &[String], folder: &Path) -> Launch {
    let Some((launcher, registry, args)) = launcher(command, args) else {
        return Launch::AsWritten;
    };
    let Some(named) = name(registry, args) else {
        return Launch::Missing(format!(
            "`{launcher}` names no package that yohost can find in {args:?}: start the server with `node` or a program in its folder"
        ));
    };
    let add = match registry {
        Registry::Npm => format!("yohost add mcp:npm:{}", named.package),
        Registry::Pypi => format!("yohost add mcp:pypi:{}", named.package),
    };
    let found = match registry {
        Registry::Npm => npm_program(folder, &named),
        Registry::Pypi => pypi_program(folder, &named),
    };
    match found {
        Ok((command, program)) => {
            let mut args = vec![program.display().to_string()];
            args.extend(named.rest.iter().cloned());
            let reads = match registry {
                Registry::Npm => Vec::new(),
                Registry::Pypi => base_python(&folder.join(VENV)).into_iter().collect(),
            };
            Launch::Installed {
                command,
                args,
                reads,
            }
        }
        Err(problem) => Launch::Missing(format!(
            "`{launcher}` would fetch {} as it starts, which needs a registry and a cache the sandbox does not give, so yohost starts the copy installed in the plugin's folder instead; {problem}: install it with `{add} --to DIR` (a folder of its own)",
            named.package
        )),
    }
}

/// The package, version, program and the server's arguments in a
/// launcher's arguments: options first (those that take a value are
/// known), then the package, then the server's own.
fn name(registry: Registry, args: &[String]) -> Option<Named<'_>> {
    let (with_value, from_flags): (&[&str], &[&str]) = match registry {
        Registry::Npm => (&["-p", "--package", "-c", "--call"], &["-p", "--package"]),
        Registry::Pypi => (
            &[
                "--from",
                "--spec",
                "--with",
                "-w",
                "--python",
                "-p",
                "--index-url",
                "--index",
                "--with-requirements",
            ],
            &["--from", "--spec"],
        ),
    };
    let mut from = None;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        if !arg.starts_with('-') {
            break;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg.as_str(), None),
        };
        if matches!(
            flag,
            "-c" | "--call" | "--with" | "-w" | "--with-requirements"
        ) {
            // A command line, or packages beside the server's: not one
            // installed package.
            return None;
        }
        if with_value.contains(&flag) {
            let value = match inline {
                Some(value) => value,
                None => {
                    index += 1;
                    args.get(index)?.as_str()
                }
            };
            if from_flags.contains(&flag) {
                from = Some(value);
            }
        }
        index += 1;
    }
    let first = args.get(index)?.as_str();
    let rest = &args[index + 1..];
    let (spec, program) = match from {
        Some(from) => (from, Some(first)),
        None => (first, None),
    };
    let (package, version) = split_version(registry, spec);
    let program = program.map(|p| split_version(registry, p).0);
    // The names become paths in the plugin's folder: each must be a name
    // its registry would take, never a path (`../../elsewhere`).
    if !registry_name(registry, package)
        || !program.is_none_or(|p| registry_name(Registry::Pypi, p))
    {
        return None;
    }
    Some(Named {
        package,
        version,
        program,
        rest,
    })
}

/// Whether `name` is a package name `registry` takes (npm's `name` or
/// `@scope/name`; PyPI's letters, digits, `-`, `_` and `.`), and so names
/// no path: no `..`, no `/` beyond a scope's, no leading `.` or `-`.
fn registry_name(registry: Registry, name: &str) -> bool {
    let part = |part: &str| {
        !part.is_empty()
            && !part.starts_with(['.', '-', '_'])
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
    };
    match (registry, name.strip_prefix('@')) {
        (Registry::Npm, Some(scoped)) => scoped
            .split_once('/')
            .is_some_and(|(scope, name)| part(scope) && part(name)),
        _ => part(name) && !name.contains('~'),
    }
}

/// `NAME@VERSION` (npm, and uv's spelling), or `NAME==VERSION` (PyPI):
/// the name, and the version if it is one exact version (a range or a tag
/// pins nothing).
fn split_version(registry: Registry, spec: &str) -> (&str, Option<&str>) {
    let split = match registry {
        // A scope's `@` starts the name.
        Registry::Npm => spec
            .get(1..)
            .and_then(|s| s.find('@'))
            .map(|at| (&spec[..at + 1], &spec[at + 2..])),
        Registry::Pypi => spec.split_once("==").or_else(|| spec.split_once('@')),
    };
    match split {
        Some((name, version)) => {
            let exact = version.chars().next().is_some_and(|c| c.is_ascii_digit())
                && !version.contains([' ', '<', '>', '|', '*', ',', '^', '~']);
            (name, exact.then_some(version))
        }
        None => (spec, None),
    }
}

/// `node` and the program of the npm package `named` installed in
/// `folder`.
fn npm_program(folder: &Path, named: &Named) -> Result<(String, PathBuf), String> {
    let package = folder.join("node_modules").join(named.package);
    let manifest = std::fs::read_to_string(package.join("package.json"))
        .map_err(|_| format!("{} is not installed there", named.package))?;
    let manifest: serde_json::Value = serde_json::from_str(&manifest)
        .map_err(|e| format!("{}'s package.json is not valid: {e}", named.package))?;
    check_version(named, manifest["version"].as_str())?;
    let short = named.package.rsplit('/').next().unwrap_or(named.package);
    let bin = match &manifest["bin"] {
        serde_json::Value::String(bin) if named.program.is_none_or(|p| p == short) => {
            Some(bin.clone())
        }
        serde_json::Value::Object(bins) => {
            let wanted = named.program.unwrap_or(short);
            bins.get(wanted)
                .or_else(|| {
                    (named.program.is_none() && bins.len() == 1)
                        .then(|| bins.values().next())
                        .flatten()
                })
                .and_then(|b| b.as_str())
                .map(str::to_string)
        }
        _ => None,
    };
    let bin = bin.ok_or_else(|| {
        format!(
            "{} has no program {}",
            named.package,
            named.program.unwrap_or("of its own")
        )
    })?;
    let program = package.join(&bin);
    let inside = match (program.canonicalize(), package.canonicalize()) {
        (Ok(program), Ok(package)) => program.is_file() && program.starts_with(package),
        _ => false,
    };
    if !inside {
        return Err(format!(
            "{}'s program `{bin}` is not a file of the package",
            named.package
        ));
    }
    Ok(("node".into(), program))
}

/// The virtualenv's `python` and the program of the PyPI package `named`
/// installed in `folder`'s virtualenv.
fn pypi_program(folder: &Path, named: &Named) -> Result<(String, PathBuf), String> {
    let venv = folder.join(VENV);
    let python = venv.join("bin/python");
    if !python.exists() {
        return Err(format!(
            "{} is not installed there (it has no `{VENV}/`)",
            named.package
        ));
    }
    let installed = installed_version(&venv, named.package)
        .ok_or_else(|| format!("{} is not installed in its `{VENV}/`", named.package))?;
    check_version(named, Some(&installed))?;
    let program = venv
        .join("bin")
        .join(named.program.unwrap_or(named.package));
    if !program.is_file() {
        return Err(format!(
            "{} installed no program `{}`",
            named.package,
            named.program.unwrap_or(named.package)
        ));
    }
    Ok((python.display().to_string(), program))
}

/// The version of the distribution `package` installed in the virtualenv
/// `venv`, from its `.dist-info` folder's name.
pub fn installed_version(venv: &Path, package: &str) -> Option<String> {
    dist_info(venv, package).map(|(_, version)| version)
}

/// The console scripts (the programs in `bin`) that the distribution
/// `package` installed in the virtualenv `venv`, from its
/// `entry_points.txt`.
pub fn console_scripts(venv: &Path, package: &str) -> Vec<String> {
    let Some((info, _)) = dist_info(venv, package) else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(info.join("entry_points.txt")).unwrap_or_default();
    let mut in_scripts = false;
    let mut scripts = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_scripts = line == "[console_scripts]";
        } else if let Some((script, _)) = line.split_once('=').filter(|_| in_scripts) {
            scripts.push(script.trim().to_string());
        }
    }
    scripts
}

/// The `.dist-info` folder of the distribution `package` in the
/// virtualenv `venv`, and the version its name gives.
fn dist_info(venv: &Path, package: &str) -> Option<(PathBuf, String)> {
    let wanted = normalized(package);
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.flatten()
        .filter_map(|python| std::fs::read_dir(python.path().join("site-packages")).ok())
        .flatten()
        .flatten()
        .find_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let (dist, version) = name.strip_suffix(".dist-info")?.rsplit_once('-')?;
            (normalized(dist) == wanted).then(|| (entry.path(), version.to_string()))
        })
}

/// The Python installation the virtualenv `venv` was made from (the
/// folder above the `home` its `pyvenv.cfg` names), which its `python`
/// reads its standard library from.
fn base_python(venv: &Path) -> Option<PathBuf> {
    let config = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    let base = home.parent()?.canonicalize().ok()?;
    (base.is_absolute() && base.components().count() > 1).then_some(base)
}

/// A PyPI name as the registry compares names: lower case, with `-`, `_`
/// and `.` alike.
fn normalized(name: &str) -> String {
    name.to_ascii_lowercase().replace(['-', '.'], "_")
}

/// An error unless the version `named` pins (if it pins one) is the one
/// installed.
fn check_version(named: &Named, installed: Option<&str>) -> Result<(), String> {
    match (named.version, installed) {
        (Some(wanted), Some(installed)) if wanted != installed => Err(format!(
            "the command asks for {} {wanted}, and {installed} is installed",
            named.package
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    /// The package, version, program and the server's own arguments.
    type Parts = (String, Option<String>, Option<String>, Vec<String>);

    fn named(registry: Registry, list: &[&str]) -> Option<Parts> {
        let list = args(list);
        name(registry, &list).map(|n| {
            (
                n.package.to_string(),
                n.version.map(str::to_string),
                n.program.map(str::to_string),
                n.rest.to_vec(),
            )
        })
    }

    #[test]
    fn a_launcher_s_arguments_name_the_package_its_version_and_the_server_s_own() {
        assert_eq!(
            named(
                Registry::Npm,
                &["-y", "@modelcontextprotocol/server-memory@2026.8.31", "--x"]
            ),
            Some((
                "@modelcontextprotocol/server-memory".into(),
                Some("2026.8.31".into()),
                None,
                args(&["--x"])
            ))
        );
        assert_eq!(
            named(Registry::Npm, &["--yes", "@scope/pkg@latest"]),
            Some(("@scope/pkg".into(), None, None, vec![]))
        );
        assert_eq!(
            named(Registry::Npm, &["-y", "-p", "pkg@1.0.0", "tool", "a"]),
            Some((
                "pkg".into(),
                Some("1.0.0".into()),
                Some("tool".into()),
                args(&["a"])
            ))
        );
        assert_eq!(
            named(Registry::Pypi, &["mcp-server-git", "--repository", "/r"]),
            Some((
                "mcp-server-git".into(),
                None,
                None,
                args(&["--repository", "/r"])
            ))
        );
        assert_eq!(
            named(
                Registry::Pypi,
                &["--from", "mcp-server-git==2026.10.19", "mcp-server-git"]
            ),
            Some((
                "mcp-server-git".into(),
                Some("2026.10.19".into()),
                Some("mcp-server-git".into()),
                vec![]
            ))
        );
        assert_eq!(
            named(Registry::Pypi, &["--python=3.12", "pkg@0.6.2"]),
            Some(("pkg".into(), Some("0.6.2".into()), None, vec![]))
        );
        assert_eq!(named(Registry::Pypi, &["--with", "x", "pkg"]), None);
        assert_eq!(named(Registry::Npm, &["-c", "echo hi"]), None);
        assert_eq!(named(Registry::Npm, &["-y"]), None);
        // A name that would be a path, anywhere it goes.
        for path in [
            "../../outside/pkg",
            "@scope/../../x",
            "/abs",
            ".hidden",
            "a/b",
        ] {
            assert_eq!(named(Registry::Npm, &["-y", path]), None, "{path}");
            assert_eq!(named(Registry::Pypi, &[path]), None, "{path}");
        }
        assert_eq!(
            named(Registry::Pypi, &["--from", "pkg", "../../bin/sh"]),
            None
        );
    }

    #[test]
    fn a_package_not_in_the_folder_is_missing_and_a_plain_command_is_as_written() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(
            resolve("node", &args(&["x.js"]), folder.path()),
            Launch::AsWritten
        );
        let Launch::Missing(why) = resolve("npx", &args(&["-y", "@scope/server"]), folder.path())
        else {
            panic!("not installed")
        };
        assert!(why.contains("yohost add mcp:npm:@scope/server"), "{why}");
        let Launch::Missing(why) = resolve("uvx", &args(&["mcp-server-x"]), folder.path()) else {
            panic!("not installed")
        };
        assert!(why.contains("yohost add mcp:pypi:mcp-server-x"), "{why}");
    }

    #[test]
    fn an_installed_npm_package_runs_its_bin_with_node_at_the_version_it_pins() {
        let folder = tempfile::tempdir().unwrap();
        let package = folder.path().join("node_modules/@scope/server");
        std::fs::create_dir_all(package.join("dist")).unwrap();
        std::fs::write(package.join("dist/index.js"), "").unwrap();
        std::fs::write(
            package.join("package.json"),
            r#"{"version": "1.2.3", "bin": {"mcp-server": "dist/index.js"}}"#,
        )
        .unwrap();
        assert_eq!(
            resolve("npx", &args(&["-y", "@scope/server", "a"]), folder.path()),
            Launch::Installed {
                command: "node".into(),
                args: vec![
                    package.join("dist/index.js").display().to_string(),
                    "a".into()
                ],
                reads: vec![]
            }
        );
        let Launch::Missing(why) =
            resolve("npx", &args(&["-y", "@scope/server@1.2.4"]), folder.path())
        else {
            panic!("another version")
        };
        assert!(why.contains("1.2.4, and 1.2.3 is installed"), "{why}");
        std::fs::write(
            package.join("package.json"),
            r#"{"version": "1.2.3", "bin": {"mcp-server": "../../../../escape.js"}}"#,
        )
        .unwrap();
        assert!(matches!(
            resolve("npx", &args(&["@scope/server"]), folder.path()),
            Launch::Missing(_)
        ));
    }
}
