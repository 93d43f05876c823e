//! The one place messages leave for Discord. Every send goes through here, so every message
//! has allowed mentions set to none (LLM text never pings anyone), is split under the length
//! limit without breaking code blocks, and carries long output as an attachment. Each channel
//! has its own queue and task, so a channel's messages keep their order and a slow channel
//! does not hold up the others.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serenity::all::{
    ChannelId, CreateAllowedMentions, CreateAttachment, CreateMessage, EditMessage, Http,
    MessageId, MessageReference,
};
use tokio::sync::{mpsc, oneshot};

use super::render::{MESSAGE_LIMIT, approval_view, describe_call, settled_message, split_message};
use crate::core::agent::AgentEvent;
use crate::core::ports::ApprovalRequest;
use crate::core::tools::Attachment;

/// What a channel's task sends.
pub(super) enum Item {
    Event(AgentEvent),
    /// Post an approval with its buttons; answer with the message id.
    Approval(ApprovalRequest, oneshot::Sender<Option<MessageId>>),
    /// A short notice that replies to a message (e.g. "busy").
    Notice(String, Option<MessageId>),
    /// The message a run answers.
    Trigger(Option<MessageId>),
    /// Edit an approval message to its settled form.
    Settle {
        message: MessageId,
        outcome: String,
        by: Option<String>,
    },
}

/// Sends for every channel.
pub struct Outbox {
    http: Arc<Http>,
    queues: Mutex<HashMap<ChannelId, mpsc::UnboundedSender<Item>>>,
}

/// No mentions at all: not users, roles, @everyone, nor the replied-to author.
pub fn no_mentions() -> CreateAllowedMentions {
    CreateAllowedMentions::new()
        .empty_users()
        .empty_roles()
        .everyone(false)
        .replied_user(false)
}

impl Outbox {
    pub fn new(http: Arc<Http>) -> Arc<Self> {
        Arc::new(Self {
            http,
            queues: Mutex::new(HashMap::new()),
        })
    }

    pub(super) fn push(&self, channel: ChannelId, item: Item) {
        let Ok(mut queues) = self.queues.lock() else {
            tracing::error!("the outbox lock was poisoned");
            return;
        };
        let sender = queues.entry(channel).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(channel_task(self.http.clone(), channel, rx));
            tx
        });
        if sender.send(item).is_err() {
            tracing::error!(%channel, "the channel's outbox task stopped");
        }
    }
}

/// Sends `text` (split as needed) with an optional attachment on the last part.
pub(super) async fn send_text(
    http: &Http,
    channel: ChannelId,
    text: &str,
    reply_to: Option<MessageId>,
    attachment: Option<&Attachment>,
) -> Option<MessageId> {
    let chunks = split_message(text, MESSAGE_LIMIT);
    let count = chunks.len().max(1);
    let mut last = None;
    for (i, chunk) in chunks
        .into_iter()
        .chain(std::iter::once(String::new()))
        .take(count)
        .enumerate()
    {
        let mut message = CreateMessage::new().allowed_mentions(no_mentions());
        if !chunk.is_empty() {
            message = message.content(chunk);
        }
        if i == 0
            && let Some(reply_to) = reply_to
        {
            // A reply to a message its author deleted meanwhile is sent as a plain message
            // (Discord's default would refuse it, and every later chunk with it).
            let mut reference = MessageReference::from((channel, reply_to));
            reference.fail_if_not_exists = Some(false);
            message = message.reference_message(reference);
        }
        if i + 1 == count
            && let Some(file) = attachment
        {
            message = message.add_file(CreateAttachment::bytes(
                file.bytes.clone(),
                file.filename.clone(),
            ));
        }
        match channel.send_message(http, message).await {
            Ok(sent) => last = Some(sent.id),
            Err(e) => {
                tracing::error!(%channel, error = %e, "a message could not be sent");
                return last;
            }
        }
    }
    last
}

async fn channel_task(http: Arc<Http>, channel: ChannelId, mut rx: mpsc::UnboundedReceiver<Item>) {
    let mut trigger: Option<MessageId> = None;
    // Auto-run calls wait for their result to be posted together.
    let mut auto_calls: HashMap<String, String> = HashMap::new();
    // Approval id -> (message, content), to settle messages on expiry.
    let mut approvals: HashMap<String, (MessageId, String)> = HashMap::new();
    while let Some(item) = rx.recv().await {
        match item {
            Item::Trigger(message) => trigger = message,
            Item::Notice(text, reply_to) => {
                send_text(&http, channel, &text, reply_to, None).await;
            }
            Item::Approval(request, answer) => {
                let expires = request
                    .expires_at
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let (content, whole) = approval_view(&request, expires);
                let mut message = CreateMessage::new()
                    .content(content)
                    .allowed_mentions(no_mentions())
                    .components(super::approvals::buttons(&request.id));
                if let Some(file) = whole {
                    message = message.add_file(CreateAttachment::bytes(file.bytes, file.filename));
                }
                let sent = match channel.send_message(&http, message).await {
                    Ok(sent) => {
                        approvals.insert(request.id.clone(), (sent.id, sent.content.clone()));
                        Some(sent.id)
                    }
                    Err(e) => {
                        tracing::error!(%channel, error = %e, "the approval message could not be sent");
                        None
                    }
                };
                let _ = answer.send(sent);
            }
            Item::Settle {
                message,
                outcome,
                by,
            } => {
                settle(&http, channel, message, &outcome, by.as_deref()).await;
            }
            Item::Event(event) => match event {
                AgentEvent::ToolCall {
                    call_id,
                    tool,
                    arguments,
                    decision,
                    source,
                    reason,
                } => match decision.as_str() {
                    "auto" => {
                        auto_calls.insert(
                            call_id,
                            format!(
                                "⚙️ `{tool}` ran automatically ({source}: {reason})\n{}",
                                describe_call(&tool, &arguments)
                            ),
                        );
                    }
                    "deny" => {
                        let text = format!(
                            "🚫 `{tool}` was refused ({source}): {reason}\n{}",
                            describe_call(&tool, &arguments)
                        );
                        send_text(&http, channel, &text, None, None).await;
                    }
                    _ => {}
                },
                AgentEvent::ToolResult {
                    call_id,
                    tool,
                    chat,
                    attachment,
                    ..
                } => {
                    let header = auto_calls
                        .remove(&call_id)
                        .unwrap_or_else(|| format!("⚙️ `{tool}` ran after confirmation"));
                    let text = format!("{header}\n{chat}");
                    send_text(&http, channel, &text, None, attachment.as_ref()).await;
                }
                AgentEvent::ApprovalResolved {
                    approval_id,
                    outcome,
                    by,
                } => {
                    if matches!(outcome.as_str(), "expired" | "abandoned")
                        && let Some((message, _)) = approvals.remove(&approval_id)
                    {
                        settle(&http, channel, message, &outcome, by.as_deref()).await;
                    } else {
                        approvals.remove(&approval_id);
                    }
                }
                AgentEvent::CallNotRun {
                    tool,
                    status,
                    reason,
                    ..
                } if status == "not_run" => {
                    send_text(
                        &http,
                        channel,
                        &format!("⚠️ `{tool}` did not run: {reason}"),
                        None,
                        None,
                    )
                    .await;
                }
                AgentEvent::Reply { text } => {
                    send_text(&http, channel, &text, trigger, None).await;
                }
                AgentEvent::Error { message } => {
                    send_text(&http, channel, &format!("⚠️ {message}"), trigger, None).await;
                }
                AgentEvent::Notice { message } => {
                    send_text(&http, channel, &format!("⏳ {message}"), None, None).await;
                }
                AgentEvent::RunStarted { .. }
                | AgentEvent::RunFinished { .. }
                | AgentEvent::ApprovalRequested { .. }
                | AgentEvent::CallNotRun { .. } => {}
            },
        }
    }
}

/// Edits an approval message to its settled form and removes its buttons.
pub(super) async fn settle(
    http: &Http,
    channel: ChannelId,
    message: MessageId,
    outcome: &str,
    by: Option<&str>,
) {
    let original = match channel.message(http, message).await {
        Ok(m) => m.content,
        Err(_) => String::new(),
    };
    let edit = EditMessage::new()
        .content(settled_message(&original, outcome, by))
        .components(Vec::new())
        .allowed_mentions(no_mentions());
    if let Err(e) = channel.edit_message(http, message, edit).await {
        tracing::warn!(%channel, %message, error = %e, "an approval message could not be edited");
    }
}
