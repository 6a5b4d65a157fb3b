//! What the command's tests share: running `yohost`, a plugin directory
//! of the example dylibs, and `yohost serve` through rmcp's client
//! ([`serve`]).
// Each test binary uses a part of these.
#![allow(dead_code)]

pub mod registry;
pub mod serve;

use crate::support::{example_dylib, plugin_dir, write};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `yohost ARGS` in `cwd`, with `RUST_LOG` and `NO_COLOR` unset:
/// (exit code, stdout, stderr).
pub fn yohost(args: &[&str], cwd: &Path) -> (Option<i32>, String, String) {
    yohost_with(args, cwd, &[])
}

/// Run `yohost ARGS` in `cwd` as [`yohost`] does, with the variables of
/// `env` set.
pub fn yohost_with(
    args: &[&str],
    cwd: &Path,
    env: &[(String, String)],
) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_yohost"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("yohost runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run `yohost COMMAND` in `cwd` under a pseudo-terminal (util-linux
/// `script`), with `input` typed, `RUST_LOG` unset, `NO_COLOR` set and
/// `TERM=xterm`: (exit code, what the terminal shows with `\r\n` as `\n`,
/// `script`'s own stderr). COMMAND is the rest of a shell command line, so
/// it may redirect (`check plugins 2>err.txt`).
pub fn on_terminal(command: &str, cwd: &Path, input: &str) -> (Option<i32>, String, String) {
    let command = format!("{} {command}", env!("CARGO_BIN_EXE_yohost"));
    let mut child = Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("`script` (util-linux) runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run `yohost run DIR --prompt go --script script.json` (with `--json`
/// when `json`) in `cwd`, which holds the script: (exit code, stdout,
/// stderr).
pub fn run_script(dir: &Path, json: bool, cwd: &Path) -> (Option<i32>, String, String) {
    let dir = dir.to_str().expect("a UTF-8 path");
    let mut args = vec!["run", dir, "--prompt", "go", "--script", "script.json"];
    if json {
        args.push("--json");
    }
    yohost(&args, cwd)
}

/// The example policy and tool dylibs, each in a folder of its own.
pub fn dylib_dir() -> tempfile::TempDir {
    let dir = plugin_dir();
    for (name, example) in [
        ("rust-policy", "example_policy"),
        ("rust-tool", "example_tool"),
    ] {
        let lib = example_dylib(example);
        write(
            dir.path(),
            &format!("{name}/plugin.toml"),
            &format!("entry = {:?}", lib.display().to_string()),
        );
    }
    dir
}

/// The index of the first line of `stdout` that starts with `wanted`.
pub fn position(stdout: &str, wanted: &str) -> usize {
    stdout
        .lines()
        .position(|l| l.starts_with(wanted))
        .unwrap_or_else(|| panic!("{wanted:?} in {stdout}"))
}
