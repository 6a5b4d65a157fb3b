//! `yohost run --interactive`: a session on the terminal. Each line is a
//! prompt to the agent, or a plugin's command (`/name args`; `/help` lists
//! them); plugins' questions (`ctx.ui.confirm`, `select`, `input`,
//! `editor`) are asked on the terminal and answered by the next line, and
//! a message a plugin sends as the user's runs after the current prompt.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use yohost::{Asker, NotifyLevel, PluginHost, UserInterface};

/// The person at the terminal: questions are printed, answers read from
/// standard input, one line each.
#[derive(Default)]
pub struct Terminal {
    /// Lines are read by one reader at a time: the session's loop between
    /// prompts, a plugin's question during one.
    input: Mutex<()>,
    /// Messages plugins sent as the user's, to run next.
    queued: Mutex<VecDeque<String>>,
}

impl Terminal {
    /// Print `question` (without a newline) and read the answer's line;
    /// `None` at the end of input.
    fn ask(&self, question: &str) -> Option<String> {
        let _reading = self.input.lock().unwrap_or_else(|e| e.into_inner());
        print!("{question}");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_string()),
        }
    }

    /// The next line the session runs: a queued message first, else the
    /// person's next line; `None` at the end of input.
    pub fn next_line(&self) -> Option<String> {
        let queued = self
            .queued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        match queued {
            Some(message) => {
                println!("> {message}");
                Some(message)
            }
            None => self.ask("> "),
        }
    }
}

impl UserInterface for Terminal {
    fn confirm(&self, asker: Asker<'_>, title: &str, message: &str) -> bool {
        let answer = self.ask(&format!("[{}] {title}\n{message}\n[y/N] ", asker.plugin));
        answer.is_some_and(|a| matches!(a.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
    }

    fn select(&self, asker: Asker<'_>, title: &str, options: &[String]) -> Option<String> {
        let listed: Vec<String> = options
            .iter()
            .enumerate()
            .map(|(i, option)| format!("  {}. {option}", i + 1))
            .collect();
        let answer = self.ask(&format!(
            "[{}] {title}\n{}\nchoose 1-{}: ",
            asker.plugin,
            listed.join("\n"),
            options.len()
        ))?;
        let answer = answer.trim();
        match answer.parse::<usize>() {
            Ok(n) if (1..=options.len()).contains(&n) => Some(options[n - 1].clone()),
            _ => options.iter().find(|o| o.as_str() == answer).cloned(),
        }
    }

    fn input(&self, asker: Asker<'_>, title: &str, placeholder: Option<&str>) -> Option<String> {
        let hint = placeholder.map(|p| format!(" ({p})")).unwrap_or_default();
        self.ask(&format!("[{}] {title}{hint}: ", asker.plugin))
            .filter(|answer| !answer.is_empty())
    }

    fn editor(&self, asker: Asker<'_>, title: &str, prefill: Option<&str>) -> Option<String> {
        let mut text = Vec::new();
        let mut question = format!("[{}] {title} (end with a line of `.`)\n", asker.plugin);
        if let Some(prefill) = prefill {
            question.push_str(&format!("{prefill}\n"));
        }
        loop {
            let line = self.ask(&question)?;
            if line == "." {
                return Some(text.join("\n"));
            }
            text.push(line);
            question.clear();
        }
    }

    fn notify(&self, asker: Asker<'_>, message: &str, level: NotifyLevel) {
        let level = match level {
            NotifyLevel::Info => "info",
            NotifyLevel::Warning => "warning",
            NotifyLevel::Error => "error",
        };
        println!("[{}] {level}: {message}", asker.plugin);
    }

    fn send_user_message(&self, asker: Asker<'_>, text: &str) -> bool {
        println!("[{}] queued as your next message: {text}", asker.plugin);
        self.queued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(text.to_string());
        true
    }
}

/// What a line of the session is.
pub enum Line<'a> {
    /// `/help`: list the commands.
    Help,
    /// `/name args`: run a plugin's command.
    Command {
        /// Its name.
        name: &'a str,
        /// The rest of the line.
        args: &'a str,
    },
    /// Nothing to do.
    Blank,
    /// A prompt for the agent.
    Prompt(&'a str),
}

impl<'a> Line<'a> {
    /// Read one line of the session.
    pub fn read(line: &'a str) -> Line<'a> {
        let line = line.trim();
        match line.strip_prefix('/') {
            Some("help") => Line::Help,
            Some(command) if !command.is_empty() => {
                let (name, args) = command.split_once(' ').unwrap_or((command, ""));
                Line::Command { name, args }
            }
            _ if line.is_empty() => Line::Blank,
            _ => Line::Prompt(line),
        }
    }
}

/// Print the commands the plugins offer, for `/help`.
pub fn print_commands(host: &PluginHost) {
    let commands = host.commands();
    if commands.is_empty() {
        println!("no plugin offers a command");
    }
    for command in commands {
        println!(
            "  /{} ({}): {}",
            command.name, command.plugin, command.description
        );
    }
}

/// A shared terminal, for the host and the session's loop.
pub fn terminal() -> Arc<Terminal> {
    Arc::new(Terminal::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_line_is_a_command_and_the_rest_a_prompt() {
        assert!(matches!(
            Line::read("/pirate"),
            Line::Command {
                name: "pirate",
                args: ""
            }
        ));
        assert!(matches!(
            Line::read(" /greet Ada Lovelace "),
            Line::Command {
                name: "greet",
                args: "Ada Lovelace"
            }
        ));
        assert!(matches!(Line::read("/help"), Line::Help));
        assert!(matches!(Line::read("  "), Line::Blank));
        assert!(matches!(
            Line::read("list the files"),
            Line::Prompt("list the files")
        ));
        assert!(matches!(Line::read("/"), Line::Prompt("/")));
    }
}
