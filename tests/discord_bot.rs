//! The bot end to end: real serenity against the fake Discord, plus the fake LLM, asserting
//! on the REST payloads the bot sends (content, components, custom ids, allowed mentions,
//! ephemeral flags).

mod support;

use std::sync::Arc;
use std::time::Duration;

use riskgate::config::Settings;
use riskgate::core::ports::Store;
use riskgate::discord::Bot;
use riskgate::store::MemoryStore;
use serde_json::{Value, json};
use support::fake_discord::{
    self as discord, AttachmentSpec, FakeDiscord, Fault, GuildSpec, UserSpec, WAIT, perms,
};
use support::fake_llm::{self, FakeLlm, Scripted};
use support::hooked_store::{Hook, HookedStore};

const GUILD: u64 = 2_000_000_000_000_000_000;
const CHANNEL: u64 = 2_000_000_000_000_000_100;
const OTHER_CHANNEL: u64 = 2_000_000_000_000_000_200;
const APPROVER_ROLE: u64 = 2_000_000_000_000_000_900;
const ADMIN_ROLE: u64 = 2_000_000_000_000_000_901;

fn alice() -> UserSpec {
    UserSpec::new(3_000_000_000_000_000_001, "alice")
}
fn bob() -> UserSpec {
    UserSpec::new(3_000_000_000_000_000_002, "bob").with_roles(&[APPROVER_ROLE])
}
fn eve() -> UserSpec {
    UserSpec::new(3_000_000_000_000_000_003, "eve")
}
fn admin() -> UserSpec {
    UserSpec::new(3_000_000_000_000_000_004, "ada").with_roles(&[ADMIN_ROLE])
}

fn guild() -> GuildSpec {
    GuildSpec::new(GUILD, "team")
        .text_channel(CHANNEL, "agent")
        .text_channel(OTHER_CHANNEL, "chatter")
        .role(APPROVER_ROLE, "approvers", perms::DEFAULT)
        .role(ADMIN_ROLE, "admins", perms::ADMINISTRATOR)
}

struct Harness {
    discord: FakeDiscord,
    llm: FakeLlm,
    /// A memory store that a test can make slow or failing.
    store: Arc<HookedStore>,
    workspace: tempfile::TempDir,
    stop: tokio_util::sync::CancellationToken,
    bot: tokio::task::JoinHandle<Result<(), riskgate::discord::BotError>>,
}

async fn start(script: Vec<Scripted>, configure: impl FnOnce(&mut Settings)) -> Harness {
    start_with(vec![guild()], script, configure).await
}

async fn start_with(
    guilds: Vec<GuildSpec>,
    script: Vec<Scripted>,
    configure: impl FnOnce(&mut Settings),
) -> Harness {
    let discord = FakeDiscord::start(guilds).await;
    let llm = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.discord.token = Some("fake-token".to_owned().into());
    settings.discord.api_base_url = Some(discord.base_url());
    settings.discord.guild_id = Some(GUILD);
    settings.discord.channels = vec![CHANNEL];
    settings.discord.approver_roles = vec![APPROVER_ROLE];
    settings.discord.admin_roles = vec![ADMIN_ROLE];
    settings.llm.base_url = llm.base_url();
    settings.llm.retry_base_delay_ms = 10;
    settings.discord.retry_base_ms = 10;
    settings.tools.workspace = workspace.path().to_path_buf();
    configure(&mut settings);
    let store = HookedStore::new(Arc::new(MemoryStore::new()));
    let model = Arc::new(riskgate::app::model_client(&settings).expect("client"));
    let bot = Bot::build(&settings, model, store.clone())
        .await
        .expect("bot");
    let stop = bot.shutdown_token();
    let bot = tokio::spawn(bot.run());
    // The ready handler registers the commands: after that the bot knows who it is.
    discord
        .wait_for_request(|r| r.method == "PUT" && r.path.contains("/commands"), WAIT)
        .await;
    Harness {
        discord,
        llm,
        store,
        workspace,
        stop,
        bot,
    }
}

impl Harness {
    /// How many results of confirmed calls the bot posted.
    fn confirmed_runs_posted(&self) -> usize {
        self.discord
            .requests()
            .iter()
            .filter(|r| {
                r.method == "POST"
                    && r.at("/content")
                        .as_str()
                        .is_some_and(|c| c.contains("ran after confirmation"))
            })
            .count()
    }

    async fn stop(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.bot).await;
    }

    /// Waits for a message posted in `channel` whose content satisfies `check`.
    async fn posted(&self, channel: u64, check: impl Fn(&str) -> bool) -> discord::RecordedRequest {
        let path = format!("/api/v10/channels/{channel}/messages");
        self.discord
            .wait_for_request(
                |r| {
                    r.method == "POST"
                        && r.path == path
                        && r.at("/content").as_str().is_some_and(&check)
                },
                WAIT,
            )
            .await
    }

    /// Sends a slash command in `CHANNEL` and waits for its answer containing `expect`.
    async fn answered(
        &self,
        name: &str,
        options: Value,
        user: &UserSpec,
        expect: &str,
    ) -> discord::RecordedRequest {
        self.discord
            .slash_command(CHANNEL, name, options, user)
            .await;
        self.discord
            .wait_for_request(
                |r| {
                    r.path.ends_with("/callback")
                        && r.at("/data/content")
                            .as_str()
                            .is_some_and(|c| c.contains(expect))
                },
                WAIT,
            )
            .await
    }

    /// Waits for the approval message and returns (message id, approval id).
    async fn approval(&self, channel: u64) -> (u64, String) {
        let path = format!("/api/v10/channels/{channel}/messages");
        let request = self
            .discord
            .wait_for_request(
                |r| r.method == "POST" && r.path == path && r.at("/components").is_array(),
                WAIT,
            )
            .await;
        let buttons = request.at("/components/0/components");
        assert_eq!(buttons[0]["label"], "Confirm");
        assert_eq!(buttons[1]["label"], "Cancel");
        let confirm = buttons[0]["custom_id"].as_str().expect("custom id");
        let approval = confirm
            .strip_prefix("riskgate:confirm:")
            .expect("our id")
            .to_owned();
        assert_eq!(
            buttons[1]["custom_id"],
            format!("riskgate:cancel:{approval}")
        );
        let message = self
            .discord
            .messages_in(channel)
            .into_iter()
            .rev()
            .find(|m| m["components"].as_array().is_some_and(|c| !c.is_empty()))
            .expect("the approval message is stored");
        (discord::id_of(&message["id"]), approval)
    }
}

fn no_mentions(request: &discord::RecordedRequest) {
    assert_eq!(
        request.at("/allowed_mentions"),
        &json!({"parse": [], "roles": [], "users": [], "replied_user": false}),
        "every message is sent with mentions off"
    );
}

fn sql_call(id: &str, sql: &str) -> Scripted {
    fake_llm::tool_calls(&[(id, "execute_sql", json!({"sql": sql}))])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_gets_an_auto_run_sql_table_and_a_reply() {
    let h = start(
        vec![
            sql_call("c1", "SELECT count(*) AS customers FROM customers"),
            fake_llm::text("You have a few customers."),
        ],
        |_| {},
    )
    .await;
    let trigger = h
        .discord
        .message_create(CHANNEL, &alice(), "how many customers do we have?", &[])
        .await;
    let table = h
        .posted(CHANNEL, |c| {
            c.contains("execute_sql") && c.contains("customers")
        })
        .await;
    let content = table.at("/content").as_str().expect("content");
    assert!(
        content.contains("ran automatically (whitelist"),
        "{content}"
    );
    assert!(
        content.contains("```"),
        "the result is a table in a code block: {content}"
    );
    no_mentions(&table);
    let reply = h
        .posted(CHANNEL, |c| c == "You have a few customers.")
        .await;
    assert_eq!(
        reply.at("/message_reference/message_id"),
        &json!(discord::id_of(&trigger["id"]).to_string())
    );
    no_mentions(&reply);
    // Typing showed while the run worked.
    assert!(
        h.discord
            .requests()
            .iter()
            .any(|r| r.is("POST", "/api/v10/channels/{}/typing"))
    );
    h.stop().await;
}

/// Alice asks to add "hello" to notes.txt; the model appends it (then says "Written.").
/// Returns the bot with the approval waiting: its message and its id. An append, so a call
/// that ran twice leaves "hellohello" behind.
async fn alice_asks_to_write_notes() -> (Harness, u64, String) {
    alice_asks(
        "write hello to notes.txt",
        "file_operations",
        json!({"operation": "append", "path": "notes.txt", "content": "hello"}),
        "Written.",
    )
    .await
}

/// Alice writes `text`; the model asks to run `tool` with `arguments`, then says `then`.
/// Returns the bot with the approval waiting: its message and its id.
async fn alice_asks(
    text: &str,
    tool: &str,
    arguments: Value,
    then: &str,
) -> (Harness, u64, String) {
    let h = start(
        vec![
            fake_llm::tool_calls(&[("c1", tool, arguments)]),
            fake_llm::text(then),
        ],
        |_| {},
    )
    .await;
    h.discord.message_create(CHANNEL, &alice(), text, &[]).await;
    let (message, approval) = h.approval(CHANNEL).await;
    (h, message, approval)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_risky_call_waits_for_the_requester_and_runs_once_on_a_double_click() {
    let (h, message, approval) = alice_asks_to_write_notes().await;
    let shown = h.discord.message(message).expect("stored");
    let text = shown["content"].as_str().expect("content");
    assert!(
        text.contains("append notes.txt") && text.contains(&format!("<@{}>", alice().id)),
        "{text}"
    );
    assert!(text.contains("Expires <t:"), "{text}");
    assert!(
        !h.workspace.path().join("notes.txt").exists(),
        "nothing runs before the click"
    );

    h.discord
        .component_click(message, &format!("riskgate:confirm:{approval}"), &alice())
        .await;
    h.discord
        .component_click(message, &format!("riskgate:confirm:{approval}"), &alice())
        .await;
    let update = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/type") == &json!(7),
            WAIT,
        )
        .await;
    assert!(
        update
            .at("/data/content")
            .as_str()
            .expect("content")
            .contains("Confirmed by")
    );
    assert_eq!(
        update.at("/data/components"),
        &json!([]),
        "the buttons are removed"
    );
    let second = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/type") == &json!(4),
            WAIT,
        )
        .await;
    assert_eq!(
        second.at("/data/flags"),
        &json!(64),
        "the second click gets an ephemeral answer"
    );
    assert!(
        second
            .at("/data/content")
            .as_str()
            .expect("content")
            .contains("already confirmed")
    );
    h.posted(CHANNEL, |c| c == "Written.").await;
    assert_eq!(
        std::fs::read_to_string(h.workspace.path().join("notes.txt")).expect("written"),
        "hello"
    );
    assert_eq!(h.confirmed_runs_posted(), 1, "one execution");
    h.stop().await;
}

/// The race CI once hit: the first click wins the decision but hears so late; the second
/// loses, wakes the waiting run, and the run confirms, runs and ends; the first click then
/// finds no run waiting and resumes the run from the store. The resumed copy must find the
/// run already continued: the call runs once and the model is not asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_winning_click_that_hears_late_resumes_nothing_the_run_already_did() {
    let (h, message, approval) = alice_asks_to_write_notes().await;
    let confirm = format!("riskgate:confirm:{approval}");
    // The first click's decision lands at once; its answer takes a second.
    h.store.hook_once(
        "decide_approval_noted",
        Hook::DelayAnswer(Duration::from_secs(1)),
    );
    h.discord.component_click(message, &confirm, &alice()).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    h.discord.component_click(message, &confirm, &alice()).await;
    h.posted(CHANNEL, |c| c == "Written.").await;
    // The first click's own answer (the settled message) comes after its decision.
    h.discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/type") == &json!(7),
            WAIT,
        )
        .await;
    // Room for the resume the first click queued to run, if it would.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(h.confirmed_runs_posted(), 1, "one execution");
    assert_eq!(
        std::fs::read_to_string(h.workspace.path().join("notes.txt")).expect("written"),
        "hello",
        "appended once"
    );
    assert_eq!(
        h.llm.requests().await.len(),
        2,
        "the model was not asked again"
    );
    assert!(
        !h.discord.requests().iter().any(|r| r
            .at("/content")
            .as_str()
            .is_some_and(|c| c.contains("continuing the run"))),
        "no resumed copy announced itself"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthorised_click_is_refused_and_a_cancel_goes_back_to_the_model() {
    let h = start(
        vec![
            fake_llm::tool_calls(&[(
                "c1",
                "file_operations",
                json!({"operation": "delete", "path": "report.txt", "risk_level": "low"}),
            )]),
            fake_llm::text("Understood, I left report.txt alone."),
        ],
        |_| {},
    )
    .await;
    std::fs::write(h.workspace.path().join("report.txt"), "keep me").expect("write");
    h.discord
        .message_create(CHANNEL, &alice(), "delete the report", &[])
        .await;
    let (message, approval) = h.approval(CHANNEL).await;
    let shown = h.discord.message(message).expect("stored");
    assert!(
        shown["content"]
            .as_str()
            .expect("content")
            .contains("destructive_floor")
    );

    h.discord
        .component_click(message, &format!("riskgate:confirm:{approval}"), &eve())
        .await;
    let refusal = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/data/flags") == &json!(64),
            WAIT,
        )
        .await;
    assert!(
        refusal
            .at("/data/content")
            .as_str()
            .expect("content")
            .contains("cannot answer")
    );
    assert_eq!(
        h.store
            .pending_approvals(None)
            .await
            .expect("pending")
            .len(),
        1,
        "still pending"
    );

    h.discord
        .component_click(message, &format!("riskgate:cancel:{approval}"), &alice())
        .await;
    h.posted(CHANNEL, |c| c.contains("left report.txt alone"))
        .await;
    assert!(h.workspace.path().join("report.txt").exists());
    let requests = h.llm.requests().await;
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")["content"]
        .as_str()
        .expect("text")
        .to_owned();
    let result: Value = serde_json::from_str(&result).expect("typed");
    assert_eq!(result["status"], "cancelled");
    assert_eq!(result["by"], alice().id.to_string());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_may_confirm_but_self_approval_can_be_forbidden() {
    let h = start(
        vec![
            fake_llm::tool_calls(&[(
                "c1",
                "file_operations",
                json!({"operation": "mkdir", "path": "out"}),
            )]),
            fake_llm::text("Created."),
        ],
        |s| s.discord.require_different_approver = true,
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "make a directory", &[])
        .await;
    let (message, approval) = h.approval(CHANNEL).await;
    h.discord
        .component_click(message, &format!("riskgate:confirm:{approval}"), &alice())
        .await;
    let refusal = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/data/flags") == &json!(64),
            WAIT,
        )
        .await;
    assert!(
        refusal
            .at("/data/content")
            .as_str()
            .expect("content")
            .contains("someone else")
    );
    h.discord
        .component_click(message, &format!("riskgate:confirm:{approval}"), &bob())
        .await;
    h.posted(CHANNEL, |c| c == "Created.").await;
    assert!(h.workspace.path().join("out").is_dir());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_mode_makes_the_next_safe_call_ask_first() {
    let h = start(
        vec![
            fake_llm::tool_calls(&[(
                "c1",
                "file_operations",
                json!({"operation": "list", "path": "."}),
            )]),
            fake_llm::text("never"),
        ],
        |_| {},
    )
    .await;
    h.discord
        .slash_command(
            CHANNEL,
            "mode",
            json!([{"name": "mode", "type": 3, "value": "strict"}]),
            &eve(),
        )
        .await;
    let refused = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/data/flags") == &json!(64),
            WAIT,
        )
        .await;
    assert!(
        refused
            .at("/data/content")
            .as_str()
            .expect("content")
            .contains("Manage Channels")
    );
    h.answered(
        "mode",
        json!([{"name": "mode", "type": 3, "value": "strict"}]),
        &admin(),
        "**strict**",
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "what is here?", &[])
        .await;
    let (message, _) = h.approval(CHANNEL).await;
    let shown = h.discord.message(message).expect("stored");
    assert!(
        shown["content"]
            .as_str()
            .expect("content")
            .contains("strict_mode")
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_approval_edits_its_message() {
    let h = start(
        vec![
            fake_llm::tool_calls(&[(
                "c1",
                "file_operations",
                json!({"operation": "write", "path": "x.txt", "content": "x"}),
            )]),
            fake_llm::text("Nobody confirmed, so I did nothing."),
        ],
        |s| s.agent.approval_timeout_secs = 1,
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "write x", &[])
        .await;
    let (message, _) = h.approval(CHANNEL).await;
    let edit = h
        .discord
        .wait_for_request(
            |r| r.method == "PATCH" && r.path.ends_with(&format!("/messages/{message}")),
            WAIT,
        )
        .await;
    assert!(
        edit.at("/content")
            .as_str()
            .expect("content")
            .contains("Expired")
    );
    assert_eq!(edit.at("/components"), &json!([]));
    no_mentions(&edit);
    h.posted(CHANNEL, |c| c.contains("did nothing")).await;
    assert!(!h.workspace.path().join("x.txt").exists());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_reply_is_split_with_fences_intact_and_mass_mentions_are_inert() {
    let mut long = String::from("@everyone here are the numbers:\n```\n");
    // Three messages' worth: more would be attached whole (discord.max_parts_per_text).
    for i in 0..130 {
        long.push_str(&format!("line {i:03} ........................\n"));
    }
    long.push_str("```\nDone.");
    assert!(long.chars().count() > 4000);
    let h = start(vec![fake_llm::text(&long)], |_| {}).await;
    h.discord
        .message_create(CHANNEL, &alice(), "list everything", &[])
        .await;
    h.posted(CHANNEL, |c| c.ends_with("Done.")).await;
    let parts: Vec<String> = h
        .discord
        .requests()
        .iter()
        .filter(|r| r.is("POST", "/api/v10/channels/{}/messages"))
        .map(|r| {
            no_mentions(r);
            r.at("/content").as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert!(parts.len() >= 3, "{}", parts.len());
    for part in &parts {
        assert!(part.chars().count() <= 2000);
        assert_eq!(
            part.matches("```").count() % 2,
            0,
            "fences balanced in:\n{part}"
        );
    }
    assert!(parts[0].starts_with("@everyone"));
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_channels_need_a_mention_and_bots_are_ignored() {
    let h = start(vec![fake_llm::text("Hi from the other channel.")], |_| {}).await;
    h.discord
        .message_create(OTHER_CHANNEL, &alice(), "just chatting", &[])
        .await;
    h.discord
        .message_create(
            CHANNEL,
            &UserSpec::bot(3_000_000_000_000_000_099, "otherbot"),
            "hello bot",
            &[],
        )
        .await;
    let me = UserSpec::bot(discord::BOT_ID, discord::BOT_NAME);
    h.discord
        .message_create(
            OTHER_CHANNEL,
            &alice(),
            &format!("<@{}> hello", discord::BOT_ID),
            &[me],
        )
        .await;
    h.posted(OTHER_CHANNEL, |c| c == "Hi from the other channel.")
        .await;
    let requests = h.llm.requests().await;
    assert_eq!(requests.len(), 1, "only the mention reached the model");
    let user = requests[0]["messages"][1]["content"]
        .as_str()
        .expect("user");
    assert_eq!(user, "alice: hello", "the mention is stripped");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shards_in_one_process_each_serve_their_guilds() {
    // Two guilds on different shards of 2.
    let first = GuildSpec::new(GUILD, "a").text_channel(CHANNEL, "agent");
    let mut second_id = GUILD + (1 << 22);
    while discord::shard_of(Some(second_id), 2) == discord::shard_of(Some(GUILD), 2) {
        second_id += 1 << 22;
    }
    let second_channel = second_id + 7;
    let second = GuildSpec::new(second_id, "b").text_channel(second_channel, "agent");
    let h = start_with(
        vec![first, second],
        vec![fake_llm::text("answer one"), fake_llm::text("answer two")],
        |s| {
            s.discord.channels = vec![CHANNEL, second_channel];
            s.discord.guild_id = None;
            s.discord.shard_total = 2;
            s.discord.shard_first = 0;
            s.discord.shard_last = 1;
        },
    )
    .await;
    h.discord
        .wait_for_connections(2, Duration::from_secs(30))
        .await;
    let shards: Vec<[u32; 2]> = h.discord.identifies().iter().map(|i| i.shard).collect();
    assert!(
        shards.contains(&[0, 2]) && shards.contains(&[1, 2]),
        "{shards:?}"
    );
    h.discord
        .message_create(CHANNEL, &alice(), "one", &[])
        .await;
    h.posted(CHANNEL, |c| c.starts_with("answer")).await;
    h.discord
        .message_create(second_channel, &alice(), "two", &[])
        .await;
    h.posted(second_channel, |c| c.starts_with("answer")).await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_gateway_drops_the_bot_reconnects_and_keeps_serving() {
    let h = start(vec![fake_llm::text("still here")], |_| {}).await;
    assert!(h.discord.drop_gateway().await >= 1);
    // serenity resumes the session; then messages flow again.
    for _ in 0..100 {
        if !h.discord.resumes().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!h.discord.resumes().is_empty(), "the bot reconnected");
    h.discord.wait_for_connections(1, WAIT).await;
    h.discord
        .message_create(CHANNEL, &alice(), "are you there?", &[])
        .await;
    h.posted(CHANNEL, |c| c == "still here").await;
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_left_by_a_stopped_run_is_marked_and_its_buttons_answer_as_stale() {
    use riskgate::core::ports::{ApprovalRecord, ApprovalStatus};
    let h = start(vec![], |s| s.store.sweep_interval_secs = 1).await;
    // A message standing for an approval posted before a restart (the channel is not served,
    // so the bot ignores it as a message).
    let posted = h
        .discord
        .message_create(
            OTHER_CHANNEL,
            &alice(),
            "**Confirm `execute_sql`?**\nExpires <t:1:R>.",
            &[],
        )
        .await;
    let message = discord::id_of(&posted["id"]);
    let now = std::time::SystemTime::now();
    h.store
        .create_approval(&ApprovalRecord {
            id: "before-restart".into(),
            run_id: "a-run-of-the-old-process".into(),
            channel: OTHER_CHANNEL.to_string(),
            requester: alice().id.to_string(),
            tool: "execute_sql".into(),
            arguments: serde_json::Map::new(),
            arguments_hash: String::new(),
            source: "default".into(),
            reason: "r".into(),
            status: ApprovalStatus::Pending,
            decided_by: None,
            decided_at: None,
            created_at: now,
            expires_at: now + Duration::from_secs(3600),
            message_ref: Some(format!("{OTHER_CHANNEL}/{message}")),
            note: None,
            resume: None,
        })
        .await
        .expect("approval");
    let edit = h
        .discord
        .wait_for_request(
            |r| r.method == "PATCH" && r.path.ends_with(&format!("/messages/{message}")),
            WAIT,
        )
        .await;
    assert!(
        edit.at("/content")
            .as_str()
            .expect("content")
            .contains("No longer active")
    );
    assert_eq!(edit.at("/components"), &json!([]));
    let stored = h
        .store
        .approval("before-restart")
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.status, ApprovalStatus::Abandoned);

    h.discord
        .component_click(message, "riskgate:confirm:before-restart", &alice())
        .await;
    let answer = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/data/flags") == &json!(64),
            WAIT,
        )
        .await;
    assert!(
        answer
            .at("/data/content")
            .as_str()
            .expect("content")
            .contains("no longer active")
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_listed_members_may_start_runs_and_others_are_told_once() {
    let h = start(vec![fake_llm::text("Hello, Bob.")], |s| {
        s.discord.allowed_users = vec![alice().id];
        s.discord.allowed_roles = vec![APPROVER_ROLE];
    })
    .await;
    // Eve is on neither list: her messages never reach the model, and she is told once.
    h.discord
        .message_create(CHANNEL, &eve(), "drop the table", &[])
        .await;
    h.posted(CHANNEL, |c| {
        c.contains("Only the people this bot's operator listed")
    })
    .await;
    h.discord
        .message_create(CHANNEL, &eve(), "please?", &[])
        .await;
    // Bob has an allowed role.
    h.discord.message_create(CHANNEL, &bob(), "hi", &[]).await;
    h.posted(CHANNEL, |c| c == "Hello, Bob.").await;
    let requests = h.llm.requests().await;
    assert_eq!(requests.len(), 1, "only Bob's message reached the model");
    let sent = requests[0].to_string();
    assert!(
        !sent.contains("drop the table") && !sent.contains("please?"),
        "{sent}"
    );
    let notices = h
        .discord
        .requests()
        .into_iter()
        .filter(|r| {
            r.method == "POST"
                && r.at("/content")
                    .as_str()
                    .is_some_and(|c| c.contains("Only the people this bot's operator listed"))
        })
        .count();
    assert_eq!(notices, 1, "told once per channel");
    h.stop().await;
}

/// The person's message as the model's last request carried it.
async fn what_the_model_read(h: &Harness) -> String {
    let requests = h.llm.requests().await;
    let last = requests.last().expect("a model request");
    last["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .expect("the person's message")
        .to_owned()
}

/// The URL of the attachment named `filename` on a message the fake dispatched.
fn attachment_url(message: &Value, filename: &str) -> String {
    message["attachments"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["filename"] == filename))
        .and_then(|a| a["url"].as_str())
        .unwrap_or_else(|| panic!("no attachment {filename} in {message}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_attachments_reach_the_model_and_the_others_are_named_not_read() {
    const CAP: u64 = 4096;
    let h = start(vec![fake_llm::text("Read them.")], |s| {
        s.discord.max_attachment_bytes = CAP;
    })
    .await;
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01PIXELS-NOT-FOR-THE-MODEL".to_vec();
    let files = [
        AttachmentSpec::new(
            "notes.txt",
            Some("text/plain; charset=utf-8"),
            "The deploy key rotates on Fridays.",
        ),
        AttachmentSpec::new("photo.png", Some("image/png"), png),
        // Declared over the cap: never downloaded.
        AttachmentSpec::new("big.log", Some("text/plain"), vec![b'y'; 10_000]),
        // Declared small, but its body runs on for 128 MiB: the bot hangs up past the cap.
        AttachmentSpec::new("liar.txt", Some("text/plain"), vec![b'z'; 64 * 1024])
            .declared_size(100)
            .repeat_to(128 << 20),
        // A name that would be a masked link, a spoiler and a mass mention as Markdown.
        AttachmentSpec::new(
            "[see](http://e.io) ||@everyone||.md",
            None,
            "# Plan\nShip it.",
        ),
    ];
    let trigger = h
        .discord
        .message_create_with(CHANNEL, &alice(), "what do these say?", &[], &files)
        .await;
    h.posted(CHANNEL, |c| c == "Read them.").await;

    let read = what_the_model_read(&h).await;
    assert!(read.starts_with("alice: what do these say?\n\n"), "{read}");
    assert!(
        read.contains("[attachment notes.txt, 34 bytes, text/plain; charset=utf-8]\nThe deploy key rotates on Fridays.\n[end of attachment notes.txt]"),
        "{read}"
    );
    assert!(
        read.contains("[attachment photo.png, 44 bytes, image/png: not read, it is not a text file; you have not seen its content]"),
        "{read}"
    );
    assert!(
        !read.contains("IHDR") && !read.contains("PIXELS-NOT-FOR-THE-MODEL"),
        "no byte of the image reaches the model: {read}"
    );
    let too_large = "not read, it is larger than the 4,096 bytes the bot reads of an attachment (discord.max_attachment_bytes)";
    assert!(
        read.contains(&format!(
            "[attachment big.log, 10,000 bytes, text/plain: {too_large}"
        )),
        "{read}"
    );
    assert!(
        read.contains(&format!(
            "[attachment liar.txt, 100 bytes, text/plain: {too_large}"
        )),
        "{read}"
    );
    assert!(!read.contains("zzzz"), "nothing of liar.txt is shown");
    assert!(
        read.contains("[attachment (see)(http://e.io) ||@everyone||.md, 15 bytes, no type]\n# Plan\nShip it.\n"),
        "{read}"
    );

    // What was downloaded: the text files, never the image or what was declared too large,
    // and of the endless body little more than the socket buffers hold.
    let downloads: Vec<String> = h
        .discord
        .requests()
        .into_iter()
        .filter(|r| r.is("GET", "/attachments/{}/{}"))
        .map(|r| r.path)
        .collect();
    assert_eq!(downloads.len(), 3, "{downloads:?}");
    for skipped in ["photo.png", "big.log"] {
        assert!(
            !downloads.iter().any(|d| d.ends_with(skipped)),
            "{skipped}: {downloads:?}"
        );
        assert_eq!(
            h.discord
                .attachment_bytes_served(&attachment_url(&trigger, skipped)),
            0
        );
    }
    let liar = attachment_url(&trigger, "liar.txt");
    let served = h.discord.attachment_bytes_served(&liar);
    assert!(
        served < 32 << 20,
        "the download stopped near the cap, not after the 128 MiB body: {served} bytes"
    );

    // The person is told in one reply, names inert as Markdown, with mentions off.
    let notice = h.posted(CHANNEL, |c| c.starts_with("📎")).await;
    let text = notice.at("/content").as_str().expect("content");
    assert_eq!(
        text,
        "📎 Read for the model: notes.txt (34 B), (see)(http://e.io) \\|\\|@everyone\\|\\|.md (15 B). \
         Not read: photo.png (44 B): not text; \
         big.log (9.8 KiB): over the 4.0 KiB limit (discord.max\\_attachment\\_bytes); \
         liar.txt (100 B): over the 4.0 KiB limit (discord.max\\_attachment\\_bytes)."
    );
    assert_eq!(
        notice.at("/message_reference/message_id"),
        &json!(discord::id_of(&trigger["id"]).to_string())
    );
    no_mentions(&notice);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_paste_without_text_is_relayed_where_the_bot_is_addressed_and_cut_to_the_budget() {
    let h = start(vec![fake_llm::text("Got the paste.")], |s| {
        s.discord.attachment_budget_chars = 1_000;
    })
    .await;
    let paste: String = (0..100)
        .map(|i| format!("line {i:03} of the pasted text .\n"))
        .collect();
    assert_eq!(paste.len(), 3_000);
    let message_txt = || {
        [AttachmentSpec::new(
            "message.txt",
            Some("text/plain; charset=utf-8"),
            paste.clone(),
        )]
    };
    // Elsewhere, an attachment alone does not address the bot.
    h.discord
        .message_create_with(OTHER_CHANNEL, &alice(), "", &[], &message_txt())
        .await;
    h.discord
        .message_create_with(CHANNEL, &alice(), "", &[], &message_txt())
        .await;
    h.posted(CHANNEL, |c| c == "Got the paste.").await;
    let read = what_the_model_read(&h).await;
    let expected_start = format!(
        "alice: [attachment message.txt, 3,000 bytes, text/plain; charset=utf-8]\n{}\n[... 2,000 of its 3,000 characters were left out",
        &paste[..1_000]
    );
    assert!(read.starts_with(&expected_start), "{read}");
    assert!(read.ends_with("[end of attachment message.txt]"), "{read}");
    h.posted(CHANNEL, |c| {
        c == "📎 Read for the model: message.txt (2.9 KiB, the first 1,000 of 3,000 characters)."
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        h.llm.requests().await.len(),
        1,
        "the message elsewhere, without a mention, did not reach the model"
    );
    assert!(
        !h.discord.requests().iter().any(|r| r
            .path
            .starts_with(&format!("/api/v10/channels/{OTHER_CHANNEL}/messages"))),
        "nothing was posted where the bot was not addressed"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_too_long_for_a_message_attaches_the_whole_call() {
    let line = format!("echo '{}' && rm -f keep.txt", "x".repeat(1_900));
    let h = start(
        vec![
            fake_llm::tool_calls(&[("c1", "execute_command", json!({ "command": line }))]),
            fake_llm::text("Nothing was removed."),
        ],
        |s| s.agent.approval_timeout_secs = 2,
    )
    .await;
    std::fs::write(h.workspace.path().join("keep.txt"), "keep").expect("write");
    h.discord
        .message_create(CHANNEL, &alice(), "clean up", &[])
        .await;
    let path = format!("/api/v10/channels/{CHANNEL}/messages");
    let request = h
        .discord
        .wait_for_request(
            |r| r.method == "POST" && r.path == path && r.at("/components").is_array(),
            WAIT,
        )
        .await;
    let content = request.at("/content").as_str().expect("content");
    assert!(
        content.chars().count() <= 2_000,
        "{}",
        content.chars().count()
    );
    assert!(
        content.contains("call.txt"),
        "the message names the file: {content}"
    );
    let file = request
        .files
        .iter()
        .find(|f| f.filename == "call.txt")
        .expect("the whole call is attached");
    assert!(file.size > line.len(), "{} bytes", file.size);
    h.posted(CHANNEL, |c| c == "Nothing was removed.").await;
    assert!(
        h.workspace.path().join("keep.txt").exists(),
        "nobody confirmed"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_survives_the_deletion_of_the_message_it_answers() {
    let h = start(
        vec![Scripted::Slow(
            Duration::from_millis(800),
            json!({
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": "Here is your answer."},
                    "finish_reason": "stop"
                }]
            }),
        )],
        |_| {},
    )
    .await;
    let sent = h
        .discord
        .message_create(CHANNEL, &alice(), "a question", &[])
        .await;
    // The author deletes the message while the model thinks.
    h.discord.delete_message(discord::id_of(&sent["id"]));
    let reply = h.posted(CHANNEL, |c| c == "Here is your answer.").await;
    assert_eq!(reply.status, 200, "the reply was accepted");
    assert_eq!(
        reply.at("/message_reference/fail_if_not_exists"),
        &json!(false)
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_with_25_entries_fits_one_answer() {
    let h = start(vec![], |_| {}).await;
    for i in 0..25 {
        h.store
            .record_audit(&riskgate::core::ports::AuditRecord {
                at: 1_700_000_000 + i,
                run_id: format!("r{i}"),
                channel: CHANNEL.to_string(),
                user: alice().id.to_string(),
                tool: "execute_command".into(),
                arguments_summary: "rm -rf build".into(),
                decision: riskgate::core::risk::Decision::Confirm,
                source: riskgate::core::risk::DecisionSource::DestructiveFloor,
                reason: "`rm` deletes files".into(),
                outcome: riskgate::core::agent::CallOutcome::Cancelled,
                approval_id: None,
                duration_ms: 0,
                output_bytes: 0,
                note: None,
                result: None,
            })
            .await
            .expect("audit");
    }
    h.discord
        .slash_command(
            CHANNEL,
            "audit",
            json!([{"name": "n", "type": 4, "value": 25}]),
            &alice(),
        )
        .await;
    let answer = h
        .discord
        .wait_for_request(|r| r.path.ends_with("/callback"), WAIT)
        .await;
    assert_eq!(
        answer.status, 204,
        "Discord took the answer: {:?}",
        answer.body
    );
    let content = answer.at("/data/content").as_str().expect("content");
    assert!(content.chars().count() <= 2_000);
    assert!(content.contains("older ones that do not fit"), "{content}");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_and_rate_limits_are_retried_until_the_reply_arrives() {
    let h = start(vec![fake_llm::text("Here it is.")], |_| {}).await;
    let path = format!("/api/v10/channels/{CHANNEL}/messages");
    h.discord.inject("POST", &path, Fault::ServerError, 1);
    h.discord.inject("POST", &path, Fault::BadGateway, 1);
    h.discord.inject("POST", &path, Fault::RateLimited, 1);
    h.discord
        .message_create(CHANNEL, &alice(), "a question", &[])
        .await;
    h.discord
        .wait_for_request(
            |r| r.path == path && r.status == 200 && r.at("/content") == "Here it is.",
            WAIT,
        )
        .await;
    let statuses: Vec<u16> = h
        .discord
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path == path)
        .map(|r| r.status)
        .collect();
    assert_eq!(
        statuses,
        [500, 502, 429, 200],
        "three failures, then the reply"
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_the_channel_refuses_ends_the_run_and_the_next_message_runs() {
    let h = start(
        vec![
            fake_llm::tool_calls(&[(
                "c1",
                "execute_command",
                json!({"command": "rm -f keep.txt"}),
            )]),
            fake_llm::text("Understood."),
        ],
        // Long enough that waiting for the expiry would fail the test.
        |s| s.agent.approval_timeout_secs = 600,
    )
    .await;
    std::fs::write(h.workspace.path().join("keep.txt"), "keep").expect("write");
    let path = format!("/api/v10/channels/{CHANNEL}/messages");
    // The bot's Send Messages is taken away just for the approval.
    h.discord
        .inject("POST", &path, Fault::MissingPermissions, 1);
    h.discord
        .message_create(CHANNEL, &alice(), "clean up", &[])
        .await;
    let refused = h
        .discord
        .wait_for_request(|r| r.path == path && r.status == 403, WAIT)
        .await;
    assert!(
        refused.at("/components").is_array(),
        "the approval was refused"
    );
    h.posted(CHANNEL, |c| {
        c.contains("could not be posted in this channel")
    })
    .await;
    let approvals = h.store.pending_approvals(None).await.expect("approvals");
    assert!(
        approvals.is_empty(),
        "nothing is left pending: {approvals:?}"
    );
    // The queue moves: the next message runs at once, and the model sees why nothing ran.
    h.discord
        .message_create(CHANNEL, &alice(), "what happened?", &[])
        .await;
    h.posted(CHANNEL, |c| c == "Understood.").await;
    let second = h
        .llm
        .requests()
        .await
        .last()
        .cloned()
        .expect("a second request");
    let told = second["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .any(|m| {
            m["role"] == "tool"
                && m["content"]
                    .as_str()
                    .is_some_and(|c| c.contains("undeliverable"))
        });
    assert!(told, "the model was told: {second:#}");
    assert!(h.workspace.path().join("keep.txt").exists(), "nothing ran");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_results_become_attachments_instead_of_a_flood() {
    // 40 columns of 40 characters over 35 rows: about 60,000 characters of table.
    let columns: Vec<String> = (0..40)
        .map(|c| format!("printf('%.40c', 'x') AS c{c}"))
        .collect();
    let big = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 35) SELECT i, {} FROM n",
        columns.join(", ")
    );
    let h = start(
        vec![
            sql_call("c1", &big),
            sql_call("c2", &big),
            sql_call("c3", "SELECT 1 AS one"),
            sql_call("c4", "SELECT 2 AS two"),
            fake_llm::text("Done reading."),
        ],
        |s| {
            s.discord.max_messages_per_run = 3;
            // An operator who wants whole tables in the chat: each result is ~60,000
            // characters, 30 messages' worth.
            s.output.chat_budget_chars = 100_000;
        },
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "read it all", &[])
        .await;
    h.posted(CHANNEL, |c| c == "Done reading.").await;
    let path = format!("/api/v10/channels/{CHANNEL}/messages");
    let posts: Vec<_> = h
        .discord
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path == path)
        .collect();
    // Three for the run's output (the last one holding the rest), and the reply.
    assert_eq!(posts.len(), 4, "{} messages for one run", posts.len());
    let first = &posts[0];
    let whole = first
        .files
        .iter()
        .find(|f| f.filename == "message.txt")
        .expect("the long result is attached whole");
    assert!(whole.size > 40_000, "{} bytes", whole.size);
    assert!(
        first
            .at("/content")
            .as_str()
            .is_some_and(|c| c.contains("message.txt")),
        "the message names its file"
    );
    let held = posts
        .iter()
        .find(|r| r.files.iter().any(|f| f.filename == "more-output.txt"))
        .expect("the rest of the run is one message with one file");
    assert!(
        held.at("/content")
            .as_str()
            .is_some_and(|c| c.contains("2 message(s)")),
        "{:?}",
        held.at("/content")
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slash_command_on_a_slow_store_is_deferred_then_answered() {
    let h = start(vec![], |_| {}).await;
    h.store.hook(
        "channel_settings",
        Hook::Delay(Duration::from_millis(3_500)),
    );
    h.discord
        .slash_command(CHANNEL, "status", json!([]), &alice())
        .await;
    let deferred = h
        .discord
        .wait_for_request(|r| r.path.ends_with("/callback"), WAIT)
        .await;
    assert_eq!(deferred.status, 204, "deferred within the deadline");
    assert_eq!(deferred.at("/type"), &json!(5));
    assert_eq!(
        deferred.at("/data/flags"),
        &json!(64),
        "ephemeral, as the answer"
    );
    let answer = h
        .discord
        .wait_for_request(
            |r| r.method == "PATCH" && r.path.ends_with("/messages/@original"),
            WAIT,
        )
        .await;
    assert_eq!(answer.status, 200);
    assert!(
        answer
            .at("/content")
            .as_str()
            .is_some_and(|c| c.contains("Mode:")),
        "{:?}",
        answer.at("/content")
    );
    h.stop().await;
}

/// The buttons of the newest approval message in `channel`, by label.
fn button_labels(h: &Harness, channel: u64) -> Vec<String> {
    let message = h
        .discord
        .messages_in(channel)
        .into_iter()
        .rev()
        .find(|m| m["components"].as_array().is_some_and(|c| !c.is_empty()))
        .expect("an approval message");
    message["components"][0]["components"]
        .as_array()
        .expect("buttons")
        .iter()
        .map(|b| b["label"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_with_a_reason_reaches_the_model_the_history_and_the_audit() {
    let h = start(
        vec![
            fake_llm::tool_calls(&[(
                "c1",
                "execute_command",
                json!({"command": "rm -f keep.txt"}),
            )]),
            fake_llm::text("I will move it to trash/ instead."),
        ],
        |_| {},
    )
    .await;
    std::fs::write(h.workspace.path().join("keep.txt"), "keep").expect("write");
    h.discord
        .message_create(CHANNEL, &alice(), "clean up", &[])
        .await;
    let (message, approval) = h.approval(CHANNEL).await;
    // A destructive call is never offered a rule.
    assert_eq!(
        button_labels(&h, CHANNEL),
        ["Confirm", "Cancel", "Cancel with reason…"]
    );
    h.discord
        .component_click(message, &format!("riskgate:why:{approval}"), &alice())
        .await;
    let modal = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/type") == &json!(9),
            WAIT,
        )
        .await;
    assert_eq!(modal.status, 204, "Discord took the modal");
    assert_eq!(
        modal.at("/data/custom_id"),
        &json!(format!("riskgate:reason:{approval}"))
    );
    assert_eq!(
        modal.at("/data/components/0/components/0/custom_id"),
        &json!("reason")
    );
    assert!(
        h.store
            .pending_approvals(None)
            .await
            .expect("pending")
            .len()
            == 1,
        "opening the modal decides nothing"
    );
    h.discord
        .modal_submit(
            message,
            &format!("riskgate:reason:{approval}"),
            &[("reason", "move it to trash/ instead")],
            &alice(),
        )
        .await;
    let settled = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/type") == &json!(7),
            WAIT,
        )
        .await;
    assert_eq!(settled.status, 204);
    let content = settled.at("/data/content").as_str().expect("content");
    assert!(content.contains("Cancelled by"), "{content}");
    assert!(content.contains("move it to trash/ instead"), "{content}");
    h.posted(CHANNEL, |c| c.contains("trash/ instead")).await;
    let requests = h.llm.requests().await;
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")["content"]
        .as_str()
        .expect("text")
        .to_owned();
    let result: Value = serde_json::from_str(&result).expect("typed");
    assert_eq!(result["status"], "cancelled");
    assert_eq!(result["reason"], "move it to trash/ instead");
    let stored = h
        .store
        .approval(&approval)
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(stored.note.as_deref(), Some("move it to trash/ instead"));
    let audit = h
        .store
        .recent_audit(&CHANNEL.to_string(), 5)
        .await
        .expect("audit");
    assert_eq!(audit[0].outcome.as_str(), "cancelled");
    assert_eq!(
        audit[0].note.as_deref(),
        Some("reason: move it to trash/ instead")
    );
    assert!(h.workspace.path().join("keep.txt").exists());
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_similar_makes_a_rule_that_runs_matching_calls_only() {
    // `pinky` is harmless but off the read-only whitelist, so it is asked about.
    let shuf = |id: &str, command: &str| {
        fake_llm::tool_calls(&[(id, "execute_command", json!({ "command": command }))])
    };
    let h = start(
        vec![
            shuf("c1", "pinky -p 2048"),
            shuf("c2", "pinky -p 5000"),
            shuf("c3", "pinky -s -p 2K"),
            fake_llm::text("Done."),
        ],
        |s| s.agent.approval_timeout_secs = 3,
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "convert some numbers", &[])
        .await;
    let (message, approval) = h.approval(CHANNEL).await;
    let labels = button_labels(&h, CHANNEL);
    assert_eq!(labels.len(), 4, "{labels:?}");
    assert_eq!(labels[3], "Allow similar for 1 h");
    let shown = h.discord.message(message).expect("stored");
    assert!(
        shown["content"]
            .as_str()
            .is_some_and(|c| c.contains("`pinky` with flags -p")),
        "the message says what the rule would cover: {shown}"
    );
    // The requester without an approver role may confirm, but not make a rule for everyone.
    h.discord
        .component_click(message, &format!("riskgate:allow:{approval}"), &alice())
        .await;
    let refused = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/data/flags") == &json!(64),
            WAIT,
        )
        .await;
    assert!(
        refused
            .at("/data/content")
            .as_str()
            .is_some_and(|c| c.contains("approver role")),
        "{:?}",
        refused.at("/data/content")
    );
    h.discord
        .component_click(message, &format!("riskgate:allow:{approval}"), &bob())
        .await;
    let created = h.posted(CHANNEL, |c| c.starts_with("🔓")).await;
    let text = created.at("/content").as_str().expect("content");
    assert!(text.contains("`pinky` with flags -p"), "{text}");
    // The second call matches: it runs without asking, under the rule.
    let auto = h
        .posted(CHANNEL, |c| c.contains("ran automatically (channel_rule"))
        .await;
    assert!(
        auto.at("/content")
            .as_str()
            .is_some_and(|c| c.contains("5000") && c.contains("exit status 0")),
        "{:?}",
        auto.at("/content")
    );
    // The third has other flags: a person is asked again (and nobody answers).
    h.posted(CHANNEL, |c| c == "Done.").await;
    let approvals: Vec<_> = h
        .discord
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.at("/components").is_array())
        .collect();
    assert_eq!(approvals.len(), 2, "the first call and the third asked");
    let audit = h
        .store
        .recent_audit(&CHANNEL.to_string(), 5)
        .await
        .expect("audit");
    let by_rule: Vec<_> = audit
        .iter()
        .filter(|r| r.source.as_str() == "channel_rule")
        .collect();
    assert_eq!(by_rule.len(), 1, "{audit:#?}");
    let rules = h
        .store
        .channel_rules(&CHANNEL.to_string(), std::time::SystemTime::now())
        .await
        .expect("rules");
    assert_eq!(rules.len(), 1);
    assert_eq!(
        by_rule[0].note.as_deref(),
        Some(format!("rule {}", rules[0].id).as_str())
    );
    assert_eq!(by_rule[0].outcome.as_str(), "ok");
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_are_listed_revoked_and_ignored_in_strict_mode() {
    // `pinky` is harmless but off the read-only whitelist, so it is asked about.
    let shuf = |id: &str, command: &str| {
        fake_llm::tool_calls(&[(id, "execute_command", json!({ "command": command }))])
    };
    let h = start(
        vec![
            shuf("c1", "pinky -p 1"),
            fake_llm::text("first"),
            shuf("c2", "pinky -p 2"),
            fake_llm::text("second"),
        ],
        |s| s.agent.approval_timeout_secs = 2,
    )
    .await;
    let now = std::time::SystemTime::now();
    let rule = riskgate::core::rules::ChannelRule {
        id: "rtest000001".into(),
        channel: CHANNEL.to_string(),
        tool: "execute_command".into(),
        similarity: riskgate::core::rules::Similarity::new(
            "`pinky` with flags -p",
            &[
                ("program", "pinky".to_owned()),
                ("subcommand", String::new()),
                ("flags", "-p".to_owned()),
            ],
        ),
        created_by: bob().id.to_string(),
        created_at: now,
        expires_at: now + Duration::from_secs(3600),
        approval_id: None,
    };
    h.store.create_rule(&rule).await.expect("rule");
    // Strict mode confirms everything: the rule does not apply.
    h.store
        .set_channel_settings(
            &CHANNEL.to_string(),
            &riskgate::core::ports::ChannelSettings {
                mode: riskgate::core::risk::ChannelMode::Strict,
                profile: "ops".into(),
            },
            "test",
        )
        .await
        .expect("strict");
    h.discord
        .message_create(CHANNEL, &alice(), "one", &[])
        .await;
    h.approval(CHANNEL).await;
    assert_eq!(
        button_labels(&h, CHANNEL).len(),
        3,
        "no rule offered in strict mode"
    );
    h.posted(CHANNEL, |c| c == "first").await;
    // Listed, then revoked by an approver; back in smart mode the call asks again.
    h.discord
        .slash_command(CHANNEL, "rules", json!([]), &alice())
        .await;
    let listed = h
        .discord
        .wait_for_request(|r| r.path.ends_with("/callback"), WAIT)
        .await;
    assert!(
        listed
            .at("/data/content")
            .as_str()
            .is_some_and(|c| c.contains("rtest000001") && c.contains("pinky")),
        "{:?}",
        listed.at("/data/content")
    );
    let callbacks = |h: &Harness| {
        h.discord
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/callback"))
            .count()
    };
    h.answered(
        "rules",
        json!([{"name": "revoke", "type": 3, "value": "rtest000001"}]),
        &eve(),
        "needs an approver role",
    )
    .await;
    let before = callbacks(&h);
    h.answered(
        "rules",
        json!([{"name": "revoke", "type": 3, "value": "rtest000001"}]),
        &bob(),
        "revoked rule `rtest000001`",
    )
    .await;
    assert_eq!(callbacks(&h), before + 1);
    assert!(
        h.store
            .channel_rules(&CHANNEL.to_string(), std::time::SystemTime::now())
            .await
            .expect("rules")
            .is_empty()
    );
    h.stop().await;
}

/// A bot on `store`, talking to `discord` and the model at `llm`; returns its stop token
/// and task once it has registered its commands.
async fn bot_on(
    discord: &FakeDiscord,
    llm: &str,
    workspace: &std::path::Path,
    store: Arc<dyn Store>,
) -> (
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<Result<(), riskgate::discord::BotError>>,
) {
    let registered = discord
        .requests()
        .iter()
        .filter(|r| r.method == "PUT" && r.path.contains("/commands"))
        .count();
    let mut settings = Settings::default();
    settings.discord.token = Some("fake-token".to_owned().into());
    settings.discord.api_base_url = Some(discord.base_url());
    settings.discord.guild_id = Some(GUILD);
    settings.discord.channels = vec![CHANNEL];
    settings.discord.approver_roles = vec![APPROVER_ROLE];
    settings.llm.base_url = llm.to_owned();
    settings.llm.retry_base_delay_ms = 10;
    settings.tools.workspace = workspace.to_path_buf();
    let model = Arc::new(riskgate::app::model_client(&settings).expect("client"));
    let bot = Bot::build(&settings, model, store).await.expect("bot");
    let stop = bot.shutdown_token();
    let task = tokio::spawn(bot.run());
    discord::poll(WAIT, || {
        (discord
            .requests()
            .iter()
            .filter(|r| r.method == "PUT" && r.path.contains("/commands"))
            .count()
            > registered)
            .then_some(())
    })
    .await
    .expect("the bot registered its commands");
    (stop, task)
}

/// A run waits for a person; the bot stops and a new one starts on the same state; a click
/// then runs the stored call and the conversation goes on from where it stood.
async fn a_click_after_a_restart_continues_the_run(store_url: &str) {
    let discord = FakeDiscord::start(vec![guild()]).await;
    let llm = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "execute_command", json!({"command": "mkdir made"}))]),
        fake_llm::text("The folder is made."),
    ])
    .await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let open = || async {
        let store = riskgate::store::SqlStore::connect(store_url)
            .await
            .expect("store");
        Arc::new(store) as Arc<dyn Store>
    };
    let (stop, task) = bot_on(&discord, &llm.base_url(), workspace.path(), open().await).await;
    discord
        .message_create(CHANNEL, &alice(), "make a folder called made", &[])
        .await;
    let path = format!("/api/v10/channels/{CHANNEL}/messages");
    discord
        .wait_for_request(
            |r| r.method == "POST" && r.path == path && r.at("/components").is_array(),
            WAIT,
        )
        .await;
    let message = discord
        .messages_in(CHANNEL)
        .into_iter()
        .rev()
        .find(|m| m["components"].as_array().is_some_and(|c| !c.is_empty()))
        .expect("the approval message");
    let custom_id = message["components"][0]["components"][0]["custom_id"]
        .as_str()
        .expect("confirm")
        .to_owned();
    // A click is checked against the message the store recorded for the approval: the bot
    // stops once that is recorded, while the run waits.
    let approval_id = custom_id.strip_prefix("riskgate:confirm:").expect("ours");
    let recorded = open().await;
    for _ in 0..500 {
        let approval = recorded.approval(approval_id).await.expect("read");
        if approval.and_then(|a| a.message_ref).is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The bot stops while the run waits.
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    assert!(!workspace.path().join("made").exists());
    let (stop, task) = bot_on(&discord, &llm.base_url(), workspace.path(), open().await).await;
    discord
        .component_click(discord::id_of(&message["id"]), &custom_id, &alice())
        .await;
    let answer = discord
        .wait_for_request(|r| r.path.ends_with("/callback"), WAIT)
        .await;
    assert_eq!(
        answer.at("/type"),
        &json!(7),
        "the click settled the message"
    );
    discord
        .wait_for_request(
            |r| r.path == path && r.at("/content") == "The folder is made.",
            WAIT,
        )
        .await;
    assert!(
        workspace.path().join("made").is_dir(),
        "the stored call ran"
    );
    let requests = llm.requests().await;
    let last = requests.last().expect("the continued run asked the model");
    let sent = last["messages"].as_array().expect("messages");
    assert!(
        sent.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.contains("make a folder called made"))),
        "the stored conversation went on: {last:#}"
    );
    assert_eq!(sent.last().expect("last")["role"], "tool", "{last:#}");
    let store = open().await;
    let history = store
        .load_history(&CHANNEL.to_string(), 100_000)
        .await
        .expect("history");
    assert!(
        history
            .iter()
            .any(|m| m.content.as_deref() == Some("The folder is made.")),
        "the run's messages were saved: {history:?}"
    );
    let audit = store
        .recent_audit(&CHANNEL.to_string(), 5)
        .await
        .expect("audit");
    assert_eq!(audit[0].outcome.as_str(), "ok", "{audit:#?}");
    assert!(audit[0].approval_id.is_some());
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_after_a_restart_continues_the_run_on_sqlite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("state.db").display());
    a_click_after_a_restart_continues_the_run(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_after_a_restart_continues_the_run_on_postgres() {
    let Some(schema) = support::pg_schema::TestSchema::new().await else {
        eprintln!("skipped: {} not set", support::pg_schema::POSTGRES_ENV);
        return;
    };
    a_click_after_a_restart_continues_the_run(&schema.url).await;
}

/// What the scripted model asks `printf` to write: a right-to-left override, a zero-width
/// space, a fence and a mention.
const HIDDEN_NAME: &str = "report\u{202e}fdp.exe\u{200b} ```@everyone";

/// Asserts that no request the bot sent to Discord (message, edit, answer or attached file)
/// carries the call's raw direction control: people only ever see it escaped.
fn nothing_hidden_was_sent(h: &Harness) {
    for request in h.discord.requests() {
        let body = request
            .body
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default();
        let files = request
            .files
            .iter()
            .map(|f| String::from_utf8_lossy(&f.bytes));
        for text in files.chain(std::iter::once(body.into())) {
            assert!(
                !text.contains('\u{202e}') && !text.contains("\\u202e"),
                "a raw U+202E went to Discord: {text}"
            );
        }
    }
}

/// Alice asks for a report name; the model asks to run `command`, then says `then`.
async fn alice_asks_to_run(command: &str, then: &str) -> (Harness, u64, String) {
    let arguments = json!({ "command": command });
    alice_asks("write the report name", "execute_command", arguments, then).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_shows_hidden_characters_escaped_and_a_confirm_runs_them_exactly() {
    let command = format!("printf '%s' '{HIDDEN_NAME}' > out.txt");
    let (h, message, approval) = alice_asks_to_run(&command, "Written.").await;
    let shown = h.discord.message(message).expect("stored");
    let text = shown["content"].as_str().expect("content");
    // Everything before the expiry, exactly: the escapes, the warning, the fence kept shut
    // (a zero-width space between its backticks) and the mention as plain code.
    let head = format!(
        "**Confirm `execute_command`?** requested by <@{alice}>\n\
         ⚠ This call contains 2 characters that are invisible, change the text's direction or can pass for others (1 direction control, 1 invisible character), shown here as `\\u{{…}}` with the code point in hex. What runs is the call exactly as written, with them in it.\n\
         ```\n\
         printf '%s' 'report\\u{{202e}}fdp.exe\\u{{200b}} `\u{200b}`\u{200b}`@everyone' > out.txt\n\
         ```\n\
         **Why:** `> out.txt` writes to the file out.txt, replacing or growing it (`default`)",
        alice = alice().id
    );
    let (shown_head, expiry) = text.rsplit_once("\nExpires <t:").expect("an expiry");
    assert_eq!(shown_head, head);
    assert!(expiry.ends_with(":R>."), "{text}");
    assert_eq!(text.matches("```").count(), 2, "the fence holds: {text}");

    h.discord
        .component_click(message, &format!("riskgate:confirm:{approval}"), &alice())
        .await;
    let settled = h
        .discord
        .wait_for_request(
            |r| r.path.ends_with("/callback") && r.at("/type") == &json!(7),
            WAIT,
        )
        .await;
    assert_eq!(
        settled.at("/data/content"),
        &json!(format!("{head}\n✅ Confirmed by <@{}>.", alice().id)),
        "the settled message keeps the escaped call and the warning"
    );
    let ran = h
        .posted(CHANNEL, |c| c.contains("ran after confirmation"))
        .await;
    assert!(
        ran.at("/content")
            .as_str()
            .is_some_and(|c| c.contains("'report\\u{202e}fdp.exe\\u{200b} ")),
        "the result shows the command as its approval did: {ran:?}"
    );
    h.posted(CHANNEL, |c| c == "Written.").await;
    // What ran is the call as the model wrote it, hidden characters and all.
    assert_eq!(
        std::fs::read(h.workspace.path().join("out.txt")).expect("written"),
        HIDDEN_NAME.as_bytes()
    );
    nothing_hidden_was_sent(&h);
    for request in h.discord.requests().iter().filter(|r| r.method == "POST") {
        if request.body.is_some() && request.path.ends_with("/messages") {
            no_mentions(request);
        }
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_attaches_its_text_escaped_and_pending_says_it_hides_characters() {
    let filler = "x".repeat(1_900);
    let command = format!("printf '%s' '{filler}\u{202e}' > out.txt");
    let (h, message, approval) = alice_asks_to_run(&command, "Left it.").await;
    let posted = h
        .discord
        .requests()
        .into_iter()
        .find(|r| r.method == "POST" && r.at("/components").is_array())
        .expect("the approval was posted");
    let text = posted.at("/content").as_str().expect("content");
    let warning = "⚠ This call contains 1 character that is invisible, change the text's direction or can pass for others (1 direction control), shown here as `\\u{…}` with the code point in hex. What runs is the call exactly as written, with it in it.";
    assert!(
        text.contains(&format!(
            "\n{warning}\n**The whole call is in the attached `call.txt`**"
        )),
        "{text}"
    );
    let file = posted
        .files
        .iter()
        .find(|f| f.filename == "call.txt")
        .expect("call.txt attached");
    let file = String::from_utf8(file.bytes.clone()).expect("utf-8");
    assert!(
        file.ends_with(&format!(
            "{warning}\n\nwhat runs if it is confirmed:\nprintf '%s' '{filler}\\u{{202e}}' > out.txt\n"
        )),
        "{file}"
    );
    let pending = h.answered("pending", json!([]), &alice(), "shown as").await;
    assert!(
        pending
            .at("/data/content")
            .as_str()
            // The link to the message may still read "(message not posted)" for a moment.
            .is_some_and(|c| c
                .starts_with(&format!("• `execute_command` for <@{}>: ", alice().id))
                && c.ends_with(" (⚠ 1 character shown as `\\u{…}` in the approval)")),
        "{pending:?}"
    );
    h.discord
        .component_click(message, &format!("riskgate:cancel:{approval}"), &alice())
        .await;
    h.posted(CHANNEL, |c| c == "Left it.").await;
    assert!(!h.workspace.path().join("out.txt").exists(), "cancelled");
    nothing_hidden_was_sent(&h);
    h.stop().await;
}

// ---------------------------------------------------------------------------------------------
// Streamed answers (`llm.stream`, on by default): one message posted early and edited as the
// text comes, within Discord's edit rate, ending as exactly the reply.

/// The bot's requests on messages of `channel` (posts, edits, deletions), in order.
fn message_requests(h: &Harness, channel: u64) -> Vec<discord::RecordedRequest> {
    let posts = format!("/api/v10/channels/{channel}/messages");
    h.discord
        .requests()
        .into_iter()
        .filter(|r| {
            (r.method == "POST" && r.path == posts)
                || (matches!(r.method.as_str(), "PATCH" | "DELETE")
                    && r.path.starts_with(&format!("{posts}/")))
        })
        .collect()
}

/// The contents of the bot's messages in `channel`, oldest first.
fn bot_messages(h: &Harness, channel: u64) -> Vec<String> {
    h.discord
        .messages_in(channel)
        .iter()
        .filter(|m| discord::id_of(&m["author"]["id"]) == discord::BOT_ID)
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Waits until the bot's messages in `channel` are `expected`.
async fn bot_messages_become(h: &Harness, channel: u64, expected: &[String]) {
    let found = discord::poll(WAIT, || {
        (bot_messages(h, channel) == expected).then_some(())
    })
    .await;
    assert!(
        found.is_some(),
        "the bot's messages: {:#?}\nexpected: {expected:#?}",
        bot_messages(h, channel)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_answer_is_one_message_edited_as_it_comes_within_discords_rate() {
    let answer = "@everyone The nightly build failed in step three, where the linker ran out of \
                  memory. Raising the runner's memory to 8 GB, or linking with mold, fixes it; \
                  the two runs before it passed with the same commit, so nothing in the code \
                  changed. I would retry it once the runner is resized."
        .to_owned();
    let h = start(
        vec![fake_llm::paced(
            fake_llm::text(&answer),
            Duration::from_millis(120),
        )],
        |_| {},
    )
    .await;
    let started = std::time::Instant::now();
    h.discord
        .message_create(CHANNEL, &alice(), "why did the build fail?", &[])
        .await;
    bot_messages_become(&h, CHANNEL, std::slice::from_ref(&answer)).await;
    let took = started.elapsed();
    let requests = message_requests(&h, CHANNEL);
    // One message: posted once, then only edited; nothing deleted, no second post.
    assert_eq!(requests[0].method, "POST", "{requests:#?}");
    assert!(
        requests[1..].iter().all(|r| r.method == "PATCH"),
        "{requests:#?}"
    );
    assert!(
        requests.len() >= 3,
        "edited as the text came: {requests:#?}"
    );
    // The first text was shown while the model was still writing.
    let first = requests[0].at("/content").as_str().expect("content");
    assert!(
        !first.is_empty() && first.len() < answer.len() && answer.starts_with(first),
        "{first:?}"
    );
    assert!(
        requests[0].at.duration_since(started) < took / 2,
        "shown early: {:?} of {took:?}",
        requests[0].at.duration_since(started)
    );
    // Within Discord's rate (about 5 edits per 5 s in a channel): one request a second.
    for pair in requests.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(
            gap >= Duration::from_millis(950),
            "{gap:?} between two edits"
        );
    }
    // Mentions stay off in every post and edit: the model's @everyone pings nobody.
    for request in &requests {
        no_mentions(request);
    }
    // The final message is the answer, and it is the only reply.
    assert_eq!(bot_messages(&h, CHANNEL), [answer]);
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_streamed_answer_is_split_as_a_long_reply_is() {
    let mut long = String::from("Here are the numbers:\n```\n");
    for i in 0..130 {
        long.push_str(&format!("line {i:03} ........................\n"));
    }
    long.push_str("```\nDone.");
    let h = start(
        vec![fake_llm::paced(
            fake_llm::text(&long),
            Duration::from_millis(8),
        )],
        |_| {},
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "list everything", &[])
        .await;
    let expected =
        riskgate::discord::render::split_message(&long, riskgate::discord::render::MESSAGE_LIMIT);
    assert!(expected.len() >= 3);
    bot_messages_become(&h, CHANNEL, &expected).await;
    let requests = message_requests(&h, CHANNEL);
    assert!(
        requests.iter().any(|r| r.method == "PATCH"),
        "the draft was shown before the end: {requests:#?}"
    );
    for request in requests.iter().filter(|r| r.method != "DELETE") {
        no_mentions(request);
        let content = request.at("/content").as_str().unwrap_or_default();
        assert!(content.chars().count() <= 2000, "{content}");
        assert_eq!(
            content.matches("```").count() % 2,
            0,
            "fences balanced:\n{content}"
        );
    }
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_tool_call_runs_once_and_its_text_is_taken_back() {
    let Scripted::Reply(mut call) = fake_llm::tool_calls(&[(
        "c1",
        "execute_command",
        json!({"command": "echo streamed-call-ran"}),
    )]) else {
        unreachable!("tool_calls is a reply")
    };
    // Text before the call, as some models write it: shown as it comes, then taken back.
    call["choices"][0]["message"]["content"] =
        json!("Let me run that for you, it takes only a moment to finish.");
    let h = start(
        vec![
            fake_llm::paced(Scripted::Reply(call), Duration::from_millis(100)),
            fake_llm::text("It printed streamed-call-ran."),
        ],
        |_| {},
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "run it", &[])
        .await;
    h.posted(CHANNEL, |c| c == "It printed streamed-call-ran.")
        .await;
    let ran: Vec<String> = bot_messages(&h, CHANNEL)
        .into_iter()
        .filter(|c| c.contains("ran automatically"))
        .collect();
    assert_eq!(ran.len(), 1, "{ran:?}");
    let requests = h.llm.requests().await;
    assert_eq!(requests.len(), 2);
    let results: Vec<&Value> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 1, "one call, one result");
    assert!(
        results[0]["content"]
            .as_str()
            .is_some_and(|c| c.contains("streamed-call-ran")),
        "{results:?}"
    );
    // The text beside the call was posted while it streamed, then deleted.
    let requests = message_requests(&h, CHANNEL);
    let draft = requests
        .iter()
        .find(|r| {
            r.method == "POST"
                && r.at("/content")
                    .as_str()
                    .is_some_and(|c| c.starts_with("Let me"))
        })
        .expect("the text was shown as it came");
    assert!(draft.at.elapsed() > Duration::ZERO);
    assert!(
        requests.iter().any(|r| r.method == "DELETE"),
        "{requests:#?}"
    );
    assert_eq!(
        bot_messages(&h, CHANNEL)
            .iter()
            .filter(|c| c.starts_with("Let me"))
            .count(),
        0
    );
    h.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_before_think_never_reaches_the_channel_nor_the_history() {
    let h = start(
        vec![
            fake_llm::paced(
                fake_llm::text("The user asks the day.\n</think>\n\nIt is Friday."),
                Duration::from_millis(60),
            ),
            // The model is known to reason now: a long reasoning shows nothing until its end.
            fake_llm::paced(
                fake_llm::text(
                    "Hmm, they ask again; thinking it over slowly, checking the calendar \
                     twice, and the weekday once more before answering.</think>Still Friday.",
                ),
                Duration::from_millis(100),
            ),
        ],
        |_| {},
    )
    .await;
    h.discord
        .message_create(CHANNEL, &alice(), "what day is it?", &[])
        .await;
    h.posted(CHANNEL, |c| c == "It is Friday.").await;
    h.discord
        .message_create(CHANNEL, &alice(), "sure?", &[])
        .await;
    bot_messages_become(
        &h,
        CHANNEL,
        &["It is Friday.".to_owned(), "Still Friday.".to_owned()],
    )
    .await;
    for request in message_requests(&h, CHANNEL) {
        let content = request.at("/content").as_str().unwrap_or_default();
        assert!(
            !content.contains("think") && !content.contains("calendar"),
            "{content:?}"
        );
    }
    // What was stored, and sent back as history, is the answer alone.
    let requests = h.llm.requests().await;
    let history = requests[1]["messages"].to_string();
    assert!(history.contains("It is Friday."), "{history}");
    assert!(!history.contains("asks the day"), "{history}");
    h.stop().await;
}
