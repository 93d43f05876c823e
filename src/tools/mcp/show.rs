//! How a call of an MCP tool is shown: which server and tool, what the server claims about
//! the tool (its annotations, as claims unless the operator trusts the server), and the
//! whole arguments, never cut.

use serde_json::{Map, Value};

use crate::core::tools::CallBrief;
use crate::core::tools::view::{json_brief, one_line_json, whole_json};
use crate::mcp::{McpTool, ToolHints};

/// Where the call runs: `MCP server `kb`, tool `write_note`; the server says: read-only
/// (not trusted: it decides nothing)`.
pub fn target(tool: &McpTool) -> String {
    let mut text = format!("MCP server `{}`, tool `{}`", tool.server, tool.name);
    if let Some(claims) = claims(&tool.hints) {
        if tool.trust_annotations {
            text.push_str(&format!("; the server (trusted) says: {claims}"));
        } else {
            text.push_str(&format!(
                "; the server says: {claims} (not trusted: it decides nothing)"
            ));
        }
    }
    text
}

/// The annotations a server set, in words; `None` when it set none.
fn claims(hints: &ToolHints) -> Option<String> {
    let mut said = Vec::new();
    let mut say = |hint: Option<bool>, yes: &str, no: &str| {
        if let Some(value) = hint {
            said.push(if value { yes } else { no }.to_owned());
        }
    };
    say(hints.read_only, "read-only", "changes things");
    say(hints.destructive, "may destroy", "destroys nothing");
    say(hints.idempotent, "idempotent", "not idempotent");
    say(hints.open_world, "reaches outside systems", "closed world");
    (!said.is_empty()).then(|| said.join(", "))
}

/// What a person confirms: the server, the tool, and the arguments as indented JSON, whole.
pub fn whole_call(tool: &McpTool, arguments: &Map<String, Value>) -> String {
    format!(
        "MCP server {}, tool {}\n{}",
        tool.server,
        tool.name,
        whole_json(arguments)
    )
}

/// What a chat shows of a call that ran without a click: the arguments as JSON (the tool's
/// offered name, which names the server, is shown beside it).
pub fn brief_call(arguments: &Map<String, Value>) -> CallBrief {
    json_brief(arguments)
}

/// One line for a terminal's log: `kb/write_note {"title":"x"}`.
pub fn call_line(tool: &McpTool, arguments: &Map<String, Value>) -> String {
    format!("{}/{} {}", tool.server, tool.name, one_line_json(arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::tests::tool;

    #[test]
    fn an_untrusted_servers_claims_are_shown_as_claims() {
        let hints = ToolHints {
            read_only: Some(true),
            open_world: Some(false),
            ..ToolHints::default()
        };
        let untrusted = target(&tool(false, hints, None));
        assert_eq!(
            untrusted,
            "MCP server `kb`, tool `write_note`; the server says: read-only, closed world (not trusted: it decides nothing)"
        );
        let trusted = target(&tool(true, hints, None));
        assert!(
            trusted.contains("the server (trusted) says: read-only"),
            "{trusted}"
        );
        assert_eq!(
            target(&tool(false, ToolHints::default(), None)),
            "MCP server `kb`, tool `write_note`"
        );
    }

    #[test]
    fn the_whole_call_names_server_and_tool_and_keeps_every_argument() {
        let long = "y".repeat(20_000);
        let mut arguments = Map::new();
        arguments.insert("text".to_owned(), Value::from(long.clone()));
        let shown = whole_call(&tool(false, ToolHints::default(), None), &arguments);
        assert!(
            shown.starts_with("MCP server kb, tool write_note\n"),
            "{}",
            &shown[..60]
        );
        assert!(shown.contains(&long));
    }
}
