//! An OpenAI-compatible Chat Completions client. It accepts the real differences between
//! servers people run (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter):
//! `content: null` beside tool calls, arguments as a JSON string or an object, missing call
//! ids, several calls in one reply, the legacy `function_call`, unusual finish reasons.
//! 429 and 5xx are retried with jittered exponential backoff (`backon`, at most 30 s apart),
//! or after exactly the wait the server's `Retry-After` asks for, in seconds or as an HTTP
//! date (`httpdate`): never sooner. A server that asks for more than
//! `llm.max_retry_wait_secs` is not asked again; the error says when to try
//! ([`ModelError::RetryLater`]). Each wait is told to the caller
//! ([`ChatModel::complete_telling`]), so the channel sees why nothing happens. Other 4xx
//! fail at once with an error that says what to fix; a server that says the request is
//! longer than the model's context window gives [`ModelError::TooLong`].
//!
//! What it sends is what every common server accepts (checked against llama.cpp's
//! `llama-server`, llama-cpp-python's server and the fakes in `tests/support/fake_llm.rs`):
//! `tool_choice: "auto"` whenever tools are sent, `content: ""` (never `null` nor missing)
//! beside tool calls, and a cap on the reply's length (`llm.max_tokens`). The one known
//! difference between servers, the name of that cap, is `llm.server` ([`ServerKind`]). A
//! request whose future is dropped (the run's time ran out, the run was cancelled) drops
//! its connection, so a server that watches for that stops generating.

mod stream;
mod window;
mod wire;

pub use window::{ContextWindow, DEFAULT_CONTEXT_WINDOW, OLLAMA_DEFAULT_CONTEXT, StatedWindow};
pub use wire::ServerKind;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use backon::{ExponentialBuilder, Retryable};
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use url::Url;

use crate::config::timing::stream_limit;
use crate::core::agent::{ChatReply, ChatRequest};
use crate::core::message::ContextLimits;
use crate::core::ports::{ChatModel, ModelError, ModelRetry, ReplyListener};
use crate::core::tools::BoxFuture;
use wire::Streaming;

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
    /// A whole request without streaming; with streaming, the wait for the answer's first
    /// bytes (see [`crate::config::timing`]).
    pub request_timeout: Duration,
    /// With streaming, the longest silence between two pieces of a begun answer.
    pub stream_idle_timeout: Duration,
    /// Attempts after the first for 429 and 5xx answers.
    pub max_retries: u32,
    /// The first backoff; doubled each retry, plus up to as much again at random so that
    /// clients refused together do not come back together; at most 30 s.
    pub retry_base_delay: Duration,
    /// The longest `Retry-After` the client waits out; a server that asks for more gets no
    /// further attempt ([`ModelError::RetryLater`]).
    pub max_retry_wait: Duration,
    /// The model's context window in tokens (`llm.context_window_tokens`); 0: the
    /// [`DEFAULT_CONTEXT_WINDOW`] until [`OpenAiClient::set_context_window`] says what the
    /// server stated.
    pub context_window_tokens: u32,
    /// Ask for replies as a stream of server-sent events (`llm.stream`), so their text can
    /// be shown as it is written.
    pub stream: bool,
}

/// The client.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    endpoint: Url,
    config: LlmConfig,
    /// The window requests are fitted to; clones share it.
    window: Arc<AtomicU32>,
    /// How replies are asked for ([`Streaming`]): lowered, for the client's life, when the
    /// server refuses a stream or a stream's options; clones share it.
    streaming: Arc<AtomicU8>,
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
        let window = match config.context_window_tokens {
            0 => DEFAULT_CONTEXT_WINDOW,
            given => given,
        };
        let streaming = if config.stream {
            Streaming::WithUsage
        } else {
            Streaming::Off
        };
        Ok(Self {
            http,
            endpoint,
            config,
            window: Arc::new(AtomicU32::new(window)),
            streaming: Arc::new(AtomicU8::new(streaming as u8)),
        })
    }

    /// Fits requests from now on to `window` (what [`ContextWindow::resolve`] found).
    pub fn set_context_window(&self, window: ContextWindow) {
        self.window.store(window.tokens.max(1), Ordering::Relaxed);
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// Asks the server for its models (`GET {llm.base_url}/models`), which OpenAI, Ollama,
    /// llama.cpp's server, vLLM, LM Studio and llama-cpp-python all serve without generating
    /// anything; gives up after `wait`. Nothing it says is logged here: see
    /// [`ServerCheck::judge`].
    pub async fn check_server(&self, wait: Duration) -> ServerCheck {
        let Ok(url) = self.endpoint.join("../models") else {
            return ServerCheck::Unreachable {
                reason: "llm.base_url cannot take a path".to_owned(),
            };
        };
        let mut request = self.http.get(url).timeout(wait);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key.expose_secret());
        }
        let failed = |e: reqwest::Error| ServerCheck::Unreachable {
            reason: if e.is_timeout() {
                format!("no answer within {} s", wait.as_secs_f32())
            } else {
                // Without the URL: it may hold a password.
                crate::core::tools::error_chain(&e.without_url())
            },
        };
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => return failed(e),
        };
        let status = response.status();
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) => return failed(e),
        };
        if !status.is_success() {
            return ServerCheck::Refused {
                status: status.as_u16(),
                message: wire::error_message(&text).unwrap_or_else(|| shorten(&text)),
            };
        }
        ServerCheck::Answered {
            models: wire::model_ids(&text),
        }
    }

    /// How replies are asked for now.
    fn streaming(&self) -> Streaming {
        Streaming::from_u8(self.streaming.load(Ordering::Relaxed))
    }

    /// The server refused `refused` (`why`): replies are asked for the next lower way from
    /// now on, for the client's life. A refusal that names `stream_options` keeps the stream
    /// and drops the options; any other drops the stream.
    fn lower_streaming(&self, refused: Streaming, why: &str) -> Streaming {
        let lower = if refused == Streaming::WithUsage && why.contains("stream_options") {
            Streaming::Plain
        } else {
            Streaming::Off
        };
        self.streaming.fetch_min(lower as u8, Ordering::Relaxed);
        tracing::warn!(refused = ?refused, now = ?lower, reason = %why, "the model server does not take streamed requests this way; asking again, and from now on, without it");
        lower
    }

    #[tracing::instrument(skip_all, fields(model = %self.config.model, messages = request.messages.len()))]
    async fn complete_with_retries(
        &self,
        request: &ChatRequest,
        listener: &dyn ReplyListener,
    ) -> Result<ChatReply, ModelError> {
        let mut streaming = self.streaming();
        loop {
            match self.retried(request, streaming, listener).await {
                Err((AttemptError::NoStream(why), _)) if streaming != Streaming::Off => {
                    streaming = self.lower_streaming(streaming, &why);
                }
                Ok(reply) => return Ok(reply),
                Err((error, attempts)) => return Err(self.final_error(error, attempts)),
            }
        }
    }

    /// The request asked `streaming`'s way, retried as [`AttemptError::is_retryable`] says;
    /// the last error and how many attempts were made.
    async fn retried(
        &self,
        request: &ChatRequest,
        streaming: Streaming,
        listener: &dyn ReplyListener,
    ) -> Result<ChatReply, (AttemptError, u32)> {
        let settings = wire::BodySettings {
            model: request.model.as_deref().unwrap_or(&self.config.model),
            temperature: self.config.temperature,
            // The smaller cap: the operator's, or what the request leaves room for.
            max_tokens: self
                .config
                .max_tokens
                .map(|cap| request.max_reply_tokens.map_or(cap, |room| cap.min(room))),
            server: self.config.server,
            streaming,
        };
        let body = serde_json::to_vec(&wire::request_body(settings, request)).map_err(|e| {
            (
                AttemptError::Failed(ModelError::BadReply(format!(
                    "the request could not be encoded: {e}"
                ))),
                0,
            )
        })?;
        // The reply's most tokens, which bound how long a streamed answer may take.
        let reply_tokens = settings
            .max_tokens
            .unwrap_or_else(|| self.window.load(Ordering::Relaxed));
        let attempts = AtomicU32::new(0);
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.config.retry_base_delay)
            .with_max_delay(MAX_BACKOFF)
            .with_max_times(usize::try_from(self.config.max_retries).unwrap_or(usize::MAX))
            .with_jitter();
        let longest = self.config.max_retry_wait;
        let result = (|| {
            attempts.fetch_add(1, Ordering::Relaxed);
            self.attempt(&body, (streaming != Streaming::Off).then_some(reply_tokens), listener)
        })
        .retry(backoff)
        .when(|error| error.is_retryable() && !error.asks_longer_than(longest))
        .adjust(|error, backoff| {
            // `None` means the retries are spent; a Retry-After never adds one.
            backoff.map(|backoff| error.wait(backoff))
        })
        .notify(|error, delay| {
            if let AttemptError::Refused {
                status,
                message,
                retry_after,
                ..
            } = error
            {
                let attempt = attempts.load(Ordering::Relaxed);
                tracing::warn!(%status, attempt, ?delay, asked = ?retry_after, "model server busy or failing; retrying");
                listener.waiting(&ModelRetry {
                    wait: delay,
                    asked: retry_after.is_some(),
                    attempt,
                    last: format!("{status}: {message}"),
                });
            }
        })
        .await;
        result.map_err(|error| (error, attempts.load(Ordering::Relaxed)))
    }

    /// The error a caller gets once no attempt is left.
    fn final_error(&self, error: AttemptError, attempts: u32) -> ModelError {
        match error {
            AttemptError::Refused {
                status,
                message,
                retry_after: Some(wait),
                ..
            } if wait > self.config.max_retry_wait
                && (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) =>
            {
                let until = httpdate::fmt_http_date(SystemTime::now() + wait);
                tracing::warn!(%status, wait_secs = wait.as_secs(), %until, "the model server asked for a longer wait than llm.max_retry_wait_secs; not asking again");
                ModelError::RetryLater {
                    wait,
                    until,
                    last: format!("{status}: {message}"),
                }
            }
            AttemptError::Refused {
                status,
                message,
                too_long,
                ..
            } => classify(
                Refusal {
                    status,
                    message,
                    too_long,
                },
                attempts,
                &self.endpoint,
            ),
            AttemptError::Failed(error) => error,
            AttemptError::NoStream(why) => ModelError::Rejected(why),
        }
    }

    /// One request and its answer; a streamed one (`stream_tokens`: asked for a stream of
    /// at most that many tokens) tells `listener` its text as it comes.
    async fn attempt(
        &self,
        body: &[u8],
        stream_tokens: Option<u32>,
        listener: &dyn ReplyListener,
    ) -> Result<ChatReply, AttemptError> {
        let mut builder = self
            .http
            .post(self.endpoint.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key.expose_secret());
        }
        // A stream that keeps coming may outlast the request timeout, up to its limit.
        let limit = match stream_tokens {
            Some(tokens) => stream_limit(tokens, self.config.request_timeout),
            None => self.config.request_timeout,
        };
        builder = builder.timeout(limit);
        let started = tokio::time::Instant::now();
        let begun_by = started + self.config.request_timeout;
        let response = tokio::time::timeout_at(begun_by, builder.send())
            .await
            .map_err(|_| AttemptError::Failed(ModelError::Timeout(self.config.request_timeout)))?
            .map_err(|e| {
                AttemptError::Failed(if e.is_timeout() {
                    ModelError::Timeout(self.config.request_timeout)
                } else {
                    // Neither the URL nor the error's copy of it: either may hold a password.
                    ModelError::Unreachable {
                        url: crate::config::redact_password(self.endpoint.as_str()),
                        reason: crate::core::tools::error_chain(&e.without_url()),
                    }
                })
            })?;
        let status = response.status();
        let retry_after = retry_after(response.headers(), SystemTime::now());
        if status.is_success() && stream_tokens.is_some() && is_event_stream(response.headers()) {
            let reply = self.read_stream(response, begun_by, limit, listener).await;
            tracing::debug!(%status, elapsed_ms = started.elapsed().as_millis() as u64, "model answered (streamed)");
            return reply;
        }
        let streamed = stream_tokens.is_some();
        let text = response
            .text()
            .await
            .map_err(|e| AttemptError::Failed(self.broke_off(&e, limit)))?;
        tracing::debug!(%status, elapsed_ms = started.elapsed().as_millis() as u64, "model answered");
        if status.is_success() {
            return if streamed {
                self.unstreamed_answer(&text, listener)
            } else {
                wire::parse_reply(&text).map_err(AttemptError::Failed)
            };
        }
        let message = wire::error_message(&text).unwrap_or_else(|| shorten(&text));
        let too_long = wire::says_too_long(&text);
        if streamed && !too_long && refuses_stream(status, &message) {
            return Err(AttemptError::NoStream(format!("{status}: {message}")));
        }
        Err(AttemptError::Refused {
            status,
            message,
            retry_after,
            too_long,
        })
    }

    /// Reads a streamed answer as it comes, telling `listener` its text: its first bytes by
    /// `begun_by`, then no silence longer than `llm.stream_idle_timeout_secs`, all within
    /// `limit` of the request.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        begun_by: tokio::time::Instant,
        limit: Duration,
        listener: &dyn ReplyListener,
    ) -> Result<ChatReply, AttemptError> {
        let idle = self.config.stream_idle_timeout;
        let mut reading = stream::Reading::new(listener);
        let mut begun = false;
        loop {
            let by = if begun {
                tokio::time::Instant::now() + idle
            } else {
                begun_by
            };
            let chunk = match tokio::time::timeout_at(by, response.chunk()).await {
                Err(_) if begun => {
                    tracing::warn!(
                        idle_secs = idle.as_secs(),
                        "the model server stopped writing its answer"
                    );
                    return Err(AttemptError::Failed(ModelError::Stalled(idle)));
                }
                Err(_) => {
                    return Err(AttemptError::Failed(ModelError::Timeout(
                        self.config.request_timeout,
                    )));
                }
                Ok(chunk) => chunk.map_err(|e| AttemptError::Failed(self.broke_off(&e, limit)))?,
            };
            let Some(bytes) = chunk else { break };
            begun |= !bytes.is_empty();
            if reading.feed(&bytes).map_err(AttemptError::Failed)? {
                break;
            }
        }
        reading.finish().map_err(AttemptError::Failed)
    }

    /// A success that is not an event stream, to a request that asked for one: events sent
    /// under another content type are read as events; a whole completion is taken as it is
    /// (the server does not stream, and is not asked to again, which saves asking twice);
    /// anything else is a bad reply, as it would be to a request without the stream (a proxy's
    /// error page says nothing about streaming).
    fn unstreamed_answer(
        &self,
        text: &str,
        listener: &dyn ReplyListener,
    ) -> Result<ChatReply, AttemptError> {
        if stream::looks_like_events(text) {
            let mut reading = stream::Reading::new(listener);
            reading
                .feed(text.as_bytes())
                .map_err(AttemptError::Failed)?;
            return reading.finish().map_err(AttemptError::Failed);
        }
        let reply = wire::parse_reply(text).map_err(AttemptError::Failed)?;
        self.lower_streaming(
            self.streaming(),
            "it answered a streamed request with a whole reply",
        );
        Ok(reply)
    }

    /// The error for an answer that could not be read to its end within `limit`.
    fn broke_off(&self, e: &reqwest::Error, limit: Duration) -> ModelError {
        if e.is_timeout() && limit > self.config.request_timeout {
            ModelError::TooSlow(limit)
        } else if e.is_timeout() {
            ModelError::Timeout(self.config.request_timeout)
        } else {
            ModelError::Interrupted(crate::core::tools::error_chain(e))
        }
    }
}

/// Whether the answer says it is an event stream.
fn is_event_stream(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("text/event-stream"))
}

/// Whether an error answer to a streamed request refuses the stream (or its options): a
/// 4xx (or 501 Not Implemented) whose message names `stream` as a word of its own
/// (`stream`, `streaming`, `stream_options`; not `upstream`).
fn refuses_stream(status: StatusCode, message: &str) -> bool {
    let refusal = (status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS)
        || status == StatusCode::NOT_IMPLEMENTED;
    let lower = message.to_ascii_lowercase();
    refusal
        && lower.match_indices("stream").any(|(at, _)| {
            !lower[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphabetic())
        })
}

/// What the model server said when asked for its models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerCheck {
    /// It answered; the ids of the models it lists, `None` when the answer is not a list
    /// of models.
    Answered { models: Option<Vec<String>> },
    /// It answered with an error status.
    Refused { status: u16, message: String },
    /// No answer.
    Unreachable { reason: String },
}

impl ServerCheck {
    /// Whether runs can be expected to reach the model, and a sentence saying what was
    /// found and what to do. `base_url` is shown as given, so pass it with its password
    /// redacted.
    pub fn judge(&self, model: &str, base_url: &str) -> (bool, String) {
        match self {
            Self::Answered {
                models: Some(models),
            } if models.is_empty() => {
                (true, format!("answered at {base_url} (it lists no models)"))
            }
            Self::Answered {
                models: Some(models),
            } if lists(models, model) => (
                true,
                format!(
                    "answered at {base_url} ({} models, llm.model {model:?} among them)",
                    models.len()
                ),
            ),
            Self::Answered {
                models: Some(models),
            } => (
                true,
                format!(
                    "answered at {base_url}, but llm.model {model:?} is not among the models it lists ({}): if runs fail with an unknown model, set llm.model to one of them (llama.cpp's server answers to any name)",
                    shown_list(models)
                ),
            ),
            Self::Answered { models: None } => (
                false,
                format!(
                    "answered at {base_url}, but not with a list of models: check llm.base_url (an OpenAI-compatible API, usually ending in /v1)"
                ),
            ),
            Self::Refused { status, message } if matches!(status, 401 | 403) => (
                false,
                format!(
                    "refused the API key at {base_url} ({status}: {message}): set llm.api_key or OPENAI_API_KEY (or OPENAI_API_KEY_FILE) to a key this server accepts"
                ),
            ),
            Self::Refused {
                status: 404,
                message,
            } => (
                false,
                format!(
                    "answered 404 at {base_url}/models ({message}): check llm.base_url (it usually ends in /v1)"
                ),
            ),
            Self::Refused { status, message } => (
                false,
                format!("answered {status} at {base_url}/models: {message}"),
            ),
            Self::Unreachable { reason } => (
                false,
                format!(
                    "did not answer at {base_url} ({reason}): check llm.base_url and that the model server runs"
                ),
            ),
        }
    }
}

/// Whether `model` is in the server's list; Ollama lists `name:latest` for `name`.
fn lists(models: &[String], model: &str) -> bool {
    models
        .iter()
        .any(|m| m == model || m.strip_suffix(":latest") == Some(model))
}

/// The first few names of a list, and how many more there are.
fn shown_list(models: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut shown = models
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if models.len() > SHOWN {
        shown.push_str(&format!(" and {} more", models.len() - SHOWN));
    }
    shown
}

/// The longest backoff between two attempts when the server asked for no wait of its own.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Why one attempt did not give a reply.
#[derive(Debug)]
enum AttemptError {
    /// The server answered with an error status.
    Refused {
        status: StatusCode,
        message: String,
        retry_after: Option<Duration>,
        /// The body says the request is longer than the model's context window.
        too_long: bool,
    },
    /// No usable answer: unreachable, timed out, or a success whose body is not a reply.
    Failed(ModelError),
    /// The server does not take the request streamed as it was asked (see
    /// [`refuses_stream`]): it is asked again the next lower way, at once.
    NoStream(String),
}

impl AttemptError {
    /// 429 and 5xx may succeed if tried again; nothing else will.
    fn is_retryable(&self) -> bool {
        match self {
            Self::Refused { status, .. } => {
                *status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
            }
            Self::Failed(_) | Self::NoStream(_) => false,
        }
    }

    /// Whether the server asked for a longer wait than `longest` before the next attempt.
    fn asks_longer_than(&self, longest: Duration) -> bool {
        matches!(self, Self::Refused { retry_after: Some(wait), .. } if *wait > longest)
    }

    /// The wait before the next attempt: exactly the server's `Retry-After` when it sent
    /// one (never sooner; a longer one ends the retries first, see
    /// [`AttemptError::asks_longer_than`]), else the backoff, at most [`MAX_BACKOFF`].
    fn wait(&self, backoff: Duration) -> Duration {
        match self {
            Self::Refused {
                retry_after: Some(asked),
                ..
            } => *asked,
            Self::Refused { .. } | Self::Failed(_) | Self::NoStream(_) => backoff.min(MAX_BACKOFF),
        }
    }
}

impl ChatModel for OpenAiClient {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(self.complete_with_retries(request, &()))
    }

    fn complete_telling<'a>(
        &'a self,
        request: &'a ChatRequest,
        listener: &'a dyn ReplyListener,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(self.complete_with_retries(request, listener))
    }

    fn context_limits(&self) -> Option<ContextLimits> {
        Some(ContextLimits {
            window_tokens: self.window.load(Ordering::Relaxed),
            max_reply_tokens: self.config.max_tokens,
        })
    }
}

/// A server's error answer, as [`classify`] reads it.
struct Refusal {
    status: StatusCode,
    message: String,
    /// The whole body says the request is too long for the model's context window.
    too_long: bool,
}

fn classify(refusal: Refusal, attempts: u32, endpoint: &Url) -> ModelError {
    let Refusal {
        status,
        message,
        too_long,
    } = refusal;
    let lower = message.to_ascii_lowercase();
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            ModelError::Unauthorized(format!("{status}: {message}"))
        }
        // Only a refusal says the request is too long: a server failing (5xx) or busy (429)
        // says nothing about the request, whatever its text.
        StatusCode::PAYLOAD_TOO_LARGE => ModelError::TooLong(format!("{status}: {message}")),
        _ if too_long && status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS => {
            ModelError::TooLong(format!("{status}: {message}"))
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

/// How long `Retry-After` asks the client to wait, read at `now`: either form RFC 9110
/// allows, seconds (fractions accepted, as some servers send them) or an HTTP date; a date
/// already past means at once. `None` when the header is absent or unreadable.
fn retry_after(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
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
        let refusal = Refusal {
            status: StatusCode::from_u16(status).expect("status"),
            message: message.to_owned(),
            too_long: wire::says_too_long(message),
        };
        classify(refusal, 1, &endpoint)
    }

    /// The failure kinds the loop acts on, from the answers real servers give.
    #[test]
    fn failures_are_sorted_by_what_they_say_about_the_request() {
        use crate::core::ports::ModelFailure::{Refused, TooLong, Transient};
        for (status, body, expected) in [
            // OpenAI.
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
                TooLong,
            ),
            // llama.cpp's llama-server.
            (
                400,
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
                TooLong,
            ),
            // vLLM.
            (
                400,
                r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).","type":"BadRequestError","code":400}"#,
                TooLong,
            ),
            // Ollama.
            (
                400,
                r#"{"error":"prompt too long; exceeded max context length by 12 tokens"}"#,
                TooLong,
            ),
            (413, "Payload Too Large", TooLong),
            // A busy or failing server says nothing about the request, whatever its words.
            (
                429,
                r#"{"error":{"message":"prompt too long for the free tier, slow down"}}"#,
                Transient,
            ),
            (502, "<html>Bad Gateway</html>", Transient),
            (
                503,
                r#"{"error":"maximum context length cache is rebuilding"}"#,
                Transient,
            ),
            // Other refusals are refusals.
            (
                400,
                r#"{"error":{"message":"this server cannot take a message with POISON"}}"#,
                Refused,
            ),
            (
                422,
                r#"{"error":"Conversation roles must alternate user/assistant"}"#,
                Refused,
            ),
            (401, r#"{"error":"invalid api key"}"#, Refused),
        ] {
            let endpoint = Url::parse("http://127.0.0.1:1/v1/chat/completions").expect("url");
            let refusal = Refusal {
                status: StatusCode::from_u16(status).expect("status"),
                message: wire::error_message(body).unwrap_or_else(|| body.to_owned()),
                too_long: wire::says_too_long(body),
            };
            let error = classify(refusal, 4, &endpoint);
            assert_eq!(error.failure(), expected, "{status} {body}: {error:?}");
        }
        for transient in [
            ModelError::Timeout(Duration::from_secs(1)),
            ModelError::Unreachable {
                url: "http://127.0.0.1:1".into(),
                reason: "connection refused".into(),
            },
            ModelError::Interrupted("connection reset".into()),
        ] {
            assert_eq!(transient.failure(), Transient, "{transient:?}");
        }
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
    fn the_start_check_says_what_was_found_and_what_to_fix() {
        let url = "http://127.0.0.1:11434/v1";
        let answered = |models: &[&str]| ServerCheck::Answered {
            models: Some(models.iter().map(|m| (*m).to_owned()).collect()),
        };
        for (check, ok, said) in [
            (
                answered(&["qwen2.5:7b", "llama3.1:latest"]),
                true,
                "answered at http://127.0.0.1:11434/v1 (2 models, llm.model \"llama3.1\" among them)",
            ),
            (
                answered(&["a", "b", "c", "d", "e", "f", "g"]),
                true,
                "answered at http://127.0.0.1:11434/v1, but llm.model \"llama3.1\" is not among the models it lists (a, b, c, d, e and 2 more): if runs fail with an unknown model, set llm.model to one of them (llama.cpp's server answers to any name)",
            ),
            (
                answered(&[]),
                true,
                "answered at http://127.0.0.1:11434/v1 (it lists no models)",
            ),
            (
                ServerCheck::Answered { models: None },
                false,
                "answered at http://127.0.0.1:11434/v1, but not with a list of models: check llm.base_url (an OpenAI-compatible API, usually ending in /v1)",
            ),
            (
                ServerCheck::Refused {
                    status: 401,
                    message: "invalid key".to_owned(),
                },
                false,
                "refused the API key at http://127.0.0.1:11434/v1 (401: invalid key): set llm.api_key or OPENAI_API_KEY (or OPENAI_API_KEY_FILE) to a key this server accepts",
            ),
            (
                ServerCheck::Refused {
                    status: 404,
                    message: "Not Found".to_owned(),
                },
                false,
                "answered 404 at http://127.0.0.1:11434/v1/models (Not Found): check llm.base_url (it usually ends in /v1)",
            ),
            (
                ServerCheck::Unreachable {
                    reason: "connection refused".to_owned(),
                },
                false,
                "did not answer at http://127.0.0.1:11434/v1 (connection refused): check llm.base_url and that the model server runs",
            ),
        ] {
            assert_eq!(check.judge("llama3.1", url), (ok, said.to_owned()));
        }
    }

    #[test]
    fn a_models_list_is_read_as_every_server_writes_it() {
        assert_eq!(
            wire::model_ids(
                r#"{"object":"list","data":[{"id":"m1","object":"model"},{"id":"m2"}]}"#
            ),
            Some(vec!["m1".to_owned(), "m2".to_owned()])
        );
        assert_eq!(wire::model_ids(r#"{"data":[]}"#), Some(Vec::new()));
        assert_eq!(wire::model_ids("<html>hello</html>"), None);
        assert_eq!(wire::model_ids(r#"{"models":[]}"#), None);
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

    fn headers_with_retry_after(value: &str) -> reqwest::header::HeaderMap {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::RETRY_AFTER,
            value.parse().expect("a header value"),
        );
        headers
    }

    #[test]
    fn retry_after_is_read_in_seconds_or_as_an_http_date() {
        // Tue, 24 Nov 2026 03:00:00 GMT.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_489_200);
        assert_eq!(
            httpdate::fmt_http_date(now),
            "Tue, 24 Nov 2026 03:00:00 GMT"
        );
        for (value, expected) in [
            ("7", Some(Duration::from_secs(7))),
            (" 1.5 ", Some(Duration::from_millis(1500))),
            ("0", Some(Duration::ZERO)),
            (
                "Tue, 24 Nov 2026 03:00:12 GMT",
                Some(Duration::from_secs(12)),
            ),
            // The two obsolete forms RFC 9110 still asks recipients to accept.
            (
                "Tuesday, 24-Nov-26 03:01:00 GMT",
                Some(Duration::from_secs(60)),
            ),
            ("Tue Nov 24 03:00:05 2026", Some(Duration::from_secs(5))),
            // A date already past: retry at once.
            ("Tue, 24 Nov 2026 02:59:00 GMT", Some(Duration::ZERO)),
            ("Thu, 01 Jan 1970 00:00:00 GMT", Some(Duration::ZERO)),
            ("-3", None),
            ("soon", None),
            ("NaN", None),
            ("", None),
        ] {
            assert_eq!(
                retry_after(&headers_with_retry_after(value), now),
                expected,
                "{value:?}"
            );
        }
        assert_eq!(retry_after(&reqwest::header::HeaderMap::new(), now), None);
    }

    #[test]
    fn the_wait_before_a_retry_is_exactly_what_the_server_asked_for() {
        let refused = |retry_after| AttemptError::Refused {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: "slow down".to_owned(),
            retry_after,
            too_long: false,
        };
        let backoff = Duration::from_millis(400);
        let longest = Duration::from_secs(60);
        assert_eq!(refused(None).wait(backoff), backoff);
        assert_eq!(
            refused(Some(Duration::from_secs(3))).wait(backoff),
            Duration::from_secs(3)
        );
        assert_eq!(refused(Some(Duration::ZERO)).wait(backoff), Duration::ZERO);
        // A long wait is waited, never cut short: a retry before it would only be refused.
        assert_eq!(
            refused(Some(Duration::from_secs(45))).wait(backoff),
            Duration::from_secs(45)
        );
        assert!(!refused(Some(Duration::from_secs(45))).asks_longer_than(longest));
        // Longer than the operator allows: no further attempt (RetryLater says when).
        assert!(refused(Some(Duration::from_secs(3600))).asks_longer_than(longest));
        assert!(!refused(None).asks_longer_than(longest));
        assert_eq!(refused(None).wait(Duration::from_secs(90)), MAX_BACKOFF);
    }

    #[test]
    fn a_refused_stream_is_told_from_other_refusals() {
        for (status, message, refuses) in [
            (400, "stream is not supported", true),
            (
                400,
                "Unrecognized request argument supplied: stream_options",
                true,
            ),
            (422, "Streaming is not available for this model", true),
            (501, "streaming not implemented", true),
            (400, "the upstream provider refused the request", false),
            (429, "too many streams at once", false),
            (500, "stream broke", false),
            (400, "tools param requires --jinja flag", false),
        ] {
            let status = StatusCode::from_u16(status).expect("status");
            assert_eq!(
                refuses_stream(status, message),
                refuses,
                "{status} {message}"
            );
        }
    }

    #[test]
    fn only_429_and_5xx_answers_are_retried() {
        let refused = |status: u16| AttemptError::Refused {
            status: StatusCode::from_u16(status).expect("status"),
            message: String::new(),
            retry_after: None,
            too_long: false,
        };
        assert!(refused(429).is_retryable());
        assert!(refused(500).is_retryable());
        assert!(refused(503).is_retryable());
        assert!(!refused(400).is_retryable());
        assert!(!refused(401).is_retryable());
        assert!(!refused(404).is_retryable());
        assert!(!AttemptError::Failed(ModelError::Timeout(Duration::from_secs(1))).is_retryable());
    }
}
