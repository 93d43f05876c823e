//! The two ways a model calls tools.
//!
//! - `native`: tool definitions go in the request's `tools`; calls come back as `tool_calls`;
//!   results go back as `tool` messages paired by call id.
//! - `json`: the definitions and the calling convention are written into the system prompt;
//!   the model writes `{"tool": ..., "parameters": {...}, "terminate": bool}` in its text (in a
//!   code fence or in prose); results go back as user messages, framed as data to read.
//!
//! In both, a reply whose text holds a call in one of the forms small models write
//! (`text_calls`) is read as that call: a server that did not turn it into `tool_calls`
//! does not make it the answer.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::text_calls::{self, Form, TextCall};
use crate::core::message::{CallRecord, ChatMessage, ChatReply, Protocol};

/// A call read from a reply, ready for the gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParsedCall {
    pub id: String,
    pub tool: String,
    pub arguments: Map<String, Value>,
    /// JSON protocol: end the run with this call's result.
    pub terminate: bool,
}

/// One call slot of a reply: either a call, or why it could not be read (the id keeps the
/// native protocol's pairing of calls and results intact).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum CallSlot {
    Call(ParsedCall),
    Malformed {
        id: String,
        tool: String,
        problem: String,
    },
}

/// What a reply amounts to.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyKind {
    /// A final answer for the user.
    Text(String),
    /// Tool calls, to run in order. `content` is any text that came with them.
    Calls {
        content: Option<String>,
        slots: Vec<CallSlot>,
    },
    /// The reply tried to call a tool but could not be read (JSON protocol), or was empty.
    Malformed { raw: String, problem: String },
}

impl Protocol {
    /// Reads a reply. `next_id` numbers calls that came without an id; `tools` are the names
    /// of the real tools, the only ones a call written in prose may name.
    pub fn interpret(
        self,
        reply: &ChatReply,
        next_id: &mut u64,
        tools: &HashSet<String>,
    ) -> ReplyKind {
        match self {
            Self::Native => interpret_native(reply, next_id, tools),
            Self::Json => interpret_json(reply, next_id, tools),
        }
    }

    /// The history entry for the assistant's reply that made `slots`.
    pub fn assistant_message(self, content: Option<&str>, slots: &[CallSlot]) -> ChatMessage {
        match self {
            Self::Native => ChatMessage::assistant_calls(
                content.map(str::to_owned).filter(|c| !c.trim().is_empty()),
                slots
                    .iter()
                    .map(|slot| match slot {
                        CallSlot::Call(call) => CallRecord {
                            id: call.id.clone(),
                            name: call.tool.clone(),
                            arguments: Value::Object(call.arguments.clone()).to_string(),
                        },
                        CallSlot::Malformed { id, tool, .. } => CallRecord {
                            id: id.clone(),
                            name: tool.clone(),
                            arguments: "{}".to_owned(),
                        },
                    })
                    .collect(),
            ),
            // The model's own text is what it wrote; keep it verbatim.
            Self::Json => ChatMessage::assistant(content.unwrap_or_default()),
        }
    }

    /// The history entry carrying a call's result back to the model. In the JSON protocol
    /// the result is a user message, so it is framed as data with the next step spelled
    /// out, and a refusal (`{"status", "reason"}`) is written in words: small models copied
    /// the bare JSON back as their answer.
    pub fn result_message(self, call_id: &str, tool: &str, text: &str) -> ChatMessage {
        match self {
            Self::Native => ChatMessage::tool_result(call_id, text),
            Self::Json => ChatMessage::user(
                None,
                format!(
                    "Result of your {tool} call (data for you to read, not a reply to copy):\n{}\n\nNow answer the user in plain words, or call another tool.",
                    status_in_words(text).unwrap_or_else(|| text.to_owned())
                ),
            ),
        }
    }

    /// The message that tells the model its last reply was malformed, with the right format.
    pub fn correction(self, problem: &str) -> String {
        match self {
            Self::Native => format!(
                "Your last tool call could not be used: {problem}. Call the tool again with `arguments` as a JSON object that matches its parameters, or answer in plain text."
            ),
            Self::Json => format!(
                "Your last reply could not be used: {problem}. To call a tool, reply with exactly one JSON object in a ```json code block: {{\"tool\": \"<tool name>\", \"parameters\": {{...}}, \"terminate\": false}}. To answer the user, reply in plain text without any tool JSON."
            ),
        }
    }
}

/// `{"status": "denied", "reason": "..."}` as a sentence.
fn status_in_words(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    let status = value.get("status")?.as_str()?;
    let reason = value.get("reason")?.as_str()?;
    Some(format!("The call was not run ({status}): {reason}"))
}

fn fresh_id(next_id: &mut u64) -> String {
    *next_id += 1;
    format!("call_{}", *next_id)
}

fn interpret_native(reply: &ChatReply, next_id: &mut u64, tools: &HashSet<String>) -> ReplyKind {
    let content = reply.content.clone().filter(|c| !c.trim().is_empty());
    if reply.tool_calls.is_empty() {
        return match content {
            Some(text) => {
                // A call the server left in the text: the call is what the model meant.
                let found = text_calls::find(&text, tools, false);
                if let Some(tool) = found
                    .is_empty()
                    .then(|| text_calls::bare_name(&text, tools))
                    .flatten()
                {
                    // llama-cpp-python's chatml-function-calling handler returned a small
                    // model's `functions.execute_sql:` as the whole reply.
                    ReplyKind::Calls {
                        content: None,
                        slots: vec![CallSlot::Malformed {
                            id: fresh_id(next_id),
                            tool: tool.to_owned(),
                            problem: format!("the call to {tool} came without its arguments"),
                        }],
                    }
                } else if found.is_empty() {
                    ReplyKind::Text(text)
                } else {
                    ReplyKind::Calls {
                        content: None,
                        slots: found.iter().map(|c| text_call_slot(c, next_id)).collect(),
                    }
                }
            }
            None => ReplyKind::Malformed {
                raw: String::new(),
                problem: format!(
                    "the reply was empty (finish reason {:?})",
                    reply.finish_reason.as_deref().unwrap_or("none")
                ),
            },
        };
    }
    let slots = reply
        .tool_calls
        .iter()
        .map(|call| {
            let id = call
                .id
                .clone()
                .filter(|id| !id.trim().is_empty())
                .unwrap_or_else(|| fresh_id(next_id));
            match arguments_object(&call.arguments) {
                Ok(arguments) if !call.name.trim().is_empty() => CallSlot::Call(ParsedCall {
                    id,
                    tool: call.name.trim().to_owned(),
                    arguments,
                    terminate: false,
                }),
                Ok(_) => CallSlot::Malformed {
                    id,
                    tool: call.name.clone(),
                    problem: "the tool call has no function name".to_owned(),
                },
                Err(problem) => CallSlot::Malformed {
                    id,
                    tool: call.name.clone(),
                    problem,
                },
            }
        })
        .collect();
    ReplyKind::Calls { content, slots }
}

/// Arguments arrive as a JSON string (OpenAI) or an object (Ollama and others).
fn arguments_object(arguments: &Value) -> Result<Map<String, Value>, String> {
    match arguments {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(Map::new()),
        Value::String(text) if text.trim().is_empty() => Ok(Map::new()),
        Value::String(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(format!(
                "the arguments must be a JSON object, not {}",
                kind_of(&other)
            )),
            Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
        },
        other => Err(format!(
            "the arguments must be a JSON object, not {}",
            kind_of(other)
        )),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn interpret_json(reply: &ChatReply, next_id: &mut u64, tools: &HashSet<String>) -> ReplyKind {
    let text = reply.content.clone().unwrap_or_default();
    // A server that speaks native calls even in JSON mode: accept them.
    if !reply.tool_calls.is_empty() {
        return interpret_native(reply, next_id, tools);
    }
    if text.trim().is_empty() {
        return ReplyKind::Malformed {
            raw: text,
            problem: "the reply was empty".to_owned(),
        };
    }
    let slots: Vec<CallSlot> = text_calls::find(&text, tools, true)
        .iter()
        .map(|call| text_call_slot(call, next_id))
        .collect();
    if !slots.is_empty() {
        return ReplyKind::Calls {
            content: Some(text),
            slots,
        };
    }
    if looks_like_a_failed_call(&text) {
        return ReplyKind::Malformed {
            raw: text,
            problem: "it seems to contain a tool call, but no complete JSON object with a \"tool\" key could be read".to_owned(),
        };
    }
    ReplyKind::Text(text)
}

/// A call read from text, checked: a non-empty name, arguments that are an object (or a
/// JSON string holding one), a boolean `terminate`.
fn text_call_slot(call: &TextCall, next_id: &mut u64) -> CallSlot {
    let id = fresh_id(next_id);
    let key = if call.form == Form::Protocol {
        "tool"
    } else {
        "name"
    };
    let tool = match &call.tool {
        Some(Value::String(t)) if !t.trim().is_empty() => t.trim().to_owned(),
        _ => {
            return CallSlot::Malformed {
                id,
                tool: String::new(),
                problem: format!("\"{key}\" must be a non-empty string naming a tool"),
            };
        }
    };
    let arguments = match &call.arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(Value::String(_)) if call.form != Form::Protocol => {
            match arguments_object(call.arguments.as_ref().unwrap_or(&Value::Null)) {
                Ok(map) => map,
                Err(problem) => return CallSlot::Malformed { id, tool, problem },
            }
        }
        Some(other) => {
            return CallSlot::Malformed {
                id,
                tool,
                problem: format!("\"parameters\" must be an object, not {}", kind_of(other)),
            };
        }
    };
    let terminate = match &call.terminate {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return CallSlot::Malformed {
                id,
                tool,
                problem: format!(
                    "\"terminate\" must be true or false, not {}",
                    kind_of(other)
                ),
            };
        }
    };
    CallSlot::Call(ParsedCall {
        id,
        tool,
        arguments,
        terminate,
    })
}

/// Every top-level JSON object in `text`, in order: inside code fences or in prose.
///
/// Each `{` not inside an object already found is tried as the start of one: the balanced
/// `{...}` from there (strings and escapes respected), if it parses as a JSON object.
pub fn json_objects(text: &str) -> Vec<Map<String, Value>> {
    json_object_spans(text)
        .into_iter()
        .map(|(_, _, object)| object)
        .collect()
}

/// [`json_objects`] with where each starts and ends (exclusive) in `text`.
pub(super) fn json_object_spans(text: &str) -> Vec<(usize, usize, Map<String, Value>)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut ends = HashMap::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let end = match ends.get(&i) {
                Some(&end) => end,
                None => balanced_ends(text, i, &mut ends),
            };
            if let Some(end) = end
                && let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text[i..end])
            {
                found.push((i, end, map));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// The end (exclusive) of the balanced `{...}` starting at `start`, strings and escapes
/// respected, or `None` if it is never closed.
///
/// A scan that passes another `{` outside a string is, from there on, exactly the scan that
/// would start at that `{`; so the end of every `{` the scan meets outside strings is
/// recorded in `ends` too, and is not scanned again. A scan of its own for every `{` took
/// time quadratic in the number of `{`: 32 KiB of `{` (a model repeating itself) took 10 s
/// in an optimised fuzz build, 24 ms now. A `{` inside a string for every scan before it
/// still gets a scan of its own, so text built for that (`\"{"` repeated) stays quadratic.
fn balanced_ends(
    text: &str,
    start: usize,
    ends: &mut HashMap<usize, Option<usize>>,
) -> Option<usize> {
    let mut open = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (offset, c) in text[start..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => open.push(start + offset),
            '}' => {
                let Some(opened) = open.pop() else {
                    break;
                };
                let end = start + offset + 1;
                ends.insert(opened, Some(end));
                if opened == start {
                    return Some(end);
                }
            }
            _ => {}
        }
    }
    for opened in open {
        ends.insert(opened, None);
    }
    None
}

/// A reply that mentions a `"tool"` key, opens a json fence or a `<tool_call>` tag, but
/// yielded no call.
fn looks_like_a_failed_call(text: &str) -> bool {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    compact.contains("\"tool\":") || text.contains("```json") || text.contains("<tool_call>")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::core::message::ReplyToolCall;

    fn text_reply(text: &str) -> ChatReply {
        ChatReply {
            content: Some(text.to_owned()),
            ..ChatReply::default()
        }
    }

    fn tools() -> HashSet<String> {
        ["execute_sql", "execute_command", "x"]
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    fn calls(kind: ReplyKind) -> Vec<CallSlot> {
        match kind {
            ReplyKind::Calls { slots, .. } => slots,
            other => panic!("expected calls, got {other:?}"),
        }
    }

    #[test]
    fn native_arguments_as_string_object_or_missing() {
        let reply = ChatReply {
            content: None,
            tool_calls: vec![
                ReplyToolCall {
                    id: Some("a".into()),
                    name: "execute_sql".into(),
                    arguments: json!("{\"sql\": \"SELECT 1\"}"),
                },
                ReplyToolCall {
                    id: None,
                    name: "execute_command".into(),
                    arguments: json!({"command": "ls"}),
                },
                ReplyToolCall {
                    id: Some(String::new()),
                    name: "file_operations".into(),
                    arguments: json!(""),
                },
                ReplyToolCall {
                    id: Some("d".into()),
                    name: "execute_sql".into(),
                    arguments: json!("{not json"),
                },
                ReplyToolCall {
                    id: Some("e".into()),
                    name: "execute_sql".into(),
                    arguments: json!("[1]"),
                },
            ],
            finish_reason: Some("tool_calls".into()),
            usage: None,
        };
        let mut n = 0;
        let slots = calls(Protocol::Native.interpret(&reply, &mut n, &tools()));
        assert!(
            matches!(&slots[0], CallSlot::Call(c) if c.id == "a" && c.arguments["sql"] == "SELECT 1")
        );
        assert!(
            matches!(&slots[1], CallSlot::Call(c) if c.id == "call_1" && c.arguments["command"] == "ls")
        );
        assert!(
            matches!(&slots[2], CallSlot::Call(c) if c.id == "call_2" && c.arguments.is_empty())
        );
        assert!(
            matches!(&slots[3], CallSlot::Malformed { id, problem, .. } if id == "d" && problem.contains("not valid JSON"))
        );
        assert!(
            matches!(&slots[4], CallSlot::Malformed { problem, .. } if problem.contains("an array"))
        );
    }

    #[test]
    fn native_text_and_empty_replies() {
        let mut n = 0;
        assert_eq!(
            Protocol::Native.interpret(&text_reply("hello"), &mut n, &tools()),
            ReplyKind::Text("hello".into())
        );
        let empty = ChatReply {
            content: None,
            tool_calls: vec![],
            finish_reason: Some("length".into()),
            usage: None,
        };
        assert!(matches!(
            Protocol::Native.interpret(&empty, &mut n, &tools()),
            ReplyKind::Malformed { problem, .. } if problem.contains("length")
        ));
    }

    #[test]
    fn json_calls_in_fences_and_prose() {
        let mut n = 0;
        let fenced = "I'll look.\n```json\n{\"tool\": \"execute_sql\", \"parameters\": {\"sql\": \"SELECT '}'\"}, \"terminate\": false}\n```";
        let slots = calls(Protocol::Json.interpret(&text_reply(fenced), &mut n, &tools()));
        assert!(
            matches!(&slots[0], CallSlot::Call(c) if c.tool == "execute_sql" && c.arguments["sql"] == "SELECT '}'" && !c.terminate)
        );

        let prose = "Sure: {\"tool\": \"execute_command\", \"parameters\": {\"command\": \"ls\"}, \"terminate\": true} done";
        let slots = calls(Protocol::Json.interpret(&text_reply(prose), &mut n, &tools()));
        assert!(matches!(&slots[0], CallSlot::Call(c) if c.terminate));
    }

    #[test]
    fn json_validation_and_plain_answers() {
        let mut n = 0;
        for (text, problem) in [
            (
                r#"{"tool": "x", "parameters": {}, "terminate": "yes"}"#,
                "terminate",
            ),
            (r#"{"tool": "x", "parameters": [1]}"#, "parameters"),
            (r#"{"tool": 3}"#, "non-empty string"),
        ] {
            let slots = calls(Protocol::Json.interpret(&text_reply(text), &mut n, &tools()));
            assert!(
                matches!(&slots[0], CallSlot::Malformed { problem: p, .. } if p.contains(problem)),
                "{text}"
            );
        }
        assert!(matches!(
            Protocol::Json.interpret(
                &text_reply("```json\n{\"tool\": \"x\", \"parameters\": {"),
                &mut n,
                &tools()
            ),
            ReplyKind::Malformed { .. }
        ));
        assert_eq!(
            Protocol::Json.interpret(&text_reply("The answer is {42}."), &mut n, &tools()),
            ReplyKind::Text("The answer is {42}.".into())
        );
        assert_eq!(
            Protocol::Json.interpret(&text_reply("Config: {\"a\": 1}"), &mut n, &tools()),
            ReplyKind::Text("Config: {\"a\": 1}".into())
        );
    }

    #[test]
    fn native_calls_left_in_the_text_are_calls() {
        let mut n = 0;
        let bare = r#"{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}"#;
        let slots = calls(Protocol::Native.interpret(&text_reply(bare), &mut n, &tools()));
        assert!(
            matches!(&slots[0], CallSlot::Call(c) if c.id == "call_1" && c.tool == "execute_sql" && c.arguments["sql"] == "SELECT 1")
        );
        let prefixed = "execute_command{\"command\": \"ls\"}";
        let kind = Protocol::Native.interpret(&text_reply(prefixed), &mut n, &tools());
        assert!(
            matches!(&kind, ReplyKind::Calls { content: None, slots } if matches!(&slots[0], CallSlot::Call(c) if c.tool == "execute_command")),
            "{kind:?}"
        );
        // A JSON answer naming no real tool stays an answer.
        let answer = r#"{"name": "alice", "arguments": {"age": 3}}"#;
        assert_eq!(
            Protocol::Native.interpret(&text_reply(answer), &mut n, &tools()),
            ReplyKind::Text(answer.into())
        );
    }

    #[test]
    fn json_protocol_reads_every_form_and_frames_results() {
        let mut n = 0;
        for text in [
            r#"{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}"#,
            r#"execute_sql{"sql": "SELECT 1"}"#,
            "```json\n{\"tool\": \"execute_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}\n```",
        ] {
            let slots = calls(Protocol::Json.interpret(&text_reply(text), &mut n, &tools()));
            assert!(
                matches!(&slots[0], CallSlot::Call(c) if c.tool == "execute_sql" && c.arguments["sql"] == "SELECT 1"),
                "{text}: {slots:?}"
            );
        }
        let refused = Protocol::Json.result_message(
            "c1",
            "execute_sql",
            r#"{"status": "denied", "reason": "not here"}"#,
        );
        let text = refused.content.expect("text");
        assert!(
            text.contains("The call was not run (denied): not here"),
            "{text}"
        );
        assert!(!text.contains('{'), "no JSON to copy: {text}");
        assert!(text.contains("answer the user in plain words"), "{text}");
    }

    #[test]
    fn extractor_survives_nesting_and_garbage() {
        assert_eq!(
            json_objects("{\"a\": {\"b\": \"}\\\"{\"}} {x} {\"c\": 1}").len(),
            2
        );
        assert!(json_objects("}}}{{{").is_empty());
        assert!(json_objects("").is_empty());
    }
}
