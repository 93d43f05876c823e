//! The messages of one run: everything the model is sent while the run goes on, and the
//! part later runs read.
//!
//! A reply that could not be used, and the correction that answered it, matter only to the
//! run that got them: kept, they taught a small model its own mistakes and carried them
//! into every later request. They are sent during the run and left out of the history. A
//! run that stopped before an answer ends its history with a note saying so, so the
//! conversation still alternates, and its calls still pair with results
//! ([`super::history::repaired`]) however it stopped.

use super::history;
use crate::core::message::ChatMessage;

/// This run's messages, the person's message first.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct RunMessages {
    messages: Vec<ChatMessage>,
    /// Per message: sent during this run only.
    transient: Vec<bool>,
    /// The channel's earlier conversation is left out of this run's requests because the
    /// server said they were longer than the model's context window. The store keeps it:
    /// only this run (also when it resumes after a restart) sends less.
    #[serde(default, alias = "history_dropped")]
    pub history_left_out: bool,
}

impl RunMessages {
    pub(super) fn new(first: ChatMessage) -> Self {
        Self {
            messages: vec![first],
            transient: vec![false],
            history_left_out: false,
        }
    }

    /// A message later runs read too.
    pub(super) fn push(&mut self, message: ChatMessage) {
        self.messages.push(message);
        self.transient.push(false);
    }

    /// A message sent during this run only.
    pub(super) fn push_transient(&mut self, message: ChatMessage) {
        self.messages.push(message);
        self.transient.push(true);
    }

    pub(super) fn len(&self) -> usize {
        self.messages.len()
    }

    /// Everything from `start` on is for this run only (an exchange none of whose calls
    /// could be used).
    pub(super) fn transient_from(&mut self, start: usize) {
        for flag in self.transient.iter_mut().skip(start) {
            *flag = true;
        }
    }

    /// Whether nothing but the person's message would be kept (no call of the run ran or
    /// was answered).
    pub(super) fn only_the_question(&self) -> bool {
        self.transient.iter().skip(1).all(|transient| *transient)
    }

    /// Everything, as the model is sent it during the run.
    pub(super) fn all(&self) -> &[ChatMessage] {
        &self.messages
    }

    /// What is kept of the run: its messages, each call paired with a result, and
    /// `stop_note` as riskgate's notice when the run ended without an answer (kept, never
    /// sent to the model: see [`history::said`]).
    pub(super) fn for_history(&self, stop_note: Option<String>) -> Vec<ChatMessage> {
        let mut kept: Vec<ChatMessage> = self
            .messages
            .iter()
            .zip(&self.transient)
            .filter(|(_, transient)| !**transient)
            .map(|(message, _)| message.clone())
            .collect();
        if let Some(note) = stop_note {
            kept.push(ChatMessage::notice(note));
        }
        history::repaired(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::{CallRecord, Role};

    #[test]
    fn corrections_stay_in_the_run_and_a_stop_leaves_whole_pairs_and_a_note() {
        let mut run = RunMessages::new(ChatMessage::user(Some("ann"), "q"));
        run.push_transient(ChatMessage::assistant("garbage"));
        run.push_transient(ChatMessage::user(None, "that could not be used"));
        let exchange = run.len();
        run.push(ChatMessage::assistant_calls(
            None,
            vec![CallRecord {
                id: "c1".into(),
                name: "t".into(),
                arguments: "{}".into(),
            }],
        ));
        run.push(ChatMessage::tool_result("c1", "error"));
        run.transient_from(exchange);
        run.push(ChatMessage::assistant_calls(
            None,
            vec![CallRecord {
                id: "c2".into(),
                name: "t".into(),
                arguments: "{}".into(),
            }],
        ));
        // The run stopped before c2's result.
        assert_eq!(run.all().len(), 6);
        let kept = run.for_history(Some("(stopped)".into()));
        let roles: Vec<Role> = kept.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![Role::User, Role::Assistant, Role::Tool, Role::Notice]
        );
        assert_eq!(kept[2].tool_call_id.as_deref(), Some("c2"));
        assert_eq!(kept[3].content.as_deref(), Some("(stopped)"));
    }
}
