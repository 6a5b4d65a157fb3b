//! As rutis's loader and demo host do, only the results of
//! `rutis_plugin_tool_invoke` go back to the library's `rutis_plugin_free`:
//! after load and calls, the library still holds its name and its five
//! schemas (which may be static strings, never to be freed), and none of
//! the results. (Its own test binary, so no other test shares the loaded
//! library's counter.)

#[path = "../../../host/tests/support/mod.rs"]
mod support;

use serde_json::json;
use support::*;
use yohost::PluginHost;

#[tokio::test]
async fn only_invoke_results_are_freed() {
    let dir = plugin_dir();
    let lib = example_dylib("rutis_fixture_tools");
    std::fs::copy(&lib, dir.path().join(lib.file_name().unwrap())).unwrap();
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_rutis_agent::adapter())
        .open()
        .unwrap();
    let (agent, _) = scripted(vec![
        call("shout", json!({"text": "a"})),
        call("fail", json!({})),
        call("live_strings", json!({})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    let results = tool_results(&events);
    assert_eq!(
        results.last().unwrap(),
        &("live_strings".into(), r#"{"live":6}"#.into(), false),
        "{results:?}"
    );
}
