//! How the command shows a person where to authorize an MCP server that
//! asks for OAuth: the URL on standard error, and opened with `$BROWSER`
//! when it is set (the first of its `:`-separated commands; `%s` in it is
//! the URL, else the URL is its last argument).

use crate::output::escaped;
use std::process::{Command, Stdio};

/// The command's [`yohost_adapter_mcp::Authorizer`].
pub struct TerminalAuthorizer;

impl yohost_adapter_mcp::Authorizer for TerminalAuthorizer {
    fn present(&self, server: &str, url: &str) {
        // Both come from outside: printed with their control characters
        // escaped, as every outside text the command prints. The load goes
        // on meanwhile, its spinner below the line.
        crate::progress::suspend(|| {
            eprintln!(
                "yohost: the MCP server `{}` asks for authorization: open {}",
                escaped(server),
                escaped(url)
            )
        });
        let Some(words) = std::env::var("BROWSER")
            .ok()
            .and_then(|browser| browser_command(&browser, url))
        else {
            return;
        };
        let (program, args) = words.split_first().expect("a command has a program");
        let spawned = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn();
        match spawned {
            // Reaped when it ends, whenever that is.
            Ok(mut child) => drop(std::thread::spawn(move || child.wait())),
            Err(e) => crate::progress::suspend(|| {
                eprintln!("yohost: cannot open it with `{program}` ($BROWSER): {e}")
            }),
        }
    }
}

/// The command `$BROWSER` names for `url`: its first `:`-separated
/// command, split at whitespace, with `%s` replaced by the URL or the URL
/// appended; `None` when it names none.
fn browser_command(browser: &str, url: &str) -> Option<Vec<String>> {
    let first = browser.split(':').next().unwrap_or_default();
    let mut words: Vec<String> = first.split_whitespace().map(str::to_string).collect();
    if words.is_empty() {
        return None;
    }
    if words.iter().any(|w| w.contains("%s")) {
        words.iter_mut().for_each(|w| *w = w.replace("%s", url));
    } else {
        words.push(url.to_string());
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::browser_command;

    #[test]
    fn browser_names_a_command_that_gets_the_url() {
        let url = "http://127.0.0.1:9/authorize?x=1";
        assert_eq!(
            browser_command("firefox --new-tab:chromium", url),
            Some(vec!["firefox".into(), "--new-tab".into(), url.into()])
        );
        assert_eq!(
            browser_command("open -u %s --now", url),
            Some(vec!["open".into(), "-u".into(), url.into(), "--now".into()])
        );
        assert_eq!(browser_command("  ", url), None);
    }
}
