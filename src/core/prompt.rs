//! The system prompt: Markdown files from `prompts/`, embedded in the binary, put together
//! with the channel's profile's own text (`core::profile`) per protocol, with what the
//! profile's tools say of what they work on (`Tool::prompt_context`: the databases' tables,
//! the workspace's top level) and the tool definitions injected by the backend.

use serde_json::Value;

use crate::core::message::Protocol;
use crate::core::profile::Profile;
use crate::core::tools::{ToolDefinition, ToolSet};

/// The prompt texts every profile shares. `Prompts::default()` holds the files shipped in
/// `prompts/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    pub base: String,
    pub risk: String,
    pub json_protocol: String,
    /// The section that holds what the tools say of what is there (`{{context}}`).
    pub context: String,
}

impl Default for Prompts {
    fn default() -> Self {
        Self {
            base: include_str!("../../prompts/base.md").to_owned(),
            risk: include_str!("../../prompts/risk.md").to_owned(),
            json_protocol: include_str!("../../prompts/json_protocol.md").to_owned(),
            context: include_str!("../../prompts/context.md").to_owned(),
        }
    }
}

impl Prompts {
    /// The system prompt of a profile: the base text, the profile's own, what its tools say
    /// is there (`context`, see [`tools_context`]; no section when they say nothing), the
    /// risk guidance; for the JSON protocol the tool definitions and the calling convention
    /// too.
    pub fn system_prompt(
        &self,
        profile: &Profile,
        protocol: Protocol,
        tools: &[ToolDefinition],
        context: &[String],
    ) -> String {
        let mut parts = vec![
            self.base.trim_end().to_owned(),
            profile.prompt().trim_end().to_owned(),
        ];
        if !context.is_empty() {
            parts.push(
                self.context
                    .trim_end()
                    .replace("{{context}}", context.join("\n\n").trim_end()),
            );
        }
        parts.push(self.risk.trim_end().to_owned());
        if protocol == Protocol::Json {
            parts.push(
                self.json_protocol
                    .trim_end()
                    .replace("{{tools}}", &render_tools(tools)),
            );
        }
        parts.join("\n\n") + "\n"
    }
}

/// What the tools `profile` offers say of what they work on ([`Tool::prompt_context`]), in
/// the tools' order, each text once (the command and file tools share a workspace).
///
/// One tool's reading may make what another lists: the SQL tool's first reading creates
/// the demo database in the workspace, and the command tool, asked before it, would list
/// the workspace without it. So the tools are asked once for what their readings do, and
/// again for what they say; the second asking costs little, since what is slow to read is
/// kept (the schema) and the rest is one directory listing.
///
/// [`Tool::prompt_context`]: crate::core::tools::Tool::prompt_context
pub async fn tools_context(tools: &ToolSet, profile: &Profile) -> Vec<String> {
    let offered: Vec<_> = tools
        .iter()
        .filter(|tool| profile.offers_tool(tool.name()))
        .collect();
    for tool in &offered {
        tool.prompt_context().await;
    }
    let mut said: Vec<String> = Vec::new();
    for tool in &offered {
        if let Some(text) = tool.prompt_context().await
            && !text.trim().is_empty()
            && !said.contains(&text)
        {
            said.push(text);
        }
    }
    said
}

/// Each tool as Markdown: name, description, its parameters (required ones first, in the
/// schema's order; small models left out a required parameter listed last), and one
/// example call in the JSON protocol's form with the required parameters filled in (with
/// the first of a parameter's `examples` where the schema gives some: the SQL tool's names
/// a real table).
pub fn render_tools(tools: &[ToolDefinition]) -> String {
    let mut out = String::new();
    for tool in tools {
        out.push_str(&format!(
            "### {}\n\n{}\n\nParameters:\n",
            tool.name, tool.description
        ));
        let required: Vec<&str> = tool.parameters["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let empty = serde_json::Map::new();
        let properties = tool.parameters["properties"].as_object().unwrap_or(&empty);
        let mut ordered: Vec<(&String, &Value)> = required
            .iter()
            .filter_map(|name| properties.get_key_value(*name))
            .collect();
        ordered.extend(
            properties
                .iter()
                .filter(|(name, _)| !required.contains(&name.as_str())),
        );
        for (name, spec) in &ordered {
            let kind = spec["type"].as_str().unwrap_or("any");
            let need = if required.contains(&name.as_str()) {
                "required"
            } else {
                "optional"
            };
            let mut line = format!("- `{name}` ({kind}, {need})");
            if let Some(description) = spec["description"].as_str() {
                line.push_str(&format!(": {description}"));
            }
            if let Some(options) = spec["enum"].as_array() {
                let options: Vec<String> = options.iter().map(Value::to_string).collect();
                line.push_str(&format!(" One of: {}.", options.join(", ")));
            }
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&format!(
            "\nExample:\n\n```json\n{}\n```\n\n",
            example_call(tool, &ordered, &required)
        ));
    }
    out.trim_end().to_owned()
}

/// `{"tool": ..., "parameters": {required ones, with a value of their type}, "terminate": false}`.
fn example_call(tool: &ToolDefinition, ordered: &[(&String, &Value)], required: &[&str]) -> String {
    let parameters: Vec<String> = ordered
        .iter()
        .filter(|(name, _)| required.contains(&name.as_str()))
        .map(|(name, spec)| {
            let given = spec["enum"]
                .as_array()
                .or_else(|| spec["examples"].as_array())
                .and_then(|o| o.first());
            let value = match given {
                Some(first) => first.to_string(),
                None => match spec["type"].as_str() {
                    Some("integer" | "number") => "1".to_owned(),
                    Some("boolean") => "false".to_owned(),
                    Some("array") => "[]".to_owned(),
                    Some("object") => "{}".to_owned(),
                    _ => format!("\"<{name}>\""),
                },
            };
            format!("{}: {value}", Value::String((*name).clone()))
        })
        .collect();
    format!(
        "{{\"tool\": {}, \"parameters\": {{{}}}, \"terminate\": false}}",
        Value::String(tool.name.clone()),
        parameters.join(", ")
    )
}
