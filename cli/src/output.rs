//! How `yohost` prints: log setup, and the run's events as they happen.
//!
//! Plugin log lines (target `yohost::plugin`) and the plugins' decisions
//! about tool calls (target `yohost::decision`: each deny, rewrite and
//! output edit, naming the plugin) go to standard output with the run's
//! events, after the call they concern: what `before_tool` wrote or decided
//! about a call comes after the call's start line, what `call_tool` and
//! `after_tool` wrote or decided after its end line (the hook span's
//! `call_id` ties a log line to its call). Lines about no call come after
//! the next tool line or input rejection, or before the run's end. The
//! host's own warnings go to standard error (`RUST_LOG` sets their level,
//! `warn` by default), without colours unless standard error is a terminal
//! (and `NO_COLOR` is unset), above the spinner of a long step
//! ([`crate::progress`]). What the host logs about loading plugins is
//! left out by default: `check` reports it, and a run logs each refused
//! plugin when it starts.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use yoagent::AgentEvent;
use yohost::adapter::logging::{DECISION_LOG_TARGET, HOOK_SPAN, PLUGIN_LOG_TARGET};

/// The host's log level unless `RUST_LOG` says otherwise. yoagent's own
/// warning for each denied call is left out: the run's output shows it.
/// So are the host's lines about loading plugins (see the module docs), and
/// the MCP SDK's own (the MCP adapter says what they mean: a refused or a
/// gone server, naming it).
const DEFAULT_FILTER: &str = "warn,yoagent::agent_loop=error,yohost::load=error,rmcp=off";

/// Whether the host's log lines on standard error get colours.
fn colours() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// `text` as it may reach a terminal: control characters (escape codes,
/// carriage returns, newlines) and the invisible characters that reorder or
/// hide text are written out as escapes (`\u{1b}`, `\n`), so text from a
/// plugin or a package can neither drive the terminal nor forge a line of
/// its own.
pub fn escaped(text: &str) -> Cow<'_, str> {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                c if hidden(c) => c.escape_default().to_string(),
                c => c.to_string(),
            })
            .collect(),
    )
}

/// `text` escaped line by line ([`escaped`]): its own line breaks stay.
pub fn escaped_lines(text: &str) -> String {
    text.split('\n').map(escaped).collect::<Vec<_>>().join("\n")
}

/// The filter of the host's own log lines: `RUST_LOG`, else [`DEFAULT_FILTER`].
pub(crate) fn host_filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER))
}

/// Host logs to standard error, for commands that print no run.
pub fn init_stderr_logs() {
    let _ = tracing_subscriber::fmt()
        .with_writer(|| crate::progress::Stderr)
        .with_ansi(colours())
        .with_env_filter(host_filter())
        .try_init();
}

/// Print each loaded plugin's load warnings before a run, as `check` shows
/// them: a line `warning: PLUGIN: WARNING`, or with `json` an object
/// `{"load_warning": {"plugin", "warning"}}`.
pub fn print_load_warnings(plugins: &[Arc<yohost::LoadedPlugin>], json: bool) {
    let mut out = std::io::stdout().lock();
    for plugin in plugins {
        for warning in &plugin.warnings {
            let _ = if json {
                let doc = serde_json::json!({"load_warning": {"plugin": plugin.name, "warning": warning}});
                writeln!(out, "{doc}")
            } else {
                writeln!(
                    out,
                    "warning: {}: {}",
                    escaped(&plugin.name),
                    escaped(warning)
                )
            };
        }
    }
}

/// Where a held line belongs: the tool call it is about, and whether it
/// came while the call ran or after (`call_tool`, `after_tool`) rather than
/// while it was judged.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Slot {
    call_id: String,
    after_start: bool,
}

impl Slot {
    /// The slot of a line from `hook` about the call `call_id`.
    fn of(hook: &str, call_id: &str) -> Option<Slot> {
        (!call_id.is_empty()).then(|| Slot {
            call_id: call_id.to_string(),
            after_start: matches!(hook, "call_tool" | "after_tool"),
        })
    }
}

/// A held line, with the call it belongs to (none: it is about no call).
type HeldLine = (Option<Slot>, String);

/// At most this many bytes of lines are held at once: 64 MiB. The host
/// already bounds each plugin's lines in a call and in a run; this bounds
/// what many plugins and calls hold together. Lines over it are dropped,
/// and one line says how many when the held lines are next printed.
pub const MAX_HELD_BYTES: usize = 64 * 1024 * 1024;

/// Plugin log lines and decisions waiting for the event they follow.
#[derive(Clone, Default)]
pub struct Held(Arc<Mutex<Waiting>>);

/// The held lines, their bytes, and how many were dropped since the last
/// print.
#[derive(Default)]
struct Waiting {
    lines: Vec<HeldLine>,
    bytes: usize,
    dropped: usize,
    json: bool,
}

impl Waiting {
    /// The line that says how many lines were dropped, if any were.
    fn dropped_line(&mut self) -> Option<String> {
        let dropped = std::mem::take(&mut self.dropped);
        (dropped > 0).then(|| {
            let why = format!(
                "{dropped} plugin log lines dropped: over {} MiB of lines were waiting to be printed",
                MAX_HELD_BYTES / (1024 * 1024)
            );
            if self.json {
                serde_json::json!({"dropped": {"lines": dropped, "reason": why}}).to_string()
            } else {
                format!("  [yohost] {why}")
            }
        })
    }
}

impl Held {
    fn new(json: bool) -> Self {
        Held(Arc::new(Mutex::new(Waiting {
            json,
            ..Waiting::default()
        })))
    }

    fn push(&self, slot: Option<Slot>, line: String) {
        let mut waiting = self.lock();
        if waiting.bytes + line.len() > MAX_HELD_BYTES {
            waiting.dropped += 1;
            return;
        }
        waiting.bytes += line.len();
        waiting.lines.push((slot, line));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Print, in the order they came, the held lines `event` releases: a
    /// tool call's start releases what was written while it was judged, its
    /// end everything about it; every event releases the lines about no
    /// call.
    pub(crate) fn release(&self, event: &AgentEvent) {
        let releases = |slot: &Option<Slot>| match (slot, event) {
            (None, _) => true,
            (Some(slot), AgentEvent::ToolExecutionStart { tool_call_id, .. }) => {
                slot.call_id == *tool_call_id && !slot.after_start
            }
            (Some(slot), AgentEvent::ToolExecutionEnd { tool_call_id, .. }) => {
                slot.call_id == *tool_call_id
            }
            (Some(_), _) => false,
        };
        let lines: Vec<String> = {
            let mut waiting = self.lock();
            let (out, keep): (Vec<HeldLine>, Vec<HeldLine>) = std::mem::take(&mut waiting.lines)
                .into_iter()
                .partition(|(slot, _)| releases(slot));
            waiting.bytes = keep.iter().map(|(_, line)| line.len()).sum();
            waiting.lines = keep;
            let dropped = waiting.dropped_line();
            out.into_iter()
                .map(|(_, line)| line)
                .chain(dropped)
                .collect()
        };
        print_lines(lines);
    }

    /// Print every held line, in the order they came.
    pub fn flush(&self) {
        let lines: Vec<String> = {
            let mut waiting = self.lock();
            let lines = std::mem::take(&mut waiting.lines);
            waiting.bytes = 0;
            let dropped = waiting.dropped_line();
            lines
                .into_iter()
                .map(|(_, line)| line)
                .chain(dropped)
                .collect()
        };
        print_lines(lines);
    }
}

fn print_lines(lines: Vec<String>) {
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
}

/// Host logs to standard error; plugin log lines and decisions to standard
/// output, held in the returned [`Held`] until the event they follow.
pub fn init_run_logs(json: bool) -> Held {
    let host_logs = tracing_subscriber::fmt::layer()
        .with_writer(|| crate::progress::Stderr)
        .with_ansi(colours())
        .with_filter(host_filter())
        .with_filter(tracing_subscriber::filter::filter_fn(|m| {
            m.target() != PLUGIN_LOG_TARGET && m.target() != DECISION_LOG_TARGET
        }));
    let held = Held::new(json);
    let _ = tracing_subscriber::registry()
        .with(host_logs)
        .with(PluginLines {
            json,
            held: held.clone(),
        })
        .try_init();
    held
}

/// Holds each plugin log line and decision for standard output.
struct PluginLines {
    json: bool,
    held: Held,
}

/// The fields of one event, as text.
#[derive(Default)]
struct Fields(BTreeMap<&'static str, String>);

impl Fields {
    fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }
}

/// A plugin log line, as printed. A line with no run id was written outside
/// any run: it says the `phase` it names (`server` for what a plugin's
/// long-lived process writes on its own), else `load`, where a run's line
/// names its run.
fn log_line(f: &Fields, json: bool) -> String {
    let run_id = f.get("run_id");
    let phase = match f.get("phase") {
        "" => "load",
        phase => phase,
    };
    if json {
        let mut line = serde_json::json!({
            "plugin": f.get("plugin"), "level": f.get("level"), "message": f.get("message"),
        });
        match run_id {
            "" => line["phase"] = phase.into(),
            run_id => line["run_id"] = run_id.into(),
        }
        serde_json::json!({ "log": line }).to_string()
    } else {
        let when = match run_id {
            "" => escaped(phase).into_owned(),
            run_id => format!("run {}", short(run_id)),
        };
        format!(
            "  [{} {} {when}] {}",
            escaped(f.get("plugin")),
            f.get("level"),
            escaped(f.get("message"))
        )
    }
}

/// A plugin's decision about a tool call, as printed.
fn decision_line(f: &Fields, json: bool) -> String {
    let (plugin, tool, decision) = (f.get("plugin"), f.get("tool"), f.get("decision"));
    let (plugin, tool) = if json {
        (Cow::Borrowed(plugin), Cow::Borrowed(tool))
    } else {
        (escaped(plugin), escaped(tool))
    };
    if json {
        let mut doc = serde_json::json!({
            "run_id": f.get("run_id"), "plugin": plugin, "hook": f.get("hook"),
            "tool": tool, "call_id": f.get("call_id"), "decision": decision,
        });
        if let Some(reason) = f.0.get("reason") {
            doc["reason"] = reason.as_str().into();
        }
        if let Some(args) = f.0.get("args") {
            doc["args"] = serde_json::from_str(args).unwrap_or_else(|_| args.as_str().into());
        }
        serde_json::json!({ "decision": doc }).to_string()
    } else {
        match decision {
            "deny" => format!("  {plugin} denied {tool}: {}", clip(f.get("reason"))),
            "rewrite" => format!("  {plugin} rewrote {tool} to {}", clip(f.get("args"))),
            "fail" => format!(
                "  {plugin} failed in {}, so the output of {tool} was withheld: {}",
                f.get("hook"),
                clip(f.get("reason"))
            ),
            _ => format!("  {plugin} edited the output of {tool}"),
        }
    }
}

/// The `hook` and `call_id` of a hook span, kept with the span.
struct HookCall {
    hook: String,
    call_id: String,
}

impl<S> Layer<S> for PluginLines
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != HOOK_SPAN {
            return;
        }
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(HookCall {
                hook: fields.get("hook").to_string(),
                call_id: fields.get("call_id").to_string(),
            });
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let target = event.metadata().target();
        if target == DECISION_LOG_TARGET {
            let mut fields = Fields::default();
            event.record(&mut fields);
            let slot = Slot::of(fields.get("hook"), fields.get("call_id"));
            self.held.push(slot, decision_line(&fields, self.json));
        } else if target == PLUGIN_LOG_TARGET {
            let mut fields = Fields::default();
            event.record(&mut fields);
            let slot = ctx.event_scope(event).and_then(|scope| {
                scope.into_iter().find_map(|span| {
                    let extensions = span.extensions();
                    let call = extensions.get::<HookCall>()?;
                    Slot::of(&call.hook, &call.call_id)
                })
            });
            let line = log_line(&fields, self.json);
            if fields.get("run_id").is_empty() {
                // Written while the plugin loaded: before any run, so now
                // (above the spinner of a long load).
                crate::progress::suspend(|| writeln!(std::io::stdout().lock(), "{line}")).ok();
            } else {
                self.held.push(slot, line);
            }
        }
    }
}

/// The first 8 characters of a run id: enough to tell runs apart.
fn short(run_id: &str) -> &str {
    run_id.get(..8).unwrap_or(run_id)
}

/// `text` on one line, escaped ([`escaped`]) and cut at 300 characters.
pub(crate) fn clip(text: &str) -> String {
    const MAX: usize = 300;
    let one_line = escaped(&text.replace('\n', " ⏎ ")).into_owned();
    match one_line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_outside_any_run_says_its_phase_or_load() {
        let fields = |pairs: &[(&'static str, &str)]| {
            Fields(pairs.iter().map(|(k, v)| (*k, v.to_string())).collect())
        };
        let server = fields(&[
            ("plugin", "time"),
            ("level", "DEBUG"),
            ("phase", "server"),
            ("message", "stderr: hi"),
        ]);
        assert_eq!(log_line(&server, false), "  [time DEBUG server] stderr: hi");
        let json: serde_json::Value = serde_json::from_str(&log_line(&server, true)).unwrap();
        assert_eq!(json["log"]["phase"], "server");
        let loading = fields(&[("plugin", "p"), ("level", "INFO"), ("message", "ready")]);
        assert_eq!(log_line(&loading, false), "  [p INFO load] ready");
        let run = fields(&[
            ("plugin", "p"),
            ("level", "INFO"),
            ("phase", "server"),
            ("run_id", "0123456789abcdef"),
            ("message", "m"),
        ]);
        assert!(
            log_line(&run, false).contains("run 01234567"),
            "{}",
            log_line(&run, false)
        );
    }

    #[test]
    fn held_lines_are_bounded_and_the_drop_counted() {
        let held = Held::new(false);
        let line = "x".repeat(MAX_HELD_BYTES / 8);
        for _ in 0..20 {
            held.push(None, line.clone());
        }
        let mut waiting = held.lock();
        assert_eq!(waiting.lines.len(), 8);
        assert!(waiting.bytes <= MAX_HELD_BYTES);
        assert_eq!(
            waiting.dropped_line().as_deref(),
            Some("  [yohost] 12 plugin log lines dropped: over 64 MiB of lines were waiting to be printed")
        );
        assert_eq!(waiting.dropped_line(), None);
    }
}
