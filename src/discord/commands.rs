//! Slash commands: `/mode`, `/profile`, `/status`, `/reset`, `/pending`, `/audit`, `/rules`.
//! Each has a `register` part (the command's definition) and runs against the store.

use serenity::all::{
    CommandInteraction, CommandOptionType, Context, CreateCommand, CreateCommandOption,
    CreateInteractionResponse, CreateInteractionResponseFollowup, CreateInteractionResponseMessage,
    EditInteractionResponse, Permissions,
};

use super::approvals::message_ref;
use super::outbox::no_mentions;
use crate::core::commands::{
    self, Caller, ChannelCommand, CommandEnv, CommandOutcome, ModelWindow,
};
use crate::core::ports::{ChannelSettings, Store};
use crate::core::profile::Profiles;
use crate::core::tools::ToolSet;
use crate::core::usage::UsageLedger;

/// Discord's limits: characters of a command's or an option's description, choices of one
/// option.
const DESCRIPTION_CHARS: usize = 100;
const CHOICES: usize = 25;

/// `/profile`: the profiles to choose from, each with what it is for.
fn profile_command(profiles: &Profiles) -> CreateCommand {
    let described: Vec<String> = profiles
        .iter()
        .map(|p| format!("{} ({})", p.name(), p.summary()))
        .collect();
    let description = match described.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!(
            "Show or set this channel's profile: {} or {last}",
            rest.join(", ")
        ),
        Some((only, _)) => format!("Show or set this channel's profile: {only}"),
        None => String::new(),
    };
    let fits = |text: &str| !text.is_empty() && text.chars().count() <= DESCRIPTION_CHARS;
    let description = if fits(&description) {
        description
    } else {
        "Show or set this channel's profile".to_owned()
    };
    let choices = profiles.choices();
    let mut option = CreateCommandOption::new(
        CommandOptionType::String,
        "profile",
        if fits(&choices) {
            choices.as_str()
        } else {
            "the profile's name"
        },
    )
    .required(false);
    if profiles.iter().count() <= CHOICES {
        for name in profiles.names() {
            option = option.add_string_choice(name, name);
        }
    }
    CreateCommand::new("profile")
        .description(description)
        .add_option(option)
}

/// The definitions to register; `/profile` offers `profiles`.
pub fn register(profiles: &Profiles) -> Vec<CreateCommand> {
    vec![
        CreateCommand::new("mode")
            .description("Show or set this channel's mode: strict confirms every call")
            .add_option(
                CreateCommandOption::new(CommandOptionType::String, "mode", "strict or smart")
                    .required(false)
                    .add_string_choice("strict", "strict")
                    .add_string_choice("smart", "smart"),
            ),
        profile_command(profiles),
        CreateCommand::new("status").description("Mode, profile, model and pending approvals"),
        CreateCommand::new("reset").description("Forget this channel's conversation"),
        CreateCommand::new("pending").description("Links to the approvals waiting here"),
        CreateCommand::new("rules")
            .description("Rules that let calls like a confirmed one run without asking here")
            .add_option(
                CreateCommandOption::new(
                    CommandOptionType::String,
                    "revoke",
                    "the id of a rule to end now",
                )
                .required(false)
                .max_length(40),
            ),
        CreateCommand::new("audit")
            .description("Recent tool calls and their decisions (only you see it)")
            .add_option(
                CreateCommandOption::new(CommandOptionType::Integer, "n", "how many (1-25)")
                    .required(false)
                    .min_int_value(1)
                    .max_int_value(25),
            ),
    ]
}

/// What the commands need besides the store.
pub struct CommandContext<'a> {
    pub store: &'a dyn Store,
    pub defaults: &'a ChannelSettings,
    pub admin_roles: &'a [u64],
    /// Members with these roles may also revoke channel rules.
    pub approver_roles: &'a [u64],
    pub model: &'a str,
    pub protocol: &'a str,
    /// The profiles a channel can choose from.
    pub profiles: &'a Profiles,
    /// The tools as they stand (what a profile offers, how a pending call is shown).
    pub tools: &'a ToolSet,
    /// The MCP servers as they stand, a line each.
    pub servers: &'a [String],
    /// The model's context window, once the check at start resolved it.
    pub context_window: Option<ModelWindow>,
    /// What each channel's requests cost since the start.
    pub usage: &'a UsageLedger,
}

/// The answer to a command: text, and whether only the caller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub ephemeral: bool,
}

/// Whole lines, as many as fit in one Discord message, and a last line that says how many
/// were left out and what to do about it.
fn fit_lines(lines: &[String], left_out: impl Fn(usize) -> String) -> String {
    let limit = super::render::MESSAGE_LIMIT;
    let mut text = String::new();
    for (i, line) in lines.iter().enumerate() {
        let more = left_out(lines.len() - i);
        let needed = text.chars().count() + line.chars().count() + 1;
        let room_for_note = i + 1 == lines.len() || needed + more.chars().count() < limit;
        if needed > limit || !room_for_note {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&more);
            return text;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line);
    }
    text
}

fn answer(text: impl Into<String>, ephemeral: bool) -> Answer {
    Answer {
        text: text.into(),
        ephemeral,
    }
}

/// Whether the caller may change the channel's settings: Manage Channels, Administrator, or
/// an admin role.
pub fn may_configure(permissions: Option<Permissions>, roles: &[u64], admin_roles: &[u64]) -> bool {
    permissions.is_some_and(|p| p.manage_channels() || p.administrator())
        || roles.iter().any(|r| admin_roles.contains(r))
}

/// Runs a command for `channel` by `caller`; `option` is the command's one option, if given.
/// The core decides ([`commands::apply`]); this only renders the outcome for Discord.
pub async fn run(
    ctx: &CommandContext<'_>,
    name: &str,
    option: Option<&str>,
    channel: &str,
    caller: Caller<'_>,
    guild: Option<u64>,
) -> Answer {
    let command = match ChannelCommand::parse(name, option, ctx.profiles) {
        Ok(command) => command,
        Err(problem) => return answer(problem, true),
    };
    let env = CommandEnv {
        store: ctx.store,
        defaults: ctx.defaults,
        model: ctx.model,
        protocol: ctx.protocol,
        profiles: ctx.profiles,
        tools: ctx.tools,
        servers: ctx.servers,
        context_window: ctx.context_window.clone(),
        usage: ctx.usage,
    };
    let outcome = commands::apply(&env, channel, caller, command).await;
    let public = outcome.is_public();
    answer(render(ctx.tools, outcome, guild), !public)
}

/// `line` with its first letter capital, as a line of its own in a message.
fn sentence(line: &str) -> String {
    let mut chars = line.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// An outcome as Discord shows it: mentions for people, timestamps Discord localises; a
/// pending call as its tool in `tools` shows it.
fn render(tools: &ToolSet, outcome: CommandOutcome, guild: Option<u64>) -> String {
    match outcome {
        CommandOutcome::Mode { mode, set_by: None } => {
            format!("This channel is in **{mode}** mode.")
        }
        CommandOutcome::Mode {
            mode,
            set_by: Some(user),
        } => format!("<@{user}> set this channel to **{mode}** mode."),
        CommandOutcome::Profile {
            profile,
            set_by: None,
            available,
            ..
        } => {
            let listed: Vec<String> = available
                .iter()
                .map(|(name, summary)| match summary.is_empty() {
                    true => format!("**{name}**"),
                    false => format!("**{name}** ({summary})"),
                })
                .collect();
            format!(
                "This channel uses the **{profile}** profile. Profiles: {}.",
                listed.join(", ")
            )
        }
        CommandOutcome::Profile {
            profile,
            set_by: Some(user),
            mode,
            ..
        } => match mode {
            Some(mode) => format!(
                "<@{user}> set this channel's profile to **{profile}**, and with it the mode to **{mode}**."
            ),
            None => format!("<@{user}> set this channel's profile to **{profile}**."),
        },
        CommandOutcome::Status(status) => {
            let mut text = format!(
                "Mode: **{}** · profile: **{}** · model: `{}` ({} protocol) · tools: {} · pending approvals: **{}** · rules: **{}**",
                status.settings.mode,
                status.settings.profile,
                status.model,
                status.protocol,
                status.tools.join(", "),
                status.pending,
                status.rules
            );
            for line in [status.window_line(), status.tokens_line()] {
                text.push('\n');
                text.push_str(&sentence(&line));
            }
            if !status.servers.is_empty() {
                text.push_str("\nMCP servers:");
                for server in &status.servers {
                    text.push_str(&format!(
                        "\n- {}",
                        crate::discord::render::inert_markdown(server)
                    ));
                }
            }
            text
        }
        CommandOutcome::Reset { by } => {
            format!("<@{by}> cleared this channel's conversation (the audit log stays).")
        }
        CommandOutcome::Pending(pending) if pending.is_empty() => {
            "Nothing is waiting for a decision here.".to_owned()
        }
        CommandOutcome::Pending(pending) => {
            let lines: Vec<String> = pending
                .iter()
                .map(|a| pending_line(tools, a, guild))
                .collect();
            fit_lines(&lines, |n| format!("… and {n} more waiting here."))
        }
        CommandOutcome::Audit(records) if records.is_empty() => {
            "No tool calls recorded here yet.".to_owned()
        }
        CommandOutcome::Audit(records) => {
            let lines: Vec<String> = records
                .iter()
                .map(|r| {
                    let line = format!(
                        "<t:{}:R> `{}` {} ({}) → {} — <@{}>",
                        r.at, r.tool, r.decision, r.source, r.outcome, r.user
                    );
                    match commands::audit_note(r) {
                        Some(note) => format!("{line} ({note})"),
                        None => line,
                    }
                })
                .collect();
            fit_lines(&lines, |n| {
                format!(
                    "… and {n} older ones that do not fit in one message (ask for fewer with `/audit n`)."
                )
            })
        }
        CommandOutcome::Rules(rules) if rules.is_empty() => {
            "No rules here: every call the gate asks about waits for a person.".to_owned()
        }
        CommandOutcome::Rules(rules) => {
            let lines: Vec<String> = rules
                .iter()
                .map(|rule| {
                    format!(
                        "`{}` `{}`: {} — by <@{}>, until <t:{}:t>",
                        rule.id,
                        rule.tool,
                        super::render::quoted(&rule.similarity.summary),
                        rule.created_by,
                        unix(rule.expires_at)
                    )
                })
                .collect();
            fit_lines(&lines, |n| format!("… and {n} more rules here."))
        }
        CommandOutcome::Revoked { rule, by } => format!(
            "<@{by}> revoked rule `{}`: {} asks a person again.",
            rule.id, rule.similarity.summary
        ),
        CommandOutcome::Refused(why) => why,
    }
}

/// A waiting approval in `/pending`: its tool, requester and message, with a note when its
/// call has characters the approval shows escaped.
fn pending_line(
    tools: &ToolSet,
    a: &crate::core::ports::ApprovalRecord,
    guild: Option<u64>,
) -> String {
    let link = a
        .message_ref
        .as_deref()
        .and_then(message_ref)
        .map(|(c, m)| {
            let place = guild.map_or("@me".to_owned(), |g| g.to_string());
            format!(
                "https://discord.com/channels/{place}/{}/{}",
                c.get(),
                m.get()
            )
        })
        .unwrap_or_else(|| "(message not posted)".to_owned());
    let shown = crate::tools::render::ShownCall::of(tools, &a.tool, &a.arguments, &a.reason);
    let note = shown
        .escaped
        .note()
        .map(|note| format!(" ({note} in the approval)"))
        .unwrap_or_default();
    format!("• `{}` for <@{}>: {link}{note}", a.tool, a.requester)
}

fn unix(at: std::time::SystemTime) -> u64 {
    at.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Handles a slash command interaction.
pub async fn handle(ctx: &Context, command: &CommandInteraction, commands: &CommandContext<'_>) {
    let option = command.data.options.first().and_then(|o| {
        o.value
            .as_str()
            .map(str::to_owned)
            .or_else(|| o.value.as_i64().map(|n| n.to_string()))
    });
    let roles: Vec<u64> = command
        .member
        .as_ref()
        .map(|m| m.roles.iter().map(|r| r.get()).collect())
        .unwrap_or_default();
    let permissions = command.member.as_ref().and_then(|m| m.permissions);
    let user_id = command.user.id.get().to_string();
    let caller = Caller {
        user: &user_id,
        may_configure: may_configure(permissions, &roles, commands.admin_roles),
        may_approve: roles.iter().any(|r| commands.approver_roles.contains(r)),
    };
    let channel = command.channel_id.get().to_string();
    let work = run(
        commands,
        &command.data.name,
        option.as_deref(),
        &channel,
        caller,
        command.guild_id.map(|g| g.get()),
    );
    tokio::pin!(work);
    let early = tokio::select! {
        reply = &mut work => Some(reply),
        _ = tokio::time::sleep(super::approvals::ANSWER_WITHIN) => None,
    };
    let name = &command.data.name;
    if let Some(reply) = early {
        let response = CreateInteractionResponse::Message(
            CreateInteractionResponseMessage::new()
                .content(reply.text)
                .ephemeral(reply.ephemeral)
                .allowed_mentions(no_mentions()),
        );
        if let Err(e) = command.create_response(&ctx.http, response).await {
            tracing::warn!(command = %name, error = %e, "a command could not be answered");
        }
        return;
    }
    // The store is slow: tell Discord "thinking" before its three seconds run out, then
    // put the answer in place of that placeholder.
    let public = answers_publicly(name, option.as_deref());
    let defer = CreateInteractionResponse::Defer(
        CreateInteractionResponseMessage::new().ephemeral(!public),
    );
    if let Err(e) = command.create_response(&ctx.http, defer).await {
        tracing::warn!(command = %name, error = %e, "a slow command could not be deferred");
    }
    let reply = work.await;
    let result = if reply.ephemeral != public {
        let edit = EditInteractionResponse::new()
            .content(reply.text)
            .allowed_mentions(no_mentions());
        command.edit_response(&ctx.http, edit).await.map(drop)
    } else {
        // The placeholder's visibility is fixed: the answer goes in a follow-up that has the
        // right one, and the placeholder goes.
        let _ = command.delete_response(&ctx.http).await;
        let note = CreateInteractionResponseFollowup::new()
            .content(reply.text)
            .ephemeral(reply.ephemeral)
            .allowed_mentions(no_mentions());
        command.create_followup(&ctx.http, note).await.map(drop)
    };
    if let Err(e) = result {
        tracing::warn!(command = %name, error = %e, "a slow command could not be answered");
    }
}

/// Whether a command's answer is usually seen by the whole channel (a change of settings
/// or a reset), so a deferred answer starts out visible to all.
fn answers_publicly(name: &str, option: Option<&str>) -> bool {
    matches!(
        (name, option),
        ("mode" | "profile" | "rules", Some(_)) | ("reset", _)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_shows_a_cancels_reason_on_one_line() {
        let record = |note: Option<&str>| crate::core::ports::AuditRecord {
            at: 1_700_000_000,
            run_id: "r1".into(),
            channel: "1".into(),
            user: "42".into(),
            tool: "execute_command".into(),
            arguments_summary: "rm -f keep.txt".into(),
            decision: crate::core::risk::Decision::Confirm,
            source: crate::core::risk::DecisionSource::DestructiveFloor,
            reason: "`rm` deletes files".into(),
            outcome: crate::core::agent::CallOutcome::Cancelled,
            approval_id: Some("a1".into()),
            duration_ms: 0,
            output_bytes: 0,
            note: note.map(str::to_owned),
            result: None,
        };
        let text = render(
            &ToolSet::new(),
            CommandOutcome::Audit(vec![
                record(Some("reason: move it to trash/\ninstead")),
                record(None),
            ]),
            None,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with("→ cancelled — <@42> (reason: move it to trash/ instead)"),
            "{text}"
        );
        assert!(lines[1].ends_with("→ cancelled — <@42>"), "{text}");
    }

    #[test]
    fn long_lists_fit_one_message_and_say_what_was_left_out() {
        let lines: Vec<String> = (0..60)
            .map(|i| format!("{i:02} {}", "x".repeat(60)))
            .collect();
        let text = fit_lines(&lines, |n| format!("… and {n} more"));
        assert!(text.chars().count() <= 2_000, "{}", text.chars().count());
        let shown = text.lines().filter(|l| !l.starts_with('…')).count();
        assert!(
            text.ends_with(&format!("… and {} more", 60 - shown)),
            "{text}"
        );
        let short: Vec<String> = lines[..3].to_vec();
        assert_eq!(
            fit_lines(&short, |n| format!("… and {n} more")),
            short.join("\n")
        );
    }
    use crate::core::risk::ChannelMode;
    use crate::store::MemoryStore;

    #[tokio::test]
    async fn mode_changes_need_permission_and_persist() {
        let store = MemoryStore::new();
        let defaults = ChannelSettings {
            mode: ChannelMode::Smart,
            profile: "ops".into(),
        };
        let profiles = crate::tools::builtin_profiles("ops").expect("profiles");
        let usage = UsageLedger::default();
        usage.record(
            "c",
            crate::core::message::Usage {
                prompt_tokens: 4096,
                completion_tokens: 12,
            },
        );
        let ctx = CommandContext {
            store: &store,
            defaults: &defaults,
            admin_roles: &[9],
            approver_roles: &[],
            model: "m",
            protocol: "native",
            profiles: &profiles,
            tools: &ToolSet::new(),
            servers: &[],
            context_window: Some(ModelWindow {
                tokens: 16384,
                source: "llm.context_window_tokens".into(),
            }),
            usage: &usage,
        };
        let caller = |configure| Caller {
            user: "u1",
            may_configure: configure,
            may_approve: false,
        };
        let refused = run(&ctx, "mode", Some("strict"), "c", caller(false), None).await;
        assert!(refused.ephemeral && refused.text.contains("Manage Channels"));
        let done = run(&ctx, "mode", Some("strict"), "c", caller(true), None).await;
        assert!(!done.ephemeral && done.text.contains("strict"), "{done:?}");
        let shown = run(&ctx, "status", None, "c", caller(false), None).await;
        assert!(
            shown.text.contains("**strict**") && shown.text.contains("pending approvals: **0**")
        );
        assert!(
            shown
                .text
                .contains("\nContext window: 16384 tokens (llm.context_window_tokens)\nTokens since the bot started: 4096 prompt, 12 completion in 1 request(s); the last request's prompt: 4096 tokens, 25% of the window"),
            "{}",
            shown.text
        );
        let bad = run(&ctx, "profile", Some("root"), "c", caller(true), None).await;
        assert!(bad.text.contains("Unknown profile"));
    }

    #[tokio::test]
    async fn profile_lists_the_operators_profiles_and_a_switch_sets_their_mode() {
        let store = MemoryStore::new();
        let defaults = ChannelSettings {
            mode: ChannelMode::Smart,
            profile: "ops".into(),
        };
        let mut settings = crate::config::Settings::default();
        settings.profiles.insert(
            "payments".to_owned(),
            crate::config::profiles::ProfileSettings {
                summary: "payments data".to_owned(),
                mode: Some("strict".to_owned()),
                model: Some("big".to_owned()),
                ..Default::default()
            },
        );
        let profiles = crate::tools::profiles(&settings).expect("profiles");
        let usage = UsageLedger::default();
        let ctx = CommandContext {
            store: &store,
            defaults: &defaults,
            admin_roles: &[],
            approver_roles: &[],
            model: "m",
            protocol: "native",
            profiles: &profiles,
            tools: &ToolSet::new(),
            servers: &[],
            context_window: None,
            usage: &usage,
        };
        let caller = Caller {
            user: "u1",
            may_configure: true,
            may_approve: false,
        };
        let listed = run(&ctx, "profile", None, "c", caller, None).await;
        assert_eq!(
            listed.text,
            "This channel uses the **ops** profile. Profiles: **sql** (data), **ops** (all tools), **payments** (payments data)."
        );
        let switched = run(&ctx, "profile", Some("payments"), "c", caller, None).await;
        assert!(
            switched
                .text
                .ends_with("profile to **payments**, and with it the mode to **strict**."),
            "{}",
            switched.text
        );
        let shown = run(&ctx, "status", None, "c", caller, None).await;
        assert!(
            shown
                .text
                .starts_with("Mode: **strict** · profile: **payments** · model: `big`"),
            "{}",
            shown.text
        );
    }

    #[test]
    fn configuring_needs_manage_channels_admin_or_an_admin_role() {
        assert!(may_configure(Some(Permissions::MANAGE_CHANNELS), &[], &[]));
        assert!(may_configure(Some(Permissions::ADMINISTRATOR), &[], &[]));
        assert!(may_configure(Some(Permissions::SEND_MESSAGES), &[5], &[5]));
        assert!(!may_configure(Some(Permissions::SEND_MESSAGES), &[4], &[5]));
        assert!(!may_configure(None, &[], &[]));
    }
}
