//! `riskgate assess`: the gate as a filter from JSON lines to JSON lines. Input per line:
//! `{"tool", "arguments", "mode"?, "dialect"?}`; output per line: `{"decision", "source",
//! "reason"}` (plus fields later versions added, such as `sandbox`), or `{"error"}` for a
//! line that cannot be read. Other tools depend on this format: fields may be added, never
//! renamed or removed.

use std::io::{self, BufRead, Write};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::core::risk::{ChannelMode, RiskDecision};
use crate::core::tools::{AssessContext, RiskGate, SqlDialect, ToolCall};

/// One output line for a good input line. Field order is part of the format; fields after
/// the first three are additions that only some lines carry.
#[derive(Debug, Serialize)]
struct DecisionLine<'a> {
    decision: &'a str,
    source: &'a str,
    reason: &'a str,
    /// How an `execute_command` line would run: its sandbox (`read-only` for auto).
    #[serde(skip_serializing_if = "Option::is_none")]
    sandbox: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct ErrorLine<'a> {
    error: &'a str,
}

/// An input line, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct AssessRequest {
    pub call: ToolCall,
    pub mode: Option<ChannelMode>,
    pub dialect: Option<SqlDialect>,
}

/// Reads one input line. Unknown extra keys are ignored.
pub fn parse_line(line: &str) -> Result<AssessRequest, String> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| format!("the line is not valid JSON: {e}"))?;
    let Value::Object(mut object) = value else {
        return Err("the line must be a JSON object with `tool` and `arguments`".to_owned());
    };
    let tool = match object.remove("tool") {
        Some(Value::String(tool)) => tool,
        Some(other) => return Err(format!("`tool` must be a string, not {other}")),
        None => return Err("the line has no `tool`".to_owned()),
    };
    let arguments = match object.remove("arguments") {
        Some(Value::Object(arguments)) => arguments,
        Some(other) => return Err(format!("`arguments` must be a JSON object, not {other}")),
        None => return Err("the line has no `arguments`".to_owned()),
    };
    let mode = optional_str(&object, "mode")?
        .map(|m| m.parse::<ChannelMode>())
        .transpose()?;
    let dialect = optional_str(&object, "dialect")?
        .map(|d| d.parse::<SqlDialect>())
        .transpose()?;
    Ok(AssessRequest {
        call: ToolCall { tool, arguments },
        mode,
        dialect,
    })
}

fn optional_str<'a>(object: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    }
}

/// Decides one input line; `Err` is the text of an `{"error": ...}` line.
pub fn assess_line(gate: &RiskGate, mode: ChannelMode, line: &str) -> Result<RiskDecision, String> {
    assess_with_containment(gate, mode, line).map(|(decision, _)| decision)
}

/// [`assess_line`] and how the call would run, where its tool names its walls.
fn assess_with_containment(
    gate: &RiskGate,
    mode: ChannelMode,
    line: &str,
) -> Result<(RiskDecision, Option<&'static str>), String> {
    let request = parse_line(line)?;
    let ctx = AssessContext {
        dialect: request.dialect,
    };
    let gated = gate.check(&request.call, request.mode.unwrap_or(mode), &ctx);
    let containment = gate
        .registry()
        .get(&request.call.tool)
        .and_then(|tool| tool.containment(gated.decision.decision));
    Ok((gated.decision, containment))
}

/// Renders the output line (without the newline) for one input line.
pub fn output_line(gate: &RiskGate, mode: ChannelMode, line: &str) -> String {
    let rendered = match assess_with_containment(gate, mode, line) {
        Ok((decision, sandbox)) => serde_json::to_string(&DecisionLine {
            decision: decision.decision.as_str(),
            source: decision.source.as_str(),
            reason: &decision.reason,
            sandbox,
        }),
        Err(error) => serde_json::to_string(&ErrorLine { error: &error }),
    };
    // Serializing strings into JSON cannot fail; keep a valid line all the same.
    rendered.unwrap_or_else(|_| {
        r#"{"error":"internal error: could not render the decision"}"#.to_owned()
    })
}

/// Counts of a finished run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AssessStats {
    pub decided: usize,
    pub errors: usize,
}

/// Reads JSON lines from `input` until its end and writes one line per non-blank input line.
/// Each output line is flushed, so a program can drive `assess` one call at a time.
pub fn run(
    gate: &RiskGate,
    mode: ChannelMode,
    mut input: impl BufRead,
    mut output: impl Write,
) -> io::Result<AssessStats> {
    let mut stats = AssessStats::default();
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        if input.read_until(b'\n', &mut buffer)? == 0 {
            break;
        }
        let rendered = match std::str::from_utf8(&buffer) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => output_line(gate, mode, line),
            Err(e) => serde_json::to_string(&ErrorLine {
                error: &format!("the line is not valid UTF-8: {e}"),
            })
            .unwrap_or_default(),
        };
        if rendered.starts_with(r#"{"error""#) {
            stats.errors += 1;
        } else {
            stats.decided += 1;
        }
        output.write_all(rendered.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(stats)
}
