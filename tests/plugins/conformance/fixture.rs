//! The conformance fixture in Rust. The same source is built as a dylib
//! (`conformance_fixture` in host/Cargo.toml) and as a Wasm component
//! (`conformance_fixture` in tests/plugins/wasm/Cargo.toml). What each hook
//! does is the protocol in suite/tests/conformance/main.rs.
//!
//! Native code cannot be interrupted: built as a dylib, `spin` stops by
//! itself after two seconds and `hang` sleeps for an hour (its thread is
//! abandoned). In Wasm both loop until the host stops them.

use yohost_sdk::*;

#[derive(Default)]
struct Fixture;

/// A 1×1 transparent PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// Put in every error the plugin raises itself: the model must never see it.
const SECRET: &str = "fx-secret-7f3a";

fn rewrite(cmd: impl Into<String>) -> Result<BeforeToolReply, String> {
    Ok(BeforeToolReply::Rewrite(json!({ "cmd": cmd.into() })))
}

fn tool(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        label: None,
        prepares_arguments: false,
    }
}

/// Loops until the host stops it (Wasm), or for two seconds (native).
fn busy() {
    #[cfg(not(target_family = "wasm"))]
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
        #[cfg(not(target_family = "wasm"))]
        if n.is_multiple_of(1024) && std::time::Instant::now() > until {
            return;
        }
    }
}

#[plugin]
impl Plugin for Fixture {
    const NAME: &'static str = "conformance-fixture";

    fn tools(&self, _run: &RunInfo) -> Result<Vec<ToolSpec>, String> {
        Ok(vec![
            tool("fx_echo", "Echo the text"),
            tool("fx_image", "A text and a 1x1 PNG"),
            tool("fx_bad_image", "An image of a type the host refuses"),
            tool("fx_end", "End the run with the text"),
        ])
    }

    fn call_tool(&self, call: CallToolArgs) -> Result<ToolReply, String> {
        let image = |mime_type: &str| ContentBlock::Image {
            data: PIXEL_PNG.into(),
            mime_type: mime_type.into(),
        };
        match call.tool.as_str() {
            "fx_echo" => Ok(ToolReply::text(call.args["text"].as_str().unwrap_or(""))),
            "fx_image" => Ok(ToolReply {
                content: vec![ContentBlock::text("fx image"), image("image/png")],
                ..ToolReply::default()
            }),
            "fx_bad_image" => Ok(ToolReply {
                content: vec![image("image/svg+xml")],
                ..ToolReply::default()
            }),
            // A Wasm component's result has no `terminate`: it is dropped.
            "fx_end" => Ok(ToolReply {
                terminate: true,
                ..ToolReply::text(call.args["text"].as_str().unwrap_or(""))
            }),
            other => Err(format!("no tool named {other}")),
        }
    }

    fn before_tool(&self, call: BeforeToolArgs) -> Result<BeforeToolReply, String> {
        if call.tool != "run" {
            return Ok(BeforeToolReply::Allow);
        }
        let cmd = call.args["cmd"].as_str().unwrap_or("").to_string();
        info(&format!("before_tool {cmd}"));
        if cmd.starts_with("deny") || cmd.contains("rm -rf") {
            return Ok(BeforeToolReply::Deny(format!("fx denied: {cmd}")));
        }
        if let Some(to) = cmd.strip_prefix("rewrite:") {
            return rewrite(to);
        }
        if cmd == "whoami" || cmd.starts_with("whoami ") {
            return rewrite(format!(
                "whoami:{}{}",
                call.run.run_id,
                &cmd["whoami".len()..]
            ));
        }
        match cmd.as_str() {
            "throw" => panic!("{SECRET}: thrown on purpose"),
            "error" => Err(format!("{SECRET}: failed on purpose")),
            "hang" => {
                #[cfg(not(target_family = "wasm"))]
                std::thread::sleep(std::time::Duration::from_secs(3600));
                busy();
                Ok(BeforeToolReply::Allow)
            }
            "spin" => {
                busy();
                Ok(BeforeToolReply::Allow)
            }
            "shape" => Ok(BeforeToolReply::Rewrite(json!(["not", "an", "object"]))),
            "oversize" => Ok(BeforeToolReply::Deny("x".repeat(17 * 1024 * 1024))),
            "flood" => {
                for i in 0..100_000 {
                    info(&format!("flood {i}"));
                }
                Ok(BeforeToolReply::Allow)
            }
            "deluge" => {
                let pad = "x".repeat(8000);
                for i in 0..8192 {
                    info(&format!("deluge {i} {pad}"));
                }
                Ok(BeforeToolReply::Allow)
            }
            "memory" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1024 * 1024]);
                    std::hint::black_box(&hoard);
                }
            }
            "file" => match std::fs::read_to_string("/etc/passwd") {
                Ok(text) => rewrite(format!("leaked:{}", text.lines().next().unwrap_or(""))),
                Err(e) => Err(format!("{SECRET}: cannot read /etc/passwd: {e}")),
            },
            _ => Ok(BeforeToolReply::Allow),
        }
    }

    fn after_tool(&self, call: AfterToolArgs) -> Result<AfterToolReply, String> {
        let secret = call
            .output
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Text { text } if text.contains("redact-me")));
        if !secret {
            return Ok(AfterToolReply::default());
        }
        Ok(AfterToolReply {
            content: Some(vec![ContentBlock::text("[redacted by fx]")]),
            ..AfterToolReply::default()
        })
    }

    fn before_model(&self, _turn: BeforeModelArgs) -> Result<BeforeModelReply, String> {
        Ok(BeforeModelReply::Note("fx note".into()))
    }

    fn on_input(&self, input: OnInputArgs) -> Result<OnInputReply, String> {
        if input.text.contains("forbidden-input") {
            return Ok(OnInputReply::Reject("fx rejects forbidden-input".into()));
        }
        Ok(OnInputReply::Pass)
    }

    fn on_stop(&self, stop: OnStopArgs) -> Result<OnStopReply, String> {
        if stop.answer.contains("lazy") && stop.continues == 0 {
            return Ok(OnStopReply::Continue("fx: try again".into()));
        }
        Ok(OnStopReply::Accept)
    }

    fn on_event(&self, event: OnEventArgs) -> Result<(), String> {
        info(&format!(
            "event {}",
            event.event["type"].as_str().unwrap_or("?")
        ));
        Ok(())
    }

    fn finish(&self, finish: FinishArgs) -> Result<(), String> {
        info(&format!("finish {}", finish.end));
        Ok(())
    }
}

export_plugin!(Fixture);
