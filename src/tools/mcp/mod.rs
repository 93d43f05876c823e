//! The tools of MCP servers (`[[mcp.servers]]`), each offered to the model as
//! `mcp__<server>__<tool>` and put through the same gate as the built-in tools.
//!
//! The hub (`crate::mcp`) starts the servers, lists their tools and calls them; this folder
//! makes each listed tool a [`Tool`]: its assessor (the gate's code fallback for a tool
//! riskgate knows nothing about), how its calls are shown to the person who approves, what
//! *Allow similar* covers, and its results framed like every tool's. [`follow`] keeps the
//! agent's tool set equal to what the servers offer as they come, go and change their lists.
//!
//! The assessor, in the gate's order (the gate applies policy, strict mode and the model's
//! `risk_level` around it):
//! - the operator's `deny`: never offered (the hub drops it), and `Forbidden` should a call
//!   name it all the same;
//! - the operator's `auto`: `Safe` (runs without a click unless the model rates it medium
//!   or high); the operator's `confirm`: `Destructive`, so the model's `low` never runs it;
//! - a server the operator trusts (`trust_annotations`): `readOnlyHint: true` is `Safe`;
//!   `destructiveHint: false` on a tool that writes is `Unknown` (the model's `low` may run
//!   it); otherwise `Destructive` (MCP takes an unset `destructiveHint` as true);
//! - any other tool's effect is unknown to the code: `Destructive`, so the model's `low`
//!   alone never runs it, as with SQL the parser cannot read. Its server's annotations are
//!   shown to the person as the server's claims; they decide nothing.

mod show;
mod similar;

use std::sync::{Arc, Weak};

use serde_json::{Map, Value};

use crate::core::risk::Assessment;
use crate::core::rules::Similarity;
use crate::core::tools::{
    Approval, AssessContext, BoxFuture, CallBrief, RiskAssessor, Tool, ToolError, ToolOutput,
    ToolRegistry, ToolSet, ToolSource, format_bytes,
};
use crate::mcp::{McpError, McpHub, McpOutput, McpTool, ToolPolicy};

/// What every offered name starts with: the set's MCP tools are told apart by it.
const PREFIX: &str = "mcp__";

/// Characters of a server's tool description offered to the model: it is the server's text,
/// and every request carries it.
const MAX_DESCRIPTION_CHARS: usize = 1_024;

/// One tool of one MCP server, as the agent sees it.
pub struct McpToolAdapter {
    /// Held weakly: the front end owns the hub, and the servers stop when it lets go,
    /// whoever still holds a tool.
    hub: Weak<McpHub>,
    tool: McpTool,
    description: String,
    /// Characters of a result the chat shows before the whole goes to an attachment.
    chat_budget: usize,
}

impl McpToolAdapter {
    pub fn new(hub: Weak<McpHub>, tool: McpTool, chat_budget: usize) -> Self {
        let description = describe(&tool);
        Self {
            hub,
            tool,
            description,
            chat_budget,
        }
    }

    /// The server's configured name.
    pub fn server(&self) -> &str {
        &self.tool.server
    }

    /// The tool's own name on its server.
    pub fn tool_name(&self) -> &str {
        &self.tool.name
    }
}

/// The description the model reads: the server's, cut, with where the tool comes from.
fn describe(tool: &McpTool) -> String {
    let own = tool.description.trim();
    let own = crate::core::tools::shorten(own, MAX_DESCRIPTION_CHARS);
    let title = tool
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty() && !own.starts_with(t.trim()));
    let mut text = String::new();
    if let Some(title) = title {
        text.push_str(title.trim());
        text.push_str(": ");
    }
    text.push_str(if own.is_empty() {
        "(the server gives no description)"
    } else {
        &own
    });
    text.push_str(&format!(
        " [tool `{}` of MCP server `{}`]",
        tool.name, tool.server
    ));
    text
}

impl RiskAssessor for McpToolAdapter {
    fn assess(&self, _arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        judge(&self.tool)
    }
}

/// The code's judgement of any call of `tool` (see the module's documentation).
pub(crate) fn judge(tool: &McpTool) -> Assessment {
    let named = format!("`{}` of MCP server `{}`", tool.name, tool.server);
    match tool.policy {
        Some(ToolPolicy::Deny) => {
            return Assessment::Forbidden(format!(
                "the operator denied {named} (mcp.servers.tools)"
            ));
        }
        Some(ToolPolicy::Auto) => {
            return Assessment::Safe(format!(
                "the operator lets {named} run without a click (mcp.servers.tools = \"auto\")"
            ));
        }
        Some(ToolPolicy::Confirm) => {
            return Assessment::Destructive(format!(
                "the operator has a person confirm every call of {named} (mcp.servers.tools = \"confirm\")"
            ));
        }
        None => {}
    }
    let Some(hints) = tool.trusted_hints() else {
        return Assessment::Destructive(format!(
            "what {named} does is unknown to riskgate: the operator does not trust this server's annotations (trust_annotations) and set no policy for the tool"
        ));
    };
    if hints.read_only == Some(true) {
        return Assessment::Safe(format!(
            "the trusted server marks {named} read-only (readOnlyHint)"
        ));
    }
    if hints.destructive == Some(false) {
        return Assessment::Unknown(format!(
            "the trusted server says {named} changes things but destroys nothing (destructiveHint: false)"
        ));
    }
    Assessment::Destructive(format!(
        "the trusted server marks {named} as one that may destroy or overwrite (destructiveHint{})",
        if hints.destructive.is_none() {
            " unset, which MCP takes as true"
        } else {
            ""
        }
    ))
}

impl Tool for McpToolAdapter {
    /// The offered name, `mcp__<server>__<tool>` (the server's own name for the tool is
    /// [`McpToolAdapter::tool_name`]).
    #[allow(clippy::misnamed_getters)]
    fn name(&self) -> &str {
        &self.tool.offered_name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        Value::Object(self.tool.input_schema.as_ref().clone())
    }

    fn execute<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        _approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let Some(hub) = self.hub.upgrade() else {
                return Err(ToolError::Failed(
                    "the MCP servers have been stopped: the bot is shutting down".to_owned(),
                ));
            };
            let started = std::time::Instant::now();
            let result = hub
                .call_tool(&self.tool.server, &self.tool.name, arguments.clone())
                .await;
            tracing::info!(
                server = %self.tool.server,
                tool = %self.tool.name,
                ok = result.is_ok(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "MCP call"
            );
            result
                .map(|output| self.output(&output))
                .map_err(tool_error)
        })
    }

    fn target(&self, _arguments: &Map<String, Value>) -> Option<String> {
        Some(show::target(&self.tool))
    }

    fn similarity(&self, arguments: &Map<String, Value>) -> Option<Similarity> {
        similar::similarity(&self.tool, judge(&self.tool), arguments)
    }

    fn whole_call(&self, arguments: &Map<String, Value>) -> String {
        show::whole_call(&self.tool, arguments)
    }

    fn brief_call(&self, arguments: &Map<String, Value>) -> CallBrief {
        show::brief_call(arguments)
    }

    fn call_line(&self, arguments: &Map<String, Value>) -> String {
        show::call_line(&self.tool, arguments)
    }
}

impl McpToolAdapter {
    /// A result as every tool gives one: a summary line, the text the model reads (framed
    /// as data by the agent), the chat's view, and the whole text attached when the chat
    /// shows less.
    fn output(&self, output: &McpOutput) -> ToolOutput {
        let text = output.text();
        let mut summary = format!(
            "{} of MCP server {}: {}",
            self.tool.name,
            self.tool.server,
            format_bytes(text.len() as u64)
        );
        if let Some(cut) = &output.cut {
            summary.push_str(&format!(
                ", cut at {} (mcp.result_max_bytes)",
                format_bytes(cut.kept_bytes)
            ));
        }
        let filename = format!("{}-{}.txt", self.tool.server, self.tool.name);
        crate::tools::render::plain_output(summary, text, self.chat_budget, &filename)
    }
}

/// A hub error as the model and the chat read it: each names the server, the tool and
/// (for a timeout) the setting.
fn tool_error(error: McpError) -> ToolError {
    match error {
        McpError::Denied { .. } => ToolError::Refused(error.to_string()),
        other => ToolError::Failed(other.to_string()),
    }
}

/// Whether `name` is an MCP tool's offered name.
fn is_mcp(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// Makes the MCP tools of `set` exactly those `tools` offers (a tool whose name the set
/// refuses is left out with a warning).
pub fn replace_in(
    set: &mut ToolSet,
    hub: &Weak<McpHub>,
    tools: &crate::mcp::ToolSet,
    chat_budget: usize,
) {
    let gone: Vec<String> = set
        .names()
        .filter(|name| is_mcp(name))
        .map(str::to_owned)
        .collect();
    for name in gone {
        set.remove(&name);
    }
    for tool in tools.tools() {
        let adapter = McpToolAdapter::new(hub.clone(), tool.clone(), chat_budget);
        if let Err(problem) = set.try_register(Arc::new(adapter), true) {
            tracing::warn!(server = %tool.server, tool = %tool.name, %problem, "an MCP tool is not offered");
        }
    }
}

/// Keeps the registry's MCP tools equal to what the hub's servers offer, from now until the
/// hub stops: each change of a server's list (it started, died, came back, or sent
/// `notifications/tools/list_changed`) swaps the registry's set whole as the hub makes the
/// new list, and a run about to start waits for a list a server said changed
/// ([`ToolRegistry::settled`]). Runs already going keep the set they started with.
pub fn follow(hub: &Arc<McpHub>, registry: &ToolRegistry, chat_budget: usize) {
    let weak = Arc::downgrade(hub);
    let sink = registry.clone();
    hub.on_tools(move |tools| {
        sink.update(|set| replace_in(set, &weak, tools, chat_budget));
        tracing::info!(
            tools = tools.len(),
            "the MCP servers' tools changed; runs from now on are offered the new set"
        );
    });
    let source: Weak<dyn ToolSource> = Arc::downgrade(hub) as Weak<dyn ToolSource>;
    registry.add_source(source);
}

impl ToolSource for McpHub {
    fn settled(&self) -> BoxFuture<'_, ()> {
        Box::pin(McpHub::settled(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::risk::{ChannelMode, Decision, DecisionSource, GatePolicy, LlmRisk, decide};
    use crate::mcp::ToolHints;

    pub(crate) fn tool(trust: bool, hints: ToolHints, policy: Option<ToolPolicy>) -> McpTool {
        McpTool {
            server: "kb".to_owned(),
            name: "write_note".to_owned(),
            offered_name: "mcp__kb__write_note".to_owned(),
            title: None,
            description: "Writes a note.".to_owned(),
            input_schema: Arc::new(Map::new()),
            hints,
            trust_annotations: trust,
            policy,
        }
    }

    fn hints(read_only: Option<bool>, destructive: Option<bool>) -> ToolHints {
        ToolHints {
            read_only,
            destructive,
            ..ToolHints::default()
        }
    }

    /// The gate's whole order for MCP tools: (trusted, readOnly, destructive, policy,
    /// risk_level) -> decision and who decided.
    #[test]
    fn the_gate_decides_mcp_calls_in_the_documented_order() {
        use Decision::{Auto, Confirm, Deny};
        use DecisionSource as S;
        let none = hints(None, None);
        let read_only = hints(Some(true), None);
        let destructive = hints(Some(false), Some(true));
        let additive = hints(Some(false), Some(false));
        #[rustfmt::skip]
        type Row = (bool, ToolHints, Option<ToolPolicy>, &'static str, Decision, DecisionSource);
        let table: &[Row] = &[
            // The operator's policy first.
            (
                true,
                read_only,
                Some(ToolPolicy::Deny),
                "low",
                Deny,
                S::Policy,
            ),
            (false, none, Some(ToolPolicy::Auto), "-", Auto, S::Whitelist),
            (
                false,
                none,
                Some(ToolPolicy::Auto),
                "medium",
                Confirm,
                S::Llm,
            ),
            (
                true,
                read_only,
                Some(ToolPolicy::Confirm),
                "low",
                Confirm,
                S::DestructiveFloor,
            ),
            // A trusted server's annotations are the code's fallback.
            (true, read_only, None, "-", Auto, S::Whitelist),
            (true, read_only, None, "high", Confirm, S::Llm),
            (true, additive, None, "-", Confirm, S::Default),
            (true, additive, None, "low", Auto, S::Llm),
            (true, destructive, None, "low", Confirm, S::DestructiveFloor),
            (true, none, None, "low", Confirm, S::DestructiveFloor),
            // An untrusted server's claims decide nothing: the model's low never runs it.
            (false, read_only, None, "-", Confirm, S::Default),
            (false, read_only, None, "low", Confirm, S::DestructiveFloor),
            (false, additive, None, "low", Confirm, S::DestructiveFloor),
        ];
        for (trust, hints, policy, level, decision, source) in table {
            let assessment = judge(&tool(*trust, *hints, *policy));
            let llm = match *level {
                "-" => LlmRisk::Absent,
                other => LlmRisk::from_argument(Some(&Value::from(other))),
            };
            let got = decide(GatePolicy::default(), ChannelMode::Smart, &llm, &assessment);
            assert_eq!(
                (got.decision, got.source),
                (*decision, *source),
                "trust {trust}, {hints:?}, {policy:?}, {level}: {}",
                got.reason
            );
            let strict = decide(
                GatePolicy::default(),
                ChannelMode::Strict,
                &llm,
                &assessment,
            );
            assert_ne!(strict.decision, Auto, "strict mode confirms everything");
        }
    }

    #[test]
    fn the_description_says_where_the_tool_comes_from_and_is_bounded() {
        let mut t = tool(false, hints(None, None), None);
        t.description = "x".repeat(10_000);
        let text = describe(&t);
        assert!(
            text.ends_with("[tool `write_note` of MCP server `kb`]"),
            "{text}"
        );
        assert!(
            text.chars().count() < MAX_DESCRIPTION_CHARS + 200,
            "{}",
            text.len()
        );
    }
}
