//! Shared pieces of the chat rendering of tool output: code blocks that cannot be broken
//! out of, cutting to a budget, the default view of a result ([`plain_output`]), and
//! [`ShownCall`]: what a person is shown of a call (its tool's whole view of it), with every
//! hidden or look-alike character escaped (`legible.rs`), whichever tool it is.

use serde_json::{Map, Value};

use crate::core::ports::ApprovalRequest;
use crate::core::tools::{Attachment, ToolOutput, ToolSet};
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

/// The default view of a result, for a tool without one of its own: the text as the model
/// reads it; in the chat, as much as `chat_budget` characters of it in a code block, and the
/// whole text attached as `filename` when that cut it.
pub fn plain_output(
    summary: String,
    text: String,
    chat_budget: usize,
    filename: &str,
) -> ToolOutput {
    let (shown, was_cut) = cut(&text, chat_budget);
    let mut chat = format!("{summary}\n{}", code_block("", &shown));
    if was_cut {
        chat.push_str(&format!("\n(all of it attached as `{filename}`)"));
    }
    ToolOutput {
        attachment: was_cut.then(|| Attachment {
            filename: filename.to_owned(),
            bytes: text.clone().into_bytes(),
        }),
        summary,
        text,
        chat,
    }
}

/// What a person is shown of a call, in both front ends: the whole call and every text that
/// quotes it, made legible (every invisible, direction-changing or look-alike character
/// escaped as `\u{…}`), and what was escaped. Only what is shown is escaped: the arguments
/// that are stored, hashed and run stay as the model wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownCall {
    /// The tool's whole view of the call ([`ToolSet::whole_call`]), legible, its lines kept.
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
    /// A call of one of `tools` (or of a tool gone since) and the gate's reason for its
    /// decision.
    pub fn of(tools: &ToolSet, tool: &str, arguments: &Map<String, Value>, reason: &str) -> Self {
        Self::with(tools, tool, arguments, reason, None, None)
    }

    /// Everything an approval shows of its call.
    pub fn of_approval(tools: &ToolSet, request: &ApprovalRequest) -> Self {
        Self::with(
            tools,
            &request.tool,
            &request.arguments,
            &request.decision.reason,
            request.target.as_deref(),
            request.similar.as_ref().map(|(s, _)| s.summary.as_str()),
        )
    }

    fn with(
        tools: &ToolSet,
        tool: &str,
        arguments: &Map<String, Value>,
        reason: &str,
        target: Option<&str>,
        similar: Option<&str>,
    ) -> Self {
        let call = legible(&tools.whole_call(tool, arguments), Lines::Kept);
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
    use crate::core::tools::SqlDialect;
    use crate::core::tools::testing::Stub;
    use crate::tools::legible::Hidden;
    use crate::tools::sql::{SqlRules, SqlTool};

    /// The SQL tool (with its own view) and a tool without views.
    fn tools() -> ToolSet {
        let mut tools = ToolSet::new();
        let sql = SqlTool::new(
            vec![("main".into(), SqlDialect::Sqlite)],
            SqlRules::new(&[], &[]),
        );
        tools.register(std::sync::Arc::new(sql));
        tools.register(std::sync::Arc::new(Stub::named("mcp__srv__do")));
        tools
    }

    #[test]
    fn a_shown_call_escapes_what_quotes_it_and_leaves_the_arguments_alone() {
        let tools = tools();
        let arguments = serde_json::json!({"sql": "DELETE FROM t\nWHERE n = '\u{200b}'"})
            .as_object()
            .cloned()
            .expect("object");
        let before = arguments.clone();
        let shown = ShownCall::of(
            &tools,
            crate::tools::sql::NAME,
            &arguments,
            "removes rows from\nt",
        );
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
        let clean = ShownCall::of(&tools, "mcp__srv__do", &serde_json::Map::new(), "a\nb");
        assert_eq!(clean.escaped.count(Hidden::Control), 1);
        assert!(
            clean
                .warning()
                .is_some_and(|w| w.contains("1 control character"))
        );
    }

    #[test]
    fn a_tool_without_a_view_of_its_own_is_shown_whole_and_legible() {
        let long = "y".repeat(3_000);
        let arguments = serde_json::json!({"title": "fix\u{202e}txt.exe", "body": long})
            .as_object()
            .cloned()
            .expect("object");
        for tool in ["mcp__srv__do", "mcp__gone__since"] {
            let shown = ShownCall::of(&tools(), tool, &arguments, "unknown");
            assert_eq!(
                shown.call,
                format!("{{\n  \"body\": \"{long}\",\n  \"title\": \"fix\\u{{202e}}txt.exe\"\n}}"),
                "indented JSON, nothing cut, the direction control escaped"
            );
            assert_eq!(shown.escaped.count(Hidden::Direction), 1);
            assert!(shown.warning().is_some());
        }
    }

    #[test]
    fn a_result_without_a_view_of_its_own_is_cut_in_the_chat_and_attached_whole() {
        let short = plain_output("1 item".into(), "a\nb".into(), 100, "result.txt");
        assert_eq!(short.chat, "1 item\n```\na\nb\n```");
        assert_eq!((short.text.as_str(), short.attachment), ("a\nb", None));
        let text = format!("{}```\n@everyone", "line\n".repeat(100));
        let long = plain_output("100 lines".into(), text.clone(), 50, "result.txt");
        assert_eq!(long.text, text, "the model reads it all");
        assert!(long.chat.ends_with("(all of it attached as `result.txt`)"));
        assert_eq!(long.chat.matches("```").count(), 2, "{}", long.chat);
        let attached = long.attachment.expect("attached");
        assert_eq!(
            (attached.filename.as_str(), attached.bytes),
            ("result.txt", text.into_bytes())
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
