//! What each channel's requests have cost since the process started, in the tokens the
//! model server counted (its `usage`): the loop records each reply's [`Usage`] here, and
//! `/status` reads the channel's line. Kept in memory only: a restart starts from zero, and
//! `/status` says "since the bot started".

use std::collections::HashMap;
use std::sync::Mutex;

use crate::core::message::Usage;

/// A channel's tokens since the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChannelUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Requests whose reply said what they cost.
    pub requests: u64,
    /// The prompt tokens of the channel's last such request: how full the model's context
    /// window was then.
    pub last_prompt_tokens: Option<u64>,
}

/// Every channel's [`ChannelUsage`]. One entry of four numbers per channel the bot has
/// answered in, so it stays small for as many channels as a bot serves.
#[derive(Debug, Default)]
pub struct UsageLedger {
    channels: Mutex<HashMap<String, ChannelUsage>>,
}

impl UsageLedger {
    /// Adds one reply's cost to `channel`.
    pub fn record(&self, channel: &str, usage: Usage) {
        // A poisoned lock still holds good numbers: a panic elsewhere cannot undo an add.
        let mut channels = self
            .channels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = channels.entry(channel.to_owned()).or_default();
        entry.prompt_tokens = entry.prompt_tokens.saturating_add(usage.prompt_tokens);
        entry.completion_tokens = entry
            .completion_tokens
            .saturating_add(usage.completion_tokens);
        entry.requests = entry.requests.saturating_add(1);
        entry.last_prompt_tokens = Some(usage.prompt_tokens);
    }

    /// What `channel` has used so far; zeros for a channel that has not.
    pub fn of(&self, channel: &str) -> ChannelUsage {
        self.channels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(channel)
            .copied()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_channel_adds_up_its_own_and_keeps_its_last_prompt() {
        let ledger = UsageLedger::default();
        let cost = |prompt_tokens, completion_tokens| Usage {
            prompt_tokens,
            completion_tokens,
        };
        ledger.record("a", cost(1000, 20));
        ledger.record("b", cost(7, 1));
        ledger.record("a", cost(1300, 5));
        assert_eq!(
            ledger.of("a"),
            ChannelUsage {
                prompt_tokens: 2300,
                completion_tokens: 25,
                requests: 2,
                last_prompt_tokens: Some(1300),
            }
        );
        assert_eq!(ledger.of("b").last_prompt_tokens, Some(7));
        assert_eq!(ledger.of("never"), ChannelUsage::default());
        ledger.record("a", cost(u64::MAX, 0));
        assert_eq!(ledger.of("a").prompt_tokens, u64::MAX, "saturates");
    }
}
