//! Channel commands, one type and one `apply` for every front end: `/mode`, `/profile`,
//! `/status`, `/reset`, `/pending`, `/audit`, `/rules`. A front end reads its own syntax
//! into a command name and one optional argument ([`ChannelCommand::parse`]), says who is
//! asking ([`Caller`]), and renders the [`CommandOutcome`]; what a command does, and who may
//! do it, is decided here once, so Discord and the console cannot drift apart.

use std::time::SystemTime;

use crate::core::ports::{ApprovalRecord, AuditRecord, ChannelSettings, Store, StoreError};
use crate::core::profile::Profiles;
use crate::core::risk::ChannelMode;
use crate::core::rules::ChannelRule;
use crate::core::tools::ToolSet;
use crate::core::usage::{ChannelUsage, UsageLedger};

/// The most audit records one `/audit` shows.
pub const AUDIT_MAX: usize = 25;

/// Characters of an audit record's note (a cancel's reason, the rule that let a call run)
/// that `/audit` shows.
const AUDIT_NOTE_CHARS: usize = 200;

/// An audit record's note as `/audit` shows it in every front end: one line (a person's
/// reason may span several), at most [`AUDIT_NOTE_CHARS`] characters. `None` without one.
pub fn audit_note(record: &AuditRecord) -> Option<String> {
    let note = record.note.as_deref()?.trim();
    if note.is_empty() {
        return None;
    }
    let line = note.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= AUDIT_NOTE_CHARS {
        return Some(line);
    }
    let cut: String = line.chars().take(AUDIT_NOTE_CHARS - 1).collect();
    Some(format!("{cut}…"))
}

/// A command as a front end read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelCommand {
    /// Show the mode, or set it.
    Mode(Option<ChannelMode>),
    /// Show the profile, or set it.
    Profile(Option<String>),
    Status,
    Reset,
    Pending,
    /// The newest audit records (1 to [`AUDIT_MAX`]).
    Audit(usize),
    /// The channel's active rules.
    Rules,
    /// End one rule now.
    Revoke(String),
}

impl ChannelCommand {
    /// Reads a command from its name and one optional argument, as both front ends give
    /// them (`/audit 5`, `/rules revoke:r1`, `/rules revoke r1`); a profile must be one of
    /// `profiles`. `Err` says what to write.
    pub fn parse(name: &str, argument: Option<&str>, profiles: &Profiles) -> Result<Self, String> {
        let argument = argument.map(str::trim).filter(|a| !a.is_empty());
        Ok(match (name.to_ascii_lowercase().as_str(), argument) {
            ("mode", None) => Self::Mode(None),
            ("mode", Some(value)) => {
                Self::Mode(Some(value.parse().map_err(|_| {
                    format!("Unknown mode {value:?}: use strict or smart.")
                })?))
            }
            ("profile", None) => Self::Profile(None),
            ("profile", Some(value)) if profiles.get(value).is_some() => {
                Self::Profile(Some(value.to_owned()))
            }
            ("profile", Some(value)) => {
                return Err(format!(
                    "Unknown profile {value:?}: use {}.",
                    profiles.choices()
                ));
            }
            ("status", _) => Self::Status,
            ("reset", _) => Self::Reset,
            ("pending", _) => Self::Pending,
            ("audit", None) => Self::Audit(10),
            ("audit", Some(n)) => Self::Audit(
                n.parse::<usize>()
                    .map_err(|_| format!("/audit takes a number from 1 to {AUDIT_MAX}."))?
                    .clamp(1, AUDIT_MAX),
            ),
            ("rules", None) => Self::Rules,
            ("rules", Some(id)) => match id.trim_start_matches("revoke").trim() {
                "" => {
                    return Err(
                        "Name the rule to revoke: /rules revoke ID (/rules lists them).".to_owned(),
                    );
                }
                id => Self::Revoke(id.to_owned()),
            },
            (other, _) => return Err(format!("Unknown command /{other}.")),
        })
    }
}

/// Who asks, and what they may do here.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    pub user: &'a str,
    /// May change the channel's mode and profile (Manage Channels, an admin role, or the
    /// console's own user).
    pub may_configure: bool,
    /// Has an approver role (may revoke any rule).
    pub may_approve: bool,
}

/// What the commands read and change besides the store.
pub struct CommandEnv<'a> {
    pub store: &'a dyn Store,
    /// The settings of a channel nobody configured.
    pub defaults: &'a ChannelSettings,
    pub model: &'a str,
    pub protocol: &'a str,
    /// The profiles a channel can choose from.
    pub profiles: &'a Profiles,
    /// The tools as they stand: `/status` lists those the channel's profile offers.
    pub tools: &'a ToolSet,
    /// The MCP servers as they stand, a line each (`kb: ready, 3 tools (stdio)`).
    pub servers: &'a [String],
    /// The model's context window; `None` while the server has not been asked yet.
    pub context_window: Option<ModelWindow>,
    /// What each channel's requests cost since the start (`Agent::usage`).
    pub usage: &'a UsageLedger,
}

/// The model's context window, as `/status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelWindow {
    pub tokens: u32,
    /// Where that came from: `llm.context_window_tokens`, what the server stated, or the
    /// default.
    pub source: String,
}

/// What the channel's status is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub settings: ChannelSettings,
    pub model: String,
    pub protocol: String,
    pub tools: Vec<String>,
    pub pending: usize,
    pub rules: usize,
    /// The MCP servers, a line each; empty when none is configured.
    pub servers: Vec<String>,
    pub context_window: Option<ModelWindow>,
    /// The channel's tokens since the bot started.
    pub usage: ChannelUsage,
}

impl Status {
    /// `context window: 8192 tokens (llm.context_window_tokens)`, in every front end's words.
    pub fn window_line(&self) -> String {
        match &self.context_window {
            Some(window) => format!(
                "context window: {} tokens ({})",
                window.tokens, window.source
            ),
            None => "context window: not known yet (the model server is asked at start)".to_owned(),
        }
    }

    /// What the channel's requests cost since the bot started, as the model server counted
    /// it, and how full the window was at the last request.
    pub fn tokens_line(&self) -> String {
        let usage = &self.usage;
        let Some(last) = usage.last_prompt_tokens else {
            return "tokens since the bot started: none reported (the model server has not said what this channel's requests cost)".to_owned();
        };
        let share = self
            .context_window
            .as_ref()
            .filter(|window| window.tokens > 0)
            .map(|window| {
                format!(
                    ", {}% of the window",
                    last.saturating_mul(100) / u64::from(window.tokens)
                )
            })
            .unwrap_or_default();
        format!(
            "tokens since the bot started: {} prompt, {} completion in {} request(s); the last request's prompt: {last} tokens{share}",
            usage.prompt_tokens, usage.completion_tokens, usage.requests
        )
    }
}

/// What came of a command, for a front end to render.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandOutcome {
    /// The mode, and who just set it.
    Mode {
        mode: ChannelMode,
        set_by: Option<String>,
    },
    Profile {
        profile: String,
        set_by: Option<String>,
        /// The mode the switch set (the new profile's `mode`), when it set one.
        mode: Option<ChannelMode>,
        /// Every profile there is, (name, summary), when the channel's was asked for.
        available: Vec<(String, String)>,
    },
    Status(Status),
    Reset {
        by: String,
    },
    Pending(Vec<ApprovalRecord>),
    Audit(Vec<AuditRecord>),
    Rules(Vec<ChannelRule>),
    Revoked {
        rule: ChannelRule,
        by: String,
    },
    /// Nothing was done: why, and what to do instead.
    Refused(String),
}

impl CommandOutcome {
    /// Whether the whole channel should see it (a change), rather than only the caller.
    pub fn is_public(&self) -> bool {
        matches!(
            self,
            Self::Mode {
                set_by: Some(_),
                ..
            } | Self::Profile {
                set_by: Some(_),
                ..
            } | Self::Reset { .. }
                | Self::Revoked { .. }
        )
    }
}

/// Does `command` for `channel` as `caller`.
pub async fn apply(
    env: &CommandEnv<'_>,
    channel: &str,
    caller: Caller<'_>,
    command: ChannelCommand,
) -> CommandOutcome {
    let refused =
        |what: &str, e: &StoreError| store_failed(&format!("{what} could not be read or saved"), e);
    let current = match env.store.channel_settings(channel).await {
        Ok(settings) => {
            settings.unwrap_or_else(|| env.profiles.defaults_for(channel, env.defaults))
        }
        Err(e) => return refused("The settings", &e),
    };
    let configure = |what: &str| {
        CommandOutcome::Refused(format!(
            "Changing the {what} needs the Manage Channels permission or an admin role."
        ))
    };
    match command {
        ChannelCommand::Mode(None) => CommandOutcome::Mode {
            mode: current.mode,
            set_by: None,
        },
        ChannelCommand::Mode(Some(_)) | ChannelCommand::Profile(Some(_))
            if !caller.may_configure =>
        {
            configure(if matches!(command, ChannelCommand::Mode(_)) {
                "mode"
            } else {
                "profile"
            })
        }
        ChannelCommand::Mode(Some(mode)) => {
            let changed = ChannelSettings { mode, ..current };
            match env
                .store
                .set_channel_settings(channel, &changed, caller.user)
                .await
            {
                Ok(()) => CommandOutcome::Mode {
                    mode,
                    set_by: Some(caller.user.to_owned()),
                },
                Err(e) => refused("The mode", &e),
            }
        }
        ChannelCommand::Profile(None) => CommandOutcome::Profile {
            profile: current.profile,
            set_by: None,
            mode: None,
            available: env
                .profiles
                .iter()
                .map(|p| (p.name().to_owned(), p.summary().to_owned()))
                .collect(),
        },
        ChannelCommand::Profile(Some(profile)) => {
            let mode = env.profiles.get(&profile).and_then(|p| p.mode());
            let changed = ChannelSettings {
                profile: profile.clone(),
                mode: mode.unwrap_or(current.mode),
            };
            match env
                .store
                .set_channel_settings(channel, &changed, caller.user)
                .await
            {
                Ok(()) => CommandOutcome::Profile {
                    profile,
                    set_by: Some(caller.user.to_owned()),
                    mode,
                    available: Vec::new(),
                },
                Err(e) => refused("The profile", &e),
            }
        }
        ChannelCommand::Status => status(env, channel, current).await,
        ChannelCommand::Reset => match env.store.clear(channel).await {
            Ok(()) => CommandOutcome::Reset {
                by: caller.user.to_owned(),
            },
            Err(e) => refused("The conversation", &e),
        },
        ChannelCommand::Pending => match env.store.pending_approvals(Some(channel)).await {
            Ok(pending) => CommandOutcome::Pending(pending),
            Err(e) => refused("The approvals", &e),
        },
        ChannelCommand::Audit(n) => match env.store.recent_audit(channel, n).await {
            Ok(records) => CommandOutcome::Audit(records),
            Err(e) => refused("The audit log", &e),
        },
        ChannelCommand::Rules => match env.store.channel_rules(channel, SystemTime::now()).await {
            Ok(rules) => CommandOutcome::Rules(rules),
            Err(e) => refused("The rules", &e),
        },
        ChannelCommand::Revoke(id) => revoke(env, channel, caller, &id).await,
    }
}

async fn status(env: &CommandEnv<'_>, channel: &str, settings: ChannelSettings) -> CommandOutcome {
    let (pending, rules) = tokio::join!(
        env.store.pending_approvals(Some(channel)),
        env.store.channel_rules(channel, SystemTime::now())
    );
    let profile = env.profiles.resolve(&settings.profile);
    CommandOutcome::Status(Status {
        model: profile.model().unwrap_or(env.model).to_owned(),
        protocol: env.protocol.to_owned(),
        tools: {
            env.tools
                .names()
                .filter(|name| profile.offers_tool(name))
                .map(str::to_owned)
                .collect()
        },
        pending: pending.map_or(0, |p| p.len()),
        rules: rules.map_or(0, |r| r.len()),
        settings,
        servers: env.servers.to_vec(),
        context_window: env.context_window.clone(),
        usage: env.usage.of(channel),
    })
}

/// Ends an active rule: its creator, an approver, or whoever may configure the channel.
async fn revoke(
    env: &CommandEnv<'_>,
    channel: &str,
    caller: Caller<'_>,
    id: &str,
) -> CommandOutcome {
    let active = match env.store.channel_rules(channel, SystemTime::now()).await {
        Ok(active) => active,
        Err(e) => return store_failed("The rules could not be read", &e),
    };
    let Some(rule) = active.into_iter().find(|r| r.id == id) else {
        return CommandOutcome::Refused(format!(
            "There is no active rule `{id}` here; /rules lists them."
        ));
    };
    if !(caller.may_configure || caller.may_approve || rule.created_by == caller.user) {
        return CommandOutcome::Refused(
            "Revoking a rule needs an approver role, an admin role or Manage Channels (or being its creator).".to_owned(),
        );
    }
    match env.store.revoke_rule(channel, id, caller.user).await {
        Ok(true) => CommandOutcome::Revoked {
            rule,
            by: caller.user.to_owned(),
        },
        Ok(false) => CommandOutcome::Refused(format!("Rule `{id}` had already ended.")),
        Err(e) => store_failed("The rule could not be revoked", &e),
    }
}

/// A command the store could not serve: what failed, why, and what to do when the kind of
/// failure says it.
fn store_failed(what: &str, error: &StoreError) -> CommandOutcome {
    CommandOutcome::Refused(match error.advice() {
        Some(advice) => format!("{what}: {error}. {advice}"),
        None => format!("{what}: {error}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_audit_note_is_one_line_of_at_most_200_characters() {
        let with = |note: &str| AuditRecord {
            at: 0,
            run_id: "r".into(),
            channel: "c".into(),
            user: "u".into(),
            tool: "t".into(),
            arguments_summary: String::new(),
            decision: crate::core::risk::Decision::Confirm,
            source: crate::core::risk::DecisionSource::Default,
            reason: String::new(),
            outcome: crate::core::event::CallOutcome::Cancelled,
            approval_id: None,
            duration_ms: 0,
            output_bytes: 0,
            note: Some(note.to_owned()),
            result: None,
        };
        assert_eq!(
            audit_note(&with("reason: not\n\n  today ")).as_deref(),
            Some("reason: not today")
        );
        assert_eq!(audit_note(&with("   ")), None);
        let long = audit_note(&with(&"é".repeat(500))).expect("a note");
        assert_eq!(long.chars().count(), AUDIT_NOTE_CHARS);
        assert!(long.ends_with('…'));
    }
    use crate::store::MemoryStore;

    use crate::core::profile::{Offers, Profile};
    use crate::core::tools::testing::Stub;

    fn profiles() -> Profiles {
        Profiles::new(
            vec![
                Profile::new("sql", "data", "", Offers::only(["query"])),
                Profile::new("ops", "all tools", "", Offers::All),
            ],
            "ops",
        )
        .expect("profiles")
    }

    fn tools() -> ToolSet {
        let mut tools = ToolSet::new();
        tools.register(std::sync::Arc::new(Stub::named("query")));
        tools.register(std::sync::Arc::new(Stub::named("shell")));
        tools
    }

    fn env<'a>(
        store: &'a MemoryStore,
        defaults: &'a ChannelSettings,
        profiles: &'a Profiles,
        tools: &'a ToolSet,
        usage: &'a UsageLedger,
    ) -> CommandEnv<'a> {
        CommandEnv {
            store,
            defaults,
            model: "m",
            protocol: "native",
            profiles,
            tools,
            servers: &[],
            context_window: None,
            usage,
        }
    }

    fn caller(configure: bool) -> Caller<'static> {
        Caller {
            user: "u1",
            may_configure: configure,
            may_approve: false,
        }
    }

    #[test]
    fn both_front_ends_syntax_reads_the_same_commands() {
        let profiles = profiles();
        let parse =
            |name: &str, argument: Option<&str>| ChannelCommand::parse(name, argument, &profiles);
        assert_eq!(
            parse("MODE", Some("strict")),
            Ok(ChannelCommand::Mode(Some(ChannelMode::Strict)))
        );
        assert!(parse("mode", Some("loose")).is_err());
        assert_eq!(
            parse("audit", Some("99")),
            Ok(ChannelCommand::Audit(AUDIT_MAX))
        );
        assert_eq!(parse("audit", None), Ok(ChannelCommand::Audit(10)));
        assert_eq!(
            parse("rules", Some("revoke r1")),
            Ok(ChannelCommand::Revoke("r1".into()))
        );
        assert_eq!(
            parse("rules", Some("r1")),
            Ok(ChannelCommand::Revoke("r1".into()))
        );
        assert!(parse("rules", Some("revoke")).is_err());
        assert_eq!(
            parse("profile", Some("admin")),
            Err("Unknown profile \"admin\": use sql or ops.".to_owned())
        );
        assert_eq!(
            parse("profile", Some("sql")),
            Ok(ChannelCommand::Profile(Some("sql".into())))
        );
        assert!(parse("nope", None).is_err());
    }

    #[tokio::test]
    async fn changes_need_the_right_and_are_public_while_views_are_private() {
        let store = MemoryStore::new();
        let defaults = ChannelSettings {
            mode: ChannelMode::Smart,
            profile: "ops".into(),
        };
        let (profiles, tools, usage) = (profiles(), tools(), UsageLedger::default());
        let env = env(&store, &defaults, &profiles, &tools, &usage);
        let strict = ChannelCommand::Mode(Some(ChannelMode::Strict));
        let refused = apply(&env, "c", caller(false), strict.clone()).await;
        assert!(
            matches!(&refused, CommandOutcome::Refused(why) if why.contains("Manage Channels"))
        );
        assert!(!refused.is_public());
        let done = apply(&env, "c", caller(true), strict).await;
        assert!(done.is_public(), "{done:?}");
        let CommandOutcome::Status(status) =
            apply(&env, "c", caller(false), ChannelCommand::Status).await
        else {
            panic!("a status");
        };
        assert_eq!(status.settings.mode, ChannelMode::Strict);
        assert_eq!(status.tools, ["query", "shell"], "ops offers every tool");
        let sql = ChannelCommand::Profile(Some("sql".into()));
        assert!(apply(&env, "c", caller(true), sql).await.is_public());
        let CommandOutcome::Status(status) =
            apply(&env, "c", caller(false), ChannelCommand::Status).await
        else {
            panic!("a status");
        };
        assert_eq!(status.tools, ["query"], "sql offers only what it names");
        let other = apply(&env, "other", caller(false), ChannelCommand::Mode(None)).await;
        assert_eq!(
            other,
            CommandOutcome::Mode {
                mode: ChannelMode::Smart,
                set_by: None
            },
            "another channel keeps the defaults"
        );
        assert!(!other.is_public());
    }

    #[tokio::test]
    async fn status_shows_the_window_and_the_channels_own_tokens_since_the_start() {
        use crate::core::message::Usage;
        let store = MemoryStore::new();
        let defaults = ChannelSettings {
            mode: ChannelMode::Smart,
            profile: "ops".into(),
        };
        let (profiles, tools, usage) = (profiles(), tools(), UsageLedger::default());
        async fn status(env: &CommandEnv<'_>, channel: &str) -> Status {
            match apply(env, channel, caller(false), ChannelCommand::Status).await {
                CommandOutcome::Status(status) => status,
                other => panic!("a status, not {other:?}"),
            }
        }
        let unknown = env(&store, &defaults, &profiles, &tools, &usage);
        let fresh = status(&unknown, "c").await;
        assert_eq!(
            fresh.window_line(),
            "context window: not known yet (the model server is asked at start)"
        );
        assert!(
            fresh
                .tokens_line()
                .starts_with("tokens since the bot started: none reported"),
            "{}",
            fresh.tokens_line()
        );

        usage.record(
            "c",
            Usage {
                prompt_tokens: 1000,
                completion_tokens: 40,
            },
        );
        usage.record(
            "c",
            Usage {
                prompt_tokens: 2048,
                completion_tokens: 10,
            },
        );
        usage.record(
            "elsewhere",
            Usage {
                prompt_tokens: 5,
                completion_tokens: 5,
            },
        );
        let known = CommandEnv {
            context_window: Some(ModelWindow {
                tokens: 8192,
                source: "llama.cpp's /props (n_ctx)".into(),
            }),
            ..env(&store, &defaults, &profiles, &tools, &usage)
        };
        let used = status(&known, "c").await;
        assert_eq!(
            used.window_line(),
            "context window: 8192 tokens (llama.cpp's /props (n_ctx))"
        );
        assert_eq!(
            used.tokens_line(),
            "tokens since the bot started: 3048 prompt, 50 completion in 2 request(s); the last request's prompt: 2048 tokens, 25% of the window"
        );
        assert_eq!(status(&known, "elsewhere").await.usage.prompt_tokens, 5);
        // Without a window, the share is left out rather than guessed.
        assert!(
            status(&unknown, "c")
                .await
                .tokens_line()
                .ends_with(": 2048 tokens")
        );
    }

    #[test]
    fn a_store_failure_says_what_to_do_when_its_kind_tells() {
        use crate::core::ports::StoreErrorKind;
        let away = StoreError::new(StoreErrorKind::Unavailable, "no answer from the database");
        let CommandOutcome::Refused(why) = store_failed("The mode could not be saved", &away)
        else {
            panic!("a refusal");
        };
        assert!(why.starts_with("The mode could not be saved: "), "{why}");
        assert!(why.contains("no answer from the database"), "{why}");
        assert!(why.ends_with("Try again in a minute."), "{why}");
        let duplicate = StoreError::new(StoreErrorKind::Refused, "rule r1 exists already");
        let CommandOutcome::Refused(why) = store_failed("The rule could not be saved", &duplicate)
        else {
            panic!("a refusal");
        };
        assert!(why.ends_with("rule r1 exists already"), "{why}");
    }
}
