//! One call's lifecycle, in one place: gate → (a channel rule) → approval → execute → the
//! result and the audit record the loop writes.
//!
//! - [`Agent::handle_call`] takes a call the loop read from a reply and returns its result
//!   for the model and its audit record.
//! - [`Agent::ask_a_person`] records the approval (with where the run stood, when the surface
//!   can be answered after a restart), shows it, waits, and settles it in the store.
//! - [`Agent::decided`] turns a settled approval into what runs, or the result of a call that
//!   does not; a run resumed after a restart (`resume.rs`) starts here.
//! - [`Agent::execute`] runs what the gate or a person let through, under the run's time
//!   limit, and tells the channel.

use std::collections::HashSet;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::repeats::Repeats;
use super::{
    Agent, AgentEvent, CallOutcome, CallResult, ERROR_CHAT_CHARS, HEARTBEAT, ParsedCall,
    RunContext, RunTimer, StopReason, arguments_hash, new_id, summarize, unix_seconds,
};
use crate::core::ports::{
    ApprovalOutcome, ApprovalRecord, ApprovalRequest, ApprovalStatus, AuditRecord, Decided,
    EarlierRun, StoreError,
};
use crate::core::risk::{Decision, DecisionSource, RiskDecision};
use crate::core::rules::{ALLOW_SIMILAR_NOTE, ChannelRule};
use crate::core::tools::{
    Approval, Attachment, ERROR_SUMMARY_CHARS, GatedCall, Reading, ToolCall, canonical_json,
};

/// Where the run stands, as JSON, for an approval that may be answered after a restart;
/// given the calls a person cancelled so far in the run.
pub(super) type Checkpoint<'c> = &'c (dyn Fn(&HashSet<String>) -> Option<String> + Sync);

/// What the channel and the audit are told of a repeat that was answered from the run.
const REPEAT_NOTE: &str = "the same call was already made in this run: it was not asked about or run again, and the model was given what came of it";

/// What identifies a call a person cancelled (and any call, for [`Repeats`]), so the run
/// does not ask about it again.
pub(super) fn cancel_key(tool: &str, arguments: &Map<String, Value>) -> String {
    format!(
        "{tool}\u{0}{}",
        canonical_json(&Value::Object(arguments.clone()))
    )
}

impl Agent {
    /// Gates one call, asks a person when the gate says so, and runs it when allowed.
    /// A call identical to one made earlier in the run is answered with what came of that
    /// one (see [`Repeats`]): nobody is asked, nothing runs again.
    pub(super) async fn handle_call(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        timer: &mut RunTimer,
        cancelled: &mut HashSet<String>,
        repeats: &mut Repeats,
        checkpoint: Checkpoint<'_>,
    ) -> (CallResult, AuditRecord) {
        let (gated, rule) = self.gated(context, call).await;
        let mut audit = self.audit_record(context, call, &gated, rule.as_ref());
        let key = cancel_key(&call.tool, &gated.arguments);
        if let Some(result) = repeats.answer(&key) {
            self.emit(
                &context.inbound.channel,
                AgentEvent::CallNotRun {
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    status: result.outcome,
                    reason: REPEAT_NOTE.to_owned(),
                },
            );
            audit.note = Some(REPEAT_NOTE.to_owned());
            return (result, audit);
        }
        let result = self
            .gated_call(
                context, call, &gated, &mut audit, timer, cancelled, checkpoint,
            )
            .await;
        repeats.record(key, &audit, &result);
        (result, audit)
    }

    /// [`Agent::handle_call`] past the gate: asks a person when the gate says so, and runs
    /// the call when allowed.
    #[allow(clippy::too_many_arguments)]
    async fn gated_call(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        gated: &GatedCall,
        audit: &mut AuditRecord,
        timer: &mut RunTimer,
        cancelled: &mut HashSet<String>,
        checkpoint: Checkpoint<'_>,
    ) -> CallResult {
        let channel = context.inbound.channel.as_str();
        let decision = &gated.decision;
        let (approval, arguments) = match decision.decision {
            Decision::Deny => {
                return self.not_run(
                    channel,
                    call,
                    CallOutcome::Denied,
                    &decision.reason,
                    json!({}),
                );
            }
            Decision::Auto => (Approval::Auto, gated.arguments.clone()),
            Decision::Confirm => {
                if cancelled.contains(&cancel_key(&call.tool, &gated.arguments)) {
                    return self.not_run(
                        channel,
                        call,
                        CallOutcome::Cancelled,
                        "a person already cancelled this exact call in this run; it is not asked again. Try another way or ask the user.",
                        json!({}),
                    );
                }
                let resume = checkpoint(cancelled);
                let (record, result) = self.ask_a_person(context, call, gated, resume, timer).await;
                audit.approval_id = Some(record.id.clone());
                if let Some(result) = result {
                    return result;
                }
                if let Err(result) = self.claim(channel, call, &record).await {
                    return result;
                }
                match self.decided(context, call, &record, cancelled, audit).await {
                    Ok(allowed) => allowed,
                    Err(result) => return result,
                }
            }
        };
        // What runs is what was judged: the gate's reading, unless the stored arguments that
        // run differ from the ones it read.
        let reading = gated
            .reading
            .as_ref()
            .filter(|_| arguments == gated.arguments);
        self.execute(context, call, &approval, &arguments, reading, timer)
            .await
    }

    /// The gate's decision (with the run's tools), lifted by an active channel rule where
    /// one covers the call; the channel sees the decision.
    async fn gated(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
    ) -> (GatedCall, Option<ChannelRule>) {
        let channel = context.inbound.channel.as_str();
        let mode = context.settings.mode;
        let mut gated = self.gate.check_in(
            context.tools(),
            &ToolCall {
                tool: call.tool.clone(),
                arguments: call.arguments.clone(),
            },
            mode,
            &self.assess_context,
        );
        let rule = self
            .rule_for(context.tools(), channel, &call.tool, &gated, mode)
            .await;
        if let Some(rule) = &rule {
            gated.decision = crate::core::rules::lifted(rule);
        }
        let decision = &gated.decision;
        self.emit(
            channel,
            AgentEvent::ToolCall {
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                arguments: gated.arguments.clone(),
                decision: decision.decision,
                source: decision.source,
                reason: decision.reason.clone(),
            },
        );
        (gated, rule)
    }

    fn audit_record(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        gated: &GatedCall,
        rule: Option<&ChannelRule>,
    ) -> AuditRecord {
        let decision = &gated.decision;
        AuditRecord {
            at: unix_seconds(self.clock.now()),
            run_id: context.run_id.to_owned(),
            channel: context.inbound.channel.clone(),
            user: context.inbound.author.clone(),
            tool: call.tool.clone(),
            arguments_summary: summarize(&gated.arguments),
            decision: decision.decision,
            source: decision.source,
            reason: decision.reason.clone(),
            // Set once the call is settled (see `completed`).
            outcome: CallOutcome::NotRun,
            approval_id: None,
            duration_ms: 0,
            output_bytes: 0,
            note: rule.map(ChannelRule::audit_note),
            result: None,
        }
    }

    /// Claims the run's continuation past `record` ([`Agent::continues`]); the result of a
    /// call that does not run, when this run must not go on.
    async fn claim(
        &self,
        channel: &str,
        call: &ParsedCall,
        record: &ApprovalRecord,
    ) -> Result<(), CallResult> {
        match self.continues(channel, record).await {
            Ok(true) => Ok(()),
            Ok(false) => {
                // The copy that went on tells the channel what became of the call: this
                // run posts nothing and ends.
                let mut result = super::not_run_result(
                    CallOutcome::NotRun,
                    "a resumed copy of this run took over after the decision, so it did not run here",
                    json!({}),
                );
                result.ends_run = Some(StopReason::ContinuedElsewhere);
                Err(result)
            }
            // A resumed copy may still claim it: this run stops rather than go on beside it.
            Err(e) => {
                let reason =
                    format!("whether this run goes on could not be recorded, so nothing ran: {e}");
                let mut result =
                    self.not_run(channel, call, CallOutcome::NotRun, &reason, json!({}));
                result.ends_run = Some(StopReason::Store(e));
                Err(result)
            }
        }
    }

    /// What a settled approval lets run (the stored, hash-checked arguments, confirmed by
    /// whom), or the result of a call that does not run.
    pub(super) async fn decided(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        record: &ApprovalRecord,
        cancelled: &mut HashSet<String>,
        audit: &mut AuditRecord,
    ) -> Result<(Approval, Map<String, Value>), CallResult> {
        let channel = context.inbound.channel.as_str();
        let by = record.decided_by.clone().unwrap_or_default();
        match record.status {
            ApprovalStatus::Confirmed => {
                if arguments_hash(&record.arguments) != record.arguments_hash {
                    tracing::error!(approval = %record.id, "stored arguments do not match their hash");
                    return Err(self.not_run(
                        channel,
                        call,
                        CallOutcome::NotRun,
                        "the stored arguments do not match what was shown for approval, so nothing ran",
                        json!({}),
                    ));
                }
                if record.note.as_deref() == Some(ALLOW_SIMILAR_NOTE) {
                    self.allow_similar(context, record, &stored_decision(record))
                        .await;
                }
                Ok((Approval::Confirmed { by }, record.arguments.clone()))
            }
            ApprovalStatus::Cancelled => {
                cancelled.insert(cancel_key(&record.tool, &record.arguments));
                let mut extra = json!({ "by": by });
                if let Some(reason) = &record.note {
                    extra["reason"] = json!(reason);
                    audit.note = Some(format!("reason: {reason}"));
                }
                Err(self.not_run(
                    channel,
                    call,
                    CallOutcome::Cancelled,
                    "a person cancelled this call",
                    extra,
                ))
            }
            status => Err(self.not_run(
                channel,
                call,
                CallOutcome::of_approval(status),
                "nobody confirmed this call in time",
                json!({}),
            )),
        }
    }

    /// Records the approval, shows it, waits for a person (or the expiry), and settles it in
    /// the store with a conditional update: whatever the store holds afterwards is what
    /// happens. Returns the settled record, and a result when the call must not run.
    pub(super) async fn ask_a_person(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        gated: &GatedCall,
        resume: Option<String>,
        timer: &mut RunTimer,
    ) -> (ApprovalRecord, Option<CallResult>) {
        let channel = context.inbound.channel.as_str();
        let record = self.approval_record(context, call, gated, resume);
        let earlier = self.earlier_run(&record).await;
        if let Err(e) = self
            .patiently(channel, self.store.create_approval(&record))
            .await
        {
            let result = self.not_run(
                channel,
                call,
                CallOutcome::NotRun,
                &format!("the approval could not be recorded, so nothing ran: {e}"),
                json!({}),
            );
            return (record, Some(result));
        }
        let request = ApprovalRequest {
            earlier,
            ..self.approval_request(context, &record, gated)
        };
        self.emit(
            channel,
            AgentEvent::ApprovalRequested {
                approval_id: request.id.clone(),
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                arguments: request.arguments.clone(),
                source: request.decision.source,
                reason: request.decision.reason.clone(),
                requester: request.requester.clone(),
                expires_at: unix_seconds(request.expires_at),
            },
        );
        let waiting = Instant::now();
        let answer = self.wait_for_answer(&request, context.run_id).await;
        timer.exclude(waiting.elapsed());
        self.settle(channel, call, record, &answer).await
    }

    fn approval_record(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        gated: &GatedCall,
        resume: Option<String>,
    ) -> ApprovalRecord {
        let now = self.clock.now();
        ApprovalRecord {
            id: new_id(),
            run_id: context.run_id.to_owned(),
            channel: context.inbound.channel.clone(),
            requester: context.inbound.author.clone(),
            tool: call.tool.clone(),
            arguments: gated.arguments.clone(),
            arguments_hash: arguments_hash(&gated.arguments),
            source: gated.decision.source.as_str().to_owned(),
            reason: gated.decision.reason.clone(),
            status: ApprovalStatus::Pending,
            decided_by: None,
            decided_at: None,
            created_at: now,
            expires_at: now + self.limits.approval_timeout,
            message_ref: None,
            note: None,
            resume,
        }
    }

    fn approval_request(
        &self,
        context: &RunContext<'_>,
        record: &ApprovalRecord,
        gated: &GatedCall,
    ) -> ApprovalRequest {
        let (tool, arguments, decision) = (&record.tool, &gated.arguments, &gated.decision);
        let (tools, mode) = (context.tools(), context.settings.mode);
        ApprovalRequest {
            id: record.id.clone(),
            channel: record.channel.clone(),
            requester: record.requester.clone(),
            tool: tool.clone(),
            arguments: arguments.clone(),
            target: tools.get(tool).and_then(|t| t.target(arguments)),
            decision: decision.clone(),
            expires_at: record.expires_at,
            similar: self.similar_offer(tools, tool, arguments, decision, mode),
            earlier: None,
        }
    }

    /// When this channel last ran the call `record` asks about, after a person confirmed
    /// it: a person asked again should know that confirming runs it a second time. A store
    /// that cannot say is logged and the approval is shown without it.
    async fn earlier_run(&self, record: &ApprovalRecord) -> Option<EarlierRun> {
        let (channel, tool, hash) = (&record.channel, &record.tool, &record.arguments_hash);
        match self.store.earlier_run(channel, tool, hash).await {
            Ok(earlier) => earlier,
            Err(e) => {
                tracing::warn!(error = %e, "could not read whether this call ran before");
                None
            }
        }
    }

    /// Shows the request and waits for its answer or its expiry, keeping the run's
    /// heartbeat going meanwhile.
    async fn wait_for_answer(&self, request: &ApprovalRequest, run_id: &str) -> ApprovalOutcome {
        let waiting = Instant::now();
        let wait = tokio::time::timeout(
            self.limits.approval_timeout,
            self.approvals.request(request),
        );
        tokio::pin!(wait);
        let mut heartbeat = tokio::time::interval_at(waiting + HEARTBEAT, HEARTBEAT);
        loop {
            tokio::select! {
                answer = &mut wait => break answer.unwrap_or(ApprovalOutcome::Expired),
                _ = heartbeat.tick() => {
                    if let Err(e) = self.store.heartbeat_run(run_id).await {
                        tracing::warn!(error = %e, "could not record a heartbeat");
                    }
                }
            }
        }
    }

    /// Settles the approval in the store as `answer` says; whatever the store holds after
    /// (someone else's decision may have won) is what happens.
    async fn settle(
        &self,
        channel: &str,
        call: &ParsedCall,
        record: ApprovalRecord,
        answer: &ApprovalOutcome,
    ) -> (ApprovalRecord, Option<CallResult>) {
        let (status, by, note) = match answer {
            ApprovalOutcome::Confirmed { by } => {
                (ApprovalStatus::Confirmed, Some(by.as_str()), None)
            }
            ApprovalOutcome::AllowSimilar { by } => (
                ApprovalStatus::Confirmed,
                Some(by.as_str()),
                Some(ALLOW_SIMILAR_NOTE),
            ),
            ApprovalOutcome::Cancelled { by, reason } => (
                ApprovalStatus::Cancelled,
                Some(by.as_str()),
                reason.as_deref(),
            ),
            ApprovalOutcome::Expired => (ApprovalStatus::Expired, None, None),
            ApprovalOutcome::Undeliverable { .. } => (ApprovalStatus::Undeliverable, None, None),
        };
        let decided = self
            .store
            .decide_approval_noted(&record.id, status, by, note);
        let record = match self.patiently(channel, decided).await {
            Ok(Decided::Won(settled) | Decided::Lost(settled)) => settled,
            Ok(Decided::Missing) => {
                let result = self.not_run(
                    channel,
                    call,
                    CallOutcome::NotRun,
                    "the approval disappeared from the store, so nothing ran",
                    json!({}),
                );
                return (record, Some(result));
            }
            Err(e) => {
                let result = self.not_run(
                    channel,
                    call,
                    CallOutcome::NotRun,
                    &format!("the decision could not be recorded, so nothing ran: {e}"),
                    json!({}),
                );
                return (record, Some(result));
            }
        };
        self.emit(
            channel,
            AgentEvent::ApprovalResolved {
                approval_id: record.id.clone(),
                outcome: record.status,
                by: record.decided_by.clone(),
            },
        );
        if let ApprovalOutcome::Undeliverable { reason } = answer
            && record.status == ApprovalStatus::Undeliverable
        {
            // Nobody can answer in this channel: any later call would wait in vain, so the
            // run ends and the channel's queue moves.
            let mut result = self.not_run(
                channel,
                call,
                CallOutcome::Undeliverable,
                &format!(
                    "the approval request could not be shown in the channel, so nobody could answer it and nothing ran; the run ends here ({reason})"
                ),
                json!({}),
            );
            result.ends_run = Some(StopReason::Undeliverable);
            return (record, Some(result));
        }
        (record, None)
    }

    /// Whether this run goes on past its settled approval `record`. A person's decision on
    /// an approval that can be resumed (`resume` set) may also be acted on by a click that
    /// resumes the run from the store, when the click finds no run waiting here (another
    /// click woke it first, or it timed out that moment): whoever claims the continuation
    /// in the store first goes on, and the other does nothing, so the call runs once.
    pub(super) async fn continues(
        &self,
        channel: &str,
        record: &ApprovalRecord,
    ) -> Result<bool, StoreError> {
        let decided = matches!(
            record.status,
            ApprovalStatus::Confirmed | ApprovalStatus::Cancelled
        );
        if !decided || record.resume.is_none() {
            return Ok(true);
        }
        let claimant = new_id();
        self.patiently(
            channel,
            self.store.claim_continuation(&record.id, &claimant),
        )
        .await
    }

    /// Runs a call the gate or a person let through, within the run's time left, and tells
    /// the channel what came of it.
    pub(super) async fn execute(
        &self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        approval: &Approval,
        arguments: &Map<String, Value>,
        reading: Option<&Reading>,
        timer: &RunTimer,
    ) -> CallResult {
        let channel = context.inbound.channel.as_str();
        let Some(tool) = context.tools().get(&call.tool) else {
            return self.not_run(
                channel,
                call,
                CallOutcome::Denied,
                "the tool is gone",
                json!({}),
            );
        };
        // No tool runs while an earlier call's audit record is still unwritten: at most the
        // calls already running when the store went away wait in memory for their record.
        if let Err(e) = self.patiently(channel, self.flush_audit()).await {
            return self.not_run(
                channel,
                call,
                CallOutcome::NotRun,
                &format!(
                    "earlier audit records could not be written yet, so nothing runs until the state database answers again: {e}"
                ),
                json!({}),
            );
        }
        let executed = tokio::time::timeout(
            timer.remaining(),
            tool.execute_read(arguments, approval, reading),
        )
        .await;
        let ran = match executed {
            Ok(Ok(output)) => Ran {
                ok: true,
                summary: output.summary.clone(),
                chat: output.chat.clone(),
                text: output.for_llm(self.limits.tool_output_budget_chars),
                bytes: output
                    .attachment
                    .as_ref()
                    .map_or(output.text.len(), |a| a.bytes.len()) as u64,
                attachment: output.attachment,
            },
            Ok(Err(error)) => Ran {
                ok: false,
                summary: error.shortened(ERROR_SUMMARY_CHARS),
                chat: format!(
                    "**{}** failed: {}",
                    call.tool,
                    error.shortened(ERROR_CHAT_CHARS)
                ),
                attachment: None,
                text: error.for_llm(self.limits.tool_output_budget_chars),
                bytes: 0,
            },
            Err(_) => {
                let text =
                    "error: the run's time limit was reached while this call ran; it was stopped"
                        .to_owned();
                Ran {
                    ok: false,
                    summary: text.clone(),
                    chat: text.clone(),
                    attachment: None,
                    text,
                    bytes: 0,
                }
            }
        };
        self.emit(
            channel,
            AgentEvent::ToolResult {
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                ok: ran.ok,
                summary: ran.summary.clone(),
                chat: ran.chat,
                attachment: ran.attachment,
            },
        );
        CallResult {
            text: ran.text,
            ran: ran.ok,
            outcome: if ran.ok {
                CallOutcome::Ok
            } else {
                CallOutcome::Error
            },
            output_bytes: ran.bytes,
            summary: Some(crate::core::tools::shorten(
                &ran.summary,
                crate::core::ports::RESULT_EXCERPT_CHARS,
            )),
            ends_run: None,
        }
    }
}

/// What a tool's run came to: the event's parts for the channel, the text for the model.
struct Ran {
    ok: bool,
    summary: String,
    chat: String,
    attachment: Option<Attachment>,
    text: String,
    /// The output's size, for the audit record.
    bytes: u64,
}

/// The gate's decision as an approval stored it (its source and reason). A source this
/// version cannot read counts as the operator's policy, which no channel rule lifts.
pub(super) fn stored_decision(record: &ApprovalRecord) -> RiskDecision {
    let source = serde_json::from_value::<DecisionSource>(json!(record.source))
        .unwrap_or(DecisionSource::Policy);
    RiskDecision::new(Decision::Confirm, source, record.reason.clone())
}
