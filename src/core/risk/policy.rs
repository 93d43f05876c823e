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
            if let Assessment::Destructive(reason) = assessment
                && policy.destructive_floor
            {
                return RiskDecision::new(
                    Confirm,
                    S::DestructiveFloor,
                    format!("the model rated this low risk, but {reason}"),
                );
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

#[cfg(test)]
mod tests {
    use super::*;

    use Decision::{Auto, Confirm, Deny};
    use DecisionSource as S;

    /// The assessment kinds, by a letter: Safe, Unknown, Destructive, Forbidden.
    fn assessment(kind: char) -> Assessment {
        match kind {
            'S' => Assessment::Safe("safe".into()),
            'U' => Assessment::Unknown("unknown".into()),
            'D' => Assessment::Destructive("destructive".into()),
            'F' => Assessment::Forbidden("forbidden".into()),
            _ => panic!("no assessment kind {kind}"),
        }
    }

    fn llm(level: &str) -> LlmRisk {
        match level {
            "-" => LlmRisk::Absent,
            other => LlmRisk::from_argument(Some(&serde_json::Value::from(other))),
        }
    }

    /// mode x risk_level x assessment -> decision and source, with the floor on.
    #[rustfmt::skip]
    const TABLE: &[(ChannelMode, &str, char, Decision, DecisionSource)] = &[
        // smart, no risk_level: the code decides.
        (ChannelMode::Smart, "-", 'S', Auto, S::Whitelist),
        (ChannelMode::Smart, "-", 'U', Confirm, S::Default),
        (ChannelMode::Smart, "-", 'D', Confirm, S::Default),
        (ChannelMode::Smart, "-", 'F', Deny, S::Policy),
        // smart, low: trusted unless destructive; never beats policy.
        (ChannelMode::Smart, "low", 'S', Auto, S::Llm),
        (ChannelMode::Smart, "low", 'U', Auto, S::Llm),
        (ChannelMode::Smart, "low", 'D', Confirm, S::DestructiveFloor),
        (ChannelMode::Smart, "low", 'F', Deny, S::Policy),
        // smart, medium / high: the LLM may always raise risk.
        (ChannelMode::Smart, "medium", 'S', Confirm, S::Llm),
        (ChannelMode::Smart, "medium", 'U', Confirm, S::Llm),
        (ChannelMode::Smart, "medium", 'D', Confirm, S::Llm),
        (ChannelMode::Smart, "medium", 'F', Deny, S::Policy),
        (ChannelMode::Smart, "high", 'S', Confirm, S::Llm),
        (ChannelMode::Smart, "high", 'U', Confirm, S::Llm),
        (ChannelMode::Smart, "high", 'D', Confirm, S::Llm),
        (ChannelMode::Smart, "high", 'F', Deny, S::Policy),
        // smart, a value that is not a level: confirm.
        (ChannelMode::Smart, "none", 'S', Confirm, S::Llm),
        (ChannelMode::Smart, "lowish", 'U', Confirm, S::Llm),
        (ChannelMode::Smart, "", 'S', Confirm, S::Llm),
        (ChannelMode::Smart, "safe", 'F', Deny, S::Policy),
        // case and surrounding space do not matter.
        (ChannelMode::Smart, " LOW ", 'U', Auto, S::Llm),
        (ChannelMode::Smart, "High", 'S', Confirm, S::Llm),
        (ChannelMode::Smart, "\tLow\n", 'D', Confirm, S::DestructiveFloor),
        // strict: everything confirms, except what policy denies.
        (ChannelMode::Strict, "-", 'S', Confirm, S::StrictMode),
        (ChannelMode::Strict, "-", 'U', Confirm, S::StrictMode),
        (ChannelMode::Strict, "-", 'D', Confirm, S::StrictMode),
        (ChannelMode::Strict, "-", 'F', Deny, S::Policy),
        (ChannelMode::Strict, "low", 'S', Confirm, S::StrictMode),
        (ChannelMode::Strict, "low", 'U', Confirm, S::StrictMode),
        (ChannelMode::Strict, "low", 'D', Confirm, S::StrictMode),
        (ChannelMode::Strict, "low", 'F', Deny, S::Policy),
        (ChannelMode::Strict, "high", 'S', Confirm, S::StrictMode),
        (ChannelMode::Strict, "bogus", 'S', Confirm, S::StrictMode),
    ];

    #[test]
    fn policy_table_with_the_floor_on() {
        let policy = GatePolicy::default();
        let mut mismatches = Vec::new();
        for &(mode, level, kind, decision, source) in TABLE {
            let got = decide(policy, mode, &llm(level), &assessment(kind));
            if (got.decision, got.source) != (decision, source) {
                mismatches.push(format!(
                    "{mode} / {level:?} / {kind}: expected {decision} ({source}), got {} ({})",
                    got.decision, got.source
                ));
            }
            assert!(!got.reason.is_empty(), "every decision carries a reason");
        }
        assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    }

    #[test]
    fn without_the_floor_low_trusts_even_destructive_calls() {
        let policy = GatePolicy {
            destructive_floor: false,
        };
        let got = decide(policy, ChannelMode::Smart, &llm("low"), &assessment('D'));
        assert_eq!((got.decision, got.source), (Auto, S::Llm));
        // The floor switch changes nothing else.
        for &(mode, level, kind, decision, source) in TABLE {
            if level.trim().eq_ignore_ascii_case("low") && kind == 'D' && mode == ChannelMode::Smart
            {
                continue;
            }
            let got = decide(policy, mode, &llm(level), &assessment(kind));
            assert_eq!(
                (got.decision, got.source),
                (decision, source),
                "{mode} {level:?} {kind}"
            );
        }
    }

    #[test]
    fn reasons_carry_the_assessment() {
        let got = decide(
            GatePolicy::default(),
            ChannelMode::Smart,
            &llm("low"),
            &Assessment::Destructive("rm deletes files".into()),
        );
        assert!(got.reason.contains("rm deletes files"), "{}", got.reason);
        let got = decide(
            GatePolicy::default(),
            ChannelMode::Strict,
            &LlmRisk::Absent,
            &Assessment::Safe("ls only reads".into()),
        );
        assert!(got.reason.contains("strict"), "{}", got.reason);
        assert!(got.reason.contains("ls only reads"), "{}", got.reason);
    }

    #[test]
    fn non_string_risk_levels_are_invalid() {
        for value in [
            serde_json::json!(1),
            serde_json::json!(true),
            serde_json::json!(["low"]),
        ] {
            assert!(matches!(
                LlmRisk::from_argument(Some(&value)),
                LlmRisk::Invalid(_)
            ));
        }
        assert_eq!(LlmRisk::from_argument(None), LlmRisk::Absent);
        assert_eq!(
            LlmRisk::from_argument(Some(&serde_json::Value::Null)),
            LlmRisk::Absent
        );
    }

    #[test]
    fn the_policy_is_deterministic() {
        for &(mode, level, kind, ..) in TABLE {
            let a = decide(GatePolicy::default(), mode, &llm(level), &assessment(kind));
            let b = decide(GatePolicy::default(), mode, &llm(level), &assessment(kind));
            assert_eq!(a, b);
        }
    }
}
