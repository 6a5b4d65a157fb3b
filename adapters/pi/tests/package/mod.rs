//! The pinned pi package the adapter's tests load extensions from, and a
//! host over a directory of them.
#![allow(dead_code)] // each test file uses a different part

use super::support::plugin_dir;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use yohost::contract::{HookCall, HookReply, RunInfo};
use yohost::{CallLimits, PluginHost};

/// A host over `dir` with the pi adapter registered.
pub fn open(dir: &Path) -> Result<PluginHost, yohost::HostError> {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .open()
}

/// A host over `dir` with both pi entries registered: the embedded engine
/// and Node.
pub fn open_with_node(dir: &Path) -> PluginHost {
    PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .adapter(yohost_adapter_pi::node_adapter())
        .open()
        .unwrap()
}

/// What the host's only plugin answers to `call`, in a fresh run.
pub async fn ask(host: &PluginHost, call: impl FnOnce(RunInfo) -> HookCall) -> HookReply {
    let plugin = &host.plugins()[0];
    let run = RunInfo {
        run_id: "direct".into(),
        ..RunInfo::default()
    };
    let opened = plugin.plugin.open_run(&run).await.unwrap();
    let limits = CallLimits {
        deadline: Instant::now() + Duration::from_secs(5),
        cancel: CancellationToken::new(),
        ui: None,
        progress: None,
    };
    let call = call(run);
    let reply = opened.call(call.clone(), limits).await.unwrap();
    call.parse_reply(reply).unwrap()
}

/// Copy `from` to `to` as hard links (copies across file systems), symbolic
/// links kept as they are, so that what is written beside the copy leaves
/// the original as it was.
pub fn link_copy(from: &Path, to: &Path) -> std::io::Result<()> {
    let kind = std::fs::symlink_metadata(from)?.file_type();
    if kind.is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if kind.is_dir() {
        std::fs::create_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            link_copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(|_| ()))
    }
}

/// What becomes of a package's peers on pi's packages when it is installed.
pub enum PiPeers {
    /// Pinned to the pi the adapter follows.
    Pinned,
    /// As npm resolves them.
    Resolved,
    /// Dropped, with TypeBox's: pi and the adapter serve them whatever
    /// `node_modules` holds, and each would install all of pi again.
    Dropped,
}

/// Install the published package `spec` (`NAME@VERSION`) into `folder`
/// as a user installs it, once (an install leaves `package-lock.json`):
/// unpacked, its `devDependencies` dropped (they name unpublished
/// packages), its peers on pi's packages as `peers` says, then `npm install
/// --omit=dev --ignore-scripts`. `hint` says what to do when npm fails.
pub fn npm_install(folder: &Path, spec: &str, peers: PiPeers, hint: &str) {
    if folder.join("package-lock.json").is_file() {
        return;
    }
    let _ = std::fs::remove_dir_all(folder);
    std::fs::create_dir_all(folder).unwrap();
    let pin = match peers {
        PiPeers::Pinned => format!(
            "for (const k of Object.keys(p.peerDependencies ?? {{}})) if (k.startsWith(\"@earendil-works/\")) p.peerDependencies[k] = \"{}\";",
            yohost_adapter_pi::PI_VERSION
        ),
        PiPeers::Resolved => String::new(),
        PiPeers::Dropped => "for (const k of Object.keys(p.peerDependencies ?? {})) if (/^@(earendil-works|mariozechner)\\/pi-|^(@sinclair\\/)?typebox$/.test(k)) delete p.peerDependencies[k];".to_string(),
    };
    let installed = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "npm pack --silent {spec} >/dev/null && tar xzf ./*.tgz --strip-components=1 && rm -f ./*.tgz package-lock.json \
             && node -e 'const fs = require(\"fs\"); const p = JSON.parse(fs.readFileSync(\"package.json\")); delete p.devDependencies; {pin} fs.writeFileSync(\"package.json\", JSON.stringify(p, null, 2));' \
             && npm install --silent --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null"
        ))
        .current_dir(folder)
        .status()
        .expect("npm runs");
    assert!(installed.success(), "installing {spec} failed: {hint}");
}

/// The pi package the tests load extensions from.
const PI_PACKAGE: &str = "@earendil-works/pi-coding-agent@1.6.0";

/// Where the package is unpacked under the target dir: named by version,
/// so a copy of another version is never used.
const PI_PACKAGE_DIR: &str = "pi-package-1.6.0";

/// The unpacked package, with the dependencies of its `with-deps` example
/// installed: `$YOHOST_PI_PACKAGE`, else
/// `<target>/tmp/pi-package-<version>/package`, fetched with `npm pack` if
/// missing.
fn pi_package() -> &'static Path {
    static PACKAGE: OnceLock<PathBuf> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        if let Some(dir) = std::env::var_os("YOHOST_PI_PACKAGE") {
            return PathBuf::from(dir);
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(PI_PACKAGE_DIR);
        let package = dir.join("package");
        if !package.join("package.json").is_file() {
            std::fs::create_dir_all(&dir).unwrap();
            let fetched = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "npm pack --silent {PI_PACKAGE} >/dev/null && tar xzf ./*.tgz && rm ./*.tgz \
                     && cd package/examples/extensions/with-deps \
                     && npm install --silent --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null"
                ))
                .current_dir(&dir)
                .status()
                .expect("npm runs");
            assert!(
                fetched.success(),
                "fetching {PI_PACKAGE} failed: run .ci/run, or set YOHOST_PI_PACKAGE to an unpacked copy"
            );
        }
        package
    })
}

/// The package's example extensions.
pub fn examples() -> PathBuf {
    pi_package().join("examples/extensions")
}

/// A plugin directory holding copies of these examples.
pub fn with_examples(names: &[&str]) -> tempfile::TempDir {
    let dir = plugin_dir();
    for name in names {
        std::fs::copy(examples().join(name), dir.path().join(name)).unwrap();
    }
    dir
}
