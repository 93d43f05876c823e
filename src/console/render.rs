//! Events as terminal text. Everything the model or a tool wrote is cleaned of control
//! characters first, so output cannot move the cursor or change the terminal.

use serde_json::{Value, json};

use crate::core::agent::AgentEvent;
use crate::core::commands::{self, CommandOutcome};
use crate::core::ports::ApprovalRequest;

/// Removes control characters except newline and tab.
pub fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

fn arguments_line(arguments: &serde_json::Map<String, Value>) -> String {
    for key in ["sql", "command"] {
        if let Some(Value::String(text)) = arguments.get(key) {
            return text.clone();
        }
    }
    Value::Object(arguments.clone()).to_string()
}

/// The text of an event, or `None` for events the text console does not show.
pub fn event_text(event: &AgentEvent) -> Option<String> {
    let text = match event {
        AgentEvent::RunStarted { .. } | AgentEvent::RunFinished { .. } => return None,
        AgentEvent::ToolCall {
            tool,
            arguments,
            decision,
            source,
            reason,
            ..
        } => format!(
            "-> {tool}: {} [{decision}, {source}: {reason}]",
            arguments_line(arguments)
        ),
        AgentEvent::ApprovalRequested { .. } => return None,
        AgentEvent::ApprovalResolved { outcome, by, .. } => match by {
            Some(by) => format!("   {outcome} by {by}"),
            None => format!("   {outcome}"),
        },
        AgentEvent::ToolResult { chat, .. } => chat.clone(),
        AgentEvent::CallNotRun {
            tool,
            status,
            reason,
            ..
        } => format!("   {tool} not run ({status}): {reason}"),
        AgentEvent::Reply { text } => format!("riskgate: {text}"),
        AgentEvent::Error { message } => format!("error: {message}"),
        AgentEvent::Notice { message } => format!("note: {message}"),
        AgentEvent::RuleCreated {
            rule_id,
            tool,
            summary,
            ..
        } => format!(
            "   rule {rule_id}: {tool} calls like this ({summary}) run without asking for a while"
        ),
    };
    Some(clean(&text))
}

/// The question shown before reading the answer.
/// The prompt shows everything that will run, nothing cut, where it runs, and how long the
/// answer may take.
pub fn approval_prompt(request: &ApprovalRequest, now: std::time::SystemTime) -> String {
    let whole = crate::tools::render::whole_call(&request.tool, &request.arguments);
    let target = request
        .target
        .as_deref()
        .map(|t| format!(" on {t}"))
        .unwrap_or_default();
    let call = if whole.contains('\n') {
        format!("\n   | {}", whole.replace('\n', "\n   | "))
    } else {
        format!(" {whole}")
    };
    let left = request
        .expires_at
        .duration_since(now)
        .unwrap_or_default()
        .as_secs();
    let choices = match &request.similar {
        Some((similar, ttl)) => format!(
            "\n   y: confirm · a: confirm and allow similar calls for {} min ({}) · n [reason]: cancel, saying what to do instead",
            ttl.as_secs() / 60,
            similar.summary
        ),
        None => "\n   y: confirm · n [reason]: cancel, saying what to do instead".to_owned(),
    };
    clean(&format!(
        "?? {} wants to run {}{target}:{call}\n   why confirm: {} ({})\n   expires in {}m {:02}s (then nothing runs){choices}\n   confirm? [y/N]",
        request.requester,
        request.tool,
        request.decision.reason,
        request.decision.source,
        left / 60,
        left % 60
    ))
}

/// A channel command's outcome as the console shows it: the event kind (in `--json`, the
/// `event` field), the text, and the fields a script reads.
pub fn command_outcome(name: &str, outcome: CommandOutcome) -> (&'static str, String, Value) {
    let unix = |at: std::time::SystemTime| {
        at.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    };
    match outcome {
        CommandOutcome::Mode { mode, set_by } => (
            "mode",
            match set_by {
                Some(_) => format!("mode set to {mode}"),
                None => format!("mode: {mode}"),
            },
            json!({ "mode": mode.as_str() }),
        ),
        CommandOutcome::Profile { profile, set_by } => (
            "profile",
            match set_by {
                Some(_) => format!("profile set to {profile}"),
                None => format!("profile: {profile}"),
            },
            json!({ "profile": profile }),
        ),
        CommandOutcome::Status(status) => (
            "status",
            format!(
                "mode: {}, profile: {}, model: {} ({} protocol), tools: {}, pending approvals: {}, rules: {}",
                status.settings.mode,
                status.settings.profile,
                status.model,
                status.protocol,
                status.tools.join(", "),
                status.pending,
                status.rules
            ),
            json!({
                "mode": status.settings.mode.as_str(),
                "profile": status.settings.profile,
                "model": status.model,
                "protocol": status.protocol,
                "tools": status.tools,
                "pending": status.pending,
                "rules": status.rules,
            }),
        ),
        CommandOutcome::Reset { .. } => ("reset", "conversation cleared".to_owned(), json!({})),
        CommandOutcome::Pending(pending) => {
            let lines: Vec<String> = pending
                .iter()
                .map(|a| format!("{} {} for {}", a.id, a.tool, a.requester))
                .collect();
            let ids: Vec<&str> = pending.iter().map(|a| a.id.as_str()).collect();
            (
                "pending",
                listed(lines, "nothing is waiting"),
                json!({ "pending": ids }),
            )
        }
        CommandOutcome::Audit(records) => {
            let lines: Vec<String> = records
                .iter()
                .map(|r| {
                    let line = format!(
                        "{} {} {} ({}) -> {} by {}",
                        r.at, r.tool, r.decision, r.source, r.outcome, r.user
                    );
                    match commands::audit_note(r) {
                        Some(note) => format!("{line} ({note})"),
                        None => line,
                    }
                })
                .collect();
            let rows: Vec<Value> = records
                .iter()
                .map(|r| {
                    json!({
                        "at": r.at,
                        "tool": r.tool,
                        "decision": r.decision.to_string(),
                        "source": r.source.to_string(),
                        "outcome": r.outcome.to_string(),
                        "user": r.user,
                        "note": r.note,
                    })
                })
                .collect();
            (
                "audit",
                listed(lines, "no tool calls recorded"),
                json!({ "count": records.len(), "records": rows }),
            )
        }
        CommandOutcome::Rules(rules) => {
            let lines: Vec<String> = rules
                .iter()
                .map(|r| {
                    format!(
                        "{} {}: {} (by {}, until {})",
                        r.id,
                        r.tool,
                        r.similarity.summary,
                        r.created_by,
                        unix(r.expires_at)
                    )
                })
                .collect();
            let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
            ("rules", listed(lines, "no rules"), json!({ "rules": ids }))
        }
        CommandOutcome::Revoked { rule, .. } => (
            "rules",
            format!("rule {} revoked", rule.id),
            json!({ "revoked": rule.id }),
        ),
        CommandOutcome::Refused(why) => ("error", format!("/{name}: {why}"), json!({})),
    }
}

fn listed(lines: Vec<String>, empty: &str) -> String {
    if lines.is_empty() {
        empty.to_owned()
    } else {
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    #[test]
    fn the_prompt_shows_the_call_its_target_why_and_when_it_expires() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let request = ApprovalRequest {
            id: "a1".into(),
            channel: "console".into(),
            requester: "alice".into(),
            tool: "execute_sql".into(),
            arguments: serde_json::json!({"sql": "DELETE FROM orders WHERE id = 1"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            target: Some("database `prod`".into()),
            decision: crate::core::risk::RiskDecision::new(
                crate::core::risk::Decision::Confirm,
                crate::core::risk::DecisionSource::Default,
                "a DELETE changes data",
            ),
            expires_at: now + Duration::from_secs(299),
            similar: None,
        };
        let prompt = approval_prompt(&request, now);
        assert!(
            prompt.contains("DELETE FROM orders WHERE id = 1"),
            "{prompt}"
        );
        assert!(prompt.contains("on database `prod`"), "{prompt}");
        assert!(prompt.contains("a DELETE changes data"), "{prompt}");
        assert!(prompt.contains("expires in 4m 59s"), "{prompt}");
        let late = approval_prompt(&request, now + Duration::from_secs(600));
        assert!(late.contains("expires in 0m 00s"), "{late}");
    }
}
