//! The gate's order of rules, as one pure function.

use super::{Assessment, ChannelMode, Decision, DecisionSource, LlmRisk, RiskDecision, RiskLevel};

/// Operator settings that shape the policy (from `[risk]` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatePolicy {
    /// When on (the default), `risk_level: low` cannot auto-run a call the assessor knows
    /// is destructive.
    pub destructive_floor: bool,
}

impl Default for GatePolicy {
    fn default() -> Self {
        Self {
            destructive_floor: true,
        }
    }
}

/// Decides one call. First match wins:
/// 1. policy: the assessment is `Forbidden` -> deny;
/// 2. strict mode -> confirm;
/// 3. the LLM's `risk_level`: medium/high/invalid -> confirm; low -> auto unless the call is
///    destructive and the floor is on;
/// 4. the code whitelist: a `Safe` assessment -> auto;
/// 5. default -> confirm.
pub fn decide(
    policy: GatePolicy,
    mode: ChannelMode,
    llm: &LlmRisk,
    assessment: &Assessment,
) -> RiskDecision {
    use Decision::{Auto, Confirm, Deny};
    use DecisionSource as S;

    if let Assessment::Forbidden(reason) = assessment {
        return RiskDecision::new(Deny, S::Policy, reason.clone());
    }
    if mode == ChannelMode::Strict {
        return RiskDecision::new(
            Confirm,
            S::StrictMode,
            format!(
                "this channel is in strict mode, every call is confirmed ({})",
                assessment.reason()
            ),
        );
    }
    match llm {
        LlmRisk::Level(RiskLevel::Low) => {
            if let Assessment::Destructive(reason) = assessment {
                if policy.destructive_floor {
                    return RiskDecision::new(
                        Confirm,
                        S::DestructiveFloor,
                        format!("the model rated this low risk, but {reason}"),
                    );
                }
            }
            return RiskDecision::new(
                Auto,
                S::Llm,
                format!("the model rated this low risk ({})", assessment.reason()),
            );
        }
        LlmRisk::Level(level @ (RiskLevel::Medium | RiskLevel::High)) => {
            let word = if *level == RiskLevel::High {
                "high"
            } else {
                "medium"
            };
            return RiskDecision::new(
                Confirm,
                S::Llm,
                format!("the model rated this {word} risk ({})", assessment.reason()),
            );
        }
        LlmRisk::Invalid(value) => {
            return RiskDecision::new(
                Confirm,
                S::Llm,
                format!(
                    "the model gave an unrecognised risk_level {value:?}, so a person decides ({})",
                    assessment.reason()
                ),
            );
        }
        LlmRisk::Absent => {}
    }
    match assessment {
        Assessment::Safe(reason) => RiskDecision::new(Auto, S::Whitelist, reason.clone()),
        Assessment::Destructive(reason) | Assessment::Unknown(reason) => {
            RiskDecision::new(Confirm, S::Default, reason.clone())
        }
        Assessment::Forbidden(reason) => RiskDecision::new(Deny, S::Policy, reason.clone()),
    }
}
