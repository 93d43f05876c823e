//! A channel's memory as requests carry it: a summary of the older conversation, made by
//! the model, then the recent turns word for word.
//!
//! When the history a run would send nears what the window holds (or nears
//! `agent.history_budget_chars`, past which the store's oldest turns are not read), the
//! older part is summarised by the model in one extra request — with the earlier summary,
//! so facts people stated long ago carry over — and the summary goes into the system
//! prompt of later requests. Compaction changes what is sent, never what is stored: the
//! store keeps every message until `/reset` or the retention setting removes it.
//!
//! Summaries are kept in this process, each with the last message it covers. When that
//! message is no longer in the channel's history (`/reset`, retention, another process's
//! work), the summary is dropped and made again from what the history holds when needed.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use super::fit::{self, Budget};
use crate::core::message::{ChatMessage, ChatRequest, Role};

/// Summary requests one compaction makes at most (each takes what fits of the rest).
const MAX_SUMMARY_REQUESTS: usize = 3;
/// Characters of one tool call's arguments or result a summary request shows.
const SHOWN_OF_TOOL_TEXT: usize = 300;
/// Characters of a person's or the assistant's message a summary request shows.
const SHOWN_OF_TEXT: usize = 2_000;

/// What the model is told a summary is for.
const SUMMARY_SYSTEM: &str = "You keep the memory of a team's chat channel, where people talk with an assistant that uses tools. You write summaries the assistant reads instead of the older conversation.";

/// The summaries of the channels this process served.
#[derive(Default)]
pub struct Summaries(Mutex<HashMap<String, Summary>>);

#[derive(Debug, Clone)]
struct Summary {
    text: String,
    /// The last message it covers (see [`fingerprint`]).
    through: u64,
}

/// What a run sends of the channel's earlier conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Memory {
    /// The summary of what came before `recent`.
    pub summary: Option<String>,
    /// The conversation since the summary, oldest first.
    pub recent: Vec<ChatMessage>,
}

impl Memory {
    /// No summary: the whole history word for word.
    pub fn verbatim(history: Vec<ChatMessage>) -> Self {
        Self {
            summary: None,
            recent: history,
        }
    }
}

/// A message told apart from the others of its channel: its own content and its
/// predecessor's, so a repeated "ok" is still found in the right place.
fn fingerprint(previous: Option<&ChatMessage>, message: &ChatMessage) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for m in previous.into_iter().chain(std::iter::once(message)) {
        (m.role as u8).hash(&mut hasher);
        m.content.hash(&mut hasher);
        m.name.hash(&mut hasher);
        m.tool_call_id.hash(&mut hasher);
        for call in &m.tool_calls {
            (&call.id, &call.name, &call.arguments).hash(&mut hasher);
        }
    }
    hasher.finish()
}

fn fingerprint_at(history: &[ChatMessage], index: usize) -> u64 {
    fingerprint(index.checked_sub(1).map(|i| &history[i]), &history[index])
}

impl Summaries {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Summary>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The channel's summary applied to `history`: the summary, and the messages after the
    /// last one it covers. A summary whose last message is gone is dropped.
    pub(super) fn apply(&self, channel: &str, history: Vec<ChatMessage>) -> Memory {
        let mut map = self.map();
        let Some(summary) = map.get(channel) else {
            return Memory::verbatim(history);
        };
        let found = (0..history.len())
            .rev()
            .find(|&i| fingerprint_at(&history, i) == summary.through);
        match found {
            Some(index) => Memory {
                summary: Some(summary.text.clone()),
                recent: history[index + 1..].to_vec(),
            },
            None => {
                map.remove(channel);
                Memory::verbatim(history)
            }
        }
    }

    fn record(&self, channel: &str, text: String, through: u64) {
        self.map()
            .insert(channel.to_owned(), Summary { text, through });
    }
}

/// The system prompt with the channel's summary after it.
pub(super) fn with_summary(system: &str, summary: Option<&str>) -> String {
    match summary {
        None => system.to_owned(),
        Some(summary) => format!(
            "{system}\n\n## Earlier in this channel\nA summary of the conversation before the messages you are shown (they are not repeated):\n{summary}"
        ),
    }
}

/// One line of a summary request for `message`.
fn line(message: &ChatMessage) -> String {
    let cut = |text: &str, limit: usize| -> String {
        match text.char_indices().nth(limit) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text.to_owned(),
        }
    };
    let content = message.content.as_deref().unwrap_or_default();
    match message.role {
        Role::User => format!(
            "{}: {}",
            message.name.as_deref().unwrap_or("someone"),
            cut(content, SHOWN_OF_TEXT)
        ),
        Role::Assistant if !message.tool_calls.is_empty() => message
            .tool_calls
            .iter()
            .map(|c| {
                format!(
                    "assistant called {}({})",
                    c.name,
                    cut(&c.arguments, SHOWN_OF_TOOL_TEXT)
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Role::Assistant => format!("assistant: {}", cut(content, SHOWN_OF_TEXT)),
        Role::Tool => format!("(result: {})", cut(content, SHOWN_OF_TOOL_TEXT)),
        Role::System => cut(content, SHOWN_OF_TEXT),
        // Left out before the summary is asked for (`history::said`); riskgate's if ever.
        Role::Notice => format!("(riskgate: {})", cut(content, SHOWN_OF_TEXT)),
    }
}

/// Words a summary may have for `budget`: an eighth of the window, 60 to 600 words.
fn summary_words(budget: &Budget) -> usize {
    (budget.window / 8 * 3 / 4).clamp(60, 600)
}

/// The request that summarises `lines` after `earlier`.
fn summary_request(earlier: Option<&str>, lines: &[String], words: usize) -> ChatRequest {
    let mut ask = format!(
        "Summarise the conversation below so the assistant can go on from your summary alone. Keep every fact people stated (names, numbers, decisions, preferences), what was asked, what the assistant did and found, and what is still open. Leave out greetings and the raw output of tools, keeping what mattered of it. At most {words} words; write only the summary."
    );
    if let Some(earlier) = earlier {
        ask.push_str("\n\n[Summary of what came before]\n");
        ask.push_str(earlier);
    }
    ask.push_str("\n\n[Conversation]\n");
    ask.push_str(&lines.join("\n"));
    ChatRequest {
        messages: vec![
            ChatMessage::system(SUMMARY_SYSTEM),
            ChatMessage::user(None, ask),
        ],
        tools: Vec::new().into(),
        max_reply_tokens: u32::try_from(words * 2).ok(),
        model: None,
    }
}

impl super::Agent {
    /// The channel's memory for a run whose fixed part (system prompt, tools, the person's
    /// message) takes `fixed` tokens: the summary and the recent turns, compacted first when
    /// the recent turns take more than half of what is left (the other half is the run's
    /// own room) or come near `agent.history_budget_chars`.
    pub(super) async fn memory_for(
        &self,
        channel: &str,
        history: Vec<ChatMessage>,
        fixed: usize,
        budget: Budget,
    ) -> Memory {
        let memory = self.summaries.apply(channel, history);
        let summary_tokens = memory.summary.as_deref().map_or(0, fit::text_tokens);
        let room = budget.prompt().saturating_sub(fixed + summary_tokens);
        let chars: usize = memory.recent.iter().map(ChatMessage::size).sum();
        let near_chars = chars > self.limits.history_budget_chars / 4 * 3;
        if fit::messages_tokens(&memory.recent) <= room / 2 && !near_chars {
            return memory;
        }
        self.compacted(channel, memory, fixed, budget).await
    }

    /// `memory` with all but its newest turns summarised: those that fit in a quarter of the
    /// room `budget` leaves after `fixed` tokens, and in a third of
    /// `agent.history_budget_chars`.
    pub(super) async fn compacted(
        &self,
        channel: &str,
        memory: Memory,
        fixed: usize,
        budget: Budget,
    ) -> Memory {
        let summary_tokens = memory.summary.as_deref().map_or(0, fit::text_tokens);
        let room = budget.prompt().saturating_sub(fixed + summary_tokens);
        let mut keep_from = fit::recent_start(&memory.recent, room / 4);
        while keep_from < memory.recent.len()
            && memory.recent[keep_from..]
                .iter()
                .map(ChatMessage::size)
                .sum::<usize>()
                > self.limits.history_budget_chars / 3
        {
            let next = memory.recent[keep_from + 1..]
                .iter()
                .position(|m| m.role == Role::User)
                .map_or(memory.recent.len(), |p| keep_from + 1 + p);
            keep_from = next;
        }
        self.compact(channel, memory, keep_from, budget).await
    }

    /// Summarises `memory.recent[..keep_from]` with the earlier summary, in as many requests
    /// as fit (a few at most); what could not be summarised stays word for word.
    async fn compact(
        &self,
        channel: &str,
        memory: Memory,
        keep_from: usize,
        budget: Budget,
    ) -> Memory {
        let Memory { summary, recent } = memory;
        let words = summary_words(&budget);
        let mut summary = summary;
        let mut done = 0;
        let mut through = None;
        for _ in 0..MAX_SUMMARY_REQUESTS {
            if done >= keep_from {
                break;
            }
            // The instructions and the earlier summary; the reply has its own room.
            let fixed = fit::text_tokens(SUMMARY_SYSTEM)
                + 200
                + summary.as_deref().map_or(0, fit::text_tokens);
            let room = budget.prompt().saturating_sub(fixed);
            let mut lines = Vec::new();
            let mut taken = 0;
            let mut end = done;
            while end < keep_from {
                let next = line(&recent[end]);
                let cost = fit::text_tokens(&next) + 1;
                if taken + cost > room && !lines.is_empty() {
                    break;
                }
                taken += cost;
                lines.push(next);
                end += 1;
            }
            let request = summary_request(summary.as_deref(), &lines, words);
            let asked = self.model.complete(&request).await;
            if let Ok(reply) = &asked {
                self.count_usage(channel, reply);
            }
            match asked.map(|reply| self.without_reasoning(reply)) {
                Ok(reply) => match reply.content.filter(|t| !t.trim().is_empty()) {
                    Some(text) => {
                        let limit = words * 8;
                        let text = match text.char_indices().nth(limit) {
                            Some((at, _)) => format!("{}…", &text[..at]),
                            None => text,
                        };
                        summary = Some(text.trim().to_owned());
                        through = Some(fingerprint_at(&recent, end - 1));
                        done = end;
                    }
                    None => break,
                },
                Err(error) => {
                    tracing::warn!(%error, "the conversation could not be summarised; the older part is left out of this request instead (it stays stored)");
                    break;
                }
            }
        }
        if let (Some(text), Some(through)) = (&summary, through) {
            tracing::info!(
                channel,
                messages = done,
                "the older conversation was summarised for later requests (the store keeps it whole)"
            );
            self.summaries.record(channel, text.clone(), through);
        }
        Memory {
            summary,
            recent: recent[done..].to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn talk(n: usize) -> Vec<ChatMessage> {
        (0..n)
            .flat_map(|i| {
                [
                    ChatMessage::user(Some("ann"), format!("question {i}")),
                    ChatMessage::assistant("ok"),
                ]
            })
            .collect()
    }

    #[test]
    fn a_summary_applies_after_the_message_it_covers_and_is_dropped_when_that_is_gone() {
        let summaries = Summaries::default();
        let history = talk(5);
        // It covers the first three messages; "ok" repeats, but the fingerprint holds its
        // predecessor too.
        summaries.record("c", "Ann asked things.".into(), fingerprint_at(&history, 2));
        let memory = summaries.apply("c", history.clone());
        assert_eq!(memory.summary.as_deref(), Some("Ann asked things."));
        assert_eq!(memory.recent, history[3..].to_vec());
        assert_eq!(
            summaries.apply("other", history.clone()),
            Memory::verbatim(history)
        );
        // After /reset the history holds none of it: the summary goes for good.
        let fresh = vec![ChatMessage::user(Some("bob"), "new start")];
        assert_eq!(summaries.apply("c", fresh.clone()), Memory::verbatim(fresh));
        assert_eq!(summaries.apply("c", talk(5)), Memory::verbatim(talk(5)));
    }

    #[test]
    fn a_summary_request_shows_tool_output_short_and_the_earlier_summary() {
        let lines = vec![
            line(&ChatMessage::user(Some("ann"), "my name is Ann")),
            line(&ChatMessage::tool_result("c1", "x".repeat(5_000))),
        ];
        assert!(lines[1].chars().count() < SHOWN_OF_TOOL_TEXT + 20);
        let request = summary_request(Some("Before: Bob left."), &lines, 100);
        let ask = request.messages[1].content.as_deref().unwrap();
        assert!(ask.contains("ann: my name is Ann"));
        assert!(ask.contains("Before: Bob left."));
        assert!(ask.contains("At most 100 words"));
        assert!(request.tools.is_empty());
        assert_eq!(request.max_reply_tokens, Some(200));
    }
}
