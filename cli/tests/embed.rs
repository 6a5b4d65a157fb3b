//! The embedding example (`examples/embed.rs`) builds (`cargo test` builds
//! the package's examples) and runs: it prints the plugin report through
//! `PluginReport`'s `Display`, its run is judged by the plugins, and the
//! plugins' log lines reach its tracing subscriber, and it prints each
//! hook's figures. docs/embedding.md shows the example whole, with the
//! `Cargo.toml` lines it builds with: the page's code is the example's, and
//! every crate the page names is one this package depends on. Its Python is the
//! interpreter it was built against (`PYO3_PYTHON`, else `python3`), through
//! the rpath its build script adds. And a crate of the page alone builds
//! and runs, as a new user's would.

#[path = "../../host/tests/support/mod.rs"]
mod support;

use std::process::Command;
use support::*;

const GUARD: &str = r#"
export default {
  before_tool({ tool, args }, ctx) {
    if (tool === "bash" && args.command.includes("rm -rf")) {
      ctx.log.warn("judged a removal");
      return { deny: "no removals" };
    }
    return null;
  },
};
"#;

const EARLY: &str = r#"
import sys
from yohost import Plugin, log

plugin = Plugin("early")

@plugin.before_tool
def say_where(call):
    log.info(f"python at {sys.base_prefix}")
    return None
"#;

/// The `sys.base_prefix` of the interpreter the build used.
fn build_python_prefix() -> String {
    let python = std::env::var("PYO3_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(python)
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .expect("python runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_embedding_example_prints_the_report_and_the_plugins_judge_its_run() {
    let plugins = plugin_dir();
    write(plugins.path(), "guard.ts", GUARD);
    write(plugins.path(), "broken.py", "this is not python");
    write(plugins.path(), "early.py", EARLY);
    let example = examples_dir().join(format!("embed{}", std::env::consts::EXE_SUFFIX));
    assert!(
        example.exists(),
        "{} is not built (cargo test builds examples)",
        example.display()
    );
    let out = Command::new(example)
        .arg(plugins.path())
        .env_remove("RUST_LOG")
        .output()
        .expect("the example runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("guard (js, yohost): loaded; hooks before_tool\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("broken (python, yohost): refused: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("bash: Tool call denied: no removals"),
        "{stdout}"
    );
    assert!(!stdout.contains("would run"), "{stdout}");
    assert!(
        stdout.contains("guard before_tool: 1 calls, 0 failed, p50 Some("),
        "{stdout}"
    );
    assert!(stderr.contains("judged a removal"), "{stderr}");
    let prefix = format!("python at {}", build_python_prefix());
    assert!(stderr.contains(&prefix), "{prefix} in {stderr}");
}

/// The fenced blocks of `lang` in `text` (three backticks), in order.
fn blocks<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
    let fence = format!("```{lang}\n");
    text.split(fence.as_str())
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .collect()
}

#[test]
fn the_embedding_page_shows_the_example_whole_with_the_crates_it_builds_with() {
    let cli = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(cli.join("../docs/embedding.md")).unwrap();
    let example = std::fs::read_to_string(cli.join("examples/embed.rs")).unwrap();
    // Four backticks: the example's own doc comment holds a fenced block.
    assert!(
        page.contains(&format!("````rust\n{example}````\n")),
        "docs/embedding.md must show cli/examples/embed.rs whole"
    );
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(cli.join("Cargo.toml")).unwrap()).unwrap();
    let ours: Vec<&String> = ["dependencies", "dev-dependencies"]
        .iter()
        .filter_map(|section| manifest.get(*section)?.as_table())
        .flat_map(|table| table.keys())
        .collect();
    let shown = blocks(&page, "toml");
    let shown: toml::Table = toml::from_str(shown.first().expect("a Cargo.toml block")).unwrap();
    let needed = shown["dependencies"].as_table().unwrap();
    for name in needed.keys() {
        assert!(
            ours.contains(&name),
            "the page names `{name}`, which the example does not build with"
        );
    }
    for crate_name in [
        "yohost",
        "yohost-adapter-pi",
        "yohost-adapter-dsh",
        "yohost-adapter-rutis-agent",
        "yoagent",
        "tokio",
        "tracing-subscriber",
        "async-trait",
        "serde_json",
    ] {
        assert!(
            needed.contains_key(crate_name),
            "the page's Cargo.toml lacks `{crate_name}`"
        );
    }
}

/// The blocks of `page` that follow `heading`, up to the next `## `.
fn section<'a>(page: &'a str, heading: &str) -> &'a str {
    let start = page.find(heading).unwrap_or_else(|| panic!("{heading}"));
    let rest = &page[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// A new user's crate made only of what docs/embedding.md shows (its
/// `Cargo.toml` lines with `YOHOST` this checkout, its build profiles, its
/// `build.rs` and its program) builds with `cargo build`, in the target dir
/// of this build (so the dependencies built for these tests are reused) and
/// against this workspace's lock (so it resolves the same versions); and the
/// binary it makes runs the page's run: the example plugins deny the call.
/// (Its path dependencies are not members of its workspace, so they build
/// once more, without debug info, as `[profile.dev.package."*"]` says.)
#[test]
fn the_embedding_page_builds_as_a_crate_of_its_own() {
    let cli = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = cli.parent().unwrap();
    let page = std::fs::read_to_string(repo.join("docs/embedding.md")).unwrap();
    let dependencies = blocks(section(&page, "## Cargo.toml"), "toml")[0];
    let profiles = blocks(section(&page, "## Build profiles"), "toml")[0];
    let build_script = blocks(section(&page, "## Python: the libpython rpath"), "rust")[0];
    let program = section(&page, "## The program")
        .split("````rust\n")
        .nth(1)
        .and_then(|rest| rest.split("````").next())
        .expect("the program's block");
    let target = target_dir();
    std::fs::create_dir_all(target.join("tmp")).unwrap();
    let krate = tempfile::tempdir_in(target.join("tmp")).unwrap();
    let manifest = format!(
        "[package]\nname = \"my-agent\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [workspace]\n\n{}\n{profiles}",
        dependencies.replace("YOHOST", repo.to_str().unwrap())
    );
    write(krate.path(), "Cargo.toml", &manifest);
    write(krate.path(), "build.rs", build_script);
    write(krate.path(), "src/main.rs", program);
    std::fs::copy(repo.join("Cargo.lock"), krate.path().join("Cargo.lock")).unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet"])
        .current_dir(krate.path())
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "the page's crate does not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let binary = target
        .join("debug")
        .join(format!("my-agent{}", std::env::consts::EXE_SUFFIX));
    let out = Command::new(&binary)
        .arg(repo.join("examples"))
        .env_remove("RUST_LOG")
        .output()
        .expect("the page's program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("bash: Tool call denied"), "{stdout}");
    assert!(!stdout.contains("would run"), "{stdout}");
}
