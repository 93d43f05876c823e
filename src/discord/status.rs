//! What the bot tells its operator as it connects, so a working bot can be told from a
//! broken one at the default log level: one line (target [`STATUS`]) naming the application,
//! the servers and the served channels it sees, whether the slash commands were registered
//! and whether the model server answered; and a warning for each thing that is wrong, saying
//! which setting to fix or what to do in Discord.
//!
//! The facts come from serenity's cache once every server READY listed has arrived
//! ([`sighting`]); turning them into text is pure ([`report`]), so it is tested without a
//! gateway. Also here: the token check at start ([`application`]), the classification of a
//! refused command registration ([`Registration`]), and the watcher that tells
//! [`Health`] whether the gateway is connected ([`watch_gateway`]).

use std::sync::Arc;
use std::time::Duration;

use serenity::all::{ChannelId, Command, ConnectionStage, Context, GuildId, ShardManager, UserId};
use serenity::http::{Http, HttpError};

use crate::config::DiscordSettings;
use crate::health::Health;
use crate::metrics::ModelStatus;
use crate::telemetry::STATUS;

/// The permissions the invite link asks for: View Channels, Send Messages, Send Messages in
/// Threads, Attach Files, Read Message History.
pub const INVITE_PERMISSIONS: u64 = 274_878_008_320;

/// How long the token check at start may take before the bot goes on without its answer.
const APPLICATION_WAIT: Duration = Duration::from_secs(10);
/// How long the report waits for the servers READY listed to arrive.
const GUILDS_WAIT: Duration = Duration::from_secs(10);
/// How long the report waits for the model server's check.
pub(super) const MODEL_WAIT: Duration = Duration::from_secs(8);
/// Servers and channels named in the line; beyond that, a count.
const NAMED: usize = 5;
/// How often the gateway's state is looked at for `/healthz`.
const GATEWAY_POLL: Duration = Duration::from_secs(1);

/// The invite link for the application `id`, with the scopes and permissions the bot needs.
pub fn invite_link(id: u64) -> String {
    format!(
        "https://discord.com/oauth2/authorize?client_id={id}&scope=bot%20applications.commands&permissions={INVITE_PERMISSIONS}"
    )
}

/// The application the token belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Application {
    pub id: u64,
    pub name: String,
}

/// Why Discord refused the bot's own settings, said so the operator knows what to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefusal {
    /// The REST API answered 401.
    Rest,
    /// The gateway closed with 4004.
    Gateway,
}

impl std::fmt::Display for TokenRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Rest => "the API answered 401 Unauthorized",
            Self::Gateway => "the gateway closed with 4004 Authentication failed",
        })
    }
}

/// Asks Discord which application the token belongs to (`GET /oauth2/applications/@me`).
/// `Err` when the token was refused (it cannot work: the caller stops); `Ok(None)` when
/// Discord did not answer in time or failed otherwise (the gateway connection will try, and
/// retry, anyway).
pub(super) async fn application(http: &Http) -> Result<Option<Application>, TokenRefusal> {
    match tokio::time::timeout(APPLICATION_WAIT, http.get_current_application_info()).await {
        Ok(Ok(info)) => Ok(Some(Application {
            id: info.id.get(),
            name: info.name,
        })),
        Ok(Err(serenity::Error::Http(HttpError::UnsuccessfulRequest(response))))
            if response.status_code.as_u16() == 401 =>
        {
            Err(TokenRefusal::Rest)
        }
        Ok(Err(error)) => {
            tracing::warn!(%error, "could not ask Discord which application the token belongs to; connecting anyway");
            Ok(None)
        }
        Err(_) => {
            tracing::warn!(
                wait = ?APPLICATION_WAIT,
                "Discord did not say which application the token belongs to in time; connecting anyway"
            );
            Ok(None)
        }
    }
}

/// How registering the slash commands went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Registration {
    /// In `discord.guild_id`.
    InGuild(u64),
    /// Globally (no `discord.guild_id`).
    Global,
    /// Discord refused them in `discord.guild_id` (403 Missing Access, 404 Unknown Guild).
    GuildRefused {
        guild: u64,
        status: u16,
        code: isize,
        message: String,
    },
    /// Anything else.
    Failed(String),
}

/// Registers the slash commands in `discord.guild_id` (at once) or globally.
pub(super) async fn register(
    ctx: &Context,
    guild: Option<u64>,
    profiles: &crate::core::profile::Profiles,
) -> Registration {
    let definitions = super::commands::register(profiles);
    let result = match guild {
        Some(guild) => GuildId::new(guild)
            .set_commands(&ctx.http, definitions)
            .await
            .map(|_| ()),
        None => Command::set_global_commands(&ctx.http, definitions)
            .await
            .map(|_| ()),
    };
    match (result, guild) {
        (Ok(()), Some(guild)) => Registration::InGuild(guild),
        (Ok(()), None) => Registration::Global,
        (Err(serenity::Error::Http(HttpError::UnsuccessfulRequest(response))), Some(guild))
            if matches!(response.status_code.as_u16(), 403 | 404) =>
        {
            Registration::GuildRefused {
                guild,
                status: response.status_code.as_u16(),
                code: response.error.code,
                message: response.error.message.clone(),
            }
        }
        (Err(error), _) => Registration::Failed(error.to_string()),
    }
}

/// A channel of `discord.channels`, as the bot sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ChannelSight {
    /// In a server of the bot, which may view it.
    Visible { name: String, guild: String },
    /// In a server of the bot, which may not view it.
    Hidden { name: String, guild: String },
    /// In no server the bot is in (or no such channel).
    Unknown,
}

/// What the bot sees once connected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sighting {
    pub application: Application,
    /// The servers it is in: id and name, by name.
    pub guilds: Vec<(u64, String)>,
    /// Servers READY listed that never arrived (a Discord outage).
    pub unavailable: usize,
    /// Each configured channel, in the order of `discord.channels`.
    pub channels: Vec<(u64, ChannelSight)>,
}

/// The start-up line and the warnings that go with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Report {
    pub line: String,
    pub warnings: Vec<String>,
}

/// Logs the report: the line at `info`, each warning at `warn`, both on [`STATUS`].
pub(super) fn log(report: &Report) {
    tracing::info!(target: STATUS, "{}", report.line);
    for warning in &report.warnings {
        tracing::warn!(target: STATUS, "{warning}");
    }
}

/// Waits (at most [`GUILDS_WAIT`]) until every server READY listed has arrived in the cache.
pub(super) async fn guilds_arrived(ctx: &Context) {
    let waited = tokio::time::timeout(GUILDS_WAIT, async {
        while ctx.cache.unavailable_guilds().len() > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    if waited.is_err() {
        tracing::debug!("some servers were still unavailable when the start-up report was made");
    }
}

/// What the cache holds about the bot's servers and the configured channels.
pub(super) fn sighting(
    ctx: &Context,
    bot: UserId,
    application: Application,
    configured: &[u64],
) -> Sighting {
    let cache = &ctx.cache;
    let mut guilds: Vec<(u64, String)> = Vec::new();
    let mut channels: Vec<(u64, ChannelSight)> = configured
        .iter()
        .map(|&id| (id, ChannelSight::Unknown))
        .collect();
    for id in cache.guilds() {
        let Some(guild) = cache.guild(id) else {
            continue;
        };
        guilds.push((id.get(), guild.name.clone()));
        let member = guild.members.get(&bot);
        for (channel_id, sight) in &mut channels {
            let Some(channel) = guild.channels.get(&ChannelId::new(*channel_id)) else {
                continue;
            };
            // Without the bot's member (never the case on Discord), assume it may view.
            let visible =
                member.is_none_or(|m| guild.user_permissions_in(channel, m).view_channel());
            let (name, guild) = (channel.name.clone(), guild.name.clone());
            *sight = if visible {
                ChannelSight::Visible { name, guild }
            } else {
                ChannelSight::Hidden { name, guild }
            };
        }
    }
    guilds.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    Sighting {
        application,
        guilds,
        unavailable: cache.unavailable_guilds().len(),
        channels,
    }
}

/// The start-up line and its warnings.
pub(super) fn report(
    seen: &Sighting,
    registration: &Registration,
    model: &ModelStatus,
    settings: &DiscordSettings,
) -> Report {
    let link = invite_link(seen.application.id);
    let mut warnings = Vec::new();
    let mut parts = vec![format!(
        "connected to Discord as application {:?} (id {})",
        seen.application.name, seen.application.id
    )];
    parts.push(guilds_part(seen));
    if seen.guilds.is_empty() && seen.unavailable == 0 {
        warnings.push(format!(
            "the bot is in no Discord server, so nobody can talk to it: invite it with {link}"
        ));
    }
    let (channels, hidden) = channels_part(seen);
    parts.push(channels);
    if let Some(hidden) = hidden {
        warnings.push(format!(
            "{hidden}; messages there are never answered. Invite the bot to the server that has them ({link}) and let its role View Channels there, or fix discord.channels (Developer Mode on, right-click the channel > Copy Channel ID)"
        ));
    }
    let (commands, refused) = registration_part(seen, registration, &link);
    parts.push(commands);
    warnings.extend(refused);
    if let Some(guild) = settings.guild_id
        && !seen.guilds.iter().any(|(id, _)| *id == guild)
        && !matches!(registration, Registration::GuildRefused { .. })
        && seen.unavailable == 0
    {
        warnings.push(format!(
            "discord.guild_id = {guild} is not a server the bot is in: invite the bot there with {link}, or fix discord.guild_id (Developer Mode on, right-click the server > Copy Server ID)"
        ));
    }
    parts.push(match model {
        ModelStatus::Unchecked => "model server not checked yet".to_owned(),
        ModelStatus::Answering(what) => format!("model server {what}"),
        ModelStatus::Failing(why) => format!("model server FAILING: {why}"),
    });
    Report {
        line: parts.join("; "),
        warnings,
    }
}

/// `in 2 servers: a (id 1), b (id 2)`.
fn guilds_part(seen: &Sighting) -> String {
    let count = seen.guilds.len();
    let mut part = match count {
        0 => "in no server".to_owned(),
        1 => "in 1 server: ".to_owned(),
        n => format!("in {n} servers: "),
    };
    part.push_str(&named(
        seen.guilds
            .iter()
            .map(|(id, name)| format!("{name} (id {id})")),
        count,
    ));
    if seen.unavailable > 0 {
        part.push_str(&format!(
            " ({} more unavailable at Discord for now)",
            seen.unavailable
        ));
    }
    part
}

/// `serving 1 of 2 channels in discord.channels: #agent (id 3) in team`, and the warning's
/// start when some cannot be seen.
fn channels_part(seen: &Sighting) -> (String, Option<String>) {
    if seen.channels.is_empty() {
        return (
            "discord.channels is empty: answering only where mentioned".to_owned(),
            None,
        );
    }
    let visible: Vec<String> = seen
        .channels
        .iter()
        .filter_map(|(id, sight)| match sight {
            ChannelSight::Visible { name, guild } => Some(format!("#{name} (id {id}) in {guild}")),
            ChannelSight::Hidden { .. } | ChannelSight::Unknown => None,
        })
        .collect();
    let unseen: Vec<String> = seen
        .channels
        .iter()
        .filter_map(|(id, sight)| match sight {
            ChannelSight::Visible { .. } => None,
            ChannelSight::Hidden { name, guild } => Some(format!(
                "#{name} (id {id}) in {guild}, where the bot's role lacks View Channels"
            )),
            ChannelSight::Unknown => Some(format!("{id}, in no server the bot is in")),
        })
        .collect();
    let total = seen.channels.len();
    let mut part = format!(
        "serving {} of {total} channels in discord.channels",
        visible.len()
    );
    if !visible.is_empty() {
        part.push_str(": ");
        part.push_str(&named(visible.iter().cloned(), visible.len()));
    }
    let hidden = (!unseen.is_empty()).then(|| {
        format!(
            "the bot cannot see {} of the {total} channels in discord.channels: {}",
            unseen.len(),
            unseen.join("; ")
        )
    });
    (part, hidden)
}

/// `slash commands registered in ...`, and the warning when Discord refused them.
fn registration_part(
    seen: &Sighting,
    registration: &Registration,
    link: &str,
) -> (String, Option<String>) {
    match registration {
        Registration::InGuild(guild) => {
            let name = seen
                .guilds
                .iter()
                .find(|(id, _)| id == guild)
                .map_or_else(String::new, |(_, name)| format!("{name} "));
            (
                format!("slash commands registered in {name}(discord.guild_id = {guild})"),
                None,
            )
        }
        Registration::Global => (
            "slash commands registered globally (they may take up to an hour to appear; set discord.guild_id to see them at once)".to_owned(),
            None,
        ),
        Registration::GuildRefused {
            guild,
            status,
            code,
            message,
        } => {
            let member = seen.guilds.iter().any(|(id, _)| id == guild);
            let why = if member {
                "the bot is in that server, but was invited without the applications.commands scope"
            } else {
                "the bot is not in that server"
            };
            (
                "slash commands NOT registered".to_owned(),
                Some(format!(
                    "slash commands could not be registered in discord.guild_id = {guild} (Discord answered {status} {message}, code {code}): {why}. Invite the bot there with {link}, or fix discord.guild_id (Developer Mode on, right-click the server > Copy Server ID). Messages in served channels are still answered; /status, /mode and the other slash commands are missing until then"
                )),
            )
        }
        Registration::Failed(error) => (
            "slash commands NOT registered".to_owned(),
            Some(format!("slash commands could not be registered: {error}")),
        ),
    }
}

/// The first [`NAMED`] items joined, and `and N more` for the rest of `count`.
fn named(items: impl Iterator<Item = String>, count: usize) -> String {
    let mut text = items.take(NAMED).collect::<Vec<_>>().join(", ");
    if count > NAMED {
        text.push_str(&format!(" and {} more", count - NAMED));
    }
    text
}

/// Tells `health`, every [`GATEWAY_POLL`], whether all `shards` of this process are
/// connected, as serenity's shard manager sees them; runs until aborted.
pub(super) async fn watch_gateway(manager: Arc<ShardManager>, health: Arc<Health>, shards: usize) {
    let mut tick = tokio::time::interval(GATEWAY_POLL);
    loop {
        tick.tick().await;
        let connected = {
            let runners = manager.runners.lock().await;
            runners.len() >= shards
                && runners
                    .values()
                    .all(|runner| runner.stage == ConnectionStage::Connected)
        };
        health.gateway_connected(connected);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: u64 = 1_100_000_000_000_000_001;

    fn seen(guilds: &[(u64, &str)], channels: Vec<(u64, ChannelSight)>) -> Sighting {
        Sighting {
            application: Application {
                id: APP,
                name: "helper".to_owned(),
            },
            guilds: guilds
                .iter()
                .map(|(id, n)| (*id, (*n).to_owned()))
                .collect(),
            unavailable: 0,
            channels,
        }
    }

    fn settings(guild: Option<u64>) -> DiscordSettings {
        DiscordSettings {
            guild_id: guild,
            ..DiscordSettings::default()
        }
    }

    fn visible(name: &str, guild: &str) -> ChannelSight {
        ChannelSight::Visible {
            name: name.to_owned(),
            guild: guild.to_owned(),
        }
    }

    #[test]
    fn a_working_bot_gets_one_line_and_no_warning() {
        let report = super::report(
            &seen(&[(10, "team")], vec![(11, visible("agent", "team"))]),
            &Registration::InGuild(10),
            &ModelStatus::Answering(
                "answered at http://m/v1 (1 models, llm.model \"x\" among them)".to_owned(),
            ),
            &settings(Some(10)),
        );
        assert_eq!(
            report.line,
            "connected to Discord as application \"helper\" (id 1100000000000000001); in 1 server: team (id 10); serving 1 of 1 channels in discord.channels: #agent (id 11) in team; slash commands registered in team (discord.guild_id = 10); model server answered at http://m/v1 (1 models, llm.model \"x\" among them)"
        );
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn a_bot_in_no_server_is_told_how_to_invite_it() {
        let report = super::report(
            &seen(&[], vec![(11, ChannelSight::Unknown)]),
            &Registration::Global,
            &ModelStatus::Failing("did not answer".to_owned()),
            &settings(None),
        );
        assert!(report.line.contains("in no server"), "{}", report.line);
        assert!(
            report.line.contains("serving 0 of 1 channels"),
            "{}",
            report.line
        );
        assert!(report.line.contains("model server FAILING: did not answer"));
        assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
        assert!(report.warnings[0].starts_with(
            "the bot is in no Discord server, so nobody can talk to it: invite it with https://discord.com/oauth2/authorize?client_id=1100000000000000001&scope=bot%20applications.commands&permissions=274878008320"
        ));
        assert!(report.warnings[1].starts_with(
            "the bot cannot see 1 of the 1 channels in discord.channels: 11, in no server the bot is in;"
        ));
        assert!(report.warnings[1].contains("fix discord.channels"));
    }

    #[test]
    fn unseen_channels_are_each_named_with_the_reason() {
        let report = super::report(
            &seen(
                &[(10, "team")],
                vec![
                    (11, visible("agent", "team")),
                    (
                        12,
                        ChannelSight::Hidden {
                            name: "secret".to_owned(),
                            guild: "team".to_owned(),
                        },
                    ),
                    (13, ChannelSight::Unknown),
                ],
            ),
            &Registration::InGuild(10),
            &ModelStatus::Unchecked,
            &settings(Some(10)),
        );
        assert!(
            report
                .line
                .contains("serving 1 of 3 channels in discord.channels: #agent (id 11) in team")
        );
        assert_eq!(
            report.warnings,
            [format!(
                "the bot cannot see 2 of the 3 channels in discord.channels: #secret (id 12) in team, where the bot's role lacks View Channels; 13, in no server the bot is in; messages there are never answered. Invite the bot to the server that has them ({}) and let its role View Channels there, or fix discord.channels (Developer Mode on, right-click the channel > Copy Channel ID)",
                invite_link(APP)
            )]
        );
    }

    #[test]
    fn a_refused_guild_names_discord_guild_id_once() {
        let refused = Registration::GuildRefused {
            guild: 99,
            status: 403,
            code: 50001,
            message: "Missing Access".to_owned(),
        };
        let report = super::report(
            &seen(&[(10, "team")], vec![]),
            &refused,
            &ModelStatus::Unchecked,
            &settings(Some(99)),
        );
        assert!(report.line.contains("slash commands NOT registered"));
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        assert!(report.warnings[0].starts_with(
            "slash commands could not be registered in discord.guild_id = 99 (Discord answered 403 Missing Access, code 50001): the bot is not in that server. Invite the bot there with https://discord.com/oauth2/authorize?client_id="
        ));
        // Without a refusal (registered globally, say) the missing server still gets named.
        let report = super::report(
            &seen(&[(10, "team")], vec![]),
            &Registration::Global,
            &ModelStatus::Unchecked,
            &settings(Some(99)),
        );
        assert_eq!(report.warnings.len(), 1);
        assert!(
            report.warnings[0].starts_with("discord.guild_id = 99 is not a server the bot is in")
        );
    }

    #[test]
    fn many_servers_are_counted_beyond_a_few() {
        let guilds: Vec<(u64, String)> = (1..=8).map(|i| (i, format!("g{i}"))).collect();
        let guilds: Vec<(u64, &str)> = guilds.iter().map(|(i, n)| (*i, n.as_str())).collect();
        let report = super::report(
            &seen(&guilds, vec![]),
            &Registration::Global,
            &ModelStatus::Unchecked,
            &settings(None),
        );
        assert!(
            report.line.contains(
                "in 8 servers: g1 (id 1), g2 (id 2), g3 (id 3), g4 (id 4), g5 (id 5) and 3 more;"
            ),
            "{}",
            report.line
        );
        assert!(
            report
                .line
                .contains("discord.channels is empty: answering only where mentioned")
        );
    }
}
