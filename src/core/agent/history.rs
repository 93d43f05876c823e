//! Keeping history within a budget: whole turns are dropped, oldest first, so a tool result
//! never loses the call it answers; and a single message too long for the budget is cut
//! before it is stored, so one huge paste is not re-sent on every later turn. What is sent
//! is repaired first ([`repaired`]): whatever an earlier failure or an older version left
//! in the store, a request never carries a tool call without its result, nor a result
//! without its call.

use std::collections::HashSet;

use crate::core::message::{ChatMessage, Role};

/// The result given to a call whose result was never recorded.
pub const MISSING_RESULT: &str =
    r#"{"status":"not_run","reason":"no result was recorded for this call"}"#;

/// The start of the notice earlier versions kept as the assistant's words when a run ended
/// without an answer; a model that copied one wrote it too.
const LEGACY_NOTICE: &str = "(No answer: ";

/// `messages` without riskgate's own notices: what people, tools and the model said. A
/// notice is never the model's word, or it takes it for its own and repeats it; the
/// assistant turns that earlier versions stored as notices (and a model's copies of them)
/// go too.
pub fn said(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .filter(|m| match m.role {
            Role::Notice => false,
            Role::Assistant => {
                !(m.tool_calls.is_empty()
                    && m.content
                        .as_deref()
                        .is_some_and(|t| t.trim_start().starts_with(LEGACY_NOTICE)))
            }
            _ => true,
        })
        .collect()
}

/// `messages` with the native protocol's pairing made whole: a result that answers no open
/// call is dropped, and a call still open when anything but a result follows (or at the
/// end) gets [`MISSING_RESULT`]. Well-formed history comes back unchanged.
pub fn repaired(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(messages.len());
    let mut open: Vec<String> = Vec::new();
    let close = |open: &mut Vec<String>, out: &mut Vec<ChatMessage>| {
        for id in open.drain(..) {
            out.push(ChatMessage::tool_result(id, MISSING_RESULT));
        }
    };
    for message in messages {
        if message.role == Role::Tool {
            let answers = message
                .tool_call_id
                .as_ref()
                .and_then(|id| open.iter().position(|o| o == id));
            if let Some(at) = answers {
                open.remove(at);
                out.push(message);
            }
            continue;
        }
        close(&mut open, &mut out);
        if message.role == Role::Assistant && !message.tool_calls.is_empty() {
            let mut seen = HashSet::new();
            open = message
                .tool_calls
                .iter()
                .filter(|c| seen.insert(c.id.clone()))
                .map(|c| c.id.clone())
                .collect();
        }
        out.push(message);
    }
    close(&mut open, &mut out);
    out
}

/// Where each turn starts: a message a person wrote (a user message with an author).
fn turn_starts(messages: &[ChatMessage]) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User && m.name.is_some())
        .map(|(i, _)| i)
        .collect()
}

/// The newest whole turns that fit in `budget` characters. The newest turn is kept even
/// when it alone is larger; anything before the first turn start is dropped.
pub fn trim_to_budget(messages: &[ChatMessage], budget: usize) -> Vec<ChatMessage> {
    let starts = turn_starts(messages);
    let Some(&last) = starts.last() else {
        return Vec::new();
    };
    let mut keep_from = last;
    let mut size: usize = messages[last..].iter().map(ChatMessage::size).sum();
    for &start in starts.iter().rev().skip(1) {
        let turn: usize = messages[start..keep_from]
            .iter()
            .map(ChatMessage::size)
            .sum();
        if size + turn > budget {
            break;
        }
        size += turn;
        keep_from = start;
    }
    messages[keep_from..].to_vec()
}

/// The note that ends a message cut to fit the history budget.
pub fn cut_note(cut_chars: usize) -> String {
    format!("[... {cut_chars} characters of this message were cut to fit the history budget]")
}

/// `text` as later runs read it: unchanged when it has at most `limit` characters (counted
/// like [`ChatMessage::size`]), else its beginning and a [`cut_note`], together at most
/// `limit` (unless `limit` is smaller than the note itself, when only the note is kept).
pub fn fit_for_history(text: &str, limit: usize) -> Option<String> {
    if text.len() <= limit {
        return None;
    }
    // The note with the most characters that can be cut, so the real one is never longer.
    let room = limit.saturating_sub(cut_note(text.chars().count()).len() + 1);
    let mut end = room.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut_chars = text[end..].chars().count();
    Some(format!("{}\n{}", &text[..end], cut_note(cut_chars)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_and_copies_of_the_old_placeholder_are_not_what_was_said() {
        let kept = vec![
            ChatMessage::user(Some("ann"), "q1"),
            ChatMessage::notice("(No answer: the model did not answer within 120s.)"),
            ChatMessage::user(Some("ann"), "q2"),
            ChatMessage::assistant("(No answer: the model did not answer within 120s.)"),
            ChatMessage::user(Some("ann"), "q3"),
            ChatMessage::assistant("The answer is (No answer: is a phrase)."),
        ];
        let said = said(kept.clone());
        let texts: Vec<&str> = said.iter().filter_map(|m| m.content.as_deref()).collect();
        assert_eq!(
            texts,
            ["q1", "q2", "q3", "The answer is (No answer: is a phrase)."]
        );
        assert_eq!(super::said(vec![kept[0].clone()]), vec![kept[0].clone()]);
    }
    use crate::core::message::CallRecord;

    fn turn(n: usize, size: usize) -> Vec<ChatMessage> {
        vec![
            ChatMessage::user(Some("ann"), format!("q{n}")),
            ChatMessage::assistant_calls(
                None,
                vec![CallRecord {
                    id: format!("c{n}"),
                    name: "t".into(),
                    arguments: "{}".into(),
                }],
            ),
            ChatMessage::tool_result(format!("c{n}"), "x".repeat(size)),
            ChatMessage::assistant(format!("a{n}")),
        ]
    }

    #[test]
    fn oldest_whole_turns_go_first() {
        let history: Vec<ChatMessage> = (0..5).flat_map(|n| turn(n, 100)).collect();
        let one_turn: usize = turn(0, 100).iter().map(ChatMessage::size).sum();
        let kept = trim_to_budget(&history, one_turn * 2 + 5);
        assert_eq!(kept.len(), 8);
        assert_eq!(kept[0].content.as_deref(), Some("q3"));
        // Every tool result still follows its call.
        assert_eq!(kept[1].tool_calls[0].id, "c3");
        assert_eq!(kept[2].tool_call_id.as_deref(), Some("c3"));
    }

    #[test]
    fn a_long_message_is_cut_to_the_limit_with_a_note() {
        assert_eq!(fit_for_history("short", 5), None);
        let text = "é".repeat(3_000);
        let cut = fit_for_history(&text, 1_000).expect("cut");
        assert!(cut.len() <= 1_000, "{}", cut.len());
        let (kept, note) = cut.split_once('\n').expect("a note on its own line");
        assert!(text.starts_with(kept) && !kept.is_empty());
        let cut_chars = 3_000 - kept.chars().count();
        assert_eq!(note, cut_note(cut_chars));
        // A limit smaller than the note keeps only the note.
        let tiny = fit_for_history(&text, 10).expect("cut");
        assert_eq!(tiny, format!("\n{}", cut_note(3_000)));
    }

    #[test]
    fn broken_pairing_is_repaired_and_whole_history_kept() {
        let whole: Vec<ChatMessage> = (0..2).flat_map(|n| turn(n, 10)).collect();
        assert_eq!(repaired(whole.clone()), whole);
        let calls = |ids: &[&str]| {
            ChatMessage::assistant_calls(
                None,
                ids.iter()
                    .map(|id| CallRecord {
                        id: (*id).into(),
                        name: "t".into(),
                        arguments: "{}".into(),
                    })
                    .collect(),
            )
        };
        let broken = vec![
            ChatMessage::user(Some("ann"), "q"),
            ChatMessage::tool_result("stray", "x"),
            calls(&["a", "b"]),
            ChatMessage::tool_result("b", "B"),
            ChatMessage::user(Some("ann"), "next"),
            calls(&["c"]),
        ];
        let fixed = repaired(broken);
        let shape: Vec<(Role, Option<&str>)> = fixed
            .iter()
            .map(|m| (m.role, m.tool_call_id.as_deref()))
            .collect();
        assert_eq!(
            shape,
            vec![
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("b")),
                (Role::Tool, Some("a")),
                (Role::User, None),
                (Role::Assistant, None),
                (Role::Tool, Some("c")),
            ]
        );
        assert_eq!(fixed[3].content.as_deref(), Some(MISSING_RESULT));
    }

    #[test]
    fn the_newest_turn_is_kept_even_when_too_big() {
        let history: Vec<ChatMessage> = (0..3).flat_map(|n| turn(n, 1000)).collect();
        let kept = trim_to_budget(&history, 10);
        assert_eq!(kept[0].content.as_deref(), Some("q2"));
        assert_eq!(kept.len(), 4);
        assert!(trim_to_budget(&[], 10).is_empty());
    }
}
