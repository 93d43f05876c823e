//! The loop's side of channel rules (see `core::rules`): finding the rule that lets a call
//! run, offering "allow similar" with an approval, and creating the rule once a person
//! chose it.

use std::time::UNIX_EPOCH;

use serde_json::{Map, Value};

use super::{Agent, AgentEvent, RunContext, new_id};
use crate::core::ports::ApprovalRecord;
use crate::core::risk::{ChannelMode, RiskDecision};
use crate::core::rules::{self, ChannelRule, Similarity};
use crate::core::tools::{GatedCall, ToolSet};

impl Agent {
    /// The active rule of `channel` that lets this call run, if any: only in smart mode, only
    /// for a confirm a rule may lift, only for a tool (of `tools`) that can say what is
    /// similar.
    pub(super) async fn rule_for(
        &self,
        tools: &ToolSet,
        channel: &str,
        tool: &str,
        gated: &GatedCall,
        mode: ChannelMode,
    ) -> Option<ChannelRule> {
        if mode == ChannelMode::Strict || !rules::liftable(&gated.decision, &gated.assessment) {
            return None;
        }
        let similarity = tools.get(tool)?.similarity(&gated.arguments)?;
        let now = self.clock.now();
        match self.store.channel_rules(channel, now).await {
            Ok(active) => active
                .into_iter()
                .find(|rule| rule.matches(tool, &similarity, now)),
            Err(e) => {
                // Without the rules the call asks a person, as it would without a rule.
                tracing::warn!(error = %e, "the channel's rules could not be read");
                None
            }
        }
    }

    /// What "allow similar" would cover for this call, when it may be offered.
    pub(super) fn similar_offer(
        &self,
        tools: &ToolSet,
        tool: &str,
        arguments: &Map<String, Value>,
        decision: &RiskDecision,
        mode: ChannelMode,
    ) -> Option<(Similarity, std::time::Duration)> {
        let ttl = self.limits.allow_similar;
        if ttl.is_zero() || mode == ChannelMode::Strict {
            return None;
        }
        let tool = tools.get(tool)?;
        let assessment = tool.assess(arguments, &self.assess_context);
        if !rules::liftable(decision, &assessment) {
            return None;
        }
        Some((tool.similarity(arguments)?, ttl))
    }

    /// Creates the rule a person chose with their confirmation, when this call may have one,
    /// and tells the channel. A rule that cannot be stored is logged; the call still runs.
    pub(super) async fn allow_similar(
        &self,
        context: &RunContext<'_>,
        record: &ApprovalRecord,
        decision: &RiskDecision,
    ) {
        let (tools, mode) = (context.tools(), context.settings.mode);
        let Some((similarity, ttl)) =
            self.similar_offer(tools, &record.tool, &record.arguments, decision, mode)
        else {
            tracing::warn!(approval = %record.id, "allow similar was chosen for a call no rule may cover");
            return;
        };
        let now = self.clock.now();
        let rule = ChannelRule {
            id: rule_id(&record.channel),
            channel: record.channel.clone(),
            tool: record.tool.clone(),
            similarity,
            created_by: record.decided_by.clone().unwrap_or_default(),
            created_at: now,
            expires_at: now + ttl,
            approval_id: Some(record.id.clone()),
        };
        if let Err(e) = self
            .patiently(&record.channel, self.store.create_rule(&rule))
            .await
        {
            tracing::error!(error = %e, "a channel rule could not be stored");
            return;
        }
        tracing::info!(rule = %rule.id, channel = %rule.channel, summary = %rule.similarity.summary, "channel rule created");
        self.emit(
            &record.channel,
            AgentEvent::RuleCreated {
                rule_id: rule.id.clone(),
                tool: rule.tool.clone(),
                summary: rule.similarity.summary.clone(),
                by: rule.created_by.clone(),
                expires_at: rule
                    .expires_at
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            },
        );
    }
}

/// A short id people can type (`/rules revoke r1a2b3c4d5`), unique in practice: ten hex
/// digits of a hash of a process-unique id and the channel.
fn rule_id(channel: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{}/{channel}", new_id()));
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    format!("r{hex}")
}
