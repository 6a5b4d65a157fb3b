//! The plugin directory is live:
//! - a plugin added to the directory takes effect at the next run;
//! - a plugin removed stops at the next run, while a run already going keeps
//!   the plugins it started with;
//! - a plugin whose manifest breaks is refused at the next run, and (as it
//!   may be a required policy's) every run fails, naming the plugin and the
//!   file, until the manifest is fixed;
//! - a pi extension replaced while a run holds it unloads (its slow
//!   `session_shutdown`) off the thread that releases it: another run on
//!   the same thread is not held up, and dropping the host waits for the
//!   unload to finish.

#[path = "../../host/tests/support/mod.rs"]
mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;
use tokio::sync::Notify;
use yoagent::{AgentTool, Content, ToolContext, ToolError, ToolResult};
use yohost::PluginHost;

fn install_tagger(dir: &Path) -> PathBuf {
    let lib = example_dylib("fixture_tagger");
    write(
        dir,
        "tagger/plugin.toml",
        &format!("entry = {:?}", lib.display().to_string()),
    );
    dir.join("tagger")
}

async fn echo_once(host: &PluginHost) -> String {
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    tool_results(&run(&mut agent, "go").await)[0].1.clone()
}

#[tokio::test]
async fn a_plugin_added_takes_effect_at_the_next_run() {
    let dir = plugin_dir();
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(echo_once(&host).await, "hi");
    install_tagger(dir.path());
    assert_eq!(echo_once(&host).await, "hi +tag");
}

/// A tool that removes a folder when called.
struct Remove(PathBuf);

#[async_trait::async_trait]
impl AgentTool for Remove {
    fn name(&self) -> &str {
        "remove_plugin"
    }
    fn label(&self) -> &str {
        "Remove plugin"
    }
    fn description(&self) -> &str {
        "Removes the plugin folder"
    }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _: serde_json::Value, _: ToolContext) -> Result<ToolResult, ToolError> {
        std::fs::remove_dir_all(&self.0).map_err(|e| ToolError::Failed(e.to_string()))?;
        Ok(ToolResult {
            content: vec![Content::Text {
                text: "removed".into(),
            }],
            details: json!(null),
        })
    }
}

#[tokio::test]
async fn a_running_run_keeps_its_plugins_and_the_next_run_sees_the_removal() {
    let dir = plugin_dir();
    let folder = install_tagger(dir.path());
    let host = PluginHost::open(dir.path()).unwrap();
    let (agent, _) = scripted(vec![
        call("remove_plugin", json!({})),
        call("echo", json!({"text": "hi"})),
        text("done"),
    ]);
    let mut agent = agent
        .with_tools(vec![Box::new(Echo), Box::new(Remove(folder.clone()))])
        .with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(!folder.exists());
    assert_eq!(results[1].1, "hi +tag", "the run keeps its snapshot");
    assert_eq!(
        echo_once(&host).await,
        "hi",
        "the next run no longer has it"
    );
}

#[tokio::test]
async fn a_manifest_broken_while_live_fails_every_run_until_it_is_fixed() {
    let dir = plugin_dir();
    install_tagger(dir.path());
    write(
        dir.path(),
        "other/plugin.toml",
        &format!(
            "entry = {:?}",
            example_dylib("example_policy").display().to_string()
        ),
    );
    let host = PluginHost::open(dir.path()).unwrap();
    assert_eq!(host.plugins().len(), 2);
    let fixed = std::fs::read_to_string(dir.path().join("tagger/plugin.toml")).unwrap();
    write(dir.path(), "tagger/plugin.toml", "entry = [broken");
    host.reload();
    // A manifest that cannot be parsed may be a required policy's: every
    // run fails, naming the plugin and the file, until it is fixed.
    let (agent, _) = scripted(vec![call("echo", json!({"text": "hi"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    assert!(tool_results(&events).is_empty(), "no tool runs");
    let error = final_assistant(&events).1.unwrap();
    assert!(
        error.contains("required plugin 'tagger' was refused")
            && error.contains("tagger/plugin.toml"),
        "{error}"
    );
    assert_eq!(host.refused().len(), 1);
    assert_eq!(host.plugins().len(), 1);
    write(dir.path(), "tagger/plugin.toml", &fixed);
    host.reload();
    assert_eq!(echo_once(&host).await, "hi +tag", "fixed, it works again");
}

/// A pi extension with a tool `ping` (answering `pong v<version>`) whose
/// `session_shutdown` runs a 3 s process, then writes `bye-v<version>` in
/// `out`.
fn slow_goodbye(out: &Path, version: u32) -> String {
    let marker = out.join(format!("bye-v{version}")).display().to_string();
    format!(
        r#"import type {{ ExtensionAPI }} from "@earendil-works/pi-coding-agent";
import {{ writeFileSync }} from "node:fs";
export default function (pi: ExtensionAPI) {{
  pi.on("session_shutdown", async () => {{
    await pi.exec("sleep", ["3"]);
    writeFileSync({marker:?}, "bye");
  }});
  pi.registerTool({{
    name: "ping",
    label: "ping",
    description: "answer",
    parameters: {{ type: "object", properties: {{}} }},
    async execute() {{
      return {{ content: [{{ type: "text", text: "pong v{version}" }}], details: {{}} }};
    }},
  }});
}}
"#
    )
}

/// A tool that notes when it ran and signals `done`, then waits for
/// `wait`, if any.
struct Step {
    name: &'static str,
    done: Arc<Notify>,
    wait: Option<Arc<Notify>>,
    at: Arc<Mutex<Option<Instant>>>,
}

#[async_trait::async_trait]
impl AgentTool for Step {
    fn name(&self) -> &str {
        self.name
    }
    fn label(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "A step of the test"
    }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(&self, _: serde_json::Value, _: ToolContext) -> Result<ToolResult, ToolError> {
        *self.at.lock().unwrap() = Some(Instant::now());
        self.done.notify_one();
        if let Some(wait) = &self.wait {
            wait.notified().await;
        }
        Ok(ToolResult {
            content: vec![Content::Text {
                text: self.name.into(),
            }],
            details: json!(null),
        })
    }
}

#[tokio::test]
async fn a_replaced_plugin_unloads_off_the_thread_and_dropping_the_host_waits_for_it() {
    let dir = plugin_dir();
    let out = plugin_dir();
    write(dir.path(), "bye/index.ts", &slow_goodbye(out.path(), 1));
    write(
        dir.path(),
        "bye/plugin.toml",
        &format!(
            "[capabilities]\nexec = true\nwrite = [{:?}]\n",
            out.path().display().to_string()
        ),
    );
    let host = PluginHost::builder(dir.path())
        .adapter(yohost_adapter_pi::adapter())
        .open()
        .unwrap();
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    let (paused, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let a_ended = Arc::new(Notify::new());
    let released_at = Arc::new(Mutex::new(None));

    // Run A holds version 1 until run B releases it; both run on this
    // test's one thread.
    let (agent, _) = scripted(vec![call("pause", json!({})), text("done")]);
    let mut a = agent
        .with_tools(vec![Box::new(Step {
            name: "pause",
            done: Arc::clone(&paused),
            wait: Some(Arc::clone(&release)),
            at: Arc::default(),
        })])
        .with_extension(host.extension());
    let (agent, _) = scripted(vec![
        call("release", json!({})),
        call("after_a", json!({})),
        call("ping", json!({})),
        text("done"),
    ]);
    let mut b = agent
        .with_tools(vec![
            Box::new(Step {
                name: "release",
                done: Arc::clone(&release),
                wait: None,
                at: Arc::clone(&released_at),
            }),
            Box::new(Step {
                name: "after_a",
                done: Arc::new(Notify::new()),
                wait: Some(Arc::clone(&a_ended)),
                at: Arc::default(),
            }),
        ])
        .with_extension(host.extension());
    let run_a = async {
        run(&mut a, "a").await;
        a_ended.notify_one();
    };
    let run_b = async {
        paused.notified().await;
        write(dir.path(), "bye/index.ts", &slow_goodbye(out.path(), 2));
        host.reload();
        // B loads version 2, then releases A and waits for it to end:
        // A drops the last hold on version 1, whose unload takes 3 s.
        let results = tool_results(&run(&mut b, "b").await);
        let since = released_at.lock().unwrap().expect("released").elapsed();
        (results, since)
    };
    let ((), (results, since)) = tokio::join!(run_a, run_b);
    assert_eq!(results[2], ("ping".into(), "pong v2".into(), false));
    // The outcome proves it: held up by the unload, B would end after it,
    // with its marker written. The bound only catches a hang, generously,
    // so a loaded machine does not fail it.
    assert!(
        since < Duration::from_secs(30),
        "A's end and B's next call were held up by the unload: {since:?}"
    );
    let marker = out.path().join("bye-v1");
    assert!(!marker.exists(), "the unload is still under way");
    drop((a, b));
    drop(host);
    assert!(
        marker.exists(),
        "dropping the host waited for version 1's session_shutdown"
    );
}

/// The inodes every inotify watch of this process is on (Linux).
#[cfg(target_os = "linux")]
fn watched_inodes() -> std::collections::HashSet<u64> {
    let mut inodes = std::collections::HashSet::new();
    for fd in std::fs::read_dir("/proc/self/fdinfo").unwrap().flatten() {
        let Ok(info) = std::fs::read_to_string(fd.path()) else {
            continue;
        };
        for line in info.lines().filter(|l| l.starts_with("inotify wd:")) {
            if let Some(ino) = line
                .split_whitespace()
                .find_map(|field| field.strip_prefix("ino:"))
            {
                inodes.insert(u64::from_str_radix(ino, 16).unwrap());
            }
        }
    }
    inodes
}

/// The directory watcher never descends through a symlink: a plugin's
/// folder linking to a tree outside the plugin directory (a link to `/usr`
/// cost 15,257 watches; one to `/proc` descended into it) costs no watch
/// of that tree, nor does a top-level link to it; the plugin directory's
/// own folders are watched.
#[cfg(target_os = "linux")]
#[test]
fn the_watcher_does_not_follow_symlinks_out_of_the_plugin_directory() {
    use std::os::unix::fs::MetadataExt;
    let outside = tempfile::tempdir().unwrap();
    let mut outside_inodes = Vec::new();
    for i in 0..20 {
        let folder = outside.path().join(format!("d{i}/e"));
        std::fs::create_dir_all(&folder).unwrap();
        outside_inodes.push(std::fs::metadata(&folder).unwrap().ino());
        outside_inodes.push(std::fs::metadata(folder.parent().unwrap()).unwrap().ino());
    }
    outside_inodes.push(std::fs::metadata(outside.path()).unwrap().ino());
    let dir = plugin_dir();
    write(dir.path(), "spy/plugin.toml", "name = \"spy\"\n");
    std::fs::create_dir(dir.path().join("spy/own")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("spy/usr")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("linked")).unwrap();
    let host = PluginHost::open(dir.path()).unwrap();
    let watched = watched_inodes();
    let own = std::fs::metadata(dir.path().join("spy/own")).unwrap().ino();
    assert!(watched.contains(&own), "the plugin's own folder is watched");
    let followed: Vec<&u64> = outside_inodes
        .iter()
        .filter(|ino| watched.contains(ino))
        .collect();
    assert!(
        followed.is_empty(),
        "{} folders outside the plugin directory are watched",
        followed.len()
    );
    drop(host);
}
