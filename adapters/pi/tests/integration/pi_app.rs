//! The app surface an embedding app offers its user, through the
//! `PluginHost` API: commands are listed and run (`/pirate` turns pirate's
//! mode on, and the next run's model request carries its note), flags are
//! listed with their defaults, and a [`UserInterface`] answers `ctx.ui`'s
//! dialogs (pi's permission gate asks and lets the call through or blocks
//! it), receives notifications and `pi.sendUserMessage`. Headless, the
//! gate blocks, and a message is not sent, said in a warning, without
//! failing the tool that sent it. Both engines: embedded, and Node.

use crate::package::{examples, link_copy};
use crate::support::*;
use serde_json::json;
use std::path::Path;
use std::sync::{Arc, Mutex};
use yohost::{Asker, NotifyLevel, PluginHost, UserInterface};

/// A person who answers from a script, and whose screen is recorded.
#[derive(Default)]
struct Person {
    /// The answer to every select, by title fragment: the option chosen.
    choose: Option<&'static str>,
    /// Whether they confirm.
    confirms: bool,
    /// What they type into `input`.
    types: Option<&'static str>,
    /// Everything they were shown, in order, with the asker's plugin and
    /// run id.
    screen: Mutex<Vec<String>>,
}

impl Person {
    fn saw(&self, asker: Asker<'_>, what: String) {
        let line = format!("{} [{}] {what}", asker.plugin, asker.run_id);
        self.screen.lock().unwrap().push(line);
    }

    fn screen(&self) -> Vec<String> {
        self.screen.lock().unwrap().clone()
    }
}

impl UserInterface for Person {
    fn confirm(&self, asker: Asker<'_>, title: &str, message: &str) -> bool {
        self.saw(asker, format!("confirm {title}: {message}"));
        self.confirms
    }

    fn select(&self, asker: Asker<'_>, title: &str, options: &[String]) -> Option<String> {
        self.saw(asker, format!("select {title} {options:?}"));
        self.choose.map(String::from)
    }

    fn input(&self, asker: Asker<'_>, title: &str, _: Option<&str>) -> Option<String> {
        self.saw(asker, format!("input {title}"));
        self.types.map(String::from)
    }

    fn notify(&self, asker: Asker<'_>, message: &str, level: NotifyLevel) {
        self.saw(asker, format!("notify {level:?}: {message}"));
    }

    fn send_user_message(&self, asker: Asker<'_>, text: &str) -> bool {
        self.saw(asker, format!("send {text}"));
        true
    }
}

/// pi's `pirate` and `permission-gate` examples, and an extension of the
/// test's own with a flag, a command that asks, and a tool that sends a
/// message as the user; on Node when `node` is set.
fn app_dir(node: bool) -> tempfile::TempDir {
    let dir = plugin_dir();
    for name in ["pirate", "permission-gate"] {
        let from = examples().join(format!("{name}.ts"));
        link_copy(&from, &dir.path().join(format!("{name}.ts"))).unwrap();
    }
    let folder = dir.path().join("asker");
    std::fs::create_dir(&folder).unwrap();
    if node {
        write(&folder, "plugin.toml", "engine = \"node\"\n");
    }
    write(
        &folder,
        "index.ts",
        r#"import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerFlag("plan", { description: "Plan before acting", type: "boolean", default: false });
  pi.registerCommand("greet", {
    description: "Greet someone",
    handler: async (args, ctx) => {
      const name = await ctx.ui.input("Whom?", "a name");
      const sure = await ctx.ui.confirm("Greet?", `Greet ${name} ${args}?`);
      ctx.ui.notify(sure && ctx.hasUI ? `hello ${name} ${args} (plan: ${pi.getFlag("plan")})` : "not greeted", "warning");
    },
  });
  pi.registerTool({
    name: "follow_up",
    label: "Follow up",
    description: "Sends a follow-up as the user",
    parameters: { type: "object", properties: {} },
    async execute() {
      pi.sendUserMessage("and now the tests");
      return { content: [{ type: "text", text: "follow-up queued" }] };
    },
  });
}
"#,
    );
    dir
}

fn open_asking(dir: &Path, ui: Option<Arc<Person>>) -> PluginHost {
    let mut builder = PluginHost::builder(dir)
        .adapter(yohost_adapter_pi::adapter())
        .adapter(yohost_adapter_pi::node_adapter());
    if let Some(ui) = ui {
        builder = builder.user_interface(ui);
    }
    let host = builder.open().expect("the directory opens");
    assert!(host.refused().is_empty(), "{:?}", host.refused());
    host
}

async fn commands_and_flags_are_offered_and_a_command_asks_the_user(node: bool) {
    let dir = app_dir(node);
    let person = Arc::new(Person {
        confirms: true,
        types: Some("Ada"),
        ..Person::default()
    });
    let host = open_asking(dir.path(), Some(Arc::clone(&person)));
    let commands: Vec<(String, String)> = host
        .commands()
        .into_iter()
        .map(|c| (c.plugin, c.name))
        .collect();
    assert_eq!(
        commands,
        [
            ("asker".to_string(), "greet".to_string()),
            ("pirate".to_string(), "pirate".to_string())
        ]
    );
    let report = host.report().await;
    let asker = reported(&report, "asker");
    assert_eq!(asker.app.flags.len(), 1);
    assert_eq!(
        (
            asker.app.flags[0].name.as_str(),
            &asker.app.flags[0].default
        ),
        ("plan", &json!(false))
    );
    assert!(asker.warnings.is_empty(), "{:?}", asker.warnings);
    host.run_command("greet", "  and welcome ").await.unwrap();
    let screen = person.screen();
    assert_eq!(screen.len(), 3, "{screen:?}");
    assert!(screen[0].starts_with("asker [command-") && screen[0].ends_with("input Whom?"));
    assert!(screen[1].ends_with("confirm Greet?: Greet Ada and welcome?"));
    assert!(screen[2].ends_with("notify Warning: hello Ada and welcome (plan: false)"));
    let unknown = host.run_command("gret", "").await.unwrap_err().to_string();
    assert_eq!(
        unknown,
        "no plugin offers the command `/gret` (offered: greet, pirate)"
    );
}

#[tokio::test]
async fn commands_and_flags_are_offered_and_a_command_asks_the_user_on_the_embedded_engine() {
    commands_and_flags_are_offered_and_a_command_asks_the_user(false).await;
}

#[tokio::test]
async fn commands_and_flags_are_offered_and_a_command_asks_the_user_on_node() {
    if let Some(why) = node_missing() {
        eprintln!("skipped: {why}");
        return;
    }
    commands_and_flags_are_offered_and_a_command_asks_the_user(true).await;
}

#[tokio::test]
async fn a_command_changes_what_the_next_run_sends_the_model() {
    let dir = app_dir(false);
    let person = Arc::new(Person::default());
    let host = open_asking(dir.path(), Some(Arc::clone(&person)));
    let first_request = |host: &PluginHost| {
        let extension = host.extension();
        async move {
            let (agent, requests) = scripted(vec![text("ok")]);
            let mut agent = agent.with_extension(extension);
            run(&mut agent, "hi").await;
            let first = last_user_text(&requests.lock().unwrap()[0]);
            first
        }
    };
    assert!(!first_request(&host).await.contains("PIRATE MODE"));
    host.run_command("pirate", "").await.unwrap();
    assert!(person.screen()[0].ends_with("notify Info: Arrr! Pirate mode enabled!"));
    assert!(first_request(&host).await.contains("PIRATE MODE"));
}

/// pi's permission gate on a dangerous `bash` call, through a real agent:
/// the user's choice decides, and headless it blocks.
async fn gate(person: Option<Person>) -> (String, bool, Vec<String>) {
    let dir = app_dir(false);
    let person = person.map(Arc::new);
    let host = open_asking(dir.path(), person.clone());
    let (agent, bash) = scripted_bash(vec![
        call("bash", json!({"command": "sudo ls"})),
        text("done"),
    ]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "list").await);
    let screen = person.map(|p| p.screen()).unwrap_or_default();
    (results[0].1.clone(), !bash.commands().is_empty(), screen)
}

#[tokio::test]
async fn the_permission_gate_asks_the_user_and_does_what_they_chose() {
    let (_, ran, screen) = gate(Some(Person {
        choose: Some("Yes"),
        ..Person::default()
    }))
    .await;
    assert!(ran, "the user allowed it");
    assert_eq!(screen.len(), 1, "{screen:?}");
    assert!(
        screen[0].starts_with("permission-gate [")
            && screen[0].contains("Dangerous command:\n\n  sudo ls")
            && screen[0].ends_with(r#"["Yes", "No"]"#),
        "{screen:?}"
    );
    let (result, ran, _) = gate(Some(Person {
        choose: Some("No"),
        ..Person::default()
    }))
    .await;
    assert!(!ran && result.contains("Blocked by user"), "{result}");
    let (result, ran, _) = gate(None).await;
    assert!(
        !ran && result.contains("Dangerous command blocked (no UI for confirmation)"),
        "{result}"
    );
}

#[tokio::test]
async fn send_user_message_goes_to_the_app_and_headless_it_is_a_warning() {
    let dir = app_dir(false);
    let person = Arc::new(Person::default());
    let host = open_asking(dir.path(), Some(Arc::clone(&person)));
    let (agent, _) = scripted(vec![call("follow_up", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(results[0].1, "follow-up queued");
    assert!(
        person
            .screen()
            .iter()
            .any(|l| l.ends_with("send and now the tests")),
        "{:?}",
        person.screen()
    );

    let (logs, _guard) = capture_logs();
    let host = open_asking(dir.path(), None);
    let (agent, _) = scripted(vec![call("follow_up", json!({})), text("done")]);
    let mut agent = agent.with_extension(host.extension());
    let results = tool_results(&run(&mut agent, "go").await);
    assert_eq!(
        (results[0].1.as_str(), results[0].2),
        ("follow-up queued", false)
    );
    let warned = lines_with(&logs, "plugin", "asker").iter().any(|l| {
        l["fields"]["message"].as_str().is_some_and(|m| {
            m.contains("pi.sendUserMessage: not sent, the host has no user interface (headless)")
        }) && l["fields"]["run_id"].is_string()
    });
    assert!(warned, "{:?}", logs.lines());
}
