//! Shared pieces of the chat rendering of tool output: code blocks that cannot be broken
//! out of, cutting to a budget, the whole text of a call, and [`ShownCall`]: what a person
//! is shown of a call, with every hidden or look-alike character escaped (`legible.rs`).

use serde_json::{Map, Value};

use crate::core::ports::ApprovalRequest;
use crate::tools::legible::{Escaped, Lines, legible};

/// Makes text safe inside a Markdown code block: a run of three backticks would close the
/// fence, so a zero-width space goes between them.
pub fn fence_safe(text: &str) -> String {
    text.replace("```", "`\u{200b}`\u{200b}`")
}

/// A fenced code block with an optional language.
pub fn code_block(language: &str, text: &str) -> String {
    let body = fence_safe(text);
    let newline = if body.ends_with('\n') { "" } else { "\n" };
    format!("```{language}\n{body}{newline}```")
}

/// Cuts `text` to at most `budget` characters at a line boundary when one is near.
/// Returns the text and whether anything was cut.
pub fn cut(text: &str, budget: usize) -> (String, bool) {
    if text.chars().count() <= budget {
        return (text.to_owned(), false);
    }
    let end = text
        .char_indices()
        .nth(budget)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..end];
    let head = match head.rfind('\n') {
        Some(line_end) if line_end * 4 >= end * 3 => &head[..line_end],
        _ => head,
    };
    (head.to_owned(), true)
}

/// Whether bytes look like text: valid UTF-8 (a character cut at the end is fine) with no NUL
/// in the first 8 KiB.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && bytes.len() - e.valid_up_to() < 4,
    }
}

/// The first bytes as hex, for describing binary content.
pub fn hex_preview(bytes: &[u8], n: usize) -> String {
    bytes
        .iter()
        .take(n)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn text_arg_of<'a>(
    arguments: &'a serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<&'a str> {
    arguments.get(key).and_then(serde_json::Value::as_str)
}

/// Header names whose values are masked in what a person is shown (never in what runs).
fn secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "authorization" | "proxy-authorization" | "cookie"
    ) || ["token", "secret", "key", "password", "auth", "session"]
        .iter()
        .any(|part| name.contains(part))
}

/// Everything a call runs, as plain text, nothing cut: the command, the SQL, the request
/// with its headers (secret-looking values masked) and body, the file operation with its
/// content.
pub fn whole_call(tool: &str, arguments: &serde_json::Map<String, serde_json::Value>) -> String {
    match tool {
        "execute_sql" => {
            let sql = text_arg_of(arguments, "sql").unwrap_or_default();
            match text_arg_of(arguments, "database") {
                Some(db) => format!("-- on database {db}\n{sql}"),
                None => sql.to_owned(),
            }
        }
        "execute_command" => text_arg_of(arguments, "command")
            .unwrap_or_default()
            .to_owned(),
        "http_request" => {
            let method = text_arg_of(arguments, "method")
                .unwrap_or("GET")
                .to_ascii_uppercase();
            let url = text_arg_of(arguments, "url").unwrap_or_default();
            let mut text = format!("{method} {url}");
            if let Some(headers) = arguments
                .get("headers")
                .and_then(serde_json::Value::as_object)
            {
                for (name, value) in headers {
                    let value = value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned);
                    let shown = if secret_header(name) {
                        format!(
                            "•••• ({} characters, hidden here; sent as given)",
                            value.chars().count()
                        )
                    } else {
                        value
                    };
                    text.push_str(&format!("\n{name}: {shown}"));
                }
            }
            if let Some(body) = arguments.get("body").filter(|b| !b.is_null()) {
                let body = match body {
                    serde_json::Value::String(s) => s.clone(),
                    other => serde_json::to_string_pretty(other).unwrap_or_default(),
                };
                text.push_str(&format!("\n\n{body}"));
            }
            text
        }
        "file_operations" => {
            let operation = text_arg_of(arguments, "operation").unwrap_or("?");
            let path = text_arg_of(arguments, "path").unwrap_or("?");
            let mut text = format!("{operation} {path}");
            if let Some(destination) = text_arg_of(arguments, "destination") {
                text.push_str(&format!(" -> {destination}"));
            }
            if arguments.get("recursive") == Some(&serde_json::Value::Bool(true)) {
                text.push_str(" (recursive)");
            }
            if let Some(content) = text_arg_of(arguments, "content") {
                text.push_str(&format!(
                    "\ncontent ({} characters):\n{content}",
                    content.chars().count()
                ));
            }
            text
        }
        _ => serde_json::to_string_pretty(&serde_json::Value::Object(arguments.clone()))
            .unwrap_or_default(),
    }
}

/// What a person is shown of a call, in both front ends: the whole call and every text that
/// quotes it, made legible (every invisible, direction-changing or look-alike character
/// escaped as `\u{…}`), and what was escaped. Only what is shown is escaped: the arguments
/// that are stored, hashed and run stay as the model wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownCall {
    /// [`whole_call`], legible, its lines kept.
    pub call: String,
    /// The gate's reason, which may quote the call, on one line.
    pub reason: String,
    /// Where it runs (an approval's target), on one line.
    pub target: Option<String>,
    /// What "allow similar" would cover, on one line.
    pub similar: Option<String>,
    /// What the call's text had escaped; where it had none, what the texts quoting it had
    /// (a newline in a reason, say), so every escape shown is explained.
    pub escaped: Escaped,
}

impl ShownCall {
    /// A call and the gate's reason for its decision.
    pub fn of(tool: &str, arguments: &Map<String, Value>, reason: &str) -> Self {
        Self::with(tool, arguments, reason, None, None)
    }

    /// Everything an approval shows of its call.
    pub fn of_approval(request: &ApprovalRequest) -> Self {
        Self::with(
            &request.tool,
            &request.arguments,
            &request.decision.reason,
            request.target.as_deref(),
            request.similar.as_ref().map(|(s, _)| s.summary.as_str()),
        )
    }

    fn with(
        tool: &str,
        arguments: &Map<String, Value>,
        reason: &str,
        target: Option<&str>,
        similar: Option<&str>,
    ) -> Self {
        let call = legible(&whole_call(tool, arguments), Lines::Kept);
        let mut quoted = Escaped::default();
        let mut one_line = |text: &str| {
            let shown = legible(text, Lines::Escaped);
            quoted.merge(&shown.escaped);
            shown.text
        };
        let reason = one_line(reason);
        let target = target.map(&mut one_line);
        let similar = similar.map(&mut one_line);
        let escaped = if call.escaped.is_empty() {
            quoted
        } else {
            call.escaped
        };
        Self {
            call: call.text,
            reason,
            target,
            similar,
            escaped,
        }
    }

    /// The line that says the call holds escaped characters and that it runs as written.
    pub fn warning(&self) -> Option<String> {
        self.escaped.warning()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::legible::Hidden;

    #[test]
    fn a_shown_call_escapes_what_quotes_it_and_leaves_the_arguments_alone() {
        let arguments = serde_json::json!({"sql": "DELETE FROM t\nWHERE n = '\u{200b}'"})
            .as_object()
            .cloned()
            .expect("object");
        let before = arguments.clone();
        let shown = ShownCall::of("execute_sql", &arguments, "removes rows from\nt");
        assert_eq!(shown.call, "DELETE FROM t\nWHERE n = '\\u{200b}'");
        assert_eq!(shown.reason, "removes rows from\\u{a}t");
        assert_eq!(
            (shown.escaped.total, shown.escaped.count(Hidden::Invisible)),
            (1, 1),
            "the call's own escapes count"
        );
        assert_eq!(arguments, before);
        // The warning counts the call's escapes; for a call with none, the reason's
        // newline is what it explains.
        let clean = ShownCall::of("execute_command", &serde_json::Map::new(), "a\nb");
        assert_eq!(clean.escaped.count(Hidden::Control), 1);
        assert!(
            clean
                .warning()
                .is_some_and(|w| w.contains("1 control character"))
        );
    }

    #[test]
    fn fences_cannot_be_closed_from_inside() {
        let block = code_block("", "a\n```\nrm -rf /\n```");
        assert_eq!(block.matches("```").count(), 2, "{block}");
        assert!(block.starts_with("```\n") && block.ends_with("\n```"));
    }

    #[test]
    fn cutting_prefers_line_ends() {
        let text = "line one\nline two\nline three";
        assert_eq!(cut(text, 100), (text.to_owned(), false));
        assert_eq!(cut(text, 20), ("line one\nline two".to_owned(), true));
        let (head, cut_) = cut("ééééé", 3);
        assert_eq!((head.as_str(), cut_), ("ééé", true));
    }

    #[test]
    fn text_and_binary_are_told_apart() {
        assert!(looks_like_text("héllo".as_bytes()));
        assert!(
            looks_like_text(&"héllo".as_bytes()[..2]),
            "a cut character is fine"
        );
        assert!(!looks_like_text(b"\x89PNG\r\n\x1a\n\0\0"));
        assert!(!looks_like_text(b"\xff\xfe\xfdabc"));
        assert_eq!(hex_preview(b"\x00\xffA", 2), "00 ff");
    }
}
