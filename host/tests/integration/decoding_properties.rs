//! Property tests of everything that decodes bytes a plugin or a user
//! controls (bounded: the file runs in seconds):
//! - replies from JSON (`HookCall::parse_reply`, and through it every
//!   reply's `from_json`), for every hook: arbitrary JSON never panics; a
//!   reply that parses re-encodes (`HookReply::to_json`) to a value that
//!   parses to the same reply; every typed reply the contract allows
//!   survives `to_json` and back, and a deny without a reason is refused by
//!   both decoders; JSON text and MessagePack bytes of one value decode alike
//!   (floats exactly);
//! - MessagePack payloads from dylibs (`codec::decode_msgpack_reply`, then
//!   the same strict reader):
//!   arbitrary bytes never panic, and a length prefix of up to 2^32 never
//!   makes the decoder allocate more than a small bound;
//! - images (`limits::check_image`): arbitrary data never panics;
//! - manifests (`Manifest::parse`): arbitrary strings and TOML-like text
//!   never panic;
//! - nesting 10,000 deep (JSON and MessagePack replies, manifests) is an
//!   error, not a stack overflow.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use yohost::adapter::codec::{decode_json_reply, decode_msgpack_reply};
use yohost::contract::{
    AfterToolArgs, AfterToolReply, BeforeModelArgs, BeforeModelReply, BeforeToolArgs,
    BeforeToolReply, CallToolArgs, CommandArgs, ContentBlock, FinishArgs, Hook, HookCall,
    HookReply, OnEventArgs, OnInputArgs, OnInputReply, OnStopArgs, OnStopReply, RunInfo,
    ToolOutputData, ToolReply, ToolSpec,
};
use yohost::manifest::Manifest;
use yohost::CallError;

/// A JSON reply as an engine decodes it and the host then reads it.
fn read_json(call: &HookCall, text: &str) -> Result<HookReply, CallError> {
    Ok(call.parse_reply(decode_json_reply(call.hook(), text)?)?)
}

/// A MessagePack reply as the dylib engine decodes it and the host then
/// reads it.
fn read_msgpack(call: &HookCall, bytes: &[u8]) -> Result<HookReply, CallError> {
    Ok(call.parse_reply(decode_msgpack_reply(call.hook(), bytes)?)?)
}

/// Records the largest single allocation made on the current thread, so a
/// decoder that trusts a length prefix shows up as one huge request.
struct LargestAllocation;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: LargestAllocation = LargestAllocation;

/// The largest single allocation `f` makes on this thread.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|largest| largest.set(0));
    let result = f();
    (result, LARGEST.with(Cell::get))
}

/// No decoder may ask for more than this at once for a small input.
const ALLOCATION_BOUND: usize = 1024 * 1024;

/// One call of every hook, as the host makes them.
fn calls() -> Vec<HookCall> {
    let run = RunInfo {
        run_id: "r1".into(),
        ..RunInfo::default()
    };
    let calls = vec![
        HookCall::Tools(run.clone()),
        HookCall::CallTool(CallToolArgs {
            run: run.clone(),
            tool: "echo".into(),
            call_id: "c1".into(),
            args: json!({"text": "hi"}),
        }),
        HookCall::BeforeTool(BeforeToolArgs {
            run: run.clone(),
            tool: "echo".into(),
            call_id: "c1".into(),
            args: json!({"text": "hi"}),
            user_request: Some("go".into()),
            latest_user_text: None,
        }),
        HookCall::AfterTool(AfterToolArgs {
            run: run.clone(),
            tool: "echo".into(),
            call_id: "c1".into(),
            args: json!({}),
            output: ToolOutputData {
                content: vec![ContentBlock::text("hi")],
                details: Value::Null,
                is_error: false,
            },
        }),
        HookCall::BeforeModel(BeforeModelArgs {
            run: run.clone(),
            model: "mock".into(),
            tools: vec!["echo".into()],
            user_request: None,
        }),
        HookCall::OnInput(OnInputArgs {
            run: run.clone(),
            text: "hi".into(),
        }),
        HookCall::OnStop(OnStopArgs {
            run: run.clone(),
            answer: "done".into(),
            continues: 0,
        }),
        HookCall::OnEvent(OnEventArgs {
            run: run.clone(),
            event: json!({"type": "agent_start"}),
        }),
        HookCall::Finish(FinishArgs {
            run: run.clone(),
            end: "completed".into(),
            reason: None,
            error: None,
        }),
        HookCall::Command(CommandArgs {
            run,
            name: "plan".into(),
            args: "now".into(),
        }),
    ];
    assert_eq!(
        calls.iter().map(HookCall::hook).collect::<Vec<_>>(),
        Hook::ALL,
        "one call per hook"
    );
    calls
}

/// The call of `hook` among [`calls`].
fn call_of(hook: Hook) -> HookCall {
    calls().into_iter().find(|c| c.hook() == hook).unwrap()
}

/// Words of the contract, so generated objects often have a reply's shape.
const FIELDS: &[&str] = &[
    "deny",
    "args",
    "note",
    "stop",
    "reject",
    "continue",
    "fail",
    "content",
    "details",
    "is_error",
    "name",
    "description",
    "parameters",
    "label",
    "type",
    "text",
    "data",
    "mimeType",
];

/// Strings a reply may hold, contract words among them.
fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(FIELDS).prop_map(String::from),
        prop::sample::select(&["image", "image/png", "AA==", "", "\u{0}", "é🦀"][..])
            .prop_map(String::from),
        any::<String>(),
    ]
}

/// A content block, or something close to one.
fn content_block() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(&["text", "image", "video"][..]),
        prop::option::of(string()),
        prop::option::of(string()),
        prop::option::of(string()),
    )
        .prop_map(|(kind, text, data, mime)| {
            let mut block = Map::new();
            block.insert("type".into(), kind.into());
            for (field, value) in [("text", text), ("data", data), ("mimeType", mime)] {
                if let Some(value) = value {
                    block.insert(field.into(), value.into());
                }
            }
            Value::Object(block)
        })
}

/// Arbitrary JSON, leaning towards the contract's shapes.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        string().prop_map(Value::String),
        content_block(),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        let key = prop_oneof![
            4 => prop::sample::select(FIELDS).prop_map(String::from),
            1 => any::<String>(),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key, inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Arbitrary JSON, or a value with a reply's outline: one contract field,
/// or a tool output object.
fn reply_like() -> impl Strategy<Value = Value> {
    let field = || prop::sample::select(FIELDS);
    let output = (
        prop::collection::vec(content_block(), 0..3),
        prop::option::of(json_value()),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(content, details, is_error)| {
            let mut output = Map::new();
            output.insert("content".into(), Value::Array(content));
            if let Some(details) = details {
                output.insert("details".into(), details);
            }
            if let Some(is_error) = is_error {
                output.insert("is_error".into(), is_error.into());
            }
            Value::Object(output)
        });
    prop_oneof![
        json_value(),
        (field(), string()).prop_map(|(field, value)| json!({ field: value })),
        (field(), json_value()).prop_map(|(field, value)| json!({ field: value })),
        output,
    ]
}

fn content() -> impl Strategy<Value = Vec<ContentBlock>> {
    let block = prop_oneof![
        string().prop_map(|text| ContentBlock::Text { text }),
        (string(), string()).prop_map(|(data, mime_type)| ContentBlock::Image { data, mime_type }),
    ];
    prop::collection::vec(block, 0..3)
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(string(), json_value(), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Every reply a plugin can give, typed, for the hook it answers (a deny
/// gives a reason: a blank one is not a reply of the contract).
fn typed_reply() -> impl Strategy<Value = (Hook, HookReply)> {
    let tool = (string(), string(), json_value(), prop::option::of(string())).prop_map(
        |(name, description, parameters, label)| ToolSpec {
            name,
            description,
            parameters,
            label,
            prepares_arguments: false,
        },
    );
    prop_oneof![
        prop::collection::vec(tool, 0..3).prop_map(|t| (Hook::Tools, HookReply::Tools(t))),
        (content(), json_value(), any::<bool>(), any::<bool>()).prop_map(
            |(content, details, is_error, terminate)| (
                Hook::CallTool,
                HookReply::CallTool(ToolReply {
                    content,
                    details,
                    is_error,
                    terminate,
                })
            )
        ),
        prop_oneof![
            Just(BeforeToolReply::Allow),
            string()
                .prop_filter("a deny gives a reason", |r| !r.trim().is_empty())
                .prop_map(BeforeToolReply::Deny),
            object().prop_map(BeforeToolReply::Rewrite),
        ]
        .prop_map(|r| (Hook::BeforeTool, HookReply::BeforeTool(r))),
        (
            prop::option::of(content()),
            prop::option::of(json_value()),
            prop::option::of(any::<bool>())
        )
            .prop_map(|(content, details, is_error)| (
                Hook::AfterTool,
                HookReply::AfterTool(AfterToolReply {
                    content,
                    details,
                    is_error
                })
            )),
        prop_oneof![
            Just(BeforeModelReply::Continue),
            string().prop_map(BeforeModelReply::Note),
            string().prop_map(BeforeModelReply::Stop),
        ]
        .prop_map(|r| (Hook::BeforeModel, HookReply::BeforeModel(r))),
        prop_oneof![
            Just(OnInputReply::Pass),
            string().prop_map(OnInputReply::Reject)
        ]
        .prop_map(|r| (Hook::OnInput, HookReply::OnInput(r))),
        prop_oneof![
            Just(OnStopReply::Accept),
            string().prop_map(OnStopReply::Continue),
            string().prop_map(OnStopReply::Fail),
        ]
        .prop_map(|r| (Hook::OnStop, HookReply::OnStop(r))),
        prop::sample::select(&[Hook::OnEvent, Hook::Finish][..])
            .prop_map(|hook| (hook, HookReply::Ignored)),
    ]
}

/// Whether two decodings agree: the same reply, or both errors.
fn agree(a: &Result<HookReply, CallError>, b: &Result<HookReply, CallError>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => a == b,
        (Err(_), Err(_)) => true,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn json_replies_never_panic_and_what_parses_round_trips(value in reply_like()) {
        for call in calls() {
            let Ok(reply) = call.parse_reply(value.clone()) else { continue };
            let again = call.parse_reply(reply.to_json());
            prop_assert_eq!(again.as_ref(), Ok(&reply), "{} of {}", call.hook(), value);
        }
    }

    #[test]
    fn typed_replies_survive_their_json_form((hook, reply) in typed_reply()) {
        let call = call_of(hook);
        prop_assert_eq!(call.parse_reply(reply.to_json()), Ok(reply.clone()));
        let bytes = rmp_serde::to_vec_named(&reply.to_json()).unwrap();
        prop_assert_eq!(read_msgpack(&call, &bytes).ok(), Some(reply));
    }

    #[test]
    fn a_deny_without_a_reason_is_refused_by_both_decoders(blank in "[ \t\n\r]{0,8}") {
        let call = call_of(Hook::BeforeTool);
        let reply = json!({ "deny": blank });
        prop_assert!(read_json(&call, &reply.to_string()).is_err());
        let bytes = rmp_serde::to_vec_named(&reply).unwrap();
        prop_assert!(read_msgpack(&call, &bytes).is_err());
    }

    #[test]
    fn json_text_and_msgpack_bytes_of_one_value_decode_alike(value in reply_like()) {
        let text = value.to_string();
        let bytes = rmp_serde::to_vec_named(&value).unwrap();
        for call in calls() {
            let from_json = read_json(&call, &text);
            let from_msgpack = read_msgpack(&call, &bytes);
            prop_assert!(
                agree(&from_json, &from_msgpack),
                "{}: {:?} vs {:?}", call.hook(), from_json, from_msgpack
            );
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_allocate_little(
        bytes in prop::collection::vec(any::<u8>(), 0..256)
    ) {
        for call in calls() {
            let (_, largest) = largest_allocation(|| read_msgpack(&call, &bytes));
            prop_assert!(largest < ALLOCATION_BOUND, "{largest} bytes for {bytes:?}");
            let text = String::from_utf8_lossy(&bytes);
            let (_, largest) = largest_allocation(|| read_json(&call, &text));
            prop_assert!(largest < ALLOCATION_BOUND, "{largest} bytes for {text:?}");
        }
    }

    #[test]
    fn huge_length_prefixes_are_not_trusted(
        // array 16/32, map 16/32, str 8/16/32, bin 8/16/32, ext 8/16/32
        marker in prop::sample::select(
            &[0xdc_u8, 0xdd, 0xde, 0xdf, 0xd9, 0xda, 0xdb, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9][..]
        ),
        length in prop_oneof![Just(u32::MAX), Just(1 << 31), Just(65_535), any::<u32>()],
        nested in 0..4_usize,
        tail in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        // The prefix's width, and a claim longer than the tail can hold (a
        // short claim could be met: `[0xde, 0, 0]` is an empty map).
        let width = match marker {
            0xd9 | 0xc4 | 0xc7 => 1,
            0xdc | 0xde | 0xda | 0xc5 | 0xc8 => 2,
            _ => 4,
        };
        let widest = u32::MAX >> (32 - 8 * width);
        let claimed = match length & widest {
            short if short < 64 => widest,
            long => long,
        };
        let mut bytes = Vec::new();
        for _ in 0..=nested {
            bytes.push(marker);
            bytes.extend_from_slice(&claimed.to_be_bytes()[4 - width..]);
            if (0xc7..=0xc9).contains(&marker) {
                bytes.push(1); // the ext type
            }
        }
        bytes.extend_from_slice(&tail);
        for call in calls() {
            let (decoded, largest) = largest_allocation(|| read_msgpack(&call, &bytes));
            prop_assert!(decoded.is_err(), "{bytes:?} cannot hold what it claims");
            prop_assert!(largest < ALLOCATION_BOUND, "{largest} bytes for {bytes:?}");
        }
    }

    #[test]
    fn images_of_any_data_never_panic(data in string(), mime in string()) {
        let _ = yohost::adapter::limits::check_image(&data, &mime);
        let _ = yohost::adapter::limits::check_image(&data, "image/png");
    }

    #[test]
    fn manifests_of_any_text_never_panic(text in any::<String>()) {
        if let Ok(manifest) = Manifest::parse(&text) {
            use_manifest(&manifest);
        }
    }

    #[test]
    fn manifests_of_toml_like_text_never_panic(
        tokens in prop::collection::vec(prop::sample::select(TOML_TOKENS), 0..40)
    ) {
        if let Ok(manifest) = Manifest::parse(&tokens.concat()) {
            use_manifest(&manifest);
        }
    }
}

/// Pieces of TOML, and of the manifest's own fields.
const TOML_TOKENS: &[&str] = &[
    "name",
    "mode",
    "priority",
    "ecosystem",
    "entry",
    "timeouts",
    "limits",
    "capabilities",
    "read",
    "write",
    "env",
    "network",
    "exec",
    "before_tool",
    "load",
    "advisory",
    "required",
    "\"pi\"",
    " = ",
    "=",
    "\"",
    "'",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    ",",
    ".",
    "\n",
    " ",
    "1",
    "-1",
    "0",
    "18446744073709551615",
    "9223372036854775808",
    "1e400",
    "nan",
    "inf",
    "true",
    "\"x\"",
    "'''",
    "\"\"\"",
    "#",
    "\\",
    "\\u0000",
    "\\uD800",
    "1979-05-27T07:32:00Z",
    "0x10",
    "[timeouts]\n",
    "[capabilities]\n",
    "name = \"a\"\n",
    "load = ",
    "read = [",
];

/// Read every field of a parsed manifest through the methods the host uses.
fn use_manifest(manifest: &Manifest) {
    let _ = manifest.priority();
    let _ = manifest.load_timeout();
    for hook in Hook::ALL {
        let _ = manifest.timeout(hook);
    }
}

/// `depth` levels of `open`, a core, then `depth` levels of `close`.
fn nested(open: &str, core: &str, close: &str, depth: usize) -> String {
    format!("{}{core}{}", open.repeat(depth), close.repeat(depth))
}

const DEEP: usize = 10_000;

#[test]
fn json_replies_nested_ten_thousand_deep_are_errors() {
    for text in [
        nested("[", "null", "]", DEEP),
        nested("{\"a\":", "null", "}", DEEP),
        format!("{{\"deny\":{}}}", nested("[", "", "]", DEEP)),
        format!("{{\"args\":{}}}", nested("{\"args\":", "{}", "}", DEEP)),
        format!("{{\"content\":{}}}", nested("[", "", "]", DEEP)),
    ] {
        for call in calls() {
            assert!(
                matches!(read_json(&call, &text), Err(CallError::BadReply(_))),
                "{}",
                call.hook()
            );
        }
    }
}

#[test]
fn msgpack_replies_nested_ten_thousand_deep_are_errors() {
    let deep_array = [vec![0x91_u8; DEEP], vec![0xc0]].concat(); // [[[…null…]]]
    let deep_map = [[0x81_u8, 0xa1, b'a'].repeat(DEEP), vec![0xc0]].concat(); // {"a":{"a":…}}
    let deep_args = [
        [0x81_u8, 0xa4, b'a', b'r', b'g', b's'].repeat(DEEP),
        vec![0x80],
    ]
    .concat();
    for bytes in [deep_array, deep_map, deep_args] {
        for call in calls() {
            assert!(
                matches!(read_msgpack(&call, &bytes), Err(CallError::BadReply(_))),
                "{}",
                call.hook()
            );
        }
    }
}

#[test]
fn msgpack_replies_nest_exactly_as_deep_as_json_replies() {
    let call = call_of(Hook::BeforeTool);
    let mut deepest = None;
    for depth in 1..200 {
        let text = format!("{{\"args\":{}}}", nested("{\"a\":", "1", "}", depth));
        let from_json = read_json(&call, &text);
        let bytes = [
            [0x81_u8, 0xa4, b'a', b'r', b'g', b's'].as_slice(),
            &[0x81, 0xa1, b'a'].repeat(depth),
            &[0x01],
        ]
        .concat();
        let from_msgpack = read_msgpack(&call, &bytes);
        assert!(
            agree(&from_json, &from_msgpack),
            "{depth}: {from_json:?} vs {from_msgpack:?}"
        );
        if from_json.is_ok() {
            deepest = Some(depth);
        }
    }
    assert_eq!(deepest, Some(yohost::adapter::codec::MAX_MSGPACK_DEPTH - 2));
}

#[test]
fn the_allocation_probe_sees_a_large_request() {
    let (_, largest) = largest_allocation(|| Vec::<u8>::with_capacity(2 * ALLOCATION_BOUND));
    assert!(largest >= 2 * ALLOCATION_BOUND, "{largest}");
}

#[test]
fn manifests_nested_ten_thousand_deep_are_refused() {
    for text in [
        format!("name = {}", nested("[", "1", "]", DEEP)),
        format!("name = {}", nested("{a = ", "1", "}", DEEP)),
        format!("[{}]", vec!["a"; DEEP].join(".")),
        format!("{} = 1", vec!["a"; DEEP].join(".")),
        format!("[[{}]]", vec!["a"; DEEP].join(".")),
        format!("[timeouts]\nload = {}", nested("[", "", "]", DEEP)),
    ] {
        assert!(Manifest::parse(&text).is_err(), "{}", &text[..40]);
    }
}

#[test]
fn a_float_in_a_json_reply_keeps_its_exact_value() {
    // Found by `json_text_and_msgpack_bytes_of_one_value_decode_alike`:
    // serde_json's default float parser was one unit off here.
    let float = -1.877171029795985e271_f64;
    let reply = json!({"content": [], "details": {"x": float}});
    let call = call_of(Hook::CallTool);
    let Ok(HookReply::CallTool(parsed)) = read_json(&call, &reply.to_string()) else {
        panic!("parses");
    };
    assert_eq!(parsed.details["x"].as_f64(), Some(float));
}
