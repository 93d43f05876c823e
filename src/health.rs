//! What `/healthz` answers: whether this bot can do its work right now.
//!
//! It is healthy (200, first line `ok`) when Discord's gateway sent READY and has not been
//! disconnected for longer than `observability.gateway_grace_secs`, and the state database
//! answers a trivial query. Otherwise it answers 503, the first line naming what is wrong.
//! The database check runs at most once every [`STORE_CHECK_EVERY`] (requests in between
//! get the last answer, concurrent ones wait for the one check), each bounded by
//! [`STORE_CHECK_TIMEOUT`], so a probe cannot load the database or hang.
//!
//! The model server's state is reported in the body (and in `/metrics`) but does not make
//! the bot unhealthy: restarting the bot cannot bring a model server back, and while it is
//! away the bot still answers every message, saying the model server cannot be reached.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::core::tools::BoxFuture;

/// How long a database check's answer is reused.
pub const STORE_CHECK_EVERY: Duration = Duration::from_secs(5);
/// How long one database check may take before it counts as a failure.
pub const STORE_CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// A cheap question to the state database: `Ok` when it answered, else why not.
pub type StoreProbe = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// The bot's health as its parts report it.
pub struct Health {
    /// How long the gateway may be disconnected before the bot counts as unhealthy.
    grace: Duration,
    gateway: Mutex<Gateway>,
    store: tokio::sync::Mutex<StoreCheck>,
}

/// The gateway as the Discord adapter last saw it.
#[derive(Debug, Clone, Copy)]
struct Gateway {
    /// READY arrived at least once.
    ready: bool,
    /// When the gateway was last seen connected and then not; `None` while connected.
    down_since: Option<Instant>,
}

struct StoreCheck {
    /// Set once the store is open.
    probe: Option<StoreProbe>,
    /// The last check's time and answer.
    last: Option<(Instant, Result<(), String>)>,
}

/// What `/healthz` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub healthy: bool,
    /// One line per part: `discord: ...`, `state database: ...`.
    pub lines: Vec<String>,
    /// The lines of the parts that make the bot unhealthy.
    pub problems: Vec<String>,
}

impl Report {
    /// The body: `ok` or `unavailable: <problems>`, then a line per part.
    pub fn body(&self, extra: &[String]) -> String {
        let head = if self.healthy {
            "ok".to_owned()
        } else {
            format!("unavailable: {}", self.problems.join("; "))
        };
        let mut body = head;
        for line in self.lines.iter().chain(extra) {
            body.push('\n');
            body.push_str(line);
        }
        body.push('\n');
        body
    }
}

impl Health {
    /// A bot that has not connected yet and has no store: unhealthy until both report in.
    pub fn new(grace: Duration) -> Arc<Self> {
        Arc::new(Self {
            grace,
            gateway: Mutex::new(Gateway {
                ready: false,
                down_since: None,
            }),
            store: tokio::sync::Mutex::new(StoreCheck {
                probe: None,
                last: None,
            }),
        })
    }

    /// The gateway sent READY: connected.
    pub fn discord_ready(&self) {
        if let Ok(mut gateway) = self.gateway.lock() {
            gateway.ready = true;
            gateway.down_since = None;
        }
    }

    /// Whether every shard of this process is connected, as last seen.
    pub fn gateway_connected(&self, connected: bool) {
        if let Ok(mut gateway) = self.gateway.lock() {
            match (connected, gateway.down_since) {
                (true, _) => gateway.down_since = None,
                (false, None) => gateway.down_since = Some(Instant::now()),
                (false, Some(_)) => {}
            }
        }
    }

    /// The store is open: from now on `/healthz` asks it.
    pub async fn set_store_probe(&self, probe: StoreProbe) {
        let mut store = self.store.lock().await;
        store.probe = Some(probe);
        store.last = None;
    }

    /// The bot's health now (the database is asked if its last answer is older than
    /// [`STORE_CHECK_EVERY`]).
    pub async fn report(&self) -> Report {
        let (discord_ok, discord) = self.discord_line();
        let (store_ok, store) = self.store_line().await;
        let problems = [(discord_ok, &discord), (store_ok, &store)]
            .into_iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, line)| line.clone())
            .collect();
        Report {
            healthy: discord_ok && store_ok,
            lines: vec![discord, store],
            problems,
        }
    }

    fn discord_line(&self) -> (bool, String) {
        let gateway = match self.gateway.lock() {
            Ok(gateway) => *gateway,
            Err(_) => return (false, "discord: state unknown".to_owned()),
        };
        if !gateway.ready {
            return (
                false,
                "discord: connecting (the gateway has not sent READY yet)".to_owned(),
            );
        }
        match gateway.down_since.map(|since| since.elapsed()) {
            None => (true, "discord: connected".to_owned()),
            Some(down) if down >= self.grace => (
                false,
                format!(
                    "discord: gateway disconnected for {} s (more than observability.gateway_grace_secs = {})",
                    down.as_secs(),
                    self.grace.as_secs()
                ),
            ),
            Some(down) => (
                true,
                format!(
                    "discord: reconnecting (disconnected for {} s, within the {} s grace)",
                    down.as_secs(),
                    self.grace.as_secs()
                ),
            ),
        }
    }

    async fn store_line(&self) -> (bool, String) {
        // Held across the check: concurrent requests wait for it instead of asking too.
        let mut store = self.store.lock().await;
        let Some(probe) = store.probe.clone() else {
            return (false, "state database: not open yet".to_owned());
        };
        let fresh = store
            .last
            .as_ref()
            .filter(|(at, _)| at.elapsed() < STORE_CHECK_EVERY)
            .map(|(_, answer)| answer.clone());
        let answer = match fresh {
            Some(answer) => answer,
            None => {
                let answer = match tokio::time::timeout(STORE_CHECK_TIMEOUT, probe()).await {
                    Ok(answer) => answer,
                    Err(_) => Err(format!(
                        "no answer within {} s",
                        STORE_CHECK_TIMEOUT.as_secs()
                    )),
                };
                store.last = Some((Instant::now(), answer.clone()));
                answer
            }
        };
        match answer {
            Ok(()) => (true, "state database: answering".to_owned()),
            Err(why) => (false, format!("state database: unreachable ({why})")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn counting_probe(answer: Result<(), String>) -> (StoreProbe, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let probe: StoreProbe = Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            Box::pin(async move { answer })
        });
        (probe, asked)
    }

    #[tokio::test(start_paused = true)]
    async fn unhealthy_until_ready_and_after_the_grace_of_a_disconnection() {
        let health = Health::new(Duration::from_secs(30));
        let (probe, _) = counting_probe(Ok(()));
        let report = health.report().await;
        assert!(!report.healthy);
        assert_eq!(
            report.problems,
            [
                "discord: connecting (the gateway has not sent READY yet)",
                "state database: not open yet"
            ]
        );
        health.set_store_probe(probe).await;
        assert!(!health.report().await.healthy, "no READY yet");
        health.discord_ready();
        let report = health.report().await;
        assert!(report.healthy, "{report:?}");
        assert_eq!(
            report.body(&["model server: answered".to_owned()]),
            "ok\ndiscord: connected\nstate database: answering\nmodel server: answered\n"
        );

        health.gateway_connected(false);
        tokio::time::advance(Duration::from_secs(29)).await;
        // Still seen down: the first moment counts, not the latest report.
        health.gateway_connected(false);
        let report = health.report().await;
        assert!(report.healthy, "within the grace: {report:?}");
        tokio::time::advance(Duration::from_secs(2)).await;
        let report = health.report().await;
        assert!(!report.healthy);
        assert_eq!(
            report.body(&[]).lines().next(),
            Some(
                "unavailable: discord: gateway disconnected for 31 s (more than observability.gateway_grace_secs = 30)"
            )
        );
        health.gateway_connected(true);
        assert!(health.report().await.healthy);
    }

    #[tokio::test(start_paused = true)]
    async fn the_database_is_asked_at_most_once_per_interval_and_a_hang_is_a_failure() {
        let health = Health::new(Duration::from_secs(30));
        health.discord_ready();
        let (probe, asked) = counting_probe(Err("connection refused".to_owned()));
        health.set_store_probe(probe).await;
        for _ in 0..10 {
            let report = health.report().await;
            assert_eq!(
                report.problems,
                ["state database: unreachable (connection refused)"]
            );
        }
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        tokio::time::advance(STORE_CHECK_EVERY).await;
        health.report().await;
        assert_eq!(asked.load(Ordering::SeqCst), 2);

        let hanging: StoreProbe = Arc::new(|| Box::pin(std::future::pending()));
        health.set_store_probe(hanging).await;
        let report = health.report().await;
        assert_eq!(
            report.problems,
            ["state database: unreachable (no answer within 2 s)"]
        );
    }
}
