//! Sending as Discord documents it. A server error (5xx), a rate limit serenity's own limiter
//! did not foresee (429) or a dropped connection is retried with exponential backoff and
//! jitter (`discord.send_retries`, `discord.retry_base_ms`); a refusal is final and is
//! explained once: the channel, and the permission the bot needs there (403 Missing
//! Permissions does not say which one is missing, so the log names every one the send
//! needs). Backoff comes from `backon` (jittered exponential backoff is its whole job).
//!
//! Rate limits are serenity's: its limiter reads Discord's `Retry-After` and
//! `X-RateLimit-Reset-After`, sleeps exactly that long inside the attempt (however long, and
//! however often Discord asks) and only then sends again, so a send is never repeated early
//! and never counted against `send_retries` for a 429. What serenity does not do, this does
//! ([`RateLimits`], fed by `EventHandler::ratelimit`, which serenity calls before each of
//! those sleeps): a wait of [`TYPING_AFTER`] or more shows the typing indicator in the
//! channel meanwhile, so people see the bot is still at it; a wait longer than
//! `discord.max_rate_limit_wait_secs` ends the send at once with
//! [`SendFailure::RateLimited`], logged with the channel and when Discord takes messages
//! again, instead of holding the channel's queue for it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use serenity::all::ChannelId;
use serenity::http::{Http, HttpError, RatelimitInfo};
use tokio::sync::broadcast;

use crate::config::DiscordSettings;

/// How sends are retried.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub retries: usize,
    pub base: Duration,
    /// The longest rate-limit wait a send sits out (`discord.max_rate_limit_wait_secs`).
    pub max_rate_limit_wait: Duration,
}

/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

impl RetryPolicy {
    pub fn from_settings(settings: &DiscordSettings) -> Self {
        Self {
            retries: usize::try_from(settings.send_retries).unwrap_or(usize::MAX),
            base: Duration::from_millis(settings.retry_base_ms),
            max_rate_limit_wait: Duration::from_secs(settings.max_rate_limit_wait_secs),
        }
    }
}

/// What a send asks of the channel, so a refusal can name the permissions involved.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    /// It carries a file (Attach Files).
    pub attach: bool,
    /// It replies to a message (Read Message History).
    pub reply: bool,
}

impl Needs {
    pub const PLAIN: Self = Self {
        attach: false,
        reply: false,
    };

    fn permissions(self) -> String {
        let mut names = vec!["View Channel", "Send Messages"];
        if self.attach {
            names.push("Attach Files");
        }
        if self.reply {
            names.push("Read Message History");
        }
        names.join(", ")
    }
}

/// Why a send failed for good.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendFailure {
    /// 403: the bot lacks a permission there, or cannot see the channel.
    #[error("the bot may not post in channel {channel}: {detail}")]
    Forbidden { channel: ChannelId, detail: String },
    /// 404: the channel (or the message) no longer exists.
    #[error("channel {channel} or its message no longer exists ({detail})")]
    Gone { channel: ChannelId, detail: String },
    /// Discord kept failing (5xx, 429, connection) through every retry.
    #[error(
        "Discord did not take the message for channel {channel} after {attempts} attempts: {detail}"
    )]
    Unavailable {
        channel: ChannelId,
        attempts: usize,
        detail: String,
    },
    /// Discord refused the request itself (400 and the like).
    #[error("Discord refused the message for channel {channel}: {detail}")]
    Rejected { channel: ChannelId, detail: String },
    /// Discord asked for a longer wait than `discord.max_rate_limit_wait_secs` allows.
    #[error(
        "Discord asked the bot to wait {} s before posting in channel {channel}, longer than discord.max_rate_limit_wait_secs ({} s), so this message was not posted; Discord takes messages there again after {until}",
        wait.as_secs_f64().ceil(),
        longest.as_secs()
    )]
    RateLimited {
        channel: ChannelId,
        wait: Duration,
        longest: Duration,
        /// When Discord takes messages again, as an HTTP date.
        until: String,
    },
}

/// A wait serenity's rate limiter is about to sit out, as `EventHandler::ratelimit` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnouncedWait {
    /// The channel of the route that is limited; `None` for routes outside channels.
    pub channel: Option<ChannelId>,
    pub wait: Duration,
    /// Every route waits (Discord's global limit).
    pub global: bool,
}

impl AnnouncedWait {
    /// Reads serenity's notice: the channel from the route's path
    /// (`.../channels/{id}/...`); nothing else of the path is kept (an interaction's path
    /// carries its token).
    pub fn from_info(info: &RatelimitInfo) -> Self {
        let channel = info
            .path
            .split('/')
            .skip_while(|segment| *segment != "channels")
            .nth(1)
            .and_then(|id| id.parse::<u64>().ok())
            .filter(|id| *id > 0)
            .map(ChannelId::new);
        Self {
            channel,
            wait: info.timeout,
            global: info.global,
        }
    }

    fn concerns(&self, channel: ChannelId) -> bool {
        self.global || self.channel == Some(channel)
    }
}

/// A rate-limit wait of at least this long shows the typing indicator meanwhile.
pub const TYPING_AFTER: Duration = Duration::from_secs(2);

/// The waits serenity's rate limiter announces, for the sends in flight to watch, and the
/// client they type with while they wait.
pub struct RateLimits {
    announced: broadcast::Sender<AnnouncedWait>,
    http: Arc<Http>,
}

impl RateLimits {
    pub fn new(http: Arc<Http>) -> Self {
        let (announced, _) = broadcast::channel(64);
        Self { announced, http }
    }

    /// Called from `EventHandler::ratelimit`, before serenity sleeps.
    pub fn announce(&self, info: &RatelimitInfo) {
        let wait = AnnouncedWait::from_info(info);
        tracing::warn!(
            channel = wait.channel.map(ChannelId::get),
            wait_ms = u64::try_from(wait.wait.as_millis()).unwrap_or(u64::MAX),
            global = wait.global,
            method = ?info.method,
            "Discord asked the bot to wait before its next request; serenity waits, then sends again"
        );
        // Nobody listening (no send in flight) is fine.
        let _ = self.announced.send(wait);
    }
}

impl SendFailure {
    /// Whether nothing sent to this channel can succeed until an operator acts.
    pub fn is_channel_closed(&self) -> bool {
        matches!(self, Self::Forbidden { .. } | Self::Gone { .. })
    }
}

/// Whether a failed attempt may succeed if tried again.
fn transient(error: &serenity::Error) -> bool {
    match error {
        serenity::Error::Http(HttpError::UnsuccessfulRequest(response)) => {
            let status = response.status_code;
            status.as_u16() == 429 || status.is_server_error()
        }
        serenity::Error::Http(HttpError::Request(e)) => {
            e.is_timeout() || e.is_connect() || e.is_request() || e.is_body()
        }
        _ => false,
    }
}

/// Sorts a final error into what it means for the channel.
fn classify(
    error: &serenity::Error,
    channel: ChannelId,
    needs: Needs,
    attempts: usize,
) -> SendFailure {
    let detail = error.to_string();
    let serenity::Error::Http(HttpError::UnsuccessfulRequest(response)) = error else {
        return if transient(error) {
            SendFailure::Unavailable {
                channel,
                attempts,
                detail,
            }
        } else {
            SendFailure::Rejected { channel, detail }
        };
    };
    let message = &response.error.message;
    match (response.status_code.as_u16(), response.error.code) {
        (403, 50001) => SendFailure::Forbidden {
            channel,
            detail: format!("{message} (code 50001): the bot needs View Channel there"),
        },
        (403, code) => SendFailure::Forbidden {
            channel,
            detail: format!(
                "{message} (code {code}): check that the bot's role has {} in this channel",
                needs.permissions()
            ),
        },
        (404, code) => SendFailure::Gone {
            channel,
            detail: format!("{message}, code {code}"),
        },
        _ if transient(error) => SendFailure::Unavailable {
            channel,
            attempts,
            detail,
        },
        _ => SendFailure::Rejected { channel, detail },
    }
}

/// Runs `attempt` (which builds and sends one request) until it succeeds, retrying what
/// Discord documents as retryable; a final failure is logged once, with what to fix. While
/// serenity sits out a rate limit for this channel, the channel shows the typing
/// indicator; a wait over the policy's longest ends the send (see the module's text).
pub async fn send<T, Fut>(
    policy: RetryPolicy,
    limits: &RateLimits,
    channel: ChannelId,
    needs: Needs,
    what: &'static str,
    attempt: impl FnMut() -> Fut,
) -> Result<T, SendFailure>
where
    Fut: Future<Output = Result<T, serenity::Error>>,
{
    let mut announced = limits.announced.subscribe();
    let sending = retried(policy, channel, needs, what, attempt);
    tokio::pin!(sending);
    let mut typing = None;
    loop {
        tokio::select! {
            sent = &mut sending => return sent,
            wait = announced.recv() => {
                let Ok(wait) = wait else {
                    // Notices missed in a burst elsewhere; the sender lives in `limits`,
                    // so the channel cannot close while this runs.
                    continue;
                };
                if !wait.concerns(channel) {
                    continue;
                }
                if wait.wait > policy.max_rate_limit_wait {
                    let failure = SendFailure::RateLimited {
                        channel,
                        wait: wait.wait,
                        longest: policy.max_rate_limit_wait,
                        until: httpdate::fmt_http_date(std::time::SystemTime::now() + wait.wait),
                    };
                    tracing::error!(%channel, what, error = %failure, "a message could not be delivered");
                    return Err(failure);
                }
                if wait.wait >= TYPING_AFTER && typing.is_none() {
                    typing = Some(channel.start_typing(&limits.http));
                }
            }
        }
    }
}

/// The attempts and retries of one send, without the rate-limit watch.
async fn retried<T, Fut>(
    policy: RetryPolicy,
    channel: ChannelId,
    needs: Needs,
    what: &'static str,
    attempt: impl FnMut() -> Fut,
) -> Result<T, SendFailure>
where
    Fut: Future<Output = Result<T, serenity::Error>>,
{
    let mut attempts = 0usize;
    let backoff = ExponentialBuilder::default()
        .with_min_delay(policy.base)
        .with_max_delay(MAX_BACKOFF)
        .with_max_times(policy.retries)
        .with_jitter();
    let mut attempt = attempt;
    let result = (|| {
        attempts += 1;
        attempt()
    })
    .retry(backoff)
    .when(transient)
    .notify(|e, delay| {
        tracing::warn!(%channel, what, error = %e, ?delay, "Discord failed a send; retrying");
    })
    .await;
    result.map_err(|e| {
        let failure = classify(&e, channel, needs, attempts);
        tracing::error!(%channel, what, error = %failure, "a message could not be delivered");
        failure
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serenity::http::ErrorResponse;

    /// The error serenity returns for a Discord answer with `status` and this JSON body.
    fn http_error(status: u16, code: isize, message: &str) -> serenity::Error {
        let body = serde_json::json!({ "code": code, "message": message }).to_string();
        let answer = axum::http::Response::builder()
            .status(status)
            .body(body)
            .expect("response");
        let response = futures_util::FutureExt::now_or_never(ErrorResponse::from_response(
            reqwest::Response::from(answer),
            reqwest::Method::POST,
        ))
        .expect("decoding an in-memory body does not wait");
        serenity::Error::Http(HttpError::UnsuccessfulRequest(response))
    }

    #[test]
    fn refusals_name_the_channel_and_the_permissions_the_send_needs() {
        let channel = ChannelId::new(42);
        let attach = Needs {
            attach: true,
            reply: false,
        };
        let failure = classify(
            &http_error(403, 50013, "Missing Permissions"),
            channel,
            attach,
            1,
        );
        assert!(failure.is_channel_closed());
        let text = failure.to_string();
        assert!(text.contains("42"), "{text}");
        assert!(text.contains("Send Messages, Attach Files"), "{text}");
        let hidden = classify(
            &http_error(403, 50001, "Missing Access"),
            channel,
            Needs::PLAIN,
            1,
        );
        assert!(hidden.to_string().contains("View Channel"), "{hidden}");
        let gone = classify(
            &http_error(404, 10003, "Unknown Channel"),
            channel,
            Needs::PLAIN,
            1,
        );
        assert!(matches!(gone, SendFailure::Gone { .. }), "{gone:?}");
        let busy = classify(&http_error(503, 0, "busy"), channel, Needs::PLAIN, 5);
        assert!(
            matches!(busy, SendFailure::Unavailable { attempts: 5, .. }),
            "{busy:?}"
        );
        assert!(!busy.is_channel_closed());
        let bad = classify(
            &http_error(400, 50035, "Invalid Form Body"),
            channel,
            Needs::PLAIN,
            1,
        );
        assert!(matches!(bad, SendFailure::Rejected { .. }), "{bad:?}");
    }

    #[test]
    fn only_server_errors_rate_limits_and_lost_connections_are_retried() {
        assert!(transient(&http_error(500, 0, "x")));
        assert!(transient(&http_error(502, 0, "x")));
        assert!(transient(&http_error(429, 0, "x")));
        assert!(!transient(&http_error(403, 50013, "x")));
        assert!(!transient(&http_error(404, 10003, "x")));
        assert!(!transient(&http_error(400, 50035, "x")));
    }

    /// A plain send in channel 1.
    async fn send_plain<T, Fut>(
        policy: RetryPolicy,
        limits: &RateLimits,
        attempt: impl FnMut() -> Fut,
    ) -> Result<T, SendFailure>
    where
        Fut: Future<Output = Result<T, serenity::Error>>,
    {
        send(
            policy,
            limits,
            ChannelId::new(1),
            Needs::PLAIN,
            "test",
            attempt,
        )
        .await
    }

    #[tokio::test(start_paused = true)]
    async fn a_send_is_retried_until_it_succeeds_and_a_refusal_is_not() {
        let policy = RetryPolicy {
            retries: 3,
            base: Duration::from_millis(100),
            max_rate_limit_wait: Duration::from_secs(60),
        };
        let limits = RateLimits::new(Arc::new(serenity::http::HttpBuilder::new("x").build()));
        let mut calls = 0;
        let sent = send_plain(policy, &limits, || {
            calls += 1;
            let result = if calls < 3 {
                Err(http_error(500, 0, "boom"))
            } else {
                Ok(calls)
            };
            async move { result }
        })
        .await;
        assert_eq!(sent, Ok(3));
        let mut calls = 0;
        let refused: Result<(), _> = send_plain(policy, &limits, || {
            calls += 1;
            async { Err(http_error(403, 50013, "Missing Permissions")) }
        })
        .await;
        assert!(refused.is_err_and(|f| f.is_channel_closed()));
        assert_eq!(calls, 1, "a refusal is final");
        let mut calls = 0;
        let gave_up: Result<(), _> = send_plain(policy, &limits, || {
            calls += 1;
            async { Err(http_error(502, 0, "bad gateway")) }
        })
        .await;
        assert!(
            matches!(gave_up, Err(SendFailure::Unavailable { attempts: 4, .. })),
            "{gave_up:?}"
        );
        assert_eq!(calls, 4, "one attempt and three retries");
    }
}
