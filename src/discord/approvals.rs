//! Approvals in Discord: a message with Confirm / Cancel buttons, clicks authorised and
//! decided exactly once in the store, and the waiting run told through the [`ApprovalHub`].
//!
//! A click decides only the approval of the message it was made on: the approval its
//! button names must be stored with that very channel and message ([`binding`]), else the
//! clicker is told so privately and nothing changes. A decision made by another process
//! sharing the store (a click another shard handled) reaches a run waiting here through
//! [`watch_decisions`], within `store.approval_watch_ms`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serenity::all::{
    ActionRowComponent, ButtonStyle, ChannelId, ComponentInteraction, Context, CreateActionRow,
    CreateButton, CreateInputText, CreateInteractionResponse, CreateInteractionResponseFollowup,
    CreateInteractionResponseMessage, CreateModal, EditMessage, InputTextStyle, MessageId,
    ModalInteraction,
};
use tokio::sync::oneshot;

use super::outbox::{Item, Outbox, no_mentions};
use super::render::{ButtonAction, allow_label, custom_id, parse_custom_id, settled_message};
use crate::core::ports::{
    ApprovalOutcome, ApprovalRecord, ApprovalRequest, ApprovalStatus, ApprovalSurface, Decided,
    Store,
};
use crate::core::rules::ALLOW_SIMILAR_NOTE;
use crate::core::tools::BoxFuture;

/// Runs waiting for a person, by approval id. A run stays listed until its wait ends (the
/// registration is dropped), also after a click told it: a second click then still sees
/// that a run here has it.
#[derive(Default)]
pub struct ApprovalHub {
    /// The sender is taken by the first click that tells the run.
    waiting: Mutex<HashMap<String, Option<oneshot::Sender<ApprovalOutcome>>>>,
}

/// A run's place in the hub, for as long as it waits (dropped with the wait, also when the
/// wait is cut short).
struct Waiting<'h> {
    hub: &'h ApprovalHub,
    id: String,
    answer: oneshot::Receiver<ApprovalOutcome>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.hub.waiting.lock() {
            waiting.remove(&self.id);
        }
    }
}

impl ApprovalHub {
    fn register(&self, id: &str) -> Waiting<'_> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id.to_owned(), Some(tx));
        }
        Waiting {
            hub: self,
            id: id.to_owned(),
            answer: rx,
        }
    }

    /// The approvals runs here wait for that no click has answered yet, for the watch.
    pub fn untold(&self) -> Vec<String> {
        self.waiting
            .lock()
            .map(|waiting| {
                waiting
                    .iter()
                    .filter(|(_, sender)| sender.is_some())
                    .map(|(id, _)| id.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Tells the run waiting on `id`, unless a click told it already; false when no run
    /// here waits for it.
    pub fn resolve(&self, id: &str, outcome: ApprovalOutcome) -> bool {
        let Ok(mut waiting) = self.waiting.lock() else {
            return false;
        };
        match waiting.get_mut(id) {
            Some(sender) => {
                if let Some(sender) = sender.take() {
                    // The run may be past its wait this moment; it still settles from the
                    // store, so the decision is not lost either way.
                    let _ = sender.send(outcome);
                }
                true
            }
            None => false,
        }
    }
}

/// The buttons of an approval message: Confirm and Cancel first (one click each), then
/// "Cancel with reason…" (a modal asks what to do instead) and, where offered, "Allow
/// similar for …".
pub fn buttons(request: &ApprovalRequest) -> Vec<CreateActionRow> {
    let id = request.id.as_str();
    let mut row = vec![
        CreateButton::new(custom_id(ButtonAction::Confirm, id))
            .label("Confirm")
            .style(ButtonStyle::Danger),
        CreateButton::new(custom_id(ButtonAction::Cancel, id))
            .label("Cancel")
            .style(ButtonStyle::Secondary),
        CreateButton::new(custom_id(ButtonAction::Reason, id))
            .label("Cancel with reason…")
            .style(ButtonStyle::Secondary),
    ];
    if let Some((_, ttl)) = &request.similar {
        row.push(
            CreateButton::new(custom_id(ButtonAction::Allow, id))
                .label(allow_label(*ttl))
                .style(ButtonStyle::Primary),
        );
    }
    vec![CreateActionRow::Buttons(row)]
}

/// The modal a "Cancel with reason…" click opens.
fn reason_modal(approval_id: &str) -> CreateModal {
    CreateModal::new(
        custom_id(ButtonAction::ReasonGiven, approval_id),
        "Cancel this call",
    )
    .components(vec![CreateActionRow::InputText(
        CreateInputText::new(
            InputTextStyle::Paragraph,
            "What should it do instead?",
            REASON_FIELD,
        )
        .required(false)
        .max_length(REASON_MAX_CHARS)
        .placeholder("Optional: the agent reads this with the cancellation"),
    )])
}

/// The text field of the reason modal, and how long a reason may be.
const REASON_FIELD: &str = "reason";
const REASON_MAX_CHARS: u16 = 1_000;

/// The approval surface of the bot.
pub struct DiscordApprovals {
    pub outbox: Arc<Outbox>,
    pub hub: Arc<ApprovalHub>,
    pub store: Arc<dyn Store>,
}

impl ApprovalSurface for DiscordApprovals {
    fn resumable(&self) -> bool {
        true
    }

    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async move {
            let Ok(channel) = request.channel.parse::<u64>().map(ChannelId::new) else {
                return ApprovalOutcome::Expired;
            };
            // Register first: a click may come the moment the message is out.
            let mut waiting = self.hub.register(&request.id);
            let (tx, rx) = oneshot::channel();
            self.outbox
                .push(channel, Item::Approval(request.clone(), tx));
            match rx.await {
                Ok(Ok(message)) => {
                    let reference = format!("{}/{}", channel.get(), message.get());
                    if let Err(e) = self
                        .store
                        .set_approval_message(&request.id, &reference)
                        .await
                    {
                        // A click is checked against the recorded message, so none could
                        // ever answer this one: settle it now instead of blocking the
                        // channel until it expires.
                        tracing::warn!(error = %e, "the approval message could not be recorded");
                        self.outbox.push(
                            channel,
                            Item::Settle {
                                message,
                                outcome: UNRECORDED_OUTCOME.to_owned(),
                                by: None,
                            },
                        );
                        return ApprovalOutcome::Undeliverable {
                            reason: format!(
                                "its message could not be recorded in the state database, so no click on it could be checked ({e})"
                            ),
                        };
                    }
                }
                Ok(Err(failure)) => {
                    // Nobody can answer what nobody sees: settle it now, so the run ends
                    // and the channel's queue moves, instead of waiting for the expiry.
                    return ApprovalOutcome::Undeliverable {
                        reason: failure.to_string(),
                    };
                }
                Err(_) => {
                    return ApprovalOutcome::Undeliverable {
                        reason: "the channel's sending task stopped".to_owned(),
                    };
                }
            }
            (&mut waiting.answer)
                .await
                .unwrap_or(ApprovalOutcome::Expired)
        })
    }
}

/// The settled form of an approval whose message could not be recorded (see
/// `render::settled_message`).
pub const UNRECORDED_OUTCOME: &str = "unrecorded";

/// Who may answer approvals (from `[discord]`).
#[derive(Debug, Clone, Default)]
pub struct ApproverPolicy {
    pub approver_roles: Vec<u64>,
    pub require_different_approver: bool,
    /// A call its tool's assessor knows to be destructive (the floor's class) needs an
    /// approver other than the requester; judged again with `gate` at the click.
    pub destructive_needs_other_approver: bool,
    pub gate: Option<crate::core::tools::RiskGate>,
}

impl ApproverPolicy {
    /// Whether the requester may not confirm `approval` themself.
    fn needs_someone_else(&self, approval: &ApprovalRecord) -> bool {
        if self.require_different_approver {
            return true;
        }
        if !self.destructive_needs_other_approver {
            return false;
        }
        // Without the gate to ask, assume the worst.
        self.gate.as_ref().is_none_or(|gate| {
            gate.registry().get(&approval.tool).is_none_or(|tool| {
                matches!(
                    tool.assess(
                        &approval.arguments,
                        &crate::core::tools::AssessContext::default()
                    ),
                    crate::core::risk::Assessment::Destructive(_)
                )
            })
        })
    }
}

/// Whether `user` (with `roles`) may take `action` on `approval`; `Err` says why not.
pub fn authorise(
    policy: &ApproverPolicy,
    approval: &ApprovalRecord,
    action: ButtonAction,
    user: &str,
    roles: &[u64],
) -> Result<(), String> {
    let approver = roles.iter().any(|r| policy.approver_roles.contains(r));
    let requester = approval.requester == user;
    let confirms = matches!(action, ButtonAction::Confirm | ButtonAction::Allow);
    let someone_else = requester && confirms && policy.needs_someone_else(approval);
    match action {
        ButtonAction::Cancel | ButtonAction::Reason | ButtonAction::ReasonGiven
            if requester || approver =>
        {
            Ok(())
        }
        _ if confirms && someone_else => Err(if policy.require_different_approver {
            "someone else must confirm your own request here (discord.require_different_approver)"
                .to_owned()
        } else {
            "this call is destructive, so someone with an approver role other than you must confirm it (discord.destructive_needs_other_approver)".to_owned()
        }),
        // A rule answers future requests of everyone in the channel: where approver roles
        // exist, only their members may create one.
        ButtonAction::Allow if !policy.approver_roles.is_empty() && !approver => Err(
            "allowing similar calls needs an approver role (discord.approver_roles); Confirm still answers this one".to_owned(),
        ),
        _ if confirms && (approver || requester) => Ok(()),
        _ => Err(format!(
            "only <@{}> or a member with an approver role can answer this request",
            approval.requester
        )),
    }
}

/// How long a click may wait for the store before Discord is told "working on it": Discord
/// drops an interaction not answered within three seconds.
pub(super) const ANSWER_WITHIN: Duration = Duration::from_millis(2000);

/// How long a click on an approval whose message is not recorded yet (posted a moment ago,
/// the store's write still on its way) waits for it before it is refused, and how often it
/// looks again meanwhile.
const REFERENCE_WAIT: Duration = Duration::from_millis(1500);
const REFERENCE_POLL: Duration = Duration::from_millis(100);

/// A decided approval whose run no run of this process waits for, but which was stored with
/// it: the run is continued here, unless the run that asked goes on in another process first
/// (see `discord::BotState::continue_decided`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwaited {
    pub channel: ChannelId,
    pub approval_id: String,
    /// The run that asked, to tell whether it still lives in another process.
    pub run_id: String,
}

/// What a click gets back.
enum Answer {
    /// The decision counts: the approval message shows it, buttons removed. `unwaited`: no
    /// run here waits for it, but its run was stored with it.
    Settled {
        content: String,
        unwaited: Option<Unwaited>,
    },
    /// Only the person who clicked sees this.
    Ephemeral(String),
    /// "Cancel with reason…": the modal that asks for the reason.
    Modal(CreateModal),
}

/// The interaction an answer goes to: a click on one of our buttons, or the reason modal
/// submitted from one (Discord lets both update the message they came from).
#[derive(Clone, Copy)]
pub enum Asked<'a> {
    Click(&'a ComponentInteraction),
    Modal(&'a ModalInteraction),
}

impl Asked<'_> {
    fn custom_id(&self) -> &str {
        match self {
            Self::Click(click) => &click.data.custom_id,
            Self::Modal(modal) => &modal.data.custom_id,
        }
    }

    fn user(&self) -> String {
        match self {
            Self::Click(click) => click.user.id.get().to_string(),
            Self::Modal(modal) => modal.user.id.get().to_string(),
        }
    }

    fn roles(&self) -> Vec<u64> {
        let member = match self {
            Self::Click(click) => click.member.as_ref(),
            Self::Modal(modal) => modal.member.as_ref(),
        };
        member
            .map(|m| m.roles.iter().map(|r| r.get()).collect())
            .unwrap_or_default()
    }

    fn channel_id(&self) -> ChannelId {
        match self {
            Self::Click(click) => click.channel_id,
            Self::Modal(modal) => modal.channel_id,
        }
    }

    /// The approval message: its channel, id and text.
    fn message(&self) -> Option<(ChannelId, MessageId, &str)> {
        match self {
            Self::Click(click) => Some((
                click.channel_id,
                click.message.id,
                click.message.content.as_str(),
            )),
            Self::Modal(modal) => modal
                .message
                .as_ref()
                .map(|m| (modal.channel_id, m.id, m.content.as_str())),
        }
    }

    /// The text typed into the reason modal, if any.
    fn reason(&self) -> Option<String> {
        let Self::Modal(modal) = self else {
            return None;
        };
        modal
            .data
            .components
            .iter()
            .flat_map(|row| &row.components)
            .find_map(|component| match component {
                ActionRowComponent::InputText(input) if input.custom_id == REASON_FIELD => {
                    input.value.clone()
                }
                _ => None,
            })
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty())
    }

    async fn respond(
        &self,
        ctx: &Context,
        response: CreateInteractionResponse,
    ) -> serenity::Result<()> {
        match self {
            Self::Click(click) => click.create_response(&ctx.http, response).await,
            Self::Modal(modal) => modal.create_response(&ctx.http, response).await,
        }
    }

    async fn follow_up(
        &self,
        ctx: &Context,
        note: CreateInteractionResponseFollowup,
    ) -> serenity::Result<()> {
        match self {
            Self::Click(click) => click.create_followup(&ctx.http, note).await.map(drop),
            Self::Modal(modal) => modal.create_followup(&ctx.http, note).await.map(drop),
        }
    }
}

/// Handles a click on one of our buttons, or the reason modal. Answers within Discord's 3
/// seconds: the store's conditional update decides, the message is updated at once, and the
/// run is told after. While the database restarts the store retries; if that takes longer
/// than [`ANSWER_WITHIN`] the interaction is acknowledged first and the answer follows (the
/// message edited, or a private note that the request is still pending).
///
/// Returns the approval whose run may have to be continued here: the decision won, no run
/// of this process waits for it, and its run was stored with it.
pub async fn handle_click(
    ctx: &Context,
    asked: Asked<'_>,
    store: &dyn Store,
    hub: &ApprovalHub,
    policy: &ApproverPolicy,
) -> Option<Unwaited> {
    let (action, id) = parse_custom_id(asked.custom_id())?;
    let work = decide_click(asked, action, id, store, hub, policy);
    tokio::pin!(work);
    let early = tokio::select! {
        answer = &mut work => Some(answer),
        _ = tokio::time::sleep(ANSWER_WITHIN) => None,
    };
    let (mut answer, late) = match early {
        Some(answer) => (answer, false),
        None => {
            // The store is slow (retrying through a restart): acknowledge the click now.
            if let Err(e) = asked
                .respond(ctx, CreateInteractionResponse::Acknowledge)
                .await
            {
                tracing::warn!(error = %e, "a slow click could not be acknowledged");
            }
            (work.await, true)
        }
    };
    let unwaited = match &mut answer {
        Answer::Settled { unwaited, .. } => unwaited.take(),
        Answer::Ephemeral(_) | Answer::Modal(_) => None,
    };
    if late {
        answer_late(ctx, asked, answer).await;
    } else {
        answer_now(ctx, asked, answer).await;
    }
    unwaited
}

/// Answers within the deadline: the message updated, a private note, or the modal.
async fn answer_now(ctx: &Context, asked: Asked<'_>, answer: Answer) {
    let response = match answer {
        Answer::Settled { content, .. } => CreateInteractionResponse::UpdateMessage(
            CreateInteractionResponseMessage::new()
                .content(content)
                .components(Vec::new())
                .allowed_mentions(no_mentions()),
        ),
        Answer::Ephemeral(text) => CreateInteractionResponse::Message(
            CreateInteractionResponseMessage::new()
                .content(text)
                .ephemeral(true)
                .allowed_mentions(no_mentions()),
        ),
        Answer::Modal(modal) => CreateInteractionResponse::Modal(modal),
    };
    if let Err(e) = asked.respond(ctx, response).await {
        tracing::warn!(error = %e, "an approval interaction could not be answered");
    }
}

/// Answers after an acknowledgement: the message edited, or a private follow-up.
async fn answer_late(ctx: &Context, asked: Asked<'_>, answer: Answer) {
    match answer {
        Answer::Settled { content, .. } => {
            let Some((channel, message, _)) = asked.message() else {
                return;
            };
            let edit = EditMessage::new()
                .content(content)
                .components(Vec::new())
                .allowed_mentions(no_mentions());
            if let Err(e) = channel.edit_message(&ctx.http, message, edit).await {
                tracing::warn!(error = %e, "the approval message could not be updated");
            }
        }
        Answer::Ephemeral(text) => {
            let note = CreateInteractionResponseFollowup::new()
                .content(text)
                .ephemeral(true)
                .allowed_mentions(no_mentions());
            if let Err(e) = asked.follow_up(ctx, note).await {
                tracing::warn!(error = %e, "an ephemeral answer could not be sent");
            }
        }
        Answer::Modal(_) => {
            let note = CreateInteractionResponseFollowup::new()
                .content("The state database was slow to answer; press the button again to give a reason.")
                .ephemeral(true)
                .allowed_mentions(no_mentions());
            if let Err(e) = asked.follow_up(ctx, note).await {
                tracing::warn!(error = %e, "an ephemeral answer could not be sent");
            }
        }
    }
}

/// Whether a click made on a message may answer an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// The click was made on the approval's own message, in the approval's own channel.
    Own,
    /// On another message or in another channel, or on no message at all.
    Foreign,
    /// The approval's message is not recorded (yet): there is nothing to check the click
    /// against.
    Unrecorded,
}

/// Whether a click made on `clicked` (its channel and message; `None` when the interaction
/// names no message) may answer `approval`. A thread is a channel of its own here: an
/// approval posted in a thread is stored with the thread and answered there.
pub fn binding(approval: &ApprovalRecord, clicked: Option<(ChannelId, MessageId)>) -> Binding {
    let Some(reference) = approval.message_ref.as_deref() else {
        return Binding::Unrecorded;
    };
    let Some(clicked) = clicked else {
        return Binding::Foreign;
    };
    let own_channel = approval.channel.parse::<u64>().ok() == Some(clicked.0.get());
    if own_channel && message_ref(reference) == Some(clicked) {
        Binding::Own
    } else {
        Binding::Foreign
    }
}

/// The approval `id` names, when the click was made on its own message; otherwise what the
/// clicker is told, with nothing changed. An approval whose message is not recorded yet is
/// read again for up to [`REFERENCE_WAIT`] after the store first answers, then the click is
/// refused: it is never decided without the check. The wait starts when the store answers,
/// not at the click: while the database restarts, the write recording the message waits
/// for it as the click's read does, and either may land first when it is back.
async fn bound_approval(
    asked: Asked<'_>,
    id: &str,
    store: &dyn Store,
) -> Result<ApprovalRecord, Answer> {
    let clicked = asked
        .message()
        .map(|(channel, message, _)| (channel, message));
    let mut deadline = None;
    loop {
        let approval = match store.approval(id).await {
            Ok(Some(approval)) => approval,
            Ok(None) => return Err(Answer::Ephemeral(NO_LONGER_ACTIVE.to_owned())),
            Err(e) => {
                tracing::error!(error = %e, "an approval could not be loaded");
                return Err(Answer::Ephemeral(UNRECORDED.to_owned()));
            }
        };
        let deadline =
            *deadline.get_or_insert_with(|| tokio::time::Instant::now() + REFERENCE_WAIT);
        match binding(&approval, clicked) {
            Binding::Own => return Ok(approval),
            Binding::Foreign => {
                tracing::warn!(
                    approval = id,
                    channel = %asked.channel_id(),
                    message = ?clicked.map(|(_, message)| message),
                    "a click named an approval that its message does not show; refused"
                );
                return Err(Answer::Ephemeral(FOREIGN.to_owned()));
            }
            Binding::Unrecorded if approval.status != ApprovalStatus::Pending => {
                return Err(Answer::Ephemeral(NO_LONGER_ACTIVE.to_owned()));
            }
            Binding::Unrecorded if tokio::time::Instant::now() >= deadline => {
                return Err(Answer::Ephemeral(NOT_RECORDED_YET.to_owned()));
            }
            Binding::Unrecorded => tokio::time::sleep(REFERENCE_POLL).await,
        }
    }
}

/// A click whose button names an approval that its message does not show.
const FOREIGN: &str = "This button does not belong to that approval request, so nothing was decided and nothing changed. Answer a request with the buttons on its own message.";
/// A click on an approval whose message the store has not recorded yet.
const NOT_RECORDED_YET: &str = "This request's message is not recorded yet, so your click could not be checked against it and nothing was decided. Press the button again in a moment.";
const NO_LONGER_ACTIVE: &str = "This request is no longer active.";

/// Loads the approval the click's own message shows, authorises the click and decides it in
/// the store; tells the waiting run.
async fn decide_click(
    asked: Asked<'_>,
    action: ButtonAction,
    id: &str,
    store: &dyn Store,
    hub: &ApprovalHub,
    policy: &ApproverPolicy,
) -> Answer {
    let user = asked.user();
    let approval = match bound_approval(asked, id, store).await {
        Ok(approval) => approval,
        Err(answer) => return answer,
    };
    if approval.status != ApprovalStatus::Pending {
        wake_with_stored(hub, &approval);
        return Answer::Ephemeral(already(&approval));
    }
    if let Err(reason) = authorise(policy, &approval, action, &user, &asked.roles()) {
        return Answer::Ephemeral(format!("You cannot answer this request: {reason}."));
    }
    let reason = asked.reason();
    let (status, note, outcome, label) = match action {
        ButtonAction::Reason => return Answer::Modal(reason_modal(id)),
        ButtonAction::Confirm => (
            ApprovalStatus::Confirmed,
            None,
            ApprovalOutcome::Confirmed { by: user.clone() },
            "confirmed",
        ),
        ButtonAction::Allow => (
            ApprovalStatus::Confirmed,
            Some(ALLOW_SIMILAR_NOTE),
            ApprovalOutcome::AllowSimilar { by: user.clone() },
            "allowed",
        ),
        ButtonAction::Cancel | ButtonAction::ReasonGiven => (
            ApprovalStatus::Cancelled,
            reason.as_deref(),
            ApprovalOutcome::Cancelled {
                by: user.clone(),
                reason: reason.clone(),
            },
            "cancelled",
        ),
    };
    match store
        .decide_approval_noted(id, status, Some(&user), note)
        .await
    {
        Ok(Decided::Won(record)) => {
            let original = asked.message().map_or("", |(_, _, text)| text);
            let mut content = settled_message(original, label, Some(&user));
            if let Some(reason) = &reason {
                content = with_reason(content, reason);
            }
            tracing::info!(approval = %record.id, status = status.as_str(), "approval decided");
            let waited = hub.resolve(id, outcome);
            let unwaited = (!waited && record.resume.is_some()).then(|| Unwaited {
                channel: asked.channel_id(),
                approval_id: record.id.clone(),
                run_id: record.run_id.clone(),
            });
            Answer::Settled { content, unwaited }
        }
        Ok(Decided::Lost(record)) => {
            wake_with_stored(hub, &record);
            Answer::Ephemeral(already(&record))
        }
        Ok(Decided::Missing) => Answer::Ephemeral(NO_LONGER_ACTIVE.to_owned()),
        Err(e) => {
            tracing::error!(error = %e, "an approval could not be decided");
            // Nothing changed for this click as far as anyone knows: the request stays
            // pending (a decision that did land is found by the next click).
            Answer::Ephemeral(UNRECORDED.to_owned())
        }
    }
}

/// The settled message with the cancel's reason quoted, within Discord's 2,000 characters.
fn with_reason(settled: String, reason: &str) -> String {
    let room = 1_990usize
        .saturating_sub(settled.chars().count() + 4)
        .min(300);
    let (reason, _) = crate::tools::render::cut(&reason.replace('\n', " "), room);
    format!("{settled}\n> {}", crate::tools::render::fence_safe(&reason))
}

/// A click the store could not take (within `store.retry_window_secs`).
const UNRECORDED: &str = "Your answer could not be recorded: the state database is not answering. The request is still pending; try again in a moment.";

/// A decided approval whose run may still wait: a decision recorded by an attempt whose
/// answer was lost (the database restarted), or made by another process sharing the store,
/// reached nobody here, so the run is told now. The run then settles the approval in the
/// store and acts on what the store holds, exactly as after a click here; if nobody waits,
/// this does nothing. True when a run here waits for it.
fn wake_with_stored(hub: &ApprovalHub, record: &ApprovalRecord) -> bool {
    let by = record.decided_by.clone().unwrap_or_default();
    let outcome = match record.status {
        ApprovalStatus::Confirmed if record.note.as_deref() == Some(ALLOW_SIMILAR_NOTE) => {
            ApprovalOutcome::AllowSimilar { by }
        }
        ApprovalStatus::Confirmed => ApprovalOutcome::Confirmed { by },
        ApprovalStatus::Cancelled => ApprovalOutcome::Cancelled {
            by,
            reason: record.note.clone(),
        },
        ApprovalStatus::Expired => ApprovalOutcome::Expired,
        ApprovalStatus::Pending | ApprovalStatus::Abandoned | ApprovalStatus::Undeliverable => {
            return false;
        }
    };
    hub.resolve(&record.id, outcome)
}

/// Tells the runs waiting here of decisions made by other processes sharing the store (a
/// click another shard handled, or another process's expiry sweep): every `every`, while
/// any run here waits unanswered, one query over the ids of their approvals
/// ([`Store::settled_approvals`]); each one found settled wakes its run as a click here
/// would. While no run waits, the store is not asked at all. Runs until the task is
/// dropped.
pub async fn watch_decisions(hub: Arc<ApprovalHub>, store: Arc<dyn Store>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let ids = hub.untold();
        if ids.is_empty() {
            continue;
        }
        match store.settled_approvals(&ids).await {
            Ok(settled) => {
                for record in &settled {
                    if wake_with_stored(&hub, record) {
                        tracing::info!(
                            approval = %record.id,
                            status = record.status.as_str(),
                            "a decision made in another process reached the run waiting here"
                        );
                    }
                }
            }
            Err(e) => tracing::warn!(
                error = %e,
                waiting = ids.len(),
                "the approval watch could not read the store; runs waiting here learn of decisions made elsewhere once it answers"
            ),
        }
    }
}

fn already(record: &ApprovalRecord) -> String {
    match (record.status, &record.decided_by) {
        (ApprovalStatus::Confirmed, Some(by)) => {
            format!("This request was already confirmed by <@{by}>.")
        }
        (ApprovalStatus::Cancelled, Some(by)) => {
            format!("This request was already cancelled by <@{by}>.")
        }
        (ApprovalStatus::Expired, _) => "This request has expired.".to_owned(),
        (ApprovalStatus::Abandoned, _) => {
            "This request is no longer active: the bot restarted while it waited.".to_owned()
        }
        (status, _) => format!("This request is {}.", status.as_str()),
    }
}

/// Splits a stored message reference `channel/message`.
pub fn message_ref(reference: &str) -> Option<(ChannelId, MessageId)> {
    let (channel, message) = reference.split_once('/')?;
    Some((
        ChannelId::new(channel.parse().ok().filter(|c| *c > 0)?),
        MessageId::new(message.parse().ok().filter(|m| *m > 0)?),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    #[test]
    fn a_run_stays_waiting_for_every_click_until_its_wait_ends() {
        let hub = ApprovalHub::default();
        let confirmed = || ApprovalOutcome::Confirmed { by: "bob".into() };
        let mut waiting = hub.register("a1");
        assert!(
            hub.resolve("a1", confirmed()),
            "the first click tells the run"
        );
        assert!(
            hub.resolve("a1", confirmed()),
            "a second click still finds the run here, so it resumes nothing"
        );
        assert_eq!(waiting.answer.try_recv().ok(), Some(confirmed()));
        drop(waiting);
        assert!(
            !hub.resolve("a1", confirmed()),
            "after the wait, nobody here"
        );
        assert!(!hub.resolve("a2", confirmed()));
    }

    fn approval(requester: &str) -> ApprovalRecord {
        ApprovalRecord {
            id: "a1".into(),
            run_id: "r".into(),
            channel: "1".into(),
            requester: requester.into(),
            tool: "execute_sql".into(),
            arguments: serde_json::Map::new(),
            arguments_hash: String::new(),
            source: "default".into(),
            reason: "r".into(),
            status: ApprovalStatus::Pending,
            decided_by: None,
            decided_at: None,
            created_at: SystemTime::now(),
            expires_at: SystemTime::now(),
            message_ref: None,
            note: None,
            resume: None,
        }
    }

    #[test]
    fn who_may_answer() {
        let open = ApproverPolicy {
            approver_roles: vec![7],
            ..ApproverPolicy::default()
        };
        let strict = ApproverPolicy {
            require_different_approver: true,
            ..open.clone()
        };
        let a = approval("100");
        use ButtonAction::{Cancel, Confirm};
        assert!(
            authorise(&open, &a, Confirm, "100", &[]).is_ok(),
            "the requester"
        );
        assert!(
            authorise(&open, &a, Confirm, "200", &[7]).is_ok(),
            "an approver"
        );
        assert!(
            authorise(&open, &a, Confirm, "200", &[8]).is_err(),
            "someone else"
        );
        assert!(authorise(&open, &a, Cancel, "200", &[]).is_err());
        assert!(
            authorise(&strict, &a, Confirm, "100", &[]).is_err(),
            "no self-approval"
        );
        assert!(
            authorise(&strict, &a, Confirm, "100", &[7]).is_err(),
            "not even as an approver"
        );
        assert!(
            authorise(&strict, &a, Cancel, "100", &[]).is_ok(),
            "cancelling stays allowed"
        );
        assert!(authorise(&strict, &a, Confirm, "200", &[7]).is_ok());
    }

    #[test]
    fn a_destructive_call_can_need_someone_other_than_its_requester() {
        let workspace = tempfile::tempdir().expect("tempdir");
        let mut settings = crate::config::Settings::default();
        settings.tools.workspace = workspace.path().to_path_buf();
        let policy = ApproverPolicy {
            approver_roles: vec![7],
            destructive_needs_other_approver: true,
            gate: Some(crate::tools::builtin_gate(&settings)),
            ..ApproverPolicy::default()
        };
        let call = |command: &str| {
            let mut a = approval("100");
            a.tool = "execute_command".to_owned();
            a.arguments = serde_json::json!({ "command": command })
                .as_object()
                .cloned()
                .unwrap_or_default();
            a
        };
        use ButtonAction::{Cancel, Confirm};
        let rm = call("rm -rf build");
        let make = call("make test");
        let refused = authorise(&policy, &rm, Confirm, "100", &[7]);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("destructive_needs_other_approver")),
            "{refused:?}"
        );
        assert!(authorise(&policy, &rm, Cancel, "100", &[]).is_ok());
        assert!(
            authorise(&policy, &rm, Confirm, "200", &[7]).is_ok(),
            "another approver"
        );
        assert!(
            authorise(&policy, &make, Confirm, "100", &[]).is_ok(),
            "not destructive"
        );
        let off = ApproverPolicy {
            destructive_needs_other_approver: false,
            ..policy.clone()
        };
        assert!(
            authorise(&off, &rm, Confirm, "100", &[]).is_ok(),
            "off: as before"
        );
    }

    #[test]
    fn a_click_answers_only_the_approval_its_own_message_shows() {
        let at =
            |channel: u64, message: u64| Some((ChannelId::new(channel), MessageId::new(message)));
        let mut shown = approval("100");
        shown.channel = "12".into();
        shown.message_ref = Some("12/34".into());
        assert_eq!(binding(&shown, at(12, 34)), Binding::Own);
        assert_eq!(
            binding(&shown, at(12, 35)),
            Binding::Foreign,
            "another message"
        );
        assert_eq!(
            binding(&shown, at(13, 34)),
            Binding::Foreign,
            "the same id in another channel"
        );
        assert_eq!(binding(&shown, None), Binding::Foreign, "no message named");
        let mut moved = shown.clone();
        moved.channel = "13".into();
        assert_eq!(
            binding(&moved, at(12, 34)),
            Binding::Foreign,
            "a reference to a channel the approval is not of"
        );
        // An approval asked for in a thread (77) under channel 12 is the thread's.
        let mut threaded = approval("100");
        threaded.channel = "77".into();
        threaded.message_ref = Some("77/90".into());
        assert_eq!(binding(&threaded, at(77, 90)), Binding::Own);
        assert_eq!(
            binding(&threaded, at(12, 90)),
            Binding::Foreign,
            "the parent"
        );
        let mut unposted = shown.clone();
        unposted.message_ref = None;
        assert_eq!(binding(&unposted, at(12, 34)), Binding::Unrecorded);
        let mut broken = shown;
        broken.message_ref = Some("garbage".into());
        assert_eq!(binding(&broken, at(12, 34)), Binding::Foreign);
    }

    /// A store that counts the watch's queries and keeps the ids of the last one.
    #[derive(Default)]
    struct Counted {
        inner: crate::store::MemoryStore,
        asked: Mutex<Vec<Vec<String>>>,
    }

    impl Store for Counted {
        fn settled_approvals<'a>(
            &'a self,
            ids: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, crate::core::ports::StoreError>> {
            if let Ok(mut asked) = self.asked.lock() {
                asked.push(ids.to_vec());
            }
            self.inner.settled_approvals(ids)
        }
        crate::forward_store!(inner:
            load_history, append, clear, prune_history, channel_settings, set_channel_settings,
            start_run, heartbeat_run, finish_run, create_approval, decide_approval_noted,
            approval, set_approval_message, claim_continuation, pending_approvals,
            expire_overdue, abandon_orphaned, record_audit, recent_audit, create_rule,
            channel_rules, revoke_rule, live_run_instance, earlier_run,
        );
    }

    impl Counted {
        fn queries(&self) -> Vec<Vec<String>> {
            self.asked.lock().map(|a| a.clone()).unwrap_or_default()
        }
    }

    /// A decision another process wrote to the store wakes the run waiting here within an
    /// interval; the watch asks once per interval about every waiting run together, and not
    /// at all while none waits.
    #[tokio::test(start_paused = true)]
    async fn the_watch_wakes_runs_with_decisions_made_elsewhere_in_one_query_per_interval() {
        let store = Arc::new(Counted::default());
        let hub = Arc::new(ApprovalHub::default());
        let every = Duration::from_secs(1);
        let watch = tokio::spawn(watch_decisions(hub.clone(), store.clone(), every));
        tokio::time::sleep(every * 10).await;
        assert!(store.queries().is_empty(), "no run waits: nothing is asked");

        let ids: Vec<String> = (0..5).map(|n| format!("a{n}")).collect();
        let mut waiting = Vec::new();
        for id in &ids {
            let mut record = approval("100");
            record.id = id.clone();
            store.create_approval(&record).await.expect("create");
            waiting.push(hub.register(id));
        }
        tokio::time::sleep(every * 3).await;
        let queries = store.queries();
        assert!(
            (2..=4).contains(&queries.len()),
            "one query an interval for all five runs, not one a run: {queries:?}"
        );
        let mut asked = queries[0].clone();
        asked.sort();
        assert_eq!(asked, ids);
        assert!(waiting.iter_mut().all(|w| w.answer.try_recv().is_err()));

        // Another process decides two of them.
        store
            .decide_approval("a1", ApprovalStatus::Confirmed, Some("bob"))
            .await
            .expect("decide");
        store
            .decide_approval_noted("a3", ApprovalStatus::Cancelled, Some("eve"), Some("no"))
            .await
            .expect("decide");
        tokio::time::sleep(every + Duration::from_millis(10)).await;
        assert_eq!(
            waiting[1].answer.try_recv().ok(),
            Some(ApprovalOutcome::Confirmed { by: "bob".into() })
        );
        assert_eq!(
            waiting[3].answer.try_recv().ok(),
            Some(ApprovalOutcome::Cancelled {
                by: "eve".into(),
                reason: Some("no".into())
            })
        );
        assert!(waiting[0].answer.try_recv().is_err(), "still pending");
        let before = store.queries().len();
        tokio::time::sleep(every).await;
        let mut last = store.queries().last().cloned().unwrap_or_default();
        last.sort();
        assert_eq!(
            last,
            ["a0", "a2", "a4"],
            "told runs are not asked about again"
        );

        drop(waiting);
        let after = store.queries().len();
        tokio::time::sleep(every * 10).await;
        assert_eq!(store.queries().len(), after, "no run waits any more");
        assert!(after > before);
        watch.abort();
    }

    #[test]
    fn message_refs_round_trip() {
        assert_eq!(
            message_ref("12/34"),
            Some((ChannelId::new(12), MessageId::new(34)))
        );
        assert_eq!(message_ref("0/34"), None);
        assert_eq!(message_ref("x"), None);
    }
}
