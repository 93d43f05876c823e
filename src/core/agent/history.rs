//! Keeping history within a budget: whole turns are dropped, oldest first, so a tool result
//! never loses the call it answers; and a single message too long for the budget is cut
//! before it is stored, so one huge paste is not re-sent on every later turn.

use super::message::{ChatMessage, Role};

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
    use crate::core::agent::message::CallRecord;

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
    fn the_newest_turn_is_kept_even_when_too_big() {
        let history: Vec<ChatMessage> = (0..3).flat_map(|n| turn(n, 1000)).collect();
        let kept = trim_to_budget(&history, 10);
        assert_eq!(kept[0].content.as_deref(), Some("q2"));
        assert_eq!(kept.len(), 4);
        assert!(trim_to_budget(&[], 10).is_empty());
    }
}
