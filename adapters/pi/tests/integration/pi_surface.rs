//! pi's whole published surface, accounted for. For the pi line the
//! adapter follows (1.6.0) and the most used older one (0.73.1), the
//! surface is read from the packages' `.d.ts` files (`pi_surface.cjs`, with
//! TypeScript; `.ci/run` unpacks them into the target dir): the value
//! exports of `pi-coding-agent`, `pi-ai`, `pi-tui` and `pi-agent-core`, the
//! members of `ExtensionAPI`, of `ExtensionContext` and of its `ui`,
//! `sessionManager` and `modelRegistry`, and the event names. A probe
//! extension imports every export and walks every member: each one works,
//! or fails when called with an error that names it and says it is "not
//! supported by yohost", or is refused by design (`js/shape/refused.json`);
//! never missing, never "not a function". An event is mapped, or reported
//! as one the host never emits, never unknown. The test fails when pi's
//! surface grows a member the adapter does not account for, and prints a
//! count per package.

use crate::support;

use crate::package;

use package::*;
use std::path::{Path, PathBuf};
use support::*;
use yohost::contract::{HookCall, HookReply};

/// The packages an extension may import, as the probe names them.
const MODULES: &[&str] = &["pi-coding-agent", "pi-ai", "pi-tui", "pi-agent-core"];

/// What must work headless, not only fail by name (`group.member`).
const MUST_WORK: &[&str] = &[
    "pi-tui.getKeybindings",
    "pi-tui.deleteKittyImage",
    "ExtensionAPI.sendMessage",
    "ctx.sessionManager.getCwd",
    "ctx.sessionManager.getSessionDir",
    "ctx.sessionManager.getSessionId",
    "ctx.sessionManager.getLeafEntry",
    "ctx.sessionManager.getEntry",
    "ctx.sessionManager.getHeader",
    "ctx.sessionManager.getTree",
    "ctx.sessionManager.getSessionName",
    "ctx.sessionManager.buildContextEntries",
];

/// The probe: `SCOPE`, `SURFACE`, `REFUSED` and `MUST_WORK` are filled in.
const PROBE: &str = r#"import * as codingAgent from "SCOPE/pi-coding-agent";
import * as ai from "SCOPE/pi-ai";
import * as tui from "SCOPE/pi-tui";
import * as agentCore from "SCOPE/pi-agent-core";
const SURFACE = __SURFACE__;
const REFUSED = __REFUSED__;
const MUST_WORK = __MUST_WORK__;
const UNSUPPORTED = Symbol.for("yohost.unsupported");
const modules = { "pi-coding-agent": codingAgent, "pi-ai": ai, "pi-tui": tui, "pi-agent-core": agentCore };
const counts = {};
const bad = [];
const count = (group) => (counts[group] ??= { works: 0, named: 0, refused: 0 });
function walk(group, label, owner, names) {
  for (const name of names) {
    const member = `${label}.${name}`;
    if (!(name in owner)) {
      bad.push(`${member}: missing`);
      continue;
    }
    const value = owner[name];
    if (typeof value !== "function" || value[UNSUPPORTED] === undefined) {
      count(group).works++;
      continue;
    }
    if (MUST_WORK.includes(member)) bad.push(`${member}: fails by name, and must work`);
    try {
      value();
      bad.push(`${member}: marked unsupported, but did not throw`);
    } catch (error) {
      const message = String(error?.message ?? error);
      if (message.includes(name) && message.includes("not supported by yohost")) count(group).named++;
      else bad.push(`${member}: ${message}`);
    }
  }
}
export default function (pi) {
  for (const [name, module] of Object.entries(modules)) walk(name, name, module, SURFACE.exports[name]);
  const calls = SURFACE.members.pi.filter((name) => !(name in REFUSED.calls));
  walk("ExtensionAPI", "ExtensionAPI", pi, calls);
  for (const name of SURFACE.members.pi.filter((name) => name in REFUSED.calls)) {
    if (typeof pi[name] === "function") count("ExtensionAPI").refused++;
    else bad.push(`ExtensionAPI.${name}: refused by design, but missing`);
  }
  for (const event of SURFACE.events) {
    if (event in REFUSED.events) count("events").refused++;
    else {
      pi.on(event, () => undefined);
      count("events").works++;
    }
  }
  pi.on("session_start", (_event, ctx) => {
    walk("ExtensionContext", "ctx", ctx, SURFACE.members.ctx);
    for (const part of ["ui", "sessionManager", "modelRegistry"]) {
      walk("ExtensionContext", `ctx.${part}`, ctx[part], SURFACE.members[`ctx.${part}`]);
    }
    pi.registerTool({
      name: "surface",
      description: JSON.stringify({ counts, bad }),
      parameters: { type: "object", properties: {} },
      execute: async () => ({ content: [] }),
    });
  });
}
"#;

/// TypeScript, as `.ci/run` installs it into the target dir.
fn typescript() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("typescript/node_modules/typescript");
    assert!(
        dir.is_dir(),
        "TypeScript is missing at {}: run .ci/run",
        dir.display()
    );
    dir
}

/// The surface of pi `version` under `scope`, read from its `.d.ts` files.
fn surface(version: &str, scope: &str) -> serde_json::Value {
    let modules =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pi-surface-{version}/node_modules"));
    assert!(
        modules
            .join(scope)
            .join("pi-coding-agent/package.json")
            .is_file(),
        "pi {version}'s packages are missing at {}: run .ci/run",
        modules.display()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pi_surface.cjs");
    let out = std::process::Command::new("node")
        .arg(script)
        .arg(typescript())
        .arg(&modules)
        .arg(scope)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the surface is JSON")
}

/// Loads the probe against pi `version`'s surface; returns the counts by
/// package, after checking that nothing is missing or fails badly.
async fn accounted_for(version: &str, scope: &str) -> serde_json::Value {
    let surface = surface(version, scope);
    for module in MODULES {
        assert!(
            surface["exports"][module]
                .as_array()
                .is_some_and(|names| !names.is_empty()),
            "{version}: no exports read for {module}"
        );
    }
    let refused = include_str!("../../js/shape/refused.json");
    let probe = PROBE
        .replace("SCOPE", scope)
        .replace("__SURFACE__", &surface.to_string())
        .replace("__REFUSED__", refused)
        .replace("__MUST_WORK__", &serde_json::to_string(MUST_WORK).unwrap());
    let dir = plugin_dir();
    write(dir.path(), "probe.js", &probe);
    let host = open(dir.path()).unwrap();
    let report = host.report().await;
    let probe_report = reported(&report, "probe");
    assert_eq!(probe_report.reason, None, "{version}: {probe_report:?}");
    let unknown: Vec<&String> = probe_report
        .warnings
        .iter()
        .filter(|w| w.contains("does not know"))
        .collect();
    assert!(
        unknown.is_empty(),
        "{version}: events the adapter does not account for: {unknown:?}"
    );
    let HookReply::Tools(specs) = ask(&host, HookCall::Tools).await else {
        panic!("tools replies with tools");
    };
    let mut found: serde_json::Value = serde_json::from_str(&specs[0].description).unwrap();
    assert_eq!(
        found["bad"],
        serde_json::json!([]),
        "{version}: members not accounted for"
    );
    // Events the host never emits are reported by name at load.
    let silent = probe_report
        .warnings
        .iter()
        .filter(|w| w.contains("which the host never emits"))
        .count() as u64;
    let events = &mut found["counts"]["events"];
    events["works"] = (events["works"].as_u64().unwrap() - silent).into();
    events["named"] = silent.into();
    for (package, count) in found["counts"].as_object().unwrap() {
        println!(
            "pi {version} {package}: {} work, {} fail by name, {} refused",
            count["works"], count["named"], count["refused"]
        );
    }
    found["counts"].clone()
}

#[tokio::test]
async fn pi_1_6_surface_is_accounted_for() {
    let counts = accounted_for("1.6.0", "@earendil-works").await;
    assert!(
        counts["events"]["refused"].as_u64().unwrap() > 0,
        "{counts}"
    );
    assert!(
        counts["ExtensionAPI"]["refused"].as_u64().unwrap() == 2,
        "{counts}"
    );
}

#[tokio::test]
async fn pi_0_73_surface_is_accounted_for() {
    accounted_for("0.73.1", "@mariozechner").await;
}
