//! Tools as the core sees them: the [`Tool`] trait, which owns everything about one tool
//! (its name, description and parameters, its assessor, its executor, how its calls are
//! shown, what makes two calls alike), the [`ToolSet`] and [`ToolRegistry`] that hold the
//! tools by name, and the [`RiskGate`] that puts a [`ToolCall`] through its tool's assessor
//! and the policy.
//!
//! The built-in tools live in `crate::tools`, one folder each. Nothing here, nor anywhere
//! outside a tool's folder, knows a tool by its name: adding a tool is its folder and the
//! line that registers it.

mod output;
mod set;
pub mod view;

pub use output::{
    Approval, Attachment, BoxFuture, ERROR_SUMMARY_CHARS, ToolError, ToolOutput, UNTRUSTED_CLOSE,
    UNTRUSTED_OPEN, error_chain, format_bytes, format_duration, shorten,
};
pub use set::{MAX_TOOL_NAME, ToolRegistry, ToolSet, ToolSource, check_tool_name};
pub use view::{BriefPart, CallBrief};

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::core::risk::{
    Assessment, ChannelMode, Decision, DecisionSource, GatePolicy, LlmRisk, RiskDecision, decide,
};

/// The name of the optional parameter every tool schema carries for the LLM's own risk rating.
pub const RISK_LEVEL_PARAM: &str = "risk_level";

/// The description of `risk_level` the LLM sees in every schema.
pub const RISK_LEVEL_DESCRIPTION: &str = "low = runs automatically; medium/high = a person must confirm; leave it out and the system decides conservatively";

/// The SQL dialect of a target database, which decides how `execute_sql` parses a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SqlDialect {
    Postgres,
    Mysql,
    Sqlite,
}

impl SqlDialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Postgres => "postgres",
            Self::Mysql => "mysql",
            Self::Sqlite => "sqlite",
        }
    }
}

impl fmt::Display for SqlDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SqlDialect {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => Ok(Self::Postgres),
            "mysql" | "mariadb" => Ok(Self::Mysql),
            "sqlite" => Ok(Self::Sqlite),
            _ => Err(format!(
                "unknown SQL dialect {s:?} (expected postgres, mysql or sqlite)"
            )),
        }
    }
}

/// Per-call facts an assessor may need beyond the arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AssessContext {
    /// Overrides the target database's dialect for `execute_sql` (used by `riskgate assess`).
    pub dialect: Option<SqlDialect>,
}

/// Judges one call of one tool. Implementations parse their input; they never prefix-match.
pub trait RiskAssessor {
    /// `arguments` no longer contains `risk_level`.
    fn assess(&self, arguments: &Map<String, Value>, ctx: &AssessContext) -> Assessment;

    /// [`RiskAssessor::assess`], and what the reading leaves for running these exact
    /// arguments ([`Tool::execute_read`]): the command tool's plan, built from the syntax
    /// tree its verdict came from. By default nothing.
    fn assess_reading(
        &self,
        arguments: &Map<String, Value>,
        ctx: &AssessContext,
    ) -> (Assessment, Option<Reading>) {
        (self.assess(arguments, ctx), None)
    }
}

/// What a tool's assessor left from reading a call, for running that call (opaque to the
/// core, which only carries it from the gate to the executor with the arguments it was
/// read from). Equal arguments give equal readings, so two readings compare equal.
#[derive(Clone)]
pub struct Reading(Arc<dyn std::any::Any + Send + Sync>);

impl Reading {
    pub fn new<T: std::any::Any + Send + Sync>(value: T) -> Self {
        Self(Arc::new(value))
    }

    /// The reading as the tool that made it knows it; `None` for another type.
    pub fn get<T: std::any::Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl fmt::Debug for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reading(..)")
    }
}

impl PartialEq for Reading {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// A tool the agent can call: everything about it, in one place. A tool implements the
/// first four (and [`RiskAssessor::assess`]); every other part has a default that fits a
/// tool with nothing more to say.
///
/// - what the model is told: [`Tool::name`], [`Tool::description`], [`Tool::parameters`];
/// - the gate's half: its [`RiskAssessor`] (safe, unknown, destructive or forbidden, and
///   why), [`Tool::uncontained`], [`Tool::containment`];
/// - running a call: [`Tool::execute`] (and [`Tool::execute_read`]), [`Tool::preflight`];
///   what comes back, [`ToolOutput`], carries the tool's own view of its result;
/// - showing a call to people: [`Tool::whole_call`] (what a person confirms),
///   [`Tool::brief_call`] (a call that ran or was refused, in a chat), [`Tool::call_line`]
///   (a terminal's log), [`Tool::target`] (where it runs); front ends escape every hidden
///   character of whatever these return;
/// - channel rules: [`Tool::similarity`] ("allow similar");
/// - what the model is told of what is there: [`Tool::prompt_context`].
///
/// Its settings are read where it is built, in its folder.
pub trait Tool: RiskAssessor + Send + Sync {
    /// The name the LLM calls it by: ASCII letters, digits, `_` and `-`, at most
    /// [`MAX_TOOL_NAME`] ([`check_tool_name`]).
    fn name(&self) -> &str;
    /// What it does, for the LLM.
    fn description(&self) -> &str;
    /// The JSON schema of its own parameters (an `object` schema), without `risk_level`: the
    /// registry adds that to every schema.
    fn parameters(&self) -> Value;
    /// Runs a call the gate let through. `arguments` no longer contain `risk_level`;
    /// `approval` says whether a person confirmed it, which picks the executor's wall.
    fn execute<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// [`Tool::execute`] with what the gate's reading of these exact `arguments` left
    /// ([`RiskAssessor::assess_reading`]), when the run still holds it (not after a
    /// restart): the command tool then runs the plan that was judged instead of reading the
    /// line again. By default the reading is not needed.
    fn execute_read<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
        reading: Option<&'a Reading>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let _ = reading;
        self.execute(arguments, approval)
    }

    /// Why a call of this tool cannot run contained here, if it cannot (for the command
    /// tool: the kernel lacks the sandbox). The gate then lets none of its calls run
    /// without a click.
    fn uncontained(&self) -> Option<&str> {
        None
    }

    /// How a call the gate decided would run, where the tool has walls to name (the command
    /// tool's sandbox: `read-only` for an auto line); shown by `riskgate assess`.
    fn containment(&self, _decision: Decision) -> Option<&'static str> {
        None
    }

    /// Where a call runs, when its arguments do not say it all (the SQL tool: the database,
    /// named or the default one, and its engine). Shown to the person who approves.
    fn target(&self, _arguments: &Map<String, Value>) -> Option<String> {
        None
    }

    /// The narrowest description of calls like this one, for a channel rule ("allow
    /// similar for a while"); `None` when no rule may cover it.
    fn similarity(
        &self,
        _arguments: &Map<String, Value>,
    ) -> Option<crate::core::rules::Similarity> {
        None
    }

    /// What the model should know, before its first call, of what the tool works on (the
    /// SQL tool: each database's tables and columns; the command and file tools: the
    /// workspace's top level): lines for the system prompt of the profiles that offer the
    /// tool, or `None` (the default). Asked at every run's start, so a tool that reads
    /// something slow keeps what it read; it never fails: what could not be read is said in
    /// a line. Tools that say the same text are told once.
    fn prompt_context(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async { None })
    }

    /// What the tool checks as riskgate starts, for the operator (the SQL tool: the account
    /// each database's statements run without a click use). Logged by the bot and the
    /// console, printed by `check-config`.
    fn preflight(&self) -> BoxFuture<'_, Vec<Preflight>> {
        Box::pin(async { Vec::new() })
    }

    /// Everything a call runs, as plain text, nothing cut: what a person reads before they
    /// confirm it (the approval, its `call.txt`, the console's prompt, `/pending`). By
    /// default the arguments as indented JSON, whole.
    fn whole_call(&self, arguments: &Map<String, Value>) -> String {
        view::whole_json(arguments)
    }

    /// What a chat shows of a call that ran without a click or that the gate refused: the
    /// call in short, long values cut. By default the arguments as JSON, whole.
    fn brief_call(&self, arguments: &Map<String, Value>) -> CallBrief {
        view::json_brief(arguments)
    }

    /// The call on one line, for a terminal's log of the run. By default the arguments as
    /// JSON on one line.
    fn call_line(&self, arguments: &Map<String, Value>) -> String {
        view::one_line_json(arguments)
    }
}

/// One finding of [`Tool::preflight`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preflight {
    /// Whether the operator should act on it.
    pub warning: bool,
    pub message: String,
}

impl Preflight {
    pub fn fine(message: String) -> Self {
        Self {
            warning: false,
            message,
        }
    }

    pub fn warning(message: String) -> Self {
        Self {
            warning: true,
            message,
        }
    }
}

/// A tool call as the LLM made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool: String,
    pub arguments: Map<String, Value>,
}

/// The definition of a tool as it is sent to the LLM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Adds the optional `risk_level` property to an object schema.
pub(crate) fn with_risk_level(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        let properties = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(properties) = properties.as_object_mut() {
            properties.insert(
                RISK_LEVEL_PARAM.to_owned(),
                json!({
                    "type": "string",
                    "enum": ["low", "medium", "high"],
                    "description": RISK_LEVEL_DESCRIPTION,
                }),
            );
        }
    }
    schema
}

/// A call after the gate: the decision, and the arguments the executor would get
/// (`risk_level` taken out).
#[derive(Debug, Clone, PartialEq)]
pub struct GatedCall {
    pub tool: String,
    pub arguments: Map<String, Value>,
    pub llm_risk: LlmRisk,
    pub assessment: Assessment,
    pub decision: RiskDecision,
    /// What the assessor's reading of `arguments` left for running them.
    pub reading: Option<Reading>,
}

/// The tools plus the operator's policy: everything needed to decide a call.
#[derive(Debug, Clone)]
pub struct RiskGate {
    registry: ToolRegistry,
    policy: GatePolicy,
}

impl RiskGate {
    pub fn new(registry: impl Into<ToolRegistry>, policy: GatePolicy) -> Self {
        Self {
            registry: registry.into(),
            policy,
        }
    }

    /// The tools, as they come and go.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The tools as they stand now (see [`ToolRegistry::snapshot`]).
    pub fn tools(&self) -> Arc<ToolSet> {
        self.registry.snapshot()
    }

    /// [`RiskGate::check_in`] the tools as they stand now.
    pub fn check(&self, call: &ToolCall, mode: ChannelMode, ctx: &AssessContext) -> GatedCall {
        self.check_in(&self.registry.snapshot(), call, mode, ctx)
    }

    /// Takes `risk_level` out of the call, assesses the rest with its tool in `tools` and
    /// decides. A tool `tools` does not have is denied by policy.
    pub fn check_in(
        &self,
        tools: &ToolSet,
        call: &ToolCall,
        mode: ChannelMode,
        ctx: &AssessContext,
    ) -> GatedCall {
        let mut arguments = call.arguments.clone();
        let llm_risk = LlmRisk::from_argument(arguments.remove(RISK_LEVEL_PARAM).as_ref());
        let tool = tools.get(&call.tool);
        let (assessment, reading) = match tool {
            Some(tool) => tool.assess_reading(&arguments, ctx),
            None if tools.is_disabled(&call.tool) => (
                Assessment::Forbidden(format!(
                    "the tool {} is disabled by the operator",
                    call.tool
                )),
                None,
            ),
            None => (
                Assessment::Forbidden(format!(
                    "there is no tool named {:?} (known tools: {})",
                    call.tool,
                    tools.names().collect::<Vec<_>>().join(", ")
                )),
                None,
            ),
        };
        let mut decision = decide(self.policy, mode, &llm_risk, &assessment);
        if decision.decision == Decision::Auto
            && let Some(why) = tool.and_then(|t| t.uncontained())
        {
            decision = RiskDecision::new(
                Decision::Confirm,
                DecisionSource::Policy,
                format!(
                    "{} ({}); but nothing of {} runs without a person's confirmation here: {why}",
                    decision.reason, decision.source, call.tool
                ),
            );
        }
        GatedCall {
            tool: call.tool.clone(),
            arguments,
            llm_risk,
            assessment,
            decision,
            reading,
        }
    }
}

/// JSON with object keys sorted at every level: the same arguments always give the same
/// text, whatever order the model wrote them in. Used to recognise a repeated call and to
/// hash an approval's exact arguments.
pub fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for key in keys {
                    out.insert(key.clone(), sorted(&map[key]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Checks arguments against the parts of a tool's JSON schema riskgate uses: required
/// properties, unknown properties when `additionalProperties` is false, property types and
/// enums. `Err` says what is wrong, for the model to fix.
pub fn check_arguments(schema: &Value, arguments: &Map<String, Value>) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !arguments.contains_key(name) {
                return Err(format!("the required parameter `{name}` is missing"));
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in arguments {
        let Some(spec) = properties.and_then(|p| p.get(name)) else {
            if closed {
                let known: Vec<&str> = properties
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                return Err(format!(
                    "there is no parameter `{name}` (parameters: {})",
                    known.join(", ")
                ));
            }
            continue;
        };
        let fits = match spec.get("type").and_then(Value::as_str) {
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("number") => value.is_number(),
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            _ => true,
        };
        if !fits {
            return Err(format!(
                "`{name}` must be of type {}, not {value}",
                spec["type"].as_str().unwrap_or("?")
            ));
        }
        if let Some(options) = spec.get("enum").and_then(Value::as_array)
            && !options.contains(value)
            && name != RISK_LEVEL_PARAM
        {
            let options: Vec<String> = options.iter().map(Value::to_string).collect();
            return Err(format!(
                "`{name}` must be one of {}, not {value}",
                options.join(", ")
            ));
        }
    }
    Ok(())
}

/// A tool with nothing of its own but its name, for tests of what surrounds tools.
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::{Map, Value, json};

    use super::{Approval, AssessContext, BoxFuture, RiskAssessor, Tool, ToolError, ToolOutput};
    use crate::core::risk::Assessment;

    /// Every call unknown; running one says so. Its views are the defaults.
    pub(crate) struct Stub {
        name: String,
    }

    impl Stub {
        pub(crate) fn named(name: &str) -> Self {
            Self {
                name: name.to_owned(),
            }
        }
    }

    impl RiskAssessor for Stub {
        fn assess(&self, _arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
            Assessment::Unknown(format!("{} is a stub", self.name))
        }
    }

    impl Tool for Stub {
        fn name(&self) -> &str {
            &self.name
        }
        fn description(&self) -> &str {
            "A stub."
        }
        fn parameters(&self) -> Value {
            json!({"type": "object", "properties": {}})
        }
        fn execute<'a>(
            &'a self,
            _arguments: &'a Map<String, Value>,
            _approval: &'a Approval,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            Box::pin(async { Err(ToolError::Failed("a stub runs nothing".into())) })
        }
    }
}
