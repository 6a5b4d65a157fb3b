//! The soak: 32 concurrent runs through one `PluginHost` that holds the
//! conformance fixture of every engine and adapter (the Node engine's when
//! `node` is there), 100 tool calls each, while plugin
//! files are replaced, added and removed. It passes when
//! - no `run_id` is crossed: every call ran with its own run's id, as the
//!   first plugin of the chain rewrote it, and every line a plugin logged
//!   carries the id of a run that was going on;
//! - nothing deadlocks: the whole soak has a deadline;
//! - every run keeps its snapshot: each plugin judged either every call of
//!   a run or none, and a plugin removed while a run was in flight still
//!   answered that run;
//! - the MCP server beside them (the MCP adapter's hostile fixture, one
//!   process all runs share) answers each run's own `say` calls, one a
//!   turn, with that run's own words;
//! - memory after the soak (RSS, from /proc/self/statm) is within
//!   [`RSS_GROWTH_BOUND`] of where it was after a warm-up.

// The soak installs the conformance fixtures and drives runs as the suite
// does; it does not use the per-case parts of either module.
#[allow(dead_code)]
#[path = "conformance/engines.rs"]
mod engines;
#[allow(dead_code)]
#[path = "conformance/harness.rs"]
mod harness;
#[path = "../../host/tests/support/mod.rs"]
mod support;
#[path = "../../host/tests/support/wasm_guests.rs"]
mod wasm_guests;

use harness::{drive, Outcome};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing_subscriber::layer::SubscriberExt;
use yoagent::provider::mock::{MockResponse, MockToolCall};
use yohost::PluginHost;

/// Concurrent runs.
const RUNS: usize = 32;
/// Tool calls per run.
const CALLS: usize = 100;
/// Tool calls per run in the warm-up.
const WARM_UP_CALLS: usize = 50;
/// Tool calls per model turn.
const CALLS_PER_TURN: usize = 10;
/// The whole soak must end within this: it catches a deadlock (which never
/// ends), so it is generous, and a loaded machine (CI beside other builds)
/// that is merely slow does not fail it.
const DEADLINE: Duration = Duration::from_secs(300);
/// How much the resident set may grow from after the warm-up to after the
/// soak. Measured on 2 cores: about 40-50 MiB (allocator arenas that the
/// longer runs and the reloads leave behind; a second soak round adds about
/// half as much again, so it levels off). A leak of more than about 50 MiB
/// over the soak's 3,200 calls and ~100 reloads goes past it.
const RSS_GROWTH_BOUND: u64 = 96 * 1024 * 1024;

/// The resident set size of this process, in bytes.
fn rss() -> u64 {
    // SAFETY: malloc_trim has no preconditions; it hands freed memory back,
    // so what is measured is what is still held.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0)
    };
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("resident pages");
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page as u64
}

/// One plugin log line: (run_id, plugin, message).
type Line = (String, String, String);

/// Keeps every `yohost::plugin` line about `before_tool`, cheaply.
#[derive(Clone, Default)]
struct Judged(Arc<Mutex<Vec<Line>>>);

#[derive(Default)]
struct Fields {
    run_id: String,
    plugin: String,
    message: String,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "run_id" => self.run_id = value.to_string(),
            "plugin" => self.plugin = value.to_string(),
            "message" => self.message = value.to_string(),
            _ => {}
        }
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Judged {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if event.metadata().target() != yohost::adapter::logging::PLUGIN_LOG_TARGET {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        if fields.message.starts_with("before_tool ") || fields.run_id.is_empty() {
            self.0
                .lock()
                .unwrap()
                .push((fields.run_id, fields.plugin, fields.message));
        }
    }
}

/// A script of `calls` calls `run whoami <i>`, `CALLS_PER_TURN` a turn
/// (numbered: yoagent stops a run that repeats a call), and a call of the
/// MCP server's `say` a turn, with `tag` and the turn's number.
fn script(calls: usize, tag: &str) -> Vec<MockResponse> {
    let mut script: Vec<MockResponse> = (0..calls)
        .collect::<Vec<_>>()
        .chunks(CALLS_PER_TURN)
        .enumerate()
        .map(|(n, turn)| {
            MockResponse::ToolCalls(
                turn.iter()
                    .map(|i| MockToolCall {
                        name: "run".into(),
                        arguments: serde_json::json!({ "cmd": format!("whoami {i}") }),
                        provider_metadata: None,
                    })
                    .chain([MockToolCall {
                        name: "say".into(),
                        arguments: serde_json::json!({ "text": format!("{tag} turn {n}") }),
                        provider_metadata: None,
                    }])
                    .collect(),
            )
        })
        .collect();
    script.push(support::text("done"));
    script
}

/// One run, with the times it started and ended.
struct Timed {
    out: Outcome,
    /// What its `say` calls said.
    tag: String,
    started: Instant,
    ended: Instant,
}

async fn one_run(host: Arc<PluginHost>, calls: usize, tag: String) -> Timed {
    let started = Instant::now();
    let out = drive(
        vec![Arc::new(host.extension())],
        script(calls, &tag),
        "soak",
    )
    .await;
    Timed {
        out,
        tag,
        started,
        ended: Instant::now(),
    }
}

/// What the churn did to the directory, and when.
#[derive(Default)]
struct Churn {
    /// When the Wasm fixture was removed.
    wasm_removed: Vec<Instant>,
    /// How many changes were made.
    changes: usize,
}

/// Replace, add and remove plugin files until `stop`.
async fn churn(dir: &Path, stop: Arc<AtomicBool>) -> Churn {
    let mut done = Churn::default();
    let mut step = 0usize;
    while !stop.load(Ordering::SeqCst) {
        match if std::env::var("SOAK_ONLY").is_ok() {
            std::env::var("SOAK_ONLY")
                .unwrap()
                .parse::<usize>()
                .unwrap()
        } else {
            step % 5
        } {
            9 => {}
            0 => {
                std::fs::remove_dir_all(dir.join("fx-wasm")).unwrap();
                done.wasm_removed.push(Instant::now());
            }
            1 => (engines::wasm().install)(dir, "fx-wasm", ""),
            2 => {
                let index = dir.join("fx-ts/index.ts");
                let mut source = std::fs::read_to_string(&index).unwrap();
                source.push_str(&format!("\n// revision {step}\n"));
                std::fs::write(&index, source).unwrap();
            }
            3 => (engines::python().install)(dir, "fx-extra", ""),
            _ => std::fs::remove_dir_all(dir.join("fx-extra")).unwrap(),
        }
        done.changes += 1;
        step += 1;
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    done
}

#[test]
fn thirty_two_runs_with_a_live_directory_keep_their_runs_apart() {
    let judged = Judged::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(judged.clone()))
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = support::plugin_dir();
    let mut rows = vec![
        engines::dylib(),
        engines::wasm(),
        engines::ts(),
        engines::python(),
        engines::pi(),
        engines::dsh(),
        engines::rutis(),
    ];
    // The Node engine's fixture too, in its process and kernel sandbox.
    match support::node_missing() {
        None => rows.push(engines::node()),
        Some(why) => eprintln!("the soak runs without a Node plugin: {why}"),
    }
    let count = rows.len() + 1;
    // An MCP server: the MCP adapter's fixture, its process in the sandbox.
    let mcp = dir.path().join("fx-mcp");
    std::fs::create_dir(&mcp).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/mcp/tests/fixture/hostile.mjs"),
        mcp.join("hostile.mjs"),
    )
    .unwrap();
    let servers =
        serde_json::json!({"mcpServers": {"fx-mcp": {"command": "node", "args": ["hostile.mjs"]}}});
    std::fs::write(mcp.join("mcp.json"), servers.to_string()).unwrap();
    std::fs::write(mcp.join("plugin.toml"), "[capabilities]\nexec = true\n").unwrap();
    for engine in rows {
        let name = format!("fx-{}", engine.name);
        // The dylib first: the plugins before the chain's rewrite judge
        // again (a recheck), and would count every call twice.
        let first = if engine.name == "dylib" {
            "priority = 1"
        } else {
            ""
        };
        (engine.install)(dir.path(), &name, first);
    }
    let host = Arc::new(harness::open(dir.path()));
    assert_eq!(host.plugins().len(), count, "{:?}", host.refused());

    runtime.block_on(async {
        // Warm-up: every engine has served as many runs at once as the soak
        // will, so caches and the allocator's pools have grown to size.
        let warm: Vec<_> = (0..RUNS)
            .map(|i| tokio::spawn(one_run(Arc::clone(&host), WARM_UP_CALLS, format!("warm {i}"))))
            .collect();
        for run in warm {
            run.await.unwrap();
        }
        let before = rss();
        judged.0.lock().unwrap().clear();

        let stop = Arc::new(AtomicBool::new(false));
        let churning = {
            let dir = dir.path().to_path_buf();
            let stop = Arc::clone(&stop);
            tokio::spawn(async move { churn(&dir, stop).await })
        };
        let runs: Vec<_> = (0..RUNS)
            .map(|i| {
                let host = Arc::clone(&host);
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(40 * i as u64)).await;
                    one_run(host, CALLS, format!("soak run {i}")).await
                })
            })
            .collect();
        let all = async {
            let mut done = Vec::new();
            for run in runs {
                done.push(run.await.unwrap());
            }
            done
        };
        let done = tokio::time::timeout(DEADLINE, all)
            .await
            .expect("the soak deadlocked or ran past its deadline");
        stop.store(true, Ordering::SeqCst);
        let churn = churning.await.unwrap();
        assert!(churn.changes >= 5, "the directory changed during the runs");

        check_runs(&done, &judged.0.lock().unwrap(), &churn);
        judged.0.lock().unwrap().clear();
        let took = done.iter().map(|t| t.ended).max().unwrap() - done[0].started;

        // Drop what the soak left, then measure.
        drop(done);
        let after = rss();
        eprintln!(
            "soak: {RUNS} runs of {CALLS} calls in {took:?}, {} changes to the directory; RSS {} -> {} MiB",
            churn.changes,
            before >> 20,
            after >> 20
        );
        assert!(
            after <= before + RSS_GROWTH_BOUND,
            "RSS grew from {before} to {after} bytes, over the bound of {RSS_GROWTH_BOUND}"
        );
    });
}

/// No run id is crossed, every run kept its snapshot, and a plugin removed
/// during a run still answered it.
fn check_runs(done: &[Timed], lines: &[Line], churn: &Churn) {
    let ids: BTreeSet<&str> = done.iter().map(|t| t.out.run_id.as_str()).collect();
    assert_eq!(ids.len(), RUNS, "every run has its own id");
    for timed in done {
        let out = &timed.out;
        assert_eq!(out.ran.len(), CALLS, "every call of {} ran", out.run_id);
        let said: Vec<(String, String, bool)> = out
            .results()
            .into_iter()
            .filter(|(tool, ..)| tool == "say")
            .collect();
        let expected: Vec<(String, String, bool)> = (0..CALLS / CALLS_PER_TURN)
            .map(|n| ("say".into(), format!("say: {} turn {n}", timed.tag), false))
            .collect();
        assert_eq!(
            said, expected,
            "the MCP server answered run {} with its own words",
            out.run_id
        );
        let mine = format!("whoami:{} ", out.run_id);
        assert!(
            out.ran.iter().all(|cmd| cmd.starts_with(&mine)),
            "run {} ran with another run's id: {:?}",
            out.run_id,
            out.ran.iter().find(|cmd| !cmd.starts_with(&mine))
        );
    }
    let mut per_run: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (run_id, plugin, _) in lines {
        assert!(
            ids.contains(run_id.as_str()),
            "a line of {plugin} carries no run of the soak: {run_id:?}"
        );
        *per_run
            .entry((run_id.as_str(), plugin.as_str()))
            .or_default() += 1;
    }
    for ((run_id, plugin), count) in &per_run {
        assert_eq!(
            *count, CALLS,
            "{plugin} judged {count} of the {CALLS} calls of run {run_id}: a run lost or gained a plugin"
        );
    }
    for timed in done {
        assert_eq!(
            per_run.get(&(timed.out.run_id.as_str(), "fx-dylib")),
            Some(&CALLS)
        );
    }
    let snapshots: BTreeSet<Vec<&str>> = done
        .iter()
        .map(|t| {
            per_run
                .keys()
                .filter(|(run, _)| *run == t.out.run_id)
                .map(|(_, plugin)| *plugin)
                .collect()
        })
        .collect();
    eprintln!(
        "soak: the runs saw {} different sets of plugins",
        snapshots.len()
    );
    let kept_removed = done.iter().any(|t| {
        per_run.contains_key(&(t.out.run_id.as_str(), "fx-wasm"))
            && churn
                .wasm_removed
                .iter()
                .any(|at| t.started < *at && *at < t.ended)
    });
    assert!(
        kept_removed || std::env::var("SOAK_ONLY").is_ok(),
        "some run started with the Wasm plugin, which was removed while it ran, and it answered every call"
    );
}
