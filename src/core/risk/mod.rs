//! The risk gate: what a tool call's assessment, the channel's mode and the LLM's own
//! `risk_level` add up to.
//!
//! Everything here is pure. Assessors (one per tool, in `crate::tools`) turn a call's
//! arguments into an [`Assessment`]; [`decide`] turns that, the channel's [`ChannelMode`] and
//! the LLM's [`LlmRisk`] into a [`RiskDecision`] in a fixed order: policy deny -> strict
//! mode -> LLM `risk_level` (with the destructive floor) -> code whitelist -> default
//! confirm (`policy.rs`, whose table test lists every combination).

mod policy;

pub use policy::{GatePolicy, decide};

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a tool's assessor knows about one call, before mode and LLM opinion are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assessment {
    /// Clearly safe: read-only and contained. May run without asking.
    Safe(String),
    /// Known to destroy or overwrite something. Never runs without a person, whatever the
    /// LLM says (the destructive floor).
    Destructive(String),
    /// Not known to be safe. Runs only if the LLM vouches for it (`low`) or a person confirms.
    Unknown(String),
    /// Nobody may run this here (outside the workspace, private network, admin rule, ...).
    Forbidden(String),
}

impl Assessment {
    /// The human-readable reason carried by every assessment.
    pub fn reason(&self) -> &str {
        match self {
            Self::Safe(r) | Self::Destructive(r) | Self::Unknown(r) | Self::Forbidden(r) => r,
        }
    }

    /// Combines two assessments of parts of one call: the more severe one wins
    /// (forbidden > destructive > unknown > safe).
    pub fn worst(self, other: Assessment) -> Assessment {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }

    fn severity(&self) -> u8 {
        match self {
            Self::Safe(_) => 0,
            Self::Unknown(_) => 1,
            Self::Destructive(_) => 2,
            Self::Forbidden(_) => 3,
        }
    }
}

/// How a channel treats tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelMode {
    /// Risk-based: safe calls run at once, risky ones wait for a person.
    #[default]
    Smart,
    /// Every call waits for a person.
    Strict,
}

impl ChannelMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Smart => "smart",
            Self::Strict => "strict",
        }
    }
}

impl fmt::Display for ChannelMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ChannelMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "smart" => Ok(Self::Smart),
            "strict" => Ok(Self::Strict),
            _ => Err(format!("unknown mode {s:?} (expected smart or strict)")),
        }
    }
}

/// The three values the `risk_level` parameter may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

/// The LLM's opinion on a call, as found in its `risk_level` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmRisk {
    /// No `risk_level` argument: the code decides.
    Absent,
    /// A recognised level.
    Level(RiskLevel),
    /// Something else (a typo, a number, `"none"`): treated as a request to confirm.
    Invalid(String),
}

impl LlmRisk {
    /// Reads the `risk_level` argument: case-insensitive after trimming; anything that is
    /// not `low`, `medium` or `high` is [`LlmRisk::Invalid`]. A JSON `null` counts as left
    /// out, as servers with strict schemas send null for optional parameters.
    pub fn from_argument(value: Option<&serde_json::Value>) -> Self {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Self::Absent;
        };
        let Some(text) = value.as_str() else {
            return Self::Invalid(value.to_string());
        };
        match text.trim().to_ascii_lowercase().as_str() {
            "low" => Self::Level(RiskLevel::Low),
            "medium" => Self::Level(RiskLevel::Medium),
            "high" => Self::Level(RiskLevel::High),
            _ => Self::Invalid(text.to_owned()),
        }
    }
}

/// What happens to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Runs at once.
    Auto,
    /// Waits for a person's Confirm / Cancel.
    Confirm,
    /// Never runs; the refusal goes back to the LLM.
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Confirm => "confirm",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which rule of the gate produced a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    Policy,
    StrictMode,
    Llm,
    DestructiveFloor,
    Whitelist,
    Default,
    /// A channel rule ("allow similar for a while") let a confirm run.
    ChannelRule,
}

impl DecisionSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::StrictMode => "strict_mode",
            Self::Llm => "llm",
            Self::DestructiveFloor => "destructive_floor",
            Self::Whitelist => "whitelist",
            Self::Default => "default",
            Self::ChannelRule => "channel_rule",
        }
    }
}

impl fmt::Display for DecisionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The gate's answer for one call: the decision, the rule that made it, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskDecision {
    pub decision: Decision,
    pub source: DecisionSource,
    pub reason: String,
}

impl RiskDecision {
    pub fn new(decision: Decision, source: DecisionSource, reason: impl Into<String>) -> Self {
        Self {
            decision,
            source,
            reason: reason.into(),
        }
    }
}
