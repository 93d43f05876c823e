//! What *Allow similar* covers for an MCP tool: later calls of the same tool of the same
//! server, with the same arguments, except that a value naming *which thing* the call is
//! about may differ: an identifier-like string (no spaces, at most 128 characters of
//! letters, digits and `._:/@+#=-`) or a number, in an argument the tool's schema does not
//! restrict to a list of values and whose name does not choose an operation (`action`,
//! `mode`, `method`, …). Everything that says *what* the call does (free text, a query,
//! flags, lists, objects, a choice among listed values) must be the same.
//!
//! As for every tool, a rule never lifts what the destructive floor holds: a call the
//! operator wants confirmed every time (`"confirm"`), a tool a trusted server says may
//! destroy, and any tool of a server whose annotations are not trusted (its effect is
//! unknown) ask every time. What a rule can cover is a trusted server's tool that destroys
//! nothing (`destructiveHint: false`), or a call the model rated medium or high of a tool
//! the code knows to be safe. A rule lets a call run without a click, and an MCP server has
//! no wall of riskgate's behind it.

use serde_json::{Map, Value};

use crate::core::risk::Assessment;
use crate::core::rules::Similarity;
use crate::core::tools::canonical_json;
use crate::mcp::{McpTool, ToolPolicy};

/// Longest value that may differ between similar calls.
const MAX_VARYING_CHARS: usize = 128;

/// Argument names that choose what a call does rather than what it is about.
const OPERATION_NAMES: &[&str] = &[
    "action",
    "operation",
    "op",
    "method",
    "mode",
    "command",
    "cmd",
    "verb",
    "type",
    "kind",
    "function",
    "sql",
    "query",
    "script",
    "code",
];

/// The similarity of a call of `tool` the code judged `assessment`; `None` when no rule may
/// cover it.
pub fn similarity(
    tool: &McpTool,
    assessment: Assessment,
    arguments: &Map<String, Value>,
) -> Option<Similarity> {
    if tool.policy == Some(ToolPolicy::Confirm) || matches!(assessment, Assessment::Forbidden(_)) {
        return None;
    }
    if let Some(hints) = tool.trusted_hints()
        && hints.read_only != Some(true)
        && hints.destructive != Some(false)
    {
        return None;
    }
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let mut facts: Vec<(String, String)> = vec![
        ("server".to_owned(), tool.server.clone()),
        ("tool".to_owned(), tool.name.clone()),
        (
            "arguments".to_owned(),
            arguments.keys().cloned().collect::<Vec<_>>().join(" "),
        ),
    ];
    let (mut varying, mut fixed) = (Vec::new(), Vec::new());
    for (name, value) in arguments {
        let schema = properties.and_then(|p| p.get(name));
        if may_vary(name, value, schema) {
            varying.push(format!("`{name}`"));
        } else {
            fixed.push(format!("`{name}`"));
            facts.push((format!("argument {name}"), canonical_json(value)));
        }
    }
    let mut summary = format!("`{}` of MCP server `{}`", tool.name, tool.server);
    match (fixed.is_empty(), varying.is_empty()) {
        (true, true) => summary.push_str(" without arguments"),
        (false, true) => summary.push_str(" with exactly these arguments"),
        (true, false) => summary.push_str(&format!(" with any {}", varying.join(", "))),
        (false, false) => summary.push_str(&format!(
            " with the same {} and any {}",
            fixed.join(", "),
            varying.join(", ")
        )),
    }
    let facts: Vec<(&str, String)> = facts.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    Some(Similarity::new(summary, &facts))
}

/// Whether the value of argument `name` may differ between similar calls.
fn may_vary(name: &str, value: &Value, schema: Option<&Value>) -> bool {
    let lower = name.to_ascii_lowercase();
    if OPERATION_NAMES.contains(&lower.as_str()) {
        return false;
    }
    if schema.is_some_and(|s| s.get("enum").is_some() || s.get("const").is_some()) {
        return false;
    }
    match value {
        Value::Number(_) => true,
        Value::String(text) => identifier_like(text),
        _ => false,
    }
}

fn identifier_like(text: &str) -> bool {
    !text.is_empty()
        && text.chars().count() <= MAX_VARYING_CHARS
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:/@+#=-".contains(c))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::mcp::ToolHints;
    use crate::tools::mcp::{judge, tests::tool};

    fn arguments(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    fn similar_of(tool: &McpTool, value: Value) -> Option<Similarity> {
        similarity(tool, judge(tool), &arguments(value))
    }

    #[test]
    fn names_may_differ_what_the_call_does_may_not() {
        let mut t = tool(false, ToolHints::default(), None);
        t.input_schema = Arc::new(arguments(json!({
            "type": "object",
            "properties": {"state": {"type": "string", "enum": ["open", "closed"]}}
        })));
        let one = similar_of(
            &t,
            json!({"issue": 12, "repo": "team/app", "body": "Looks good to me", "state": "open"}),
        )
        .expect("a rule");
        let other = similar_of(
            &t,
            json!({"issue": 13, "repo": "team/web", "body": "Looks good to me", "state": "open"}),
        )
        .expect("a rule");
        assert_eq!(one.key, other.key);
        assert_eq!(
            one.summary,
            "`write_note` of MCP server `kb` with the same `body`, `state` and any `issue`, `repo`"
        );
        for different in [
            json!({"issue": 12, "repo": "team/app", "body": "Close this", "state": "open"}),
            json!({"issue": 12, "repo": "team/app", "body": "Looks good to me", "state": "closed"}),
            json!({"issue": 12, "repo": "team/app", "body": "Looks good to me"}),
            json!({"issue": 12, "repo": "team/app", "body": "Looks good to me", "state": "open", "force": true}),
        ] {
            let got = similar_of(&t, different.clone()).expect("a rule");
            assert_ne!(got.key, one.key, "{different}");
        }
        // An operation's name never varies, even when it looks like an identifier.
        let list = similar_of(&t, json!({"action": "list", "id": "a"})).expect("a rule");
        let delete = similar_of(&t, json!({"action": "delete", "id": "a"})).expect("a rule");
        assert_ne!(list.key, delete.key);
        // Another tool or server is never similar.
        let mut elsewhere = t.clone();
        elsewhere.server = "other".to_owned();
        let there = similar_of(
            &elsewhere,
            json!({"issue": 12, "repo": "team/app", "body": "Looks good to me", "state": "open"}),
        )
        .expect("a rule");
        assert_ne!(there.key, one.key);
    }

    #[test]
    fn no_rule_for_what_must_be_confirmed_every_time() {
        let args = json!({"id": "a"});
        let confirm = tool(true, ToolHints::default(), Some(ToolPolicy::Confirm));
        assert_eq!(similar_of(&confirm, args.clone()), None);
        let destructive = tool(
            true,
            ToolHints {
                read_only: Some(false),
                destructive: Some(true),
                ..ToolHints::default()
            },
            None,
        );
        assert_eq!(similar_of(&destructive, args.clone()), None);
        // Trusted and non-destructive, or unknown to the code: a person may allow similar.
        let additive = tool(
            true,
            ToolHints {
                read_only: Some(false),
                destructive: Some(false),
                ..ToolHints::default()
            },
            None,
        );
        assert!(similar_of(&additive, args.clone()).is_some());
        assert!(similar_of(&tool(false, ToolHints::default(), None), args).is_some());
    }
}
