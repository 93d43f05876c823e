//! The Discord adapter: `riskgate run`. Only this module knows Discord.
//!
//! - Relay: messages in `discord.channels` (and threads under them) go to the agent;
//!   elsewhere only when the bot is mentioned; DMs only when enabled; bots are ignored.
//!   A message's text attachments go with it, and the others are named ([`attachments`]);
//!   a message of attachments alone (a long paste) is relayed by the same rules.
//!   One run at a time per channel, later messages queue (bounded; when full the bot says it
//!   is busy); the typing indicator shows while a run works.
//! - Results and replies go out through the [`outbox::Outbox`] (mentions off, split under
//!   2000 characters, long output attached).
//! - Approvals are messages with Confirm / Cancel buttons, decided exactly once in the store,
//!   by a click on their own message only; a decision another process sharing the store made
//!   reaches the run waiting here within `store.approval_watch_ms`.
//! - Slash commands: `/mode`, `/profile`, `/status`, `/reset`, `/pending`, `/audit`.
//!
//! Required gateway intents: GUILDS, GUILD_MESSAGES, DIRECT_MESSAGES and the privileged
//! MESSAGE_CONTENT (enable it in the developer portal under Bot > Privileged Gateway Intents).

mod access;
pub mod approvals;
pub mod attachments;
pub mod commands;
pub mod deliver;
pub mod outbox;
pub mod render;
pub mod status;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use secrecy::ExposeSecret;
use serenity::all::{
    ChannelId, ChannelType, Client, Context, EventHandler, GatewayIntents, HttpBuilder,
    Interaction, Message, MessageId, Ready, UserId,
};
use serenity::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{DiscordSettings, Settings};
use crate::core::agent::{Agent, AgentEvent, Inbound};
use crate::core::ports::{ApprovalOutcome, ChatModel, EventSink, Store};
use approvals::{ApprovalHub, ApproverPolicy, DiscordApprovals};
use outbox::{Item, Outbox};

/// Why the bot could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error(
        "no Discord token: set discord.token, or DISCORD_TOKEN (DISCORD_TOKEN_FILE for a file holding it), to the token on your application's Bot page in the developer portal"
    )]
    NoToken,
    #[error(transparent)]
    App(#[from] crate::app::AppError),
    #[error(
        "Discord refused the bot token ({0}): set discord.token, or DISCORD_TOKEN (DISCORD_TOKEN_FILE for a file holding it), to the token on your application's Bot page in the developer portal (https://discord.com/developers/applications > your application > Bot > Reset Token); the client secret and the public key are not the token"
    )]
    TokenRefused(status::TokenRefusal),
    #[error(
        "Discord refused the Message Content intent (the gateway closed with 4014 Disallowed intent(s)): in the developer portal (https://discord.com/developers/applications > your application > Bot > Privileged Gateway Intents) turn on Message Content Intent, save, and start riskgate again"
    )]
    DisallowedIntents,
    #[error("Discord error: {0}")]
    Discord(#[from] serenity::Error),
    #[error("the fake Discord's client could not be built: {0}")]
    FakeDiscord(String),
    #[error("the HTTP client that downloads attachments could not be built: {0}")]
    AttachmentClient(String),
}

/// The HTTP client for a fake Discord that speaks TLS (`discord.api_ca_pem`): discord.com
/// resolves to the fake and its certificate is trusted, so serenity's rate limiter, which
/// follows no proxy, works against it as against Discord. `None` without one.
fn fake_tls_client(settings: &DiscordSettings) -> Result<Option<reqwest::Client>, String> {
    let (Some(pem), Some(address)) = (&settings.api_ca_pem, settings.fake_tls_address()) else {
        return Ok(None);
    };
    let certificate = reqwest::Certificate::from_pem(pem.as_bytes())
        .map_err(|e| format!("discord.api_ca_pem: {e}"))?;
    reqwest::Client::builder()
        .use_rustls_tls()
        .resolve("discord.com", address)
        .add_root_certificate(certificate)
        .build()
        .map(Some)
        .map_err(|e| e.to_string())
}

impl BotError {
    /// Whether the operator must change a setting (here or in the developer portal) before
    /// the bot can work: starting again as it is cannot help.
    pub fn is_setting(&self) -> bool {
        match self {
            Self::NoToken
            | Self::TokenRefused(_)
            | Self::DisallowedIntents
            | Self::FakeDiscord(_) => true,
            Self::App(_) | Self::Discord(_) | Self::AttachmentClient(_) => false,
        }
    }
}

/// The gateway intents the bot needs.
pub fn intents() -> GatewayIntents {
    GatewayIntents::GUILDS
        | GatewayIntents::GUILD_MESSAGES
        | GatewayIntents::DIRECT_MESSAGES
        | GatewayIntents::MESSAGE_CONTENT
}

/// What a channel's worker does next.
enum Job {
    /// A message the bot will work on, with its attachments (read when its turn comes, so
    /// a slow download never reorders the channel's messages).
    Message {
        inbound: Inbound,
        message: MessageId,
        attachments: Vec<attachments::Offered>,
    },
    /// Continue the run that waited for this approval when the bot stopped (a click after
    /// a restart decided it).
    Resume { approval_id: String },
}

/// Everything the handler and the tasks share.
struct BotState {
    settings: DiscordSettings,
    /// The MCP servers, stopped with the bot.
    mcp: Option<Arc<crate::mcp::McpHub>>,
    model_name: String,
    agent: Arc<Agent>,
    store: Arc<dyn Store>,
    outbox: Arc<Outbox>,
    hub: Arc<ApprovalHub>,
    http: Arc<serenity::http::Http>,
    bot_user: OnceLock<UserId>,
    workers: Mutex<HashMap<ChannelId, mpsc::Sender<Job>>>,
    /// Thread -> parent channel (None: not a thread), looked up once per channel.
    parents: Mutex<HashMap<ChannelId, Option<ChannelId>>>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    metrics: Arc<crate::metrics::Metrics>,
    /// What `/healthz` answers.
    health: Arc<crate::health::Health>,
    /// The application the token belongs to, if Discord said so at start.
    application: Option<status::Application>,
    /// Shards of this process that sent READY, and how many there are.
    ready_shards: Mutex<HashSet<u32>>,
    shard_count: usize,
    /// The start-up report was made.
    reported: std::sync::atomic::AtomicBool,
    sweep_every: Duration,
    /// How often runs waiting here look for decisions made by other processes
    /// (`store.approval_watch_ms`).
    approval_watch: Duration,
    shutdown_grace: Duration,
    /// Who may start runs.
    access: access::Access,
    /// Downloads the text attachments of messages, within `attachment_limits`.
    attachment_client: reqwest::Client,
    attachment_limits: attachments::Limits,
}

/// Sends the loop's events to the channel's outbox queue.
struct DiscordEvents {
    outbox: Arc<Outbox>,
}

impl EventSink for DiscordEvents {
    fn emit(&self, channel: &str, event: &AgentEvent) {
        // What a request cost is for the counters, not the channel.
        if matches!(event, AgentEvent::ModelUsage { .. }) {
            return;
        }
        if let Ok(id) = channel.parse::<u64>()
            && id > 0
        {
            self.outbox
                .push(ChannelId::new(id), Item::Event(event.clone()));
        }
    }
}

struct Handler {
    state: Arc<OnceLock<Arc<BotState>>>,
}

/// How long a stop waits for serenity to close the Discord connection before going on
/// without it (it never does while it is retrying an unreachable gateway).
const SHARD_STOP_WAIT: Duration = Duration::from_secs(2);

/// The bot, built and ready to start.
pub struct Bot {
    client: Client,
    state: Arc<BotState>,
}

impl Bot {
    /// Builds the client and the agent. `discord.api_base_url` (tests only) routes serenity
    /// to a local fake: over plain HTTP with the rate limiter off, or, with
    /// `discord.api_ca_pem`, over TLS as discord.com itself, with the limiter on.
    pub async fn build(
        settings: &Settings,
        model: Arc<dyn ChatModel>,
        store: Arc<dyn Store>,
    ) -> Result<Self, BotError> {
        let grace = Duration::from_secs(settings.observability.gateway_grace_secs);
        let observers = Observers {
            metrics: crate::metrics::Metrics::new(),
            health: crate::health::Health::new(grace),
        };
        Self::build_observed(settings, model, store, observers).await
    }

    /// [`Bot::build`] reporting to the given metrics and health (which `riskgate run` serves
    /// from before the bot exists). Asks Discord first which application the token belongs
    /// to: a refused token ends the start here, with the setting to fix.
    pub async fn build_observed(
        settings: &Settings,
        model: Arc<dyn ChatModel>,
        store: Arc<dyn Store>,
        observers: Observers,
    ) -> Result<Self, BotError> {
        let token = settings.discord.token.as_ref().ok_or(BotError::NoToken)?;
        let mut http =
            HttpBuilder::new(token.expose_secret()).default_allowed_mentions(outbox::no_mentions());
        if let Some(base) = &settings.discord.api_base_url {
            tracing::warn!(%base, "discord.api_base_url is set: talking to a fake Discord");
            http = match fake_tls_client(&settings.discord).map_err(BotError::FakeDiscord)? {
                Some(client) => http.client(client),
                None => http
                    .proxy(base.trim_end_matches('/'))
                    .ratelimiter_disabled(true),
            };
        }
        let http = http.build();
        let application = status::application(&http)
            .await
            .map_err(BotError::TokenRefused)?;
        let cell: Arc<OnceLock<Arc<BotState>>> = Arc::new(OnceLock::new());
        let client = serenity::all::ClientBuilder::new_with_http(http, intents())
            .event_handler(Handler {
                state: cell.clone(),
            })
            .await?;
        if let Some(base) = &settings.discord.api_base_url {
            // serenity asks the fake for the gateway URL while building; if that failed it
            // silently falls back to the real gateway, which a test must never reach.
            let mut ws_url = client.ws_url.lock().await;
            if ws_url.starts_with("wss://") {
                tracing::error!(url = %ws_url, "the fake Discord gave no gateway URL; using {base}/gateway");
                *ws_url = format!(
                    "{}/gateway",
                    base.trim_end_matches('/').replacen("http", "ws", 1)
                );
            }
        }
        let http = client.http.clone();
        // The agent's tools, shared with the outbox, which shows each call as its tool does.
        let tools = crate::tools::builtin_registry(settings);
        let mcp = crate::app::start_mcp(settings, &tools).await;
        let outbox = Outbox::new(
            http.clone(),
            outbox::Limits::from_settings(&settings.discord),
            tools.clone(),
        );
        let hub = Arc::new(ApprovalHub::default());
        let Observers { metrics, health } = observers;
        let agent = crate::app::build_agent_with(
            settings,
            tools,
            Arc::new(crate::metrics::MeteredModel {
                inner: model,
                metrics: metrics.clone(),
            }),
            store.clone(),
            Arc::new(DiscordApprovals {
                outbox: outbox.clone(),
                hub: hub.clone(),
                store: store.clone(),
            }),
            Arc::new(crate::metrics::MeteredEvents {
                inner: Arc::new(DiscordEvents {
                    outbox: outbox.clone(),
                }),
                metrics: metrics.clone(),
            }),
        )?;
        // The agent's store: `/profile` written through it reaches the agent at once.
        let store = agent.store.clone();
        let state = Arc::new(BotState {
            settings: settings.discord.clone(),
            mcp,
            model_name: settings.llm.model.clone(),
            agent: Arc::new(agent),
            store,
            outbox,
            hub,
            http,
            bot_user: OnceLock::new(),
            workers: Mutex::new(HashMap::new()),
            parents: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
            tracker: TaskTracker::new(),
            metrics,
            health,
            application,
            ready_shards: Mutex::new(HashSet::new()),
            shard_count: shard_count(&settings.discord),
            reported: std::sync::atomic::AtomicBool::new(false),
            sweep_every: Duration::from_secs(settings.store.sweep_interval_secs),
            approval_watch: Duration::from_millis(settings.store.approval_watch_ms),
            shutdown_grace: Duration::from_secs(settings.discord.shutdown_grace_secs),
            access: access::Access::new(&settings.discord),
            attachment_client: attachments::client()
                .map_err(|e| BotError::AttachmentClient(e.to_string()))?,
            attachment_limits: attachments::Limits::from_settings(&settings.discord),
        });
        let _ = cell.set(state.clone());
        Ok(Self { client, state })
    }

    /// The bot's counters, for the operators' `/metrics`.
    pub fn metrics(&self) -> Arc<crate::metrics::Metrics> {
        self.state.metrics.clone()
    }

    /// What `/healthz` answers.
    pub fn health(&self) -> Arc<crate::health::Health> {
        self.state.health.clone()
    }

    /// Cancelling this token stops the bot gracefully.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.state.shutdown.clone()
    }

    /// Connects and serves until the shutdown token is cancelled.
    pub async fn run(self) -> Result<(), BotError> {
        let Self { mut client, state } = self;
        let sweeper = tokio::spawn(sweep(state.clone(), state.sweep_every));
        let gateway_watch = tokio::spawn(status::watch_gateway(
            client.shard_manager.clone(),
            state.health.clone(),
            state.shard_count,
        ));
        let decision_watch = tokio::spawn(approvals::watch_decisions(
            state.hub.clone(),
            state.store.clone(),
            state.approval_watch,
        ));
        let manager = client.shard_manager.clone();
        let stopper = {
            let state = state.clone();
            tokio::spawn(async move {
                state.shutdown.cancelled().await;
                tracing::info!("shutting down: no new messages; running steps finish");
                manager.shutdown_all().await;
            })
        };
        let settings = &state.settings;
        let connection = async {
            if settings.shard_total > 0 {
                let first = u32::try_from(settings.shard_first).unwrap_or(0);
                let last = u32::try_from(settings.shard_last).unwrap_or(0);
                let total = u32::try_from(settings.shard_total).unwrap_or(1);
                // serenity 0.12 treats the end of this range as included (tests/fake_discord.rs).
                client.start_shard_range(first..last, total).await
            } else {
                client.start().await
            }
        };
        // While Discord cannot be reached, serenity's shard queuer keeps retrying and does
        // not notice `shutdown_all`; a stop that was asked for must not wait on it.
        let abandon = async {
            state.shutdown.cancelled().await;
            tokio::time::sleep(SHARD_STOP_WAIT).await;
        };
        let result = tokio::select! {
            result = connection => result,
            () = abandon => {
                tracing::warn!(
                    wait = ?SHARD_STOP_WAIT,
                    "the Discord connection did not close after the stop was asked for (Discord unreachable?); stopping without it"
                );
                Ok(())
            }
        };
        state.shutdown.cancel();
        state.tracker.close();
        if tokio::time::timeout(state.shutdown_grace, state.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                grace = ?state.shutdown_grace,
                "some runs were still working at the end of the grace period; their approvals stay recorded"
            );
        }
        sweeper.abort();
        gateway_watch.abort();
        stopper.abort();
        decision_watch.abort();
        // Audit records kept during a store outage: written now, or logged if it persists.
        state.agent.flush_audit_or_log().await;
        if let Some(mcp) = &state.mcp {
            mcp.shutdown().await;
        }
        let error = match result {
            Err(serenity::Error::Gateway(
                serenity::gateway::GatewayError::DisallowedGatewayIntents,
            )) => BotError::DisallowedIntents,
            Err(serenity::Error::Gateway(
                serenity::gateway::GatewayError::InvalidAuthentication,
            )) => BotError::TokenRefused(status::TokenRefusal::Gateway),
            Err(e) => e.into(),
            Ok(()) => return Ok(()),
        };
        // For log collectors; the process also prints it as it exits.
        tracing::error!(target: crate::telemetry::STATUS, "{error}");
        Err(error)
    }
}

/// What the bot reports to besides its logs.
pub struct Observers {
    pub metrics: Arc<crate::metrics::Metrics>,
    pub health: Arc<crate::health::Health>,
}

/// How many shards this process runs: `shard_first..=shard_last`, or one.
fn shard_count(settings: &DiscordSettings) -> usize {
    if settings.shard_total > 0 {
        usize::try_from(settings.shard_last.saturating_sub(settings.shard_first) + 1).unwrap_or(1)
    } else {
        1
    }
}

/// Marks overdue approvals expired (telling their runs) and those of stopped runs abandoned,
/// and edits their messages to say so; writes audit records kept during a store outage. Runs
/// at start, then every `store.sweep_interval_secs`.
async fn sweep(state: Arc<BotState>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        if state.shutdown.is_cancelled() {
            return;
        }
        let expired = match state.store.expire_overdue(SystemTime::now()).await {
            Ok(expired) => expired,
            Err(e) => {
                tracing::warn!(error = %e, "the expiry sweep failed");
                Vec::new()
            }
        };
        // Audit records kept while the store was down go in once it answers again.
        if let Err(e) = state.agent.flush_audit().await {
            tracing::warn!(error = %e, "unwritten audit records are still waiting for the store");
        }
        let abandoned = match crate::app::abandon_orphaned(state.store.as_ref()).await {
            Ok(abandoned) => abandoned,
            Err(e) => {
                tracing::warn!(error = %e, "the orphan sweep failed");
                Vec::new()
            }
        };
        for approval in expired.iter().chain(&abandoned) {
            let outcome = approval.status.as_str();
            if approval.status == crate::core::ports::ApprovalStatus::Expired {
                state.hub.resolve(&approval.id, ApprovalOutcome::Expired);
            }
            if let Some((channel, message)) = approval
                .message_ref
                .as_deref()
                .and_then(approvals::message_ref)
            {
                state.outbox.push(
                    channel,
                    Item::Settle {
                        message,
                        outcome: outcome.to_owned(),
                        by: None,
                    },
                );
            }
        }
    }
}

impl BotState {
    /// Logs the start-up report once every shard of this process sent READY (once per
    /// process); a later READY (a new session) only warns if the commands were refused.
    async fn report_start(&self, ctx: &Context, ready: &Ready, registration: status::Registration) {
        let all_ready = self.ready_shards.lock().is_ok_and(|mut shards| {
            shards.insert(ready.shard.map_or(0, |s| s.id.0));
            shards.len() >= self.shard_count
        });
        let first = all_ready
            && !self
                .reported
                .swap(true, std::sync::atomic::Ordering::SeqCst);
        if !first {
            if matches!(
                registration,
                status::Registration::GuildRefused { .. } | status::Registration::Failed(_)
            ) {
                tracing::warn!(?registration, "slash commands could not be registered");
            }
            return;
        }
        status::guilds_arrived(ctx).await;
        let model = self.metrics.model_status_checked(status::MODEL_WAIT).await;
        let application = self.application.clone().unwrap_or(status::Application {
            id: ready.application.id.get(),
            name: ready.user.name.clone(),
        });
        let seen = status::sighting(ctx, ready.user.id, application, &self.settings.channels);
        status::log(&status::report(
            &seen,
            &registration,
            &model,
            &self.settings,
        ));
    }

    /// Whether a message should reach the agent, and with what text (empty when only its
    /// attachments carry something, as when Discord's client made a long paste a file).
    async fn relay_text(&self, message: &Message) -> Option<String> {
        if message.author.bot {
            return None;
        }
        let mentioned = self
            .bot_user
            .get()
            .is_some_and(|me| message.mentions.iter().any(|u| u.id == *me));
        let text = self.strip_mention(&message.content);
        if text.trim().is_empty() && message.attachments.is_empty() {
            return None;
        }
        if message.guild_id.is_none() {
            return self.settings.allow_dms.then_some(text);
        }
        if mentioned || self.is_served(message.channel_id).await {
            return Some(text);
        }
        None
    }

    /// Whether the author may start runs here (`discord.allowed_users`, `allowed_roles`,
    /// `channel_access`). A thread's parent is known once `is_served` has looked it up.
    fn may_ask(&self, message: &Message) -> bool {
        let roles: Vec<u64> = message
            .member
            .as_ref()
            .map(|m| m.roles.iter().map(|r| r.get()).collect())
            .unwrap_or_default();
        let parent = self
            .parents
            .lock()
            .ok()
            .and_then(|p| p.get(&message.channel_id).copied().flatten())
            .map(ChannelId::get);
        self.access.allows(
            message.author.id.get(),
            &roles,
            message.channel_id.get(),
            parent,
        )
    }

    fn strip_mention(&self, content: &str) -> String {
        match self.bot_user.get() {
            Some(me) => content
                .replace(&format!("<@{}>", me.get()), "")
                .replace(&format!("<@!{}>", me.get()), "")
                .trim()
                .to_owned(),
            None => content.trim().to_owned(),
        }
    }

    /// A configured channel, or a thread under one.
    async fn is_served(&self, channel: ChannelId) -> bool {
        let served = |c: ChannelId| self.settings.channels.contains(&c.get());
        if served(channel) {
            return true;
        }
        let known = self
            .parents
            .lock()
            .ok()
            .and_then(|p| p.get(&channel).copied());
        let parent = match known {
            Some(parent) => parent,
            None => {
                let parent = match channel.to_channel(&self.http).await {
                    Ok(serenity::all::Channel::Guild(c))
                        if matches!(
                            c.kind,
                            ChannelType::PublicThread
                                | ChannelType::PrivateThread
                                | ChannelType::NewsThread
                        ) =>
                    {
                        c.parent_id
                    }
                    _ => None,
                };
                if let Ok(mut parents) = self.parents.lock() {
                    parents.insert(channel, parent);
                }
                parent
            }
        };
        parent.is_some_and(served)
    }

    /// `inbound` with its attachments' texts (or why each was not read) after its text; the
    /// person is told in one reply to `message` which were read.
    async fn with_attachments(
        &self,
        channel: ChannelId,
        inbound: &Inbound,
        offered: &[attachments::Offered],
        message: MessageId,
    ) -> Inbound {
        let read =
            attachments::read_all(&self.attachment_client, offered, self.attachment_limits).await;
        for outcome in read.outcomes() {
            tracing::info!(
                %channel,
                size = outcome.offered.size,
                content_type = outcome.offered.content_type.as_deref().unwrap_or("none"),
                read = outcome.result.is_ok(),
                why_not = outcome.result.as_ref().err().map(|why| format!("{why:?}")),
                "an attachment of a message for the model"
            );
        }
        self.outbox
            .push(channel, Item::Notice(read.notice(), Some(message)));
        Inbound {
            text: read.appended_to(&inbound.text),
            ..inbound.clone()
        }
    }

    /// Queues a job on the channel's worker; `false` when the queue is full.
    fn enqueue(self: &Arc<Self>, channel: ChannelId, job: Job) -> bool {
        let Ok(mut workers) = self.workers.lock() else {
            return false;
        };
        let sender = workers.entry(channel).or_insert_with(|| {
            let limit = usize::try_from(self.settings.queue_limit).unwrap_or(5);
            let (tx, rx) = mpsc::channel(limit);
            let state = self.clone();
            self.tracker.spawn(worker(state, channel, rx));
            tx
        });
        let queued = sender.try_send(job).is_ok();
        if queued {
            self.metrics.queue_changed(1);
        }
        queued
    }
}

/// How many approval-watch intervals a click handled here leaves a run that asked and still
/// lives in another process to go on there, before continuing it here.
const HANDOVER_INTERVALS: u32 = 3;

impl BotState {
    /// Continues the run of a decided approval that no run here waits for. The run that
    /// asked is preferred where it still lives (in another process sharing the store: that
    /// process's watch wakes it within an interval): it holds the gate's reading of the call,
    /// and its channel's queue waits for it there. So this process resumes the run from the
    /// store at once only when the run that asked is not live elsewhere (its process stopped,
    /// or it was this process's and went on already), and otherwise only after
    /// [`HANDOVER_INTERVALS`] watch intervals, in case it did not go on. Whichever goes on
    /// claims the continuation in the store first, so the call runs once.
    fn continue_decided(self: &Arc<Self>, unwaited: approvals::Unwaited) {
        let state = self.clone();
        self.tracker.spawn(async move {
            let approvals::Unwaited {
                channel,
                approval_id,
                run_id,
            } = unwaited;
            if state.lives_elsewhere(&run_id).await {
                let handover = state.approval_watch * HANDOVER_INTERVALS;
                tracing::info!(approval = %approval_id, ?handover, "the run that asked waits in another process; it goes on there unless it has not by the end of the handover");
                tokio::select! {
                    () = tokio::time::sleep(handover) => {}
                    () = state.shutdown.cancelled() => return,
                }
            }
            if !state.enqueue(channel, Job::Resume { approval_id }) {
                tracing::error!(%channel, "the channel's queue is full; the decided approval's run was not resumed");
            }
        });
    }

    /// Whether `run_id` is live in another process sharing the store. When the store cannot
    /// tell, it is assumed to be, so this process waits the handover before resuming it.
    async fn lives_elsewhere(&self, run_id: &str) -> bool {
        let stale_before = SystemTime::now() - crate::app::STALE_RUN;
        match self.store.live_run_instance(run_id, stale_before).await {
            Ok(Some(instance)) => instance != self.agent.instance,
            Ok(None) => false,
            Err(e) => {
                tracing::warn!(error = %e, run_id, "whether the run lives in another process could not be read; waiting before resuming it here");
                true
            }
        }
    }
}

/// One channel's runs, one at a time.
async fn worker(state: Arc<BotState>, channel: ChannelId, mut jobs: mpsc::Receiver<Job>) {
    loop {
        let job = tokio::select! {
            _ = state.shutdown.cancelled() => return,
            job = jobs.recv() => match job {
                Some(job) => job,
                None => return,
            },
        };
        state.metrics.queue_changed(-1);
        let trigger = match &job {
            Job::Message { message, .. } => Some(*message),
            Job::Resume { .. } => None,
        };
        state.outbox.push(channel, Item::Trigger(trigger));
        // A resume may find that its run went on in the process that asked, and then does
        // nothing: it shows no typing indicator (a resumed run announces itself instead).
        let typing = trigger.is_some().then(|| channel.start_typing(&state.http));
        let run = async {
            match &job {
                Job::Message {
                    inbound,
                    message,
                    attachments,
                } => {
                    if attachments.is_empty() {
                        state.agent.run(inbound).await;
                    } else {
                        let inbound = state
                            .with_attachments(channel, inbound, attachments, *message)
                            .await;
                        state.agent.run(&inbound).await;
                    }
                }
                Job::Resume { approval_id } => {
                    if state.agent.resume(approval_id).await.is_none() {
                        tracing::debug!(approval = %approval_id, "nothing to resume for a decided approval");
                    }
                }
            }
        };
        tokio::select! {
            _ = run => {}
            // A shutdown stops waiting for people; pending approvals stay recorded.
            _ = state.shutdown.cancelled() => {
                drop(typing);
                return;
            }
        }
        drop(typing);
    }
}

#[async_trait]
impl EventHandler for Handler {
    /// serenity's rate limiter is about to wait: sends in flight watch for it.
    async fn ratelimit(&self, data: serenity::http::RatelimitInfo) {
        if let Some(state) = self.state.get() {
            state.outbox.rate_limited(&data);
        }
    }

    async fn ready(&self, ctx: Context, ready: Ready) {
        let Some(state) = self.state.get() else {
            return;
        };
        let _ = state.bot_user.set(ready.user.id);
        state.health.discord_ready();
        tracing::info!(user = %ready.user.name, guilds = ready.guilds.len(), shard = ?ready.shard, "connected to Discord");
        let registration =
            status::register(&ctx, state.settings.guild_id, &state.agent.profiles).await;
        state.report_start(&ctx, &ready, registration).await;
    }

    async fn message(&self, _ctx: Context, message: Message) {
        let Some(state) = self.state.get() else {
            return;
        };
        if state.shutdown.is_cancelled() {
            return;
        }
        let Some(text) = state.relay_text(&message).await else {
            return;
        };
        if !state.may_ask(&message) {
            let (user, channel) = (message.author.id.get(), message.channel_id.get());
            tracing::info!(
                user,
                channel,
                "a message from a member who may not start runs was not passed on"
            );
            if state.access.should_tell(user, channel) {
                state.outbox.push(
                    message.channel_id,
                    Item::Notice(access::REFUSED_NOTICE.into(), Some(message.id)),
                );
            }
            return;
        }
        let name = message
            .member
            .as_ref()
            .and_then(|m| m.nick.clone())
            .or_else(|| message.author.global_name.clone())
            .unwrap_or_else(|| message.author.name.clone());
        let job = Job::Message {
            inbound: Inbound {
                channel: message.channel_id.get().to_string(),
                author: message.author.id.get().to_string(),
                author_name: name,
                text,
            },
            message: message.id,
            attachments: message
                .attachments
                .iter()
                .map(attachments::Offered::from)
                .collect(),
        };
        if !state.enqueue(message.channel_id, job) {
            state.outbox.push(
                message.channel_id,
                Item::Notice(
                    "I'm busy with earlier messages in this channel; please send this again in a moment.".into(),
                    Some(message.id),
                ),
            );
        }
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let Some(state) = self.state.get() else {
            return;
        };
        match interaction {
            Interaction::Component(_) | Interaction::Modal(_) => {
                let asked = match &interaction {
                    Interaction::Component(click) => approvals::Asked::Click(click),
                    Interaction::Modal(modal) => approvals::Asked::Modal(modal),
                    _ => return,
                };
                let policy = ApproverPolicy {
                    approver_roles: state.settings.approver_roles.clone(),
                    require_different_approver: state.settings.require_different_approver,
                    destructive_needs_other_approver: state
                        .settings
                        .destructive_needs_other_approver,
                    gate: state
                        .settings
                        .destructive_needs_other_approver
                        .then(|| state.agent.gate.clone()),
                };
                let resume =
                    approvals::handle_click(&ctx, asked, state.store.as_ref(), &state.hub, &policy)
                        .await;
                if let Some(unwaited) = resume {
                    state.continue_decided(unwaited);
                }
            }
            Interaction::Command(command) => {
                let tools = state.agent.gate.tools();
                let context = commands::CommandContext {
                    store: state.store.as_ref(),
                    defaults: &state.agent.defaults,
                    admin_roles: &state.settings.admin_roles,
                    approver_roles: &state.settings.approver_roles,
                    model: &state.model_name,
                    protocol: state.agent.protocol.as_str(),
                    profiles: &state.agent.profiles,
                    tools: &tools,
                    servers: &crate::app::mcp_status_lines(state.mcp.as_ref()),
                    context_window: state.metrics.context_window().map(Into::into),
                    usage: &state.agent.usage,
                };
                commands::handle(&ctx, &command, &context).await;
            }
            _ => {}
        }
    }
}
