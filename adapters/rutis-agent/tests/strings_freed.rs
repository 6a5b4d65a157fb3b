//! Every string a tool library returns (its name, its schemas, its results)
//! goes back to its `rutis_plugin_free`: after load and a call, the library
//! holds no string the host has not freed. (Its own test binary, so no other
//! test shares the loaded library's counter.)

#[path = "../../../host/tests/support/mod.rs"]
mod support;

use serde_json::json;
use support::*;
use yohost::PluginHost;

#[tokio::test]
async fn every_returned_string_is_freed() {
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
        &("live_strings".into(), r#"{"live":0}"#.into(), false),
        "{results:?}"
    );
}
