//! A `tools/call`'s progress, passed on: a call whose caller listens
//! (`CallLimits::progress`) is sent with a `_meta.progressToken` of its
//! own, and each `notifications/progress` the server sends for that token
//! reaches the listener as a message (`"50/100: copying"`, or `"50"`),
//! within the host's bounds ([`ProgressReporter`]).
//!
//! The notifications are routed as the transport reads them ([`Routed`]),
//! in the order the server sent them and before the call's answer that
//! follows them: rmcp hands notifications to the client's handler on tasks
//! of their own, which may run after the answer has ended the call. A
//! `notifications/tools/list_changed` is counted there too, so a server
//! that says its tools changed before it answers a call has it seen by
//! the next run, however late rmcp's task runs. A token no call listens
//! for (ended, or never ours) is dropped.

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, NumberOrString, ProgressNotificationParam, ProgressToken, ServerJsonRpcMessage,
    ServerNotification,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use yoagent::ProgressFn;
use yohost::adapter::progress::ProgressReporter;

/// The listeners of one connection's calls, by progress token.
#[derive(Clone, Default)]
pub(crate) struct Progress(Arc<Mutex<Listeners>>);

#[derive(Default)]
struct Listeners {
    /// The number of the next token.
    next: u64,
    by_token: HashMap<ProgressToken, ProgressReporter>,
}

impl Progress {
    fn lock(&self) -> MutexGuard<'_, Listeners> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Listen for one call's progress with `sink`, until the returned
    /// [`Listening`] is dropped; its token goes in the call's `_meta`.
    pub(crate) fn listen(&self, sink: ProgressFn) -> Listening {
        let mut listeners = self.lock();
        listeners.next += 1;
        let token = ProgressToken(NumberOrString::String(
            format!("yohost-{}", listeners.next).into(),
        ));
        let listener = ProgressReporter::new(sink);
        listeners.by_token.insert(token.clone(), listener);
        Listening {
            progress: self.clone(),
            token,
        }
    }

    /// Pass one notification to its call's listener, within the call's
    /// bounds. The listener is called with the lock held, so none is called
    /// once its [`Listening`] is dropped: it must not block.
    fn pass(&self, params: &ProgressNotificationParam) {
        if let Some(listener) = self.lock().by_token.get(&params.progress_token) {
            listener.report(&message(params));
        }
    }
}

/// A notification as a message: `progress[/total][: message]`.
fn message(params: &ProgressNotificationParam) -> String {
    let mut text = params.progress.to_string();
    if let Some(total) = params.total {
        text += &format!("/{total}");
    }
    if let Some(message) = &params.message {
        text += &format!(": {message}");
    }
    text
}

/// One call listening for its progress; it stops when dropped.
pub(crate) struct Listening {
    progress: Progress,
    token: ProgressToken,
}

impl Listening {
    /// The call's progress token.
    pub(crate) fn token(&self) -> ProgressToken {
        self.token.clone()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.progress.lock().by_token.remove(&self.token);
    }
}

/// A transport whose progress notifications are routed to their calls'
/// listeners as they are read, whose tool list changes are counted as
/// they are read, and whose `tools/call` requests carry the token their
/// caller chose.
pub(crate) struct Routed<T> {
    inner: T,
    progress: Progress,
    list_changes: Arc<AtomicU64>,
}

impl<T> Routed<T> {
    /// `inner`, routing to `progress` and counting in `list_changes`.
    pub(crate) fn new(inner: T, progress: &Progress, list_changes: &Arc<AtomicU64>) -> Self {
        Self {
            inner,
            progress: progress.clone(),
            list_changes: Arc::clone(list_changes),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Routed<T> {
    type Error = T::Error;

    /// rmcp gives every request a progress token of its own, which wins
    /// over the params' `_meta`: a `tools/call` whose params carry one (a
    /// listener's, from [`Progress::listen`]) is sent with that one.
    fn send(
        &mut self,
        mut item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(JsonRpcRequest { request, .. }) = &mut item {
            let chosen = match &*request {
                ClientRequest::CallToolRequest(call) => call.params.meta.as_ref(),
                _ => None,
            };
            if let Some(token) = chosen.and_then(|meta| meta.get_progress_token()) {
                request.get_meta_mut().set_progress_token(token);
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Notification(JsonRpcNotification { notification, .. })) =
            &message
        {
            match notification {
                ServerNotification::ProgressNotification(progress) => {
                    self.progress.pass(&progress.params)
                }
                ServerNotification::ToolListChangedNotification(_) => {
                    self.list_changes.fetch_add(1, Ordering::SeqCst);
                }
                _ => {}
            }
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;
    use yohost::adapter::progress::MAX_MESSAGES;

    fn notification(token: &ProgressToken, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token.clone(), progress)
    }

    #[test]
    fn a_message_names_what_the_server_sent() {
        let token = ProgressToken(NumberOrString::Number(1));
        let mut params = notification(&token, 50.0);
        assert_eq!(message(&params), "50");
        params.total = Some(100.0);
        assert_eq!(message(&params), "50/100");
        params.message = Some("copying".into());
        assert_eq!(message(&params), "50/100: copying");
    }

    #[test]
    fn a_flood_of_progress_is_bounded_and_ends_with_the_call() {
        let progress = Progress::default();
        let got = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&got);
        let listening = progress.listen(Arc::new(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        }));
        let other = progress.listen(Arc::new(|_| panic!("another call's listener")));
        assert_ne!(listening.token(), other.token());
        for n in 0..100_000 {
            progress.pass(&notification(&listening.token(), f64::from(n)));
        }
        assert_eq!(got.load(Ordering::SeqCst), MAX_MESSAGES);
        let token = listening.token();
        drop(listening);
        progress.pass(&notification(&token, 1.0));
        assert_eq!(got.load(Ordering::SeqCst), MAX_MESSAGES);
        drop(other);
        assert!(progress.lock().by_token.is_empty());
    }

    /// A server's messages, read in turn.
    struct Script(std::vec::IntoIter<ServerJsonRpcMessage>);

    impl Transport<RoleClient> for Script {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: ClientJsonRpcMessage,
        ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
            self.0.next()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_tool_list_change_is_counted_as_it_is_read_before_the_answer_after_it() {
        let messages = [
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
        ];
        let messages: Vec<ServerJsonRpcMessage> = messages
            .into_iter()
            .map(|m| serde_json::from_value(m).expect("a server message"))
            .collect();
        let list_changes = Arc::new(AtomicU64::new(0));
        let mut routed = Routed::new(
            Script(messages.into_iter()),
            &Progress::default(),
            &list_changes,
        );
        assert!(routed.receive().await.is_some());
        assert_eq!(list_changes.load(Ordering::SeqCst), 1);
        assert!(routed.receive().await.is_some());
        assert_eq!(list_changes.load(Ordering::SeqCst), 1);
    }
}
