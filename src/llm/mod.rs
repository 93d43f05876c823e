//! An OpenAI-compatible Chat Completions client. It accepts the real differences between
//! servers people run (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter):
//! `content: null` beside tool calls, arguments as a JSON string or an object, missing call
//! ids, several calls in one reply, the legacy `function_call`, unusual finish reasons.
//! 429 and 5xx are retried with backoff (honouring `Retry-After`); other 4xx fail at once
//! with an error that says what to fix.
//!
//! What it sends is what every common server accepts (checked against llama.cpp's
//! `llama-server`, llama-cpp-python's server and the fakes in `tests/support/fake_llm.rs`):
//! `tool_choice: "auto"` whenever tools are sent, `content: ""` (never `null` nor missing)
//! beside tool calls, and a cap on the reply's length (`llm.max_tokens`). The one known
//! difference between servers, the name of that cap, is `llm.server` ([`ServerKind`]). A
//! request whose future is dropped (the run's time ran out, the run was cancelled) drops
//! its connection, so a server that watches for that stops generating.

mod wire;

pub use wire::ServerKind;

use std::time::Duration;

use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use url::Url;

use crate::core::agent::{ChatReply, ChatRequest};
use crate::core::ports::{ChatModel, ModelError};
use crate::core::tools::BoxFuture;

/// How the client talks to the server.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// E.g. `http://127.0.0.1:11434/v1`; `chat/completions` is appended.
    pub base_url: Url,
    pub api_key: Option<SecretString>,
    pub model: String,
    pub temperature: Option<f32>,
    /// The reply's length cap in tokens; `None` sends none.
    pub max_tokens: Option<u32>,
    /// How this server wants the cap named.
    pub server: ServerKind,
    pub request_timeout: Duration,
    /// Attempts after the first for 429 and 5xx answers.
    pub max_retries: u32,
    /// The first backoff; doubled each retry, at most 30 s.
    pub retry_base_delay: Duration,
}

/// The client.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    endpoint: Url,
    config: LlmConfig,
}

impl OpenAiClient {
    pub fn new(config: LlmConfig) -> Result<Self, ModelError> {
        let mut base = config.base_url.clone();
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let endpoint = base
            .join("chat/completions")
            .map_err(|e| ModelError::Rejected(format!("llm.base_url cannot take a path: {e}")))?;
        let http = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .connect_timeout(Duration::from_secs(10).min(config.request_timeout))
            .no_proxy()
            .user_agent(concat!("riskgate/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                ModelError::Rejected(format!("the HTTP client could not be built: {e}"))
            })?;
        Ok(Self {
            http,
            endpoint,
            config,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    #[tracing::instrument(skip_all, fields(model = %self.config.model, messages = request.messages.len()))]
    async fn complete_with_retries(&self, request: &ChatRequest) -> Result<ChatReply, ModelError> {
        let settings = wire::BodySettings {
            model: &self.config.model,
            temperature: self.config.temperature,
            max_tokens: self.config.max_tokens,
            server: self.config.server,
        };
        let body = serde_json::to_vec(&wire::request_body(settings, request))
            .map_err(|e| ModelError::BadReply(format!("the request could not be encoded: {e}")))?;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut builder = self
                .http
                .post(self.endpoint.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
            if let Some(key) = &self.config.api_key {
                builder = builder.bearer_auth(key.expose_secret());
            }
            let started = std::time::Instant::now();
            let response = builder.send().await;
            let response = match response {
                Ok(response) => response,
                Err(e) if e.is_timeout() => {
                    return Err(ModelError::Timeout(self.config.request_timeout));
                }
                Err(e) => {
                    return Err(ModelError::Unreachable {
                        url: self.endpoint.to_string(),
                        reason: crate::core::tools::error_chain(&e),
                    });
                }
            };
            let status = response.status();
            let retry_after = retry_after(response.headers());
            let text = match response.text().await {
                Ok(text) => text,
                Err(e) if e.is_timeout() => {
                    return Err(ModelError::Timeout(self.config.request_timeout));
                }
                Err(e) => return Err(ModelError::BadReply(crate::core::tools::error_chain(&e))),
            };
            tracing::debug!(%status, elapsed_ms = started.elapsed().as_millis() as u64, "model answered");
            if status.is_success() {
                return wire::parse_reply(&text);
            }
            let message = wire::error_message(&text).unwrap_or_else(|| shorten(&text));
            let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if retryable && attempt <= self.config.max_retries {
                let backoff = self
                    .config
                    .retry_base_delay
                    .saturating_mul(2u32.saturating_pow(attempt - 1));
                let delay = retry_after.unwrap_or(backoff).min(Duration::from_secs(30));
                tracing::warn!(%status, attempt, ?delay, "model server busy or failing; retrying");
                tokio::time::sleep(delay).await;
                continue;
            }
            return Err(classify(status, message, attempt, &self.endpoint));
        }
    }
}

impl ChatModel for OpenAiClient {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(self.complete_with_retries(request))
    }
}

fn classify(status: StatusCode, message: String, attempts: u32, endpoint: &Url) -> ModelError {
    let lower = message.to_ascii_lowercase();
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            ModelError::Unauthorized(format!("{status}: {message}"))
        }
        _ if lacks_tool_support(&lower) => {
            ModelError::NoToolSupport(format!("{status}: {message}"))
        }
        _ if lower.contains("max_tokens") && lower.contains("max_completion_tokens") => {
            ModelError::Rejected(format!(
                "{status}: {message} (set llm.server = \"openai\" to send the cap as max_completion_tokens)"
            ))
        }
        _ if lower.contains("model")
            && (lower.contains("not found")
                || lower.contains("does not exist")
                || lower.contains("unknown")
                || lower.contains("no such")) =>
        {
            ModelError::UnknownModel(format!("{status}: {message}"))
        }
        StatusCode::NOT_FOUND => ModelError::Rejected(format!(
            "{status} at {endpoint}: {message} (check llm.base_url; it usually ends in /v1)"
        )),
        _ if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() => {
            ModelError::Exhausted {
                attempts,
                status: status.as_u16(),
                last: format!("{status}: {message}"),
            }
        }
        _ => ModelError::Rejected(format!("{status}: {message}")),
    }
}

/// Whether an error message says the server or model cannot take tools at all, as
/// Ollama ("... does not support tools"), vLLM ("\"auto\" tool choice requires
/// --enable-auto-tool-choice ...") and llama.cpp's server without `--jinja` ("tools param
/// requires --jinja flag") say it.
fn lacks_tool_support(lower: &str) -> bool {
    let about_tools = lower.contains("tool");
    about_tools
        && (lower.contains("does not support tools")
            || lower.contains("doesn't support tools")
            || lower.contains("enable-auto-tool-choice")
            || lower.contains("--jinja")
            || lower.contains("tools are not supported")
            || lower.contains("tool calling is not supported")
            || lower.contains("tool use is not supported"))
}

/// `Retry-After` in seconds (the HTTP-date form is rare from model servers and ignored).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

fn shorten(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "(empty body)".to_owned();
    }
    crate::core::tools::shorten(text, 300)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classified(status: u16, message: &str) -> ModelError {
        let endpoint = Url::parse("http://127.0.0.1:1/v1/chat/completions").expect("url");
        let status = StatusCode::from_u16(status).expect("status");
        classify(status, message.to_owned(), 1, &endpoint)
    }

    #[test]
    fn servers_without_tool_support_are_named_as_such() {
        for (status, message) in [
            (
                400,
                "registry.ollama.ai/library/gemma2:2b does not support tools",
            ),
            (
                400,
                "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
            ),
            (500, "tools param requires --jinja flag"),
        ] {
            let error = classified(status, message);
            assert!(
                matches!(&error, ModelError::NoToolSupport(m) if m.contains(message)),
                "{message}: {error:?}"
            );
            let said = error.to_string();
            assert!(
                said.contains("llm.protocol") && said.contains("--jinja"),
                "{said}"
            );
        }
        // A 500 that says nothing about tools is the server failing.
        assert!(matches!(
            classified(500, "boom"),
            ModelError::Exhausted { status: 500, .. }
        ));
    }

    #[test]
    fn a_refused_max_tokens_points_at_the_server_kind() {
        let error = classified(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        );
        assert!(
            matches!(&error, ModelError::Rejected(m) if m.contains("llm.server")),
            "{error:?}"
        );
    }
}
