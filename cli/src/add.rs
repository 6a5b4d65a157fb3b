//! `yohost add SPEC [--to DIR]` and `yohost remove NAME [--from DIR]`.
//!
//! `add` puts a package into a plugin directory the way its adapter needs
//! it: the package is fetched (`npm:NAME[@VERSION]` with `npm pack`), or
//! unpacked (a `.tgz`), or copied (a folder, without its `node_modules`
//! and `.git`);
//! its `devDependencies` are dropped (they often name unpublished
//! packages); pi's own packages (`@earendil-works/*`) are pinned to the pi
//! the adapter follows; its dependencies are installed with npm, without
//! install scripts; and a `plugin.toml` is written with the grants the
//! package's sources show it needs (`exec` for `child_process` or
//! `pi.exec`, `network` for `fetch` or the HTTP modules), which are printed
//! and asked for. Everything happens in a hidden folder of the plugin
//! directory (the host passes over dot folders), moved into place only
//! when it is complete. It ends with the plugin's `check` line.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// Arguments of `yohost add`.
#[derive(clap::Args)]
pub struct AddArgs {
    /// What to add: `npm:NAME[@VERSION]`, a package's `.tgz`, or a folder.
    spec: String,
    /// The plugin directory.
    #[arg(long, default_value = "plugins")]
    to: PathBuf,
    /// Grant what the package needs without asking.
    #[arg(long, short)]
    yes: bool,
    /// Grant `exec` (starting processes) if the package needs it; off a
    /// terminal, a package that needs it is not added without this.
    #[arg(long)]
    allow_exec: bool,
    /// Grant `network` if the package needs it; off a terminal, a package
    /// that needs it is not added without this.
    #[arg(long)]
    allow_network: bool,
}

/// Arguments of `yohost remove`.
#[derive(clap::Args)]
pub struct RemoveArgs {
    /// The plugin's name (its folder in the directory).
    name: String,
    /// The plugin directory.
    #[arg(long, default_value = "plugins")]
    from: PathBuf,
}

/// Where a package came from, as the lock file records it.
pub enum Source {
    /// The npm registry: the package's name, version and integrity.
    Npm {
        /// The package's name.
        name: String,
        /// Its version.
        version: String,
        /// npm's integrity hash of the tarball.
        integrity: Option<String>,
    },
    /// A folder or a `.tgz`, by its absolute path.
    Path(PathBuf),
}

/// A grant a package's sources show it needs, with the file that shows it.
struct Need {
    grant: &'static str,
    because: String,
}

/// Add the package `args.spec` to `args.to`.
pub async fn add(args: AddArgs) -> Result<ExitCode, String> {
    crate::output::init_stderr_logs();
    std::fs::create_dir_all(&args.to)
        .map_err(|e| format!("cannot make {}: {e}", args.to.display()))?;
    let stage = tempfile::Builder::new()
        .prefix(".yohost-add-")
        .tempdir_in(&args.to)
        .map_err(|e| format!("cannot make a folder in {}: {e}", args.to.display()))?;
    let (package, source) = fetch(&args.spec, stage.path())?;
    let manifest = read_package(&package)?;
    let name = folder_name(&manifest, &args.spec)?;
    let target = args.to.join(&name);
    if target.exists() {
        return Err(format!(
            "{} already holds `{name}`: `yohost remove {name}` first",
            args.to.display()
        ));
    }
    let needs = needs(&package);
    grant(&args, &needs)?;
    let ecosystem = prepare(&package, manifest)?;
    install_dependencies(&package)?;
    if !package.join(yohost::manifest::MANIFEST_FILE).exists() {
        write_manifest(&package, &name, &args.spec, ecosystem, &needs)?;
    }
    std::fs::rename(&package, &target)
        .map_err(|e| format!("cannot move the package to {}: {e}", target.display()))?;
    crate::lock::record(&args.to, &name, &source)?;
    println!("added {name} to {}", args.to.display());
    check_line(&args.to, &name).await
}

/// Remove the plugin `args.name` and its lock entry.
pub fn remove(args: RemoveArgs) -> Result<ExitCode, String> {
    if args.name.is_empty() || args.name.starts_with('.') || args.name.contains(['/', '\\']) {
        return Err(format!("`{}` is not a plugin's name", args.name));
    }
    let target = args.from.join(&args.name);
    if !target.is_dir() {
        return Err(format!(
            "{} has no plugin folder `{}`",
            args.from.display(),
            args.name
        ));
    }
    std::fs::remove_dir_all(&target)
        .map_err(|e| format!("cannot remove {}: {e}", target.display()))?;
    crate::lock::forget(&args.from, &args.name)?;
    println!("removed {} from {}", args.name, args.from.display());
    Ok(ExitCode::SUCCESS)
}

/// Bring the package into `stage`: its folder there, and where it came from.
fn fetch(spec: &str, stage: &Path) -> Result<(PathBuf, Source), String> {
    if let Some(npm_spec) = spec.strip_prefix("npm:") {
        println!("fetching {npm_spec} from npm …");
        let out = npm(
            &["pack", npm_spec, "--json", "--pack-destination", "."],
            stage,
        )?;
        let packed: serde_json::Value = serde_json::from_slice(&out)
            .map_err(|e| format!("npm pack gave no JSON for {npm_spec}: {e}"))?;
        let packed = &packed[0];
        let file = packed["filename"]
            .as_str()
            .ok_or_else(|| format!("npm pack named no file for {npm_spec}"))?;
        let folder = untar(&stage.join(file), stage)?;
        let text = |key: &str| packed[key].as_str().map(str::to_string);
        let source = Source::Npm {
            name: text("name").unwrap_or_else(|| npm_spec.to_string()),
            version: text("version").unwrap_or_default(),
            integrity: text("integrity"),
        };
        return Ok((folder, source));
    }
    let path = std::path::absolute(spec).map_err(|e| format!("cannot resolve {spec}: {e}"))?;
    if path.is_dir() {
        let folder = stage.join("package");
        copy_folder(&path, &folder)?;
        Ok((folder, Source::Path(path)))
    } else if path.is_file() && (spec.ends_with(".tgz") || spec.ends_with(".tar.gz")) {
        Ok((untar(&path, stage)?, Source::Path(path)))
    } else {
        Err(format!(
            "`{spec}` is not npm:NAME[@VERSION], a folder or a .tgz"
        ))
    }
}

/// Run npm with `args` in `cwd`, saying every few seconds that it still
/// works; its standard output.
fn npm(args: &[&str], cwd: &Path) -> Result<Vec<u8>, String> {
    let mut child = Command::new("npm")
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    let started = Instant::now();
    let mut said = 0;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) => {
                std::thread::sleep(Duration::from_millis(200));
                let seconds = started.elapsed().as_secs();
                if seconds >= said + 5 {
                    said = seconds;
                    println!("  npm {} is still working ({seconds} s)", args[0]);
                }
            }
            Err(e) => return Err(format!("npm {}: {e}", args[0])),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("npm {}: {e}", args[0]))?;
    if !out.status.success() {
        return Err(format!(
            "npm {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

/// Unpack the tarball `file` into a fresh folder of `stage`: the package's
/// folder (the tarball's single top folder).
fn untar(file: &Path, stage: &Path) -> Result<PathBuf, String> {
    let into = tempfile::Builder::new()
        .prefix("unpacked")
        .tempdir_in(stage)
        .map_err(|e| e.to_string())?
        .keep();
    let out = Command::new("tar")
        .arg("xzf")
        .arg(file)
        .arg("-C")
        .arg(&into)
        .arg("--no-same-owner")
        .output()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cannot unpack {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut tops: Vec<PathBuf> = std::fs::read_dir(&into)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    match (tops.len(), tops.first().map(|t| t.is_dir())) {
        (1, Some(true)) => Ok(tops.remove(0)),
        _ => Err(format!(
            "{} does not hold one package folder",
            file.display()
        )),
    }
}

/// Copy the folder `from` to `to`, without `node_modules` (npm installs
/// the dependencies afresh), `.git` and symbolic links.
fn copy_folder(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot make {}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name();
        if name == "node_modules" || name == ".git" {
            continue;
        }
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        let (source, target) = (entry.path(), to.join(&name));
        if kind.is_dir() {
            copy_folder(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target)
                .map_err(|e| format!("cannot copy {}: {e}", source.display()))?;
        }
    }
    Ok(())
}

/// The package's `package.json`, or an empty object for a folder without one.
fn read_package(folder: &Path) -> Result<serde_json::Value, String> {
    let path = folder.join("package.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::json!({})),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The plugin's folder name: the package's name without its scope, else the
/// spec's last path component.
fn folder_name(package: &serde_json::Value, spec: &str) -> Result<String, String> {
    let from_spec = || {
        Path::new(spec.trim_end_matches('/'))
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".tgz").to_string())
    };
    let name = package["name"]
        .as_str()
        .map(|n| n.rsplit('/').next().unwrap_or(n).to_string())
        .or_else(from_spec)
        .unwrap_or_default();
    let valid = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(name)
    } else {
        Err(format!("cannot name a plugin folder after `{name}`"))
    }
}

/// Make the package's `package.json` what the adapter needs: no
/// `devDependencies`, and pi's own packages at the pi the adapter follows.
/// The package's ecosystem, if it is pi's or DSH's.
fn prepare(folder: &Path, mut package: serde_json::Value) -> Result<Option<&'static str>, String> {
    let Some(object) = package.as_object_mut() else {
        return Ok(None);
    };
    let mut changed = object.remove("devDependencies").is_some();
    let mut ecosystem = object.contains_key("pi").then_some("pi");
    for key in ["dependencies", "peerDependencies"] {
        let Some(deps) = object.get_mut(key).and_then(|d| d.as_object_mut()) else {
            continue;
        };
        for (name, version) in deps.iter_mut() {
            if name.starts_with("@earendil-works/") {
                ecosystem = Some("pi");
                if version != yohost_adapter_pi::PI_VERSION {
                    *version = yohost_adapter_pi::PI_VERSION.into();
                    changed = true;
                }
            } else if name.starts_with("@deepseek-ai/dsh") && ecosystem.is_none() {
                ecosystem = Some("dsh");
            }
        }
    }
    if changed {
        let path = folder.join("package.json");
        let text = serde_json::to_string_pretty(&package).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        // Its lock names what was dropped or pinned otherwise.
        let _ = std::fs::remove_file(folder.join("package-lock.json"));
    }
    Ok(ecosystem)
}

/// `npm install` the package's dependencies, without install scripts and
/// without devDependencies, if it has any.
fn install_dependencies(folder: &Path) -> Result<(), String> {
    let package = read_package(folder)?;
    let has = |key: &str| package[key].as_object().is_some_and(|d| !d.is_empty());
    if !has("dependencies") && !has("peerDependencies") {
        return Ok(());
    }
    println!("installing its dependencies with npm (no install scripts) …");
    npm(
        &[
            "install",
            "--omit=dev",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ],
        folder,
    )
    .map(drop)
}

/// What the package's own sources (not its dependencies) show it needs.
fn needs(folder: &Path) -> Vec<Need> {
    const SIGNS: [(&str, &[&str]); 2] = [
        ("exec", &["child_process", "pi.exec("]),
        (
            "network",
            &[
                "fetch(",
                "node:http",
                "node:https",
                "node:net",
                "WebSocket(",
            ],
        ),
    ];
    let mut found: Vec<Need> = Vec::new();
    let mut files = Vec::new();
    sources(folder, &mut files);
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (grant, signs) in SIGNS {
            if found.iter().any(|n| n.grant == grant) {
                continue;
            }
            if let Some(sign) = signs.iter().find(|s| text.contains(*s)) {
                let shown = file.strip_prefix(folder).unwrap_or(&file);
                found.push(Need {
                    grant,
                    because: format!("{} uses `{sign}`", shown.display()),
                });
            }
        }
    }
    found.sort_by_key(|n| n.grant);
    found
}

/// The JavaScript and TypeScript files of `folder`, outside `node_modules`.
fn sources(folder: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() && name != "node_modules" => sources(&path, out),
            Ok(kind) if kind.is_file() => {
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                if matches!(ext, "js" | "mjs" | "cjs" | "ts" | "mts" | "cts") {
                    out.push(path);
                }
            }
            _ => {}
        }
    }
}

/// Say what the package needs and decide whether it gets it: `--yes` or a
/// person's yes on a terminal; off a terminal, `exec` and `network` only
/// with `--allow-exec` and `--allow-network`.
fn grant(args: &AddArgs, needs: &[Need]) -> Result<(), String> {
    if needs.is_empty() {
        println!("it needs no grants");
        return Ok(());
    }
    println!("it needs:");
    for need in needs {
        println!("  {}: {}", need.grant, need.because);
    }
    let allowed = |grant: &str| match grant {
        "exec" => args.allow_exec,
        "network" => args.allow_network,
        _ => false,
    };
    if needs.iter().all(|n| allowed(n.grant)) {
        return Ok(());
    }
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    if !terminal {
        let missing: Vec<String> = needs
            .iter()
            .filter(|n| !allowed(n.grant))
            .map(|n| format!("--allow-{}", n.grant))
            .collect();
        return Err(format!(
            "not added: off a terminal, {} must be given to grant what it needs",
            missing.join(" and ")
        ));
    }
    if args.yes {
        return Ok(());
    }
    print!("grant these? [y/N] ");
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| e.to_string())?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err("not added: the grants were not given".into())
    }
}

/// Write the plugin's `plugin.toml`: its name, ecosystem and grants.
fn write_manifest(
    folder: &Path,
    name: &str,
    spec: &str,
    ecosystem: Option<&str>,
    needs: &[Need],
) -> Result<(), String> {
    let quoted = |text: &str| serde_json::Value::from(text).to_string();
    let mut text = format!(
        "# Written by `yohost add {spec}`.\nname = {}\n",
        quoted(name)
    );
    if let Some(ecosystem) = ecosystem {
        text.push_str(&format!("ecosystem = {}\n", quoted(ecosystem)));
    }
    if !needs.is_empty() {
        text.push_str("\n[capabilities]\n");
        for need in needs {
            text.push_str(&format!("{} = true  # {}\n", need.grant, need.because));
        }
    }
    let path = folder.join(yohost::manifest::MANIFEST_FILE);
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Print the plugin's line of `yohost check`; exit 1 if it is refused.
async fn check_line(dir: &Path, name: &str) -> Result<ExitCode, String> {
    let host = crate::open_host(dir, true, false)?;
    let report = host.report().await;
    let plugin = report
        .iter()
        .find(|p| p.name == name || p.file.file_name().is_some_and(|f| f == name))
        .ok_or_else(|| format!("{name} is not among the plugins of {}", dir.display()))?;
    println!("{plugin}");
    Ok(match plugin.status {
        yohost::Status::Loaded => ExitCode::SUCCESS,
        yohost::Status::Refused => ExitCode::FAILURE,
    })
}
