//! A new engine and ecosystem brought by an adapter crate alone
//! (`suite/adapter-rules`, built on `yohost::adapter`): its files are
//! discovered, its ids read in manifests and reports, and its plugins
//! judge tool calls through a real agent loop, with no change to the host.

use crate::support::{call, plugin_dir, run, scripted, text, tool_results, write};
use yohost::{PluginHost, Status};
use yohost_test_adapter_rules::{adapter, ECOSYSTEM, ENGINE};

#[tokio::test]
async fn an_adapter_crate_brings_an_engine_and_ecosystem_the_host_never_named() {
    let dir = plugin_dir();
    write(
        dir.path(),
        "no-echo.rules",
        "# the shell's twin\ndeny echo: echo is off in this directory\n",
    );
    write(dir.path(), "broken.rules", "allow everything\n");
    let host = PluginHost::builder(dir.path())
        .adapter(adapter())
        .open()
        .unwrap();

    let report = host.report().await;
    let rules = report.iter().find(|p| p.name == "no-echo").unwrap();
    assert_eq!(rules.status, Status::Loaded, "{rules:?}");
    assert_eq!(rules.engine.as_deref(), Some(ENGINE.as_str()));
    assert_eq!(rules.ecosystem.as_deref(), Some(ECOSYSTEM.as_str()));
    let broken = report.iter().find(|p| p.name == "broken").unwrap();
    assert_eq!(broken.status, Status::Refused);
    let reason = broken.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("line 1 is not a rule"), "{reason}");

    let (agent, _) = scripted(vec![
        call("echo", serde_json::json!({"text": "hi"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "say hi").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].2, "the call is an error: {results:?}");
    assert!(
        results[0].1.contains("echo is off in this directory"),
        "{results:?}"
    );
}

#[tokio::test]
async fn without_its_adapter_the_new_kind_is_a_file_the_host_does_not_know() {
    let dir = plugin_dir();
    write(dir.path(), "no-echo.rules", "deny echo: off\n");
    let host = PluginHost::open(dir.path()).unwrap();
    let refused = host.refused();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].reason.to_string().contains("not a plugin"),
        "{}",
        refused[0].reason
    );
}

#[test]
fn a_manifest_names_the_new_ecosystem_once_its_adapter_is_registered() {
    let mut adapters = yohost::adapter::Adapters::default();
    adapters.register(adapter());
    let manifest: yohost::manifest::Manifest =
        yohost::manifest::Manifest::parse("ecosystem = \"rules\"").unwrap();
    assert_eq!(manifest.ecosystem, Some(ECOSYSTEM));
}
