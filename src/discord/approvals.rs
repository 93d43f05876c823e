//! Approvals in Discord: a message with Confirm / Cancel buttons, clicks authorised and
//! decided exactly once in the store, and the waiting run told through the [`ApprovalHub`].

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
                        tracing::warn!(error = %e, "the approval message could not be recorded");
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

/// What a click gets back.
enum Answer {
    /// The decision counts: the approval message shows it, buttons removed. `resume`: no run
    /// here waits for it, but its run was stored (the process that asked has stopped).
    Settled { content: String, resume: bool },
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
/// Returns the channel and approval whose run must be continued here: the decision won, no
/// run of this process waits for it, and its run was stored.
pub async fn handle_click(
    ctx: &Context,
    asked: Asked<'_>,
    store: &dyn Store,
    hub: &ApprovalHub,
    policy: &ApproverPolicy,
) -> Option<(ChannelId, String)> {
    let (action, id) = parse_custom_id(asked.custom_id())?;
    let work = decide_click(asked, action, id, store, hub, policy);
    tokio::pin!(work);
    let early = tokio::select! {
        answer = &mut work => Some(answer),
        _ = tokio::time::sleep(ANSWER_WITHIN) => None,
    };
    let answer = match early {
        Some(answer) => answer,
        None => {
            // The store is slow (retrying through a restart): acknowledge the click now.
            if let Err(e) = asked
                .respond(ctx, CreateInteractionResponse::Acknowledge)
                .await
            {
                tracing::warn!(error = %e, "a slow click could not be acknowledged");
            }
            let answer = work.await;
            let resume = matches!(answer, Answer::Settled { resume: true, .. });
            answer_late(ctx, asked, answer).await;
            return resume.then(|| (asked.channel_id(), id.to_owned()));
        }
    };
    let resume = matches!(answer, Answer::Settled { resume: true, .. });
    answer_now(ctx, asked, answer).await;
    resume.then(|| (asked.channel_id(), id.to_owned()))
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

/// Loads, authorises and decides a click in the store; tells the waiting run.
async fn decide_click(
    asked: Asked<'_>,
    action: ButtonAction,
    id: &str,
    store: &dyn Store,
    hub: &ApprovalHub,
    policy: &ApproverPolicy,
) -> Answer {
    let user = asked.user();
    let approval = match store.approval(id).await {
        Ok(Some(approval)) => approval,
        Ok(None) => return Answer::Ephemeral("This request is no longer active.".to_owned()),
        Err(e) => {
            tracing::error!(error = %e, "an approval could not be loaded");
            return Answer::Ephemeral(UNRECORDED.to_owned());
        }
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
            Answer::Settled {
                content,
                resume: !waited && record.resume.is_some(),
            }
        }
        Ok(Decided::Lost(record)) => {
            wake_with_stored(hub, &record);
            Answer::Ephemeral(already(&record))
        }
        Ok(Decided::Missing) => Answer::Ephemeral("This request is no longer active.".to_owned()),
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
/// answer was lost (the database restarted) reached nobody, so the run is told now. The run
/// then settles the approval in the store and acts on what the store holds; if nobody waits,
/// this does nothing.
fn wake_with_stored(hub: &ApprovalHub, record: &ApprovalRecord) {
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
        _ => return,
    };
    hub.resolve(&record.id, outcome);
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
    fn message_refs_round_trip() {
        assert_eq!(
            message_ref("12/34"),
            Some((ChannelId::new(12), MessageId::new(34)))
        );
        assert_eq!(message_ref("0/34"), None);
        assert_eq!(message_ref("x"), None);
    }
}
