//! The one place messages leave for Discord. Every send goes through here, so every message
//! has allowed mentions set to none (LLM text never pings anyone), is split under the length
//! limit without breaking code blocks, carries long output as an attachment, and is retried
//! as Discord documents ([`super::deliver`]). Each channel has its own queue and task, so a
//! channel's messages keep their order and a slow channel does not hold up the others.
//!
//! Besides its approvals and its reply, a run posts at most `discord.max_messages_per_run`
//! messages: results, notices and refusals beyond the budget are held and go out as one
//! message with the rest attached, just before the run's reply (or at its end). A text that would take more than
//! `discord.max_parts_per_text` messages is posted as its start with the whole text attached.
//! Approvals and the reply itself are never held.
//!
//! A streamed answer ([`AgentEvent::ReplyPart`]) is shown as it is written: one message,
//! posted once the answer has been coming for [`DRAFT_FIRST_AFTER`] (an answer written
//! faster goes out whole, as before), then edited as the text grows, one request per
//! [`DRAFT_EVERY`] at most (Discord allows about five edits per five seconds in a channel).
//! The draft continues in further messages as a long reply is split, up to
//! `discord.max_parts_per_text`. The `Reply` then turns those messages into exactly the
//! messages the reply would have been posted as (edited where they differ, the rest posted,
//! any left over deleted), at the same pace; a draft taken back (`DraftDropped`) is deleted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serenity::all::{
    ChannelId, CreateAllowedMentions, CreateAttachment, CreateMessage, EditMessage, Http,
    MessageId, MessageReference,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Duration, Instant};

use super::deliver::{self, Needs, RateLimits, RetryPolicy, SendFailure};
use super::render::{
    MESSAGE_LIMIT, approval_view, describe_call, quoted, settled_message, split_message,
};
use crate::config::DiscordSettings;
use crate::core::agent::{AgentEvent, CallOutcome};
use crate::core::ports::{ApprovalRequest, ApprovalStatus};
use crate::core::risk::Decision;
use crate::core::tools::{Attachment, ToolRegistry};

/// What a channel's task sends.
pub(super) enum Item {
    Event(AgentEvent),
    /// Post an approval with its buttons; answer with the message id, or why nobody can see it.
    Approval(
        ApprovalRequest,
        oneshot::Sender<Result<MessageId, SendFailure>>,
    ),
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

/// How much a run may post, and how sends are retried.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub retry: RetryPolicy,
    pub messages_per_run: usize,
    pub parts_per_text: usize,
}

impl Limits {
    pub fn from_settings(settings: &DiscordSettings) -> Self {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX).max(1);
        Self {
            retry: RetryPolicy::from_settings(settings),
            messages_per_run: count(settings.max_messages_per_run),
            parts_per_text: count(settings.max_parts_per_text),
        }
    }
}

/// Sends for every channel.
pub struct Outbox {
    http: Arc<Http>,
    limits: Limits,
    /// The agent's tools: each call is shown as its tool shows it.
    tools: ToolRegistry,
    /// The rate-limit waits serenity announces, watched by every send in flight.
    rate_limits: Arc<RateLimits>,
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
    pub fn new(http: Arc<Http>, limits: Limits, tools: ToolRegistry) -> Arc<Self> {
        Arc::new(Self {
            rate_limits: Arc::new(RateLimits::new(http.clone())),
            http,
            limits,
            tools,
            queues: Mutex::new(HashMap::new()),
        })
    }

    /// serenity's rate limiter is about to wait (`EventHandler::ratelimit`).
    pub fn rate_limited(&self, info: &serenity::http::RatelimitInfo) {
        self.rate_limits.announce(info);
    }

    pub(super) fn push(&self, channel: ChannelId, item: Item) {
        let Ok(mut queues) = self.queues.lock() else {
            tracing::error!("the outbox lock was poisoned");
            return;
        };
        let sender = queues.entry(channel).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let out = ChannelOut::new(
                self.http.clone(),
                self.rate_limits.clone(),
                channel,
                self.limits,
                self.tools.clone(),
            );
            tokio::spawn(out.serve(rx));
            tx
        });
        if sender.send(item).is_err() {
            tracing::error!(%channel, "the channel's outbox task stopped");
        }
    }
}

/// One message to post (split or attached as needed).
struct Post {
    text: String,
    reply_to: Option<MessageId>,
    files: Vec<Attachment>,
}

impl Post {
    fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            reply_to: None,
            files: Vec::new(),
        }
    }
}

/// The largest file the bot attaches; Discord takes 10 MiB per upload without boosts.
const FILE_LIMIT: usize = 8 * 1024 * 1024;
/// Discord's limit on files per message.
const FILES_PER_MESSAGE: usize = 10;
/// The file a too-long text is attached as, and the one that holds a run's held output.
const TEXT_FILE: &str = "message.txt";
const HELD_FILE: &str = "more-output.txt";

/// A streamed answer is first shown once it has been coming this long.
pub const DRAFT_FIRST_AFTER: Duration = Duration::from_secs(1);
/// A draft's messages take one request (a post or an edit) per this long at most.
pub const DRAFT_EVERY: Duration = Duration::from_secs(1);

/// A streamed answer on its way, and the messages that show it.
struct Live {
    /// The answer so far.
    text: String,
    /// The messages showing it, and what each shows.
    shown: Vec<(MessageId, String)>,
    /// `text` changed since it was last shown.
    dirty: bool,
    /// When the next update may go out.
    next: Instant,
    /// A post or edit failed: the draft is left as it is, and the reply posted as usual.
    failed: bool,
}

impl Live {
    fn new() -> Self {
        Self {
            text: String::new(),
            shown: Vec::new(),
            dirty: false,
            next: Instant::now() + DRAFT_FIRST_AFTER,
            failed: false,
        }
    }

    /// When the draft should be shown again, if it should.
    fn due(&self) -> Option<Instant> {
        (self.dirty && !self.failed && !self.text.trim().is_empty()).then_some(self.next)
    }
}

/// The messages a draft of `text` takes: as the reply would be split, at most `parts`,
/// each with the code block it leaves open closed.
fn draft_parts(text: &str, parts: usize) -> Vec<String> {
    split_message(text, MESSAGE_LIMIT)
        .into_iter()
        .take(parts)
        .map(|mut part| {
            if part.matches("```").count() % 2 == 1 {
                part.push_str("\n```");
            }
            part
        })
        .collect()
}

/// A channel's sending task and what it remembers between items.
struct ChannelOut {
    http: Arc<Http>,
    rate_limits: Arc<RateLimits>,
    channel: ChannelId,
    limits: Limits,
    tools: ToolRegistry,
    trigger: Option<MessageId>,
    /// Auto-run calls wait for their result to be posted together.
    auto_calls: HashMap<String, String>,
    /// Approval id -> its message, to settle it on expiry.
    approvals: HashMap<String, MessageId>,
    /// Messages the current run posted.
    posted: usize,
    /// The current run's output held back once its budget was spent.
    held: Vec<Post>,
    /// The streamed answer being shown, if one is.
    live: Option<Live>,
}

impl ChannelOut {
    fn new(
        http: Arc<Http>,
        rate_limits: Arc<RateLimits>,
        channel: ChannelId,
        limits: Limits,
        tools: ToolRegistry,
    ) -> Self {
        Self {
            http,
            rate_limits,
            channel,
            limits,
            tools,
            trigger: None,
            auto_calls: HashMap::new(),
            approvals: HashMap::new(),
            posted: 0,
            held: Vec::new(),
            live: None,
        }
    }

    async fn serve(mut self, mut rx: mpsc::UnboundedReceiver<Item>) {
        loop {
            let due = self.live.as_ref().and_then(Live::due);
            // Far enough never to come: the branch is off without a draft to show.
            let wake = due.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400));
            let item = tokio::select! {
                item = rx.recv() => item,
                () = tokio::time::sleep_until(wake), if due.is_some() => {
                    self.show_draft().await;
                    continue;
                }
            };
            let Some(item) = item else { break };
            match item {
                Item::Trigger(message) => self.trigger = message,
                Item::Notice(text, reply_to) => {
                    let post = Post {
                        reply_to,
                        ..Post::text(text)
                    };
                    self.send(post).await;
                }
                Item::Approval(request, answer) => {
                    let sent = self.post_approval(&request).await;
                    let _ = answer.send(sent);
                }
                Item::Settle {
                    message,
                    outcome,
                    by,
                } => {
                    settle(
                        &self.http,
                        self.limits.retry,
                        &self.rate_limits,
                        self.channel,
                        message,
                        outcome.as_str(),
                        by.as_deref(),
                    )
                    .await;
                }
                Item::Event(event) => self.on_event(event).await,
            }
        }
    }

    async fn on_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::RunStarted { .. } => {
                self.posted = 0;
                self.held.clear();
                self.live = None;
            }
            AgentEvent::ReplyPart { text, restart } => {
                let live = self.live.get_or_insert_with(Live::new);
                if restart {
                    live.text.clear();
                }
                live.text.push_str(&text);
                live.dirty = true;
            }
            AgentEvent::DraftDropped => self.drop_draft().await,
            AgentEvent::ToolCall {
                call_id,
                tool,
                arguments,
                decision,
                source,
                reason,
            } => {
                let call = describe_call(&self.tools.snapshot(), &tool, &arguments);
                let reason = quoted(&reason);
                match decision {
                    Decision::Auto => {
                        let header =
                            format!("⚙️ `{tool}` ran automatically ({source}: {reason})\n{call}");
                        self.auto_calls.insert(call_id, header);
                    }
                    Decision::Deny => {
                        let text = format!("🚫 `{tool}` was refused ({source}): {reason}\n{call}");
                        self.budgeted(Post::text(text)).await;
                    }
                    Decision::Confirm => {}
                }
            }
            AgentEvent::ToolResult {
                call_id,
                tool,
                chat,
                attachment,
                ..
            } => {
                let header = self
                    .auto_calls
                    .remove(&call_id)
                    .unwrap_or_else(|| format!("⚙️ `{tool}` ran after confirmation"));
                let post = Post {
                    files: attachment.into_iter().collect(),
                    ..Post::text(format!("{header}\n{chat}"))
                };
                self.budgeted(post).await;
            }
            AgentEvent::ApprovalResolved {
                approval_id,
                outcome,
                by,
            } => {
                let message = self.approvals.remove(&approval_id);
                if let Some(message) = message
                    && matches!(outcome, ApprovalStatus::Expired | ApprovalStatus::Abandoned)
                {
                    let retry = self.limits.retry;
                    settle(
                        &self.http,
                        retry,
                        &self.rate_limits,
                        self.channel,
                        message,
                        outcome.as_str(),
                        by.as_deref(),
                    )
                    .await;
                }
            }
            AgentEvent::CallNotRun {
                tool,
                status: CallOutcome::NotRun,
                reason,
                ..
            } => {
                let text = format!("⚠️ `{tool}` did not run: {}", quoted(&reason));
                self.budgeted(Post::text(text)).await;
            }
            AgentEvent::Reply { text } => self.reply(text).await,
            AgentEvent::Error { message } => self.always(format!("⚠️ {message}")).await,
            AgentEvent::Notice { message } => {
                self.budgeted(Post::text(format!("⏳ {message}"))).await;
            }
            AgentEvent::RunFinished { .. } => {
                // The loop answers or takes back every draft; one left means the run broke off.
                self.drop_draft().await;
                self.flush_held().await;
            }
            AgentEvent::RuleCreated {
                rule_id,
                tool,
                summary,
                by,
                expires_at,
            } => {
                let text = format!(
                    "🔓 <@{by}> allowed calls like this to run without asking here until <t:{expires_at}:t>: `{tool}`, {} (rule `{rule_id}`; `/rules` lists them, `/rules revoke {rule_id}` ends it).",
                    quoted(&summary)
                );
                self.send(Post::text(text)).await;
            }
            AgentEvent::ApprovalRequested { .. }
            | AgentEvent::CallNotRun { .. }
            | AgentEvent::ModelUsage { .. } => {}
        }
    }

    /// The reply: the draft's messages made into it, or posted as any text is.
    async fn reply(&mut self, text: String) {
        match self.live.take() {
            Some(live) if !live.shown.is_empty() => self.finish_draft(live, text).await,
            _ => self.always(text).await,
        }
    }

    /// Shows the draft as it stands: each of its messages edited where it changed, new ones
    /// posted (the first replying to the run's message, after what the budget held).
    async fn show_draft(&mut self) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        let mut requests = 0u32;
        for (i, part) in draft_parts(&live.text, self.limits.parts_per_text)
            .into_iter()
            .enumerate()
        {
            let sent = match live.shown.get(i) {
                Some((_, shown)) if *shown == part => continue,
                Some((id, _)) => self.edit_one(*id, part.clone(), Vec::new()).await,
                None => {
                    if i == 0 {
                        self.flush_held().await;
                    }
                    let reply_to = self.trigger.filter(|_| i == 0);
                    self.send_one(part.clone(), reply_to, Vec::new()).await
                }
            };
            requests += 1;
            match sent {
                Ok(id) if i < live.shown.len() => live.shown[i] = (id, part),
                Ok(id) => live.shown.push((id, part)),
                Err(_) => {
                    live.failed = true;
                    break;
                }
            }
        }
        live.dirty = false;
        live.next = Instant::now() + DRAFT_EVERY * requests.max(1);
        self.live = Some(live);
    }

    /// Makes the draft's messages the reply's: the messages `text` is posted as (split, or
    /// its start with the whole attached), each draft message edited where it differs, the
    /// rest posted, draft messages left over deleted.
    async fn finish_draft(&mut self, live: Live, text: String) {
        // The reply's edits keep the draft's pace too.
        tokio::time::sleep_until(live.next).await;
        let mut post = Post {
            reply_to: self.trigger,
            ..Post::text(text)
        };
        let chunks = self.layout(&mut post);
        let count = chunks.len();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let files = if i + 1 == count {
                std::mem::take(&mut post.files)
            } else {
                Vec::new()
            };
            let sent = match live.shown.get(i) {
                Some((_, shown)) if *shown == chunk && files.is_empty() => continue,
                Some((id, _)) => self.edit_one(*id, chunk, files).await.map(|_| ()),
                None => self.send_one(chunk, None, files).await.map(|_| ()),
            };
            if sent.is_err() {
                return;
            }
        }
        for (id, _) in live.shown.iter().skip(count) {
            self.delete_one(*id).await;
        }
    }

    /// Deletes what the draft posted: it was not the answer.
    async fn drop_draft(&mut self) {
        let Some(live) = self.live.take() else {
            return;
        };
        for (id, _) in live.shown {
            self.delete_one(id).await;
        }
    }

    /// The reply or an error: never held; what was held goes out first, in order.
    async fn always(&mut self, text: String) {
        self.flush_held().await;
        let post = Post {
            reply_to: self.trigger,
            ..Post::text(text)
        };
        self.send(post).await;
    }

    /// Output of the run: posted while the run's budget lasts (one message stays free for
    /// the held rest), held after.
    async fn budgeted(&mut self, post: Post) {
        let room = self.limits.messages_per_run.saturating_sub(1);
        if self.held.is_empty() && self.posted + self.parts(&post.text) <= room {
            self.send(post).await;
        } else {
            self.held.push(post);
        }
    }

    /// Posts what the budget held back as one message with one file.
    async fn flush_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let held = std::mem::take(&mut self.held);
        let count = held.len();
        let mut whole = String::new();
        let mut files = Vec::new();
        for post in held {
            if !whole.is_empty() {
                whole.push_str("\n\n----------\n\n");
            }
            whole.push_str(&post.text);
            files.extend(post.files);
        }
        let mut note = format!(
            "📎 This run's other {count} message(s) are in the attached `{HELD_FILE}`, to keep the channel readable (discord.max_messages_per_run = {}).",
            self.limits.messages_per_run
        );
        let room = FILES_PER_MESSAGE - 1;
        if files.len() > room {
            let left: Vec<String> = files.drain(room..).map(|f| f.filename).collect();
            note.push_str(&format!(
                " {} more file(s) did not fit one message: {}; their content is summarised in the file.",
                left.len(),
                left.join(", ")
            ));
        }
        files.insert(0, text_file(HELD_FILE, &whole));
        self.send(Post {
            text: note,
            reply_to: None,
            files,
        })
        .await;
    }

    /// How many messages `text` takes when posted.
    fn parts(&self, text: &str) -> usize {
        let parts = split_message(text, MESSAGE_LIMIT).len().max(1);
        if parts > self.limits.parts_per_text {
            1
        } else {
            parts
        }
    }

    /// Sends a post, split as needed, or as its start with the whole text attached when it
    /// would take more than `parts_per_text` messages. Returns the last message's id.
    async fn send(&mut self, mut post: Post) -> Option<MessageId> {
        let chunks = self.layout(&mut post);
        let count = chunks.len();
        let mut last = None;
        for (i, chunk) in chunks.into_iter().enumerate() {
            let reply_to = post.reply_to.filter(|_| i == 0);
            let files = if i + 1 == count {
                std::mem::take(&mut post.files)
            } else {
                Vec::new()
            };
            match self.send_one(chunk, reply_to, files).await {
                Ok(id) => last = Some(id),
                Err(_) => return last,
            }
        }
        last
    }

    /// The messages `post` is sent as: its text split under the limit, or, when that takes
    /// more than `parts_per_text` messages, its start with the whole text attached (added to
    /// `post.files`, which go with the last message). At least one message, which may be
    /// empty when the post is only files.
    fn layout(&self, post: &mut Post) -> Vec<String> {
        let mut chunks = split_message(&post.text, MESSAGE_LIMIT);
        if chunks.len() > self.limits.parts_per_text {
            let chars = post.text.chars().count();
            let mut start = chunks.swap_remove(0);
            let note = format!(
                "\n… (the whole text, {chars} characters, is in the attached `{TEXT_FILE}`)"
            );
            let keep = MESSAGE_LIMIT.saturating_sub(note.chars().count() + 8);
            if start.chars().count() > keep {
                start = start.chars().take(keep).collect();
            }
            if start.matches("```").count() % 2 == 1 {
                start.push_str("\n```");
            }
            chunks = vec![format!("{start}{note}")];
            post.files.insert(0, text_file(TEXT_FILE, &post.text));
        }
        if chunks.is_empty() {
            chunks.push(String::new());
        }
        chunks
    }

    async fn send_one(
        &mut self,
        content: String,
        reply_to: Option<MessageId>,
        files: Vec<Attachment>,
    ) -> Result<MessageId, SendFailure> {
        let channel = self.channel;
        let mut message = CreateMessage::new().allowed_mentions(no_mentions());
        if !content.is_empty() {
            message = message.content(content);
        }
        if let Some(reply_to) = reply_to {
            // A reply to a message its author deleted meanwhile is sent as a plain message
            // (Discord's default would refuse it, and every later chunk with it).
            let mut reference = MessageReference::from((channel, reply_to));
            reference.fail_if_not_exists = Some(false);
            message = message.reference_message(reference);
        }
        let needs = Needs {
            attach: !files.is_empty(),
            reply: reply_to.is_some(),
        };
        for file in files {
            message = message.add_file(CreateAttachment::bytes(file.bytes, file.filename));
        }
        let http = &self.http;
        let limits = &self.rate_limits;
        let sent = deliver::send(self.limits.retry, limits, channel, needs, "message", || {
            channel.send_message(http, message.clone())
        })
        .await?;
        self.posted += 1;
        Ok(sent.id)
    }

    /// Edits one of the bot's messages to `content` (mentions off), adding `files`.
    async fn edit_one(
        &mut self,
        message: MessageId,
        content: String,
        files: Vec<Attachment>,
    ) -> Result<MessageId, SendFailure> {
        let needs = Needs {
            attach: !files.is_empty(),
            reply: false,
        };
        let mut edit = EditMessage::new()
            .content(content)
            .allowed_mentions(no_mentions());
        for file in files {
            edit = edit.new_attachment(CreateAttachment::bytes(file.bytes, file.filename));
        }
        let (http, channel) = (&self.http, self.channel);
        deliver::send(
            self.limits.retry,
            &self.rate_limits,
            channel,
            needs,
            "message edit",
            || channel.edit_message(http, message, edit.clone()),
        )
        .await
        .map(|edited| edited.id)
    }

    /// Deletes one of the bot's messages; a failure is logged by `deliver`.
    async fn delete_one(&mut self, message: MessageId) {
        let (http, channel) = (&self.http, self.channel);
        let _ = deliver::send(
            self.limits.retry,
            &self.rate_limits,
            channel,
            Needs::PLAIN,
            "message delete",
            || channel.delete_message(http, message),
        )
        .await;
    }

    /// Posts an approval with its buttons (and the whole call attached when it is long).
    async fn post_approval(&mut self, request: &ApprovalRequest) -> Result<MessageId, SendFailure> {
        let expires = request
            .expires_at
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let (content, whole) = approval_view(&self.tools.snapshot(), request, expires);
        let mut message = CreateMessage::new()
            .content(content)
            .allowed_mentions(no_mentions())
            .components(super::approvals::buttons(request));
        let needs = Needs {
            attach: whole.is_some(),
            reply: false,
        };
        if let Some(file) = whole {
            message = message.add_file(CreateAttachment::bytes(file.bytes, file.filename));
        }
        let (http, channel, limits) = (&self.http, self.channel, &self.rate_limits);
        let sent = deliver::send(
            self.limits.retry,
            limits,
            channel,
            needs,
            "approval",
            || channel.send_message(http, message.clone()),
        )
        .await?;
        self.approvals.insert(request.id.clone(), sent.id);
        Ok(sent.id)
    }
}

/// `text` as a file, cut (with a note) to what Discord takes.
fn text_file(name: &str, text: &str) -> Attachment {
    let mut bytes = text.as_bytes().to_vec();
    if bytes.len() > FILE_LIMIT {
        let note = format!(
            "\n\n[cut: the text has {} bytes, more than one file may carry]\n",
            bytes.len()
        );
        let mut end = FILE_LIMIT - note.len();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        bytes.truncate(end);
        bytes.extend_from_slice(note.as_bytes());
    }
    Attachment {
        filename: name.to_owned(),
        bytes,
    }
}

/// Edits an approval message to its settled form and removes its buttons.
pub(super) async fn settle(
    http: &Http,
    retry: RetryPolicy,
    limits: &RateLimits,
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
    // A failure is logged by `deliver` with what to fix; the approval is settled in the store.
    let _ = deliver::send(
        retry,
        limits,
        channel,
        Needs::PLAIN,
        "approval edit",
        || channel.edit_message(http, message, edit.clone()),
    )
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_never_exceeds_what_discord_takes() {
        let small = text_file("a.txt", "hello");
        assert_eq!(small.bytes, b"hello");
        let huge = "é".repeat(FILE_LIMIT);
        let cut = text_file("b.txt", &huge);
        assert!(cut.bytes.len() <= FILE_LIMIT, "{}", cut.bytes.len());
        let text = String::from_utf8(cut.bytes).expect("cut on a character boundary");
        assert!(text.ends_with("more than one file may carry]\n"));
    }
}
