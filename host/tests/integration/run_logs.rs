//! Logs carry the `run_id` of their run:
//! - every plugin log line, from two runs in flight at once through the same
//!   plugin, carries the run id of the run that caused it;
//! - hook calls run in a `hook` span with `run_id`, `plugin` and `hook`.

use crate::support;

use serde_json::json;
use std::sync::{Arc, Mutex};
use support::*;
use yoagent::extension::{Extension, ExtensionError, RunContext, RunHooks};
use yohost::PluginHost;

/// Records the run id of each run it is installed on.
struct RunIds(Arc<Mutex<Vec<String>>>);

struct NoHooks;
impl RunHooks for NoHooks {}

#[async_trait::async_trait]
impl Extension for RunIds {
    fn name(&self) -> &str {
        "run-ids"
    }
    async fn start_run(&self, run: &RunContext<'_>) -> Result<Box<dyn RunHooks>, ExtensionError> {
        self.0.lock().unwrap().push(run.run_id.to_string());
        Ok(Box::new(NoHooks))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn plugin_lines_from_two_concurrent_runs_carry_their_own_run_id() {
    let (logs, _guard) = capture_logs();
    let dir = plugin_dir();
    let lib = example_dylib("fixture_tagger");
    write(
        dir.path(),
        "tagger/plugin.toml",
        &format!("entry = {:?}", lib.display().to_string()),
    );
    let host = PluginHost::open(dir.path()).unwrap();

    let make = |word: &str, ids: Arc<Mutex<Vec<String>>>| {
        let (agent, _) = scripted(vec![
            call("echo", json!({"text": word})),
            call("echo", json!({"text": word})),
            text("done"),
        ]);
        agent
            .with_extension(RunIds(ids))
            .with_extension(host.extension())
    };
    let alpha_ids = Arc::new(Mutex::new(Vec::new()));
    let beta_ids = Arc::new(Mutex::new(Vec::new()));
    let mut alpha = make("alpha", alpha_ids.clone());
    let mut beta = make("beta", beta_ids.clone());
    tokio::join!(run(&mut alpha, "a"), run(&mut beta, "b"));

    let alpha_id = alpha_ids.lock().unwrap()[0].clone();
    let beta_id = beta_ids.lock().unwrap()[0].clone();
    assert_ne!(alpha_id, beta_id);
    let lines = logs.plugin_lines();
    assert_eq!(lines.len(), 4, "{lines:?}");
    for line in &lines {
        let message = line["fields"]["message"].as_str().unwrap();
        let expected = if message.contains("alpha") {
            &alpha_id
        } else {
            &beta_id
        };
        assert_eq!(line["fields"]["run_id"], json!(expected), "{line}");
        assert_eq!(line["fields"]["plugin"], "tagger");
        let span = &line["span"];
        assert_eq!(span["name"], "hook");
        assert_eq!(span["run_id"], json!(expected));
        assert_eq!(span["hook"], "before_tool");
    }
}
