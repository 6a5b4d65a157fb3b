//! `yohost add`, `lock`, `check --locked` and `remove`, each through a real
//! `yohost` process:
//! - `add` of a local pi package folder and of its `.tgz` installs it with
//!   its devDependencies dropped, a `plugin.toml` with the grants its
//!   sources need, an entry in `yohost.lock`, and ends with its `check`
//!   line: loaded;
//! - off a terminal, a package that needs `exec` is not added without
//!   `--allow-exec`, and nothing is left behind;
//! - `check --locked` accepts the directory as locked, and refuses a changed
//!   file, an added file and a plugin the lock does not list, naming each;
//!   `yohost lock` records the directory as it is;
//! - `remove` takes the plugin and its lock entry away.

mod common;
#[path = "../../host/tests/support/mod.rs"]
mod support;

use common::*;
use std::path::Path;
use std::process::Command;
use support::*;

/// A pi package: one extension whose tool fetches, and devDependencies that
/// name a package nobody published.
fn pi_package(dir: &Path, name: &str) {
    write(
        dir,
        "package.json",
        &format!(
            r#"{{"name": "@someone/{name}", "version": "1.2.3", "type": "module",
  "pi": {{"extensions": ["./index.ts"]}},
  "devDependencies": {{"never-published-anywhere": "9.9.9"}}}}"#
        ),
    );
    write(
        dir,
        "index.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "fetch_page",
    description: "fetches a page",
    parameters: { type: "object", properties: {} },
    async execute() {
      const page = await fetch("https://example.org");
      return { content: [{ type: "text", text: await page.text() }] };
    },
  });
}
"#,
    );
}

fn checked_json(dir: &Path, locked: bool) -> (Option<i32>, serde_json::Value) {
    let path = dir.to_str().unwrap();
    let mut args = vec!["check", "--json", path];
    if locked {
        args.push("--locked");
    }
    let (code, stdout, stderr) = yohost(&args, dir);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, doc)
}

#[test]
fn add_installs_a_folder_and_a_tgz_locked_and_remove_takes_them_away() {
    let top = plugin_dir();
    let source = top.path().join("src/hello");
    pi_package(&source, "hello");
    let plugins = top.path().join("plugins");
    let to = plugins.to_str().unwrap();

    // Off a terminal, the grant it needs must be given.
    let spec = source.to_str().unwrap();
    let (code, stdout, stderr) = yohost(&["add", spec, "--to", to], top.path());
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("network: index.ts uses `fetch(`"),
        "{stdout}"
    );
    assert!(stderr.contains("--allow-network"), "{stderr}");
    assert_eq!(std::fs::read_dir(&plugins).unwrap().count(), 0);

    let (code, stdout, _) = yohost(&["add", spec, "--to", to, "--allow-network"], top.path());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.ends_with("hello (js, pi): loaded; hooks tools, call_tool; tools fetch_page\n"),
        "{stdout}"
    );
    let manifest = std::fs::read_to_string(plugins.join("hello/plugin.toml")).unwrap();
    assert!(manifest.contains("name = \"hello\""), "{manifest}");
    assert!(manifest.contains("ecosystem = \"pi\""), "{manifest}");
    assert!(manifest.contains("network = true"), "{manifest}");
    let package = std::fs::read_to_string(plugins.join("hello/package.json")).unwrap();
    assert!(!package.contains("devDependencies"), "{package}");

    // The same package as npm packs it.
    let packed = top.path().join("packed");
    std::fs::create_dir_all(packed.join("package")).unwrap();
    pi_package(&packed.join("package"), "hello-packed");
    let tgz = top.path().join("hello-packed-1.2.3.tgz");
    let tar = Command::new("tar")
        .arg("czf")
        .arg(&tgz)
        .arg("-C")
        .arg(&packed)
        .arg("package")
        .status()
        .unwrap();
    assert!(tar.success());
    let (code, stdout, _) = yohost(
        &["add", tgz.to_str().unwrap(), "--to", to, "--allow-network"],
        top.path(),
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("hello-packed (js, pi): loaded"), "{stdout}");

    let lock = std::fs::read_to_string(plugins.join("yohost.lock")).unwrap();
    assert!(
        lock.contains(&format!("source = \"path:{}\"", source.display())),
        "{lock}"
    );
    assert!(
        lock.contains(&format!("source = \"path:{}\"", tgz.display())),
        "{lock}"
    );
    let (code, doc) = checked_json(&plugins, true);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(checked(&doc, "hello")["status"], "loaded", "{doc}");

    let (code, stdout, _) = yohost(&["remove", "hello", "--from", to], top.path());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!plugins.join("hello").exists());
    let lock = std::fs::read_to_string(plugins.join("yohost.lock")).unwrap();
    assert!(!lock.contains("name = \"hello\""), "{lock}");
    assert!(lock.contains("name = \"hello-packed\""), "{lock}");
    let (code, doc) = checked_json(&plugins, true);
    assert_eq!(code, Some(0), "{doc}");
}

#[test]
fn a_package_that_starts_processes_needs_allow_exec_off_a_terminal() {
    let top = plugin_dir();
    let source = top.path().join("runner");
    write(
        &source,
        "index.ts",
        "import { execSync } from \"node:child_process\";\nexport default { before_tool() { execSync(\"true\"); return null; } };\n",
    );
    let plugins = top.path().join("plugins");
    let args = [
        "add",
        source.to_str().unwrap(),
        "--to",
        plugins.to_str().unwrap(),
        "--yes",
    ];
    let (code, stdout, stderr) = yohost(&args, top.path());
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("exec: index.ts uses `child_process`"),
        "{stdout}"
    );
    assert!(stderr.contains("--allow-exec"), "{stderr}");
    assert!(!plugins.join("runner").exists());
}

const POLICY: &str = "export default { before_tool() { return null; } };\n";

#[test]
fn check_locked_names_a_changed_file_an_added_file_and_an_unlisted_plugin() {
    let plugins = plugin_dir();
    let dir = plugins.path();
    write(dir, "guard/index.ts", POLICY);
    write(dir, "guard/lib/rules.ts", "export const rules = [];\n");
    write(dir, "single.ts", POLICY);
    let (code, stdout, _) = yohost(&["lock", dir.to_str().unwrap()], dir);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("2 plugins in"), "{stdout}");
    let (code, doc) = checked_json(dir, true);
    assert_eq!(code, Some(0), "unchanged is accepted: {doc}");

    write(
        dir,
        "guard/lib/rules.ts",
        "export const rules = [\"changed\"];\n",
    );
    write(dir, "guard/lib/more.ts", "export const more = 1;\n");
    write(dir, "newcomer.ts", POLICY);
    let (code, doc) = checked_json(dir, true);
    assert_eq!(code, Some(1), "{doc}");
    let reason = |name: &str| checked(&doc, name)["reason"].as_str().unwrap().to_string();
    let guard = reason("guard");
    assert!(
        guard.contains(
            "its files differ from yohost.lock: lib/more.ts was added, lib/rules.ts changed"
        ),
        "{guard}"
    );
    let newcomer = reason("newcomer");
    assert!(
        newcomer.contains("`newcomer` is not in yohost.lock"),
        "{newcomer}"
    );
    assert_eq!(checked(&doc, "single")["status"], "loaded", "{doc}");
    // Unlocked, all of them load.
    let (code, _) = checked_json(dir, false);
    assert_eq!(code, Some(0));
}

/// A gzipped tarball at `tgz` of `entries`, each under `package/`: built
/// header by header, as an attacker would, with kinds and modes that no
/// honest package holds.
fn hostile_tgz(tgz: &Path, entries: &[(&str, tar::EntryType, u32, &[u8])]) {
    let file = std::fs::File::create(tgz).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for (path, kind, mode, data) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(*kind);
        header.set_mode(*mode);
        header.set_size(data.len() as u64);
        if matches!(kind, tar::EntryType::Symlink | tar::EntryType::Link) {
            header
                .set_link_name(std::str::from_utf8(data).unwrap())
                .unwrap();
            header.set_size(0);
        }
        if matches!(kind, tar::EntryType::Char | tar::EntryType::Block) {
            header
                .set_device_major(if *kind == tar::EntryType::Char {
                    1
                } else {
                    254
                })
                .unwrap();
            header
                .set_device_minor(if *kind == tar::EntryType::Char { 11 } else { 0 })
                .unwrap();
        }
        // Names are set as raw bytes: the tar crate refuses some of them.
        let name = format!("package/{path}");
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        let body: &[u8] = if header.entry_size().unwrap() == 0 {
            &[]
        } else {
            data
        };
        builder.append(&header, body).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap();
}

/// `yohost add SPEC --to TO --yes`, run in `cwd`.
fn add_yes(spec: &Path, to: &Path, cwd: &Path) -> (Option<i32>, String, String) {
    yohost(
        &[
            "add",
            spec.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
            "--yes",
        ],
        cwd,
    )
}

/// The entries of `dir`, hidden ones included: a failed `add` leaves none.
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_tarball_s_devices_links_fifos_and_modes_are_not_taken() {
    use std::os::unix::fs::PermissionsExt;
    use tar::EntryType::{Block, Char, Directory, Fifo, Link, Regular, Symlink};
    let top = plugin_dir();
    let outside = top.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let planted = outside.join("planted.toml");
    let tgz = top.path().join("hostile.tgz");
    hostile_tgz(
        &tgz,
        &[
            ("", Directory, 0o777, b""),
            (
                "package.json",
                Regular,
                0o666,
                br#"{"name": "hostile", "version": "1.0.0"}"#,
            ),
            ("index.ts", Regular, 0o666, POLICY.as_bytes()),
            ("kmsg", Char, 0o666, b""),
            ("disk", Block, 0o666, b""),
            ("pipe", Fifo, 0o666, b""),
            ("passwd", Symlink, 0o777, b"/etc/passwd"),
            (
                "plugin.toml",
                Symlink,
                0o777,
                planted.to_str().unwrap().as_bytes(),
            ),
            ("again.ts", Link, 0o644, b"package/index.ts"),
            ("run.sh", Regular, 0o6777, b"#!/bin/sh\n"),
        ],
    );
    let plugins = top.path().join("plugins");
    let (code, stdout, stderr) = add_yes(&tgz, &plugins, top.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let added = plugins.join("hostile");
    for (name, kind) in [
        ("kmsg", "a character device"),
        ("disk", "a block device"),
        ("pipe", "a FIFO"),
        ("passwd", "a symbolic link"),
        ("plugin.toml", "a symbolic link"),
        ("again.ts", "a hard link"),
    ] {
        assert!(
            stdout.contains(&format!("left out {name} ({kind})")),
            "{name}: {stdout}"
        );
    }
    for name in ["kmsg", "disk", "pipe", "passwd", "again.ts"] {
        assert!(
            std::fs::symlink_metadata(added.join(name)).is_err(),
            "{name} was taken"
        );
    }
    // The manifest was written in the package, not through its link.
    assert!(!planted.exists(), "add wrote through the package's link");
    let manifest = std::fs::symlink_metadata(added.join("plugin.toml")).unwrap();
    assert!(manifest.file_type().is_file());
    // Modes are add's own: no setuid, setgid or world-writable file.
    let mode = |name: &str| {
        std::fs::metadata(added.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("run.sh"), 0o755);
    assert_eq!(mode("index.ts"), 0o644);
    assert_eq!(mode(""), 0o755);
    let (code, doc) = checked_json(&plugins, true);
    assert_eq!(code, Some(0), "{doc}");
    assert_eq!(checked(&doc, "hostile")["status"], "loaded", "{doc}");
}

#[test]
fn a_name_with_a_line_break_or_an_escape_refuses_the_package_and_leaves_nothing() {
    use tar::EntryType::Regular;
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    for (name, shown) in [
        ("x\nread = [\"/\"]\nnetwork = true", "x\\nread"),
        ("\u{1b}]0;owned\u{7}.ts", "\\u{1b}]0;owned\\u{7}.ts"),
    ] {
        let tgz = top.path().join("named.tgz");
        hostile_tgz(
            &tgz,
            &[
                ("package.json", Regular, 0o644, br#"{"name": "named"}"#),
                (name, Regular, 0o644, b"x"),
            ],
        );
        let (code, stdout, stderr) = add_yes(&tgz, &plugins, top.path());
        assert_eq!(code, Some(1), "{stdout}{stderr}");
        assert!(stderr.contains("control character"), "{stderr}");
        assert!(stderr.contains(shown), "{stderr}");
        assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
        assert!(!stderr.contains("\nread"), "{stderr}");
        assert_eq!(entries(&plugins), Vec::<String>::new());
    }
}

#[test]
fn an_oversized_package_is_refused_before_it_is_read_and_leaves_nothing() {
    use tar::EntryType::Regular;
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    let to = plugins.to_str().unwrap();
    // A tarball of a few bytes whose header claims a 1 GiB file.
    let tgz = top.path().join("bomb.tgz");
    {
        let file = std::fs::File::create(&tgz).unwrap();
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        let mut header = tar::Header::new_gnu();
        header.set_path("package/huge.bin").unwrap();
        header.set_entry_type(Regular);
        header.set_size(1 << 30);
        header.set_mode(0o644);
        header.set_cksum();
        std::io::Write::write_all(&mut gz, header.as_bytes()).unwrap();
        std::io::Write::write_all(&mut gz, &[0u8; 4096]).unwrap();
        gz.finish().unwrap();
    }
    assert!(std::fs::metadata(&tgz).unwrap().len() < 4096);
    let (code, _, stderr) = yohost(
        &["add", tgz.to_str().unwrap(), "--to", to, "--yes"],
        top.path(),
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("more than 128 MiB"), "{stderr}");
    assert_eq!(entries(&plugins), Vec::<String>::new());

    // A folder holding a (sparse) file over the bound.
    let folder = top.path().join("big");
    write(&folder, "index.ts", POLICY);
    std::fs::File::create(folder.join("huge.bin"))
        .unwrap()
        .set_len(200 << 20)
        .unwrap();
    let (code, _, stderr) = yohost(
        &["add", folder.to_str().unwrap(), "--to", to, "--yes"],
        top.path(),
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("more than 128 MiB"), "{stderr}");
    assert_eq!(entries(&plugins), Vec::<String>::new());
}

#[test]
fn a_fifo_or_a_link_for_package_json_is_left_out_and_nothing_outside_changes() {
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    let victim = top.path().join("victim.json");
    let victim_text = r#"{"name": "victim", "devDependencies": {"x": "1"}}"#;
    std::fs::write(&victim, victim_text).unwrap();
    for (name, make) in [
        (
            "linked",
            Box::new(|p: &Path| std::os::unix::fs::symlink(&victim, p).unwrap())
                as Box<dyn Fn(&Path)>,
        ),
        (
            "piped",
            Box::new(|p: &Path| {
                let path = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
                // SAFETY: a NUL-terminated path this test owns.
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
            }),
        ),
    ] {
        let folder = top.path().join(name);
        write(&folder, "index.ts", POLICY);
        make(&folder.join("package.json"));
        // `timeout` ends an `add` that would hang on the FIFO.
        let out = Command::new("timeout")
            .arg("60")
            .arg(env!("CARGO_BIN_EXE_yohost"))
            .args([
                "add",
                folder.to_str().unwrap(),
                "--to",
                plugins.to_str().unwrap(),
                "--yes",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{name}: {stdout}");
        assert!(stdout.contains("left out package.json"), "{name}: {stdout}");
        assert!(plugins.join(name).join("index.ts").is_file());
        assert!(!plugins.join(name).join("package.json").exists());
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), victim_text);
}

#[test]
fn a_package_s_own_grants_are_asked_for_and_written_only_as_given() {
    let top = plugin_dir();
    let source = top.path().join("greedy");
    write(&source, "index.ts", POLICY);
    write(
        &source,
        "plugin.toml",
        "[capabilities]\nexec = true\nnetwork = true\nread = [\"/usr\"]\nenv = [\"HOME\"]\n",
    );
    let plugins = top.path().join("plugins");
    let to = plugins.to_str().unwrap();
    let spec = source.to_str().unwrap();
    for flags in [&[][..], &["--yes"], &["--yes", "--allow-exec"]] {
        let mut args = vec!["add", spec, "--to", to];
        args.extend_from_slice(flags);
        let (code, stdout, stderr) = yohost(&args, top.path());
        assert_eq!(code, Some(1), "{flags:?}: {stdout}");
        assert!(!stdout.contains("needs no grants"), "{stdout}");
        for grant in ["exec", "network", "read /usr", "env HOME"] {
            assert!(
                stdout.contains(&format!("  {grant}: its own plugin.toml grants it")),
                "{grant}: {stdout}"
            );
        }
        assert!(stderr.contains("--allow-network"), "{stderr}");
        assert_eq!(entries(&plugins), Vec::<String>::new());
    }
    let (code, stdout, stderr) = yohost(
        &[
            "add",
            spec,
            "--to",
            to,
            "--yes",
            "--allow-exec",
            "--allow-network",
        ],
        top.path(),
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let manifest: toml::Table = std::fs::read_to_string(plugins.join("greedy/plugin.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(manifest["capabilities"]["read"][0].as_str(), Some("/usr"));
}

#[test]
fn npm_reads_no_configuration_of_the_package_and_takes_nothing_off_the_registry() {
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    let to = plugins.to_str().unwrap();
    let ran = top.path().join("evil-git-ran");
    let source = top.path().join("gitdep");
    write(&source, "index.ts", POLICY);
    write(
        &source,
        "evil-git.sh",
        &format!("#!/bin/sh\ntouch {}\n", ran.display()),
    );
    write(&source, ".npmrc", "git=./evil-git.sh\n");
    for (spec, shown) in [
        (
            "git+https://example.invalid/x.git",
            "git+https://example.invalid/x.git",
        ),
        ("file:../../outside", "file:../../outside"),
        ("github:someone/x", "github:someone/x"),
    ] {
        write(
            &source,
            "package.json",
            &format!(r#"{{"name": "gitdep", "dependencies": {{"x": "{spec}"}}}}"#),
        );
        let (code, stdout, stderr) = yohost(
            &["add", source.to_str().unwrap(), "--to", to, "--yes"],
            top.path(),
        );
        assert_eq!(code, Some(1), "{stdout}{stderr}");
        assert!(
            stderr.contains(&format!("take x from `{shown}`")),
            "{stderr}"
        );
        assert!(!ran.exists(), "the package's git ran");
        assert_eq!(entries(&plugins), Vec::<String>::new());
    }
}

#[test]
fn npm_installs_from_the_registry_in_the_sandbox_whatever_the_package_s_npmrc_says() {
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    let source = top.path().join("with-ms");
    write(&source, "index.ts", POLICY);
    // A registry that answers nothing, and a cache outside the stage.
    let cache = top.path().join("moved-cache");
    write(
        &source,
        ".npmrc",
        &format!("registry=http://127.0.0.1:9/\ncache={}\n", cache.display()),
    );
    write(
        &source,
        "package.json",
        r#"{"name": "with-ms", "dependencies": {"ms": "2.1.3"}}"#,
    );
    let (code, stdout, stderr) = add_yes(&source, &plugins, top.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("its .npmrc is not used"), "{stdout}");
    assert!(plugins
        .join("with-ms/node_modules/ms/package.json")
        .is_file());
    assert!(!plugins.join("with-ms/.npmrc").exists());
    assert!(!cache.exists(), "the package's .npmrc moved npm's cache");
}

#[test]
fn remove_takes_a_locked_single_file_plugin_and_its_lock_entry() {
    let plugins = plugin_dir();
    let dir = plugins.path().to_str().unwrap();
    write(plugins.path(), "guard.ts", POLICY);
    write(plugins.path(), "kept.ts", POLICY);
    let (code, _, stderr) = yohost(&["lock", dir], plugins.path());
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stdout, stderr) = yohost(&["remove", "guard", "--from", dir], plugins.path());
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(!plugins.path().join("guard.ts").exists());
    assert!(plugins.path().join("kept.ts").exists());
    let lock = std::fs::read_to_string(plugins.path().join("yohost.lock")).unwrap();
    assert!(!lock.contains("name = \"guard\""), "{lock}");
    let (code, doc) = checked_json(plugins.path(), true);
    assert_eq!(code, Some(0), "{doc}");
    let (code, _, stderr) = yohost(&["remove", "guard", "--from", dir], plugins.path());
    assert_eq!(code, Some(1));
    assert!(stderr.contains("has no plugin `guard`"), "{stderr}");
}

#[test]
fn an_mcp_server_from_a_registry_needs_allow_exec_and_a_spec_that_names_one_package() {
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    let to = plugins.to_str().unwrap();
    let cases: [(&str, bool, &str); 6] = [
        (
            "mcp:npm:@modelcontextprotocol/server-memory@2026.8.31",
            false,
            "--allow-exec",
        ),
        (
            "mcp:cargo:thing",
            true,
            "is not mcp:npm:NAME[@VERSION] or mcp:pypi:NAME[==VERSION]",
        ),
        ("mcp:pypi:../escape", true, "is not NAME or NAME==VERSION"),
        (
            "mcp:pypi:--index-url=http://example.invalid",
            true,
            "is not NAME or NAME==VERSION",
        ),
        (
            "mcp:pypi:thing==1 ; rm",
            true,
            "is not NAME or NAME==VERSION",
        ),
        (
            "mcp:npm:--registry=http://example.invalid",
            true,
            "is not NAME[@VERSION] of the npm registry",
        ),
    ];
    for (spec, allow_exec, says) in cases {
        let mut args = vec!["add", spec, "--to", to];
        if allow_exec {
            args.push("--allow-exec");
        }
        let (code, stdout, stderr) = yohost(&args, top.path());
        assert_eq!(code, Some(1), "{spec}: {stdout}");
        assert!(stderr.contains(says), "{spec}: {stderr}");
        assert!(
            entries(&plugins).is_empty(),
            "{spec} leaves nothing: {:?}",
            entries(&plugins)
        );
    }
}

#[test]
fn import_makes_a_locked_folder_for_each_server_of_another_client_s_file() {
    let top = plugin_dir();
    let plugins = top.path().join("plugins");
    let repo = top.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(plugins.join("taken")).unwrap();
    let file = top.path().join("claude_desktop_config.json");
    write(
        top.path(),
        "claude_desktop_config.json",
        &format!(
            r#"{{
  // as Claude Desktop writes it, with a comment
  "mcpServers": {{
    "memory": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.31", "{repo}"]}},
    "remote": {{"url": "http://127.0.0.1:9/mcp", "headers": {{"Authorization": "Bearer ${{env:YOHOST_IMPORT_TOKEN}}"}}}},
    "taken": {{"command": "node", "args": ["server.js"]}},
    "off": {{"command": "node", "args": ["off.js"], "disabled": true}}
  }}
}}"#,
            repo = repo.display()
        ),
    );
    let (code, stdout, stderr) = yohost(
        &[
            "import",
            file.to_str().unwrap(),
            "--to",
            plugins.to_str().unwrap(),
            "--allow-exec",
            "--allow-network",
            "--yes",
        ],
        top.path(),
    );
    assert_eq!(
        code,
        Some(1),
        "one server is not imported: {stdout}{stderr}"
    );
    assert!(
        stdout.contains("taken is not imported") && stdout.contains("yohost remove taken"),
        "{stdout}"
    );
    assert!(
        stdout.contains("imported 2 of 3 servers"),
        "the disabled one is not counted: {stdout}"
    );
    assert!(
        stdout.contains("memory (mcp, mcp): loaded"),
        "its package is installed beside it: {stdout}"
    );
    let memory = std::fs::read_to_string(plugins.join("memory/plugin.toml")).unwrap();
    assert!(
        memory.contains("exec = true")
            && memory.contains(&format!("read = [\"{}\"]", repo.display())),
        "{memory}"
    );
    let remote = std::fs::read_to_string(plugins.join("remote/plugin.toml")).unwrap();
    assert!(
        remote.contains(r#"network = ["127.0.0.1"]"#)
            && remote.contains(r#"env = ["YOHOST_IMPORT_TOKEN"]"#),
        "{remote}"
    );
    let servers = std::fs::read_to_string(plugins.join("remote/mcp.json")).unwrap();
    assert!(
        servers.contains("${env:YOHOST_IMPORT_TOKEN}"),
        "the entry is kept as written: {servers}"
    );
    assert!(!plugins.join("off").exists());
    let lock = std::fs::read_to_string(plugins.join("yohost.lock")).unwrap();
    assert!(
        lock.contains("source = \"npm:@modelcontextprotocol/server-memory@2026.8.31\"")
            && lock.contains("name = \"remote\""),
        "{lock}"
    );
    assert!(
        entries(&plugins)
            .iter()
            .all(|e| !e.starts_with(".yohost-add-")),
        "no stage is left: {:?}",
        entries(&plugins)
    );
}

/// A pi package that keeps its state in a folder under `~/.pi/` at
/// start-up: `add` finds the folder in its source (without running it),
/// asks for `write` of it, makes it once granted, and the package loads;
/// off a terminal without `--yes`, nothing is added or made.
#[test]
fn add_asks_for_the_state_folder_a_pi_package_writes_at_start_up_and_makes_it() {
    let top = plugin_dir();
    let source = top.path().join("src/keeper");
    write(
        &source,
        "package.json",
        r#"{"name": "keeper", "version": "1.0.0", "type": "module", "pi": {"extensions": ["./index.ts"]}}"#,
    );
    write(
        &source,
        "index.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { homedir } from "node:os";
export default function (pi: ExtensionAPI) {
  const base = join(homedir(), ".pi", "agent", "keeper");
  pi.on("session_start", () => {
    mkdirSync(join(base, "registry"), { recursive: true });
    writeFileSync(join(base, "registry", "me.json"), "{}");
  });
  pi.registerTool({
    name: "kept",
    description: "says where it keeps its state",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: base }] }; },
  });
}
"#,
    );
    let home = top.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [("HOME".to_string(), home.to_str().unwrap().to_string())];
    let plugins = top.path().join("plugins");
    let (spec, to) = (source.to_str().unwrap(), plugins.to_str().unwrap());
    let state = home.join(".pi/agent/keeper");

    let (code, stdout, stderr) = yohost_with(&["add", spec, "--to", to], top.path(), &env);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "write {}: index.ts keeps its state in ~/.pi/agent/keeper (made now if missing)",
            state.display()
        )),
        "{stdout}"
    );
    assert!(stderr.contains("--yes"), "{stderr}");
    assert!(!state.exists(), "nothing is made before it is granted");

    let (code, stdout, stderr) = yohost_with(&["add", spec, "--to", to, "--yes"], top.path(), &env);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(state.is_dir(), "{stdout}");
    assert!(
        stdout.contains("keeper (js, pi): loaded; hooks tools, call_tool; tools kept"),
        "{stdout}"
    );
    let manifest = std::fs::read_to_string(plugins.join("keeper/plugin.toml")).unwrap();
    assert!(
        manifest.contains(&format!("write = [\"{}\"]", state.display())),
        "{manifest}"
    );
}
