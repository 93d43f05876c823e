//! A click decides only the approval of the message it was made on, and a decision made in
//! any process reaches the run waiting for it in any other. Proven by effects: mostly through
//! the real `riskgate run` binary against the fake Discord and the fake model (files an
//! approved call would append to, the approvals as stored, the messages as Discord holds
//! them), in-process where the store must lag or fail on cue, and at the store the watch
//! reads, on SQLite and on PostgreSQL (`RISKGATE_TEST_POSTGRES_URL`).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use riskgate::config::Settings;
use riskgate::core::ports::{ApprovalRecord, ApprovalStatus, Store};
use riskgate::discord::Bot;
use riskgate::store::{MemoryStore, SqlStore};
use serde_json::{Value, json};
use support::fake_discord::{self as discord, FakeDiscord, GuildSpec, UserSpec, WAIT};
use support::fake_llm::{self, FakeLlm, Scripted};
use support::hooked_store::{Hook, HookedStore};
use support::pg_schema::{POSTGRES_ENV, TestSchema};

const GUILD: u64 = 2_000_000_000_000_000_000;
const FIRST: u64 = GUILD + 100;
const SECOND: u64 = GUILD + 200;
const THREAD: u64 = GUILD + 300;
const APPROVER_ROLE: u64 = GUILD + 900;

/// What a refused click is told (`discord/approvals.rs`).
const NOT_ITS_APPROVAL: &str = "This button does not belong to that approval request";
const NOT_RECORDED_YET: &str = "This request's message is not recorded yet";

fn alice() -> UserSpec {
    UserSpec::new(3_000_000_000_000_000_001, "alice")
}

fn guild() -> GuildSpec {
    GuildSpec::new(GUILD, "team")
        .text_channel(FIRST, "first")
        .text_channel(SECOND, "second")
        .thread(THREAD, FIRST, "a thread")
        .role(APPROVER_ROLE, "approvers", discord::perms::DEFAULT)
}

/// The model appends "hello" to `file`: a call that needs a click, and that leaves
/// "hellohello" behind if it ever ran twice.
fn append_hello(call_id: &str, file: &str) -> Scripted {
    fake_llm::tool_calls(&[(
        call_id,
        "file_operations",
        json!({"operation": "append", "path": file, "content": "hello"}),
    )])
}

/// The settings of a bot serving `channels` of the fake, as the `RISKGATE__` variables the
/// binary reads; an in-process bot reads the same through `Settings::load_from`.
fn bot_env(
    discord: &FakeDiscord,
    llm: &FakeLlm,
    store_url: &str,
    workspace: &Path,
    channels: &[u64],
) -> Vec<(String, String)> {
    let list = |ids: &[u64]| ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    [
        ("DISCORD_TOKEN", "fake-token".to_owned()),
        ("RISKGATE__DISCORD__API_BASE_URL", discord.base_url()),
        ("RISKGATE__DISCORD__CHANNELS", list(channels)),
        (
            "RISKGATE__DISCORD__APPROVER_ROLES",
            APPROVER_ROLE.to_string(),
        ),
        ("RISKGATE__DISCORD__RETRY_BASE_MS", "10".to_owned()),
        ("RISKGATE__LLM__BASE_URL", llm.base_url()),
        ("RISKGATE__LLM__RETRY_BASE_DELAY_MS", "10".to_owned()),
        ("RISKGATE__STORE__URL", store_url.to_owned()),
        (
            "RISKGATE__TOOLS__WORKSPACE",
            workspace.display().to_string(),
        ),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

/// How many times bots registered their slash commands: each does once it is connected.
fn registrations(discord: &FakeDiscord) -> usize {
    discord
        .requests()
        .iter()
        .filter(|r| r.method == "PUT" && r.path.contains("/commands"))
        .count()
}

/// Whether `count` bots have connected within 30 s.
async fn registered(discord: &FakeDiscord, count: usize) -> bool {
    discord::poll(Duration::from_secs(30), || {
        (registrations(discord) >= count).then_some(())
    })
    .await
    .is_some()
}

/// A `riskgate run` process, killed when dropped; its log goes to a file.
struct BotProcess {
    child: Child,
    log: PathBuf,
}

impl BotProcess {
    /// Starts the binary with `env` and waits until it has registered its commands.
    async fn start(
        discord: &FakeDiscord,
        env: &[(String, String)],
        dir: &Path,
        name: &str,
    ) -> Self {
        let before = registrations(discord);
        let log = dir.join(format!("{name}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_riskgate"))
            .arg("run")
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("RISKGATE_LOG", "info")
            .envs(env.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start riskgate run");
        let mut process = Self { child, log };
        if !registered(discord, before + 1).await {
            let exited = process.child.try_wait().ok().flatten();
            panic!(
                "{name} did not connect within 30 s (exited: {exited:?}):\n{}",
                process.log()
            );
        }
        process
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends `signal` (SIGSTOP to freeze it, SIGCONT to let it go on).
    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: `pid` is our own child, not yet waited for, so the id is still its own.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill failed");
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The newest message with buttons in `channel`, once there is one: its id, and the id of
/// the approval its Confirm button names.
async fn approval_in(discord: &FakeDiscord, channel: u64) -> (u64, String) {
    let found = discord::poll(WAIT, || {
        discord
            .messages_in(channel)
            .into_iter()
            .rev()
            .find(|m| m["components"].as_array().is_some_and(|c| !c.is_empty()))
    })
    .await
    .unwrap_or_else(|| panic!("no approval posted in {channel}: {:#?}", discord.requests()));
    let confirm = found["components"][0]["components"][0]["custom_id"]
        .as_str()
        .expect("a Confirm button");
    let approval = confirm
        .strip_prefix("riskgate:confirm:")
        .expect("our custom id");
    (discord::id_of(&found["id"]), approval.to_owned())
}

/// The private answer an interaction got: its callback, or the follow-up after an
/// acknowledgement when the bot took longer than two seconds.
async fn private_answer(discord: &FakeDiscord, interaction: &Value) -> String {
    let token = interaction["token"].as_str().expect("token").to_owned();
    let answer = discord
        .wait_for_request(
            |r| {
                r.path.contains(&token)
                    && (r.at("/data/flags") == &json!(64) || r.at("/flags") == &json!(64))
            },
            WAIT,
        )
        .await;
    let content = answer
        .at("/data/content")
        .as_str()
        .or(answer.at("/content").as_str());
    content.expect("a text answer").to_owned()
}

/// Posts that say the confirmed call ran, or that it ran after a resume, in `channel`.
fn posts_in(discord: &FakeDiscord, channel: u64, containing: &str) -> usize {
    let path = format!("/api/v10/channels/{channel}/messages");
    discord
        .requests()
        .iter()
        .filter(|r| {
            r.method == "POST"
                && r.path == path
                && r.at("/content")
                    .as_str()
                    .is_some_and(|c| c.contains(containing))
        })
        .count()
}

/// Waits for the answer to `click` that settles its message as confirmed (buttons removed).
async fn settles_as_confirmed(discord: &FakeDiscord, click: &Value) {
    let token = click["token"].as_str().expect("token").to_owned();
    let settled = discord
        .wait_for_request(
            |r| r.path.contains(&token) && r.at("/type") == &json!(7),
            WAIT,
        )
        .await;
    let content = settled.at("/data/content").as_str().unwrap_or_default();
    assert!(content.contains("Confirmed by"), "{settled:?}");
    assert_eq!(
        settled.at("/data/components"),
        &json!([]),
        "buttons removed"
    );
}

/// Whether `text` is posted in `channel` within `within`, exactly once by then.
async fn posted_once(discord: &FakeDiscord, channel: u64, text: &str, within: Duration) -> bool {
    discord::poll(within, || {
        (posts_in(discord, channel, text) == 1).then_some(())
    })
    .await
    .is_some()
}

fn has_buttons(discord: &FakeDiscord, message: u64) -> bool {
    discord
        .message(message)
        .and_then(|m| m["components"].as_array().map(|c| !c.is_empty()))
        .unwrap_or(false)
}

async fn stored(store: &dyn Store, id: &str) -> ApprovalRecord {
    store
        .approval(id)
        .await
        .expect("read the approval")
        .expect("the approval is stored")
}

// ---------------------------------------------------------------------------------------------
// Through the binary.

/// Two served channels each wait for a person. A click on the first channel's message that
/// names the second channel's approval (and a reason modal the other way round) decides
/// nothing: both stay pending, neither call ran, both messages keep their buttons, the
/// clicker is told privately. The right click afterwards still works, for its own call only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_click_decides_nothing_and_the_right_one_still_works() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().join("workspace");
    std::fs::create_dir(&workspace).expect("workspace");
    let discord = FakeDiscord::start(vec![guild()]).await;
    let llm = FakeLlm::start(vec![
        append_hello("c1", "first.txt"),
        append_hello("c2", "second.txt"),
        fake_llm::text("Written."),
    ])
    .await;
    let url = format!("sqlite://{}", dir.path().join("state.db").display());
    let env = bot_env(&discord, &llm, &url, &workspace, &[FIRST, SECOND]);
    let _bot = BotProcess::start(&discord, &env, dir.path(), "bot").await;

    discord
        .message_create(FIRST, &alice(), "add hello to first.txt", &[])
        .await;
    let (first_message, first_id) = approval_in(&discord, FIRST).await;
    discord
        .message_create(SECOND, &alice(), "add hello to second.txt", &[])
        .await;
    let (second_message, second_id) = approval_in(&discord, SECOND).await;

    let forged = discord
        .component_click(
            first_message,
            &format!("riskgate:confirm:{second_id}"),
            &alice(),
        )
        .await;
    let told = private_answer(&discord, &forged).await;
    assert!(told.starts_with(NOT_ITS_APPROVAL), "{told}");
    let forged_modal = discord
        .modal_submit(
            second_message,
            &format!("riskgate:reason:{first_id}"),
            &[("reason", "do something else")],
            &alice(),
        )
        .await;
    let told = private_answer(&discord, &forged_modal).await;
    assert!(told.starts_with(NOT_ITS_APPROVAL), "{told}");

    let store = SqlStore::connect(&url).await.expect("the bot's store");
    for id in [&first_id, &second_id] {
        let approval = stored(&store, id).await;
        assert_eq!(approval.status, ApprovalStatus::Pending, "{approval:?}");
        assert_eq!(approval.decided_by, None);
        assert_eq!(approval.note, None);
    }
    assert!(!workspace.join("first.txt").exists(), "nothing ran");
    assert!(!workspace.join("second.txt").exists(), "nothing ran");
    assert!(has_buttons(&discord, first_message) && has_buttons(&discord, second_message));
    assert!(
        !discord
            .requests()
            .iter()
            .any(|r| r.method == "PATCH" || r.at("/type") == &json!(7)),
        "no message was edited"
    );
    assert_eq!(
        llm.requests().await.len(),
        2,
        "the model was not asked again"
    );

    let right = discord
        .component_click(
            first_message,
            &format!("riskgate:confirm:{first_id}"),
            &alice(),
        )
        .await;
    settles_as_confirmed(&discord, &right).await;
    assert!(
        posted_once(&discord, FIRST, "Written.", WAIT).await,
        "the first run went on"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("first.txt")).expect("appended"),
        "hello"
    );
    assert!(!workspace.join("second.txt").exists());
    assert_eq!(
        stored(&store, &second_id).await.status,
        ApprovalStatus::Pending,
        "the other approval is untouched"
    );
    assert!(has_buttons(&discord, second_message));
    store.close().await;
}

/// An approval asked for in a thread of a served channel is posted and answered in the
/// thread; a button in the parent channel that names it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_in_a_thread_is_answered_in_the_thread_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().join("workspace");
    std::fs::create_dir(&workspace).expect("workspace");
    let discord = FakeDiscord::start(vec![guild()]).await;
    let llm = FakeLlm::start(vec![
        append_hello("c1", "thread.txt"),
        fake_llm::text("Written."),
    ])
    .await;
    let url = format!("sqlite://{}", dir.path().join("state.db").display());
    let env = bot_env(&discord, &llm, &url, &workspace, &[FIRST]);
    let _bot = BotProcess::start(&discord, &env, dir.path(), "bot").await;

    discord
        .message_create(THREAD, &alice(), "add hello to thread.txt", &[])
        .await;
    let (message, id) = approval_in(&discord, THREAD).await;
    // A message in the parent channel (another bot's: the relay ignores it).
    let elsewhere = discord
        .message_create(
            FIRST,
            &UserSpec::bot(4_000_000_000_000_000_001, "other"),
            "hi",
            &[],
        )
        .await;
    let forged = discord
        .component_click(
            discord::id_of(&elsewhere["id"]),
            &format!("riskgate:confirm:{id}"),
            &alice(),
        )
        .await;
    let told = private_answer(&discord, &forged).await;
    assert!(told.starts_with(NOT_ITS_APPROVAL), "{told}");
    let store = SqlStore::connect(&url).await.expect("the bot's store");
    assert_eq!(stored(&store, &id).await.status, ApprovalStatus::Pending);
    assert!(!workspace.join("thread.txt").exists());
    assert!(has_buttons(&discord, message));

    discord
        .component_click(message, &format!("riskgate:confirm:{id}"), &alice())
        .await;
    assert!(
        posted_once(&discord, THREAD, "Written.", WAIT).await,
        "the run in the thread went on"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("thread.txt")).expect("appended"),
        "hello"
    );
    assert_eq!(stored(&store, &id).await.status, ApprovalStatus::Confirmed);
    store.close().await;
}

/// Two `riskgate run` processes share one store and serve one shard of two each: A the
/// shard of the fixture's guild, B the other.
struct TwoProcesses {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    discord: FakeDiscord,
    llm: FakeLlm,
    /// Where the run starts and waits.
    a: BotProcess,
    /// Where the click arrives.
    b: BotProcess,
    /// B's shard.
    b_shard: u32,
    store_url: String,
}

/// A second guild on the other shard of two than the fixture's, so process B serves
/// something of its own.
fn guild_on_the_other_shard() -> GuildSpec {
    let mut id = GUILD + (1 << 22);
    while discord::shard_of(Some(id), 2) == discord::shard_of(Some(GUILD), 2) {
        id += 1 << 22;
    }
    GuildSpec::new(id, "other").text_channel(id + 7, "agent")
}

impl TwoProcesses {
    async fn start(store_url: &str, script: Vec<Scripted>) -> Self {
        let a_shard = discord::shard_of(Some(GUILD), 2);
        let b_shard = 1 - a_shard;
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = dir.path().join("workspace");
        std::fs::create_dir(&workspace).expect("workspace");
        let discord = FakeDiscord::start(vec![guild(), guild_on_the_other_shard()]).await;
        let llm = FakeLlm::start(script).await;
        let on_shard = |shard: u32| {
            let mut env = bot_env(&discord, &llm, store_url, &workspace, &[FIRST, SECOND]);
            for (key, value) in [
                ("RISKGATE__DISCORD__SHARD_TOTAL", "2"),
                ("RISKGATE__DISCORD__SHARD_FIRST", &shard.to_string()),
                ("RISKGATE__DISCORD__SHARD_LAST", &shard.to_string()),
            ] {
                env.push((key.to_owned(), value.to_owned()));
            }
            env
        };
        let a = BotProcess::start(&discord, &on_shard(a_shard), dir.path(), "a").await;
        let b = BotProcess::start(&discord, &on_shard(b_shard), dir.path(), "b").await;
        discord.wait_for_connections(2, WAIT).await;
        let shards: Vec<[u32; 2]> = discord.identifies().iter().map(|i| i.shard).collect();
        assert!(
            shards.contains(&[0, 2]) && shards.contains(&[1, 2]),
            "{shards:?}"
        );
        Self {
            _dir: dir,
            workspace,
            discord,
            llm,
            a,
            b,
            b_shard,
            store_url: store_url.to_owned(),
        }
    }

    /// Alice asks in the first channel (process A's); returns the approval message and id
    /// once A has recorded which message shows it.
    async fn alice_asks(&self) -> (u64, String) {
        self.discord
            .message_create(FIRST, &alice(), "add hello to notes.txt", &[])
            .await;
        let (message, id) = approval_in(&self.discord, FIRST).await;
        let store = SqlStore::connect(&self.store_url).await.expect("store");
        let deadline = Instant::now() + WAIT;
        while stored(&store, &id).await.message_ref.is_none() {
            assert!(
                Instant::now() < deadline,
                "A never recorded the approval's message"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        store.close().await;
        (message, id)
    }

    /// Confirms on B's shard and waits for B's answer to the click.
    async fn confirm_in_b(&self, message: u64, id: &str) -> Instant {
        let clicked = Instant::now();
        let click = self
            .discord
            .component_click_on_shard(
                self.b_shard,
                message,
                &format!("riskgate:confirm:{id}"),
                &alice(),
            )
            .await;
        settles_as_confirmed(&self.discord, &click).await;
        clicked
    }

    /// Sends another message in the first channel and waits for its answer.
    async fn next_message_is_answered(&self, answer: &str) {
        self.discord
            .message_create(FIRST, &alice(), "and now?", &[])
            .await;
        let answered = posted_once(&self.discord, FIRST, answer, WAIT).await;
        assert!(
            answered,
            "the first channel was not free for the next message: {:#?}\nA: {}\nB: {}",
            self.discord.requests(),
            self.a.log(),
            self.b.log()
        );
    }

    /// The call ran once, and the channel saw one result, one reply and no notice of a
    /// copy that stopped or resumed.
    async fn ran_once(&self) {
        assert_eq!(
            std::fs::read_to_string(self.workspace.join("notes.txt")).expect("appended"),
            "hello",
            "the call ran exactly once"
        );
        assert_eq!(posts_in(&self.discord, FIRST, "ran after confirmation"), 1);
        assert_eq!(posts_in(&self.discord, FIRST, "Written."), 1);
        for quiet in ["did not run", "continued elsewhere"] {
            assert_eq!(posts_in(&self.discord, FIRST, quiet), 0, "{quiet}");
        }
        assert_eq!(
            self.llm.requests().await.len(),
            3,
            "the model was asked for the call, after it, and for the next message"
        );
    }
}

/// The run waits in process A; the click is handled by process B. A's watch learns of the
/// decision within about a second and A's own run goes on (it holds the call's reading and
/// its channel's queue); B leaves it to A. The call runs once, and A's channel is free for
/// the next message long before the approval's ten-minute expiry.
async fn a_click_in_one_process_wakes_the_run_waiting_in_another(store_url: &str) {
    let two = TwoProcesses::start(
        store_url,
        vec![
            append_hello("c1", "notes.txt"),
            fake_llm::text("Written."),
            fake_llm::text("Second answer."),
        ],
    )
    .await;
    let (message, id) = two.alice_asks().await;
    let clicked = two.confirm_in_b(message, &id).await;
    let went_on = posted_once(&two.discord, FIRST, "Written.", WAIT).await;
    assert!(
        went_on,
        "the run in A did not go on\nA: {}\nB: {}",
        two.a.log(),
        two.b.log()
    );
    // Reported, not asserted (the machine may be loaded): the poll above already bounds it
    // far below the approval's ten minutes.
    eprintln!(
        "the run in A went on {:?} after the click in B",
        clicked.elapsed()
    );
    two.next_message_is_answered("Second answer.").await;
    // Past B's handover, where B would resume the run had A not gone on.
    tokio::time::sleep(Duration::from_secs(4)).await;
    two.ran_once().await;
    assert_eq!(
        posts_in(&two.discord, FIRST, "continuing the run"),
        0,
        "the run went on where it waited, not as a copy resumed from the store"
    );
    assert!(
        two.a
            .log()
            .contains("a decision made in another process reached the run waiting here"),
        "A's watch woke its run:\n{}",
        two.a.log()
    );
    let b = two.b.log();
    assert!(
        b.contains("the run that asked waits in another process"),
        "{b}"
    );
    assert!(
        !b.contains("resuming a run"),
        "B did not resume the run: {b}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_in_one_process_wakes_the_run_waiting_in_another_on_postgres() {
    let Some(schema) = TestSchema::new().await else {
        eprintln!("skipped: {POSTGRES_ENV} not set");
        return;
    };
    a_click_in_one_process_wakes_the_run_waiting_in_another(&schema.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_in_one_process_wakes_the_run_waiting_in_another_on_a_shared_sqlite_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    a_click_in_one_process_wakes_the_run_waiting_in_another(&url).await;
}

/// The run that asked does not go on (its process A is frozen): after the handover, B
/// resumes the run from the store and runs the call. When A wakes, its run finds the
/// continuation claimed and ends without a word; A's channel takes the next message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_waiting_process_does_not_go_on_the_clicked_one_does_and_the_call_runs_once() {
    let Some(schema) = TestSchema::new().await else {
        eprintln!("skipped: {POSTGRES_ENV} not set");
        return;
    };
    let two = TwoProcesses::start(
        &schema.url,
        vec![
            append_hello("c1", "notes.txt"),
            fake_llm::text("Written."),
            fake_llm::text("Second answer."),
        ],
    )
    .await;
    let (message, id) = two.alice_asks().await;
    two.a.signal(libc::SIGSTOP);
    two.confirm_in_b(message, &id).await;
    let resumed = posted_once(&two.discord, FIRST, "Written.", Duration::from_secs(15)).await;
    two.a.signal(libc::SIGCONT);
    assert!(resumed, "B did not resume the run\nB: {}", two.b.log());
    two.next_message_is_answered("Second answer.").await;
    two.ran_once().await;
    assert_eq!(
        posts_in(&two.discord, FIRST, "continuing the run"),
        1,
        "B said it continued the run"
    );
    let store = SqlStore::connect(&schema.url).await.expect("store");
    assert_eq!(stored(&store, &id).await.status, ApprovalStatus::Confirmed);
    let history = store
        .load_history(&FIRST.to_string(), 100_000)
        .await
        .expect("history");
    let asked = history
        .iter()
        .filter(|m| {
            m.content
                .as_deref()
                .is_some_and(|c| c.contains("add hello to notes.txt"))
        })
        .count();
    assert_eq!(asked, 1, "the turn is saved once, by B: {history:#?}");
    store.close().await;
    assert!(two.b.log().contains("resuming a run"), "{}", two.b.log());
    assert!(
        two.a
            .log()
            .contains("another copy went on past its approval"),
        "{}",
        two.a.log()
    );
}

// ---------------------------------------------------------------------------------------------
// In-process, where the store must lag or fail on cue.

/// A bot in this process on `store` (a [`HookedStore`] the test makes slow or failing).
struct InProcess {
    dir: tempfile::TempDir,
    workspace: PathBuf,
    discord: FakeDiscord,
    llm: FakeLlm,
    store: Arc<HookedStore>,
    stop: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<Result<(), riskgate::discord::BotError>>,
}

impl InProcess {
    async fn start(script: Vec<Scripted>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = dir.path().join("workspace");
        std::fs::create_dir(&workspace).expect("workspace");
        let discord = FakeDiscord::start(vec![guild()]).await;
        let llm = FakeLlm::start(script).await;
        let env = bot_env(&discord, &llm, "sqlite::memory:", &workspace, &[FIRST]);
        let settings = Settings::load_from(None, env).expect("settings");
        let store = HookedStore::new(Arc::new(MemoryStore::new()));
        let model = Arc::new(riskgate::app::model_client(&settings).expect("model client"));
        let bot = Bot::build(&settings, model, store.clone())
            .await
            .expect("bot");
        let stop = bot.shutdown_token();
        let task = tokio::spawn(bot.run());
        assert!(registered(&discord, 1).await, "the bot did not connect");
        Self {
            dir,
            workspace,
            discord,
            llm,
            store,
            stop,
            task,
        }
    }

    /// Alice asks to append "hello" to notes.txt (the model then says `then`), while the
    /// store's recording of the approval's message meets `hook`.
    async fn alice_asks(then: &str, hook: Hook) -> Self {
        let bot = Self::start(vec![append_hello("c1", "notes.txt"), fake_llm::text(then)]).await;
        bot.store.hook_once("set_approval_message", hook);
        bot.discord
            .message_create(FIRST, &alice(), "add hello to notes.txt", &[])
            .await;
        bot
    }

    /// Confirms as Alice and waits for the run to say "Written."; false if it never does.
    async fn confirmed_and_written(&self, message: u64, id: &str) -> bool {
        self.discord
            .component_click(message, &format!("riskgate:confirm:{id}"), &alice())
            .await;
        posted_once(&self.discord, FIRST, "Written.", WAIT).await
    }

    async fn stop(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
        drop(self.dir);
    }

    fn notes(&self) -> Option<String> {
        std::fs::read_to_string(self.workspace.join("notes.txt")).ok()
    }
}

/// A click that comes before the store has recorded which message shows the approval waits
/// for it a moment; if it is still not recorded, the click is refused and decides nothing.
/// Once it is recorded, the same click works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_before_its_message_is_recorded_waits_for_it_and_never_decides_blindly() {
    let bot = InProcess::alice_asks("Written.", Hook::Delay(Duration::from_secs(4))).await;
    let (message, id) = approval_in(&bot.discord, FIRST).await;
    let early = bot
        .discord
        .component_click(message, &format!("riskgate:confirm:{id}"), &alice())
        .await;
    let told = private_answer(&bot.discord, &early).await;
    assert!(told.starts_with(NOT_RECORDED_YET), "{told}");
    let approval = stored(bot.store.as_ref(), &id).await;
    assert_eq!(approval.status, ApprovalStatus::Pending);
    assert_eq!(
        approval.message_ref, None,
        "still not recorded when refused"
    );
    assert_eq!(bot.notes(), None, "nothing ran");
    assert!(has_buttons(&bot.discord, message));

    discord::poll(WAIT, || {
        bot.store
            .completed()
            .contains(&"set_approval_message")
            .then_some(())
    })
    .await
    .expect("the message is recorded at last");
    assert!(
        bot.confirmed_and_written(message, &id).await,
        "the run went on"
    );
    assert_eq!(bot.notes().as_deref(), Some("hello"));
    bot.stop().await;
}

/// The same with a store that lags less than the click waits: the click is decided.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_on_a_message_recorded_a_moment_late_is_decided() {
    let bot = InProcess::alice_asks("Written.", Hook::Delay(Duration::from_millis(600))).await;
    let (message, id) = approval_in(&bot.discord, FIRST).await;
    assert!(
        bot.confirmed_and_written(message, &id).await,
        "the run went on"
    );
    assert_eq!(bot.notes().as_deref(), Some("hello"));
    bot.stop().await;
}

/// A database restart holds both the write recording the approval's message and the click's
/// read of the approval; when it is back, the read may land first. The click still waits the
/// usual moment for the message, counted from when the store answers, so one click decides:
/// it is acknowledged at once, and the message is edited to say who confirmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_whose_read_and_the_message_record_both_wait_out_an_outage_is_decided() {
    let bot = InProcess::alice_asks("Written.", Hook::Delay(Duration::from_secs(4))).await;
    let (message, id) = approval_in(&bot.discord, FIRST).await;
    // The read answers before the record lands, and later than the click's usual wait.
    bot.store
        .hook_once("approval", Hook::Delay(Duration::from_secs(3)));
    bot.discord
        .component_click(message, &format!("riskgate:confirm:{id}"), &alice())
        .await;
    let edited = bot
        .discord
        .wait_for_request(
            |r| {
                r.method == "PATCH"
                    && r.path.ends_with(&format!("/messages/{message}"))
                    && r.at("/content")
                        .as_str()
                        .is_some_and(|c| c.contains("Confirmed by"))
            },
            WAIT,
        )
        .await;
    assert_eq!(
        edited.at("/components"),
        &json!([]),
        "the buttons are removed"
    );
    assert!(
        posted_once(&bot.discord, FIRST, "Written.", WAIT).await,
        "the run went on"
    );
    assert_eq!(bot.notes().as_deref(), Some("hello"));
    let refused = bot
        .discord
        .requests()
        .iter()
        .filter(|r| {
            r.body
                .as_ref()
                .is_some_and(|b| b.to_string().contains(NOT_RECORDED_YET))
        })
        .count();
    assert_eq!(refused, 0, "the click was not refused");
    bot.stop().await;
}

/// When the store cannot record which message shows an approval, no click could ever be
/// checked against it: the request is settled at once (its buttons removed, the run ended),
/// so the channel takes the next message instead of waiting for the expiry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_whose_message_cannot_be_recorded_ends_at_once() {
    let bot =
        InProcess::alice_asks("Next answer.", Hook::Fail("the database is away".into())).await;
    let posted = bot
        .discord
        .wait_for_request(
            |r| r.method == "POST" && r.at("/components").is_array(),
            WAIT,
        )
        .await;
    let confirm = posted.at("/components/0/components/0/custom_id").as_str();
    let id = confirm
        .and_then(|c| c.strip_prefix("riskgate:confirm:"))
        .expect("the approval's Confirm button");
    let edit = bot
        .discord
        .wait_for_request(|r| r.method == "PATCH", WAIT)
        .await;
    let message: u64 = edit
        .path
        .rsplit('/')
        .next()
        .and_then(|m| m.parse().ok())
        .expect("the edited message");
    assert!(
        edit.at("/content")
            .as_str()
            .is_some_and(|c| c.contains("Not answerable")),
        "{edit:?}"
    );
    assert!(!has_buttons(&bot.discord, message));
    assert_eq!(
        stored(bot.store.as_ref(), id).await.status,
        ApprovalStatus::Undeliverable
    );
    bot.discord
        .message_create(FIRST, &alice(), "anything else?", &[])
        .await;
    assert!(
        posted_once(&bot.discord, FIRST, "Next answer.", WAIT).await,
        "the channel took the next message"
    );
    assert_eq!(bot.notes(), None, "nothing ran");
    assert_eq!(
        bot.llm.requests().await.len(),
        2,
        "the model was asked for the call and for the next message, nothing in between"
    );
    bot.stop().await;
}

// ---------------------------------------------------------------------------------------------
// The store the watch reads.

fn pending(id: &str, run_id: &str) -> ApprovalRecord {
    let now = SystemTime::now();
    ApprovalRecord {
        id: id.into(),
        run_id: run_id.into(),
        channel: FIRST.to_string(),
        requester: "alice".into(),
        tool: "file_operations".into(),
        arguments: serde_json::Map::new(),
        arguments_hash: String::new(),
        source: "default".into(),
        reason: "writes a file".into(),
        status: ApprovalStatus::Pending,
        decided_by: None,
        decided_at: None,
        created_at: now,
        expires_at: now + Duration::from_secs(600),
        message_ref: None,
        note: None,
        resume: None,
    }
}

/// What another process decided is what `settled_approvals` returns, for the ids asked
/// about only, however many (several queries past 500), read through a second store handle
/// (another process's view of the same database).
async fn the_watch_reads_what_another_process_decided(url: &str) {
    let here = SqlStore::connect(url).await.expect("store");
    let elsewhere = SqlStore::connect(url).await.expect("a second handle");
    let ids: Vec<String> = (0..1_200).map(|n| format!("a{n:04}")).collect();
    for id in &ids {
        here.create_approval(&pending(id, "run1"))
            .await
            .expect("create");
    }
    assert!(
        here.settled_approvals(&ids).await.expect("read").is_empty(),
        "nothing decided yet"
    );
    elsewhere
        .decide_approval_noted("a0007", ApprovalStatus::Cancelled, Some("bob"), Some("no"))
        .await
        .expect("decide");
    elsewhere
        .decide_approval("a1100", ApprovalStatus::Confirmed, Some("carol"))
        .await
        .expect("decide");
    elsewhere
        .expire_overdue(SystemTime::now() + Duration::from_secs(3600))
        .await
        .expect("expire");
    let mut settled = here.settled_approvals(&ids[..1_150]).await.expect("read");
    settled.sort_by(|a, b| a.id.cmp(&b.id));
    let seen: Vec<(&str, ApprovalStatus, Option<&str>)> = settled
        .iter()
        .filter(|a| a.status != ApprovalStatus::Expired)
        .map(|a| (a.id.as_str(), a.status, a.decided_by.as_deref()))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("a0007", ApprovalStatus::Cancelled, Some("bob")),
            ("a1100", ApprovalStatus::Confirmed, Some("carol")),
        ]
    );
    let cancelled = settled.iter().find(|a| a.id == "a0007").expect("a0007");
    assert_eq!(cancelled.note.as_deref(), Some("no"));
    assert_eq!(
        settled.len(),
        1_150,
        "the rest expired, and only the ids asked about"
    );
    let few = here
        .settled_approvals(&["a0007".to_owned(), "nope".to_owned()])
        .await
        .expect("read");
    assert_eq!(few.len(), 1);
    assert!(here.settled_approvals(&[]).await.expect("none").is_empty());
    here.close().await;
    elsewhere.close().await;
}

/// A run is live in the process that started it until it finishes or its heartbeat goes
/// stale; the process deciding who continues a run reads that.
async fn a_run_is_live_in_its_process_until_it_ends(url: &str) {
    let store = SqlStore::connect(url).await.expect("store");
    store.start_run("run1", "c1", "host-1").await.expect("run");
    let a_minute_ago = SystemTime::now() - Duration::from_secs(60);
    assert_eq!(
        store
            .live_run_instance("run1", a_minute_ago)
            .await
            .expect("read")
            .as_deref(),
        Some("host-1")
    );
    let soon = SystemTime::now() + Duration::from_secs(60);
    assert_eq!(
        store.live_run_instance("run1", soon).await.expect("read"),
        None,
        "a heartbeat older than the limit is stale"
    );
    assert_eq!(
        store
            .live_run_instance("nope", a_minute_ago)
            .await
            .expect("read"),
        None
    );
    store.finish_run("run1").await.expect("finish");
    assert_eq!(
        store
            .live_run_instance("run1", a_minute_ago)
            .await
            .expect("read"),
        None,
        "a finished run is not live"
    );
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_answers_the_watch_on_sqlite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("state.db").display());
    the_watch_reads_what_another_process_decided(&url).await;
    a_run_is_live_in_its_process_until_it_ends(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_answers_the_watch_on_postgres() {
    let Some(schema) = TestSchema::new().await else {
        eprintln!("skipped: {POSTGRES_ENV} not set");
        return;
    };
    the_watch_reads_what_another_process_decided(&schema.url).await;
    a_run_is_live_in_its_process_until_it_ends(&schema.url).await;
}

#[tokio::test]
async fn the_memory_store_answers_the_watch_the_same_way() {
    let store = MemoryStore::new();
    store.start_run("run1", "c1", "host-1").await.expect("run");
    for id in ["a1", "a2"] {
        store
            .create_approval(&pending(id, "run1"))
            .await
            .expect("create");
    }
    store
        .decide_approval("a2", ApprovalStatus::Confirmed, Some("bob"))
        .await
        .expect("decide");
    let ids = vec!["a1".to_owned(), "a2".to_owned(), "a3".to_owned()];
    let settled = store.settled_approvals(&ids).await.expect("read");
    assert_eq!(settled.len(), 1);
    assert_eq!(settled[0].id, "a2");
    let earlier = SystemTime::now() - Duration::from_secs(60);
    assert_eq!(
        store
            .live_run_instance("run1", earlier)
            .await
            .expect("read")
            .as_deref(),
        Some("host-1")
    );
    store.finish_run("run1").await.expect("finish");
    assert_eq!(
        store
            .live_run_instance("run1", earlier)
            .await
            .expect("read"),
        None
    );
}
