//! A Python plugin imports a package installed in the user's virtualenv:
//! - `VIRTUAL_ENV`, read when the interpreter starts, puts the venv's
//!   site-packages on `sys.path`, ahead of the interpreter's own, so a
//!   package pip-installed there is the one the plugin imports.
//!
//! This is its own test binary: the one interpreter of a process reads
//! `VIRTUAL_ENV` once, so setting it here cannot leak into other tests.

mod support;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use support::*;
use yohost::PluginHost;

fn run_ok(program: &Path, args: &[&str]) {
    let status = Command::new(program).args(args).status().unwrap();
    assert!(status.success(), "{} {args:?} failed", program.display());
}

#[tokio::test]
async fn a_plugin_imports_a_package_installed_in_the_virtualenv() {
    let venv = tempfile::tempdir().unwrap();
    let venv_dir = venv.path().to_str().unwrap();
    run_ok(Path::new("python3"), &["-m", "venv", venv_dir]);
    run_ok(
        &venv.path().join("bin/pip"),
        &["install", "--quiet", "--disable-pip-version-check", "six"],
    );
    // Before the first Python plugin loads, as an activated venv would be.
    std::env::set_var("VIRTUAL_ENV", venv.path());

    let dir = plugin_dir();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/plugins/python/uses_six.py");
    std::fs::copy(source, dir.path().join("uses_six.py")).unwrap();
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 1, "{:?}", host.refused());
    let (agent, _) = scripted(vec![call("six_version", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    let (_, answer, is_error) = &results[0];
    assert!(!is_error, "{answer}");
    let file = answer.split_whitespace().nth(1).unwrap();
    assert!(
        file.starts_with(venv_dir),
        "six comes from the venv: {answer}"
    );
}
