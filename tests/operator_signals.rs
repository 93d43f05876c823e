//! An operator can tell a working bot from a broken one. The release binary (`riskgate run`)
//! runs against the fake Discord and a fake model server at the default log level, and each
//! test reads what an operator reads: the start-up line and its warnings on stderr, the exit
//! status, and `/healthz`.
//!
//! - The start-up line names the application, its server and the served channels it sees,
//!   the slash commands and the model server; a bot in no server, or that cannot see its
//!   channels, warns and says what to do.
//! - The model server is checked at start beside the connecting, not before it: down, the
//!   bot starts and warns naming `llm.base_url`, without its password or the API key.
//! - `/healthz` answers 503 until Discord's READY, while the gateway stays down past its
//!   grace and while the state database is unreachable (PostgreSQL behind a proxy that is
//!   cut), and 200 otherwise, whatever the model server does.
//! - A refused token (401, or gateway close 4004) and a refused intent (4014) end the bot
//!   with status 2 and a message naming the setting; a guild the bot is not in (50001)
//!   warns naming `discord.guild_id` and the bot keeps serving. The token is never printed.

/// libtest captures the print macros of passing tests, so a skip notice goes to the
/// process's stderr directly: a plain `cargo test` shows which tests were skipped.
macro_rules! say_skipped {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "{test}: {}", format_args!($($arg)*));
    }};
}

mod support;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use support::fake_discord::{
    self as discord, APP_ID, APP_NAME, FakeDiscord, GuildSpec, MESSAGE_CONTENT_INTENT, Refusals,
    UserSpec,
};
use support::fake_llm::FakeLlm;
use support::pg_proxy::PgProxy;
use support::pg_schema::TestSchema;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

const GUILD: u64 = 1_500_000_000_000_000_000;
const CHANNEL: u64 = 1_500_000_000_000_000_010;
/// A channel in no server the bot is in.
const ELSEWHERE: u64 = 1_500_000_000_000_000_099;
/// The bot's token: it must never be printed.
const TOKEN: &str = "discord-token-7c1d9e-do-not-print";
/// The model server's API key and a password in its URL: never printed either.
const API_KEY: &str = "sk-model-key-51a0f3";
const URL_PASSWORD: &str = "url-password-2b8e";
/// How long anything the bot should do may take on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(30);

fn guild() -> GuildSpec {
    GuildSpec::new(GUILD, "team")
        .text_channel(CHANNEL, "agent")
        .text_channel(CHANNEL + 1, "chatter")
}

/// A loopback port nothing listens on.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// A fake model server that lists `model` on `GET /v1/models`.
async fn model_server(model: &str) -> FakeLlm {
    let llm = FakeLlm::start(Vec::new()).await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"object": "list", "data": [{"id": model, "object": "model"}]}),
            ),
        )
        .mount(&llm.server)
        .await;
    // As llama.cpp's server says its window.
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"default_generation_settings": {"n_ctx": 4096}})),
        )
        .mount(&llm.server)
        .await;
    llm
}

/// What the bot is started with, as environment variables.
struct Launch {
    env: Vec<(String, String)>,
    /// The state database's URL; SQLite in the test's directory unless set.
    store_url: Option<String>,
}

impl Launch {
    /// Served channel `CHANNEL` in `GUILD`, the model server at `llm_url`.
    fn new(discord: &FakeDiscord, llm_url: &str) -> Self {
        Self {
            env: vec![
                ("RISKGATE__DISCORD__API_BASE_URL".into(), discord.base_url()),
                ("RISKGATE__DISCORD__GUILD_ID".into(), GUILD.to_string()),
                ("RISKGATE__DISCORD__CHANNELS".into(), CHANNEL.to_string()),
                ("RISKGATE__LLM__BASE_URL".into(), llm_url.to_owned()),
                ("RISKGATE__LLM__MODEL".into(), "tiny".into()),
            ],
            store_url: None,
        }
    }

    fn set(mut self, name: &str, value: &str) -> Self {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    fn unset(mut self, name: &str) -> Self {
        self.env.retain(|(n, _)| n != name);
        self
    }

    fn start(self) -> Bot {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let store_url = self
            .store_url
            .unwrap_or_else(|| format!("sqlite://{}", dir.path().join("state.db").display()));
        let mut command = Command::new(env!("CARGO_BIN_EXE_riskgate"));
        command
            .arg("run")
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("DISCORD_TOKEN", TOKEN)
            .env("OPENAI_API_KEY", API_KEY)
            .env("RISKGATE__STORE__URL", store_url)
            .env("RISKGATE__TOOLS__WORKSPACE", dir.path().join("workspace"))
            .env(
                "RISKGATE__OBSERVABILITY__LISTEN",
                format!("127.0.0.1:{port}"),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("start riskgate run");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let collected = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                collected.lock().expect("lines").push(line);
            }
        });
        Bot {
            child,
            lines,
            health: format!("http://127.0.0.1:{port}/healthz"),
            _dir: dir,
        }
    }
}

/// `riskgate run`, killed when dropped.
struct Bot {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    health: String,
    _dir: tempfile::TempDir,
}

impl Bot {
    fn stderr(&self) -> String {
        self.lines.lock().expect("lines").join("\n")
    }

    /// Waits for a line of stderr containing `text`; fails with everything printed.
    async fn line(&self, text: &str) -> String {
        let found = discord::poll(PATIENCE, || {
            let lines = self.lines.lock().expect("lines");
            lines.iter().find(|l| l.contains(text)).cloned()
        })
        .await;
        found.unwrap_or_else(|| {
            panic!(
                "no line with {text:?} within {PATIENCE:?}; stderr:\n{}",
                self.stderr()
            )
        })
    }

    /// The exit status, waiting at most [`PATIENCE`].
    async fn exit(&mut self) -> ExitStatus {
        let child = &mut self.child;
        let status = discord::poll(PATIENCE, || child.try_wait().expect("try_wait")).await;
        let Some(status) = status else {
            panic!(
                "riskgate run still running after {PATIENCE:?}; stderr:\n{}",
                self.stderr()
            )
        };
        // Let the reader thread take the last lines.
        tokio::time::sleep(Duration::from_millis(200)).await;
        status
    }

    /// `/healthz`'s status and body; `None` while nothing answers there.
    async fn healthz(&self) -> Option<(u16, String)> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("client");
        let response = client.get(&self.health).send().await.ok()?;
        let status = response.status().as_u16();
        Some((status, response.text().await.unwrap_or_default()))
    }

    /// Polls `/healthz` until it answers `status`; returns the body.
    async fn health_becomes(&self, status: u16) -> String {
        let started = Instant::now();
        let mut last = None;
        loop {
            if let Some((got, body)) = self.healthz().await {
                if got == status {
                    return body;
                }
                last = Some((got, body));
            }
            assert!(
                started.elapsed() < PATIENCE,
                "/healthz did not answer {status} within {PATIENCE:?}; last: {last:?}; stderr:\n{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn assert_no_secret(&self) {
        let stderr = self.stderr();
        for secret in [TOKEN, API_KEY, URL_PASSWORD] {
            assert!(!stderr.contains(secret), "{secret} printed:\n{stderr}");
        }
    }
}

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The start-up line (it starts the same way whatever the bot sees).
const START_LINE: &str = "connected to Discord as application";

#[tokio::test(flavor = "multi_thread")]
async fn a_working_bot_says_what_it_serves_in_one_line_at_the_default_level() {
    let discord = FakeDiscord::start(vec![guild()]).await;
    let llm = model_server("tiny").await;
    let bot = Launch::new(&discord, &llm.base_url()).start();

    let line = bot.line(START_LINE).await;
    assert!(line.contains(" INFO riskgate::status: "), "{line}");
    let expected = format!(
        "connected to Discord as application \"{APP_NAME}\" (id {APP_ID}); in 1 server: team (id {GUILD}); serving 1 of 1 channels in discord.channels: #agent (id {CHANNEL}) in team; slash commands registered in team (discord.guild_id = {GUILD}); model server answered at {} (1 models, llm.model \"tiny\" among them); context window 4096 tokens (llama.cpp's /props (n_ctx))",
        llm.base_url()
    );
    assert!(
        line.ends_with(&expected),
        "{line}\nexpected it to end with\n{expected}"
    );
    let stderr = bot.stderr();
    assert_eq!(stderr.matches(START_LINE).count(), 1, "{stderr}");
    // Nothing in the report is wrong, so it has no warning.
    assert!(!stderr.contains(" WARN riskgate::status"), "{stderr}");
    // The model server was asked for its list and where servers state their window, and
    // nothing was generated.
    let asked = llm.server.received_requests().await.unwrap_or_default();
    let mut paths: Vec<&str> = asked.iter().map(|r| r.url.path()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        ["/api/show", "/props", "/v1/models", "/v1/models"],
        "{asked:?}"
    );
    let body = bot.health_becomes(200).await;
    assert_eq!(
        body,
        format!(
            "ok\ndiscord: connected\nstate database: answering\nmodel server: answered at {} (1 models, llm.model \"tiny\" among them); context window 4096 tokens (llama.cpp's /props (n_ctx))\n",
            llm.base_url()
        )
    );
    // `/status` shows the window the check at start resolved, and that nothing was spent.
    discord
        .slash_command(
            CHANNEL,
            "status",
            json!([]),
            &UserSpec::new(3_000_000_000_000_000_001, "alice"),
        )
        .await;
    let answer = discord
        .wait_for_request(|r| r.path.ends_with("/callback"), PATIENCE)
        .await;
    let content = answer.at("/data/content").as_str().unwrap_or_default();
    assert!(
        content.contains("\nContext window: 4096 tokens (llama.cpp's /props (n_ctx))\nTokens since the bot started: none reported"),
        "{content}"
    );
    bot.assert_no_secret();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bot_in_no_server_says_how_to_invite_it_and_names_each_unseen_channel() {
    let discord = FakeDiscord::start(Vec::new()).await;
    let llm = model_server("tiny").await;
    let bot = Launch::new(&discord, &llm.base_url())
        .unset("RISKGATE__DISCORD__GUILD_ID")
        .set(
            "RISKGATE__DISCORD__CHANNELS",
            &format!("{CHANNEL},{ELSEWHERE}"),
        )
        .start();

    let line = bot.line(START_LINE).await;
    assert!(
        line.contains("in no server; serving 0 of 2 channels in discord.channels; slash commands registered globally"),
        "{line}"
    );
    let invite = format!(
        "https://discord.com/oauth2/authorize?client_id={APP_ID}&scope=bot%20applications.commands&permissions=274878008320"
    );
    let nobody = bot.line("the bot is in no Discord server").await;
    assert!(nobody.contains(" WARN riskgate::status: "), "{nobody}");
    assert!(
        nobody.ends_with(&format!(
            "the bot is in no Discord server, so nobody can talk to it: invite it with {invite}"
        )),
        "{nobody}"
    );
    let unseen = bot.line("the bot cannot see").await;
    assert!(
        unseen.contains(&format!(
            "the bot cannot see 2 of the 2 channels in discord.channels: {CHANNEL}, in no server the bot is in; {ELSEWHERE}, in no server the bot is in; messages there are never answered. Invite the bot to the server that has them ({invite}) and let its role View Channels there, or fix discord.channels"
        )),
        "{unseen}"
    );
    bot.assert_no_secret();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_channel_the_bots_role_may_not_view_is_named_with_the_permission() {
    use discord::perms;
    let hidden = perms::DEFAULT & !perms::VIEW_CHANNEL;
    let discord = FakeDiscord::start(vec![
        guild().everyone_permissions(hidden).bot_permissions(hidden),
    ])
    .await;
    let llm = model_server("tiny").await;
    let bot = Launch::new(&discord, &llm.base_url()).start();

    let line = bot.line(START_LINE).await;
    assert!(
        line.contains("serving 0 of 1 channels in discord.channels;"),
        "{line}"
    );
    let unseen = bot.line("the bot cannot see").await;
    assert!(
        unseen.contains(&format!(
            "the bot cannot see 1 of the 1 channels in discord.channels: #agent (id {CHANNEL}) in team, where the bot's role lacks View Channels;"
        )),
        "{unseen}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_server_that_is_down_is_a_warning_beside_the_start_not_before_it() {
    let discord = FakeDiscord::start(vec![guild()]).await;
    // Connections are accepted and never answered: the check waits its whole time.
    let black_hole = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = black_hole.local_addr().expect("address");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in black_hole.incoming().flatten() {
            held.push(stream);
        }
    });
    let llm_url = format!("http://user:{URL_PASSWORD}@{address}/v1");
    let bot = Launch::new(&discord, &llm_url).start();

    let warning = bot.line("the model server (llm.base_url)").await;
    assert!(warning.contains(" WARN riskgate::status: "), "{warning}");
    assert!(
        warning.ends_with(&format!(
            "the model server (llm.base_url) did not answer at http://user:redacted@{address}/v1 (no answer within 5 s): check llm.base_url and that the model server runs; the bot runs meanwhile, answering each message with the model server's error"
        )),
        "{warning}"
    );
    // The check ran beside the connecting: the commands were registered (after READY)
    // while the model server was still being waited for.
    let registered = discord
        .requests()
        .iter()
        .any(|r| r.method == "PUT" && r.path.ends_with("/commands"));
    assert!(registered, "the start waited for the model server");
    let line = bot.line(START_LINE).await;
    assert!(
        line.contains(&format!(
            "; model server FAILING: did not answer at http://user:redacted@{address}/v1"
        )),
        "{line}"
    );
    // A model server that is away does not make the bot unhealthy; /healthz says so.
    let body = bot.health_becomes(200).await;
    assert!(
        body.contains("\nmodel server: FAILING: did not answer at"),
        "{body}"
    );
    bot.assert_no_secret();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_server_that_refuses_the_connection_is_named_at_once() {
    let discord = FakeDiscord::start(vec![guild()]).await;
    let llm_url = format!("http://127.0.0.1:{}/v1", free_port());
    let bot = Launch::new(&discord, &llm_url).start();
    let warning = bot.line("the model server (llm.base_url)").await;
    assert!(
        warning.contains(&format!("did not answer at {llm_url} (")),
        "{warning}"
    );
    assert!(
        warning.contains("check llm.base_url and that the model server runs"),
        "{warning}"
    );
    bot.assert_no_secret();
}

#[tokio::test(flavor = "multi_thread")]
async fn healthz_is_503_until_discord_is_ready_and_while_the_gateway_stays_down() {
    let discord = FakeDiscord::start(vec![guild()]).await;
    discord.refuse(Refusals {
        gateway_offline: true,
        ..Refusals::default()
    });
    let llm = model_server("tiny").await;
    let bot = Launch::new(&discord, &llm.base_url())
        .set("RISKGATE__OBSERVABILITY__GATEWAY_GRACE_SECS", "1")
        .start();

    let body = bot.health_becomes(503).await;
    assert!(
        body.starts_with("unavailable: discord: connecting (the gateway has not sent READY yet)"),
        "{body}"
    );
    assert!(discord.identifies().is_empty());

    discord.refuse(Refusals::default());
    let body = bot.health_becomes(200).await;
    assert!(body.starts_with("ok\ndiscord: connected\n"), "{body}");
    assert_eq!(discord.identifies().len(), 1);

    // Discord goes away: within the grace it is reconnecting, then unhealthy.
    discord.refuse(Refusals {
        gateway_offline: true,
        ..Refusals::default()
    });
    assert_eq!(discord.drop_gateway().await, 1);
    let body = bot.health_becomes(503).await;
    assert!(
        body.starts_with("unavailable: discord: gateway disconnected for "),
        "{body}"
    );
    assert!(
        body.contains("(more than observability.gateway_grace_secs = 1)"),
        "{body}"
    );
    // And back.
    discord.refuse(Refusals::default());
    let body = bot.health_becomes(200).await;
    assert!(body.starts_with("ok\ndiscord: connected\n"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn healthz_is_503_while_the_state_database_is_unreachable() {
    let Some(schema) = TestSchema::named("ops").await else {
        say_skipped!("skipped: RISKGATE_TEST_POSTGRES_URL is not set");
        return;
    };
    let proxy = PgProxy::start(&schema.admin_url).await;
    let discord = FakeDiscord::start(vec![guild()]).await;
    let llm = model_server("tiny").await;
    let mut launch = Launch::new(&discord, &llm.base_url());
    launch.store_url = Some(proxy.url(&schema.url));
    let bot = launch.start();

    let body = bot.health_becomes(200).await;
    assert!(body.contains("\nstate database: answering\n"), "{body}");

    proxy.go_down();
    let body = bot.health_becomes(503).await;
    assert!(
        body.starts_with("unavailable: state database: unreachable ("),
        "{body}"
    );
    assert!(body.contains("\ndiscord: connected\n"), "{body}");
    // Probes in a row keep answering (the check is bounded and its answer reused), instead
    // of hanging on the database.
    for _ in 0..5 {
        let (status, again) = bot.healthz().await.expect("healthz answers");
        assert_eq!(status, 503);
        assert!(again.contains("state database: unreachable"), "{again}");
    }

    proxy.come_up();
    let body = bot.health_becomes(200).await;
    assert!(body.contains("\nstate database: answering\n"), "{body}");
}

/// Starts the bot against a fake Discord that refuses it as `refusals` says, and waits
/// for it to exit with 2 without printing a secret; returns the fake, the last line of
/// stderr (what the process said as it ended) and the whole of it.
async fn refused(refusals: Refusals) -> (FakeDiscord, String, String) {
    let discord = FakeDiscord::start(vec![guild()]).await;
    discord.refuse(refusals);
    let llm = model_server("tiny").await;
    let mut bot = Launch::new(&discord, &llm.base_url()).start();
    let status = bot.exit().await;
    let stderr = bot.stderr();
    bot.assert_no_secret();
    assert_eq!(status.code(), Some(2), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default().to_owned();
    (discord, last, stderr)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_token_ends_the_bot_naming_the_setting_and_never_the_token() {
    // Refused at the first question (REST), or only at IDENTIFY, as when the token is reset
    // between the two: the same advice, and how Discord said it.
    for (refusals, said, identifies) in [
        (
            Refusals {
                token_on_rest: true,
                token_on_gateway: true,
                ..Refusals::default()
            },
            "the API answered 401 Unauthorized",
            0,
        ),
        (
            Refusals {
                token_on_gateway: true,
                ..Refusals::default()
            },
            "the gateway closed with 4004 Authentication failed",
            1,
        ),
    ] {
        let (discord, last, stderr) = refused(refusals).await;
        assert_eq!(
            last,
            format!(
                "riskgate: Discord refused the bot token ({said}): set discord.token, or DISCORD_TOKEN (DISCORD_TOKEN_FILE for a file holding it), to the token on your application's Bot page in the developer portal (https://discord.com/developers/applications > your application > Bot > Reset Token); the client secret and the public key are not the token"
            )
        );
        assert!(!stderr.contains(START_LINE), "{stderr}");
        let sent = discord.identifies();
        assert_eq!(sent.len(), identifies, "{said}: {sent:?}");
        assert!(sent.iter().all(|i| i.token == format!("Bot {TOKEN}")));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_message_content_intent_ends_the_bot_saying_where_to_enable_it() {
    let (discord, last, _) = refused(Refusals {
        disallowed_intents: MESSAGE_CONTENT_INTENT,
        ..Refusals::default()
    })
    .await;
    assert_eq!(
        last,
        "riskgate: Discord refused the Message Content intent (the gateway closed with 4014 Disallowed intent(s)): in the developer portal (https://discord.com/developers/applications > your application > Bot > Privileged Gateway Intents) turn on Message Content Intent, save, and start riskgate again"
    );
    // It asked for the intent, and was refused for it.
    let identifies = discord.identifies();
    assert_eq!(identifies.len(), 1, "{identifies:?}");
    assert_ne!(identifies[0].intents & MESSAGE_CONTENT_INTENT, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guild_the_bot_is_not_in_is_named_and_the_bot_keeps_serving() {
    const WRONG: u64 = 1_600_000_000_000_000_000;
    let discord = FakeDiscord::start(vec![guild()]).await;
    let llm = model_server("tiny").await;
    let mut bot = Launch::new(&discord, &llm.base_url())
        .set("RISKGATE__DISCORD__GUILD_ID", &WRONG.to_string())
        .start();

    let warning = bot.line("slash commands could not be registered").await;
    assert!(warning.contains(" WARN riskgate::status: "), "{warning}");
    assert!(
        warning.ends_with(&format!(
            "slash commands could not be registered in discord.guild_id = {WRONG} (Discord answered 403 Missing Access, code 50001): the bot is not in that server. Invite the bot there with https://discord.com/oauth2/authorize?client_id={APP_ID}&scope=bot%20applications.commands&permissions=274878008320, or fix discord.guild_id (Developer Mode on, right-click the server > Copy Server ID). Messages in served channels are still answered; /status, /mode and the other slash commands are missing until then"
        )),
        "{warning}"
    );
    let line = bot.line(START_LINE).await;
    assert!(line.contains("; slash commands NOT registered;"), "{line}");
    assert_eq!(
        bot.stderr().matches("discord.guild_id = ").count(),
        1,
        "one warning names the setting:\n{}",
        bot.stderr()
    );
    // Still running and healthy: the served channel works without slash commands.
    assert_eq!(bot.health_becomes(200).await.lines().next(), Some("ok"));
    assert!(bot.child.try_wait().expect("try_wait").is_none());
    bot.assert_no_secret();
}
