//! The hook contract's combination and fail-closed rules, through a real
//! `yoagent::Agent`, with in-process plugins:
//! - `before_tool`: the first deny ends the chain; a rewrite feeds the next;
//! - `after_tool`: chained; a failing filter withholds the output, naming it;
//! - `before_model`: notes are joined into the request; the first stop ends the run;
//! - `on_input`: a reject ends the run; a failing check rejects;
//! - `on_stop`: continue messages are sent; a required plugin's failure fails the run;
//! - `on_event` sees every event in order; every plugin's `finish` runs;
//! - tools: the agent's own tools win a clash, then the plugin that runs first;
//!   images cross both ways and a bad image is a failure;
//! - `extensions()` gives one extension per plugin, named after it;
//! - as a tree extension, sub-agent runs are gated too.

mod support;

use serde_json::json;
use std::sync::{Arc, Mutex};
use support::*;
use yohost::contract::*;
use yohost::{CallError, Manifest, NativePlugin, PluginHost};

fn manifest(priority: i64, required: bool) -> Manifest {
    let mode = if required { "required" } else { "advisory" };
    Manifest::parse(&format!("priority = {priority}\nmode = \"{mode}\"")).unwrap()
}

fn plugin(
    name: &str,
    priority: i64,
    hooks: &[Hook],
    handler: impl Fn(HookCall) -> Result<HookReply, CallError> + Send + Sync + 'static,
) -> yohost::LoadedPlugin {
    NativePlugin::loaded(name, hooks, manifest(priority, false), handler)
}

fn host(plugins: Vec<yohost::LoadedPlugin>) -> PluginHost {
    PluginHost::from_plugins(plugins)
}

const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test]
async fn the_first_deny_ends_the_before_tool_chain() {
    let later_called = Arc::new(Mutex::new(false));
    let flag = later_called.clone();
    let host = host(vec![
        plugin("denier", 1, &[Hook::BeforeTool], |_| {
            Ok(HookReply::BeforeTool(BeforeToolReply::Deny(
                "denier says no".into(),
            )))
        }),
        plugin("later", 2, &[Hook::BeforeTool], move |_| {
            *flag.lock().unwrap() = true;
            Ok(HookReply::BeforeTool(BeforeToolReply::Allow))
        }),
    ]);
    let (agent, _) = scripted(vec![call("echo", json!({"text": "x"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(
        results[0].2 && results[0].1.contains("denier says no"),
        "{results:?}"
    );
    assert!(
        !*later_called.lock().unwrap(),
        "no plugin runs after a deny"
    );
}

#[tokio::test]
async fn a_rewrite_feeds_the_next_policy_which_sees_what_the_user_asked() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let host = host(vec![
        plugin("upper", 1, &[Hook::BeforeTool], |call| match call {
            HookCall::BeforeTool(a) => Ok(HookReply::BeforeTool(BeforeToolReply::Rewrite(
                json!({"text": a.args["text"].as_str().unwrap().to_uppercase()}),
            ))),
            _ => unreachable!(),
        }),
        plugin("watcher", 2, &[Hook::BeforeTool], move |call| {
            if let HookCall::BeforeTool(a) = call {
                log.lock().unwrap().push((
                    a.args.clone(),
                    a.user_request.clone(),
                    a.latest_user_text.clone(),
                ));
            }
            Ok(HookReply::BeforeTool(BeforeToolReply::Allow))
        }),
    ]);
    let (agent, _) = scripted(vec![call("echo", json!({"text": "quiet"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "say it loud").await;
    assert_eq!(tool_results(&events)[0].1, "QUIET");
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].0, json!({"text": "QUIET"}));
    assert_eq!(seen[0].1.as_deref(), Some("say it loud"));
    assert_eq!(seen[0].2.as_deref(), Some("say it loud"));
}

#[tokio::test]
async fn after_tool_filters_chain_and_a_failing_filter_withholds_the_output() {
    let redact = |from: &'static str, to: &'static str| {
        move |call: HookCall| match call {
            HookCall::AfterTool(a) => {
                let text = match &a.output.content[0] {
                    ContentBlock::Text { text } => text.replace(from, to),
                    _ => String::new(),
                };
                Ok(HookReply::AfterTool(AfterToolReply {
                    content: Some(vec![ContentBlock::text(text)]),
                    ..Default::default()
                }))
            }
            _ => unreachable!(),
        }
    };
    let chained = host(vec![
        plugin("first", 1, &[Hook::AfterTool], redact("secret", "[one]")),
        plugin("second", 2, &[Hook::AfterTool], redact("[one]", "[two]")),
    ]);
    let (agent, _) = scripted(vec![
        call("echo", json!({"text": "a secret"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(chained.extension());
    assert_eq!(tool_results(&run(&mut agent, "go").await)[0].1, "a [two]");

    let failing = host(vec![plugin("leaky", 1, &[Hook::AfterTool], |_| {
        Err(CallError::Crashed("filter exploded".into()))
    })]);
    let (agent, requests) = scripted(vec![
        call("echo", json!({"text": "a secret"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(failing.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(results[0].2, "{results:?}");
    assert!(
        !results[0].1.contains("secret"),
        "the output is withheld: {results:?}"
    );
    assert!(results[0].1.contains("plugin 'leaky'"), "{results:?}");
    let requests = requests.lock().unwrap();
    let tool_result_texts: Vec<String> = requests[1]
        .iter()
        .filter_map(|m| match m {
            yoagent::Message::ToolResult { content, .. } => Some(texts(content)),
            _ => None,
        })
        .collect();
    assert_eq!(tool_result_texts.len(), 1);
    assert!(
        !tool_result_texts[0].contains("secret"),
        "the model never sees it: {tool_result_texts:?}"
    );
}

#[tokio::test]
async fn before_model_notes_are_joined_and_the_first_stop_ends_the_run() {
    let note =
        |n: &'static str| move |_| Ok(HookReply::BeforeModel(BeforeModelReply::Note(n.into())));
    let notes = host(vec![
        plugin("a", 1, &[Hook::BeforeModel], note("note one")),
        plugin("b", 2, &[Hook::BeforeModel], note("note two")),
    ]);
    let (agent, requests) = scripted(vec![text("done")]);
    let mut agent = agent.with_extension(notes.extension());
    run(&mut agent, "hello").await;
    let sent = last_user_text(&requests.lock().unwrap()[0]);
    assert!(sent.contains("note one\nnote two"), "{sent}");

    let stopper = host(vec![plugin("stopper", 1, &[Hook::BeforeModel], |_| {
        Ok(HookReply::BeforeModel(BeforeModelReply::Stop(
            "budget spent".into(),
        )))
    })]);
    let (agent, requests) = scripted(vec![text("never")]);
    let mut agent = agent.with_extension(stopper.extension());
    let events = run(&mut agent, "hello").await;
    assert!(requests.lock().unwrap().is_empty());
    assert!(format!("{:?}", end_messages(&events)).contains("budget spent"));
}

#[tokio::test]
async fn on_input_rejects_and_a_failing_check_rejects_too() {
    let rejecter = host(vec![plugin(
        "gate",
        1,
        &[Hook::OnInput],
        |call| match call {
            HookCall::OnInput(a) if a.text.contains("password") => Ok(HookReply::OnInput(
                OnInputReply::Reject("no secrets in prompts".into()),
            )),
            _ => Ok(HookReply::OnInput(OnInputReply::Pass)),
        },
    )]);
    let (agent, requests) = scripted(vec![text("ok")]);
    let mut agent = agent.with_extension(rejecter.extension());
    let events = run(&mut agent, "my password is hunter2").await;
    assert_eq!(
        input_rejection(&events).as_deref(),
        Some("no secrets in prompts")
    );
    assert!(requests.lock().unwrap().is_empty());

    let broken = host(vec![plugin("broken-gate", 1, &[Hook::OnInput], |_| {
        Err(CallError::Guest("cannot decide".into()))
    })]);
    let (agent, _) = scripted(vec![text("ok")]);
    let mut agent = agent.with_extension(broken.extension());
    let events = run(&mut agent, "hello").await;
    let reason = input_rejection(&events).expect("the input is rejected");
    assert!(reason.contains("plugin 'broken-gate'"), "{reason}");
}

#[tokio::test]
async fn on_stop_continues_the_run_and_a_required_failure_fails_it() {
    let verifier = host(vec![plugin(
        "verifier",
        1,
        &[Hook::OnStop],
        |call| match call {
            HookCall::OnStop(a) if !a.answer.contains("tests pass") => Ok(HookReply::OnStop(
                OnStopReply::Continue("run the tests first".into()),
            )),
            _ => Ok(HookReply::OnStop(OnStopReply::Accept)),
        },
    )]);
    let (agent, requests) = scripted(vec![text("done"), text("done, tests pass")]);
    let mut agent = agent.with_extension(verifier.extension());
    let events = run(&mut agent, "fix it").await;
    assert_eq!(requests.lock().unwrap().len(), 2);
    assert!(last_user_text(&requests.lock().unwrap()[1]).contains("run the tests first"));
    assert_eq!(final_assistant(&events).0, yoagent::StopReason::Stop);

    let required = PluginHost::from_plugins(vec![NativePlugin::loaded(
        "strict",
        &[Hook::OnStop],
        manifest(1, true),
        |_| Err(CallError::Timeout(std::time::Duration::from_secs(10))),
    )]);
    let (agent, _) = scripted(vec![text("done")]);
    let mut agent = agent.with_extension(required.extension());
    let events = run(&mut agent, "fix it").await;
    let (stop, error) = final_assistant(&events);
    assert_eq!(stop, yoagent::StopReason::Error);
    assert!(error.unwrap().contains("plugin 'strict' timed out"));
}

#[tokio::test]
async fn every_plugin_sees_every_event_in_order_and_every_finish_runs() {
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let make = |name: &'static str, seen: Arc<Mutex<Vec<(String, String)>>>| {
        plugin(name, 1, &[Hook::OnEvent, Hook::Finish], move |call| {
            let entry = match &call {
                HookCall::OnEvent(a) => a.event["type"].as_str().unwrap_or("?").to_string(),
                HookCall::Finish(a) => format!("finish:{}", a.end),
                _ => unreachable!(),
            };
            seen.lock().unwrap().push((name.to_string(), entry));
            Ok(HookReply::Ignored)
        })
    };
    let host = host(vec![make("a", seen.clone()), make("b", seen.clone())]);
    let (agent, _) = scripted(vec![call("echo", json!({"text": "x"})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    let seen = seen.lock().unwrap();
    for name in ["a", "b"] {
        let mine: Vec<&String> = seen
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, e)| e)
            .collect();
        assert_eq!(
            mine.last().map(|s| s.as_str()),
            Some("finish:completed"),
            "{mine:?}"
        );
        let observed: Vec<&str> = mine
            .iter()
            .map(|s| s.as_str())
            .filter(|s| !s.starts_with("finish"))
            .collect();
        let emitted: Vec<String> = events
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .filter(|t| observed.contains(&t.as_str()))
            .collect();
        assert!(observed.contains(&"toolExecutionEnd"), "{observed:?}");
        assert_eq!(
            observed,
            emitted.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "in order"
        );
    }
}

fn tool_plugin(
    name: &'static str,
    priority: i64,
    tool: &'static str,
    reply: &'static str,
) -> yohost::LoadedPlugin {
    plugin(
        name,
        priority,
        &[Hook::Tools, Hook::CallTool],
        move |call| match call {
            HookCall::Tools(_) => Ok(HookReply::Tools(vec![ToolSpec {
                name: tool.into(),
                description: "a tool".into(),
                parameters: json!({"type": "object"}),
                label: None,
            }])),
            HookCall::CallTool(_) if reply == "image" => Ok(HookReply::CallTool(ToolReply {
                content: vec![
                    ContentBlock::text("a pixel"),
                    ContentBlock::Image {
                        data: PNG_1X1.into(),
                        mime_type: "image/png".into(),
                    },
                ],
                details: json!({"w": 1}),
                is_error: false,
            })),
            HookCall::CallTool(_) if reply == "svg" => Ok(HookReply::CallTool(ToolReply {
                content: vec![ContentBlock::Image {
                    data: "PHN2Zz4=".into(),
                    mime_type: "image/svg+xml".into(),
                }],
                details: json!(null),
                is_error: false,
            })),
            HookCall::CallTool(_) => Ok(HookReply::CallTool(ToolReply::text(reply))),
            _ => unreachable!(),
        },
    )
}

#[tokio::test]
async fn tool_name_clashes_go_to_the_agent_then_to_the_plugin_that_runs_first() {
    let host = host(vec![
        tool_plugin("late", 5, "shout", "late shout"),
        tool_plugin("early", 1, "shout", "early shout"),
        tool_plugin("echoer", 1, "echo", "plugin echo"),
    ]);
    let (agent, _) = scripted(vec![
        call("shout", json!({})),
        call("echo", json!({"text": "own echo"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results[0].1, "early shout");
    assert_eq!(results[1].1, "own echo");
}

#[tokio::test]
async fn images_cross_both_ways_and_a_disallowed_image_is_a_failure() {
    let seen_by_filter: Arc<Mutex<Vec<ContentBlock>>> = Arc::default();
    let seen = seen_by_filter.clone();
    let host = host(vec![
        tool_plugin("camera", 1, "snap", "image"),
        tool_plugin("svg", 1, "draw", "svg"),
        plugin("filter", 2, &[Hook::AfterTool], move |call| {
            if let HookCall::AfterTool(a) = call {
                seen.lock().unwrap().extend(a.output.content);
            }
            Ok(HookReply::AfterTool(AfterToolReply::default()))
        }),
    ]);
    let (agent, _) = scripted(vec![
        call("snap", json!({})),
        call("draw", json!({})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let events = run(&mut agent, "go").await;
    let snap = events.iter().find_map(|e| match e {
        yoagent::AgentEvent::ToolExecutionEnd {
            tool_name, result, ..
        } if tool_name == "snap" => Some(result.clone()),
        _ => None,
    });
    let snap = snap.unwrap();
    assert!(
        matches!(&snap.content[1], yoagent::Content::Image { mime_type, .. } if mime_type == "image/png")
    );
    assert_eq!(snap.details, json!({"w": 1}));
    assert!(seen_by_filter
        .lock()
        .unwrap()
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { .. })));
    let results = tool_results(&events);
    let draw = results.iter().find(|r| r.0 == "draw").unwrap();
    assert!(draw.2 && draw.1.contains("image/svg+xml"), "{draw:?}");
}

#[tokio::test]
async fn extensions_gives_one_extension_per_plugin_named_after_it() {
    let host = host(vec![
        tool_plugin("tools-a", 1, "alpha", "from a"),
        plugin("policy-b", 2, &[Hook::BeforeTool], |_| {
            Ok(HookReply::BeforeTool(BeforeToolReply::Deny(
                "b denies".into(),
            )))
        }),
    ]);
    let extensions = host.extensions();
    let names: Vec<&str> = extensions.iter().map(yoagent::Extension::name).collect();
    assert_eq!(names, ["tools-a", "policy-b"]);
    let (mut agent, _) = scripted(vec![call("alpha", json!({})), text("done")]);
    for extension in extensions {
        agent = agent.with_extension(extension);
    }
    let results = tool_results(&run(&mut agent, "go").await);
    assert!(
        results[0].2 && results[0].1.contains("b denies"),
        "{results:?}"
    );
}

#[tokio::test]
async fn as_a_tree_extension_sub_agent_runs_are_gated() {
    let depths: Arc<Mutex<Vec<usize>>> = Arc::default();
    let log = depths.clone();
    let host = host(vec![plugin(
        "tree-guard",
        1,
        &[Hook::BeforeTool],
        move |call| match call {
            HookCall::BeforeTool(a) => {
                log.lock().unwrap().push(a.run.depth);
                if a.args["text"] == "forbidden" {
                    return Ok(HookReply::BeforeTool(BeforeToolReply::Deny(
                        "not even in a sub-agent".into(),
                    )));
                }
                Ok(HookReply::BeforeTool(BeforeToolReply::Allow))
            }
            _ => unreachable!(),
        },
    )]);
    let child = yoagent::SubAgentTool::from_provider(
        "helper",
        Arc::new(yoagent::provider::MockProvider::new(vec![
            call("echo", json!({"text": "forbidden"})),
            text("child done"),
        ])),
        yoagent::provider::ModelConfig::mock(),
    )
    .with_tools(vec![Arc::new(Echo)]);
    let (agent, _) = scripted(vec![
        call("helper", json!({"task": "echo it"})),
        text("parent done"),
    ]);
    let mut agent = agent
        .with_sub_agent(child)
        .with_tree_extension(host.extension());
    let events = run(&mut agent, "delegate").await;
    assert!(
        depths.lock().unwrap().contains(&1),
        "the child's call was judged: {:?}",
        depths.lock().unwrap()
    );
    assert!(tool_results(&events).iter().any(|r| r.0 == "helper"));
}
