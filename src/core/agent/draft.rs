//! What people see of a reply: never the reasoning a model writes into its text, and, while
//! a reply is streamed, only what is sure to be answer.
//!
//! Reasoning. A reasoning model served without a reasoning parser (vLLM without
//! `--reasoning-parser`, llama.cpp with `--reasoning-format none`) writes its thinking into
//! the reply's text: `<think>…</think>` before the answer, or, when the chat template opened
//! the `<think>` itself (DeepSeek-R1's distills, QwQ), the thinking and an unbalanced
//! `</think>` before the answer. [`answer_part`] keeps only what follows the `</think>`: that
//! is what is shown, stored and sent back. A `<think>` that is not at the start, and a
//! reply without `</think>`, are left as they are.
//!
//! Drafts. While a reply streams, [`Draft`] turns its text pieces into
//! [`AgentEvent::ReplyPart`]s, holding back what may not be answer:
//! - a reply that opens with `<think>` shows nothing until its `</think>`, then what follows;
//! - text that ends in what may be the start of `</think>` waits for the next piece;
//! - once a reply of this model has shown reasoning ([`Agent::writes_reasoning`]), every
//!   later reply shows nothing until its `</think>` (or its end). The first such reply of a
//!   process cannot be told from an answer until its `</think>` arrives: it is shown as it
//!   comes, then replaced by what follows the `</think>` (a part with `restart`);
//! - a reply that starts like a tool call written as text (`{`, `[`, a tag, or a code fence
//!   of JSON) shows nothing: it is most likely a call, and a call is never a draft.
//!
//! A draft is only a preview: the step's [`AgentEvent::Reply`] is the answer, and a step
//! that ends any other way (calls, an unusable reply, a failure) takes it back with
//! [`AgentEvent::DraftDropped`].
//!
//! [`Agent::writes_reasoning`]: super::Agent::writes_reasoning

use crate::core::event::AgentEvent;

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// The answer in a reply's text, and whether reasoning was taken out of it (see the module
/// comment). A reply that opens a `<think>` and never closes it is all reasoning: its
/// answer is empty.
pub fn answer_part(text: &str) -> (&str, bool) {
    if let Some(thinking) = text.trim_start().strip_prefix(OPEN) {
        return match thinking.find(CLOSE) {
            Some(at) => (thinking[at + CLOSE.len()..].trim_start(), true),
            None => ("", true),
        };
    }
    match text.find(CLOSE) {
        Some(at) => (text[at + CLOSE.len()..].trim_start(), true),
        None => (text, false),
    }
}

/// A streamed reply's text so far, and what of it has been shown.
#[derive(Debug, Default)]
pub struct Draft {
    raw: String,
    /// Where the first `</think>` ends in `raw`, once it came.
    closed_at: Option<usize>,
    /// `raw` was searched for `</think>` up to here.
    searched: usize,
    /// Earlier replies of this model held reasoning: show nothing before `</think>`.
    reasons: bool,
    /// The part of `raw` shown so far (empty: nothing shown).
    shown: std::ops::Range<usize>,
    /// The step's reply is the answer: nothing is taken back.
    answered: bool,
}

impl Draft {
    /// A draft for a model that `reasons` (has written reasoning into a reply before).
    pub fn new(reasons: bool) -> Self {
        Self {
            reasons,
            ..Self::default()
        }
    }

    /// A piece of the reply came: the part to show, if the shown text changed.
    pub fn push(&mut self, piece: &str) -> Option<AgentEvent> {
        self.raw.push_str(piece);
        self.find_close();
        let visible = self.visible();
        if visible == self.shown {
            return None;
        }
        let continues = visible.start == self.shown.start && visible.end >= self.shown.end;
        let event = if continues && !self.shown.is_empty() {
            AgentEvent::ReplyPart {
                text: self.raw[self.shown.end..visible.end].to_owned(),
                restart: false,
            }
        } else {
            AgentEvent::ReplyPart {
                text: self.raw[visible.clone()].to_owned(),
                restart: !self.shown.is_empty(),
            }
        };
        self.shown = visible;
        Some(event)
    }

    /// The reply is the answer: what was shown stays (the `Reply` replaces it).
    pub fn answered(&mut self) {
        self.answered = true;
    }

    /// The step did not end in an answer: what was shown is taken back, if anything was.
    pub fn take_back(&mut self) -> Option<AgentEvent> {
        let shown = !std::mem::take(&mut self.shown).is_empty();
        (shown && !self.answered).then_some(AgentEvent::DraftDropped)
    }

    /// Looks for the first `</think>` in what came since the last look.
    fn find_close(&mut self) {
        if self.closed_at.is_some() {
            return;
        }
        // A `</think>` may straddle two pieces.
        let mut from = self.searched.saturating_sub(CLOSE.len() - 1);
        while !self.raw.is_char_boundary(from) {
            from -= 1;
        }
        self.closed_at = self.raw[from..]
            .find(CLOSE)
            .map(|at| from + at + CLOSE.len());
        self.searched = self.raw.len();
    }

    /// The part of `raw` that may be shown now (empty: nothing).
    fn visible(&self) -> std::ops::Range<usize> {
        let nothing = 0..0;
        let lead = self.raw.len() - self.raw.trim_start().len();
        let start = &self.raw[lead..];
        let opens = start.starts_with(OPEN) || OPEN.starts_with(start);
        let answer = match self.closed_at {
            Some(end) => end + (self.raw.len() - end - self.raw[end..].trim_start().len()),
            None if opens || self.reasons => return nothing,
            None => lead,
        };
        // What may be the beginning of `</think>` waits for the next piece.
        let end = self.raw.len()
            - (1..CLOSE.len())
                .rev()
                .find(|&n| self.closed_at.is_none() && self.raw.ends_with(&CLOSE[..n]))
                .unwrap_or(0);
        if end <= answer || !shows_as_text(&self.raw[answer..end]) {
            return nothing;
        }
        answer..end
    }
}

/// Whether the start of an answer (`text`, without leading space) is surely text to show,
/// not a tool call written as text (a JSON object or array, a tag such as `<tool_call>`, a
/// fence of JSON) nor what may still become one.
fn shows_as_text(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    if matches!(first, '{' | '[' | '<') {
        return false;
    }
    if first != '`' {
        return true;
    }
    let Some(fenced) = text.strip_prefix("```") else {
        // One or two backticks: code, or the start of a fence.
        return text.len() > 2 || !"```".starts_with(text);
    };
    let Some((language, body)) = fenced.split_once('\n') else {
        return false;
    };
    if !matches!(language.trim(), "" | "json" | "tool_call" | "tool") {
        return true;
    }
    body.trim_start()
        .chars()
        .next()
        .is_some_and(|c| !matches!(c, '{' | '['))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a viewer sees after each piece: the parts applied in order.
    fn seen(reasons: bool, pieces: &[&str]) -> Vec<String> {
        let mut draft = Draft::new(reasons);
        let mut shown = String::new();
        pieces
            .iter()
            .map(|piece| {
                if let Some(AgentEvent::ReplyPart { text, restart }) = draft.push(piece) {
                    if restart {
                        shown.clear();
                    }
                    shown.push_str(&text);
                }
                shown.clone()
            })
            .collect()
    }

    #[test]
    fn reasoning_is_taken_out_whether_its_tag_was_opened_or_not() {
        for (text, answer, reasoned) in [
            ("<think>\nhmm, 2+2\n</think>\n\nIt is 4.", "It is 4.", true),
            ("  <think></think>It is 4.", "It is 4.", true),
            (
                "Okay, the user asks 2+2.\n</think>\n\nIt is 4.",
                "It is 4.",
                true,
            ),
            ("<think>still thinking when the cap came", "", true),
            ("It is 4.", "It is 4.", false),
            (
                "Use <think> tags like this.",
                "Use <think> tags like this.",
                false,
            ),
        ] {
            assert_eq!(answer_part(text), (answer, reasoned), "{text:?}");
        }
    }

    #[test]
    fn a_draft_shows_the_answer_as_it_comes() {
        assert_eq!(
            seen(false, &["  ", "The ", "files ", "are: a.txt"]),
            ["", "The ", "The files ", "The files are: a.txt"]
        );
    }

    #[test]
    fn an_open_think_shows_nothing_until_it_closes() {
        assert_eq!(
            seen(
                false,
                &[
                    "<th",
                    "ink>I should",
                    " list </th",
                    "ink>\n\nTwo",
                    " files."
                ]
            ),
            ["", "", "", "Two", "Two files."]
        );
    }

    #[test]
    fn reasoning_without_its_opening_tag_is_replaced_once_its_end_comes() {
        let mut draft = Draft::new(false);
        assert!(matches!(
            draft.push("Okay, the user wants"),
            Some(AgentEvent::ReplyPart { restart: false, .. })
        ));
        // A piece that may begin `</think>` is held back.
        assert_eq!(
            draft.push(" files.</thi"),
            Some(AgentEvent::ReplyPart {
                text: " files.".into(),
                restart: false
            })
        );
        assert_eq!(
            draft.push("nk>\n\nTwo files."),
            Some(AgentEvent::ReplyPart {
                text: "Two files.".into(),
                restart: true
            })
        );
        // A model known to reason shows nothing before its `</think>`.
        assert_eq!(
            seen(
                true,
                &["Okay, the user wants", " files.</think>", "Two files."]
            ),
            ["", "", "Two files."]
        );
    }

    #[test]
    fn what_starts_like_a_call_is_not_a_draft() {
        for pieces in [
            &["{\"name\": \"execute_sql\"", ", \"arguments\": {}}"][..],
            &["```", "json\n", "{\"tool\": \"x\"}\n```"],
            &["``", "`\n[1, 2]"],
            &["<tool_call>", "{}"],
        ] {
            let shown = seen(false, pieces);
            assert!(shown.iter().all(String::is_empty), "{pieces:?}: {shown:?}");
        }
        assert_eq!(
            seen(false, &["```sql\nSELECT 1;\n```"]),
            ["```sql\nSELECT 1;\n```"]
        );
        assert_eq!(seen(false, &["`ls` lists"]), ["`ls` lists"]);
    }

    #[test]
    fn a_draft_is_taken_back_unless_it_was_the_answer() {
        let mut draft = Draft::new(false);
        assert_eq!(draft.take_back(), None, "nothing was shown");
        draft.push("Let me look.");
        assert_eq!(draft.take_back(), Some(AgentEvent::DraftDropped));
        let mut answer = Draft::new(false);
        answer.push("Two files.");
        answer.answered();
        assert_eq!(answer.take_back(), None);
    }
}
