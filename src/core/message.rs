//! The conversation as the model sees it, independent of any wire format: what the loop
//! keeps in history and what a [`ChatModel`](crate::core::ports::ChatModel) sends, and the
//! [`Protocol`] the model calls tools in (how it reads replies is the loop's,
//! `core::agent::protocol`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::tools::ToolDefinition;

/// Who said something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
    /// riskgate's own word in the conversation (a run that ended without an answer, and
    /// why): shown to people and kept, never sent to the model, as whoever's words.
    Notice,
}

/// A tool call the model made, as kept in history (arguments as the JSON text sent back).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecord {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    /// Text; `None` for an assistant message that only calls tools.
    pub content: Option<String>,
    /// For user messages: who wrote it (a display name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For assistant messages of the native protocol: the calls it made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<CallRecord>,
    /// For tool messages: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    pub fn system(text: impl Into<String>) -> Self {
        Self::text(Role::System, text)
    }

    /// riskgate's own notice (see [`Role::Notice`]).
    pub fn notice(text: impl Into<String>) -> Self {
        Self::text(Role::Notice, text)
    }

    pub fn user(name: Option<&str>, text: impl Into<String>) -> Self {
        Self {
            name: name.map(str::to_owned),
            ..Self::text(Role::User, text)
        }
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self::text(Role::Assistant, text)
    }

    pub fn assistant_calls(content: Option<String>, calls: Vec<CallRecord>) -> Self {
        Self {
            role: Role::Assistant,
            content,
            name: None,
            tool_calls: calls,
            tool_call_id: None,
        }
    }

    pub fn tool_result(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::text(Role::Tool, text)
        }
    }

    fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(text.into()),
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// Characters this message costs in the history budget.
    pub fn size(&self) -> usize {
        self.content.as_deref().map_or(0, str::len)
            + self
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len() + c.id.len())
                .sum::<usize>()
    }
}

/// What the loop asks the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    /// Tool definitions for the native protocol; empty for the JSON protocol (the definitions
    /// are in the system prompt there).
    pub tools: std::sync::Arc<[ToolDefinition]>,
    /// The reply's length cap in tokens this request leaves room for in the model's window;
    /// the client sends the smaller of it and its own cap. `None`: the client's cap.
    pub max_reply_tokens: Option<u32>,
    /// The model to ask, when the channel's profile names one; `None`: the client's.
    pub model: Option<String>,
}

/// What a model can take in one request: its context window, which holds the prompt and
/// the reply, and the reply's length cap the client sends (`llm.max_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextLimits {
    pub window_tokens: u32,
    pub max_reply_tokens: Option<u32>,
}

/// A tool call as a server sent it: servers differ, so every field is as loose as they are.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyToolCall {
    /// Missing on some servers (the loop makes one up).
    pub id: Option<String>,
    pub name: String,
    /// A JSON string on OpenAI; an object on Ollama and some others.
    pub arguments: Value,
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatReply {
    /// `None` or empty when the reply only calls tools.
    pub content: Option<String>,
    pub tool_calls: Vec<ReplyToolCall>,
    /// `stop`, `tool_calls`, `length`, or anything a server invents.
    pub finish_reason: Option<String>,
    /// The tokens the server says the request and the reply took; `None` when it said
    /// nothing readable.
    pub usage: Option<Usage>,
}

/// What one request cost, as the server counted it (the `usage` object OpenAI, llama.cpp,
/// vLLM and Ollama's OpenAI endpoint send with every completion).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// The request: system prompt, history, this run's messages and the tools.
    pub prompt_tokens: u64,
    /// The reply.
    pub completion_tokens: u64,
}

/// Which protocol a model speaks (`llm.protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Native,
    Json,
}

impl std::str::FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "native" => Ok(Self::Native),
            "json" => Ok(Self::Json),
            other => Err(format!(
                "unknown protocol {other:?} (expected native or json)"
            )),
        }
    }
}

impl Protocol {
    /// The other protocol, to suggest when this one does not work with a model.
    pub fn other(self) -> Self {
        match self {
            Self::Native => Self::Json,
            Self::Json => Self::Native,
        }
    }

    /// The name `llm.protocol` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Json => "json",
        }
    }
}
