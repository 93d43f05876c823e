//! Reading a channel's history without reading all of it: messages arrive newest first and
//! reading stops as soon as no older message could survive [`trim_to_budget`], so the result
//! is what trimming the whole history would give.

use crate::core::agent::{ChatMessage, Role, trim_to_budget};

/// Rows read per `load_history` at most, whatever the budget: a bound on the work of one
/// load even for a channel of many tiny messages. A turn holds at most a few dozen messages
/// (`agent.max_iterations` model calls and their tool results), so this keeps dozens of turns.
pub const HISTORY_ROW_CAP: i64 = 1_000;

/// A channel's messages, collected newest first.
#[derive(Debug)]
pub struct NewestFirst {
    budget: usize,
    newest_first: Vec<ChatMessage>,
    size: usize,
    seen_turn_start: bool,
}

impl NewestFirst {
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            newest_first: Vec::new(),
            size: 0,
            seen_turn_start: false,
        }
    }

    /// Takes the next older message. Returns `false` once no older message can be kept: the
    /// newest turn is complete and the messages taken already exceed the budget, so any older
    /// turn would too (trimming keeps whole turns, newest first, and stops at the first that
    /// does not fit).
    pub fn push(&mut self, message: ChatMessage) -> bool {
        self.size += message.size();
        // The same test as the trimming's turn start: a user message with an author.
        self.seen_turn_start |= message.role == Role::User && message.name.is_some();
        self.newest_first.push(message);
        !(self.seen_turn_start && self.size > self.budget)
    }

    /// Oldest first, within the budget.
    pub fn finish(mut self) -> Vec<ChatMessage> {
        self.newest_first.reverse();
        trim_to_budget(&self.newest_first, self.budget)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::core::agent::CallRecord;

    fn message(kind: u8, size: usize, n: usize) -> ChatMessage {
        let text = "x".repeat(size);
        match kind % 4 {
            0 => ChatMessage::user(Some("ann"), format!("{n}{text}")),
            1 => ChatMessage::assistant_calls(
                None,
                vec![CallRecord {
                    id: format!("c{n}"),
                    name: "t".into(),
                    arguments: text,
                }],
            ),
            2 => ChatMessage::tool_result(format!("c{n}"), text),
            _ => ChatMessage::assistant(text),
        }
    }

    fn read(history: &[ChatMessage], budget: usize) -> (Vec<ChatMessage>, usize) {
        let mut collected = NewestFirst::new(budget);
        let mut read = 0;
        for message in history.iter().rev() {
            read += 1;
            if !collected.push(message.clone()) {
                break;
            }
        }
        (collected.finish(), read)
    }

    proptest! {
        #[test]
        fn stopping_early_gives_what_trimming_everything_gives(
            shape in proptest::collection::vec((0u8..4, 0usize..60), 0..80),
            budget in 0usize..600,
        ) {
            let history: Vec<ChatMessage> = shape
                .iter()
                .enumerate()
                .map(|(n, &(kind, size))| message(kind, size, n))
                .collect();
            let (got, _) = read(&history, budget);
            prop_assert_eq!(got, trim_to_budget(&history, budget));
        }
    }

    #[test]
    fn a_long_history_is_not_read_to_its_start() {
        let history: Vec<ChatMessage> = (0..1_000).map(|n| message(n as u8, 50, n)).collect();
        let (got, read) = read(&history, 500);
        assert_eq!(got, trim_to_budget(&history, 500));
        assert!(read < 20, "read {read} messages for a 500-character budget");
    }
}
