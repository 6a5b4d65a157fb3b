//! The conformance fixture as a rutis-agent hot-plug tool library, through
//! the rutis-agent adapter. Such a library has tools only: `fx_echo`,
//! whose `text` selects the protocol's hostile inputs (`hang`, `spin`,
//! `shape`: bytes that are not UTF-8, and `oversize`); anything else is
//! echoed as `{"ok": true, "notes": ...}`, which rutis shows as the text. And `fx_end`, whose reply says `terminate`,
//! which a rutis-agent reply cannot mean: it is only part of the JSON. Native code cannot be interrupted: `spin`
//! stops by itself after two seconds and `hang` sleeps for an hour (its
//! thread is abandoned).

use std::ffi::{c_char, CStr, CString};
use std::time::{Duration, Instant};

/// The schemas of `fx_echo` (tool 0) and `fx_end` (tool 1).
const SCHEMAS: [&str; 2] = [
    r#"{"name":"fx_echo","description":"Echo the text","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}"#,
    r#"{"name":"fx_end","description":"End the run with the text","parameters":{"type":"object","properties":{"text":{"type":"string"}}}}"#,
];

/// A string the host frees with [`rutis_plugin_free`].
fn give(text: String) -> *const c_char {
    CString::new(text).map_or(std::ptr::null(), |s| s.into_raw().cast_const())
}

#[no_mangle]
pub extern "C" fn rutis_plugin_name() -> *const c_char {
    give("conformance-fixture".into())
}

#[no_mangle]
pub extern "C" fn rutis_plugin_tool_count() -> u32 {
    SCHEMAS.len() as u32
}

#[no_mangle]
pub extern "C" fn rutis_plugin_tool_schema(i: u32) -> *const c_char {
    SCHEMAS
        .get(i as usize)
        .map_or(std::ptr::null(), |schema| give((*schema).into()))
}

/// Run tool `i` with `args`.
///
/// # Safety
/// `args` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn rutis_plugin_tool_invoke(i: u32, args: *const c_char) -> *const c_char {
    // SAFETY: the host passes a NUL-terminated JSON string.
    let args = unsafe { CStr::from_ptr(args) }.to_string_lossy();
    let args: serde_json::Value = serde_json::from_str(&args).unwrap_or_default();
    let text = args["text"].as_str().unwrap_or_default();
    if i == 1 {
        return give(serde_json::json!({"ok": true, "notes": text, "terminate": true}).to_string());
    }
    match text {
        "hang" => {
            std::thread::sleep(Duration::from_secs(3600));
            give(r#"{"ok":true}"#.into())
        }
        "spin" => {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(2) {
                std::hint::spin_loop();
            }
            give(r#"{"ok":true}"#.into())
        }
        // Any text is a reply (an error result, if it is not `{"ok": true}`);
        // bytes that are not UTF-8 are not.
        "shape" => {
            CString::new(vec![0xff, 0xfe]).map_or(std::ptr::null(), |s| s.into_raw().cast_const())
        }
        "oversize" => give(format!(
            r#"{{"ok":true,"notes":"{}"}}"#,
            "x".repeat(17 * 1024 * 1024)
        )),
        _ => give(serde_json::json!({"ok": true, "notes": text}).to_string()),
    }
}

/// Free a string this library returned.
///
/// # Safety
/// `text` came from this library and is freed once.
#[no_mangle]
pub unsafe extern "C" fn rutis_plugin_free(text: *mut c_char) {
    if !text.is_null() {
        // SAFETY: made by `CString::into_raw` in `give`.
        drop(unsafe { CString::from_raw(text) });
    }
}
