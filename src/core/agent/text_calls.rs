//! Tool calls written in a reply's text: what small models write when the server does not
//! turn them into `tool_calls` (llama.cpp and llama-cpp-python leave a call the chat
//! template did not expect as text), and what the JSON protocol asks for.
//!
//! The forms read, in code fences, `<tool_call>` tags or prose:
//! - `{"tool": "x", "parameters": {...}, "terminate": false}`: the JSON protocol's own;
//! - `{"name": "x", "arguments": {...}}` (or `"parameters"`; arguments may be a JSON string),
//!   also wrapped as `{"type": "function", "function": {...}}`;
//! - `x{...}` or `x({...})`: a tool's name right before its arguments object.
//!
//! Only the names of real tools count in the last two forms (and in the first outside the
//! JSON protocol), so a JSON object in an answer is not taken for a call by accident, and
//! nothing riskgate itself writes into a tool result (`{"status", "reason"}`, the framed
//! output) has the shape of a call.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::protocol::json_object_spans;

/// How a call was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// `{"tool": ..., "parameters": ...}`.
    Protocol,
    /// `{"name": ..., "arguments": ...}`, possibly inside `{"function": ...}`.
    Named,
    /// `name{...}`: the object is the arguments.
    Prefixed,
}

/// One call found in text, not yet checked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TextCall {
    pub form: Form,
    /// The tool name as written (`Form::Protocol` may hold anything; checked later).
    pub tool: Option<Value>,
    /// The arguments as written: an object, a JSON string, or anything else (an error).
    pub arguments: Option<Value>,
    pub terminate: Option<Value>,
}

/// Every call in `text`, in order; a call written in a model's own form (not the JSON
/// protocol's) counts once: a small model that repeats the same call over and over in one
/// reply (Qwen2.5-Coder-0.5B wrote one call ten times) makes one call.
/// `any_protocol_name`: `{"tool": ...}` objects count whatever name they give (the JSON
/// protocol, where a wrong name is a mistake to correct); otherwise every form needs a name
/// in `known`.
pub(super) fn find(text: &str, known: &HashSet<String>, any_protocol_name: bool) -> Vec<TextCall> {
    let mut found: Vec<TextCall> = Vec::new();
    for (start, _end, object) in json_object_spans(text) {
        let call = match read_object(&object, known, any_protocol_name) {
            Some(call) => call,
            None => match name_before(text, start, known) {
                Some(name) => TextCall {
                    form: Form::Prefixed,
                    tool: Some(Value::String(name.to_owned())),
                    arguments: Some(Value::Object(object)),
                    terminate: None,
                },
                None => continue,
            },
        };
        let repeated = call.form != Form::Protocol
            && found.iter().any(|f| {
                f.form != Form::Protocol && f.tool == call.tool && f.arguments == call.arguments
            });
        if !repeated {
            found.push(call);
        }
    }
    found
}

/// The tool a reply names and nothing else (`functions.execute_sql:`, `execute_sql`), as
/// a server's function-calling handler returned it when the arguments never came.
pub(super) fn bare_name<'a>(text: &str, known: &'a HashSet<String>) -> Option<&'a str> {
    let name = text.trim().trim_end_matches(':').trim();
    let name = name.strip_prefix("functions.").unwrap_or(name);
    known.get(name).map(String::as_str)
}

fn read_object(
    object: &Map<String, Value>,
    known: &HashSet<String>,
    any_protocol_name: bool,
) -> Option<TextCall> {
    let is_known = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .is_some_and(|name| known.contains(name.trim()))
    };
    if object.contains_key("tool") && (any_protocol_name || is_known(object.get("tool"))) {
        return Some(TextCall {
            form: Form::Protocol,
            tool: object.get("tool").cloned(),
            arguments: object
                .get("parameters")
                .or_else(|| object.get("arguments"))
                .cloned(),
            terminate: object.get("terminate").cloned(),
        });
    }
    let named = match object.get("function") {
        Some(Value::Object(function)) if !object.contains_key("name") => function,
        _ => object,
    };
    let has_arguments = named.contains_key("arguments") || named.contains_key("parameters");
    let only_a_name = named.len() == 1;
    if is_known(named.get("name")) && (has_arguments || only_a_name) {
        return Some(TextCall {
            form: Form::Named,
            tool: named.get("name").cloned(),
            arguments: named
                .get("arguments")
                .or_else(|| named.get("parameters"))
                .cloned(),
            terminate: object.get("terminate").cloned(),
        });
    }
    None
}

/// The known tool name written right before the object at `start` (`name{`, `name {`,
/// `name({`), if there is one and it is a whole word.
fn name_before<'a>(text: &str, start: usize, known: &'a HashSet<String>) -> Option<&'a str> {
    let before = text[..start].trim_end();
    let before = before.strip_suffix('(').unwrap_or(before).trim_end();
    let word_start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .last()
        .map(|(i, _)| i)?;
    let word = &before[word_start..];
    known.get(word).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn known() -> HashSet<String> {
        ["execute_sql", "execute_command"]
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    fn forms(text: &str, any: bool) -> Vec<(Form, Value, Option<Value>)> {
        find(text, &known(), any)
            .into_iter()
            .map(|c| (c.form, c.tool.unwrap_or(Value::Null), c.arguments))
            .collect()
    }

    #[test]
    fn every_written_form_is_read() {
        let sql = json!({"sql": "SELECT 1"});
        for text in [
            r#"{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}"#,
            "```json\n{\"name\": \"execute_sql\", \"parameters\": {\"sql\": \"SELECT 1\"}}\n```",
            "<tool_call>\n{\"name\": \"execute_sql\", \"arguments\": {\"sql\": \"SELECT 1\"}}\n</tool_call>",
            r#"{"type": "function", "function": {"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}}"#,
        ] {
            assert_eq!(
                forms(text, false),
                vec![(Form::Named, json!("execute_sql"), Some(sql.clone()))],
                "{text}"
            );
        }
        for text in [
            r#"execute_sql{"sql": "SELECT 1"}"#,
            "I will run execute_sql {\"sql\": \"SELECT 1\"} now",
            "```\nexecute_sql({\"sql\": \"SELECT 1\"})\n```",
        ] {
            assert_eq!(
                forms(text, false),
                vec![(Form::Prefixed, json!("execute_sql"), Some(sql.clone()))],
                "{text}"
            );
        }
        assert_eq!(
            forms(
                r#"{"tool": "execute_sql", "parameters": {"sql": "SELECT 1"}}"#,
                false
            ),
            vec![(Form::Protocol, json!("execute_sql"), Some(sql.clone()))]
        );
        // Arguments as a JSON string are kept for the reader to parse.
        assert_eq!(
            forms(
                r#"{"name": "execute_sql", "arguments": "{\"sql\": \"SELECT 1\"}"}"#,
                false
            )[0]
            .2,
            Some(json!("{\"sql\": \"SELECT 1\"}"))
        );
    }

    #[test]
    fn a_bare_tool_name_is_recognised() {
        assert_eq!(
            bare_name("functions.execute_sql:", &known()),
            Some("execute_sql")
        );
        assert_eq!(bare_name(" execute_sql \n", &known()), Some("execute_sql"));
        assert_eq!(bare_name("functions.rm:", &known()), None);
        assert_eq!(bare_name("Use execute_sql to count.", &known()), None);
    }

    #[test]
    fn a_call_repeated_in_one_reply_is_one_call() {
        let one = r#"{"name": "execute_sql", "arguments": {"sql": "SELECT 1"}}"#;
        let other = r#"{"name": "execute_sql", "arguments": {"sql": "SELECT 2"}}"#;
        let text = format!("{one} {one}\n{one} {other} {one}");
        assert_eq!(find(&text, &known(), false).len(), 2);
    }

    #[test]
    fn only_real_tools_count_and_results_are_not_calls() {
        for text in [
            r#"{"name": "alice", "arguments": {"x": 1}}"#,
            r#"{"name": "execute_sql", "age": 3}"#,
            r#"not_a_tool{"sql": "SELECT 1"}"#,
            r#"my_execute_sql{"sql": "SELECT 1"}"#,
            r#"{"status": "denied", "reason": "execute_sql is not allowed"}"#,
            "Result of execute_sql:\n{\"status\": \"ok\"}",
            r#"{"tool": "rm_everything", "parameters": {}}"#,
        ] {
            assert_eq!(forms(text, false), vec![], "{text}");
        }
        // The JSON protocol's own form names any tool: a wrong name is corrected later.
        assert_eq!(
            forms(r#"{"tool": "rm_everything", "parameters": {}}"#, true).len(),
            1
        );
    }
}
