//! The three faces of a command's result: a one-line summary, text for the LLM (command,
//! status, stdout, stderr, each labelled and cut to the LLM budget so stderr is never pushed
//! out by a long stdout), and a chat message (the command and its output in code blocks the
//! output cannot break out of, cut to the chat budget, the full output attached when cut;
//! the command in it legible, as its approval showed it).

use std::borrow::Cow;

use super::execute::{Captured, LineOutcome};
use super::sandbox::Walls;
use crate::config::OutputSettings;
use crate::core::tools::{Attachment, ToolOutput, format_bytes, shorten};
use crate::tools::legible::{Lines, legible};

/// The attachment's name when the output was cut.
pub const ATTACHMENT_NAME: &str = "output.txt";

/// What the model reads after a line that failed in the read-only sandbox, so it can tell a
/// refused write or connection from a bug, and knows how to ask.
pub const READ_ONLY_NOTE: &str = "note: this line ran without a person's confirmation, so it ran in a read-only sandbox: it could read the workspace and system files, write only under $TMPDIR (removed afterwards), and use no network, no daemon's socket (Docker, D-Bus) and no device. If it failed because writing a file, reaching the network, a daemon or a device was refused (\"Permission denied\", \"Operation not permitted\", \"Read-only file system\", \"Cannot connect\") and that is what the task needs, call execute_command again with risk_level \"medium\" so a person can confirm it.";

/// The result of a line that ran, whatever its exit status.
pub fn render(line: &str, outcome: &LineOutcome, budgets: &OutputSettings) -> ToolOutput {
    let llm_budget = usize::try_from(budgets.llm_budget_chars).unwrap_or(usize::MAX);
    let chat_budget = usize::try_from(budgets.chat_budget_chars).unwrap_or(usize::MAX);
    let (text, text_cut) = llm_text(line, outcome, llm_budget);
    let (chat, chat_cut) = chat(line, outcome, chat_budget);
    ToolOutput {
        summary: summary(outcome),
        text,
        chat,
        attachment: (text_cut || chat_cut).then(|| Attachment {
            filename: ATTACHMENT_NAME.to_owned(),
            bytes: full_output(line, outcome),
        }),
    }
}

/// `exit status 0, 12 lines`, `exit status 2, 0 lines, 1 line on stderr`,
/// `exit status 0, 5000000 lines, 9.0 MiB not shown`.
pub fn summary(outcome: &LineOutcome) -> String {
    let mut parts = vec![
        outcome.exit.to_string(),
        count(outcome.stdout.lines(), "line"),
    ];
    if !outcome.stderr.is_empty() {
        parts.push(format!(
            "{} on stderr",
            count(outcome.stderr.lines(), "line")
        ));
    }
    let dropped = outcome.stdout.dropped + outcome.stderr.dropped;
    if dropped > 0 {
        parts.push(format!("{} not shown", format_bytes(dropped)));
    }
    if outcome.limits.memory.is_some() {
        parts.push("memory limit reached".to_owned());
    }
    if outcome.limits.processes.is_some() {
        parts.push("process limit reached".to_owned());
    }
    parts.join(", ")
}

/// What the line ran into, in a sentence: the limits hold for all its processes together.
fn limits_note(outcome: &LineOutcome) -> Option<String> {
    let mut reached = Vec::new();
    if let Some(bytes) = outcome.limits.memory {
        reached.push(format!(
            "its memory limit ({} for all its processes together, command.sandbox.memory_bytes)",
            format_bytes(bytes)
        ));
    }
    if let Some(count) = outcome.limits.processes {
        reached.push(format!(
            "its process limit ({count} at once, command.sandbox.processes)"
        ));
    }
    (!reached.is_empty()).then(|| format!("The line reached {}.", reached.join(" and ")))
}

fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The text for the LLM and whether a stream had to be cut to fit `budget`.
fn llm_text(line: &str, outcome: &LineOutcome, budget: usize) -> (String, bool) {
    let mut header = format!("$ {line}\n{}\n", outcome.exit);
    if outcome.walls == Walls::ReadOnly && !outcome.exit.success() {
        header.push_str(READ_ONLY_NOTE);
        header.push('\n');
    }
    if let Some(note) = limits_note(outcome) {
        header.push_str(&note);
        header.push('\n');
    }
    let stdout = display(&outcome.stdout);
    let stderr = display(&outcome.stderr);
    // Labels and notes take a few dozen characters; keep them out of the streams' share.
    let room = budget.saturating_sub(header.chars().count() + 80);
    let (out_room, err_room) = share(room, stdout.chars().count(), stderr.chars().count());
    let cut = stdout.chars().count() > out_room || stderr.chars().count() > err_room;
    let text = format!(
        "{header}{}{}",
        section("stdout", &stdout, &outcome.stdout, out_room),
        section("stderr", &stderr, &outcome.stderr, err_room),
    );
    (text, cut)
}

fn section(label: &str, shown: &str, captured: &Captured, room: usize) -> String {
    if captured.is_empty() {
        return format!("{label}: (empty)\n");
    }
    let mut section = format!("{label}:\n{}\n", shorten(shown, room));
    if captured.dropped > 0 {
        section.push_str(&format!("[{} bytes more not shown]\n", captured.dropped));
    }
    section
}

/// The chat message and whether it had to be cut to fit `budget`.
/// The command is shown legible, as its approval showed it (`tools::legible`).
fn chat(line: &str, outcome: &LineOutcome, budget: usize) -> (String, bool) {
    let command = fence_safe(&legible(line, Lines::Kept).text);
    // A very long command must leave room for its output.
    let command = shorten(&command, (budget / 4).max(200));
    let stdout = fence_safe(&display(&outcome.stdout));
    let stderr = fence_safe(&display(&outcome.stderr));
    let dropped = outcome.stdout.dropped + outcome.stderr.dropped;
    let mut footer = outcome.exit.to_string();
    if dropped > 0 {
        footer.push_str(&format!(
            " · {} more output was not kept",
            format_bytes(dropped)
        ));
    }
    if let Some(note) = limits_note(outcome) {
        footer.push_str(&format!(" · {note}"));
    }
    let head = format!("```sh\n{command}\n```\n");
    let whole = chat_message(&head, &stdout, &stderr, &footer);
    if whole.chars().count() <= budget {
        return (whole, false);
    }
    let footer = format!("{footer}\nCut to fit; the full output is attached as {ATTACHMENT_NAME}.");
    let fixed = chat_message(&head, "", "", &footer).chars().count() + 120;
    let room = budget.saturating_sub(fixed);
    let (out_room, err_room) = share(room, stdout.chars().count(), stderr.chars().count());
    let stdout = shorten(&stdout, out_room);
    let stderr = shorten(&stderr, err_room);
    (chat_message(&head, &stdout, &stderr, &footer), true)
}

fn chat_message(head: &str, stdout: &str, stderr: &str, footer: &str) -> String {
    let mut message = head.to_owned();
    if stdout.is_empty() && stderr.is_empty() {
        message.push_str("(no output)\n");
    }
    if !stdout.is_empty() {
        message.push_str(&format!("```\n{stdout}\n```\n"));
    }
    if !stderr.is_empty() {
        message.push_str(&format!("stderr:\n```\n{stderr}\n```\n"));
    }
    message.push_str(footer);
    message
}

/// Splits `room` characters between two texts: each gets what it needs, and when both need
/// more than half, half each.
fn share(room: usize, a: usize, b: usize) -> (usize, usize) {
    if a + b <= room {
        return (a, b);
    }
    let half = room / 2;
    if a <= half {
        (a, room - a)
    } else if b <= half {
        (room - b, b)
    } else {
        (room - half, half)
    }
}

/// The kept bytes as text, without the one trailing newline every tool prints.
fn display(captured: &Captured) -> String {
    let text = String::from_utf8_lossy(&captured.bytes);
    match text {
        Cow::Borrowed(s) => s.strip_suffix('\n').unwrap_or(s).to_owned(),
        Cow::Owned(s) => s.strip_suffix('\n').map(str::to_owned).unwrap_or(s),
    }
}

/// Output must not close the code block it sits in: no two backticks stay adjacent (a
/// zero-width space goes between them).
fn fence_safe(text: &str) -> String {
    let mut safe = String::with_capacity(text.len());
    let mut previous = None;
    for c in text.chars() {
        if c == '`' && previous == Some('`') {
            safe.push('\u{200b}');
        }
        safe.push(c);
        previous = Some(c);
    }
    safe
}

/// Everything kept, byte for byte, for the attachment.
fn full_output(line: &str, outcome: &LineOutcome) -> Vec<u8> {
    let mut bytes = format!("$ {line}\n{}\n", outcome.exit).into_bytes();
    for (label, captured) in [("stdout", &outcome.stdout), ("stderr", &outcome.stderr)] {
        bytes.extend_from_slice(format!("--- {label} ---\n").as_bytes());
        bytes.extend_from_slice(&captured.bytes);
        if !captured.bytes.is_empty() && !captured.bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        if captured.dropped > 0 {
            bytes.extend_from_slice(
                format!("[{} bytes more were not kept]\n", captured.dropped).as_bytes(),
            );
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::tools::command::execute::Exit;
    use crate::tools::command::sandbox::LimitsReached;

    fn captured(text: &str) -> Captured {
        let mut c = Captured::default();
        c.push(text.as_bytes(), usize::MAX);
        c
    }

    fn outcome(exit: Exit, stdout: &str, stderr: &str) -> LineOutcome {
        LineOutcome {
            exit,
            walls: Walls::Confirmed {
                workspace_write: true,
                network: true,
            },
            stdout: captured(stdout),
            stderr: captured(stderr),
            elapsed: Duration::from_millis(3),
            limits: LimitsReached::default(),
        }
    }

    fn budgets(llm: u64, chat: u64) -> OutputSettings {
        OutputSettings {
            llm_budget_chars: llm,
            chat_budget_chars: chat,
        }
    }

    #[test]
    fn a_small_result_has_all_three_faces() {
        let out = render(
            "ls /nope",
            &outcome(Exit::Code(2), "", "ls: cannot access '/nope'\n"),
            &budgets(8000, 1800),
        );
        assert_eq!(out.summary, "exit status 2, 0 lines, 1 line on stderr");
        assert_eq!(
            out.text,
            "$ ls /nope\nexit status 2\nstdout: (empty)\nstderr:\nls: cannot access '/nope'\n"
        );
        assert_eq!(
            out.chat,
            "```sh\nls /nope\n```\nstderr:\n```\nls: cannot access '/nope'\n```\nexit status 2"
        );
        assert_eq!(out.attachment, None);
    }

    #[test]
    fn fences_in_output_cannot_close_the_block() {
        let out = render(
            "cat x.md",
            &outcome(Exit::Code(0), "```\n@everyone\n````", ""),
            &budgets(8000, 1800),
        );
        // The only fences left are the four riskgate wrote.
        assert_eq!(out.chat.matches("```").count(), 4, "{}", out.chat);
    }

    #[test]
    fn long_output_is_cut_for_chat_and_attached_whole() {
        let stdout = "line\n".repeat(2000);
        let out = render(
            "seq",
            &outcome(Exit::Code(0), &stdout, "warning\n"),
            &budgets(8000, 1800),
        );
        assert!(out.chat.chars().count() <= 1800, "{}", out.chat.len());
        assert!(out.chat.contains("warning"), "stderr keeps its share");
        assert!(out.chat.contains("attached as output.txt"));
        let attachment = out.attachment.expect("attached");
        assert_eq!(attachment.filename, "output.txt");
        let full = String::from_utf8(attachment.bytes).expect("utf-8");
        assert!(
            full.contains(&stdout),
            "the attachment holds every kept byte"
        );
        // The LLM text fits its budget and keeps stderr too.
        assert!(out.text.chars().count() <= 8100, "{}", out.text.len());
        assert!(out.text.contains("stderr:\nwarning"));
    }

    #[test]
    fn dropped_bytes_are_reported() {
        let mut result = outcome(Exit::Code(0), "aaaa", "");
        result.stdout.dropped = 10_000_000;
        let out = render("yes", &result, &budgets(8000, 1800));
        assert_eq!(out.summary, "exit status 0, 1 line, 9.5 MiB not shown");
        assert!(
            out.text.contains("[10000000 bytes more not shown]"),
            "{}",
            out.text
        );
        assert!(out.chat.contains("9.5 MiB more output was not kept"));
    }

    #[test]
    fn a_signal_is_reported_as_such() {
        let out = render(
            "sleep 9",
            &outcome(Exit::Signal(9), "", ""),
            &budgets(100, 100),
        );
        assert_eq!(out.summary, "killed by signal 9, 0 lines");
        assert!(out.chat.contains("(no output)"));
    }

    #[test]
    fn sharing_room_favours_neither_stream() {
        assert_eq!(share(100, 10, 20), (10, 20));
        assert_eq!(share(100, 10, 500), (10, 90));
        assert_eq!(share(100, 500, 10), (90, 10));
        assert_eq!(share(100, 500, 500), (50, 50));
    }
}
