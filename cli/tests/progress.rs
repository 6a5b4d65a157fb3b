//! The spinner of a long step (`cli/src/progress.rs`), under a
//! pseudo-terminal (`script`): a load that takes seconds shows it on a
//! terminal and clears it before the command's output, which is then what
//! a pipe gets; with standard error off the terminal nothing of it is
//! written anywhere, and `run --json`'s standard output stays JSON; a fast
//! load shows nothing.

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::{on_terminal, yohost};
use support::*;

/// A Python plugin whose import takes 4 s, logging a warning half way: a
/// load well over the spinner's second, and well under the default load
/// deadline (10 s), on a busy machine too.
const SLOW: &str = r#"import time

from yohost import BeforeTool, BeforeToolReply, Plugin, log

time.sleep(2)
log.warning("still importing")
time.sleep(2)
plugin = Plugin("slow")


@plugin.before_tool
def guard(call: BeforeTool) -> BeforeToolReply:
    return None
"#;

/// The spinner's message while `plugins` loads.
const LOADING: &str = "loading plugins from plugins";

/// What erases the spinner's line: back to its start, erase the line.
const ERASE_LINE: &str = "\r\x1b[2K";

/// A folder holding `plugins/` with the slow plugin, and a script for
/// `run`.
fn slow_setup() -> tempfile::TempDir {
    let cwd = tempfile::tempdir().unwrap();
    write(cwd.path(), "plugins/slow.py", SLOW);
    write(cwd.path(), "script.json", r#"[{"text": "done"}]"#);
    cwd
}

#[test]
fn a_slow_load_shows_a_spinner_on_the_terminal_and_clears_it() {
    let cwd = slow_setup();
    let (code, shown, stderr) = on_terminal("check plugins", cwd.path(), "");
    let (piped_code, stdout, piped_stderr) = yohost(&["check", "plugins"], cwd.path());
    assert_eq!(code, Some(0), "{shown}\n{stderr}");
    assert_eq!(piped_code, Some(0), "{stdout}\n{piped_stderr}");
    assert!(
        stdout.contains("slow ") && stdout.ends_with("1 loaded, 0 refused\n"),
        "{stdout}"
    );
    // The spinner names the step and its time, then is erased, and the
    // table follows as a pipe gets it.
    let table = shown.find("NAME ").expect("the table is shown");
    let (spinner, rest) = shown.split_at(table);
    assert!(
        spinner.contains(&format!("{LOADING} (")) && spinner.contains("s)"),
        "no spinner:\n{shown:?}"
    );
    assert!(spinner.ends_with(ERASE_LINE), "not cleared:\n{shown:?}");
    assert_eq!(rest, stdout);
    // The warning the plugin logs while it loads (a host log line on
    // standard error) is written on a line of its own, not after the
    // spinner's text.
    let warned = spinner.find("still importing").expect("the warning");
    let line = spinner[..warned].rsplit(['\n', '\r']).next().unwrap();
    assert!(
        line.contains("WARN") && !line.contains(LOADING),
        "{line:?} in\n{shown:?}"
    );
    // Nothing of it reaches a pipe.
    assert!(!piped_stderr.contains(LOADING), "{piped_stderr}");
    assert!(!piped_stderr.contains('\x1b'), "{piped_stderr:?}");
}

#[test]
fn with_standard_error_off_the_terminal_no_spinner_is_written() {
    let cwd = slow_setup();
    // Standard output is the terminal; standard error a file.
    let (code, shown, stderr) = on_terminal("check plugins 2>err.txt", cwd.path(), "");
    let (_, stdout, _) = yohost(&["check", "plugins"], cwd.path());
    assert_eq!(code, Some(0), "{shown}\n{stderr}");
    assert_eq!(shown, stdout, "the terminal shows only the table");
    let err = std::fs::read_to_string(cwd.path().join("err.txt")).unwrap();
    assert!(err.contains("still importing"), "{err:?}");
    assert!(!err.contains(LOADING) && !err.contains('\x1b'), "{err:?}");
}

#[test]
fn run_json_keeps_standard_output_json_while_the_terminal_shows_the_spinner() {
    let cwd = slow_setup();
    // Standard error is the terminal; standard output a file.
    let command = "run plugins --prompt go --script script.json --json >out.json";
    let (code, shown, stderr) = on_terminal(command, cwd.path(), "");
    assert_eq!(code, Some(0), "{shown}\n{stderr}");
    // `run` names the directory by its absolute path.
    assert!(
        shown.contains("loading plugins from /"),
        "no spinner:\n{shown:?}"
    );
    assert!(shown.ends_with(ERASE_LINE), "not cleared:\n{shown:?}");
    let out = std::fs::read_to_string(cwd.path().join("out.json")).unwrap();
    assert!(out.contains(r#""type":"agentEnd""#), "{out}");
    for line in out.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("{e}: {line:?} in\n{out}"));
    }
}

#[test]
fn a_fast_load_shows_no_spinner() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.path().join("plugins")).unwrap();
    let (code, shown, stderr) = on_terminal("check plugins", cwd.path(), "");
    let (_, stdout, _) = yohost(&["check", "plugins"], cwd.path());
    assert_eq!(code, Some(0), "{shown}\n{stderr}");
    assert!(stdout.ends_with("\n0 loaded, 0 refused\n"), "{stdout}");
    assert_eq!(shown, stdout, "the terminal shows only the table");
}
