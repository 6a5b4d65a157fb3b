//! pi extensions, unchanged, on the JavaScript engine.
//!
//! The adapter's JavaScript lives in `adapters/pi/js/` (see
//! `adapters/pi/README.md`): the `pi` object an extension's factory
//! receives, the translation of pi's events to yohost hooks ([`PI`]'s
//! shape), and the built-in modules pi extensions import. This module is the
//! Rust side: the flavor, and `pi.exec` for plugins granted
//! `capabilities.exec`.

use super::modules::Builtin;
use super::{load_with, Flavor};
use crate::discovery::Candidate;
use crate::error::LoadError;
use crate::manifest::Ecosystem;
use crate::plugin::Loaded;
use serde_json::json;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

macro_rules! adapter {
    ($($file:literal),+) => {
        concat!($(include_str!(concat!("../../../../adapters/pi/js/", $file))),+)
    };
}

const CODING_AGENT: &str = adapter!("coding-agent.js");
const PI_AI: &str = adapter!("typebox.js", "pi-ai.js");
const TYPEBOX: &str = adapter!("typebox.js");
const PATH: &str = adapter!("path.js");
const URL: &str = adapter!("url.js");
const FS: &str = adapter!("fs-core.js", "fs.js");
const FS_PROMISES: &str = adapter!("fs-core.js", "fs-promises.js");

const fn builtin(specifier: &'static str, source: &'static str) -> Builtin {
    Builtin { specifier, source }
}

/// The modules a pi extension may import at run time, under pi's current
/// (`@earendil-works/*`) and former (`@mariozechner/*`) names. Anything
/// else (`@earendil-works/pi-tui`, `node:child_process`, npm packages)
/// refuses the extension, naming the import.
pub const BUILTINS: &[Builtin] = &[
    builtin("@earendil-works/pi-coding-agent", CODING_AGENT),
    builtin("@mariozechner/pi-coding-agent", CODING_AGENT),
    builtin("@earendil-works/pi-ai", PI_AI),
    builtin("@mariozechner/pi-ai", PI_AI),
    builtin("typebox", TYPEBOX),
    builtin("@sinclair/typebox", TYPEBOX),
    builtin("node:path", PATH),
    builtin("path", PATH),
    builtin("node:url", URL),
    builtin("url", URL),
    builtin("node:fs", FS),
    builtin("fs", FS),
    builtin("node:fs/promises", FS_PROMISES),
    builtin("fs/promises", FS_PROMISES),
];

/// The pi flavor: pi's modules, and a shape that runs the extension's
/// factory against a `pi` object and maps its handlers to hooks.
pub const PI: Flavor = Flavor {
    builtins: BUILTINS,
    shape: adapter!("shape.js"),
};

/// Load a pi extension.
pub fn load(candidate: &Candidate) -> Result<Loaded, LoadError> {
    let mut loaded = load_with(candidate, PI)?;
    loaded.ecosystem = Some(Ecosystem::Pi);
    Ok(loaded)
}

/// The longest a `pi.exec` process may run when the call names no timeout.
pub const MAX_EXEC: Duration = Duration::from_secs(300);

/// Run `command` with `args` in `cwd` (no shell), as pi's `exec` does, and
/// reply `{stdout, stderr, code, killed}` as JSON text. The process is
/// killed after `timeout` (at most [`MAX_EXEC`]).
pub fn exec(command: &str, args: &[String], cwd: &std::path::Path, timeout: Option<Duration>) -> String {
    let started = Command::new(command)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(e) => {
            return json!({"stdout": "", "stderr": format!("{command}: {e}"), "code": 127, "killed": false})
                .to_string()
        }
    };
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + timeout.unwrap_or(MAX_EXEC).min(MAX_EXEC);
    let mut killed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                killed = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    json!({
        "stdout": stdout.join().unwrap_or_default(),
        "stderr": stderr.join().unwrap_or_default(),
        "code": status.and_then(|s| s.code()).unwrap_or(if killed { 143 } else { 1 }),
        "killed": killed,
    })
    .to_string()
}
