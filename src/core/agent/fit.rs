//! Fitting every request into the model's context window.
//!
//! Tokens are counted without the model's tokenizer, on the safe side: every three bytes of
//! text as the request carries it (JSON-escaped) count as one token. Tool output (tables,
//! grep lines, JSON) runs near three characters per token and prose near four, so the count
//! is high for prose and about right for output. Each message adds what its role, name and
//! ids take, each tool definition what its wrapping takes.
//!
//! What a request holds, in the order it gives way when the window is short:
//! 1. the system prompt and the tool definitions (never cut);
//! 2. the person's message and the latest results of this run (never cut);
//! 3. the older results of this run: shortened, oldest first, each keeping its call and the
//!    start of its output with a note saying how much was cut;
//! 4. the channel's earlier conversation: the newest whole turns that fit; what is older is
//!    in the channel's summary (see [`super::memory`]) or, until one is made, not sent.
//!
//! Nothing here touches what is stored: only what one request carries.

use crate::core::message::{ChatMessage, ContextLimits, Role};
use crate::core::tools::ToolDefinition;

/// Tokens a message takes besides its text: its JSON (`{"role":"assistant","content":"",
/// "tool_calls":[]}` is 49 characters), which is near what a chat template adds.
const MESSAGE_OVERHEAD: usize = 17;
/// Tokens a tool call takes besides its id, name and arguments:
/// `{"id":"","type":"function","function":{"name":"","arguments":""}}`.
const CALL_OVERHEAD: usize = 20;
/// Tokens a tool definition takes besides its JSON: `{"type":"function","function":…}`.
const TOOL_OVERHEAD: usize = 16;
/// Characters of a shortened result's output kept at its start.
const KEPT_OF_SHORTENED: usize = 300;

/// Tokens `text` takes, counted high: three bytes a token, escapes included.
pub(super) fn text_tokens(text: &str) -> usize {
    let escapes = text
        .bytes()
        .filter(|b| matches!(b, b'"' | b'\\') || *b < 0x20)
        .count();
    (text.len() + escapes).div_ceil(3)
}

/// Tokens one message takes.
pub(super) fn message_tokens(message: &ChatMessage) -> usize {
    let text = |t: &Option<String>| t.as_deref().map_or(0, text_tokens);
    MESSAGE_OVERHEAD
        + text(&message.content)
        + text(&message.name)
        + text(&message.tool_call_id)
        + message
            .tool_calls
            .iter()
            .map(|c| {
                CALL_OVERHEAD
                    + text_tokens(&c.id)
                    + text_tokens(&c.name)
                    + text_tokens(&c.arguments)
            })
            .sum::<usize>()
}

/// Tokens `messages` take.
pub(super) fn messages_tokens(messages: &[ChatMessage]) -> usize {
    messages.iter().map(message_tokens).sum()
}

/// Tokens the tool definitions take.
pub(super) fn tools_tokens(tools: &[ToolDefinition]) -> usize {
    tools
        .iter()
        .map(|tool| {
            TOOL_OVERHEAD
                + text_tokens(&tool.name)
                + text_tokens(&tool.description)
                + text_tokens(&tool.parameters.to_string())
        })
        .sum()
}

/// The window of one request, split between the prompt and the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Budget {
    /// The model's whole window.
    pub window: usize,
    /// Room kept for the reply: the client's cap, at most a quarter of the window, so a
    /// small window still holds a conversation.
    pub reply: usize,
    /// The most the prompt may take: lowered when a request the count let through was
    /// refused as too long.
    prompt_cap: usize,
}

impl Budget {
    pub fn of(limits: ContextLimits) -> Self {
        let window = usize::try_from(limits.window_tokens).unwrap_or(usize::MAX);
        let quarter = window / 4;
        let reply = limits.max_reply_tokens.map_or(quarter, |cap| {
            usize::try_from(cap).unwrap_or(usize::MAX).min(quarter)
        });
        Self {
            window,
            reply,
            prompt_cap: usize::MAX,
        }
    }

    /// Tokens the prompt may take: what the reply leaves, less a sixteenth for the count's
    /// margin of error.
    pub fn prompt(&self) -> usize {
        (self.window.saturating_sub(self.reply) / 16 * 15).min(self.prompt_cap)
    }

    /// The budget after the server refused, as longer than its window, a request counted
    /// at `refused` tokens: its window is smaller than it was said to be, or its tokenizer
    /// counts more than this count. The prompt gets two thirds of what it had, and half of
    /// what was refused at most.
    pub fn harder(self, refused: usize) -> Self {
        Self {
            prompt_cap: (self.prompt() / 3 * 2).min(refused / 2),
            ..self
        }
    }

    /// The reply cap to send with a request whose prompt is counted at `prompt` tokens:
    /// the reply's room, less what the prompt takes past its own room (what could not be
    /// cut: the system prompt, the tools, the run's calls), so the whole request stays in
    /// the window with its margin; never below a sixteenth of the window (or the reply's
    /// room, if smaller), where a reply would be too short to be of use.
    pub fn reply_cap_for(&self, prompt: usize) -> u32 {
        let over = prompt.saturating_sub(self.prompt());
        let floor = (self.window / 16).min(self.reply);
        let reply = self.reply.saturating_sub(over).max(floor);
        u32::try_from(reply).unwrap_or(u32::MAX)
    }
}

/// Shortens this run's older tool results, oldest first, until `messages` take at most
/// `room` tokens: first to the start of their output, then (a long run in a small window)
/// to a note alone. Never shortened: the person's message (the first), and everything
/// after the run's last assistant message (the latest results). Returns the tokens
/// `messages` take in the end, which is over `room` when shortening all it may was not
/// enough.
pub(super) fn shorten_older_results(messages: &mut [ChatMessage], room: usize) -> usize {
    let mut total = messages_tokens(messages);
    let Some(last_assistant) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return total;
    };
    for shorten in [shortened as fn(&str) -> Option<String>, noted] {
        for message in messages.iter_mut().take(last_assistant).skip(1) {
            if total <= room {
                return total;
            }
            if message.role != Role::Tool {
                continue;
            }
            let before = message_tokens(message);
            if let Some(shorter) = message.content.as_deref().and_then(shorten) {
                message.content = Some(shorter);
                total = total - before + message_tokens(message);
            }
        }
    }
    total
}

/// A result's output replaced by a note alone; `None` when it is one already.
fn noted(output: &str) -> Option<String> {
    let note = format!(
        "[output of {} characters left out to fit the model's context window]",
        output.chars().count()
    );
    (output.len() > note.len() + 40).then_some(note)
}

/// The last resort when the latest results alone overflow `room` (a small window and a
/// large output): each of them is cut to an equal share of what is left, and never below
/// [`KEPT_OF_SHORTENED`] characters. Returns the tokens `messages` take in the end.
pub(super) fn cut_latest_results(messages: &mut [ChatMessage], room: usize) -> usize {
    let total = messages_tokens(messages);
    if total <= room {
        return total;
    }
    let Some(last_assistant) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return total;
    };
    let latest: Vec<usize> = (last_assistant + 1..messages.len())
        .filter(|&i| messages[i].role == Role::Tool)
        .collect();
    if latest.is_empty() {
        return total;
    }
    let theirs: usize = latest
        .iter()
        .map(|&i| messages[i].content.as_deref().map_or(0, text_tokens))
        .sum();
    let left = room.saturating_sub(total - theirs);
    // Three bytes a token, less the note's own length.
    let share_chars = (left / latest.len() * 3).saturating_sub(250);
    for &i in &latest {
        if let Some(cut) = messages[i]
            .content
            .as_deref()
            .and_then(|output| cut_to(output, share_chars.max(KEPT_OF_SHORTENED)))
        {
            messages[i].content = Some(cut);
        }
    }
    messages_tokens(messages)
}

/// A result's output cut to its start, with a note; `None` when it is short already.
fn shortened(output: &str) -> Option<String> {
    cut_to(output, KEPT_OF_SHORTENED)
}

/// `output` cut to its first `keep` characters, with a note; `None` when that would not
/// make it shorter.
fn cut_to(output: &str, keep: usize) -> Option<String> {
    let cut = output.char_indices().nth(keep).map(|(at, _)| at)?;
    let left_out = output[cut..].chars().count();
    // The note alone must not be longer than what it replaces.
    (left_out > 100).then(|| {
        format!(
            "{}\n[… {left_out} more characters of this output were cut to fit the model's context window; call the tool again if you need them]",
            &output[..cut]
        )
    })
}

/// Where the newest whole turns of `history` that fit in `room` tokens begin (`len` when not
/// even the last turn fits). A turn begins at a person's message, so a call is never sent
/// without its result nor a result without its call.
pub(super) fn recent_start(history: &[ChatMessage], room: usize) -> usize {
    let mut taken = 0;
    let mut start = history.len();
    for (index, message) in history.iter().enumerate().rev() {
        taken += message_tokens(message);
        if taken > room {
            break;
        }
        if message.role == Role::User {
            start = index;
        }
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::CallRecord;

    fn call(id: &str) -> ChatMessage {
        ChatMessage::assistant_calls(
            None,
            vec![CallRecord {
                id: id.into(),
                name: "execute_sql".into(),
                arguments: "{\"sql\":\"SELECT * FROM t\"}".into(),
            }],
        )
    }

    fn table(rows: usize) -> String {
        (0..rows)
            .map(|i| {
                format!(
                    "| {i} | user{i}@example.com | 2026-11-{:02} |\n",
                    i % 28 + 1
                )
            })
            .collect()
    }

    #[test]
    fn the_count_is_never_below_three_bytes_a_token_and_counts_escapes() {
        assert_eq!(text_tokens(""), 0);
        assert_eq!(text_tokens("abc"), 1);
        assert_eq!(text_tokens("abcd"), 2);
        // Six bytes and two escapes ("\n" twice on the wire).
        assert_eq!(text_tokens("ab\ncd\n"), 3);
        let output = table(200);
        assert!(text_tokens(&output) * 3 >= output.len());
        assert!(
            message_tokens(&ChatMessage::tool_result("c1", output.clone())) > text_tokens(&output)
        );
    }

    #[test]
    fn a_budget_leaves_room_for_the_reply_and_a_margin() {
        let budget = Budget::of(ContextLimits {
            window_tokens: 8192,
            max_reply_tokens: Some(2048),
        });
        assert_eq!(budget.reply, 2048);
        assert_eq!(budget.prompt(), (8192 - 2048) / 16 * 15);
        // A small window keeps three quarters for the prompt whatever the cap.
        let small = Budget::of(ContextLimits {
            window_tokens: 4096,
            max_reply_tokens: Some(2048),
        });
        assert_eq!(small.reply, 1024);
        assert_eq!(small.harder(9_000).prompt(), small.prompt() / 3 * 2);
        assert_eq!(small.harder(2_000).prompt(), 1_000);
        assert_eq!(small.harder(2_000).reply_cap_for(1_000), 1024);
        // A prompt over its room that nothing could cut: the reply gives way, down to a
        // sixteenth of the window, so prompt and reply stay within the window.
        let room = small.prompt();
        assert_eq!(small.reply_cap_for(room), 1024);
        assert_eq!(small.reply_cap_for(room + 100), 924);
        assert!(room + 100 + 924 <= 4096);
        assert_eq!(small.reply_cap_for(room + 5_000), 256);
    }

    #[test]
    fn older_results_are_shortened_oldest_first_and_the_request_and_latest_result_never() {
        let question = ChatMessage::user(Some("ann"), format!("look at this {}", "x".repeat(3000)));
        let mut run = vec![question.clone()];
        for id in ["c1", "c2", "c3"] {
            run.push(call(id));
            run.push(ChatMessage::tool_result(id, table(100)));
        }
        let whole = messages_tokens(&run);
        let latest = run[6].clone();
        // Room for about one result less: only the oldest is shortened.
        let room = whole - message_tokens(&run[2]) + 200;
        let left = shorten_older_results(&mut run, room);
        assert!(left <= room, "{left} > {room}");
        assert!(
            run[2]
                .content
                .as_deref()
                .unwrap()
                .contains("were cut to fit")
        );
        assert_eq!(run[4].content.as_deref(), Some(table(100).as_str()));
        assert_eq!(run[0], question);
        assert_eq!(run[6], latest);
        // No room at all: every older result is a note alone, the rest stays whole.
        let left = shorten_older_results(&mut run, 0);
        assert!(left > 0);
        for older in [&run[2], &run[4]] {
            let note = older.content.as_deref().unwrap();
            assert!(note.starts_with("[output of "), "{note}");
            assert!(note.contains("to fit the model's context window"), "{note}");
        }
        assert_eq!(run[0], question);
        assert_eq!(run[6], latest);
        assert_eq!(run[5], call("c3"));
    }

    #[test]
    fn the_latest_results_are_cut_last_and_only_to_what_the_room_leaves() {
        let mut run = vec![ChatMessage::user(Some("ann"), "q"), call("c1")];
        run.push(ChatMessage::tool_result("c1", table(200)));
        let whole = messages_tokens(&run);
        // Room enough: nothing changes.
        assert_eq!(cut_latest_results(&mut run, whole), whole);
        assert_eq!(run[2].content.as_deref(), Some(table(200).as_str()));
        let room = whole / 2;
        let left = cut_latest_results(&mut run, room);
        assert!(left <= room, "{left} > {room}");
        let cut = run[2].content.as_deref().unwrap();
        assert!(cut.contains("were cut to fit"));
        assert!(cut.starts_with("| 0 | user0@example.com"));
        assert!(cut.len() > table(200).len() / 3, "{}", cut.len());
    }

    #[test]
    fn recent_history_starts_at_a_persons_message_and_fits() {
        let history = vec![
            ChatMessage::user(Some("ann"), "first"),
            call("c1"),
            ChatMessage::tool_result("c1", table(50)),
            ChatMessage::assistant("done"),
            ChatMessage::user(Some("bob"), "second"),
            ChatMessage::assistant("ok"),
        ];
        let last_turn = messages_tokens(&history[4..]);
        assert_eq!(recent_start(&history, last_turn), 4);
        assert_eq!(recent_start(&history, last_turn - 1), history.len());
        assert_eq!(recent_start(&history, usize::MAX), 0);
        // Room for all but the first message: the turn it begins cannot be split.
        let all_but_first = messages_tokens(&history[1..]);
        assert_eq!(recent_start(&history, all_but_first), 4);
    }
}
