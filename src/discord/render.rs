//! Turning agent output into Discord messages: splitting under the 2000-character limit
//! without breaking a code block, the approval message, and the button ids. Pure functions.

use serde_json::{Map, Value};

use crate::core::ports::ApprovalRequest;
use crate::tools::render::{code_block, fence_safe};

/// Discord's limit is 2000 characters; a margin leaves room for fence repairs.
pub const MESSAGE_LIMIT: usize = 1900;

/// Splits `text` into messages of at most `limit` characters. A code block cut in two is
/// closed at the end of one message and reopened (same language) in the next.
pub fn split_message(text: &str, limit: usize) -> Vec<String> {
    let limit = limit.max(40);
    let mut chunks = Vec::new();
    let mut current = String::new();
    // The opening line of the fence we are inside, if any.
    let mut fence: Option<String> = None;
    for line in text.split('\n') {
        let toggles = line.trim_start().starts_with("```");
        let mut pieces: Vec<String> = Vec::new();
        // Lines longer than a message are cut at character boundaries.
        let budget = limit.saturating_sub(16).max(20);
        let mut rest = line;
        while rest.chars().count() > budget {
            let cut = rest
                .char_indices()
                .nth(budget)
                .map_or(rest.len(), |(i, _)| i);
            pieces.push(rest[..cut].to_owned());
            rest = &rest[cut..];
        }
        pieces.push(rest.to_owned());
        for piece in pieces {
            let closing = if fence.is_some() { 4 } else { 0 };
            let needed = current.chars().count() + piece.chars().count() + 1 + closing;
            if !current.is_empty() && needed > limit {
                if fence.is_some() {
                    current.push_str("\n```");
                }
                chunks.push(std::mem::take(&mut current));
                if let Some(open) = &fence {
                    current.push_str(open);
                }
            }
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(&piece);
        }
        if toggles {
            fence = match fence {
                Some(_) => None,
                None => Some(line.trim_start().to_owned()),
            };
        }
    }
    if !current.trim().is_empty() {
        chunks.push(current);
    }
    chunks
}

/// The two actions of an approval message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonAction {
    Confirm,
    Cancel,
    /// Opens the "cancel with a reason" modal.
    Reason,
    /// Confirms and allows similar calls for a while.
    Allow,
    /// The submitted "cancel with a reason" modal (a modal's custom id, not a button's).
    ReasonGiven,
}

const PREFIX: &str = "riskgate";

/// The `custom_id` of a button: it carries the approval id.
pub fn custom_id(action: ButtonAction, approval_id: &str) -> String {
    let verb = match action {
        ButtonAction::Confirm => "confirm",
        ButtonAction::Cancel => "cancel",
        ButtonAction::Reason => "why",
        ButtonAction::Allow => "allow",
        ButtonAction::ReasonGiven => "reason",
    };
    format!("{PREFIX}:{verb}:{approval_id}")
}

/// Reads a `custom_id` back; `None` for buttons that are not ours.
pub fn parse_custom_id(custom_id: &str) -> Option<(ButtonAction, &str)> {
    let mut parts = custom_id.splitn(3, ':');
    if parts.next()? != PREFIX {
        return None;
    }
    let action = match parts.next()? {
        "confirm" => ButtonAction::Confirm,
        "cancel" => ButtonAction::Cancel,
        "why" => ButtonAction::Reason,
        "allow" => ButtonAction::Allow,
        "reason" => ButtonAction::ReasonGiven,
        _ => return None,
    };
    let id = parts.next().filter(|id| !id.is_empty())?;
    Some((action, id))
}

fn text_arg<'a>(arguments: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    arguments.get(key).and_then(Value::as_str)
}

/// What would run, formatted per tool.
pub fn describe_call(tool: &str, arguments: &Map<String, Value>) -> String {
    match tool {
        "execute_sql" => {
            let mut text = code_block("sql", text_arg(arguments, "sql").unwrap_or_default());
            if let Some(db) = text_arg(arguments, "database") {
                text = format!("on database `{}`\n{text}", fence_safe(db));
            }
            text
        }
        "execute_command" => code_block("sh", text_arg(arguments, "command").unwrap_or_default()),
        "http_request" => {
            let method = text_arg(arguments, "method")
                .unwrap_or("GET")
                .to_ascii_uppercase();
            let url = text_arg(arguments, "url").unwrap_or_default();
            let mut text = code_block("", &format!("{method} {url}"));
            if let Some(body) = arguments.get("body").filter(|b| !b.is_null()) {
                let body = match body {
                    Value::String(s) => s.clone(),
                    other => serde_json::to_string_pretty(other).unwrap_or_default(),
                };
                let (preview, _) = crate::tools::render::cut(&body, 400);
                text.push_str(&format!("\nbody:\n{}", code_block("", &preview)));
            }
            text
        }
        "file_operations" => {
            let operation = text_arg(arguments, "operation").unwrap_or("?");
            let path = text_arg(arguments, "path").unwrap_or("?");
            let mut line = format!("{operation} {path}");
            if let Some(destination) = text_arg(arguments, "destination") {
                line.push_str(&format!(" -> {destination}"));
            }
            if arguments.get("recursive") == Some(&Value::Bool(true)) {
                line.push_str(" (recursive)");
            }
            let mut text = code_block("", &line);
            if let Some(content) = text_arg(arguments, "content") {
                let (preview, cut) = crate::tools::render::cut(content, 400);
                text.push_str(&format!(
                    "\ncontent ({} characters{}):\n{}",
                    content.chars().count(),
                    if cut { ", start shown" } else { "" },
                    code_block("", &preview)
                ));
            }
            text
        }
        _ => code_block(
            "json",
            &serde_json::to_string_pretty(&Value::Object(arguments.clone())).unwrap_or_default(),
        ),
    }
}

/// The approval message: what would run (all of it), where, why it needs a person, who
/// asked, when it expires. What does not fit in one message goes whole into an attached
/// `call.txt` that the message names: nothing of what a person approves is ever cut.
pub fn approval_message(request: &ApprovalRequest, expires_unix: u64) -> String {
    approval_view(request, expires_unix).0
}

/// The attachment's name when an approval does not fit in one message.
pub const CALL_ATTACHMENT: &str = "call.txt";

/// [`approval_message`] and, when the call does not fit, the attachment with all of it.
pub fn approval_view(
    request: &ApprovalRequest,
    expires_unix: u64,
) -> (String, Option<crate::core::tools::Attachment>) {
    let target =
        |shape: fn(&str) -> String| request.target.as_deref().map(shape).unwrap_or_default();
    let head = format!(
        "**Confirm `{tool}`?** requested by <@{requester}>{target}",
        tool = request.tool,
        requester = request.requester,
        target = target(|t| format!(" on {}", fence_safe(t))),
    );
    let whole = crate::tools::render::whole_call(&request.tool, &request.arguments);
    let why = format!(
        "**Why:** {} (`{}`)",
        fence_safe(&request.decision.reason),
        request.decision.source
    );
    let allow = request
        .similar
        .as_ref()
        .map(|(similar, ttl)| {
            let (summary, _) = crate::tools::render::cut(&similar.summary, 200);
            format!(
                "\n**{}** also lets calls like this run without asking here: {}.",
                allow_label(*ttl),
                fence_safe(&summary)
            )
        })
        .unwrap_or_default();
    let tail = format!("Expires <t:{expires_unix}:R>.{allow}");
    let full = format!("{head}\n{}\n{why}\n{tail}", code_block("", &whole));
    if full.chars().count() <= MESSAGE_LIMIT {
        return (full, None);
    }
    let file = format!(
        "{tool} requested by {requester}\n{target}why it needs a person: {reason} ({source})\nexpires: <t:{expires_unix}> (Unix time)\n\nwhat runs if it is confirmed:\n{whole}\n",
        tool = request.tool,
        requester = request.requester,
        target = target(|t| format!("where: {t}\n")),
        reason = request.decision.reason,
        source = request.decision.source,
    );
    let (reason, cut) = crate::tools::render::cut(&request.decision.reason, 300);
    let short = format!(
        "{head}\n**The whole call is in the attached `{CALL_ATTACHMENT}`** ({} characters): read it there before you confirm; nothing of it is left out.\n**Why:** {}{} (`{}`)\n{tail}",
        whole.chars().count(),
        fence_safe(&reason),
        if cut {
            " … (all of it in the file)"
        } else {
            ""
        },
        request.decision.source,
    );
    (
        short,
        Some(crate::core::tools::Attachment {
            filename: CALL_ATTACHMENT.to_owned(),
            bytes: file.into_bytes(),
        }),
    )
}

/// The label of the "allow similar" button, e.g. "Allow similar for 1 h".
pub fn allow_label(ttl: std::time::Duration) -> String {
    let minutes = ttl.as_secs().div_ceil(60);
    if minutes >= 60 && minutes.is_multiple_of(60) {
        format!("Allow similar for {} h", minutes / 60)
    } else {
        format!("Allow similar for {minutes} min")
    }
}

/// The approval message once settled: the buttons go, a line says what happened.
pub fn settled_message(original: &str, outcome: &str, by: Option<&str>) -> String {
    let head = original
        .rsplit_once("\nExpires <t:")
        .map_or(original, |(head, _)| head);
    let verdict = match (outcome, by) {
        ("confirmed", Some(by)) => format!("✅ Confirmed by <@{by}>."),
        ("cancelled", Some(by)) => format!("❌ Cancelled by <@{by}>."),
        ("allowed", Some(by)) => {
            format!("✅ Confirmed by <@{by}>, who also allowed similar calls here for a while.")
        }
        ("expired", _) => "⌛ Expired: nobody answered in time.".to_owned(),
        ("abandoned", _) => "⏹️ No longer active: the bot restarted while it waited.".to_owned(),
        ("unrecorded", _) => "⚠️ Not answerable: this message could not be recorded in the state database, so no click on it could be checked and nothing ran. Ask again once the database answers.".to_owned(),
        (other, _) => format!("Settled: {other}."),
    };
    format!("{head}\n{verdict}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, arguments: Value, target: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            id: "a1".into(),
            channel: "1".into(),
            requester: "42".into(),
            tool: tool.into(),
            arguments: arguments.as_object().cloned().unwrap_or_default(),
            target: target.map(str::to_owned),
            decision: crate::core::risk::RiskDecision::new(
                crate::core::risk::Decision::Confirm,
                crate::core::risk::DecisionSource::Default,
                "`rm` deletes files",
            ),
            expires_at: std::time::SystemTime::UNIX_EPOCH,
            similar: None,
        }
    }

    #[test]
    fn an_approval_never_cuts_what_will_run() {
        let line = format!("echo '{}' && rm -f keep.txt", "x".repeat(1_900));
        let (message, file) = approval_view(
            &request(
                "execute_command",
                serde_json::json!({"command": line}),
                None,
            ),
            0,
        );
        assert!(
            message.chars().count() <= 2_000,
            "{}",
            message.chars().count()
        );
        assert!(message.contains(CALL_ATTACHMENT), "{message}");
        assert!(
            message.contains("`rm` deletes files"),
            "the reason is shown: {message}"
        );
        let file = file.expect("the whole call is attached");
        let text = String::from_utf8(file.bytes).expect("utf-8");
        assert!(text.contains(&line), "the whole line, exactly: {text}");
        // A call that fits is shown whole in the message itself.
        let (message, file) = approval_view(
            &request(
                "execute_sql",
                serde_json::json!({"sql": "DELETE FROM t WHERE id = 1"}),
                Some("database `main` (postgres, the default)"),
            ),
            0,
        );
        assert!(file.is_none());
        assert!(message.contains("DELETE FROM t WHERE id = 1"), "{message}");
        assert!(
            message.contains("database `main` (postgres, the default)"),
            "the target is named: {message}"
        );
    }

    #[test]
    fn an_http_approval_shows_headers_with_secrets_masked_and_the_whole_body() {
        let body = "b".repeat(1_000);
        let (message, file) = approval_view(
            &request(
                "http_request",
                serde_json::json!({
                    "method": "delete",
                    "url": "https://api.example.com/items/1",
                    "headers": {"Authorization": "Bearer sk-123456", "X-HTTP-Method-Override": "PURGE"},
                    "body": body,
                }),
                None,
            ),
            0,
        );
        let shown = match file {
            Some(file) => String::from_utf8(file.bytes).expect("utf-8"),
            None => message.clone(),
        };
        assert!(
            shown.contains("DELETE https://api.example.com/items/1"),
            "{shown}"
        );
        assert!(shown.contains("X-HTTP-Method-Override: PURGE"), "{shown}");
        assert!(shown.contains("Authorization: ••••"), "{shown}");
        assert!(!shown.contains("sk-123456"), "{shown}");
        assert!(shown.contains(&body), "the whole body");
    }

    fn fences_balanced(chunk: &str) -> bool {
        chunk
            .lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count()
            % 2
            == 0
    }

    #[test]
    fn long_replies_split_under_the_limit_with_fences_intact() {
        let mut text = String::from("Here are the rows:\n```sql\n");
        for i in 0..300 {
            text.push_str(&format!("row {i:04} | some value that takes room\n"));
        }
        text.push_str("```\nAnd a closing remark.");
        let chunks = split_message(&text, MESSAGE_LIMIT);
        assert!(chunks.len() >= 5, "{}", chunks.len());
        for chunk in &chunks {
            assert!(chunk.chars().count() <= 2000, "{}", chunk.chars().count());
            assert!(fences_balanced(chunk), "unbalanced:\n{chunk}");
        }
        assert!(
            chunks[1].starts_with("```sql\n"),
            "reopened with its language"
        );
        let joined: String = chunks.join("\n");
        for i in 0..300 {
            assert!(joined.contains(&format!("row {i:04}")), "row {i} lost");
        }
        assert!(
            chunks
                .last()
                .expect("last")
                .ends_with("And a closing remark.")
        );
    }

    #[test]
    fn a_5000_character_line_is_cut_and_short_text_is_one_message() {
        let chunks = split_message(&"x".repeat(5000), MESSAGE_LIMIT);
        assert!(chunks.len() >= 3);
        assert!(chunks.iter().all(|c| c.chars().count() <= 2000));
        assert_eq!(chunks.concat().len(), 5000);
        assert_eq!(split_message("hello", MESSAGE_LIMIT), ["hello"]);
        assert!(split_message("", MESSAGE_LIMIT).is_empty());
    }

    #[test]
    fn custom_ids_round_trip_and_foreign_ones_are_ignored() {
        let id = custom_id(ButtonAction::Confirm, "18a2f0c0001");
        assert_eq!(id, "riskgate:confirm:18a2f0c0001");
        assert_eq!(
            parse_custom_id(&id),
            Some((ButtonAction::Confirm, "18a2f0c0001"))
        );
        assert_eq!(
            parse_custom_id("riskgate:cancel:x"),
            Some((ButtonAction::Cancel, "x"))
        );
        for foreign in [
            "other:confirm:x",
            "riskgate:delete:x",
            "riskgate:confirm:",
            "riskgate",
        ] {
            assert_eq!(parse_custom_id(foreign), None, "{foreign}");
        }
    }

    #[test]
    fn calls_are_described_per_tool() {
        let args = |v: serde_json::Value| v.as_object().cloned().expect("object");
        let sql = describe_call(
            "execute_sql",
            &args(serde_json::json!({"sql": "DROP TABLE x"})),
        );
        assert_eq!(sql, "```sql\nDROP TABLE x\n```");
        let http = describe_call(
            "http_request",
            &args(
                serde_json::json!({"method": "post", "url": "https://x.test/a", "body": {"a": 1}}),
            ),
        );
        assert!(http.starts_with("```\nPOST https://x.test/a\n```") && http.contains("\"a\": 1"));
        let file = describe_call(
            "file_operations",
            &args(serde_json::json!({"operation": "write", "path": "a.txt", "content": "hello"})),
        );
        assert!(file.contains("write a.txt") && file.contains("content (5 characters)"));
        let sneaky = describe_call(
            "execute_command",
            &args(serde_json::json!({"command": "echo ```\n@everyone"})),
        );
        assert_eq!(sneaky.matches("```").count(), 2, "{sneaky}");
    }
}
