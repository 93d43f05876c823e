//! How the model's time limits fit together: `llm.request_timeout_secs`,
//! `llm.stream_idle_timeout_secs`, `llm.max_tokens` and the context window, against the
//! speed a slow local server writes at.
//!
//! The arithmetic the defaults follow: a reply of `max_tokens` written at
//! [`SLOW_TOKENS_PER_SEC`] takes `max_tokens / 5` seconds (1024 tokens: 205 s), plus the
//! time the server reads the prompt before its first token. So
//! - without streaming, `request_timeout_secs` bounds the whole request and must cover both:
//!   270 s = 205 s of writing + 65 s for the prompt (`agent.run_timeout_secs`, 300 s, still
//!   holds it);
//! - with streaming, `request_timeout_secs` bounds the wait for the answer to begin (llama.cpp's
//!   server sends its headers with the first token, after reading the prompt), then
//!   `stream_idle_timeout_secs` bounds each silence between two pieces, and the whole answer
//!   may take `request_timeout_secs + max_tokens / 5` ([`stream_limit`]): a stream that keeps
//!   coming at 5 tokens a second or faster is never cut by a timeout of ours.
//!
//! [`LlmSettings::timing_warnings`] says, for `check-config` and at start, where settings
//! cannot fit each other.

use std::time::Duration;

use super::LlmSettings;

/// The slowest writing the defaults are made for, in tokens a second: Qwen2.5-Coder-0.5B
/// on two shared CPU cores wrote 10-13; half of that leaves room for a larger model or a
/// busier machine.
pub const SLOW_TOKENS_PER_SEC: u32 = 5;

/// The fastest writing a non-streamed request may count on before `check-config` warns:
/// local models on a CPU seldom write faster.
pub const FAST_TOKENS_PER_SEC: u32 = 20;

/// A reply may take at most this share of the context window (1/4) before `check-config`
/// warns: the prompt, the tool schemas and the history need the rest.
pub const WINDOW_SHARE_OF_REPLY: u32 = 4;

/// How long `tokens` take at [`SLOW_TOKENS_PER_SEC`].
fn writing_time(tokens: u32) -> Duration {
    Duration::from_secs(u64::from(tokens).div_ceil(u64::from(SLOW_TOKENS_PER_SEC)))
}

/// The longest a streamed answer of up to `reply_tokens` may take in all: the wait for its
/// beginning (`request_timeout`), then its tokens at [`SLOW_TOKENS_PER_SEC`]. A backstop for
/// a server that keeps a stream open without end (keep-alive comments, a cap it ignores);
/// silences are `llm.stream_idle_timeout_secs`' business.
pub fn stream_limit(reply_tokens: u32, request_timeout: Duration) -> Duration {
    request_timeout.saturating_add(writing_time(reply_tokens))
}

impl LlmSettings {
    /// Where the model's limits cannot fit each other, one sentence each naming the keys
    /// and what to set: `window_tokens` is the model's context window (the setting, or what
    /// the server states), `run_timeout_secs` is `agent.run_timeout_secs`.
    pub fn timing_warnings(&self, window_tokens: u32, run_timeout_secs: u64) -> Vec<String> {
        let mut warnings = Vec::new();
        let timeout = self.request_timeout_secs.max(1);
        let needed = u64::from(self.max_tokens).div_ceil(timeout);
        if !self.stream && needed > u64::from(FAST_TOKENS_PER_SEC) {
            let fits = writing_time(self.max_tokens).as_secs() + 60;
            warnings.push(format!(
                "llm.max_tokens = {} in llm.request_timeout_secs = {} needs the model to write {needed} tokens a second without streaming (a local model on a CPU writes 5-{FAST_TOKENS_PER_SEC}), so long answers are cut off: set llm.request_timeout_secs to at least {fits} ({} tokens at {SLOW_TOKENS_PER_SEC} a second, plus 60 s to read the prompt), lower llm.max_tokens, or set llm.stream = true",
                self.max_tokens, self.request_timeout_secs, self.max_tokens
            ));
        }
        if self.stream && self.stream_idle_timeout_secs >= self.request_timeout_secs {
            warnings.push(format!(
                "llm.stream_idle_timeout_secs = {} is not below llm.request_timeout_secs = {}: a stream that stops coming is noticed no sooner than a whole request times out; set llm.stream_idle_timeout_secs below it (the default is 60)",
                self.stream_idle_timeout_secs, self.request_timeout_secs
            ));
        }
        let quarter = window_tokens / WINDOW_SHARE_OF_REPLY;
        if self.max_tokens > quarter {
            warnings.push(format!(
                "llm.max_tokens = {} is more than a quarter of the model's context window ({window_tokens} tokens): each reply's room leaves too little for the prompt, the tools and the history; set llm.max_tokens to at most {quarter}, or give the model a larger window (the server's context size, or llm.context_window_tokens)",
                self.max_tokens
            ));
        }
        if run_timeout_secs < self.request_timeout_secs {
            warnings.push(format!(
                "agent.run_timeout_secs = {run_timeout_secs} is shorter than llm.request_timeout_secs = {}: a run ends before a slow model's request does; set agent.run_timeout_secs to at least {}",
                self.request_timeout_secs, self.request_timeout_secs
            ));
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults fit a model writing at 5 tokens a second, streamed or not.
    #[test]
    fn the_defaults_fit_a_slow_local_model() {
        let llm = LlmSettings::default();
        let writing = u64::from(llm.max_tokens) / u64::from(SLOW_TOKENS_PER_SEC);
        assert!(
            llm.request_timeout_secs >= writing + 60,
            "a whole reply at {SLOW_TOKENS_PER_SEC} tokens/s and a minute of prompt: {llm:?}"
        );
        assert!(llm.stream_idle_timeout_secs < llm.request_timeout_secs);
        let defaults = crate::config::Settings::default();
        assert_eq!(
            llm.timing_warnings(8192, defaults.agent.run_timeout_secs),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_stream_may_take_its_tokens_at_the_slow_speed_after_its_start() {
        assert_eq!(
            stream_limit(1024, Duration::from_secs(270)),
            Duration::from_secs(270 + 205)
        );
        assert_eq!(
            stream_limit(0, Duration::from_secs(1)),
            Duration::from_secs(1)
        );
    }
}
