//! A fake Discord on loopback: the REST API under `/api/v10/` and the gateway on one port, so
//! real serenity runs end to end in tests.
//!
//! Pointing serenity here: `HttpBuilder::new(token).proxy(fake.base_url())
//! .ratelimiter_disabled(true)` (the proxy is ignored while the rate limiter is on), then
//! `ClientBuilder::new_with_http(http, intents)`; the builder reads the gateway URL from
//! `GET /api/v10/gateway`, so start the fake first.
//!
//! Layout: [`GuildSpec`] and [`UserSpec`] describe the world; [`FakeDiscord`] serves it, records
//! every REST request, IDENTIFY and RESUME, stores the messages it creates, and pushes gateway
//! events (`message_create`, `component_click`, `slash_command`) to the connection of the shard
//! that owns the guild. The JSON fixtures are built here in one place, complete enough that
//! serenity's models accept them: a dispatch serenity cannot read becomes `Event::Unknown` and
//! no handler runs.
//!
//! Behaviours that match Discord and that a test may trip over:
//! - an interaction callback later than three seconds, or a second one, fails (10062, 40060);
//! - MESSAGE_CREATE skips a session without GUILD_MESSAGES (DIRECT_MESSAGES for a DM), and
//!   without MESSAGE_CONTENT a guild message arrives blank unless it mentions the bot;
//! - GUILD_CREATE lists the bot as a member with a managed role, so serenity's cache checks
//!   the bot's permissions before it sends ([`GuildSpec::bot_permissions`]);
//! - a push waits (up to [`WAIT`]) for a ready connection of the owning shard, so a push right
//!   after [`FakeDiscord::drop_gateway`] lands once the client has resumed.
//!
//! - A message a person sends may carry files ([`FakeDiscord::message_create_with`],
//!   [`AttachmentSpec`]); each attachment's `url` points at the fake itself, which serves its
//!   bytes (the bot's own uploads too) and counts how many it sent
//!   ([`FakeDiscord::attachment_bytes_served`]).
//! - [`FakeDiscord::inject`] and [`FakeDiscord::break_channel`] make chosen requests fail as
//!   Discord does (500, 502, 429, 403 Missing Permissions / Access, 404 Unknown Channel).
//! - [`FakeDiscord::refuse`] makes it refuse the bot as Discord does: a bad token (401 on
//!   REST, gateway close 4004), a privileged intent not enabled in the portal (close 4014),
//!   or a gateway that is down (its connections closed, new ones refused with 503).
//! - Registering commands in a guild the fake does not serve is refused with 403, code
//!   50001 Missing Access, as Discord refuses it for a guild the bot is not in.
//! - [`FakeDiscord::serve_tls`] also serves the REST API over TLS as discord.com, for a bot
//!   with serenity's rate limiter on (`discord.api_ca_pem`), as against Discord.
//!
//! What it deliberately is not: a permission engine (no channel overwrites), a rate limiter, or
//! a store of anything but messages, commands and interactions. Posting to a channel outside
//! every guild succeeds, as to a DM.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::to_bytes;
use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequest, Multipart, Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// The bot's user id; also the application id, as for bots created in the developer portal.
pub const BOT_ID: u64 = 1_100_000_000_000_000_001;
pub const APP_ID: u64 = BOT_ID;
pub const BOT_NAME: &str = "riskgate";
/// The application's name, as `GET /oauth2/applications/@me` gives it (not the bot's user
/// name, so a test can tell which one a text names).
pub const APP_NAME: &str = "riskgate test app";
/// Every timestamp the fake writes: fixed, so recorded payloads can be snapshotted.
pub const TIMESTAMP: &str = "2025-01-01T12:00:00.000000+00:00";
/// How long a pushed event or a wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(10);
/// Discord refuses an interaction callback after three seconds (code 10062).
pub const INTERACTION_DEADLINE: Duration = Duration::from_secs(3);

/// Permission bits the fake needs by name (Discord's numbering).
pub mod perms {
    pub const ADD_REACTIONS: u64 = 1 << 6;
    pub const ADMINISTRATOR: u64 = 1 << 3;
    pub const VIEW_CHANNEL: u64 = 1 << 10;
    pub const SEND_MESSAGES: u64 = 1 << 11;
    pub const EMBED_LINKS: u64 = 1 << 14;
    pub const ATTACH_FILES: u64 = 1 << 15;
    pub const READ_MESSAGE_HISTORY: u64 = 1 << 16;
    pub const USE_APPLICATION_COMMANDS: u64 = 1 << 31;
    pub const SEND_MESSAGES_IN_THREADS: u64 = 1 << 38;
    /// What @everyone and the bot's own role get unless a spec says otherwise.
    pub const DEFAULT: u64 = ADD_REACTIONS
        | VIEW_CHANNEL
        | SEND_MESSAGES
        | EMBED_LINKS
        | ATTACH_FILES
        | READ_MESSAGE_HISTORY
        | USE_APPLICATION_COMMANDS
        | SEND_MESSAGES_IN_THREADS;
}

/// Gateway intent bits the fake honours when delivering MESSAGE_CREATE.
const GUILD_MESSAGES: u64 = 1 << 9;
const DIRECT_MESSAGES: u64 = 1 << 12;
const MESSAGE_CONTENT: u64 = 1 << 15;

/// A guild the fake serves: READY lists it and GUILD_CREATE describes it in full.
#[derive(Clone, Debug)]
pub struct GuildSpec {
    pub id: u64,
    pub name: String,
    pub channels: Vec<ChannelSpec>,
    pub roles: Vec<RoleSpec>,
    /// Permissions of the @everyone role (its id is the guild's id).
    pub everyone_permissions: u64,
    /// Permissions of the bot's managed role; the bot member holds only that role.
    pub bot_permissions: u64,
}

/// A text channel (type 0), or a public thread (type 11) when `parent_id` is set.
#[derive(Clone, Debug)]
pub struct ChannelSpec {
    pub id: u64,
    pub name: String,
    pub parent_id: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct RoleSpec {
    pub id: u64,
    pub name: String,
    pub permissions: u64,
}

/// A file on a message a person sends ([`FakeDiscord::message_create_with`]), served at the
/// attachment's `url` as Discord's CDN serves it.
#[derive(Clone, Debug)]
pub struct AttachmentSpec {
    pub filename: String,
    /// The attachment's `content_type` and the download's `Content-Type`; `None`: neither.
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
    /// The `size` the message declares; `None`: the bytes' length.
    pub declared_size: Option<u64>,
    /// Serve `bytes` again and again up to this many bytes, without a `Content-Length`: a
    /// body that runs on past what was declared.
    pub repeat_to: Option<u64>,
}

impl AttachmentSpec {
    pub fn new(filename: &str, content_type: Option<&str>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            filename: filename.to_owned(),
            content_type: content_type.map(str::to_owned),
            bytes: bytes.into(),
            declared_size: None,
            repeat_to: None,
        }
    }

    pub fn declared_size(mut self, size: u64) -> Self {
        self.declared_size = Some(size);
        self
    }

    pub fn repeat_to(mut self, total: u64) -> Self {
        self.repeat_to = Some(total);
        self
    }
}

/// A file the fake serves under `/attachments/{id}/{filename}`.
struct ServedFile {
    spec: AttachmentSpec,
    /// Body bytes handed to the connection so far.
    served: Arc<AtomicU64>,
}

/// A person (or another bot) who writes messages and clicks buttons.
#[derive(Clone, Debug)]
pub struct UserSpec {
    pub id: u64,
    pub name: String,
    pub bot: bool,
    /// Role ids the user holds in whichever guild the event happens in.
    pub roles: Vec<u64>,
}

impl GuildSpec {
    pub fn new(id: u64, name: &str) -> Self {
        Self {
            id,
            name: name.to_owned(),
            channels: Vec::new(),
            roles: Vec::new(),
            everyone_permissions: perms::DEFAULT,
            bot_permissions: perms::DEFAULT,
        }
    }

    pub fn text_channel(mut self, id: u64, name: &str) -> Self {
        let parent_id = None;
        self.channels.push(ChannelSpec {
            id,
            name: name.to_owned(),
            parent_id,
        });
        self
    }

    pub fn thread(mut self, id: u64, parent_id: u64, name: &str) -> Self {
        let parent_id = Some(parent_id);
        self.channels.push(ChannelSpec {
            id,
            name: name.to_owned(),
            parent_id,
        });
        self
    }

    pub fn role(mut self, id: u64, name: &str, permissions: u64) -> Self {
        self.roles.push(RoleSpec {
            id,
            name: name.to_owned(),
            permissions,
        });
        self
    }

    pub fn everyone_permissions(mut self, permissions: u64) -> Self {
        self.everyone_permissions = permissions;
        self
    }

    pub fn bot_permissions(mut self, permissions: u64) -> Self {
        self.bot_permissions = permissions;
        self
    }

    /// The id of the managed role Discord gives a bot when it joins.
    pub fn bot_role_id(&self) -> u64 {
        self.id + 1
    }

    /// The shard that owns this guild when the bot runs `total` shards.
    pub fn shard(&self, total: u32) -> u32 {
        shard_of(Some(self.id), total)
    }

    /// A member's permissions as Discord computes them without overwrites.
    pub fn permissions_of(&self, roles: &[u64]) -> u64 {
        let granted = self
            .roles
            .iter()
            .filter(|role| roles.contains(&role.id))
            .fold(self.everyone_permissions, |acc, role| {
                acc | role.permissions
            });
        if granted & perms::ADMINISTRATOR != 0 {
            (1 << 50) - 1
        } else {
            granted
        }
    }
}

impl UserSpec {
    pub fn new(id: u64, name: &str) -> Self {
        Self {
            id,
            name: name.to_owned(),
            bot: false,
            roles: Vec::new(),
        }
    }

    pub fn with_roles(mut self, roles: &[u64]) -> Self {
        self.roles = roles.to_vec();
        self
    }

    /// Another bot (or this one): its messages have `author.bot` set.
    pub fn bot(id: u64, name: &str) -> Self {
        Self {
            bot: true,
            ..Self::new(id, name)
        }
    }

    fn bot_user() -> Self {
        Self::bot(BOT_ID, BOT_NAME)
    }
}

/// `(guild_id >> 22) % total`, with DMs (no guild) on shard 0, as Discord routes events.
pub fn shard_of(guild_id: Option<u64>, total: u32) -> u32 {
    guild_id.map_or(0, |id| ((id >> 22) % u64::from(total.max(1))) as u32)
}

/// One REST request as the fake received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// The path without the query, e.g. `/api/v10/channels/1/messages`.
    pub path: String,
    pub query: Option<String>,
    pub headers: BTreeMap<String, String>,
    /// The JSON body, or the `payload_json` part of a multipart body.
    pub body: Option<Value>,
    pub files: Vec<RecordedFile>,
    /// The status the fake answered with.
    pub status: u16,
    /// When the request arrived.
    pub at: Instant,
}

#[derive(Clone, Debug)]
pub struct RecordedFile {
    /// The multipart field name, e.g. `files[0]`.
    pub field: String,
    pub filename: String,
    pub size: usize,
    /// The file's content, so a test can read what a person would open.
    pub bytes: Vec<u8>,
}

impl RecordedRequest {
    /// True for `method` on `path` where `{}` in `path` matches one path segment.
    pub fn is(&self, method: &str, path: &str) -> bool {
        let ours: Vec<&str> = self.path.split('/').collect();
        let theirs: Vec<&str> = path.split('/').collect();
        self.method == method
            && ours.len() == theirs.len()
            && ours.iter().zip(&theirs).all(|(a, b)| *b == "{}" || a == b)
    }

    /// A field of the body by JSON pointer (`/data/flags`), `null` if absent.
    pub fn at(&self, pointer: &str) -> &Value {
        self.body
            .as_ref()
            .and_then(|body| body.pointer(pointer))
            .unwrap_or(&Value::Null)
    }
}

/// An IDENTIFY (op 2) a client sent.
#[derive(Clone, Debug)]
pub struct Identify {
    pub token: String,
    pub intents: u64,
    /// `[shard_id, num_shards]`; `[0, 1]` when the client sent none.
    pub shard: [u32; 2],
}

/// A RESUME (op 6) a client sent, and whether the fake accepted it.
#[derive(Clone, Debug)]
pub struct Resume {
    pub session_id: String,
    pub seq: u64,
    pub accepted: bool,
}

/// The running fake. Dropping it stops the server.
pub struct FakeDiscord {
    state: Arc<Fake>,
    server: tokio::task::JoinHandle<()>,
}

/// The fake's REST API over TLS ([`FakeDiscord::serve_tls`]); served while this lives.
pub struct TlsEndpoint {
    /// `https://127.0.0.1:PORT`, for `discord.api_base_url`.
    pub base_url: String,
    /// The certificate the fake presents, for `discord.api_ca_pem`.
    pub certificate_pem: String,
    _server: AbortOnDrop,
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Accepts TCP connections and completes their TLS handshake; a failed handshake is
/// dropped and the next connection accepted.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, peer)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, peer);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

struct Fake {
    addr: SocketAddr,
    guilds: Vec<GuildSpec>,
    recommended_shards: AtomicU32,
    next_id: AtomicU64,
    requests: Mutex<Vec<RecordedRequest>>,
    identifies: Mutex<Vec<Identify>>,
    resumes: Mutex<Vec<Resume>>,
    /// Message id -> message as the REST API returns it (no guild_id, no member).
    messages: Mutex<BTreeMap<u64, Value>>,
    /// `None` for global commands, `Some(guild)` for a guild's.
    commands: Mutex<HashMap<Option<u64>, Vec<Value>>>,
    interactions: Mutex<HashMap<u64, InteractionRecord>>,
    sessions: Mutex<HashMap<String, Session>>,
    connections: Mutex<Vec<Connection>>,
    /// Failures a test asked for, answered instead of serving the request.
    faults: Mutex<Vec<Injected>>,
    /// How the fake refuses the bot itself; nothing by default.
    refusals: Mutex<Refusals>,
    /// Attachment id -> its file.
    files: Mutex<HashMap<u64, ServedFile>>,
}

/// What the fake refuses as Discord refuses a misconfigured bot (see [`FakeDiscord::refuse`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals {
    /// Every REST request gets 401 `{"message": "401: Unauthorized", "code": 0}`.
    pub token_on_rest: bool,
    /// IDENTIFY is answered by closing with 4004 "Authentication failed.".
    pub token_on_gateway: bool,
    /// Intent bits not enabled for the application: an IDENTIFY asking for any of them is
    /// answered by closing with 4014 "Disallowed intent(s).".
    pub disallowed_intents: u64,
    /// The gateway is down: new connections are refused with 503 (close the open ones with
    /// [`FakeDiscord::drop_gateway`]).
    pub gateway_offline: bool,
}

/// The privileged Message Content intent's bit, for [`Refusals::disallowed_intents`].
pub const MESSAGE_CONTENT_INTENT: u64 = MESSAGE_CONTENT;

/// An answer Discord gives when something is wrong on its side or the bot's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 500 Internal Server Error.
    ServerError,
    /// 502 Bad Gateway (Cloudflare in front of Discord), no JSON body.
    BadGateway,
    /// 429 with `retry_after` in the body and the `Retry-After` header, as on a shared or
    /// global limit the client's own limiter did not foresee.
    RateLimited,
    /// 403, code 50013: the bot lacks a permission in the channel.
    MissingPermissions,
    /// 403, code 50001: the bot cannot see the channel.
    MissingAccess,
    /// 404, code 10003: the channel was deleted.
    UnknownChannel,
    /// 429 asking for this wait, as Discord words it: `Retry-After` and
    /// `X-RateLimit-Reset-After` headers (seconds), `X-RateLimit-Remaining: 0`, and
    /// `retry_after` in the body.
    RateLimitedFor(Duration),
}

struct Injected {
    method: &'static str,
    /// A path pattern as for [`RecordedRequest::is`].
    path: String,
    fault: Fault,
    remaining: u32,
}

struct InteractionRecord {
    token: String,
    channel_id: u64,
    issued: Instant,
    acknowledged: bool,
    /// The message a button sits on.
    message_id: Option<u64>,
    /// The message a type 4/5 callback created, which `@original` refers to.
    original: Option<u64>,
}

struct Session {
    shard: [u32; 2],
    intents: u64,
    token: String,
    seq: u64,
}

/// A gateway connection that finished READY or RESUMED, so events can be routed to it.
struct Connection {
    id: u64,
    shard: [u32; 2],
    outbox: mpsc::UnboundedSender<Outbound>,
}

enum Outbound {
    /// Send this dispatch (unless the session's intents filter it out), then acknowledge.
    Dispatch(&'static str, Value, oneshot::Sender<()>),
    Close(u16, oneshot::Sender<()>),
}

impl FakeDiscord {
    /// Binds 127.0.0.1:0 and serves REST and the gateway; returns once it accepts connections.
    pub async fn start(guilds: Vec<GuildSpec>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(Fake {
            addr,
            guilds,
            recommended_shards: AtomicU32::new(1),
            next_id: AtomicU64::new(1_200_000_000_000_000_000),
            requests: Mutex::default(),
            identifies: Mutex::default(),
            resumes: Mutex::default(),
            messages: Mutex::default(),
            commands: Mutex::default(),
            interactions: Mutex::default(),
            sessions: Mutex::default(),
            connections: Mutex::default(),
            faults: Mutex::default(),
            refusals: Mutex::default(),
            files: Mutex::default(),
        });
        let app = router(state.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .await
                .expect("fake Discord server");
        });
        Self { state, server }
    }

    /// `http://127.0.0.1:PORT`, for `HttpBuilder::proxy`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.state.addr)
    }

    /// Serves the same REST API over TLS on a second loopback port, with a fresh
    /// self-signed certificate for discord.com. A bot given the returned
    /// `https://127.0.0.1:PORT` (`discord.api_base_url`) and certificate
    /// (`discord.api_ca_pem`) reaches it as discord.com, with serenity's rate limiter on;
    /// the gateway stays on the plain port.
    pub async fn serve_tls(&self) -> TlsEndpoint {
        use tokio_rustls::rustls;
        let issued = rcgen::generate_simple_self_signed(vec!["discord.com".to_owned()])
            .expect("a self-signed certificate");
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(
            rustls::pki_types::PrivatePkcs8KeyDer::from(issued.signing_key.serialize_der()),
        );
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![issued.cert.der().clone()], key)
        .expect("the certificate and its key");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        let tls = TlsListener {
            tcp: listener,
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        };
        let app = router(self.state.clone());
        let server = tokio::spawn(async move {
            axum::serve(tls, app)
                .await
                .expect("fake Discord TLS server");
        });
        TlsEndpoint {
            base_url: format!("https://{addr}"),
            certificate_pem: issued.cert.pem(),
            _server: AbortOnDrop(server),
        }
    }

    /// What `GET /gateway/bot` recommends (default 1), for `start_autosharded`.
    pub fn set_recommended_shards(&self, shards: u32) {
        self.state
            .recommended_shards
            .store(shards, Ordering::SeqCst);
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state.requests).clone()
    }

    /// Polls the recorded requests until one matches; panics with all of them on timeout.
    pub async fn wait_for_request(
        &self,
        predicate: impl Fn(&RecordedRequest) -> bool,
        timeout: Duration,
    ) -> RecordedRequest {
        let found = poll(timeout, || {
            self.requests().into_iter().find(|r| predicate(r))
        })
        .await;
        found.unwrap_or_else(|| {
            panic!(
                "no matching request within {timeout:?}; got {:#?}",
                self.requests()
            )
        })
    }

    pub fn identifies(&self) -> Vec<Identify> {
        lock(&self.state.identifies).clone()
    }

    pub fn resumes(&self) -> Vec<Resume> {
        lock(&self.state.resumes).clone()
    }

    /// Waits until `count` gateway connections have finished READY or RESUMED.
    pub async fn wait_for_connections(&self, count: usize, timeout: Duration) {
        let live = || (lock(&self.state.connections).len() >= count).then_some(());
        if poll(timeout, live).await.is_none() {
            let got = lock(&self.state.connections).len();
            panic!("{got} of {count} gateway connections ready within {timeout:?}");
        }
    }

    /// Closes every gateway connection with code 4000, as Discord does on a server error;
    /// returns once the close frames went out. Pushes then wait for the client to come back.
    pub async fn drop_gateway(&self) -> usize {
        let dropped: Vec<Connection> = lock(&self.state.connections).drain(..).collect();
        for connection in &dropped {
            let (done, sent) = oneshot::channel();
            if connection.outbox.send(Outbound::Close(4000, done)).is_ok() {
                let _ = tokio::time::timeout(WAIT, sent).await;
            }
        }
        dropped.len()
    }

    /// Stored messages of a channel, oldest first, as the REST API returns them.
    pub fn messages_in(&self, channel_id: u64) -> Vec<Value> {
        let messages = lock(&self.state.messages);
        messages
            .values()
            .filter(|m| id_of(&m["channel_id"]) == channel_id)
            .cloned()
            .collect()
    }

    pub fn message(&self, message_id: u64) -> Option<Value> {
        lock(&self.state.messages).get(&message_id).cloned()
    }

    /// The next `times` requests for `method` on `path` (`{}` matches one segment) get
    /// `fault` instead of an answer; later ones are served again.
    pub fn inject(&self, method: &'static str, path: &str, fault: Fault, times: u32) {
        lock(&self.state.faults).push(Injected {
            method,
            path: path.to_owned(),
            fault,
            remaining: times,
        });
    }

    /// Every message the bot posts in `channel_id` from now on gets `fault` (a channel whose
    /// permissions were taken away, or that was deleted).
    pub fn break_channel(&self, channel_id: u64, fault: Fault) {
        self.inject(
            "POST",
            &format!("/api/v10/channels/{channel_id}/messages"),
            fault,
            u32::MAX,
        );
    }

    /// From now on the fake refuses the bot as `refusals` says (replacing earlier ones).
    pub fn refuse(&self, refusals: Refusals) {
        *lock(&self.state.refusals) = refusals;
    }

    /// How many body bytes the fake handed to connections for the attachment at `url` (0
    /// if it was never asked for).
    pub fn attachment_bytes_served(&self, url: &str) -> u64 {
        let id = url
            .split("/attachments/")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|id| id.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("not an attachment of the fake: {url}"));
        lock(&self.state.files)
            .get(&id)
            .map_or(0, |file| file.served.load(Ordering::SeqCst))
    }

    /// Deletes a stored message, as its author would.
    pub fn delete_message(&self, message_id: u64) {
        lock(&self.state.messages).remove(&message_id);
    }

    /// Pushes MESSAGE_CREATE for a new message by `author`; a channel outside every guild is a
    /// DM. Returns the message as dispatched once the frame went out (or was filtered by the
    /// connection's intents, as Discord does).
    pub async fn message_create(
        &self,
        channel_id: u64,
        author: &UserSpec,
        content: &str,
        mentions: &[UserSpec],
    ) -> Value {
        self.message_create_with(channel_id, author, content, mentions, &[])
            .await
    }

    /// [`FakeDiscord::message_create`] for a message that carries `files`, each listed in
    /// its `attachments` with a `url` the fake serves.
    pub async fn message_create_with(
        &self,
        channel_id: u64,
        author: &UserSpec,
        content: &str,
        mentions: &[UserSpec],
        files: &[AttachmentSpec],
    ) -> Value {
        let state = &self.state;
        let mut message = state.new_message(channel_id, author, json!({ "content": content }), &[]);
        message["attachments"] = files.iter().map(|f| state.attach(f.clone())).collect();
        message["mentions"] = mentions.iter().map(user_json).collect();
        state.store(&message);
        let guild = state.guild_of(channel_id);
        if let Some(guild) = guild {
            message["guild_id"] = json!(guild.id.to_string());
            message["member"] = member_json(&author.roles, None);
        }
        self.dispatch(guild.map(|g| g.id), "MESSAGE_CREATE", message)
            .await
    }

    /// Pushes INTERACTION_CREATE type 3: `user` clicks the button `custom_id` on a stored message.
    /// Submits a modal (interaction type 5) opened from a button on `message_id`, with the
    /// text inputs' values by custom id, as Discord sends it.
    pub async fn modal_submit(
        &self,
        message_id: u64,
        custom_id: &str,
        fields: &[(&str, &str)],
        user: &UserSpec,
    ) -> Value {
        let message = self
            .message(message_id)
            .unwrap_or_else(|| panic!("no stored message {message_id}"));
        let channel_id = id_of(&message["channel_id"]);
        let rows: Vec<Value> = fields
            .iter()
            .map(|(id, value)| {
                json!({ "type": 1, "components": [{ "type": 4, "custom_id": id, "value": value }] })
            })
            .collect();
        let data = json!({ "custom_id": custom_id, "components": rows });
        let interaction = self
            .state
            .new_interaction_of_modal(channel_id, user, data, message);
        let guild_id = self.state.guild_of(channel_id).map(|g| g.id);
        self.dispatch(guild_id, "INTERACTION_CREATE", interaction)
            .await
    }

    pub async fn component_click(
        &self,
        message_id: u64,
        custom_id: &str,
        user: &UserSpec,
    ) -> Value {
        let message = self
            .message(message_id)
            .unwrap_or_else(|| panic!("no stored message {message_id}"));
        let channel_id = id_of(&message["channel_id"]);
        let data = json!({ "custom_id": custom_id, "component_type": 2 });
        let interaction = self
            .state
            .new_interaction(3, channel_id, user, data, Some(message));
        let guild_id = self.state.guild_of(channel_id).map(|g| g.id);
        self.dispatch(guild_id, "INTERACTION_CREATE", interaction)
            .await
    }

    /// Pushes INTERACTION_CREATE type 2 for the chat-input command `name` with raw `options`.
    pub async fn slash_command(
        &self,
        channel_id: u64,
        name: &str,
        options: Value,
        user: &UserSpec,
    ) -> Value {
        let guild_id = self.state.guild_of(channel_id).map(|g| g.id);
        let command_id = self.state.command_id(guild_id, name);
        let data =
            json!({ "id": command_id.to_string(), "name": name, "type": 1, "options": options });
        let interaction = self.state.new_interaction(2, channel_id, user, data, None);
        self.dispatch(guild_id, "INTERACTION_CREATE", interaction)
            .await
    }

    /// Sends a dispatch to every ready connection of the shard owning `guild_id`, waiting up to
    /// [`WAIT`] for one to exist (e.g. while the client reconnects). Returns once a connection
    /// sent the frame, or dropped it because its intents do not cover it.
    async fn dispatch(&self, guild_id: Option<u64>, kind: &'static str, d: Value) -> Value {
        let started = Instant::now();
        loop {
            let outboxes: Vec<_> = lock(&self.state.connections)
                .iter()
                .filter(|c| shard_of(guild_id, c.shard[1]) == c.shard[0])
                .map(|c| c.outbox.clone())
                .collect();
            let mut delivered = false;
            for outbox in outboxes {
                let (ack, sent) = oneshot::channel();
                if outbox
                    .send(Outbound::Dispatch(kind, d.clone(), ack))
                    .is_ok()
                {
                    delivered |= tokio::time::timeout(WAIT, sent)
                        .await
                        .is_ok_and(|r| r.is_ok());
                }
            }
            if delivered {
                return d;
            }
            assert!(
                started.elapsed() < WAIT,
                "no gateway connection took {kind} for guild {guild_id:?} within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for FakeDiscord {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Fake {
    fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst)
    }

    fn guild_of(&self, channel_id: u64) -> Option<&GuildSpec> {
        self.guilds
            .iter()
            .find(|g| g.channels.iter().any(|c| c.id == channel_id))
    }

    fn channel(&self, channel_id: u64) -> Option<(&GuildSpec, &ChannelSpec)> {
        let guild = self.guild_of(channel_id)?;
        Some((guild, guild.channels.iter().find(|c| c.id == channel_id)?))
    }

    fn store(&self, message: &Value) {
        lock(&self.messages).insert(id_of(&message["id"]), message.clone());
    }

    /// Keeps `file` to serve and returns its attachment object, as a message lists it.
    fn attach(&self, file: AttachmentSpec) -> Value {
        let id = self.new_id();
        // The name as one path segment, percent-encoded as Discord's CDN URLs are.
        let mut url = url::Url::parse(&format!("http://{}/", self.addr)).expect("base URL");
        url.path_segments_mut().expect("a base").extend([
            "attachments",
            &id.to_string(),
            &file.filename,
        ]);
        let url = url.to_string();
        let size = file.declared_size.unwrap_or(file.bytes.len() as u64);
        let mut attachment = json!({
            "id": id.to_string(), "filename": file.filename, "size": size,
            "url": url, "proxy_url": url,
        });
        if let Some(kind) = &file.content_type {
            attachment["content_type"] = json!(kind);
        }
        let served = Arc::default();
        lock(&self.files).insert(id, ServedFile { spec: file, served });
        attachment
    }

    /// A complete Message (REST shape) from a create body: content, embeds, components, flags.
    fn new_message(
        &self,
        channel_id: u64,
        author: &UserSpec,
        body: Value,
        uploads: &[RecordedFile],
    ) -> Value {
        let mut message = json!({
            "id": self.new_id().to_string(), "channel_id": channel_id.to_string(),
            "author": user_json(author), "content": "", "timestamp": TIMESTAMP,
            "edited_timestamp": null, "tts": false, "mention_everyone": false, "mentions": [],
            "mention_roles": [], "mention_channels": [], "attachments": [], "embeds": [],
            "components": [], "reactions": [], "pinned": false, "type": 0, "flags": 0,
        });
        apply_edit(&mut message, &body, uploads.to_vec(), self);
        if let Some(reference) = body.get("message_reference") {
            message["message_reference"] = reference.clone();
            message["type"] = json!(19);
        }
        message
    }

    /// An interaction as Discord sends it, recorded so its callback can be checked.
    fn new_interaction_of_modal(
        &self,
        channel_id: u64,
        user: &UserSpec,
        data: Value,
        message: Value,
    ) -> Value {
        self.new_interaction(5, channel_id, user, data, Some(message))
    }

    fn new_interaction(
        &self,
        kind: u8,
        channel_id: u64,
        user: &UserSpec,
        data: Value,
        message: Option<Value>,
    ) -> Value {
        let id = self.new_id();
        let token = format!("fake-interaction-token-{id}");
        let message_id = message.as_ref().map(|m| id_of(&m["id"]));
        let mut interaction = json!({
            "id": id.to_string(), "application_id": APP_ID.to_string(), "type": kind, "data": data,
            "channel_id": channel_id.to_string(), "token": token, "version": 1, "locale": "en-US",
            "entitlements": [], "attachment_size_limit": 10_485_760,
            "authorizing_integration_owners": { "0": "0" },
        });
        match self.channel(channel_id) {
            Some((guild, channel)) => {
                let member_perms = guild.permissions_of(&user.roles);
                let bot_perms = guild.permissions_of(&[guild.bot_role_id()]);
                let mut member = member_json(&user.roles, Some(member_perms));
                member["user"] = user_json(user);
                interaction["guild_id"] = json!(guild.id.to_string());
                interaction["guild_locale"] = json!("en-US");
                interaction["member"] = member;
                interaction["app_permissions"] = json!(bot_perms.to_string());
                interaction["context"] = json!(0);
                let mut partial = channel_json(guild, channel);
                partial["permissions"] = json!(member_perms.to_string());
                interaction["channel"] = partial;
            }
            None => {
                interaction["user"] = user_json(user);
                interaction["context"] = json!(1);
                interaction["channel"] = json!({ "id": channel_id.to_string(), "type": 1 });
            }
        }
        if let Some(message) = message {
            interaction["message"] = message;
        }
        let record = InteractionRecord {
            token,
            channel_id,
            issued: Instant::now(),
            acknowledged: false,
            message_id,
            original: None,
        };
        lock(&self.interactions).insert(id, record);
        interaction
    }

    fn command_id(&self, guild_id: Option<u64>, name: &str) -> u64 {
        let commands = lock(&self.commands);
        let mut registered = [guild_id, None]
            .into_iter()
            .filter_map(|scope| commands.get(&scope))
            .flatten();
        registered
            .find(|c| c["name"] == name)
            .map_or_else(|| self.new_id(), |c| id_of(&c["id"]))
    }

    fn ready(&self, session_id: &str, shard: [u32; 2]) -> Value {
        let guilds: Vec<Value> = self
            .guilds
            .iter()
            .filter(|g| g.shard(shard[1]) == shard[0])
            .map(|g| json!({ "id": g.id.to_string(), "unavailable": true }))
            .collect();
        let mut user = user_json(&UserSpec::bot_user());
        user["verified"] = json!(true);
        user["mfa_enabled"] = json!(false);
        json!({
            "v": 10, "user": user, "guilds": guilds, "session_id": session_id,
            "resume_gateway_url": format!("ws://{}/gateway", self.addr), "shard": shard,
            "application": { "id": APP_ID.to_string(), "flags": 1 << 18 },
            "private_channels": [], "relationships": [], "_trace": ["fake-discord"],
        })
    }
}

// ---------------------------------------------------------------------------------------------
// JSON fixtures.

fn user_json(user: &UserSpec) -> Value {
    json!({
        "id": user.id.to_string(), "username": user.name, "discriminator": "0",
        "global_name": user.name, "avatar": null, "bot": user.bot, "public_flags": 0,
    })
}

/// The application as `GET /oauth2/applications/@me` describes it to its bot.
fn application_json() -> Value {
    json!({
        "id": APP_ID.to_string(), "name": APP_NAME, "icon": null, "description": "",
        "bot_public": true, "bot_require_code_grant": false, "verify_key": "00",
        "owner": user_json(&UserSpec::new(1, "owner")), "team": null, "flags": 1 << 18,
    })
}

/// A guild member; `permissions` is only part of it inside interactions.
fn member_json(roles: &[u64], permissions: Option<u64>) -> Value {
    let mut member = json!({
        "roles": roles.iter().map(u64::to_string).collect::<Vec<_>>(), "nick": null,
        "avatar": null, "joined_at": TIMESTAMP, "premium_since": null, "deaf": false,
        "mute": false, "flags": 0, "pending": false, "communication_disabled_until": null,
    });
    if let Some(permissions) = permissions {
        member["permissions"] = json!(permissions.to_string());
    }
    member
}

fn role_json(id: u64, name: &str, permissions: u64, managed: bool, position: u16) -> Value {
    json!({
        "id": id.to_string(), "name": name, "color": 0,
        "colors": { "primary_color": 0, "secondary_color": null, "tertiary_color": null },
        "hoist": false, "managed": managed, "mentionable": false, "icon": null,
        "unicode_emoji": null, "permissions": permissions.to_string(), "position": position, "flags": 0,
    })
}

fn roles_json(guild: &GuildSpec) -> Vec<Value> {
    let mut roles = vec![role_json(
        guild.id,
        "@everyone",
        guild.everyone_permissions,
        false,
        0,
    )];
    roles.push(role_json(
        guild.bot_role_id(),
        BOT_NAME,
        guild.bot_permissions,
        true,
        1,
    ));
    roles.extend(
        guild
            .roles
            .iter()
            .enumerate()
            .map(|(i, r)| role_json(r.id, &r.name, r.permissions, false, i as u16 + 2)),
    );
    roles
}

fn channel_json(guild: &GuildSpec, channel: &ChannelSpec) -> Value {
    let mut json = json!({
        "id": channel.id.to_string(), "type": 0, "guild_id": guild.id.to_string(),
        "name": channel.name, "position": 0, "permission_overwrites": [], "parent_id": null,
        "topic": null, "nsfw": false, "last_message_id": null, "rate_limit_per_user": 0, "flags": 0,
    });
    if let Some(parent_id) = channel.parent_id {
        json["type"] = json!(11);
        json["parent_id"] = json!(parent_id.to_string());
        json["owner_id"] = json!(BOT_ID.to_string());
        json["message_count"] = json!(0);
        json["member_count"] = json!(1);
        json["total_message_sent"] = json!(0);
        json["thread_metadata"] = json!({
            "archived": false, "auto_archive_duration": 1440, "archive_timestamp": TIMESTAMP,
            "locked": false, "create_timestamp": TIMESTAMP,
        });
    }
    json
}

/// GUILD_CREATE's payload: a Guild with the bot as its only member.
pub fn guild_json(guild: &GuildSpec) -> Value {
    let (threads, channels): (Vec<_>, Vec<_>) =
        guild.channels.iter().partition(|c| c.parent_id.is_some());
    let mut bot = member_json(&[guild.bot_role_id()], None);
    bot["user"] = user_json(&UserSpec::bot_user());
    json!({
        "id": guild.id.to_string(), "name": guild.name, "icon": null, "splash": null,
        "discovery_splash": null, "owner_id": "1", "afk_channel_id": null, "afk_timeout": 300,
        "verification_level": 0, "default_message_notifications": 1, "explicit_content_filter": 0,
        "roles": roles_json(guild), "emojis": [], "stickers": [], "features": [], "mfa_level": 0,
        "application_id": null, "system_channel_id": null, "system_channel_flags": 0,
        "rules_channel_id": null, "vanity_url_code": null, "description": null, "banner": null,
        "premium_tier": 0, "premium_subscription_count": 0, "preferred_locale": "en-US",
        "public_updates_channel_id": null, "nsfw_level": 0, "premium_progress_bar_enabled": false,
        "safety_alerts_channel_id": null, "joined_at": TIMESTAMP, "large": false,
        "unavailable": false, "member_count": 1, "voice_states": [], "members": [bot],
        "channels": channels.iter().map(|c| channel_json(guild, c)).collect::<Vec<_>>(),
        "threads": threads.iter().map(|c| channel_json(guild, c)).collect::<Vec<_>>(),
        "presences": [], "stage_instances": [], "guild_scheduled_events": [],
    })
}

/// Applies a create/edit body to a stored message: the fields Discord lets a bot change.
fn apply_edit(message: &mut Value, body: &Value, uploads: Vec<RecordedFile>, fake: &Fake) {
    for field in ["content", "embeds", "components", "flags", "tts"] {
        if let Some(value) = body.get(field).filter(|v| !v.is_null()) {
            message[field] = value.clone();
        }
    }
    let kept: Vec<Value> = match body.get("attachments").and_then(Value::as_array) {
        Some(wanted) => {
            let ids: Vec<&Value> = wanted.iter().map(|a| &a["id"]).collect();
            let old = message["attachments"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            old.into_iter()
                .filter(|a| ids.iter().any(|id| id_of(id) == id_of(&a["id"])))
                .collect()
        }
        None => message["attachments"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
    };
    let added = uploads
        .into_iter()
        .map(|file| fake.attach(AttachmentSpec::new(&file.filename, None, file.bytes)));
    message["attachments"] = kept.into_iter().chain(added).collect();
}

/// The gateway, the attachments' downloads, and the REST API for everything else.
fn router(state: Arc<Fake>) -> Router {
    Router::new()
        .route("/gateway", get(gateway))
        .route("/attachments/{id}/{filename}", get(download))
        .fallback(rest)
        .with_state(state)
}

/// An attachment's bytes, as Discord's CDN serves them, recorded as a request; a body that
/// repeats ([`AttachmentSpec::repeat_to`]) is streamed without a length and counts what it
/// hands over, so a test sees where the client hung up.
async fn download(
    State(fake): State<Arc<Fake>>,
    axum::extract::Path((id, _filename)): axum::extract::Path<(u64, String)>,
    request: Request,
) -> Response {
    let file = lock(&fake.files)
        .get(&id)
        .map(|f| (f.spec.clone(), f.served.clone()));
    let status = if file.is_some() {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    lock(&fake.requests).push(RecordedRequest {
        method: request.method().to_string(),
        path: request.uri().path().to_owned(),
        query: request.uri().query().map(str::to_owned),
        headers: BTreeMap::new(),
        body: None,
        files: Vec::new(),
        status: status.as_u16(),
        at: Instant::now(),
    });
    let Some((spec, served)) = file else {
        return status.into_response();
    };
    let mut response = match spec.repeat_to {
        None => {
            served.fetch_add(spec.bytes.len() as u64, Ordering::SeqCst);
            spec.bytes.into_response()
        }
        Some(total) => {
            let chunk = axum::body::Bytes::from(spec.bytes);
            let chunks = futures_util::stream::unfold(0u64, move |sent| {
                let (chunk, served) = (chunk.clone(), served.clone());
                async move {
                    (sent < total && !chunk.is_empty()).then(|| {
                        served.fetch_add(chunk.len() as u64, Ordering::SeqCst);
                        let next = sent + chunk.len() as u64;
                        (Ok::<_, std::convert::Infallible>(chunk), next)
                    })
                }
            });
            axum::body::Body::from_stream(chunks).into_response()
        }
    };
    let headers = response.headers_mut();
    headers.remove("content-type");
    if let Some(kind) = spec
        .content_type
        .and_then(|k| axum::http::HeaderValue::from_str(&k).ok())
    {
        headers.insert("content-type", kind);
    }
    response
}

// ---------------------------------------------------------------------------------------------
// Gateway.

async fn gateway(upgrade: WebSocketUpgrade, State(fake): State<Arc<Fake>>) -> Response {
    if lock(&fake.refusals).gateway_offline {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    upgrade.on_upgrade(move |socket| serve_gateway(socket, fake))
}

async fn serve_gateway(mut socket: WebSocket, fake: Arc<Fake>) {
    let connection_id = fake.new_id();
    let (outbox, mut inbox) = mpsc::unbounded_channel();
    let mut session_id: Option<String> = None;
    if send(
        &mut socket,
        json!({ "op": 10, "d": { "heartbeat_interval": 41_250 }, "s": null, "t": null }),
    )
    .await
    .is_err()
    {
        return;
    }
    loop {
        tokio::select! {
            frame = socket.recv() => {
                let Some(Ok(WsMessage::Text(text))) = frame else { break };
                let Ok(payload) = serde_json::from_str::<Value>(&text) else { break };
                let d = &payload["d"];
                let registered = match payload["op"].as_u64() {
                    Some(1) => send(&mut socket, json!({ "op": 11 })).await.map(|()| None),
                    Some(2) => identify(&mut socket, &fake, d).await.map(Some),
                    Some(6) => resume(&mut socket, &fake, d).await,
                    _ => Ok(None),
                };
                match registered {
                    Ok(Some(session)) => {
                        let shard = lock(&fake.sessions)[&session].shard;
                        let outbox = outbox.clone();
                        let connection = Connection { id: connection_id, shard, outbox };
                        lock(&fake.connections).push(connection);
                        session_id = Some(session);
                    }
                    Ok(None) => {}
                    Err(()) => break,
                }
            }
            Some(outbound) = inbox.recv() => match outbound {
                Outbound::Dispatch(kind, d, ack) => {
                    let Some(session) = &session_id else { continue };
                    if let Some(d) = filter_by_intents(&fake, session, kind, d)
                        && dispatch(&mut socket, &fake, session, kind, d).await.is_err()
                    {
                        break;
                    }
                    let _ = ack.send(());
                }
                Outbound::Close(code, done) => {
                    let frame = CloseFrame { code, reason: "fake Discord dropped the connection".into() };
                    let _ = socket.send(WsMessage::Close(Some(frame))).await;
                    let _ = done.send(());
                    break;
                }
            }
        }
    }
    lock(&fake.connections).retain(|c| c.id != connection_id);
}

/// Answers op 2: records it, opens a session, sends READY and a GUILD_CREATE per guild.
async fn identify(socket: &mut WebSocket, fake: &Fake, d: &Value) -> Result<String, ()> {
    let shard_field = |i: usize, default: u64| d["shard"][i].as_u64().unwrap_or(default) as u32;
    let shard = [shard_field(0, 0), shard_field(1, 1)];
    let token = d["token"].as_str().unwrap_or_default().to_owned();
    let intents = d["intents"].as_u64().unwrap_or(0);
    lock(&fake.identifies).push(Identify {
        token: token.clone(),
        intents,
        shard,
    });
    let refusals = *lock(&fake.refusals);
    let refused = if refusals.token_on_gateway {
        Some((4004, "Authentication failed."))
    } else if intents & refusals.disallowed_intents != 0 {
        Some((4014, "Disallowed intent(s)."))
    } else {
        None
    };
    if let Some((code, reason)) = refused {
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        let _ = socket.send(WsMessage::Close(Some(frame))).await;
        return Err(());
    }
    let session_id = format!("fake-session-{}", fake.new_id());
    lock(&fake.sessions).insert(
        session_id.clone(),
        Session {
            shard,
            intents,
            token,
            seq: 0,
        },
    );
    dispatch(
        socket,
        fake,
        &session_id,
        "READY",
        fake.ready(&session_id, shard),
    )
    .await?;
    for guild in fake.guilds.iter().filter(|g| g.shard(shard[1]) == shard[0]) {
        dispatch(socket, fake, &session_id, "GUILD_CREATE", guild_json(guild)).await?;
    }
    Ok(session_id)
}

/// Answers op 6: RESUMED for a known session and token, else op 9 "not resumable".
async fn resume(socket: &mut WebSocket, fake: &Fake, d: &Value) -> Result<Option<String>, ()> {
    let session_id = d["session_id"].as_str().unwrap_or_default().to_owned();
    let seq = d["seq"].as_u64().unwrap_or(0);
    let accepted = lock(&fake.sessions)
        .get(&session_id)
        .is_some_and(|s| d["token"] == s.token.as_str());
    lock(&fake.resumes).push(Resume {
        session_id: session_id.clone(),
        seq,
        accepted,
    });
    if !accepted {
        return send(socket, json!({ "op": 9, "d": false }))
            .await
            .map(|()| None);
    }
    dispatch(
        socket,
        fake,
        &session_id,
        "RESUMED",
        json!({ "_trace": ["fake-discord"] }),
    )
    .await?;
    Ok(Some(session_id))
}

/// MESSAGE_CREATE only reaches a session whose intents cover it, and without MESSAGE_CONTENT
/// a guild message arrives with its content blanked unless it mentions the bot.
fn filter_by_intents(fake: &Fake, session_id: &str, kind: &str, mut d: Value) -> Option<Value> {
    if kind != "MESSAGE_CREATE" {
        return Some(d);
    }
    let intents = lock(&fake.sessions)
        .get(session_id)
        .map_or(0, |s| s.intents);
    let in_guild = d.get("guild_id").is_some();
    let needed = if in_guild {
        GUILD_MESSAGES
    } else {
        DIRECT_MESSAGES
    };
    if intents & needed == 0 {
        return None;
    }
    let mentions_bot = d["mentions"]
        .as_array()
        .is_some_and(|m| m.iter().any(|u| id_of(&u["id"]) == BOT_ID));
    if in_guild
        && intents & MESSAGE_CONTENT == 0
        && !mentions_bot
        && id_of(&d["author"]["id"]) != BOT_ID
    {
        for (field, empty) in [
            ("content", json!("")),
            ("embeds", json!([])),
            ("attachments", json!([])),
            ("components", json!([])),
        ] {
            d[field] = empty;
        }
    }
    Some(d)
}

async fn dispatch(
    socket: &mut WebSocket,
    fake: &Fake,
    session_id: &str,
    kind: &str,
    d: Value,
) -> Result<(), ()> {
    let seq = {
        let mut sessions = lock(&fake.sessions);
        let session = sessions.get_mut(session_id).ok_or(())?;
        session.seq += 1;
        session.seq
    };
    send(socket, json!({ "op": 0, "s": seq, "t": kind, "d": d })).await
}

async fn send(socket: &mut WebSocket, payload: Value) -> Result<(), ()> {
    socket
        .send(WsMessage::Text(payload.to_string().into()))
        .await
        .map_err(|_| ())
}

// ---------------------------------------------------------------------------------------------
// REST.

/// Every request that is not the websocket lands here: it is parsed, recorded, then routed.
async fn rest(State(fake): State<Arc<Fake>>, request: Request) -> Response {
    let at = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().map(str::to_owned);
    let headers = request
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let (body, files) = read_body(request).await;
    let injected = injected_fault(&fake, &method, &path);
    let (status, answer) = match injected {
        Some(fault) => fault_answer(fault),
        None if lock(&fake.refusals).token_on_rest => {
            error(StatusCode::UNAUTHORIZED, 0, "401: Unauthorized")
        }
        None => route(
            &fake,
            &method,
            &path,
            body.as_ref().unwrap_or(&Value::Null),
            &files,
        ),
    };
    lock(&fake.requests).push(RecordedRequest {
        method: method.to_string(),
        path,
        query,
        headers,
        body,
        files,
        status: status.as_u16(),
        at,
    });
    let mut response = match answer {
        Some(json) => (status, axum::Json(json)).into_response(),
        None => status.into_response(),
    };
    if let Some(Fault::RateLimitedFor(wait)) = injected {
        let seconds = format!("{:.3}", wait.as_secs_f64());
        for (name, value) in [
            ("retry-after", seconds.as_str()),
            ("x-ratelimit-reset-after", seconds.as_str()),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-limit", "5"),
            ("x-ratelimit-bucket", "fake-bucket"),
        ] {
            if let Ok(value) = axum::http::HeaderValue::from_str(value) {
                response.headers_mut().insert(name, value);
            }
        }
    }
    if injected == Some(Fault::RateLimited) {
        response.headers_mut().insert(
            "retry-after",
            axum::http::HeaderValue::from_static(RETRY_AFTER),
        );
    }
    response
}

/// What a rate-limited answer asks the client to wait, in seconds.
const RETRY_AFTER: &str = "0.05";

/// The fault a test injected for this request, if any is left.
fn injected_fault(fake: &Fake, method: &Method, path: &str) -> Option<Fault> {
    let probe = RecordedRequest {
        method: method.to_string(),
        path: path.to_owned(),
        query: None,
        headers: BTreeMap::new(),
        body: None,
        files: Vec::new(),
        status: 0,
        at: Instant::now(),
    };
    let mut faults = lock(&fake.faults);
    let hit = faults
        .iter_mut()
        .find(|f| f.remaining > 0 && probe.is(f.method, &f.path))?;
    hit.remaining -= 1;
    Some(hit.fault)
}

/// Discord's answer for a fault (bodies as Discord sends them).
fn fault_answer(fault: Fault) -> Answer {
    match fault {
        Fault::ServerError => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            0,
            "500: Internal Server Error",
        ),
        Fault::BadGateway => (StatusCode::BAD_GATEWAY, None),
        Fault::RateLimited => (
            StatusCode::TOO_MANY_REQUESTS,
            Some(json!({
                "message": "You are being rate limited.",
                "retry_after": RETRY_AFTER.parse::<f64>().unwrap_or(0.05),
                "global": false,
            })),
        ),
        Fault::MissingPermissions => error(StatusCode::FORBIDDEN, 50013, "Missing Permissions"),
        Fault::MissingAccess => error(StatusCode::FORBIDDEN, 50001, "Missing Access"),
        Fault::UnknownChannel => error(StatusCode::NOT_FOUND, 10003, "Unknown Channel"),
        Fault::RateLimitedFor(wait) => (
            StatusCode::TOO_MANY_REQUESTS,
            Some(json!({
                "message": "You are being rate limited.",
                "retry_after": wait.as_secs_f64(),
                "global": false,
            })),
        ),
    }
}

async fn read_body(request: Request) -> (Option<Value>, Vec<RecordedFile>) {
    let content_type = request
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !content_type.starts_with("multipart/form-data") {
        let bytes = to_bytes(request.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        return (serde_json::from_slice(&bytes).ok(), Vec::new());
    }
    let mut form = Multipart::from_request(request, &())
        .await
        .expect("multipart body");
    let (mut payload, mut files) = (None, Vec::new());
    while let Some(field) = form.next_field().await.expect("multipart field") {
        let name = field.name().unwrap_or_default().to_owned();
        let filename = field.file_name().map(str::to_owned);
        let bytes = field.bytes().await.expect("multipart field bytes");
        match filename {
            Some(filename) => files.push(RecordedFile {
                field: name,
                filename,
                size: bytes.len(),
                bytes: bytes.to_vec(),
            }),
            None if name == "payload_json" => payload = serde_json::from_slice(&bytes).ok(),
            None => {}
        }
    }
    (payload, files)
}

type Answer = (StatusCode, Option<Value>);

/// Discord's documented limits on a message body, answered as Discord does (400, code
/// 50035, Invalid Form Body): content over 2,000 characters, more than 5 action rows or 5
/// buttons in a row, a `custom_id` over 100 characters, a label over 80, and a reply to a
/// message that no longer exists unless `fail_if_not_exists` is false.
fn refuse_message_body(fake: &Fake, body: &Value) -> Option<Answer> {
    let invalid = |field: &str, what: &str| {
        Some((
            StatusCode::BAD_REQUEST,
            Some(json!({
                "code": 50035,
                "message": "Invalid Form Body",
                "errors": { field: { "_errors": [{ "code": "BASE_TYPE_BAD_LENGTH", "message": what }] } },
            })),
        ))
    };
    if let Some(content) = body.get("content").and_then(Value::as_str)
        && content.chars().count() > 2_000
    {
        return invalid("content", "Must be 2000 or fewer in length.");
    }
    if let Some(rows) = body.get("components").and_then(Value::as_array) {
        if rows.len() > 5 {
            return invalid("components", "Must be 5 or fewer in length.");
        }
        for row in rows {
            let buttons = row["components"].as_array().map_or(&[][..], Vec::as_slice);
            if buttons.len() > 5 {
                return invalid("components", "Must be 5 or fewer in length.");
            }
            for button in buttons {
                if button["custom_id"]
                    .as_str()
                    .is_some_and(|id| id.chars().count() > 100)
                {
                    return invalid("custom_id", "Must be 100 or fewer in length.");
                }
                if button["label"]
                    .as_str()
                    .is_some_and(|l| l.chars().count() > 80)
                {
                    return invalid("label", "Must be 80 or fewer in length.");
                }
            }
        }
    }
    if let Some(reference) = body.get("message_reference")
        && reference["fail_if_not_exists"] != json!(false)
    {
        let id = reference["message_id"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .or_else(|| reference["message_id"].as_u64());
        if id.is_some_and(|id| !lock(&fake.messages).contains_key(&id)) {
            return Some((
                StatusCode::BAD_REQUEST,
                Some(json!({
                    "code": 50035,
                    "message": "Invalid Form Body",
                    "errors": { "message_reference": { "_errors": [{ "code": "REPLIES_UNKNOWN_MESSAGE", "message": "Unknown message" }] } },
                })),
            ));
        }
    }
    None
}

/// Discord's limits on a modal: a title of at most 45 characters, 1 to 5 rows of one text
/// input each, labels of at most 45, custom ids of at most 100.
fn refuse_modal(data: &Value) -> Option<Answer> {
    let invalid = |what: &str| {
        Some((
            StatusCode::BAD_REQUEST,
            Some(
                json!({ "code": 50035, "message": "Invalid Form Body", "errors": { "data": what } }),
            ),
        ))
    };
    let chars = |v: &Value| v.as_str().map_or(0, |s| s.chars().count());
    if chars(&data["title"]) == 0 || chars(&data["title"]) > 45 {
        return invalid("title must be 1 to 45 characters");
    }
    if chars(&data["custom_id"]) == 0 || chars(&data["custom_id"]) > 100 {
        return invalid("custom_id must be 1 to 100 characters");
    }
    let rows = data["components"].as_array().map_or(&[][..], Vec::as_slice);
    if rows.is_empty() || rows.len() > 5 {
        return invalid("a modal has 1 to 5 rows");
    }
    for row in rows {
        let inputs = row["components"].as_array().map_or(&[][..], Vec::as_slice);
        if inputs.len() != 1 || inputs[0]["type"] != json!(4) {
            return invalid("each row of a modal holds one text input");
        }
        if chars(&inputs[0]["label"]) == 0 || chars(&inputs[0]["label"]) > 45 {
            return invalid("a text input's label must be 1 to 45 characters");
        }
    }
    None
}

fn route(fake: &Fake, method: &Method, path: &str, body: &Value, files: &[RecordedFile]) -> Answer {
    let segments: Vec<&str> = path.trim_start_matches("/api/v10/").split('/').collect();
    let n = |s: &str| s.parse::<u64>().unwrap_or(0);
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["gateway"]) => ok(json!({ "url": format!("ws://{}/gateway", fake.addr) })),
        ("GET", ["gateway", "bot"]) => ok(json!({
            "url": format!("ws://{}/gateway", fake.addr),
            "shards": fake.recommended_shards.load(Ordering::SeqCst),
            "session_start_limit": { "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1 },
        })),
        ("GET", ["users", "@me"]) => ok(user_json(&UserSpec::bot_user())),
        ("GET", ["oauth2", "applications", "@me"]) => ok(application_json()),
        ("GET", ["channels", c]) => match fake.channel(n(c)) {
            Some((guild, channel)) => ok(channel_json(guild, channel)),
            None => error(StatusCode::NOT_FOUND, 10003, "Unknown Channel"),
        },
        ("POST", ["channels", c, "messages"]) => {
            if let Some(refused) = refuse_message_body(fake, body) {
                return refused;
            }
            let message = fake.new_message(n(c), &UserSpec::bot_user(), body.clone(), files);
            fake.store(&message);
            ok(message)
        }
        ("GET" | "PATCH" | "DELETE", ["channels", c, "messages", m]) => {
            edit_message(fake, method, n(c), n(m), body, files)
        }
        ("POST", ["channels", _, "typing"]) => (StatusCode::NO_CONTENT, None),
        ("PUT" | "DELETE", ["channels", _, "messages", _, "reactions", _, "@me"]) => {
            (StatusCode::NO_CONTENT, None)
        }
        ("POST", ["interactions", id, token, "callback"]) => callback(fake, n(id), token, body),
        ("POST", ["webhooks", _, token]) => follow_up(fake, token, body, files),
        ("GET" | "PATCH" | "DELETE", ["webhooks", _, token, "messages", m]) => {
            let target = if *m == "@original" {
                original_of(fake, token)
            } else {
                Some(n(m))
            };
            match target.and_then(|m| fake_message_channel(fake, m).map(|c| (c, m))) {
                Some((c, m)) => edit_message(fake, method, c, m, body, files),
                None => error(StatusCode::NOT_FOUND, 10008, "Unknown Message"),
            }
        }
        ("GET", ["applications", _, "commands"]) => ok(json!(
            lock(&fake.commands).get(&None).cloned().unwrap_or_default()
        )),
        ("GET", ["applications", _, "guilds", g, "commands"]) => ok(json!(
            lock(&fake.commands)
                .get(&Some(n(g)))
                .cloned()
                .unwrap_or_default()
        )),
        ("PUT", ["applications", _, "commands"]) => put_commands(fake, None, body),
        ("PUT", ["applications", _, "guilds", g, "commands"])
            if !fake.guilds.iter().any(|guild| guild.id == n(g)) =>
        {
            error(StatusCode::FORBIDDEN, 50001, "Missing Access")
        }
        ("PUT", ["applications", _, "guilds", g, "commands"]) => {
            put_commands(fake, Some(n(g)), body)
        }
        ("GET", ["guilds", g, "roles"]) => {
            match fake.guilds.iter().find(|guild| guild.id == n(g)) {
                Some(guild) => ok(json!(roles_json(guild))),
                None => error(StatusCode::NOT_FOUND, 10004, "Unknown Guild"),
            }
        }
        ("GET", ["guilds", g, "members", u])
            if n(u) == BOT_ID && fake.guilds.iter().any(|guild| guild.id == n(g)) =>
        {
            let mut member = member_json(&[GuildSpec::new(n(g), "").bot_role_id()], None);
            member["user"] = user_json(&UserSpec::bot_user());
            ok(member)
        }
        _ => error(
            StatusCode::NOT_FOUND,
            0,
            &format!("404: Not Found (the fake Discord has no route for {method} {path})"),
        ),
    }
}

fn edit_message(
    fake: &Fake,
    method: &Method,
    channel_id: u64,
    message_id: u64,
    body: &Value,
    files: &[RecordedFile],
) -> Answer {
    if method.as_str() == "PATCH"
        && let Some(refused) = refuse_message_body(fake, body)
    {
        return refused;
    }
    let mut messages = lock(&fake.messages);
    let Some(message) = messages
        .get_mut(&message_id)
        .filter(|m| id_of(&m["channel_id"]) == channel_id)
    else {
        return error(StatusCode::NOT_FOUND, 10008, "Unknown Message");
    };
    match method.as_str() {
        "PATCH" => {
            apply_edit(message, body, files.to_vec(), fake);
            message["edited_timestamp"] = json!(TIMESTAMP);
            ok(message.clone())
        }
        "DELETE" => {
            messages.remove(&message_id);
            (StatusCode::NO_CONTENT, None)
        }
        _ => ok(message.clone()),
    }
}

/// Interaction callbacks: 4 and 5 create the original response, 7 updates the clicked message;
/// an unknown, late (over three seconds) or second answer fails as on Discord.
fn callback(fake: &Fake, interaction_id: u64, token: &str, body: &Value) -> Answer {
    let (channel_id, clicked) = {
        let mut interactions = lock(&fake.interactions);
        let Some(record) = interactions
            .get_mut(&interaction_id)
            .filter(|r| r.token == token)
        else {
            return error(StatusCode::NOT_FOUND, 10062, "Unknown interaction");
        };
        if record.issued.elapsed() > INTERACTION_DEADLINE {
            return error(StatusCode::NOT_FOUND, 10062, "Unknown interaction");
        }
        if record.acknowledged {
            return error(
                StatusCode::BAD_REQUEST,
                40060,
                "Interaction has already been acknowledged.",
            );
        }
        record.acknowledged = true;
        (record.channel_id, record.message_id)
    };
    let data = body.get("data").cloned().unwrap_or_else(|| json!({}));
    if body["type"] == json!(9) {
        if let Some(refused) = refuse_modal(&data) {
            return refused;
        }
    } else if let Some(refused) = refuse_message_body(fake, &data) {
        return refused;
    }
    match body["type"].as_u64() {
        Some(4 | 5) => {
            let mut message = fake.new_message(channel_id, &UserSpec::bot_user(), data, &[]);
            message["webhook_id"] = json!(APP_ID.to_string());
            message["application_id"] = json!(APP_ID.to_string());
            message["type"] = json!(20);
            fake.store(&message);
            if let Some(record) = lock(&fake.interactions).get_mut(&interaction_id) {
                record.original = Some(id_of(&message["id"]));
            }
        }
        Some(7) => {
            let mut messages = lock(&fake.messages);
            if let Some(stored) = clicked.and_then(|m| messages.get_mut(&m)) {
                apply_edit(stored, &data, Vec::new(), fake);
                stored["edited_timestamp"] = json!(TIMESTAMP);
            }
        }
        _ => {}
    }
    (StatusCode::NO_CONTENT, None)
}

fn follow_up(fake: &Fake, token: &str, body: &Value, files: &[RecordedFile]) -> Answer {
    if let Some(refused) = refuse_message_body(fake, body) {
        return refused;
    }
    let channel_id = lock(&fake.interactions)
        .values()
        .find(|r| r.token == token)
        .map(|r| r.channel_id);
    let Some(channel_id) = channel_id else {
        return error(StatusCode::NOT_FOUND, 10015, "Unknown Webhook");
    };
    let mut message = fake.new_message(channel_id, &UserSpec::bot_user(), body.clone(), files);
    message["webhook_id"] = json!(APP_ID.to_string());
    message["application_id"] = json!(APP_ID.to_string());
    fake.store(&message);
    ok(message)
}

fn original_of(fake: &Fake, token: &str) -> Option<u64> {
    lock(&fake.interactions)
        .values()
        .find(|r| r.token == token)
        .and_then(|r| r.original)
}

fn fake_message_channel(fake: &Fake, message_id: u64) -> Option<u64> {
    lock(&fake.messages)
        .get(&message_id)
        .map(|m| id_of(&m["channel_id"]))
}

/// Bulk overwrite: every command gets an id (kept across overwrites by name) and a version.
fn put_commands(fake: &Fake, guild_id: Option<u64>, body: &Value) -> Answer {
    let wanted = body.as_array().cloned().unwrap_or_default();
    let mut commands = lock(&fake.commands);
    let previous = commands.get(&guild_id).cloned().unwrap_or_default();
    let stored: Vec<Value> = wanted
        .into_iter()
        .map(|mut command| {
            let old = previous.iter().find(|c| c["name"] == command["name"]);
            let id = old.map_or_else(|| fake.new_id(), |c| id_of(&c["id"]));
            command["id"] = json!(id.to_string());
            command["application_id"] = json!(APP_ID.to_string());
            command["version"] = json!(fake.new_id().to_string());
            command["guild_id"] = json!(guild_id.map(|g| g.to_string()));
            for (field, default) in [
                ("type", json!(1)),
                ("description", json!("")),
                ("default_member_permissions", Value::Null),
            ] {
                if command.get(field).is_none_or(Value::is_null) {
                    command[field] = default;
                }
            }
            command
        })
        .collect();
    commands.insert(guild_id, stored.clone());
    ok(json!(stored))
}

fn ok(json: Value) -> Answer {
    (StatusCode::OK, Some(json))
}

fn error(status: StatusCode, code: u32, message: &str) -> Answer {
    (status, Some(json!({ "message": message, "code": code })))
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

/// A snowflake from JSON, whether Discord's string or a plain number; 0 if neither.
pub fn id_of(value: &Value) -> u64 {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| value.as_u64())
        .unwrap_or(0)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().expect("fake Discord state lock")
}

pub async fn poll<T>(timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// An interaction sent to a chosen shard.

impl FakeDiscord {
    /// Like [`FakeDiscord::component_click`], but the interaction goes to the connections of
    /// `shard` whatever guild it is in: several processes serving shards of one bot (sharing
    /// one store) can get a click on a message another process posted, as while shards move
    /// from one process to another. Returns once a connection of that shard sent the frame.
    pub async fn component_click_on_shard(
        &self,
        shard: u32,
        message_id: u64,
        custom_id: &str,
        user: &UserSpec,
    ) -> Value {
        let message = self
            .message(message_id)
            .unwrap_or_else(|| panic!("no stored message {message_id}"));
        let data = json!({ "custom_id": custom_id, "component_type": 2 });
        let channel_id = id_of(&message["channel_id"]);
        let interaction = self
            .state
            .new_interaction(3, channel_id, user, data, Some(message));
        let outboxes: Vec<_> = lock(&self.state.connections)
            .iter()
            .filter(|c| c.shard[0] == shard)
            .map(|c| c.outbox.clone())
            .collect();
        let mut sent_by_one = false;
        for outbox in outboxes {
            let (ack, sent) = oneshot::channel();
            let queued = outbox.send(Outbound::Dispatch(
                "INTERACTION_CREATE",
                interaction.clone(),
                ack,
            ));
            if queued.is_ok() {
                sent_by_one |= tokio::time::timeout(WAIT, sent)
                    .await
                    .is_ok_and(|r| r.is_ok());
            }
        }
        assert!(
            sent_by_one,
            "no gateway connection of shard {shard} took the click"
        );
        interaction
    }
}
