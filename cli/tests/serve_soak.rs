//! `yohost serve --http` under load: waves of 64 sessions at once (the
//! default `--max-sessions`) against one server, through rmcp's client,
//! each session calling a TypeScript tool that answers with its `ctx.run_id`
//! many times; then closed, half with `DELETE` (`cancel`), half dropped.
//! - every call succeeds and carries its own session's `run_id` (no run is
//!   crossed between sessions), and the 64 sessions of a wave have 64
//!   distinct ones;
//! - every closed session's run finishes (its plugin's `finish` logs a line
//!   with the `run_id`);
//! - the server's resident memory does not keep growing from wave to wave:
//!   each run holds 512 KiB of the plugin's own until its `finish`, so a
//!   run left unfinished per session shows (32 MiB a wave; the plugin may
//!   use 512 MiB, so it is the growth that fails, not the plugin).

mod common;
#[path = "../../host/tests/support/plugin_dirs.rs"]
mod plugin_dirs;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::serve::{call, http_server, http_session, text, HttpServer, Session};
use plugin_dirs::resident_bytes_of;
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use support::{plugin_dir, write};
use tokio::sync::Barrier;

/// Sessions at once, in each wave.
const SESSIONS: usize = 64;
/// Calls of each session.
const CALLS: usize = 20;
/// Waves of sessions, one after the other.
const WAVES: usize = 6;
/// How much the server's resident memory may grow from the end of the
/// second wave (the first leaves the allocator's thresholds and the
/// engine's caches where they stay) to the end of the last: half what a
/// leaked run per session would add (32 MiB a wave, 128 MiB over the
/// four), about twice what the allocator keeps of a wave's peak of
/// ballast (up to 35 MiB, and as often given back, on a 2-core machine).
const GROWTH_MIB: u64 = 64;
/// The most the server may hold resident after the last wave.
const MAX_RSS_MIB: u64 = 512;

/// A tool that says which run and which session called it, keeping 512 KiB
/// for each run until the run's `finish`, which logs `finished`.
const PLUGIN: &str = r#"import { definePlugin, defineTool } from "yohost";
const ballast = new Map<string, string>();
const whoami = defineTool<{ session: string }>({
  name: "whoami", description: "Say the run and the session.",
  parameters: { type: "object", properties: { session: { type: "string" } }, required: ["session"] },
  run(args, ctx) {
    if (!ballast.has(ctx.run_id)) ballast.set(ctx.run_id, "x".repeat(512 * 1024));
    return { content: [{ type: "text", text: `${ctx.run_id} ${args.session}` }] };
  },
});
export default definePlugin({
  name: "soak", tools: [whoami],
  finish(_end, ctx) { ballast.delete(ctx.run_id); ctx.log.info("finished"); },
});
"#;

/// One session of wave `wave`: opened, once all of the wave's are open
/// `CALLS` calls, each checked to carry the one `run_id` of the session
/// and the session's own argument; then the session and that `run_id`.
async fn one_session(url: String, wave: usize, n: usize, open: Arc<Barrier>) -> (Session, String) {
    let session = http_session(&url)
        .await
        .unwrap_or_else(|e| panic!("session {n} of wave {wave}: {e}"));
    open.wait().await;
    let tag = format!("wave{wave}-session{n}");
    let mut run_id: Option<String> = None;
    for i in 0..CALLS {
        let result = session
            .call_tool(call("whoami", json!({ "session": tag })))
            .await
            .unwrap_or_else(|e| panic!("call {i} of {tag}: {e}"));
        assert_eq!(
            result.is_error,
            Some(false),
            "call {i} of {tag}: {result:?}"
        );
        let said = text(&result);
        let (id, echoed) = said.split_once(' ').expect("`RUN_ID SESSION`");
        assert_eq!(echoed, tag, "call {i} of {tag} answered another session");
        let first = run_id.get_or_insert_with(|| id.to_string());
        assert_eq!(id, first, "call {i} of {tag} ran in another run");
    }
    let run_id = run_id.expect("calls were made");
    assert!(run_id.starts_with("serve-"), "{run_id}");
    (session, run_id)
}

/// Run wave `wave` against `server`: the wave's run ids, once every one of
/// their runs has finished.
async fn wave(server: &HttpServer, wave: usize) -> HashSet<String> {
    let open = Arc::new(Barrier::new(SESSIONS));
    let sessions: Vec<_> = (0..SESSIONS)
        .map(|n| tokio::spawn(one_session(server.url.clone(), wave, n, Arc::clone(&open))))
        .collect();
    let mut run_ids = HashSet::new();
    let mut closing = Vec::new();
    for (n, session) in sessions.into_iter().enumerate() {
        let (session, run_id) = session.await.expect("the session's task");
        assert!(
            run_ids.insert(run_id.clone()),
            "two sessions of wave {wave} share {run_id}"
        );
        if n % 2 == 0 {
            // `DELETE` before it returns.
            closing.push(tokio::spawn(async move { session.cancel().await }));
        } else {
            // Its transport sends `DELETE` in the background.
            drop(session);
        }
    }
    for closed in closing {
        closed.await.unwrap().expect("the session closes");
    }
    let finished: HashSet<String> = server
        .stderr
        .until_run_ids_of(
            "soak",
            "finished",
            SESSIONS * (wave + 1),
            Duration::from_secs(120),
        )
        .await
        .into_iter()
        .collect();
    let unfinished: Vec<_> = run_ids.difference(&finished).collect();
    assert!(
        unfinished.is_empty(),
        "the runs of wave {wave}'s closed sessions that did not finish: {unfinished:?}"
    );
    run_ids
}

#[tokio::test(flavor = "multi_thread")]
async fn many_sessions_keep_their_runs_apart_and_memory_bounded() {
    let dir = plugin_dir();
    write(dir.path(), "soak/index.ts", PLUGIN);
    write(
        dir.path(),
        "soak/plugin.toml",
        "[limits]\nmemory_mib = 512\n",
    );
    let server = http_server(dir.path(), &["--max-sessions", "64"]).await;
    let pid = server.child.id().expect("the server runs").to_string();
    let mut all = HashSet::new();
    let mut rss = Vec::new();
    for n in 0..WAVES {
        let run_ids = wave(&server, n).await;
        assert!(all.is_disjoint(&run_ids), "a run id came back in wave {n}");
        all.extend(run_ids);
        rss.push(resident_bytes_of(&pid).expect("the server's VmRSS") >> 20);
        eprintln!("after wave {}: resident {} MiB", n + 1, rss[n]);
    }
    let (settled, last) = (rss[1], rss[WAVES - 1]);
    assert!(
        last <= settled + GROWTH_MIB,
        "the server's resident memory grew from wave to wave (MiB after each): {rss:?}"
    );
    assert!(
        last <= MAX_RSS_MIB,
        "the server holds {last} MiB after {WAVES} waves"
    );
}
