//! The Chat Completions wire format: typed request bodies, and a lenient reading of replies.

use serde::Serialize;
use serde_json::Value;

use crate::core::agent::{ChatMessage, ChatReply, ChatRequest, ReplyToolCall, Role};
use crate::core::message::Usage;
use crate::core::ports::ModelError;

#[derive(Debug, Serialize)]
pub(super) struct RequestBody<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    /// `auto` whenever tools are sent: llama-cpp-python's function-calling handler leaves
    /// the tools out of the prompt without it, and every other server accepts it.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    /// The reply's length cap, under the name the server kind expects.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    stream: bool,
    /// Asks a streamed reply to end with its `usage` (OpenAI, vLLM and Ollama send none
    /// otherwise); left out for a server that refused it.
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// How a reply is asked for. Ordered: a server that refuses one is asked the next lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(super) enum Streaming {
    /// The whole reply at once.
    #[default]
    Off,
    /// Streamed, without `stream_options`.
    Plain,
    /// Streamed, with `stream_options.include_usage`.
    WithUsage,
}

impl Streaming {
    pub(super) fn from_u8(value: u8) -> Self {
        match value {
            0 => Self::Off,
            1 => Self::Plain,
            _ => Self::WithUsage,
        }
    }
}

/// What differs between the servers riskgate talks to (`llm.server`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerKind {
    /// What every server accepts: the cap as `max_tokens`.
    #[default]
    Generic,
    /// OpenAI's own API: its newer models refuse `max_tokens` and take
    /// `max_completion_tokens` instead (which other servers ignore).
    OpenAi,
}

impl std::str::FromStr for ServerKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "generic" | "" => Ok(Self::Generic),
            "openai" => Ok(Self::OpenAi),
            other => Err(format!(
                "unknown server kind {other:?} (expected generic or openai)"
            )),
        }
    }
}

/// The per-request settings of the body.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct BodySettings<'a> {
    pub model: &'a str,
    pub temperature: Option<f32>,
    /// `None`: no cap is sent.
    pub max_tokens: Option<u32>,
    pub server: ServerKind,
    pub streaming: Streaming,
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    /// Always a string: an assistant message that only calls tools sends `""`, since
    /// llama-cpp-python answers 500 to `null` and to a missing `content`.
    content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

pub(super) fn request_body<'a>(
    settings: BodySettings<'a>,
    request: &'a ChatRequest,
) -> RequestBody<'a> {
    let (max_tokens, max_completion_tokens) = match settings.server {
        ServerKind::Generic => (settings.max_tokens, None),
        ServerKind::OpenAi => (None, settings.max_tokens),
    };
    RequestBody {
        model: settings.model,
        // riskgate's notices are no one's words to the model (the loop leaves them out).
        messages: request
            .messages
            .iter()
            .filter(|m| m.role != Role::Notice)
            .map(wire_message)
            .collect(),
        tools: request
            .tools
            .iter()
            .map(|t| WireTool {
                kind: "function",
                function: WireFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect(),
        tool_choice: (!request.tools.is_empty()).then_some("auto"),
        temperature: settings.temperature,
        max_tokens,
        max_completion_tokens,
        stream: settings.streaming != Streaming::Off,
        stream_options: (settings.streaming == Streaming::WithUsage).then_some(StreamOptions {
            include_usage: true,
        }),
    }
}

fn wire_message(message: &ChatMessage) -> WireMessage<'_> {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
        Role::Notice => "system",
    };
    // Servers disagree on the optional `name` field (OpenAI limits its characters, some
    // reject it): who wrote a message goes into its text instead.
    let content = match (&message.role, &message.name, &message.content) {
        (Role::User, Some(name), Some(text)) => format!("{name}: {text}"),
        (_, _, content) => content.clone().unwrap_or_default(),
    };
    WireMessage {
        role,
        content,
        tool_calls: message
            .tool_calls
            .iter()
            .map(|c| WireCall {
                id: &c.id,
                kind: "function",
                function: WireFunctionCall {
                    name: &c.name,
                    arguments: &c.arguments,
                },
            })
            .collect(),
        tool_call_id: message.tool_call_id.as_deref(),
    }
}

/// Reads a completion as loosely as the servers write them.
pub(super) fn parse_reply(text: &str) -> Result<ChatReply, ModelError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ModelError::BadReply(format!("the reply is not JSON ({e}): {}", excerpt(text)))
    })?;
    if let Some(error) = error_of(&value, text) {
        return Err(error);
    }
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| {
            ModelError::BadReply(format!("the reply has no choices: {}", excerpt(text)))
        })?;
    let message = choice.get("message").unwrap_or(&Value::Null);
    let content = content_of(message);
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for call in calls {
            let function = call.get("function").unwrap_or(call);
            tool_calls.push(ReplyToolCall {
                id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                name: function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                arguments: function
                    .get("arguments")
                    .or_else(|| function.get("parameters"))
                    .cloned()
                    .unwrap_or(Value::Null),
            });
        }
    } else if let Some(function) = message.get("function_call").filter(|f| f.is_object()) {
        // The legacy single-call form.
        tool_calls.push(ReplyToolCall {
            id: None,
            name: function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: function.get("arguments").cloned().unwrap_or(Value::Null),
        });
    }
    Ok(ChatReply {
        content,
        tool_calls,
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        usage: value.get("usage").and_then(usage_of),
    })
}

/// A message's (or a streamed delta's) `content`: a string, or a list of parts as some
/// servers send it; `None` when it is `null` or missing.
pub(super) fn content_of(message: &Value) -> Option<String> {
    match message.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str).or(p.as_str()))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    }
}

/// The error a body (`text`, read as `value`) says in place of a reply, if it says one.
pub(super) fn error_of(value: &Value, text: &str) -> Option<ModelError> {
    let message = error_message_of(value)?;
    Some(if says_too_long(text) {
        ModelError::TooLong(message)
    } else {
        ModelError::Rejected(message)
    })
}

/// The reply's `usage`, read loosely: a count that is missing, `null`, negative, fractional
/// or a string is taken as 0, and a `usage` with neither count readable as none, so an odd
/// server costs the counting, never the reply.
pub(super) fn usage_of(usage: &Value) -> Option<Usage> {
    let count = |name: &str| usage.get(name).and_then(Value::as_u64);
    let (prompt, completion) = (count("prompt_tokens"), count("completion_tokens"));
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    Some(Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: completion.unwrap_or(0),
    })
}

/// The `error.message` (or `error` string) of an error body, if it has one.
pub(super) fn error_message(text: &str) -> Option<String> {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| error_message_of(&v))
}

/// Whether an error body says the request is longer than the model's context window, in
/// the words real servers use: OpenAI's code `context_length_exceeded` ("This model's
/// maximum context length is ..."), vLLM's "maximum context length", llama.cpp's
/// `exceed_context_size_error` ("the request exceeds the available context size"),
/// Ollama's "prompt too long" / "exceeds maximum context length", LM Studio's "greater
/// than the context length".
pub(super) fn says_too_long(body: &str) -> bool {
    const WORDINGS: &[&str] = &[
        "context_length_exceeded",
        "maximum context length",
        "exceed_context_size",
        "exceeds the available context size",
        "context length exceeded",
        "exceeds maximum context length",
        "exceeds the maximum context length",
        "greater than the context length",
        "prompt is too long",
        "prompt too long",
    ];
    let lower = body.to_ascii_lowercase();
    WORDINGS.iter().any(|wording| lower.contains(wording))
}

fn error_message_of(value: &Value) -> Option<String> {
    match value.get("error")? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| Some(Value::Object(o.clone()).to_string())),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The model ids of a `GET /models` answer (`{"data": [{"id": ...}, ...]}`, as every
/// OpenAI-compatible server lists them); `None` when the text is not such a list.
pub(super) fn model_ids(text: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(text).ok()?;
    let data = value.get("data")?.as_array()?;
    Some(
        data.iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect(),
    )
}

fn excerpt(text: &str) -> String {
    crate::core::tools::shorten(text.trim(), 200)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reply(body: Value) -> ChatReply {
        parse_reply(&body.to_string()).expect("a reply")
    }

    #[test]
    fn openai_shape_with_null_content_and_string_arguments() {
        let r = reply(
            json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "execute_sql", "arguments": "{\"sql\":\"SELECT 1\"}"}}]},
            "finish_reason": "tool_calls"}]}),
        );
        assert_eq!(r.content, None);
        assert_eq!(r.tool_calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(r.tool_calls[0].arguments, json!("{\"sql\":\"SELECT 1\"}"));
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn ollama_shape_with_object_arguments_and_no_ids() {
        let r = reply(
            json!({"choices": [{"message": {"role": "assistant", "content": "",
            "tool_calls": [
                {"function": {"name": "execute_command", "arguments": {"command": "ls"}}},
                {"function": {"name": "execute_sql", "arguments": {"sql": "SELECT 2"}}}
            ]}, "finish_reason": "stop"}]}),
        );
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].id, None);
        assert_eq!(r.tool_calls[0].arguments, json!({"command": "ls"}));
    }

    #[test]
    fn legacy_function_call_content_parts_and_odd_finish_reasons() {
        let r = reply(json!({"choices": [{"message": {"content": null,
            "function_call": {"name": "execute_sql", "arguments": "{}"}}, "finish_reason": "function_call"}]}));
        assert_eq!(r.tool_calls[0].name, "execute_sql");
        let r = reply(
            json!({"choices": [{"message": {"content": [{"type": "text", "text": "hel"}, {"type": "text", "text": "lo"}]},
            "finish_reason": "eos_token"}]}),
        );
        assert_eq!(r.content.as_deref(), Some("hello"));
        assert_eq!(r.finish_reason.as_deref(), Some("eos_token"));
    }

    #[test]
    fn usage_is_read_when_sent_and_odd_counts_never_cost_the_reply() {
        let with = |usage: Value| {
            reply(
                json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
                "usage": usage}),
            )
        };
        // OpenAI, llama.cpp, vLLM and Ollama: both counts, and a total that is not needed.
        assert_eq!(
            with(json!({"prompt_tokens": 1200, "completion_tokens": 34, "total_tokens": 1234}))
                .usage,
            Some(Usage {
                prompt_tokens: 1200,
                completion_tokens: 34
            })
        );
        let without = reply(json!({"choices": [{"message": {"content": "hi"}}]}));
        assert_eq!(without.usage, None);
        assert_eq!(without.content.as_deref(), Some("hi"));
        assert_eq!(with(Value::Null).usage, None);
        assert_eq!(with(json!("lots")).usage, None);
        assert_eq!(with(json!({})).usage, None);
        // A count that is a string, negative or fractional is not a count; the other stays.
        let odd = with(json!({"prompt_tokens": "12", "completion_tokens": 7}));
        assert_eq!(
            odd.usage,
            Some(Usage {
                prompt_tokens: 0,
                completion_tokens: 7
            })
        );
        assert_eq!(odd.content.as_deref(), Some("hi"));
        assert_eq!(
            with(json!({"prompt_tokens": 50, "completion_tokens": -1})).usage,
            Some(Usage {
                prompt_tokens: 50,
                completion_tokens: 0
            })
        );
        assert_eq!(
            with(json!({"prompt_tokens": -3, "completion_tokens": 2.5})).usage,
            None
        );
        assert_eq!(
            with(json!({"prompt_tokens": null, "completion_tokens": null})).usage,
            None
        );
    }

    #[test]
    fn errors_in_a_200_and_garbage_are_typed() {
        assert!(matches!(
            parse_reply(&json!({"error": {"message": "context too long"}}).to_string()),
            Err(ModelError::Rejected(m)) if m == "context too long"
        ));
        assert!(matches!(
            parse_reply("<html>"),
            Err(ModelError::BadReply(_))
        ));
        assert!(matches!(
            parse_reply("{\"choices\": []}"),
            Err(ModelError::BadReply(_))
        ));
    }

    #[test]
    fn request_bodies_carry_tools_calls_and_authors() {
        use crate::core::agent::CallRecord;
        use crate::core::tools::ToolDefinition;
        let request = ChatRequest {
            messages: vec![
                ChatMessage::system("sys"),
                ChatMessage::user(Some("alice"), "hi"),
                ChatMessage::assistant_calls(
                    None,
                    vec![CallRecord {
                        id: "c1".into(),
                        name: "execute_sql".into(),
                        arguments: "{\"sql\":\"SELECT 1\"}".into(),
                    }],
                ),
                ChatMessage::tool_result("c1", "1 row"),
            ],
            tools: vec![ToolDefinition {
                name: "execute_sql".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }]
            .into(),
            max_reply_tokens: None,
            model: None,
        };
        let settings = BodySettings {
            model: "m",
            temperature: Some(0.1),
            max_tokens: Some(100),
            server: ServerKind::Generic,
            streaming: Streaming::Off,
        };
        let body = serde_json::to_value(request_body(settings, &request)).expect("json");
        assert_eq!(body["messages"][1]["content"], "alice: hi");
        // Never null nor missing beside tool calls: llama-cpp-python answers 500 to both.
        assert_eq!(body["messages"][2]["content"], "");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(body["max_tokens"], 100);
        assert!(body.get("max_completion_tokens").is_none());
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"sql\":\"SELECT 1\"}"
        );
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["stream"], false);
        assert!(body.get("stream_options").is_none());
        for (streaming, options) in [
            (Streaming::WithUsage, json!({"include_usage": true})),
            (Streaming::Plain, Value::Null),
        ] {
            let body = serde_json::to_value(request_body(
                BodySettings {
                    streaming,
                    ..settings
                },
                &request,
            ))
            .expect("json");
            assert_eq!(body["stream"], true);
            assert_eq!(body["stream_options"], options);
        }

        // OpenAI's kind names the cap its own way; no tools, no tool_choice; no cap, none.
        let openai = BodySettings {
            server: ServerKind::OpenAi,
            ..settings
        };
        let body = serde_json::to_value(request_body(openai, &request)).expect("json");
        assert_eq!(body["max_completion_tokens"], 100);
        assert!(body.get("max_tokens").is_none());
        let bare = ChatRequest {
            tools: Vec::new().into(),
            ..request
        };
        let uncapped = BodySettings {
            max_tokens: None,
            ..settings
        };
        let body = serde_json::to_value(request_body(uncapped, &bare)).expect("json");
        assert!(body.get("tool_choice").is_none() && body.get("tools").is_none());
        assert!(body.get("max_tokens").is_none());
    }
}
