//! Turning agent output into Discord messages: splitting under the 2000-character limit
//! without breaking a code block, the approval message, and the button ids. Pure functions.
//!
//! A call is shown legible (`tools::render::ShownCall`): every invisible, direction-changing
//! or look-alike character as a `\u{…}` escape, with a line that says so. Text that quotes a
//! call outside a code block (a reason, a target, a rule's summary) is made inert as Markdown
//! ([`inert_markdown`]), so it cannot hide behind a spoiler or pose as a link or a mention;
//! inside a code block only a closing fence could act, and `fence_safe` breaks it.

use serde_json::{Map, Value};

use crate::core::ports::ApprovalRequest;
use crate::core::tools::{BriefPart, ToolSet};
use crate::tools::legible::{Escaped, Lines, legible};
use crate::tools::render::{ShownCall, code_block};

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

/// Markdown characters that could hide or disguise text outside a code span: spoilers,
/// masked links, emphasis and strike-through, mentions, timestamps and custom emoji (`<`),
/// and the backslash itself.
const MARKDOWN_ACTIVE: &[char] = &['\\', '*', '_', '~', '|', '[', ']', '<'];

/// `text` for a Discord line outside a code block, when it may quote a call: Markdown that
/// could hide or disguise text is escaped with a backslash (Discord shows the character
/// itself), outside the `code` spans the text pairs up, which stay as they are. Where the
/// backticks do not pair up simply (an odd number, or a run of two or more), they are
/// escaped too and no span forms.
pub fn inert_markdown(text: &str) -> String {
    let ticks = text.matches('`').count();
    let spans = ticks.is_multiple_of(2) && !text.contains("``");
    let mut out = String::with_capacity(text.len() + 8);
    let mut in_span = false;
    for c in text.chars() {
        if c == '`' {
            if spans {
                in_span = !in_span;
            } else {
                out.push('\\');
            }
        } else if !in_span && MARKDOWN_ACTIVE.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A text that may quote a call (a reason, a rule's summary), for a Discord line outside a
/// code block: legible on one line, and inert as Markdown.
pub fn quoted(text: &str) -> String {
    inert_markdown(&legible(text, Lines::Escaped).text)
}

/// What would run, as its tool in `tools` shows a call in short ([`ToolSet::brief_call`]):
/// code as code blocks, lines inert as Markdown, each text legible; a line follows when any
/// character had to be escaped.
pub fn describe_call(tools: &ToolSet, tool: &str, arguments: &Map<String, Value>) -> String {
    let mut escaped = Escaped::default();
    let mut show = |text: &str| {
        let shown = legible(text, Lines::Kept);
        escaped.merge(&shown.escaped);
        shown.text
    };
    let mut text = tools
        .brief_call(tool, arguments)
        .parts
        .iter()
        .map(|part| match part {
            BriefPart::Code { language, text } => code_block(language, &show(text)),
            BriefPart::Line(line) => inert_markdown(&show(line)),
        })
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(warning) = escaped.warning() {
        text.push('\n');
        text.push_str(&warning);
    }
    text
}

/// The approval message: what would run (all of it), where, why it needs a person, who
/// asked, when it expires. What does not fit in one message goes whole into an attached
/// `call.txt` that the message names: nothing of what a person approves is ever cut.
pub fn approval_message(tools: &ToolSet, request: &ApprovalRequest, expires_unix: u64) -> String {
    approval_view(tools, request, expires_unix).0
}

/// The attachment's name when an approval does not fit in one message.
pub const CALL_ATTACHMENT: &str = "call.txt";

/// [`approval_message`] and, when the call does not fit, the attachment with all of it.
pub fn approval_view(
    tools: &ToolSet,
    request: &ApprovalRequest,
    expires_unix: u64,
) -> (String, Option<crate::core::tools::Attachment>) {
    let shown = ShownCall::of_approval(tools, request);
    let head = format!(
        "**Confirm `{tool}`?** requested by <@{requester}>{target}",
        tool = request.tool,
        requester = request.requester,
        target = shown
            .target
            .as_deref()
            .map(|t| format!(" on {}", inert_markdown(t)))
            .unwrap_or_default(),
    );
    // Said before the call, so it is read before anyone confirms.
    let earlier = request.earlier.as_ref().map(|earlier| {
        let when = format!("<t:{}:R>", earlier.unix_seconds());
        let said = crate::core::approval::EarlierRun {
            result: earlier.result.as_deref().map(inert_markdown),
            ..earlier.clone()
        };
        format!("⚠️ {}", said.warning(&when, |by| format!("<@{by}>")))
    });
    let warnings = || earlier.clone().into_iter().chain(shown.warning());
    let warning: String = warnings().map(|w| format!("{w}\n")).collect();
    let why = |reason: &str| {
        format!(
            "**Why:** {} (`{}`)",
            inert_markdown(reason),
            request.decision.source
        )
    };
    let allow = request
        .similar
        .as_ref()
        .zip(shown.similar.as_deref())
        .map(|((_, ttl), summary)| {
            format!(
                "\n**{}** also lets calls like this run without asking here: {}.",
                allow_label(*ttl),
                inert_markdown(&cut_shown(summary, 200).0)
            )
        })
        .unwrap_or_default();
    let tail = format!("Expires <t:{expires_unix}:R>.{allow}");
    let full = format!(
        "{head}\n{warning}{}\n{}\n{tail}",
        code_block("", &shown.call),
        why(&shown.reason)
    );
    if full.chars().count() <= MESSAGE_LIMIT {
        return (full, None);
    }
    let file = format!(
        "{tool} requested by {requester}\n{target}why it needs a person: {reason} ({source})\nexpires: <t:{expires_unix}> (Unix time)\n\n{warning_block}what runs if it is confirmed:\n{call}\n",
        tool = request.tool,
        requester = request.requester,
        target = shown
            .target
            .as_deref()
            .map(|t| format!("where: {t}\n"))
            .unwrap_or_default(),
        reason = shown.reason,
        source = request.decision.source,
        warning_block = warnings().map(|w| format!("{w}\n\n")).collect::<String>(),
        call = shown.call,
    );
    let (reason, cut) = cut_shown(&shown.reason, 300);
    let short = format!(
        "{head}\n{warning}**The whole call is in the attached `{CALL_ATTACHMENT}`** ({} characters): read it there before you confirm; nothing of it is left out.\n{}{}\n{tail}",
        tools
            .whole_call(&request.tool, &request.arguments)
            .chars()
            .count(),
        why(&reason),
        if cut {
            " … (all of it in the file)"
        } else {
            ""
        },
    );
    (
        short,
        Some(crate::core::tools::Attachment {
            filename: CALL_ATTACHMENT.to_owned(),
            bytes: file.into_bytes(),
        }),
    )
}

/// Cuts a legible text to `budget` characters like [`crate::tools::render::cut`], but never
/// inside a `\u{…}` escape: a cut escape would name another character.
fn cut_shown(text: &str, budget: usize) -> (String, bool) {
    let (mut head, cut) = crate::tools::render::cut(text, budget);
    if cut
        && let Some(open) = head.rfind("\\u{")
        && !head[open..].contains('}')
    {
        head.truncate(open);
    }
    (head, cut)
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
            earlier: None,
        }
    }

    #[test]
    fn an_approval_never_cuts_what_will_run() {
        let line = format!("echo '{}' && rm -f keep.txt", "x".repeat(1_900));
        let (message, file) = approval_view(
            &crate::tools::tools_for_tests(),
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
            &crate::tools::tools_for_tests(),
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
            &crate::tools::tools_for_tests(),
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
    fn an_approval_shows_hidden_characters_escaped_and_says_so() {
        let command = "printf 'safe\u{202e}txt.exe' > n\u{200b}otes.txt";
        let request = request(
            "execute_command",
            serde_json::json!({ "command": command }),
            None,
        );
        let (message, file) =
            approval_view(&crate::tools::tools_for_tests(), &request, 1_700_000_000);
        assert!(file.is_none());
        assert_eq!(
            message,
            "**Confirm `execute_command`?** requested by <@42>\n\
             ⚠ This call contains 2 characters that are invisible, change the text's direction or can pass for others (1 direction control, 1 invisible character), shown here as `\\u{…}` with the code point in hex. What runs is the call exactly as written, with them in it.\n\
             ```\nprintf 'safe\\u{202e}txt.exe' > n\\u{200b}otes.txt\n```\n\
             **Why:** `rm` deletes files (`default`)\n\
             Expires <t:1700000000:R>."
        );
        // Settled, it keeps the escaped call and the warning.
        let settled = settled_message(&message, "confirmed", Some("7"));
        assert!(
            settled.contains("n\\u{200b}otes.txt") && settled.contains("⚠ This call contains 2"),
            "{settled}"
        );
        assert!(
            settled
                .ends_with("```\n**Why:** `rm` deletes files (`default`)\n✅ Confirmed by <@7>.")
        );
        // The request itself is untouched: what runs is the call as written.
        assert_eq!(request.arguments["command"], command);
    }

    #[test]
    fn a_long_call_attaches_its_legible_text_and_the_warning() {
        let command = format!("echo {} \u{2066}x\u{2069}", "a".repeat(1_950));
        let (message, file) = approval_view(
            &crate::tools::tools_for_tests(),
            &request(
                "execute_command",
                serde_json::json!({ "command": command }),
                None,
            ),
            0,
        );
        assert!(message.chars().count() <= 2_000);
        assert!(
            message.contains("⚠ This call contains 2 characters")
                && message.contains(CALL_ATTACHMENT),
            "{message}"
        );
        let text = String::from_utf8(file.expect("attached").bytes).expect("utf-8");
        let expected_tail = format!(
            "⚠ This call contains 2 characters that are invisible, change the text's direction or can pass for others (2 direction controls), shown here as `\\u{{…}}` with the code point in hex. What runs is the call exactly as written, with them in it.\n\n\
             what runs if it is confirmed:\necho {} \\u{{2066}}x\\u{{2069}}\n",
            "a".repeat(1_950)
        );
        assert!(text.ends_with(&expected_tail), "{text}");
        assert!(
            !text.contains('\u{2066}'),
            "no raw direction control in the file"
        );
    }

    #[test]
    fn text_quoting_a_call_cannot_hide_or_pose_outside_a_code_block() {
        for (text, expected) in [
            ("`rm` deletes files", "`rm` deletes files"),
            (
                "this deletes \"a||b||.txt\"",
                "this deletes \"a\\|\\|b\\|\\|.txt\"",
            ),
            (
                "`x` [free](https://e.test) <@1> *a* _b_ ~~c~~ \\",
                "`x` \\[free\\](https://e.test) \\<@1> \\*a\\* \\_b\\_ \\~\\~c\\~\\~ \\\\",
            ),
            // A span keeps what it holds; odd or doubled backticks form no span at all.
            ("`a||b` c||d", "`a||b` c\\|\\|d"),
            ("`e.test)`` is not", "\\`e.test)\\`\\` is not"),
            ("odd ` ||x||", "odd \\` \\|\\|x\\|\\|"),
        ] {
            assert_eq!(inert_markdown(text), expected, "{text:?}");
        }
        assert_eq!(
            quoted("`r\u{200b}m`\nline"),
            "`r\\u{200b}m`\\\\u{a}line",
            "legible on one line; outside the span the escape's backslash is doubled for Markdown"
        );
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn an_auto_or_refused_call_is_described_legibly_with_the_warning() {
        let sql = describe_call(
            &crate::tools::tools_for_tests(),
            "execute_sql",
            &args(serde_json::json!({"sql": "SELECT 1 -- \u{202e}", "database": "m\u{430}in"})),
        );
        assert_eq!(
            sql,
            "on database `m\\u{430}in`\n```sql\nSELECT 1 -- \\u{202e}\n```\n\
             ⚠ This call contains 2 characters that are invisible, change the text's direction or can pass for others (1 direction control, 1 look-alike character), shown here as `\\u{…}` with the code point in hex. What runs is the call exactly as written, with them in it."
        );
        assert_eq!(
            describe_call(
                &crate::tools::tools_for_tests(),
                "execute_command",
                &args(serde_json::json!({"command": "ls"}))
            ),
            "```sh\nls\n```"
        );
    }

    #[test]
    fn calls_are_described_per_tool() {
        let sql = describe_call(
            &crate::tools::tools_for_tests(),
            "execute_sql",
            &args(serde_json::json!({"sql": "DROP TABLE x"})),
        );
        assert_eq!(sql, "```sql\nDROP TABLE x\n```");
        let http = describe_call(
            &crate::tools::tools_for_tests(),
            "http_request",
            &args(
                serde_json::json!({"method": "post", "url": "https://x.test/a", "body": {"a": 1}}),
            ),
        );
        assert!(http.starts_with("```\nPOST https://x.test/a\n```") && http.contains("\"a\": 1"));
        let file = describe_call(
            &crate::tools::tools_for_tests(),
            "file_operations",
            &args(serde_json::json!({"operation": "write", "path": "a.txt", "content": "hello"})),
        );
        assert!(file.contains("write a.txt") && file.contains("content (5 characters)"));
        let sneaky = describe_call(
            &crate::tools::tools_for_tests(),
            "execute_command",
            &args(serde_json::json!({"command": "echo ```\n@everyone"})),
        );
        assert_eq!(sneaky.matches("```").count(), 2, "{sneaky}");
    }
}
