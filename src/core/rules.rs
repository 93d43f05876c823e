//! Channel rules: "allow similar calls for a while". A person who confirms a call may also
//! let calls like it run without asking in that channel until the rule expires.
//!
//! "Like it" is decided by the tool ([`crate::core::tools::Tool::similarity`]): the narrowest
//! description that still covers the call. For commands that is the program, its subcommand
//! and the shape of its flags; for SQL the statement kind, the database and the tables; for
//! HTTP the method, host and path prefix; for files the operation and the directory. A rule
//! matches a later call when the tool and every one of those facts are equal.
//!
//! What a rule can never do: lift a policy deny or confirm, lift the destructive floor, act in
//! strict mode, or cover a command line that needs a shell (the tool gives no similarity). A
//! call a rule lets run runs contained exactly like any other call without a click, and its
//! audit record says `channel_rule` and names the rule.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::core::risk::{Assessment, Decision, DecisionSource, RiskDecision};

/// The facts that make calls "similar", and how a person reads them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Similarity {
    /// Every fact must be equal for a rule to match.
    pub key: BTreeMap<String, String>,
    /// E.g. "`kubectl get` with flags -n".
    pub summary: String,
}

impl Similarity {
    pub fn new(summary: impl Into<String>, facts: &[(&str, String)]) -> Self {
        Self {
            key: facts
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.clone()))
                .collect(),
            summary: summary.into(),
        }
    }
}

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelRule {
    pub id: String,
    pub channel: String,
    pub tool: String,
    pub similarity: Similarity,
    pub created_by: String,
    pub created_at: SystemTime,
    pub expires_at: SystemTime,
    /// The approval whose answer created it.
    pub approval_id: Option<String>,
}

impl ChannelRule {
    /// Whether this rule covers a call of `tool` with these facts at `now`.
    pub fn matches(&self, tool: &str, similarity: &Similarity, now: SystemTime) -> bool {
        self.tool == tool && self.similarity.key == similarity.key && now < self.expires_at
    }

    /// `rule <id>`, as the audit log names it.
    pub fn audit_note(&self) -> String {
        format!("rule {}", self.id)
    }
}

/// The note an approval decided with "allow similar" carries, so whoever acts on the decision
/// (the waiting run, or one resumed after a restart) creates the rule.
pub const ALLOW_SIMILAR_NOTE: &str = "allow similar calls for a while";

/// Whether a decision of the gate may be lifted by a rule: only a confirm that neither the
/// operator's policy nor the destructive floor nor strict mode made, of a call its tool does
/// not know to be destructive (the floor's class, whatever the model said).
pub fn liftable(decision: &RiskDecision, assessment: &Assessment) -> bool {
    !matches!(
        assessment,
        Assessment::Destructive(_) | Assessment::Forbidden(_)
    ) && decision.decision == Decision::Confirm
        && !matches!(
            decision.source,
            DecisionSource::Policy | DecisionSource::DestructiveFloor | DecisionSource::StrictMode
        )
}

/// The gate's decision once a rule lets the call run.
pub fn lifted(rule: &ChannelRule) -> RiskDecision {
    let until = rule
        .expires_at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    RiskDecision::new(
        Decision::Auto,
        DecisionSource::ChannelRule,
        format!(
            "channel rule {} allows {} (created by <@{}>, until <t:{until}:t>)",
            rule.id, rule.similarity.summary, rule.created_by
        ),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn rule(facts: &[(&str, String)]) -> ChannelRule {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        ChannelRule {
            id: "r1".into(),
            channel: "c".into(),
            tool: "execute_command".into(),
            similarity: Similarity::new("x", facts),
            created_by: "bob".into(),
            created_at: now,
            expires_at: now + Duration::from_secs(3_600),
            approval_id: None,
        }
    }

    #[test]
    fn a_rule_matches_equal_facts_of_the_same_tool_until_it_expires() {
        let facts = [("program", "kubectl".to_owned()), ("sub", "get".to_owned())];
        let r = rule(&facts);
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000);
        assert!(r.matches("execute_command", &Similarity::new("y", &facts), at));
        assert!(!r.matches("execute_sql", &Similarity::new("y", &facts), at));
        let other = [
            ("program", "kubectl".to_owned()),
            ("sub", "delete".to_owned()),
        ];
        assert!(!r.matches("execute_command", &Similarity::new("y", &other), at));
        let fewer = [("program", "kubectl".to_owned())];
        assert!(!r.matches("execute_command", &Similarity::new("y", &fewer), at));
        let later = SystemTime::UNIX_EPOCH + Duration::from_secs(4_600);
        assert!(!r.matches("execute_command", &Similarity::new("y", &facts), later));
    }

    #[test]
    fn only_a_default_or_model_confirm_of_a_call_not_destructive_can_be_lifted() {
        let confirm = |source| RiskDecision::new(Decision::Confirm, source, "r");
        let unknown = Assessment::Unknown("r".into());
        assert!(liftable(&confirm(DecisionSource::Default), &unknown));
        assert!(liftable(&confirm(DecisionSource::Llm), &unknown));
        assert!(!liftable(&confirm(DecisionSource::Policy), &unknown));
        assert!(!liftable(
            &confirm(DecisionSource::DestructiveFloor),
            &unknown
        ));
        assert!(!liftable(&confirm(DecisionSource::StrictMode), &unknown));
        let destructive = Assessment::Destructive("`rm` deletes files".into());
        assert!(!liftable(&confirm(DecisionSource::Default), &destructive));
        let deny = RiskDecision::new(Decision::Deny, DecisionSource::Policy, "r");
        assert!(!liftable(&deny, &unknown));
    }
}
