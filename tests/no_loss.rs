//! Nothing the bot holds is lost to a failure, proven through the release binaries: the
//! console (`riskgate console --json`) against a fake model server that fails for a while,
//! and the bot (`riskgate run`) against the fake Discord served over TLS, so serenity's own
//! rate limiter runs as it does against Discord.
//!
//! What is checked is the effect: the store file's conversation rows byte for byte after
//! the binary exits, what the model was sent next, when the fakes saw each retry, what the
//! channel was told, and what the log says.

mod support;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::Connection;
use support::fake_discord::{FakeDiscord, Fault, GuildSpec, UserSpec, WAIT};
use support::fake_llm::{self, FakeLlm, Scripted};

// ---------------------------------------------------------------------------------------------
// The model server.

/// `riskgate console --json --user dana` in `dir` (its store is `dir/riskgate.db`) against
/// `base_url`, with `input` on stdin and `env` on top; returns the exit status, the events
/// and stderr.
fn console(
    base_url: &str,
    dir: &Path,
    input: &str,
    env: &[(&str, &str)],
) -> (std::process::ExitStatus, Vec<Value>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_riskgate"))
        .args(["console", "--json", "--user", "dana"])
        .current_dir(dir)
        .env_remove("RISKGATE_CONFIG")
        .env("RISKGATE__LLM__BASE_URL", base_url)
        .env("RISKGATE__LLM__RETRY_BASE_DELAY_MS", "200")
        .env("RISKGATE__TOOLS__WORKSPACE", dir.join("workspace"))
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the console");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let output = child.wait_with_output().expect("output");
    let events = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect();
    (
        output.status,
        events,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every conversation row of a SQLite store file, exactly as stored.
async fn stored_rows(database: &Path) -> Vec<(i64, String, String, i64)> {
    let url = format!("sqlite://{}?mode=ro", database.display());
    let mut connection = sqlx::SqliteConnection::connect(&url)
        .await
        .expect("open the store file");
    sqlx::query_as("SELECT id, channel, message, created_at FROM messages ORDER BY id")
        .fetch_all(&mut connection)
        .await
        .expect("read the conversation rows")
}

fn messages_of(event_kind: &str, events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == event_kind)
        .filter_map(|e| e["message"].as_str().map(str::to_owned))
        .collect()
}

/// What the model was sent in `request`, less the system prompt.
fn sent_contents(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Two turns, then an outage while a third message is asked, then the same message once
/// the server is back: the store file is byte for byte what it was before the outage, and
/// the message after it goes to the model with the whole conversation.
async fn an_outage_loses_nothing(
    outage: &str,
    failing: Vec<Scripted>,
    env: &[(&str, &str)],
    said: &str,
) {
    let mut script = vec![fake_llm::text("uno"), fake_llm::text("dos")];
    script.extend(failing);
    script.push(fake_llm::text("tres"));
    let fake = FakeLlm::start(script).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let database = dir.path().join("riskgate.db");

    let (status, _, stderr) = console(&fake.base_url(), dir.path(), "one\ntwo\n", env);
    assert!(status.success(), "{outage}: {stderr}");
    let before = stored_rows(&database).await;
    assert_eq!(before.len(), 4, "{outage}: two turns stored");

    let (status, events, stderr) = console(&fake.base_url(), dir.path(), "three\n", env);
    assert_eq!(status.code(), Some(1), "{outage}: a failed run: {stderr}");
    let errors = messages_of("error", &events);
    assert!(
        errors.iter().any(|m| m.contains(said)
            && m.contains("Nothing was lost")
            && m.contains("Send it again")),
        "{outage}: the channel is told what failed and that nothing was lost: {errors:?}"
    );
    assert!(
        !messages_of("notice", &events)
            .iter()
            .any(|m| m.contains("cleared") || m.contains("without the earlier conversation")),
        "{outage}: {events:#?}"
    );
    assert_eq!(
        stored_rows(&database).await,
        before,
        "{outage}: the stored conversation is byte for byte what it was"
    );

    let (status, events, stderr) = console(&fake.base_url(), dir.path(), "three\n", env);
    assert!(status.success(), "{outage}: {stderr}");
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "reply" && e["text"] == "tres"),
        "{outage}: {events:#?}"
    );
    let requests = fake.requests().await;
    assert_eq!(
        sent_contents(requests.last().expect("a request")),
        ["dana: one", "uno", "dana: two", "dos", "dana: three"],
        "{outage}: the whole earlier conversation, and the message once"
    );
    assert_eq!(
        fake.remaining(),
        0,
        "{outage}: every scripted answer was used"
    );
}

#[tokio::test]
async fn a_502_outage_longer_than_the_retries_leaves_the_conversation_as_it_was() {
    // One attempt and three retries, 0.2 s, 0.4 s and 0.8 s apart (plus jitter): the
    // outage outlasts them all, as the 6-second outage that cleared a channel did.
    let outage = (0..4)
        .map(|_| fake_llm::status(502, "Bad Gateway", None))
        .collect();
    an_outage_loses_nothing("502", outage, &[], "kept failing after 4 attempts").await;
}

#[tokio::test]
async fn a_model_timeout_leaves_the_conversation_as_it_was() {
    let late = fake_llm::text("too late");
    let Scripted::Reply(body) = late else {
        unreachable!("text() is a reply")
    };
    an_outage_loses_nothing(
        "timeout",
        vec![Scripted::Slow(Duration::from_secs(4), body)],
        &[("RISKGATE__LLM__REQUEST_TIMEOUT_SECS", "1")],
        "did not answer within 1s",
    )
    .await;
}

#[tokio::test]
async fn a_429_asking_for_longer_than_the_setting_leaves_the_conversation_as_it_was() {
    an_outage_loses_nothing(
        "429",
        vec![fake_llm::status(429, "quota exceeded", Some("3600"))],
        &[("RISKGATE__LLM__MAX_RETRY_WAIT_SECS", "30")],
        "asked to wait 3600 s",
    )
    .await;
}

/// The model client waits what `Retry-After` asks, never less, and the channel sees why
/// nothing happens meanwhile.
#[tokio::test]
async fn the_model_client_waits_out_retry_after_and_says_so() {
    let fake = FakeLlm::start(vec![
        fake_llm::status(429, "slow down", Some("2")),
        fake_llm::status(503, "warming up", Some("2")),
        fake_llm::text("here"),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    // A 10 ms backoff: any retry before 2 s would be the backoff's, not the server's.
    let (status, events, stderr) = console(
        &fake.base_url(),
        dir.path(),
        "hello\n",
        &[("RISKGATE__LLM__RETRY_BASE_DELAY_MS", "10")],
    );
    assert!(status.success(), "{stderr}");
    let arrivals = fake.arrivals();
    assert_eq!(arrivals.len(), 3);
    for pair in arrivals.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_secs(2),
            "a retry came {gap:?} after the answer that asked for 2 s"
        );
    }
    let notices = messages_of("notice", &events);
    assert_eq!(
        notices
            .iter()
            .filter(|m| m.contains("trying again in 2 s, as it asked"))
            .count(),
        2,
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|m| m.contains("429") && m.contains("slow down")),
        "{notices:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "reply" && e["text"] == "here"),
        "{events:#?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Discord.

const GUILD: u64 = 2_000_000_000_000_000_000;
const CHANNEL: u64 = 2_000_000_000_000_000_100;
const REPLY: &str = "Here it is.";

fn alice() -> UserSpec {
    UserSpec::new(3_000_000_000_000_000_001, "alice")
}

fn store_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("state.db").display())
}

/// `riskgate run` against the fake Discord over TLS (serenity's rate limiter on, as in
/// production) and a fake model that answers [`REPLY`].
struct Bot {
    discord: FakeDiscord,
    _llm: FakeLlm,
    _tls: support::fake_discord::TlsEndpoint,
    dir: tempfile::TempDir,
    child: Child,
}

impl Bot {
    async fn start(env: &[(&str, &str)]) -> Self {
        Self::start_in(tempfile::tempdir().expect("tempdir"), env).await
    }

    /// Starts the bot on a store file `dir/state.db` that may hold state already.
    async fn start_in(dir: tempfile::TempDir, env: &[(&str, &str)]) -> Self {
        let discord = FakeDiscord::start(vec![
            GuildSpec::new(GUILD, "team").text_channel(CHANNEL, "agent"),
        ])
        .await;
        let tls = discord.serve_tls().await;
        let llm = FakeLlm::start(vec![fake_llm::text(REPLY)]).await;
        let child = Command::new(env!("CARGO_BIN_EXE_riskgate"))
            .arg("run")
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("RISKGATE_LOG", "info")
            .env("DISCORD_TOKEN", "fake-token")
            .env("RISKGATE__DISCORD__API_BASE_URL", &tls.base_url)
            .env("RISKGATE__DISCORD__API_CA_PEM", &tls.certificate_pem)
            .env("RISKGATE__DISCORD__GUILD_ID", GUILD.to_string())
            .env("RISKGATE__DISCORD__CHANNELS", CHANNEL.to_string())
            .env("RISKGATE__DISCORD__RETRY_BASE_MS", "10")
            .env("RISKGATE__STORE__URL", store_url(dir.path()))
            .env("RISKGATE__TOOLS__WORKSPACE", dir.path().join("workspace"))
            .env("RISKGATE__LLM__BASE_URL", llm.base_url())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start riskgate run");
        let bot = Self {
            discord,
            _llm: llm,
            _tls: tls,
            dir,
            child,
        };
        // The ready handler registers the commands: the bot is connected and knows itself.
        bot.discord
            .wait_for_request(|r| r.method == "PUT" && r.path.contains("/commands"), WAIT)
            .await;
        bot
    }

    fn messages_path() -> String {
        format!("/api/v10/channels/{CHANNEL}/messages")
    }

    /// Posts of the reply to the channel, with when they arrived and how they were answered.
    fn reply_posts(&self) -> Vec<(Instant, u16)> {
        self.discord
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path == Self::messages_path())
            .filter(|r| r.status == 429 || r.at("/content") == REPLY)
            .map(|r| (r.at, r.status))
            .collect()
    }

    /// Asks a question whose reply meets `times` rate limits of `wait` each; returns the
    /// reply's posts once it was delivered (see [`Bot::reply_posts`]).
    async fn reply_through_rate_limits(&self, wait: Duration, times: u32) -> Vec<(Instant, u16)> {
        self.discord.inject(
            "POST",
            &Self::messages_path(),
            Fault::RateLimitedFor(wait),
            times,
        );
        self.discord
            .message_create(CHANNEL, &alice(), "a question", &[])
            .await;
        self.discord
            .wait_for_request(
                |r| r.status == 200 && r.at("/content") == REPLY,
                Duration::from_secs(30),
            )
            .await;
        self.reply_posts()
    }

    fn typing_between(&self, from: Instant, to: Instant) -> usize {
        let typing = format!("/api/v10/channels/{CHANNEL}/typing");
        self.discord
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path == typing && r.at > from && r.at < to)
            .count()
    }

    /// Stops the bot with SIGTERM and returns its log.
    fn stop(self) -> (String, tempfile::TempDir) {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        // SAFETY: a plain signal to the child this test started.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let output = self.child.wait_with_output().expect("the bot's exit");
        assert!(output.status.success(), "the bot stops cleanly");
        (
            String::from_utf8_lossy(&output.stderr).into_owned(),
            self.dir,
        )
    }
}

/// A 429 with `Retry-After: 2`: the reply is sent again no earlier than 2 s after it, and
/// the channel shows the typing indicator meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discord_429_is_waited_out_for_exactly_its_retry_after() {
    let bot = Bot::start(&[]).await;
    let posts = bot
        .reply_through_rate_limits(Duration::from_secs(2), 1)
        .await;
    let statuses: Vec<u16> = posts.iter().map(|(_, status)| *status).collect();
    assert_eq!(statuses, [429, 200], "one refusal, then the reply once");
    let (refused, delivered) = (posts[0].0, posts[1].0);
    assert!(
        delivered - refused >= Duration::from_secs(2),
        "sent again {:?} after a 429 that asked for 2 s",
        delivered - refused
    );
    assert!(
        bot.typing_between(refused, delivered) >= 1,
        "the channel shows the bot is still at it while it waits"
    );
    let (log, _dir) = bot.stop();
    assert!(
        log.contains("Discord asked the bot to wait before its next request"),
        "{log}"
    );
}

/// Rate limits one after another, longer together than the retries of a send would last:
/// the reply is waited through and delivered, not dropped after a count of attempts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_discord_rate_limits_are_waited_through_not_dropped() {
    // No retries of our own at all: only the waits Discord asked for stand between the
    // reply and the channel.
    let bot = Bot::start(&[
        ("RISKGATE__DISCORD__SEND_RETRIES", "0"),
        ("RISKGATE__DISCORD__MAX_RATE_LIMIT_WAIT_SECS", "5"),
    ])
    .await;
    let posts = bot
        .reply_through_rate_limits(Duration::from_millis(1_500), 3)
        .await;
    let statuses: Vec<u16> = posts.iter().map(|(_, status)| *status).collect();
    assert_eq!(statuses, [429, 429, 429, 200]);
    for pair in posts.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(
            gap >= Duration::from_millis(1_500),
            "sent again after {gap:?}"
        );
    }
    bot.stop();
}

/// A wait longer than `discord.max_rate_limit_wait_secs` ends that send at once with a
/// logged message that names the channel and when Discord takes messages again; the reply
/// stays in the stored conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discord_wait_beyond_the_setting_is_logged_and_the_reply_kept() {
    let bot = Bot::start(&[("RISKGATE__DISCORD__MAX_RATE_LIMIT_WAIT_SECS", "1")]).await;
    bot.discord.inject(
        "POST",
        &Bot::messages_path(),
        Fault::RateLimitedFor(Duration::from_secs(30)),
        1,
    );
    bot.discord
        .message_create(CHANNEL, &alice(), "a question", &[])
        .await;
    bot.discord
        .wait_for_request(|r| r.status == 429, Duration::from_secs(20))
        .await;
    // Long enough for the bot to hear of the wait and give up on it; far short of 30 s.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !bot.reply_posts().iter().any(|(_, status)| *status == 200),
        "not posted early"
    );
    let started = Instant::now();
    let (log, dir) = bot.stop();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the stop did not wait for the 30 s"
    );
    let line = log
        .lines()
        .find(|l| l.contains("longer than discord.max_rate_limit_wait_secs"))
        .unwrap_or_else(|| panic!("the log says why the message was not posted: {log}"));
    assert!(line.contains(&CHANNEL.to_string()), "{line}");
    assert!(line.contains("wait 30 s"), "{line}");
    assert!(
        line.contains("GMT"),
        "when Discord takes messages again: {line}"
    );
    let rows = stored_rows(&dir.path().join("state.db")).await;
    assert!(
        rows.iter()
            .any(|(_, _, message, _)| message.contains(REPLY)),
        "the reply is kept in the conversation: {rows:?}"
    );
}

/// `/audit` in Discord shows why a call was cancelled, from the store the bot runs on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_audit_shows_a_cancels_reason() {
    use riskgate::core::ports::Store;
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = riskgate::store::SqlStore::connect(&store_url(dir.path()))
            .await
            .expect("the store file");
        store
            .record_audit(&riskgate::core::ports::AuditRecord {
                at: 1_700_000_000,
                run_id: "r1".into(),
                channel: CHANNEL.to_string(),
                user: alice().id.to_string(),
                tool: "execute_command".into(),
                arguments_summary: "rm -f keep.txt".into(),
                decision: riskgate::core::risk::Decision::Confirm,
                source: riskgate::core::risk::DecisionSource::DestructiveFloor,
                reason: "`rm` deletes files".into(),
                outcome: riskgate::core::agent::CallOutcome::Cancelled,
                approval_id: Some("a1".into()),
                duration_ms: 0,
                output_bytes: 0,
                note: Some("reason: move it to trash/ instead".into()),
                result: None,
            })
            .await
            .expect("an audit record");
    }
    let bot = Bot::start_in(dir, &[]).await;
    bot.discord
        .slash_command(CHANNEL, "audit", serde_json::json!([]), &alice())
        .await;
    let answer = bot
        .discord
        .wait_for_request(|r| r.path.ends_with("/callback"), WAIT)
        .await;
    let content = answer.at("/data/content").as_str().unwrap_or_default();
    assert!(
        content.contains("→ cancelled") && content.contains("(reason: move it to trash/ instead)"),
        "{answer:?}"
    );
    bot.stop();
}
