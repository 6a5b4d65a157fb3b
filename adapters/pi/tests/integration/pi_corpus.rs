//! A corpus of 60 third-party pi packages from npm (none of them in the
//! other tests), each with a pinned verdict: it registers what pi 1.6.0
//! registers (the same command and flag names, and the same tools offered:
//! pi's active tools once the extensions' `session_start` ran), it is refused by design (the reason names what it
//! would rewrite), or it differs (a gap, with why). What pi registers is
//! pinned in `tests/corpus/pi_1.6.0_registers.json`, made with
//! `tests/corpus/pi_registers.mjs` (pi's own package resolution and
//! extension loader), so the test does not need pi.
//!
//! The packages are installed once under the target dir by `.ci/run`
//! (pinned, `devDependencies` and the peers on pi's own packages and TypeBox
//! dropped, `npm install --omit=dev --ignore-scripts`), or found at
//! `$YOHOST_PI_CORPUS`; a missing one is installed here the same way. The
//! test is skipped, saying why, when `node` is missing.

use crate::package;
use crate::support;

use package::{npm_install, open_with_node, PiPeers};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use support::*;
use yohost::Status;

/// What a package does under the host, compared with pi.
enum Verdict {
    /// Loads, and registers what pi registers.
    Registers,
    /// Refused by design: the reason names this.
    ByDesign(&'static str),
    /// Refused until its manifest grants what it reads at start-up (the
    /// sandbox, by design): the denial names this path and the key to grant.
    NeedsGrant(&'static str),
    /// Loads with something else, or is refused not by design: why.
    Differs(&'static str),
}
use Verdict::*;

/// The corpus: each package, pinned, and its verdict.
const CORPUS: [(&str, Verdict); 60] = [
    ("@benvargas/pi-antigravity-image-gen@1.1.3", Registers),
    (
        "@cryptolibertus/pi-peer@0.24.0",
        NeedsGrant(".pi/settings.json"),
    ),
    (
        "@danielmeneses/pi-llama-swap@0.1.2",
        NeedsGrant(".pi/agent/pi-llama-swap.json"),
    ),
    ("@gotgenes/pi-permission-system@20.7.3", Registers),
    ("@juicesharp/rpiv-advisor@2.11.0", Registers),
    ("@juicesharp/rpiv-btw@2.11.0", Registers),
    ("@juicesharp/rpiv-i18n@2.11.0", Registers),
    ("@juicesharp/rpiv-pi@2.11.0", Registers),
    ("@juicesharp/rpiv-warp@2.11.0", Registers),
    ("@sttronn/pi-sheets@0.1.2", Registers),
    ("cc-safety-net@2.4.5", Registers),
    (
        "deepseek-vl-support@0.2.9",
        Differs("its folder also holds an `mcp.json` (for other clients), so the host loads it as an MCP server (refused without `exec`), not as the pi package pi loads"),
    ),
    (
        "pi-agent-suite@2.11.2",
        Differs("it needs Node, and there `node:sqlite`, which Node 20 does not have (pi 1.6.0 needs Node 22.19); its `context`, `message_end` and `before_provider_request` handlers would be left out"),
    ),
    ("pi-aliases@1.0.7", Registers),
    (
        "pi-anthropic-oauth@0.2.4",
        ByDesign("pi.registerProvider"),
    ),
    ("pi-autoresearch@1.6.0", Registers),
    ("pi-bar@0.3.44", Registers),
    ("pi-bash-readonly@0.3.0", Registers),
    ("pi-btw@0.4.1", Registers),
    ("pi-checkpoint-bridge@0.1.0", Registers),
    ("pi-claude-bridge@0.6.3", Registers),
    ("pi-claude-oauth-adapter@0.2.2", Registers),
    ("pi-contour@0.4.4", Registers),
    ("pi-current-pr@0.1.1", Registers),
    (
        "pi-deepseek-cache-optimizer@1.0.6",
        ByDesign("listens for `message_end`"),
    ),
    ("pi-deepseek-search@1.0.20", Registers),
    ("pi-describe-image@0.0.1", Registers),
    (
        "pi-detour@0.2.0",
        Differs("its factory calls pi-coding-agent's `parseArgs` (pi's command line), which fails by name"),
    ),
    ("pi-docparser@4.0.0", Registers),
    ("pi-env@1.0.1", Registers),
    ("pi-ghostty@1.0.0", Registers),
    ("pi-lens@3.8.73", Registers),
    ("pi-llamacpp-infra@1.3.1", Registers),
    ("pi-llm-as-verifier@0.2.2", Registers),
    (
        "pi-lm-providers@0.1.4",
        ByDesign("listens for `message_end`"),
    ),
    ("pi-ollama-cloud@0.12.1", Registers),
    ("pi-paseo-orchestration@0.1.1", Registers),
    ("pi-plan-mode@0.2.4", Registers),
    ("pi-pomodoro@1.2.0", Registers),
    (
        "pi-profile@0.2.0",
        NeedsGrant(".pi/profiles"),
    ),
    (
        "pi-provider-litellm@3.1.0",
        Differs("it builds provider APIs with pi-ai's `createApi` at load, which the stand-in does not have"),
    ),
    (
        "pi-provider-qoder@0.4.5",
        ByDesign("pi.registerProvider"),
    ),
    ("pi-quota-bar@0.4.0", Registers),
    ("pi-qwen-mode-proxy@1.0.1", Registers),
    ("pi-qwencloud-provider@0.2.2", Registers),
    ("pi-sandbox@0.4.3", Registers),
    ("pi-sync-system-theme@0.2.5", Registers),
    ("pi-system-theme@0.5.0", Registers),
    ("pi-theme-picker@0.1.2", Registers),
    ("pi-themes@1.0.1", Registers),
    ("pi-tmux-window-name@0.4.6", Registers),
    ("pi-unified-exec@0.11.0", Registers),
    ("pi-unified-model-picker@0.1.1", Registers),
    ("pi-voice-stt@0.8.0", Registers),
    ("pi-whisper@0.2.1", Registers),
    (
        "pi-xai-oauth@1.6.0",
        Differs("it builds provider APIs with pi-ai's `openAIResponsesApi` at load, which the stand-in does not have"),
    ),
    ("pi-yolo-auto@0.1.6", Registers),
    ("pi-youtube-transcript@0.1.2", Registers),
    ("pi-zotero@0.1.0", Registers),
    ("wordpress-agent-kit@0.8.4", Registers),
];

/// The package's name, without its version.
fn name_of(spec: &str) -> &str {
    &spec[..spec.rfind('@').unwrap()]
}

/// The folder holding the installed packages: `$YOHOST_PI_CORPUS`, else
/// `<target>/tmp/pi-corpus`, where a missing package is installed as
/// `.ci/run` installs it.
fn packages() -> PathBuf {
    if let Some(dir) = std::env::var_os("YOHOST_PI_CORPUS") {
        return PathBuf::from(dir);
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pi-corpus");
    for (spec, _) in &CORPUS {
        npm_install(
            &dir.join(name_of(spec)),
            spec,
            PiPeers::Dropped,
            "run .ci/run, or set YOHOST_PI_CORPUS to a folder of installed copies",
        );
    }
    dir
}

/// The link a package is installed as in the plugin directory: its name
/// without `@` and `/`.
fn link_name(name: &str) -> String {
    name.trim_start_matches('@').replace('/', "-")
}

/// The names of `key` (`tools`, `commands`, `flags`) a plugin reports, as a
/// set: strings, or objects with a `name`. `None` when `check` does not
/// report that field.
fn names(entry: &Value, key: &str) -> Option<BTreeSet<String>> {
    let items = entry.get(key)?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|item| item.as_str().or_else(|| item["name"].as_str()))
            .map(String::from)
            .collect(),
    )
}

/// What pi registered for `name`, as pinned.
fn pi_registered(pinned: &Value, name: &str, key: &str) -> BTreeSet<String> {
    pinned["packages"][name][key]
        .as_array()
        .unwrap_or_else(|| panic!("{name} is not in pi_1.6.0_registers.json"))
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// The whole corpus in one plugin directory, checked as `yohost check`
/// checks it: the counts (registers, by design, differs).
async fn check_corpus() -> (usize, usize, usize) {
    let pinned: Value =
        serde_json::from_str(include_str!("../corpus/pi_1.6.0_registers.json")).unwrap();
    assert_eq!(pinned["pi"], "1.6.0");
    let installed = packages();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for (spec, _) in &CORPUS {
        let name = name_of(spec);
        let version = &pinned["packages"][name]["version"];
        assert_eq!(version, &spec[name.len() + 1..], "{spec}: pinned {version}");
        std::os::unix::fs::symlink(installed.join(name), dir.path().join(link_name(name))).unwrap();
    }
    let host = open_with_node(dir.path());
    let report = host.report().await;
    let (mut registers, mut by_design, mut differs) = (0, 0, 0);
    for (spec, verdict) in &CORPUS {
        let name = name_of(spec);
        // A package is found by its folder: one holding an MCP server's
        // `mcp.json` is named after the server.
        let link = dir.path().join(link_name(name));
        let entry = report
            .iter()
            .find(|p| p.file.starts_with(&link))
            .unwrap_or_else(|| panic!("{spec} is not in the report: {report:?}"));
        let json = serde_json::to_value(entry).unwrap();
        let mut same = entry.status == Status::Loaded;
        let mut compared = vec!["tools"];
        for key in ["tools", "commands", "flags"] {
            // A tool is compared as offered: pi's active tools once its
            // `session_start` ran (an extension may gate its own).
            let theirs = if key == "tools" { "active" } else { key };
            if let Some(ours) = names(&json, key) {
                same &= ours == pi_registered(&pinned, name, theirs);
                if key != "tools" {
                    compared.push(key);
                }
            }
        }
        let line = match verdict {
            Registers => {
                assert!(
                    same,
                    "{spec} no longer registers what pi registers: {entry:?}, pi: {:?}",
                    pinned["packages"][name]
                );
                registers += 1;
                format!("registers what pi registers ({})", compared.join(", "))
            }
            ByDesign(what) => {
                assert_eq!(entry.status, Status::Refused, "{spec}: {entry:?}");
                let reason = entry.reason.clone().unwrap_or_default();
                assert!(reason.contains(what), "{spec}: {reason}");
                by_design += 1;
                format!("refused by design: {what}")
            }
            NeedsGrant(what) => {
                assert_eq!(entry.status, Status::Refused, "{spec}: {entry:?}");
                let reason = entry.reason.clone().unwrap_or_default();
                assert!(
                    reason.contains(what) && reason.contains("capabilities"),
                    "{spec}: {reason}"
                );
                by_design += 1;
                format!("refused until granted: {what}")
            }
            Differs(why) => {
                assert!(
                    !same,
                    "{spec} now registers what pi registers: pin it as Registers"
                );
                differs += 1;
                format!("differs: {why}")
            }
        };
        let tools = pi_registered(&pinned, name, "tools").len();
        let commands = pi_registered(&pinned, name, "commands").len();
        let flags = pi_registered(&pinned, name, "flags").len();
        eprintln!("{spec} (pi: {tools} tools, {commands} commands, {flags} flags): {line}");
    }
    let others = registers + differs;
    eprintln!(
        "{registers} of the {others} packages not refused by design register what pi registers ({by_design} refused by design)"
    );
    (registers, by_design, differs)
}

/// Every package of the corpus has its pinned verdict, and at least 90% of
/// those not refused by design register what pi registers.
#[tokio::test]
async fn every_corpus_package_has_its_pinned_verdict() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    let (registers, _, differs) = check_corpus().await;
    assert!(
        registers * 10 >= (registers + differs) * 9,
        "{registers} of {}",
        registers + differs
    );
}
