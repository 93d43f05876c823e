//! The fake Discord proves itself against real serenity 0.12.5: every frame and REST answer it
//! sends deserializes with serenity's own models, and a real serenity client connects, replies
//! with buttons, handles a click and a slash command, runs two shards, and survives a dropped
//! gateway. Every wait has a timeout, so a dropped event fails fast instead of hanging.

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use serenity::all::{
    ButtonStyle, ChannelId, ChannelType, Client, ClientBuilder, Command, Context, CreateActionRow,
    CreateAllowedMentions, CreateAttachment, CreateButton, CreateCommand,
    CreateInteractionResponse, CreateInteractionResponseFollowup, CreateInteractionResponseMessage,
    CreateMessage, EditMessage, EventHandler, GatewayIntents, GuildId, Http, HttpBuilder,
    Interaction, Message, Ready, ShardManager, UserId,
};
use serenity::model::channel::Channel;
use serenity::model::event::{Event, GatewayEvent};
use support::fake_discord::{
    APP_ID, AttachmentSpec, BOT_ID, FakeDiscord, GuildSpec, RecordedRequest, UserSpec, WAIT, id_of,
    perms,
};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message as Frame;

const TOKEN: &str = "fake-token";
/// `(id >> 22) % 2` is 0 for GUILD_A and 1 for GUILD_B.
const GUILD_A: u64 = 1000 << 22;
const GUILD_B: u64 = 1001 << 22;
const CHANNEL_A: u64 = 2001;
const THREAD_A: u64 = 2002;
const CHANNEL_B: u64 = 3001;
const ROLE_OPS: u64 = 4001;
const TIMEOUT: Duration = Duration::from_secs(10);

fn guilds() -> Vec<GuildSpec> {
    vec![
        GuildSpec::new(GUILD_A, "ops")
            .text_channel(CHANNEL_A, "general")
            .thread(THREAD_A, CHANNEL_A, "incident")
            .role(ROLE_OPS, "ops", perms::ADMINISTRATOR),
        GuildSpec::new(GUILD_B, "dev").text_channel(CHANNEL_B, "general"),
    ]
}

fn ada() -> UserSpec {
    UserSpec::new(5001, "ada").with_roles(&[ROLE_OPS])
}

fn http_for(fake: &FakeDiscord) -> Http {
    HttpBuilder::new(TOKEN)
        .proxy(fake.base_url())
        .ratelimiter_disabled(true)
        .default_allowed_mentions(CreateAllowedMentions::new())
        .build()
}

// ---------------------------------------------------------------------------------------------
// Fixtures: what the fake sends, read back with serenity's models.

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(fake: &FakeDiscord) -> Socket {
    let url = format!("{}/gateway?v=10", fake.base_url().replace("http", "ws"));
    let (socket, _) = tokio_tungstenite::connect_async(url)
        .await
        .expect("gateway connects");
    socket
}

/// The next text frame, parsed both as JSON and as serenity's `GatewayEvent`.
async fn next_frame(socket: &mut Socket) -> (Value, GatewayEvent) {
    let frame = tokio::time::timeout(TIMEOUT, socket.next())
        .await
        .expect("a frame within the timeout")
        .expect("the socket is open")
        .expect("a readable frame");
    let Frame::Text(text) = frame else {
        panic!("expected a text frame, got {frame:?}")
    };
    let json: Value = serde_json::from_str(text.as_str()).expect("frame is JSON");
    let event = serde_json::from_value(json.clone())
        .unwrap_or_else(|e| panic!("serenity rejects {json}: {e}"));
    (json, event)
}

async fn send_op(socket: &mut Socket, payload: Value) {
    socket
        .send(Frame::text(payload.to_string()))
        .await
        .expect("send to the fake gateway");
}

fn identify(shard: [u32; 2], intents: u64) -> Value {
    json!({ "op": 2, "d": { "token": TOKEN, "intents": intents, "shard": shard,
        "properties": { "os": "linux", "browser": "test", "device": "test" } } })
}

#[tokio::test]
async fn gateway_frames_deserialize_as_serenity_events() {
    let fake = FakeDiscord::start(guilds()).await;
    let mut socket = connect(&fake).await;

    let (_, hello) = next_frame(&mut socket).await;
    assert!(matches!(hello, GatewayEvent::Hello(41_250)), "{hello:?}");

    send_op(&mut socket, identify([0, 1], (1 << 9) | (1 << 15))).await;
    let (json, ready) = next_frame(&mut socket).await;
    let GatewayEvent::Dispatch(1, Event::Ready(ready)) = ready else {
        panic!("READY: {json}")
    };
    assert_eq!(ready.ready.application.id.get(), APP_ID);
    assert_eq!(ready.ready.user.id.get(), BOT_ID);
    assert!(ready.ready.user.bot);
    let mut unavailable: Vec<u64> = ready.ready.guilds.iter().map(|g| g.id.get()).collect();
    unavailable.sort_unstable();
    assert_eq!(unavailable, [GUILD_A, GUILD_B]);

    for expected_seq in [2, 3] {
        let (json, event) = next_frame(&mut socket).await;
        let GatewayEvent::Dispatch(seq, Event::GuildCreate(create)) = event else {
            panic!("GUILD_CREATE: {json}")
        };
        assert_eq!(seq, expected_seq);
        let guild = create.guild;
        assert!(
            guild.members.contains_key(&UserId::new(BOT_ID)),
            "the bot is a member"
        );
        if guild.id.get() == GUILD_A {
            assert_eq!(
                guild.channels[&ChannelId::new(CHANNEL_A)].kind,
                ChannelType::Text
            );
            assert_eq!(guild.threads[0].kind, ChannelType::PublicThread);
            assert_eq!(guild.threads[0].parent_id, Some(ChannelId::new(CHANNEL_A)));
            assert_eq!(guild.roles.len(), 3, "@everyone, the bot's role and ops");
        }
    }
    assert_eq!(fake.identifies()[0].shard, [0, 1]);

    send_op(&mut socket, json!({ "op": 1, "d": 3 })).await;
    let (_, ack) = next_frame(&mut socket).await;
    assert!(matches!(ack, GatewayEvent::HeartbeatAck), "{ack:?}");

    // The pushes: MESSAGE_CREATE, then a click on a stored message and a slash command.
    let pushed = fake
        .message_create(CHANNEL_A, &ada(), "hello <@1>", &[])
        .await;
    let (json, event) = next_frame(&mut socket).await;
    let GatewayEvent::Dispatch(4, Event::MessageCreate(created)) = event else {
        panic!("{json}")
    };
    let message = created.message;
    assert_eq!(message.content, "hello <@1>");
    assert_eq!(message.guild_id, Some(GuildId::new(GUILD_A)));
    assert_eq!(message.author.name, "ada");
    assert_eq!(
        message.member.expect("member in a guild").roles[0].get(),
        ROLE_OPS
    );
    assert_eq!(message.id.get(), id_of(&pushed["id"]));

    let http = http_for(&fake);
    let buttons =
        CreateMessage::new()
            .content("Run it?")
            .components(vec![CreateActionRow::Buttons(vec![
                CreateButton::new("confirm:7").label("Confirm"),
            ])]);
    let posted = http
        .send_message(ChannelId::new(CHANNEL_A), vec![], &buttons)
        .await
        .unwrap();
    fake.component_click(posted.id.get(), "confirm:7", &ada())
        .await;
    let (json, event) = next_frame(&mut socket).await;
    let GatewayEvent::Dispatch(5, Event::InteractionCreate(create)) = event else {
        panic!("{json}")
    };
    let Interaction::Component(click) = create.interaction else {
        panic!("component: {json}")
    };
    assert_eq!(click.data.custom_id, "confirm:7");
    assert_eq!(click.message.id, posted.id);
    assert_eq!(
        click.user.name, "ada",
        "serenity copies member.user into user"
    );
    let member = click.member.expect("member in a guild");
    assert!(
        member.permissions.expect("permissions").administrator(),
        "ops is admin"
    );
    assert!(
        click
            .app_permissions
            .expect("app permissions")
            .send_messages()
    );

    fake.slash_command(
        THREAD_A,
        "status",
        json!([{ "name": "verbose", "type": 5, "value": true }]),
        &ada(),
    )
    .await;
    let (json, event) = next_frame(&mut socket).await;
    let GatewayEvent::Dispatch(6, Event::InteractionCreate(create)) = event else {
        panic!("{json}")
    };
    let Interaction::Command(command) = create.interaction else {
        panic!("command: {json}")
    };
    assert_eq!(command.data.name, "status");
    assert_eq!(command.data.options[0].name, "verbose");
    assert_eq!(command.channel_id.get(), THREAD_A);
    assert_eq!(
        command.channel.expect("partial channel").kind,
        ChannelType::PublicThread
    );
}

#[tokio::test]
async fn resume_answers_resumed_for_a_known_session_and_invalid_session_otherwise() {
    let fake = FakeDiscord::start(guilds()).await;
    let mut socket = connect(&fake).await;
    next_frame(&mut socket).await;
    send_op(&mut socket, identify([0, 1], 1 << 9)).await;
    let (ready, _) = next_frame(&mut socket).await;
    let session_id = ready["d"]["session_id"]
        .as_str()
        .expect("session id")
        .to_owned();
    fake.wait_for_connections(1, TIMEOUT).await;

    assert_eq!(fake.drop_gateway().await, 1);
    let close = loop {
        let frame = tokio::time::timeout(TIMEOUT, socket.next())
            .await
            .expect("a close frame");
        match frame {
            Some(Ok(Frame::Close(Some(close)))) => break close,
            Some(Ok(Frame::Text(_))) => continue, // the GUILD_CREATEs
            other => panic!("expected a close frame, got {other:?}"),
        }
    };
    assert_eq!(u16::from(close.code), 4000);

    let mut socket = connect(&fake).await;
    next_frame(&mut socket).await;
    send_op(
        &mut socket,
        json!({ "op": 6, "d": { "token": TOKEN, "session_id": session_id, "seq": 3 } }),
    )
    .await;
    let (json, resumed) = next_frame(&mut socket).await;
    assert!(
        matches!(resumed, GatewayEvent::Dispatch(4, Event::Resumed(_))),
        "{json}"
    );

    let mut socket = connect(&fake).await;
    next_frame(&mut socket).await;
    send_op(
        &mut socket,
        json!({ "op": 6, "d": { "token": TOKEN, "session_id": "nope", "seq": 1 } }),
    )
    .await;
    let (json, invalid) = next_frame(&mut socket).await;
    assert!(
        matches!(invalid, GatewayEvent::InvalidateSession(false)),
        "{json}"
    );
    let accepted: Vec<bool> = fake.resumes().iter().map(|r| r.accepted).collect();
    assert_eq!(accepted, [true, false]);
}

#[tokio::test]
async fn message_create_skips_a_session_without_the_guild_messages_intent() {
    let fake = FakeDiscord::start(guilds()).await;
    let mut socket = connect(&fake).await;
    next_frame(&mut socket).await;
    send_op(&mut socket, identify([0, 1], 1)).await; // GUILDS only
    for _ in 0..3 {
        next_frame(&mut socket).await; // READY and two GUILD_CREATEs
    }
    fake.wait_for_connections(1, TIMEOUT).await;

    fake.message_create(CHANNEL_A, &ada(), "unseen", &[]).await;
    send_op(&mut socket, json!({ "op": 1, "d": 3 })).await;
    let (json, next) = next_frame(&mut socket).await;
    assert!(
        matches!(next, GatewayEvent::HeartbeatAck),
        "no MESSAGE_CREATE first: {json}"
    );
}

#[tokio::test]
async fn a_messages_attachments_deserialize_and_the_fake_serves_their_bytes() {
    let fake = FakeDiscord::start(guilds()).await;
    let mut socket = connect(&fake).await;
    next_frame(&mut socket).await;
    send_op(&mut socket, identify([0, 1], (1 << 9) | (1 << 15))).await;
    for _ in 0..3 {
        next_frame(&mut socket).await; // READY and two GUILD_CREATEs
    }
    fake.wait_for_connections(1, TIMEOUT).await;

    let files = [
        AttachmentSpec::new("notes.txt", Some("text/plain; charset=utf-8"), "hello"),
        AttachmentSpec::new("blob", None, vec![0u8, 1, 2]),
        AttachmentSpec::new("endless.log", Some("text/plain"), vec![b'x'; 1000])
            .declared_size(10)
            .repeat_to(5000),
    ];
    fake.message_create_with(CHANNEL_A, &ada(), "", &[], &files)
        .await;
    let (json, event) = next_frame(&mut socket).await;
    let GatewayEvent::Dispatch(_, Event::MessageCreate(created)) = event else {
        panic!("{json}")
    };
    let attachments = created.message.attachments;
    let shown: Vec<_> = attachments
        .iter()
        .map(|a| (a.filename.as_str(), a.size, a.content_type.as_deref()))
        .collect();
    assert_eq!(
        shown,
        [
            ("notes.txt", 5, Some("text/plain; charset=utf-8")),
            ("blob", 3, None),
            ("endless.log", 10, Some("text/plain")),
        ]
    );
    let client = reqwest::Client::new();
    let get = |url: String| {
        let client = client.clone();
        async move {
            let response = client.get(&url).send().await.expect("the fake answers");
            let kind = response
                .headers()
                .get("content-type")
                .map(|k| k.to_str().expect("ascii").to_owned());
            let length = response.content_length();
            (kind, length, response.bytes().await.expect("body").to_vec())
        }
    };
    let url = |i: usize| attachments[i].url.clone();
    assert!(url(0).starts_with(&fake.base_url()), "{}", url(0));
    assert_eq!(
        get(url(0)).await,
        (
            Some("text/plain; charset=utf-8".into()),
            Some(5),
            b"hello".to_vec()
        )
    );
    assert_eq!(get(url(1)).await, (None, Some(3), vec![0, 1, 2]));
    let (_, length, body) = get(url(2)).await;
    assert_eq!(
        (length, body.len()),
        (None, 5000),
        "repeated past the declared 10"
    );
    assert_eq!(fake.attachment_bytes_served(&url(2)), 5000);
    let missing = url(0)
        .replace("/notes.txt", "/other.txt")
        .replace(&attachments[0].id.get().to_string(), "1");
    let status = client.get(&missing).send().await.expect("answer").status();
    assert_eq!(status, 404);
    let downloads = fake
        .requests()
        .iter()
        .filter(|r| r.is("GET", "/attachments/{}/{}"))
        .count();
    assert_eq!(downloads, 4, "each download is recorded");
}

/// Why the fixtures are tested: serenity does not reject a dispatch it cannot read, it turns it
/// into `Event::Unknown` (logged at DEBUG), so the handler is silently never called.
#[tokio::test]
async fn a_message_missing_a_required_field_becomes_an_unknown_event() {
    let fake = FakeDiscord::start(guilds()).await;
    let posted = http_for(&fake)
        .send_message(
            CHANNEL_A.into(),
            vec![],
            &CreateMessage::new().content("hi"),
        )
        .await
        .unwrap();
    let mut message = fake.message(posted.id.get()).expect("stored");
    let frame = |d: &Value| json!({ "op": 0, "s": 9, "t": "MESSAGE_CREATE", "d": d });

    let whole: GatewayEvent = serde_json::from_value(frame(&message)).unwrap();
    assert!(matches!(
        whole,
        GatewayEvent::Dispatch(9, Event::MessageCreate(_))
    ));
    message.as_object_mut().unwrap().remove("timestamp");
    let partial: GatewayEvent = serde_json::from_value(frame(&message)).unwrap();
    assert!(
        matches!(partial, GatewayEvent::Dispatch(9, Event::Unknown(_))),
        "{partial:?}"
    );
}

#[tokio::test]
async fn rest_answers_deserialize_with_serenity_and_every_request_is_recorded() {
    let fake = FakeDiscord::start(guilds()).await;
    let http = http_for(&fake);
    http.set_application_id(APP_ID.into());

    let gateway = http.get_gateway().await.unwrap();
    assert_eq!(
        gateway.url,
        format!("{}/gateway", fake.base_url().replace("http", "ws"))
    );
    fake.set_recommended_shards(2);
    assert_eq!(http.get_bot_gateway().await.unwrap().shards, 2);
    assert_eq!(http.get_current_user().await.unwrap().id.get(), BOT_ID);

    let Channel::Guild(thread) = http.get_channel(THREAD_A.into()).await.unwrap() else {
        panic!("a guild channel")
    };
    assert_eq!(
        (thread.kind, thread.parent_id),
        (ChannelType::PublicThread, Some(CHANNEL_A.into()))
    );
    let roles = http.get_guild_roles(GUILD_A.into()).await.unwrap();
    assert!(roles.iter().any(|r| r.id.get() == ROLE_OPS));
    let bot = http
        .get_member(GUILD_A.into(), BOT_ID.into())
        .await
        .unwrap();
    assert_eq!(bot.user.id.get(), BOT_ID);

    // A multipart upload, an edit keeping the attachment, a read back and a delete.
    let upload = CreateMessage::new()
        .content("report attached")
        .add_file(CreateAttachment::bytes(b"rows: 3".to_vec(), "report.txt"));
    let sent = ChannelId::new(CHANNEL_A)
        .send_message(&http, upload)
        .await
        .unwrap();
    assert_eq!(sent.attachments[0].filename, "report.txt");
    assert_eq!(sent.attachments[0].size, 7);
    let recorded = fake
        .wait_for_request(|r| r.is("POST", "/api/v10/channels/{}/messages"), WAIT)
        .await;
    assert_eq!(recorded.files[0].field, "files[0]");
    assert_eq!(
        (recorded.files[0].filename.as_str(), recorded.files[0].size),
        ("report.txt", 7)
    );
    assert_eq!(recorded.at("/content"), "report attached");
    assert_eq!(
        recorded.at("/allowed_mentions"),
        &json!({ "parse": [], "roles": [], "users": [] })
    );
    assert!(recorded.headers["content-type"].starts_with("multipart/form-data"));
    assert_eq!(recorded.headers["authorization"], format!("Bot {TOKEN}"));

    let edited = ChannelId::new(CHANNEL_A)
        .edit_message(
            &http,
            sent.id,
            EditMessage::new().content("report (edited)"),
        )
        .await
        .unwrap();
    assert_eq!(edited.content, "report (edited)");
    assert!(edited.edited_timestamp.is_some());
    assert_eq!(
        edited.attachments.len(),
        1,
        "an edit without attachments keeps them"
    );
    let read = http.get_message(CHANNEL_A.into(), sent.id).await.unwrap();
    assert_eq!(read.content, "report (edited)");
    assert_eq!(fake.messages_in(CHANNEL_A).len(), 1);
    http.delete_message(CHANNEL_A.into(), sent.id, None)
        .await
        .unwrap();
    assert!(fake.messages_in(CHANNEL_A).is_empty());
    ChannelId::new(CHANNEL_A)
        .broadcast_typing(&http)
        .await
        .unwrap();

    // Commands: ids are kept by name across overwrites.
    let first = Command::set_global_commands(
        &http,
        vec![CreateCommand::new("status").description("Show status")],
    )
    .await
    .unwrap();
    let again = Command::set_global_commands(
        &http,
        vec![CreateCommand::new("status").description("Show it")],
    )
    .await
    .unwrap();
    assert_eq!(first[0].id, again[0].id);
    assert_eq!(again[0].description, "Show it");
    let guild_commands = GuildId::new(GUILD_A)
        .set_commands(
            &http,
            vec![CreateCommand::new("approve").description("Approve")],
        )
        .await
        .unwrap();
    assert_eq!(guild_commands[0].guild_id, Some(GUILD_A.into()));
    assert_eq!(http.get_global_commands().await.unwrap().len(), 1);

    // An unknown route is a Discord-shaped 404, recorded for the test to see.
    let missing = http.get_guild(GUILD_A.into()).await.unwrap_err();
    assert!(
        missing.to_string().contains("no route for GET"),
        "{missing}"
    );
    let unexpected: Vec<RecordedRequest> = fake
        .requests()
        .into_iter()
        .filter(|r| r.status == 404)
        .collect();
    assert_eq!(unexpected.len(), 1);
    assert!(unexpected[0].is("GET", "/api/v10/guilds/{}"));
}

#[tokio::test]
async fn interaction_callbacks_follow_ups_and_original_edits() {
    let fake = FakeDiscord::start(guilds()).await;
    let http = http_for(&fake);
    http.set_application_id(APP_ID.into());
    let mut socket = connect(&fake).await;
    next_frame(&mut socket).await;
    send_op(&mut socket, identify([0, 1], 1)).await;
    fake.wait_for_connections(1, TIMEOUT).await;

    let interaction = fake
        .slash_command(CHANNEL_A, "status", json!([]), &ada())
        .await;
    let (id, token) = (
        id_of(&interaction["id"]),
        interaction["token"].as_str().unwrap(),
    );
    let reply = CreateInteractionResponse::Message(
        CreateInteractionResponseMessage::new()
            .content("working")
            .ephemeral(true),
    );
    http.create_interaction_response(id.into(), token, &reply, vec![])
        .await
        .unwrap();
    let twice = http
        .create_interaction_response(id.into(), token, &reply, vec![])
        .await
        .unwrap_err();
    assert!(
        twice.to_string().contains("already been acknowledged"),
        "{twice}"
    );

    let original = http.get_original_interaction_response(token).await.unwrap();
    assert_eq!(original.content, "working");
    let edit = json!({ "content": "done" });
    let edited = http
        .edit_original_interaction_response(token, &edit, vec![])
        .await
        .unwrap();
    assert_eq!((edited.id, edited.content.as_str()), (original.id, "done"));
    let follow_up = CreateInteractionResponseFollowup::new()
        .content("details")
        .ephemeral(true);
    let followed = http
        .create_followup_message(token, &follow_up, vec![])
        .await
        .unwrap();
    assert_eq!(followed.content, "details");
    // The raw `Http` methods skip `default_allowed_mentions`: only the builders' paths
    // (`ChannelId::send_message`, `create_response`, ...) fill it in.
    let callback = fake
        .wait_for_request(
            |r| r.is("POST", "/api/v10/interactions/{}/{}/callback"),
            WAIT,
        )
        .await;
    assert_eq!(callback.at("/data/allowed_mentions"), &Value::Null);
    let bodies: Vec<(String, Value)> = fake
        .requests()
        .iter()
        .map(|r| {
            (
                format!("{} {}", r.method, r.path.replace(token, "TOKEN")),
                r.at("/data/flags").clone(),
            )
        })
        .collect();
    assert_eq!(
        bodies[0],
        (
            format!("POST /api/v10/interactions/{id}/TOKEN/callback"),
            json!(64)
        )
    );
    assert!(
        bodies.iter().any(|(route, _)| route
            == &format!("PATCH /api/v10/webhooks/{APP_ID}/TOKEN/messages/@original"))
    );

    // Three seconds later Discord no longer knows the interaction.
    let late = fake
        .slash_command(CHANNEL_A, "status", json!([]), &ada())
        .await;
    tokio::time::sleep(Duration::from_millis(3100)).await;
    let late_token = late["token"].as_str().unwrap();
    let err = http
        .create_interaction_response(id_of(&late["id"]).into(), late_token, &reply, vec![])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Unknown interaction"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// A real serenity client against the fake.

/// What the test bot saw, in order.
#[derive(Debug)]
enum Seen {
    Ready {
        shard: u32,
        guilds: Vec<u64>,
    },
    Message {
        shard: u32,
        channel: u64,
        content: String,
    },
    Clicked(String),
    Command(String),
    Failed(String),
}

/// A small bot: `!risky` gets a question with Confirm/Cancel buttons, a click updates the
/// message without buttons, `/status` gets an ephemeral answer. It reports what it saw.
struct Bot {
    seen: mpsc::UnboundedSender<Seen>,
}

#[serenity::async_trait]
impl EventHandler for Bot {
    async fn ready(&self, ctx: Context, ready: Ready) {
        let guilds = ready.guilds.iter().map(|g| g.id.get()).collect();
        let _ = self.seen.send(Seen::Ready {
            shard: ctx.shard_id.0,
            guilds,
        });
        let status = CreateCommand::new("status").description("Show the agent's status");
        if let Err(e) = Command::set_global_commands(&ctx.http, vec![status]).await {
            let _ = self.seen.send(Seen::Failed(e.to_string()));
        }
    }

    async fn message(&self, ctx: Context, msg: Message) {
        if msg.author.bot {
            return;
        }
        let (shard, channel) = (ctx.shard_id.0, msg.channel_id.get());
        let _ = self.seen.send(Seen::Message {
            shard,
            channel,
            content: msg.content.clone(),
        });
        if msg.content != "!risky" {
            return;
        }
        let _ = msg.channel_id.broadcast_typing(&ctx.http).await;
        let buttons = CreateActionRow::Buttons(vec![
            CreateButton::new("confirm:42")
                .label("Confirm")
                .style(ButtonStyle::Danger),
            CreateButton::new("cancel:42")
                .label("Cancel")
                .style(ButtonStyle::Secondary),
        ]);
        let ask = CreateMessage::new()
            .content("Run `DROP TABLE users` for @everyone?")
            .components(vec![buttons]);
        if let Err(e) = msg.channel_id.send_message(&ctx, ask).await {
            let _ = self.seen.send(Seen::Failed(e.to_string()));
        }
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let (seen, response) = match interaction {
            Interaction::Component(ref click) => (
                Seen::Clicked(click.data.custom_id.clone()),
                CreateInteractionResponse::UpdateMessage(
                    CreateInteractionResponseMessage::new()
                        .content(format!("Confirmed by {}", click.user.name))
                        .components(vec![]),
                ),
            ),
            Interaction::Command(ref command) => (
                Seen::Command(command.data.name.clone()),
                CreateInteractionResponse::Message(
                    CreateInteractionResponseMessage::new()
                        .content("idle, @everyone")
                        .ephemeral(true),
                ),
            ),
            _ => return,
        };
        let answered = match &interaction {
            Interaction::Component(click) => click.create_response(&ctx.http, response).await,
            Interaction::Command(command) => command.create_response(&ctx.http, response).await,
            _ => return,
        };
        let _ = self.seen.send(seen);
        if let Err(e) = answered {
            let _ = self.seen.send(Seen::Failed(e.to_string()));
        }
    }
}

/// A serenity client wired to the fake as `support/fake_discord.rs` says at its top; `start`
/// runs it in a task.
async fn client(
    fake: &FakeDiscord,
    intents: GatewayIntents,
) -> (Client, mpsc::UnboundedReceiver<Seen>) {
    let (seen, events) = mpsc::unbounded_channel();
    let client = ClientBuilder::new_with_http(http_for(fake), intents)
        .event_handler(Bot { seen })
        .await
        .expect("the client builds against the fake");
    (client, events)
}

fn run(mut client: Client, shards: Shards) -> Arc<ShardManager> {
    let manager = client.shard_manager.clone();
    tokio::spawn(async move {
        let result = match shards {
            Shards::One => client.start().await,
            Shards::All(total) => client.start_shards(total).await,
            Shards::Range(range, total) => client.start_shard_range(range, total).await,
        };
        if let Err(e) = result {
            panic!("client stopped: {e}");
        }
    });
    manager
}

enum Shards {
    One,
    All(u32),
    Range(std::ops::Range<u32>, u32),
}

async fn next_seen(
    events: &mut mpsc::UnboundedReceiver<Seen>,
    wanted: impl Fn(&Seen) -> bool,
) -> Seen {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let seen = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("the bot saw the event within the timeout")
            .expect("the bot is running");
        if let Seen::Failed(why) = &seen {
            panic!("the bot failed: {why}");
        }
        if wanted(&seen) {
            return seen;
        }
    }
}

const INTENTS: GatewayIntents = GatewayIntents::GUILDS
    .union(GatewayIntents::GUILD_MESSAGES)
    .union(GatewayIntents::MESSAGE_CONTENT);

#[tokio::test]
async fn serenity_replies_with_buttons_updates_on_click_and_answers_commands_ephemerally() {
    let fake = FakeDiscord::start(guilds()).await;
    let (client, mut events) = client(&fake, INTENTS).await;
    let manager = run(client, Shards::One);

    next_seen(&mut events, |s| matches!(s, Seen::Ready { .. })).await;
    let first = &fake.requests()[0];
    assert!(
        first.is("GET", "/api/v10/gateway"),
        "the builder asks for the URL: {first:?}"
    );
    let identify = &fake.identifies()[0];
    assert_eq!(identify.intents, INTENTS.bits());
    assert_eq!(identify.shard, [0, 1]);
    assert_eq!(
        identify.token,
        format!("Bot {TOKEN}"),
        "serenity sends the HTTP form of the token"
    );
    let commands = fake
        .wait_for_request(|r| r.is("PUT", "/api/v10/applications/{}/commands"), WAIT)
        .await;
    assert_eq!(
        commands.path,
        format!("/api/v10/applications/{APP_ID}/commands"),
        "app id from READY"
    );
    assert_eq!(commands.at("/0/name"), "status");

    fake.wait_for_connections(1, TIMEOUT).await;
    fake.message_create(CHANNEL_A, &ada(), "!risky", &[]).await;
    let post = fake
        .wait_for_request(|r| r.is("POST", "/api/v10/channels/{}/messages"), WAIT)
        .await;
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.is("POST", "/api/v10/channels/{}/typing") && r.status == 204)
    );
    assert_eq!(post.path, format!("/api/v10/channels/{CHANNEL_A}/messages"));
    assert_eq!(post.at("/content"), "Run `DROP TABLE users` for @everyone?");
    assert_eq!(
        post.at("/allowed_mentions"),
        &json!({ "parse": [], "roles": [], "users": [] }),
        "default: mention nobody"
    );
    assert_eq!(post.at("/components/0/type"), 1);
    let buttons = post
        .at("/components/0/components")
        .as_array()
        .expect("buttons");
    let ids: Vec<&str> = buttons
        .iter()
        .map(|b| b["custom_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["confirm:42", "cancel:42"]);
    assert_eq!(
        (buttons[0]["style"].clone(), buttons[0]["type"].clone()),
        (json!(4), json!(2))
    );

    let question = fake
        .messages_in(CHANNEL_A)
        .pop()
        .expect("the question is stored");
    assert_eq!(
        question["components"][0]["components"][1]["custom_id"],
        "cancel:42"
    );
    let click = fake
        .component_click(id_of(&question["id"]), "confirm:42", &ada())
        .await;
    next_seen(
        &mut events,
        |s| matches!(s, Seen::Clicked(id) if id == "confirm:42"),
    )
    .await;
    let callback = fake
        .wait_for_request(
            |r| r.is("POST", "/api/v10/interactions/{}/{}/callback"),
            WAIT,
        )
        .await;
    assert_eq!(
        callback.path,
        format!(
            "/api/v10/interactions/{}/{}/callback",
            id_of(&click["id"]),
            click["token"].as_str().unwrap()
        )
    );
    assert_eq!(callback.at("/type"), 7);
    assert_eq!(callback.at("/data/components"), &json!([]));
    assert_eq!(callback.status, 204);
    let updated = fake.message(id_of(&question["id"])).expect("still stored");
    assert_eq!(updated["content"], "Confirmed by ada");
    assert_eq!(updated["components"], json!([]));

    fake.slash_command(CHANNEL_A, "status", json!([]), &ada())
        .await;
    next_seen(
        &mut events,
        |s| matches!(s, Seen::Command(name) if name == "status"),
    )
    .await;
    let reply = fake
        .wait_for_request(
            |r| r.is("POST", "/api/v10/interactions/{}/{}/callback") && r.at("/type") == 4,
            WAIT,
        )
        .await;
    assert_eq!(reply.at("/data/flags"), 64);
    assert_eq!(reply.at("/data/content"), "idle, @everyone");
    let none = json!({ "parse": [], "roles": [], "users": [] });
    assert_eq!(
        reply.at("/data/allowed_mentions"),
        &none,
        "builders apply the default"
    );

    manager.shutdown_all().await;
}

#[tokio::test]
async fn two_shards_identify_separately_and_each_gets_only_its_guilds_events() {
    let fake = FakeDiscord::start(guilds()).await;
    let (client, mut events) = client(&fake, INTENTS).await;
    let manager = run(client, Shards::All(2));

    // serenity waits five seconds between two shards' IDENTIFYs.
    fake.wait_for_connections(2, Duration::from_secs(15)).await;
    let mut shards: Vec<[u32; 2]> = fake.identifies().iter().map(|i| i.shard).collect();
    shards.sort_unstable();
    assert_eq!(shards, [[0, 2], [1, 2]]);
    let mut readies = Vec::new();
    while readies.len() < 2 {
        if let Seen::Ready { shard, guilds } =
            next_seen(&mut events, |s| matches!(s, Seen::Ready { .. })).await
        {
            readies.push((shard, guilds));
        }
    }
    readies.sort_unstable();
    assert_eq!(readies, [(0, vec![GUILD_A]), (1, vec![GUILD_B])]);

    fake.message_create(CHANNEL_A, &ada(), "in ops", &[]).await;
    fake.message_create(CHANNEL_B, &ada(), "in dev", &[]).await;
    let mut arrivals = Vec::new();
    while arrivals.len() < 2 {
        if let Seen::Message { shard, channel, .. } =
            next_seen(&mut events, |s| matches!(s, Seen::Message { .. })).await
        {
            arrivals.push((shard, channel));
        }
    }
    arrivals.sort_unstable();
    assert_eq!(arrivals, [(0, CHANNEL_A), (1, CHANNEL_B)]);
    manager.shutdown_all().await;
}

#[tokio::test]
async fn start_shard_range_treats_the_range_end_as_inclusive() {
    let fake = FakeDiscord::start(guilds()).await;
    let (client, mut events) = client(&fake, INTENTS).await;
    // `1..1` is an empty Rust range, yet serenity starts shard 1 of 2 from it.
    let manager = run(client, Shards::Range(1..1, 2));
    next_seen(&mut events, |s| matches!(s, Seen::Ready { shard: 1, .. })).await;
    let shards: Vec<[u32; 2]> = fake.identifies().iter().map(|i| i.shard).collect();
    assert_eq!(shards, [[1, 2]]);
    manager.shutdown_all().await;
}

#[tokio::test]
async fn after_the_gateway_drops_the_client_resumes_and_still_gets_messages() {
    let fake = FakeDiscord::start(guilds()).await;
    let (client, mut events) = client(&fake, INTENTS).await;
    let manager = run(client, Shards::One);
    fake.wait_for_connections(1, TIMEOUT).await;
    fake.message_create(CHANNEL_A, &ada(), "before", &[]).await;
    next_seen(
        &mut events,
        |s| matches!(s, Seen::Message { content, .. } if content == "before"),
    )
    .await;

    assert_eq!(fake.drop_gateway().await, 1);
    fake.message_create(CHANNEL_A, &ada(), "after", &[]).await;
    next_seen(
        &mut events,
        |s| matches!(s, Seen::Message { content, .. } if content == "after"),
    )
    .await;

    let resumes = fake.resumes();
    assert_eq!(resumes.len(), 1);
    assert!(resumes[0].accepted);
    assert!(
        resumes[0].seq >= 4,
        "READY, GUILD_CREATE x2 and a message were seen: {resumes:?}"
    );
    assert_eq!(fake.identifies().len(), 1, "resumed, not identified again");
    manager.shutdown_all().await;
}

#[tokio::test]
async fn without_message_content_intent_guild_text_arrives_empty_unless_the_bot_is_mentioned() {
    let fake = FakeDiscord::start(guilds()).await;
    let intents = GatewayIntents::GUILDS | GatewayIntents::GUILD_MESSAGES;
    let (client, mut events) = client(&fake, intents).await;
    let manager = run(client, Shards::One);
    fake.wait_for_connections(1, TIMEOUT).await;

    fake.message_create(CHANNEL_A, &ada(), "secret plans", &[])
        .await;
    let Seen::Message { content, .. } =
        next_seen(&mut events, |s| matches!(s, Seen::Message { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(content, "");
    let bot = UserSpec::bot(BOT_ID, "riskgate");
    fake.message_create(CHANNEL_A, &ada(), "<@1100000000000000001> hi", &[bot])
        .await;
    let Seen::Message { content, .. } =
        next_seen(&mut events, |s| matches!(s, Seen::Message { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(content, "<@1100000000000000001> hi");
    manager.shutdown_all().await;
}

#[tokio::test]
async fn with_the_cache_serenity_refuses_to_send_without_send_messages_and_never_calls_rest() {
    let muted = GuildSpec::new(GUILD_A, "ops")
        .text_channel(CHANNEL_A, "general")
        .everyone_permissions(perms::VIEW_CHANNEL)
        .bot_permissions(perms::VIEW_CHANNEL);
    let fake = FakeDiscord::start(vec![muted]).await;
    let (client, mut events) = client(&fake, INTENTS).await;
    let manager = run(client, Shards::One);
    fake.wait_for_connections(1, TIMEOUT).await;

    fake.message_create(CHANNEL_A, &ada(), "!risky", &[]).await;
    let failure = tokio::time::timeout(TIMEOUT, async {
        loop {
            match events.recv().await {
                Some(Seen::Failed(why)) => return why,
                Some(_) => continue,
                None => panic!("the bot stopped"),
            }
        }
    })
    .await
    .expect("the send fails within the timeout");
    assert!(failure.contains("permissions"), "{failure}");
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| r.is("POST", "/api/v10/channels/{}/messages"))
    );
    manager.shutdown_all().await;
}
