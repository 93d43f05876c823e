//! Runs that survive a restart. When a run asks a person on a surface that can be answered
//! after a restart (Discord's buttons; not the console's prompt), the approval is stored
//! with where the run stood: the person's message, the run's messages so far, the call
//! waiting and the calls after it in the same reply, and the run's counters. If the process
//! stops while it waits, the approval stays pending (the sweep does not abandon it before
//! its expiry); a click then decides it in the store as usual, and since no run waits for
//! it, the process serving the channel calls [`Agent::resume`]: the stored, hash-checked
//! call runs (or its cancel goes back to the model), the rest of the reply's calls follow,
//! and the run goes on from the stored conversation like any other.
//!
//! "No run waits for it" is what the click sees, and it can be wrong for a moment: a second
//! click may have woken the waiting run first, or the run's wait may have timed out just
//! then. So the run that asked and a resumed copy both claim the run's continuation in the
//! store before they act on the decision ([`Agent::continues`]); one wins, the other does
//! nothing, and the decided call runs once.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{
    Agent, AgentEvent, Behind, CallOutcome, CallSlot, Ended, Inbound, Memory, ParsedCall, Progress,
    RunContext, RunMessages, RunOutcome, RunTimer, StopReason, completed, slot_id_and_tool,
    status_json,
};
use crate::core::ports::{ApprovalRecord, ApprovalStatus, AuditRecord};
use crate::core::risk::Decision;

/// The format of a stored run; a different one is not resumed.
const VERSION: u32 = 1;

/// Where a run stood when it asked a person, as stored with the approval.
#[derive(Serialize, Deserialize)]
struct Saved {
    version: u32,
    inbound: Inbound,
    run_id: String,
    messages: RunMessages,
    call: ParsedCall,
    /// The calls of the same reply after the one waiting.
    rest: Vec<CallSlot>,
    iterations: u32,
    next_id: u64,
    results: Vec<String>,
    cancelled: Vec<String>,
}

/// The call waiting and the run's counters, as the loop has them when it asks.
pub(super) struct At<'c> {
    pub call: &'c ParsedCall,
    pub rest: &'c [CallSlot],
    pub iterations: u32,
    pub next_id: u64,
    pub results: &'c [String],
    pub cancelled: &'c HashSet<String>,
}

impl Agent {
    /// Where the run stands, as stored with an approval; `None` when the approval surface
    /// cannot be answered after a restart.
    pub(super) fn checkpoint(
        &self,
        context: &RunContext<'_>,
        messages: &RunMessages,
        at: At<'_>,
    ) -> Option<String> {
        if !self.approvals.resumable() {
            return None;
        }
        let mut cancelled: Vec<String> = at.cancelled.iter().cloned().collect();
        cancelled.sort();
        let saved = Saved {
            version: VERSION,
            inbound: context.inbound.clone(),
            run_id: context.run_id.to_owned(),
            messages: messages.clone(),
            call: at.call.clone(),
            rest: at.rest.to_vec(),
            iterations: at.iterations,
            next_id: at.next_id,
            results: at.results.to_vec(),
            cancelled,
        };
        match serde_json::to_string(&saved) {
            Ok(json) => Some(json),
            Err(e) => {
                tracing::warn!(error = %e, "the run's state could not be stored with its approval");
                None
            }
        }
    }

    /// Continues the run that waited for approval `approval_id` when its process stopped,
    /// now that a person decided it. `None` when there is nothing to continue: no such
    /// approval, no stored run, or not confirmed or cancelled.
    pub async fn resume(&self, approval_id: &str) -> Option<RunOutcome> {
        let (record, saved) = self.resumable(approval_id).await?;
        let Saved {
            inbound,
            run_id,
            messages,
            call,
            rest,
            ..
        } = &saved;
        let mut messages = messages.clone();
        let channel = inbound.channel.as_str();
        tracing::info!(
            approval = approval_id,
            run_id,
            "resuming a run after a restart"
        );
        self.announce_resume(inbound);
        let mut behind = Behind::starting(Box::pin(self.patiently(
            channel,
            self.store.start_run(run_id, channel, &self.instance),
        )));
        let (settings, history) = match self.begin(channel).await {
            Ok(begun) => begun,
            Err(e) => {
                let ended = Ended::before_any_step(RunOutcome::Stopped(StopReason::Store(e)));
                let outcome = self
                    .conclude(channel, run_id, behind, ended, &messages)
                    .await;
                return Some(outcome);
            }
        };
        let prepared = self.prepared(&settings.profile).await;
        let memory = if messages.history_left_out {
            // The run went on without the earlier conversation, too long for the model.
            Memory::default()
        } else {
            self.memory(
                channel,
                &prepared,
                history,
                &messages.all()[0],
                self.budget(),
            )
            .await
        };
        // A resumed run has nobody at a terminal to interrupt it.
        let interrupt = tokio_util::sync::CancellationToken::new();
        let context = RunContext {
            inbound,
            run_id,
            settings: &settings,
            prepared: &prepared,
            interrupt: &interrupt,
        };
        let mut progress = Progress {
            iterations: saved.iterations,
            next_id: saved.next_id,
            results: saved.results.clone(),
            cancelled: saved.cancelled.iter().cloned().collect(),
            ..Progress::default()
        };
        let mut timer = RunTimer::new(self.limits.run_timeout);
        let stop = self
            .resume_decided(
                &context,
                call,
                &record,
                &mut behind,
                &mut timer,
                &mut messages,
                &mut progress,
            )
            .await;
        let stop = self
            .rest_of_reply(
                &context,
                rest,
                stop,
                &mut behind,
                &mut timer,
                &mut messages,
                &mut progress,
            )
            .await;
        let outcome = match stop {
            Some(outcome) => outcome,
            None => {
                self.steps(
                    &context,
                    memory,
                    &mut behind,
                    &mut timer,
                    &mut messages,
                    &mut progress,
                )
                .await
            }
        };
        let ended = Ended {
            outcome,
            iterations: progress.iterations,
        };
        Some(
            self.conclude(channel, run_id, behind, ended, &messages)
                .await,
        )
    }

    /// Tells the channel that a run goes on after a restart.
    fn announce_resume(&self, inbound: &Inbound) {
        let channel = inbound.channel.as_str();
        self.emit(
            channel,
            AgentEvent::RunStarted {
                author: inbound.author_name.clone(),
                text: inbound.text.clone(),
            },
        );
        self.emit(
            channel,
            AgentEvent::Notice {
                message: format!(
                    "continuing the run that waited for this approval: the bot process it waited in stopped, or did not go on in time (asked by {})",
                    inbound.author_name
                ),
            },
        );
    }

    /// The calls of the reply after the one a person decided: run as the loop would have,
    /// or, after a stop, each given a result saying it did not run.
    #[allow(clippy::too_many_arguments)]
    async fn rest_of_reply<'a>(
        &'a self,
        context: &RunContext<'_>,
        rest: &[CallSlot],
        stop: Option<RunOutcome>,
        behind: &mut Behind<'a>,
        timer: &mut RunTimer,
        messages: &mut RunMessages,
        progress: &mut Progress,
    ) -> Option<RunOutcome> {
        if stop.is_some() {
            for slot in rest {
                let (id, tool) = slot_id_and_tool(slot);
                let text = status_json("not_run", "the run stopped before this call");
                messages.push(self.protocol.result_message(id, tool, &text));
            }
            return stop;
        }
        let ran = self
            .run_slots(context, rest, behind, timer, messages, progress)
            .await;
        self.after_slots(ran, progress)
    }

    /// The approval and its stored run, when there is a run to continue.
    async fn resumable(&self, approval_id: &str) -> Option<(ApprovalRecord, Saved)> {
        let record = match self.store.approval(approval_id).await {
            Ok(Some(record)) => record,
            Ok(None) => return None,
            Err(e) => {
                tracing::error!(error = %e, approval = approval_id, "the approval to resume could not be read");
                return None;
            }
        };
        if !matches!(
            record.status,
            ApprovalStatus::Confirmed | ApprovalStatus::Cancelled
        ) {
            return None;
        }
        let saved: Saved = match serde_json::from_str(record.resume.as_deref()?) {
            Ok(saved) => saved,
            Err(e) => {
                tracing::error!(error = %e, approval = approval_id, "the stored run could not be read; it is not resumed");
                return None;
            }
        };
        if saved.version != VERSION || saved.call.tool != record.tool {
            tracing::warn!(
                approval = approval_id,
                "the stored run is of another format; it is not resumed"
            );
            return None;
        }
        match self.continues(&record.channel, &record).await {
            Ok(true) => Some((record, saved)),
            Ok(false) => {
                tracing::info!(
                    approval = approval_id,
                    "the run went on without a resume (it was still waiting here, or another one resumed it)"
                );
                None
            }
            Err(e) => {
                tracing::error!(error = %e, approval = approval_id, "the run could not be claimed; it is not resumed");
                None
            }
        }
    }

    /// Runs (or cancels) the call a person decided after the restart, as its run would
    /// have: the result goes to the model, the record to the audit log.
    #[allow(clippy::too_many_arguments)]
    async fn resume_decided<'a>(
        &'a self,
        context: &RunContext<'_>,
        call: &ParsedCall,
        record: &ApprovalRecord,
        behind: &mut Behind<'a>,
        timer: &mut RunTimer,
        messages: &mut RunMessages,
        progress: &mut Progress,
    ) -> Option<RunOutcome> {
        let channel = context.inbound.channel.as_str();
        let started = Instant::now();
        let mut audit = AuditRecord {
            at: super::unix_seconds(self.clock.now()),
            run_id: context.run_id.to_owned(),
            channel: channel.to_owned(),
            user: context.inbound.author.clone(),
            tool: record.tool.clone(),
            arguments_summary: super::summarize(&record.arguments),
            decision: Decision::Confirm,
            source: super::call::stored_decision(record).source,
            reason: record.reason.clone(),
            // Set once the call is settled (see `completed`).
            outcome: CallOutcome::NotRun,
            approval_id: Some(record.id.clone()),
            duration_ms: 0,
            output_bytes: 0,
            note: None,
        };
        let result = match self
            .decided(context, call, record, &mut progress.cancelled, &mut audit)
            .await
        {
            Ok((approval, arguments)) => {
                // The gate's reading went with the process that asked: the tool reads the
                // stored, hash-checked arguments again.
                self.execute(context, call, &approval, &arguments, None, timer)
                    .await
            }
            Err(result) => result,
        };
        behind.push(Box::pin(self.audit(completed(
            audit,
            &result,
            started.elapsed(),
        ))));
        messages.push(
            self.protocol
                .result_message(&call.id, &call.tool, &result.text),
        );
        progress.results.push(result.text.clone());
        self.stop_after(channel, call, result, timer)
    }
}
