//! A request to the app's user as the JavaScript engines carry it
//! (`{"kind": "confirm", …}`), asked of the app's
//! [`UserInterface`](crate::call::ui::UserInterface) by [`ask`], and the
//! answer in JSON. A request that waits for the person is answered off the
//! engine's thread; a notification and a message to send are handed over at
//! once, on it, so that they reach the app in order, before the call that
//! sent them ends.

use crate::call::ui::{Asker, Headless, NotifyLevel, UserInterface};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// A request as an engine carries it.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum UiRequest {
    Confirm {
        #[serde(default)]
        title: String,
        #[serde(default)]
        message: String,
    },
    Select {
        #[serde(default)]
        title: String,
        options: Vec<String>,
    },
    Input {
        #[serde(default)]
        title: String,
        placeholder: Option<String>,
    },
    Editor {
        #[serde(default)]
        title: String,
        prefill: Option<String>,
    },
    Notify {
        message: String,
        #[serde(default = "info")]
        level: NotifyLevel,
    },
    SendUserMessage {
        text: String,
    },
}

fn info() -> NotifyLevel {
    NotifyLevel::Info
}

impl UiRequest {
    /// Read a request (JSON text); the error is the reply for one that
    /// cannot be read, `{"error": why}`.
    fn read(request: &str) -> Result<UiRequest, String> {
        serde_json::from_str(request)
            .map_err(|e| json!({ "error": format!("a user interface request: {e}") }).to_string())
    }

    /// Whether the answer waits for the person (everything but a
    /// notification and a message to send).
    fn waits(&self) -> bool {
        !matches!(
            self,
            UiRequest::Notify { .. } | UiRequest::SendUserMessage { .. }
        )
    }
}

/// Ask `ui` (headless when `None`) the request `request` (JSON text) on
/// behalf of `plugin` in run `run_id`, and hand the JSON reply to `reply`:
/// on this thread for a request that does not wait for the person, else
/// on a thread of its own. A request that cannot be read, or a thread that
/// cannot start, is an `{"error": why}` reply.
pub(crate) fn ask(
    ui: Option<Arc<dyn UserInterface>>,
    plugin: String,
    run_id: String,
    request: &str,
    reply: impl FnOnce(String) + Send + 'static,
) {
    let request = match UiRequest::read(request) {
        Ok(request) => request,
        Err(why) => return reply(why),
    };
    let waits = request.waits();
    let once = Arc::new(Mutex::new(Some(reply)));
    let answering = Arc::clone(&once);
    let asked = move || {
        let ui: &dyn UserInterface = ui.as_deref().unwrap_or(&Headless);
        let asker = Asker {
            plugin: &plugin,
            run_id: &run_id,
        };
        let answer = answer(ui, asker, request);
        if let Some(reply) = answering.lock().ok().and_then(|mut r| r.take()) {
            reply(answer);
        }
    };
    if !waits {
        return asked();
    }
    if let Err(e) = std::thread::Builder::new()
        .name("yohost-ui".into())
        .spawn(asked)
    {
        let why = json!({ "error": format!("the user interface could not be asked: {e}") });
        if let Some(reply) = once.lock().ok().and_then(|mut r| r.take()) {
            reply(why.to_string());
        }
    }
}

/// Ask `ui` the request `request` on behalf of `asker`; the reply is JSON
/// text, `{"ok": answer}` (a boolean, a string or `null`).
fn answer(ui: &dyn UserInterface, asker: Asker<'_>, request: UiRequest) -> String {
    use UiRequest as Request;
    let answer: Value = match request {
        Request::Confirm { title, message } => ui.confirm(asker, &title, &message).into(),
        Request::Select { title, options } => ui.select(asker, &title, &options).into(),
        Request::Input { title, placeholder } => {
            ui.input(asker, &title, placeholder.as_deref()).into()
        }
        Request::Editor { title, prefill } => ui.editor(asker, &title, prefill.as_deref()).into(),
        Request::Notify { message, level } => {
            ui.notify(asker, &message, level);
            Value::Null
        }
        Request::SendUserMessage { text } => ui.send_user_message(asker, &text).into(),
    };
    json!({ "ok": answer }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Yes;

    impl UserInterface for Yes {
        fn confirm(&self, _: Asker<'_>, _: &str, _: &str) -> bool {
            true
        }

        fn select(&self, _: Asker<'_>, _: &str, options: &[String]) -> Option<String> {
            options.last().cloned()
        }
    }

    /// What `ask` replies to `request` from `ui`, and whether it replied
    /// before returning (on this thread).
    fn asked(ui: Option<Arc<dyn UserInterface>>, request: &str) -> (String, bool) {
        let (tx, rx) = std::sync::mpsc::channel();
        ask(ui, "gate".into(), "r1".into(), request, move |r| {
            let _ = tx.send(r);
        });
        let at_once = rx.try_recv().ok();
        let inline = at_once.is_some();
        (at_once.unwrap_or_else(|| rx.recv().unwrap()), inline)
    }

    #[test]
    fn requests_reach_the_interface_and_answers_come_back_as_json() {
        let yes = || Some(Arc::new(Yes) as Arc<dyn UserInterface>);
        let confirm = r#"{"kind":"confirm","title":"Run?","message":"rm -rf"}"#;
        assert_eq!(asked(yes(), confirm).0, r#"{"ok":true}"#);
        assert_eq!(asked(None, confirm).0, r#"{"ok":false}"#);
        let select = r#"{"kind":"select","title":"Which?","options":["a","b"]}"#;
        assert_eq!(asked(yes(), select).0, r#"{"ok":"b"}"#);
        assert_eq!(asked(None, select).0, r#"{"ok":null}"#);
        let send = r#"{"kind":"send_user_message","text":"go on"}"#;
        assert_eq!(asked(None, send), (r#"{"ok":false}"#.into(), true));
        let notify = r#"{"kind":"notify","message":"hi","level":"warning"}"#;
        assert_eq!(asked(yes(), notify), (r#"{"ok":null}"#.into(), true));
    }

    #[test]
    fn a_request_that_cannot_be_read_is_an_error_naming_why() {
        let (reply, _) = asked(None, r#"{"kind":"paint"}"#);
        assert!(
            reply.starts_with(r#"{"error":"a user interface request: "#),
            "{reply}"
        );
    }
}
