//! Events as terminal text. Everything the model or a tool wrote is cleaned of control
//! characters first, so output cannot move the cursor or change the terminal; a call, and
//! what quotes it, is shown legible instead (`tools::render::ShownCall`): each invisible,
//! direction-changing or look-alike character as a `\u{…}` escape, with a line that says so.
//! What people read as prose (answers, notices, errors, command outcomes) has Discord's
//! markup (mentions, timestamps) shown as names and local times ([`readable`]); calls and
//! tool results are shown as they are, since that is what runs and what a tool returned.

use chrono::{DateTime, Local, TimeZone};
use serde_json::{Value, json};

use crate::core::agent::AgentEvent;
use crate::core::commands::{self, CommandOutcome};
use crate::core::ports::ApprovalRequest;
use crate::core::risk::Decision;
use crate::core::tools::ToolSet;
use crate::tools::legible::{Lines, legible};
use crate::tools::render::ShownCall;

/// Removes control characters except newline and tab.
pub fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

/// Who and where the console is: what Discord mentions of them are shown as.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    /// The console's user (`--user`), the author of its messages.
    pub user: &'a str,
    /// The conversation's name (`--channel`).
    pub channel: &'a str,
}

/// Discord markup as a person at a terminal reads it (a conversation kept from Discord, or
/// a model that writes for it, puts it in answers): `<@id>` and `<@!id>` as `@name` for the
/// console's user and `@user` for anyone else, `<#id>` as `#name` for the console's
/// conversation and `#channel` for others, `<@&id>` as `@role`, and `<t:unix>` or
/// `<t:unix:style>` as that moment in local time, in the style's form. Anything else is
/// left as written.
pub fn readable(text: &str, names: Names<'_>) -> String {
    readable_in(text, names, &Local, Local::now().timestamp())
}

/// [`readable`] with times in `zone`, relative ones (`:R`) counted from `now`.
fn readable_in<Tz: TimeZone>(text: &str, names: Names<'_>, zone: &Tz, now: i64) -> String
where
    Tz::Offset: std::fmt::Display,
{
    /// Longer than any mention or timestamp: a `<` further from its `>` is not markup.
    const LONGEST: usize = 40;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let tail = &rest[open + 1..];
        let shown = tail
            .find('>')
            .filter(|&close| close <= LONGEST)
            .and_then(|close| Some((markup(&tail[..close], names, zone, now)?, close)));
        match shown {
            Some((shown, close)) => {
                out.push_str(&shown);
                rest = &tail[close + 1..];
            }
            None => {
                out.push('<');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// What `<inner>` is shown as, if it is a mention or a timestamp.
fn markup<Tz: TimeZone>(inner: &str, names: Names<'_>, zone: &Tz, now: i64) -> Option<String>
where
    Tz::Offset: std::fmt::Display,
{
    let is_id = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    if let Some(time) = inner.strip_prefix("t:") {
        let (unix, style) = time.split_once(':').unwrap_or((time, "f"));
        return timestamp(unix.parse().ok()?, style, zone, now);
    }
    if let Some(role) = inner.strip_prefix("@&") {
        return is_id(role).then(|| "@role".to_owned());
    }
    if let Some(user) = inner.strip_prefix('@') {
        let user = user.strip_prefix('!').unwrap_or(user);
        return if user == names.user {
            Some(format!("@{user}"))
        } else {
            is_id(user).then(|| "@user".to_owned())
        };
    }
    let channel = inner.strip_prefix('#')?;
    if channel == names.channel {
        Some(format!("#{channel}"))
    } else {
        is_id(channel).then(|| "#channel".to_owned())
    }
}

/// A Discord timestamp in `zone`: `t` 16:20, `T` 16:20:30, `d` 2021-04-20, `D` 20 April
/// 2021, `f` 20 April 2021 16:20, `F` Tuesday, 20 April 2021 16:20, `R` "in 5 minutes" or
/// "5 minutes ago". `None` for another style or a moment out of range.
fn timestamp<Tz: TimeZone>(unix: i64, style: &str, zone: &Tz, now: i64) -> Option<String>
where
    Tz::Offset: std::fmt::Display,
{
    let format = match style {
        "t" => "%H:%M",
        "T" => "%H:%M:%S",
        "d" => "%Y-%m-%d",
        "D" => "%-d %B %Y",
        "f" => "%-d %B %Y %H:%M",
        "F" => "%A, %-d %B %Y %H:%M",
        "R" => return Some(relative(unix - now)),
        _ => return None,
    };
    let at = zone.timestamp_opt(unix, 0).single()?;
    Some(at.format(format).to_string())
}

/// `seconds` from now as Discord's relative style says it.
fn relative(seconds: i64) -> String {
    const UNITS: [(i64, &str); 6] = [
        (365 * 86_400, "year"),
        (30 * 86_400, "month"),
        (86_400, "day"),
        (3_600, "hour"),
        (60, "minute"),
        (1, "second"),
    ];
    let span = seconds.unsigned_abs();
    let (size, unit) = UNITS
        .iter()
        .find(|(size, _)| span >= size.unsigned_abs())
        .copied()
        .unwrap_or((1, "second"));
    let count = span / size.unsigned_abs();
    let plural = if count == 1 { "" } else { "s" };
    if seconds >= 0 {
        format!("in {count} {unit}{plural}")
    } else {
        format!("{count} {unit}{plural} ago")
    }
}

/// A Unix time the console shows (an audit record's, a rule's expiry), in local time.
pub fn local_time(unix: u64) -> String {
    local_time_in(unix, &Local)
}

fn local_time_in<Tz: TimeZone>(unix: u64, zone: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    i64::try_from(unix)
        .ok()
        .and_then(|unix| zone.timestamp_opt(unix, 0).single())
        .map_or_else(
            || format!("{unix} (Unix time)"),
            |at: DateTime<Tz>| at.format("%Y-%m-%d %H:%M:%S").to_string(),
        )
}

/// What the console says to an answer that is none of those a prompt takes; the prompt
/// then waits for another.
pub fn unclear_answer(line: &str, similar_offered: bool) -> String {
    let allow = if similar_offered {
        ", a to confirm and allow similar calls"
    } else {
        ""
    };
    clean(&format!(
        "   {:?} is not an answer here: y to confirm, n to cancel (n and a reason to say what to do instead){allow}\n   confirm? [y/N]",
        line.trim()
    ))
}

/// The text of an event, or `None` for events the text console does not show. A call is
/// shown on one line as its tool in `tools` shows it ([`ToolSet::call_line`]); prose is
/// [`readable`].
pub fn event_text(tools: &ToolSet, names: Names<'_>, event: &AgentEvent) -> Option<String> {
    let text = match event {
        AgentEvent::RunStarted { .. }
        | AgentEvent::RunFinished { .. }
        | AgentEvent::ModelUsage { .. } => return None,
        AgentEvent::ToolCall {
            tool,
            arguments,
            decision,
            source,
            reason,
            ..
        } => {
            let line = legible(&tools.call_line(tool, arguments), Lines::Kept);
            let reason = legible(reason, Lines::Escaped).text;
            let mut text = format!("-> {tool}: {} [{decision}, {source}: {reason}]", line.text);
            // A call that waits for a person says it in its prompt, just after.
            if let (Some(warning), false) = (line.escaped.warning(), *decision == Decision::Confirm)
            {
                text.push_str(&format!("\n   {warning}"));
            }
            text
        }
        AgentEvent::ApprovalRequested { .. } => return None,
        AgentEvent::ApprovalResolved { outcome, by, .. } => match by {
            Some(by) => format!("   {outcome} by {by}"),
            None => format!("   {outcome}"),
        },
        AgentEvent::ToolResult { chat, .. } => chat.clone(),
        AgentEvent::CallNotRun {
            tool,
            status,
            reason,
            ..
        } => format!("   {tool} not run ({status}): {}", readable(reason, names)),
        // A streamed answer's draft is printed as it comes (`Drafted`).
        AgentEvent::ReplyPart { .. } | AgentEvent::DraftDropped => return None,
        AgentEvent::Reply { text } => format!("riskgate: {}", readable(text, names)),
        AgentEvent::Error { message } => format!("error: {}", readable(message, names)),
        AgentEvent::Notice { message } => format!("note: {}", readable(message, names)),
        AgentEvent::RuleCreated {
            rule_id,
            tool,
            summary,
            expires_at,
            ..
        } => format!(
            "   rule {rule_id}: {tool} calls like this ({}) run without asking until {}",
            legible(summary, Lines::Escaped).text,
            local_time(*expires_at)
        ),
    };
    Some(clean(&text))
}

/// A streamed answer as the text console prints it: the draft's text as it comes, on the
/// line the answer will end; the answer then finishes that line. Where the answer is not
/// what was printed (reasoning replaced, or a reply cut to `agent.max_reply_chars`), it is
/// printed again whole on a line of its own; a draft taken back just ends its line. Text
/// from a `<` on is held until its `>` has come, so Discord markup cut between two parts
/// still reads as a name or a time.
#[derive(Debug, Default)]
pub struct Drafted {
    /// The draft received so far, if one is, and how much of it was printed.
    printed: Option<(String, usize)>,
}

impl Drafted {
    /// What to print for `event` (without a line break of its own), when it is part of a
    /// streamed answer; `None` for any other event, and for a reply that had no draft.
    pub fn output(&mut self, event: &AgentEvent, names: Names<'_>) -> Option<String> {
        let shown = |text: &str| clean(&readable(text, names));
        match event {
            AgentEvent::ReplyPart { text, restart } => Some(match &mut self.printed {
                Some((received, upto)) if !restart => {
                    received.push_str(text);
                    let end = whole_markup_end(received, *upto);
                    let out = shown(&received[*upto..end]);
                    *upto = end;
                    out
                }
                printed => {
                    let again = if printed.is_some() { "\n" } else { "" };
                    let end = whole_markup_end(text, 0);
                    *printed = Some((text.clone(), end));
                    format!("{again}riskgate: {}", shown(&text[..end]))
                }
            }),
            AgentEvent::DraftDropped => self.printed.take().map(|_| "\n".to_owned()),
            AgentEvent::Reply { text } => {
                let (received, upto) = self.printed.take()?;
                Some(match text.strip_prefix(received.as_str()) {
                    Some(_) => format!("{}\n", shown(&text[upto..])),
                    None => format!("\nriskgate: {}\n", shown(text)),
                })
            }
            _ => None,
        }
    }
}

/// Where the text from `from` on may be printed up to: before a `<` whose `>` has not come.
fn whole_markup_end(text: &str, from: usize) -> usize {
    match text[from..].rfind('<') {
        Some(at) if !text[from + at..].contains('>') => from + at,
        _ => text.len(),
    }
}

/// What `--json` adds to an event that shows a call (`tool_call`, `approval_requested`):
/// `display`, the whole call as a person is shown it (every invisible, direction-changing or
/// look-alike character as a `\u{…}` escape), `display_reason`, the reason likewise on one
/// line, `escaped`, how many characters were escaped (`total`, and `kinds` by kind), and
/// `warning`, the line that says so (`null` when nothing was escaped). `arguments` stays
/// the call exactly as it runs.
pub fn shown_fields(tools: &ToolSet, event: &AgentEvent) -> Option<serde_json::Map<String, Value>> {
    let (tool, arguments, reason) = match event {
        AgentEvent::ToolCall {
            tool,
            arguments,
            reason,
            ..
        }
        | AgentEvent::ApprovalRequested {
            tool,
            arguments,
            reason,
            ..
        } => (tool, arguments, reason),
        _ => return None,
    };
    let shown = ShownCall::of(tools, tool, arguments, reason);
    let fields = json!({
        "display": shown.call,
        "display_reason": shown.reason,
        "warning": shown.warning(),
        "escaped": shown.escaped,
    });
    match fields {
        Value::Object(fields) => Some(fields),
        _ => None,
    }
}

/// The question shown before reading the answer.
/// The prompt shows everything that will run, nothing cut, where it runs, and how long the
/// answer may take.
/// Every character of the call that is invisible, changes direction or can pass for
/// another is shown as a `\u{…}` escape, and a line then says so.
pub fn approval_prompt(
    tools: &ToolSet,
    request: &ApprovalRequest,
    now: std::time::SystemTime,
) -> String {
    let shown = ShownCall::of_approval(tools, request);
    let target = shown
        .target
        .as_deref()
        .map(|t| format!(" on {t}"))
        .unwrap_or_default();
    let whole = &shown.call;
    let call = if whole.contains('\n') {
        format!("\n   | {}", whole.replace('\n', "\n   | "))
    } else {
        format!(" {whole}")
    };
    let earlier = request.earlier.as_ref().map(|earlier| {
        let when = format!("at {}", local_time(earlier.unix_seconds()));
        format!("!! {}", earlier.warning(&when, str::to_owned))
    });
    let warning: String = earlier
        .into_iter()
        .chain(shown.warning())
        .map(|w| format!("\n   {w}"))
        .collect();
    let left = request
        .expires_at
        .duration_since(now)
        .unwrap_or_default()
        .as_secs();
    let choices = match (&request.similar, &shown.similar) {
        (Some((_, ttl)), Some(summary)) => format!(
            "\n   y: confirm · a: confirm and allow similar calls for {} min ({summary}) · n [reason]: cancel, saying what to do instead",
            ttl.as_secs() / 60,
        ),
        _ => "\n   y: confirm · n [reason]: cancel, saying what to do instead".to_owned(),
    };
    clean(&format!(
        "?? {} wants to run {}{target}:{call}{warning}\n   why confirm: {} ({})\n   expires in {}m {:02}s (then nothing runs){choices}\n   confirm? [y/N]",
        request.requester,
        request.tool,
        shown.reason,
        request.decision.source,
        left / 60,
        left % 60
    ))
}

/// A channel command's outcome as the console shows it: the event kind (in `--json`, the
/// `event` field), the text, and the fields a script reads.
pub fn command_outcome(
    tools: &ToolSet,
    name: &str,
    outcome: CommandOutcome,
) -> (&'static str, String, Value) {
    let local = |at: std::time::SystemTime| {
        local_time(
            at.duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        )
    };
    match outcome {
        CommandOutcome::Mode { mode, set_by } => (
            "mode",
            match set_by {
                Some(_) => format!("mode set to {mode}"),
                None => format!("mode: {mode}"),
            },
            json!({ "mode": mode.as_str() }),
        ),
        CommandOutcome::Profile {
            profile,
            set_by,
            mode,
            available,
        } => (
            "profile",
            match (set_by, mode) {
                (Some(_), Some(mode)) => format!("profile set to {profile}, mode {mode}"),
                (Some(_), None) => format!("profile set to {profile}"),
                (None, _) => {
                    let listed: Vec<String> = available
                        .iter()
                        .map(|(name, summary)| format!("{name} ({summary})"))
                        .collect();
                    format!("profile: {profile}; profiles: {}", listed.join(", "))
                }
            },
            match mode {
                Some(mode) => json!({ "profile": profile, "mode": mode.as_str() }),
                None if available.is_empty() => json!({ "profile": profile }),
                None => json!({
                    "profile": profile,
                    "profiles": available
                        .iter()
                        .map(|(name, summary)| json!({ "name": name, "summary": summary }))
                        .collect::<Vec<_>>(),
                }),
            },
        ),
        CommandOutcome::Status(status) => (
            "status",
            format!(
                "mode: {}, profile: {}, model: {} ({} protocol), tools: {}, pending approvals: {}, rules: {}; {}; {}{}",
                status.settings.mode,
                status.settings.profile,
                status.model,
                status.protocol,
                status.tools.join(", "),
                status.pending,
                status.rules,
                status.window_line(),
                status.tokens_line(),
                if status.servers.is_empty() {
                    String::new()
                } else {
                    format!("; MCP servers: {}", status.servers.join("; "))
                }
            ),
            json!({
                "mode": status.settings.mode.as_str(),
                "profile": status.settings.profile,
                "model": status.model,
                "protocol": status.protocol,
                "tools": status.tools,
                "pending": status.pending,
                "rules": status.rules,
                "mcp_servers": status.servers,
                "context_window": status.context_window.as_ref().map(|w| json!({
                    "tokens": w.tokens,
                    "source": w.source,
                })),
                // Since the bot started, as the model server counted them.
                "tokens": {
                    "prompt": status.usage.prompt_tokens,
                    "completion": status.usage.completion_tokens,
                    "requests": status.usage.requests,
                    "last_prompt": status.usage.last_prompt_tokens,
                },
            }),
        ),
        CommandOutcome::Reset { .. } => ("reset", "conversation cleared".to_owned(), json!({})),
        CommandOutcome::Pending(pending) => {
            let lines: Vec<String> = pending.iter().map(|a| pending_line(tools, a)).collect();
            let ids: Vec<&str> = pending.iter().map(|a| a.id.as_str()).collect();
            (
                "pending",
                listed(lines, "nothing is waiting"),
                json!({ "pending": ids }),
            )
        }
        CommandOutcome::Audit(records) => {
            let lines: Vec<String> = records
                .iter()
                .map(|r| {
                    let line = format!(
                        "{} {} {} ({}) -> {} by {}",
                        local_time(r.at),
                        r.tool,
                        r.decision,
                        r.source,
                        r.outcome,
                        r.user
                    );
                    match commands::audit_note(r) {
                        Some(note) => format!("{line} ({note})"),
                        None => line,
                    }
                })
                .collect();
            let rows: Vec<Value> = records
                .iter()
                .map(|r| {
                    json!({
                        "at": r.at,
                        "tool": r.tool,
                        "decision": r.decision.to_string(),
                        "source": r.source.to_string(),
                        "outcome": r.outcome.to_string(),
                        "user": r.user,
                        "note": r.note,
                    })
                })
                .collect();
            (
                "audit",
                listed(lines, "no tool calls recorded"),
                json!({ "count": records.len(), "records": rows }),
            )
        }
        CommandOutcome::Rules(rules) => {
            let lines: Vec<String> = rules
                .iter()
                .map(|r| {
                    format!(
                        "{} {}: {} (by {}, until {})",
                        r.id,
                        r.tool,
                        r.similarity.summary,
                        r.created_by,
                        local(r.expires_at)
                    )
                })
                .collect();
            let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
            ("rules", listed(lines, "no rules"), json!({ "rules": ids }))
        }
        CommandOutcome::Revoked { rule, .. } => (
            "rules",
            format!("rule {} revoked", rule.id),
            json!({ "revoked": rule.id }),
        ),
        CommandOutcome::Refused(why) => ("error", format!("/{name}: {why}"), json!({})),
    }
}

/// A waiting approval in `/pending`, with a note when its call has escaped characters.
fn pending_line(tools: &ToolSet, approval: &crate::core::ports::ApprovalRecord) -> String {
    let shown = ShownCall::of(tools, &approval.tool, &approval.arguments, &approval.reason);
    let note = shown
        .escaped
        .note()
        .map(|note| format!(" ({note} in its prompt)"))
        .unwrap_or_default();
    format!(
        "{} {} for {}{note}",
        approval.id, approval.tool, approval.requester
    )
}

fn listed(lines: Vec<String>, empty: &str) -> String {
    if lines.is_empty() {
        empty.to_owned()
    } else {
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    const NAMES: Names<'static> = Names {
        user: "alice",
        channel: "console",
    };

    #[test]
    fn a_streamed_answer_is_printed_once_as_it_comes() {
        let part = |text: &str, restart| AgentEvent::ReplyPart {
            text: text.into(),
            restart,
        };
        let reply = |text: &str| AgentEvent::Reply { text: text.into() };
        let mut drafted = Drafted::default();
        let printed: Vec<Option<String>> = [
            part("Two ", false),
            part("files\u{1b}[2J.", false),
            reply("Two files\u{1b}[2J."),
        ]
        .iter()
        .map(|event| drafted.output(event, NAMES))
        .collect();
        assert_eq!(
            printed,
            [
                Some("riskgate: Two ".into()),
                Some("files[2J.".into()),
                Some("\n".into())
            ]
        );
        // Without a draft, the reply is printed as any event.
        assert_eq!(drafted.output(&reply("Hi."), NAMES), None);
        // Reasoning replaced: the answer again on a line of its own; a draft taken back
        // ends its line.
        drafted.output(&part("Okay, the user", false), NAMES);
        assert_eq!(
            drafted.output(&part("Hello!", true), NAMES),
            Some("\nriskgate: Hello!".into())
        );
        assert_eq!(drafted.output(&reply("Hello!"), NAMES), Some("\n".into()));
        drafted.output(&part("Let me look.", false), NAMES);
        assert_eq!(
            drafted.output(&AgentEvent::DraftDropped, NAMES),
            Some("\n".into())
        );
        assert_eq!(drafted.output(&AgentEvent::DraftDropped, NAMES), None);
        // A reply that is not what was printed (cut to agent.max_reply_chars) is printed whole.
        drafted.output(&part("abc", false), NAMES);
        assert_eq!(
            drafted.output(&reply("ab [cut]"), NAMES),
            Some("\nriskgate: ab [cut]\n".into())
        );
        // Markup cut between two parts is held until it is whole, then read as a name.
        let mut drafted = Drafted::default();
        assert_eq!(
            drafted.output(&part("Ask <@12", false), NAMES),
            Some("riskgate: Ask ".into())
        );
        assert_eq!(
            drafted.output(&part("3> now", false), NAMES),
            Some("@user now".into())
        );
        assert_eq!(
            drafted.output(&reply("Ask <@123> now"), NAMES),
            Some("\n".into())
        );
    }

    /// Alice's request for `tool` with `arguments`, asked for `reason`, expiring at `expires_at`.
    fn request(
        tool: &str,
        arguments: Value,
        target: Option<&str>,
        reason: &str,
        expires_at: SystemTime,
    ) -> ApprovalRequest {
        ApprovalRequest {
            id: "a1".into(),
            channel: "console".into(),
            requester: "alice".into(),
            tool: tool.into(),
            arguments: arguments.as_object().cloned().unwrap_or_default(),
            target: target.map(str::to_owned),
            decision: crate::core::risk::RiskDecision::new(
                crate::core::risk::Decision::Confirm,
                crate::core::risk::DecisionSource::Default,
                reason,
            ),
            expires_at,
            similar: None,
            earlier: None,
        }
    }

    #[test]
    fn discord_markup_reads_as_names_and_local_times() {
        let names = Names {
            user: "dana",
            channel: "ops",
        };
        // 1700000000 is 2023-11-14 22:13:20 UTC: 03:43:20 the next day at +05:30.
        let zone = chrono::FixedOffset::east_opt(5 * 3600 + 1800).expect("offset");
        let shown = |text: &str| readable_in(text, names, &zone, 1_700_000_000);
        assert_eq!(
            shown("ask <@123456789012345678> or <@!42>, cc <@dana>, in <#99> and <#ops>"),
            "ask @user or @user, cc @dana, in #channel and #ops"
        );
        assert_eq!(shown("<@&7> please"), "@role please");
        assert_eq!(
            shown("at <t:1700000000:t>, <t:1700000000:T>, <t:1700000000:d>"),
            "at 03:43, 03:43:20, 2023-11-15"
        );
        assert_eq!(
            shown("<t:1700000000> / <t:1700000000:F> / <t:1700000000:D>"),
            "15 November 2023 03:43 / Wednesday, 15 November 2023 03:43 / 15 November 2023"
        );
        assert_eq!(
            shown("<t:1700000300:R>, <t:1699992800:R>, <t:1700000001:R>"),
            "in 5 minutes, 2 hours ago, in 1 second"
        );
        // Not markup: left as written.
        for text in [
            "a < b > c",
            "<@bob> <#x1> <@&me> <t:soon> <t:1700000000:Q> <html>",
            "<t:1700000000",
            "unterminated <@1",
        ] {
            assert_eq!(shown(text), text);
        }
    }

    #[test]
    fn unix_times_are_shown_as_local_times() {
        let zone = chrono::FixedOffset::west_opt(3600).expect("offset");
        assert_eq!(local_time_in(1_700_000_000, &zone), "2023-11-14 21:13:20");
        assert_eq!(
            local_time_in(u64::MAX, &zone),
            format!("{} (Unix time)", u64::MAX)
        );
    }

    #[test]
    fn the_prompt_shows_the_call_its_target_why_and_when_it_expires() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let request = request(
            "execute_sql",
            serde_json::json!({"sql": "DELETE FROM orders WHERE id = 1"}),
            Some("database `prod`"),
            "a DELETE changes data",
            now + Duration::from_secs(299),
        );
        let prompt = approval_prompt(&crate::tools::tools_for_tests(), &request, now);
        assert!(
            prompt.contains("DELETE FROM orders WHERE id = 1"),
            "{prompt}"
        );
        assert!(prompt.contains("on database `prod`"), "{prompt}");
        assert!(prompt.contains("a DELETE changes data"), "{prompt}");
        assert!(prompt.contains("expires in 4m 59s"), "{prompt}");
        let late = approval_prompt(
            &crate::tools::tools_for_tests(),
            &request,
            now + Duration::from_secs(600),
        );
        assert!(late.contains("expires in 0m 00s"), "{late}");
    }

    #[test]
    fn the_prompt_says_that_the_channel_already_ran_the_call_before_asking() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut request = request(
            "execute_sql",
            serde_json::json!({"sql": "UPDATE orders SET paid = 1 WHERE id = 1"}),
            None,
            "an UPDATE changes data",
            now + Duration::from_secs(299),
        );
        let tools = crate::tools::tools_for_tests();
        assert!(!approval_prompt(&tools, &request, now).contains("already ran"));
        request.earlier = Some(crate::core::approval::EarlierRun {
            at: SystemTime::UNIX_EPOCH + Duration::from_secs(700),
            confirmed_by: Some("bob".into()),
            succeeded: true,
            result: Some("1 row\nchanged".into()),
        });
        let prompt = approval_prompt(&tools, &request, now);
        let said = format!(
            "!! This channel already ran this exact call at {}, confirmed by bob, and it succeeded: 1 row changed. Confirming runs it again.",
            local_time(700)
        );
        let (warned, asked) = (prompt.find(&said), prompt.find("confirm? [y/N]"));
        assert!(warned.is_some() && warned < asked, "{prompt}");
    }

    #[test]
    fn a_call_line_is_legible_and_warns_unless_its_prompt_follows() {
        let call = |decision| AgentEvent::ToolCall {
            call_id: "c1".into(),
            tool: "execute_command".into(),
            arguments: serde_json::json!({"command": "ls \u{200b}x"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            decision,
            source: crate::core::risk::DecisionSource::Whitelist,
            reason: "read-only\ncommands: ls".into(),
        };
        let auto = event_text(
            &crate::tools::tools_for_tests(),
            NAMES,
            &call(Decision::Auto),
        )
        .expect("shown");
        assert_eq!(
            auto.lines().next(),
            Some(
                "-> execute_command: ls \\u{200b}x [auto, whitelist: read-only\\u{a}commands: ls]"
            )
        );
        assert!(
            auto.lines()
                .nth(1)
                .is_some_and(|w| w.starts_with("   ⚠ This call contains 1 character")),
            "{auto}"
        );
        let confirm = event_text(
            &crate::tools::tools_for_tests(),
            NAMES,
            &call(Decision::Confirm),
        )
        .expect("shown");
        assert_eq!(confirm.lines().count(), 1, "its prompt says it: {confirm}");
    }

    #[test]
    fn the_prompt_shows_hidden_characters_escaped_and_says_so() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let request = request(
            "execute_command",
            serde_json::json!({"command": "echo ok\u{1b}[2K\rrm -rf d\u{202e}"}),
            None,
            "`echo` \u{200b}quoted",
            now + Duration::from_secs(60),
        );
        assert_eq!(
            approval_prompt(&crate::tools::tools_for_tests(), &request, now),
            "?? alice wants to run execute_command: echo ok\\u{1b}[2K\\u{d}rm -rf d\\u{202e}\n   \
             ⚠ This call contains 3 characters that are invisible, change the text's direction or can pass for others (2 control characters, 1 direction control), shown here as `\\u{…}` with the code point in hex. What runs is the call exactly as written, with them in it.\n   \
             why confirm: `echo` \\u{200b}quoted (default)\n   \
             expires in 1m 00s (then nothing runs)\n   \
             y: confirm · n [reason]: cancel, saying what to do instead\n   \
             confirm? [y/N]"
        );
    }
}
