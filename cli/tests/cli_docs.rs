//! docs/cli.md keeps up with the command: every subcommand that `yohost
//! --help` lists, and every option of each (`yohost COMMAND --help`), is in
//! the page's synopsis, so a new command or flag cannot ship undocumented.

use std::process::Command;

/// What `yohost ARGS --help` prints.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_yohost"))
        .args(args)
        .arg("--help")
        .output()
        .expect("yohost runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:`, but `help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The long options a help text lists, but `--help` and `--version`.
fn long_options(help: &str) -> Vec<String> {
    help.lines()
        .map(str::trim_start)
        .filter_map(|line| {
            let line = line
                .strip_prefix('-')
                .filter(|l| !l.starts_with('-'))
                .and_then(|l| l.split_once(", ").map(|(_, rest)| rest))
                .unwrap_or(line);
            let name = line.strip_prefix("--")?;
            let end = name.find([' ', '=', '<', ',']).unwrap_or(name.len());
            Some(format!("--{}", &name[..end]))
        })
        .filter(|option| option != "--help" && option != "--version")
        .collect()
}

/// Whether `line` holds `option` as a whole word (not `--to` in `--token`).
fn names(line: &str, option: &str) -> bool {
    line.match_indices(option).any(|(at, _)| {
        let next = line[at + option.len()..].chars().next();
        !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

#[test]
fn the_page_names_every_subcommand_and_option_the_command_has() {
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md"),
    )
    .unwrap();
    let synopsis = page
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the page's synopsis block");
    let commands = subcommands(&help(&[]));
    assert!(commands.len() >= 8, "{commands:?}");
    for command in commands {
        let line = synopsis
            .lines()
            .find(|line| line.starts_with(&format!("yohost {command} ")))
            .unwrap_or_else(|| panic!("docs/cli.md's synopsis lacks `yohost {command}`"));
        for option in long_options(&help(&[&command])) {
            assert!(
                names(line, &option),
                "docs/cli.md's synopsis of `yohost {command}` lacks {option}: {line}"
            );
        }
    }
}
