//! A plugin's code runs on every CPU the host may use: the host pins a
//! sleeping engine thread to its caller's CPU to wake it cheaply, but the
//! thread leaves that pin before it runs the plugin's code, so the threads
//! and processes a plugin starts (which inherit its CPU mask) are never held
//! to one CPU. Shown through a real `Agent` run whose calls come a loop's
//! work apart (each to a sleeping thread), and back to back.
#![cfg(target_os = "linux")]

mod support;

use serde_json::json;
use support::*;
use yohost::PluginHost;

/// A tool that answers how many CPUs its thread, and a thread it starts,
/// may run on.
const CPUS: &str = r#"
import json
import os
import threading
from yohost import Plugin, CallTool

plugin = Plugin("cpus")

@plugin.tool(
    name="cpus",
    description="How many CPUs this code may run on",
    parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
)
def cpus(call: CallTool):
    started = []
    worker = threading.Thread(target=lambda: started.append(len(os.sched_getaffinity(0))))
    worker.start()
    worker.join()
    return json.dumps({"here": len(os.sched_getaffinity(0)), "started": started[0]})
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_python_plugins_code_and_its_threads_run_on_every_cpu() {
    let dir = plugin_dir();
    write(dir.path(), "cpus.py", CPUS);
    let host = PluginHost::open(dir.path()).unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let everywhere = std::thread::available_parallelism().unwrap().get();
    let calls = (0..20).map(|n| ("cpus", json!({ "n": n }))).collect();
    let answers = json_answers(&host, calls).await;
    assert_eq!(answers.len(), 20);
    for answer in answers {
        assert_eq!(answer, json!({"here": everywhere, "started": everywhere}));
    }
}
