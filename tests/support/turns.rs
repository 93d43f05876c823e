//! Conversation turns for history tests.

use riskgate::core::agent::{CallRecord, ChatMessage};

/// One turn: the person's question, a tool call, its result (`size` characters) and the
/// answer.
pub fn turn(n: usize, size: usize) -> Vec<ChatMessage> {
    vec![
        ChatMessage::user(Some("alice"), format!("question {n}")),
        ChatMessage::assistant_calls(
            None,
            vec![CallRecord {
                id: format!("call_{n}"),
                name: "execute_sql".into(),
                arguments: r#"{"query":"SELECT 1"}"#.into(),
            }],
        ),
        ChatMessage::tool_result(format!("call_{n}"), "x".repeat(size)),
        ChatMessage::assistant(format!("answer {n}")),
    ]
}
