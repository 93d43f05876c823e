//! The line editor, for a console whose stdin and stdout are both a terminal: `rustyline`
//! gives the usual editing keys (arrows, Home/End, Ctrl-A/E/W/U, ...) and the session's
//! history (up and down). History is kept in memory only, never written to a file: a message
//! can hold what should not be stored.
//!
//! Lines go to the same [`Router`] as piped input's. What the console prints while a line
//! is being typed goes through the editor's printer, which prints it above the line and
//! draws the line again, so output and typing do not mix. Ctrl-D ends the input as the end
//! of piped input does: an open prompt is cancelled, queued messages still run. Ctrl-C
//! (which the editor reads as a key: the terminal is in raw mode while it runs) goes to
//! [`Router::interrupt`] with whether the line was empty: it interrupts a turn under way,
//! ends the input at an empty line between turns, and otherwise discards the line.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Config, Editor, ExternalPrinter, Helper};

use super::{ConsoleError, Router};

/// The console's editor: rustyline with a [`LineWatch`].
type LineEditor = Editor<LineWatch, DefaultHistory>;

/// What the editor shows before the line being typed.
const PROMPT: &str = "> ";

/// Lines of history kept for the session.
const HISTORY_LINES: usize = 1_000;

/// Starts the editor on its own thread, reading into `router`; returns where the console's
/// output must go while it runs.
pub(super) fn start(router: Arc<Router>) -> Result<Box<dyn Write + Send>, ReadlineError> {
    let config = Config::builder()
        .max_history_size(HISTORY_LINES)?
        .auto_add_history(false)
        .build();
    let mut editor = LineEditor::with_config(config)?;
    let watch = LineWatch::default();
    editor.set_helper(Some(watch.clone()));
    let printer = editor.create_external_printer()?;
    std::thread::spawn(move || read_lines(editor, &watch, &router));
    Ok(Box::new(PrintAbove {
        printer,
        pending: Vec::new(),
    }))
}

/// Reads edited lines into `router` until Ctrl-D, Ctrl-C at an empty line between turns,
/// or an error.
fn read_lines(mut editor: LineEditor, watch: &LineWatch, router: &Router) {
    let mut number = 0usize;
    loop {
        watch.empty.store(true, Ordering::Relaxed);
        match editor.readline(PROMPT) {
            Ok(line) => {
                number += 1;
                remember(&mut editor, &line);
                router.deliver(line);
            }
            Err(ReadlineError::Interrupted) => {
                if router.interrupt(watch.empty.load(Ordering::Relaxed)) {
                    return;
                }
            }
            Err(ReadlineError::Eof) => return router.close(None),
            Err(e) => {
                return router.close(Some(ConsoleError::Input {
                    line: number,
                    reason: e.to_string(),
                }));
            }
        }
    }
}

/// Whether the line being typed is empty, for Ctrl-C: rustyline asks its helper's hinter
/// after every change to the line (and offers nothing else that sees the line at Ctrl-C).
/// It never hints.
#[derive(Clone)]
struct LineWatch {
    empty: Arc<AtomicBool>,
}

impl Default for LineWatch {
    fn default() -> Self {
        Self {
            empty: Arc::new(AtomicBool::new(true)),
        }
    }
}

impl Hinter for LineWatch {
    type Hint = String;

    fn hint(&self, line: &str, _pos: usize, _ctx: &rustyline::Context<'_>) -> Option<String> {
        self.empty.store(line.is_empty(), Ordering::Relaxed);
        None
    }
}

impl Completer for LineWatch {
    type Candidate = String;
}

impl Highlighter for LineWatch {}

impl Validator for LineWatch {}

impl Helper for LineWatch {}

/// Adds a line to the session's history, unless it is blank or repeats the last one.
fn remember<H: Helper>(editor: &mut Editor<H, DefaultHistory>, line: &str) {
    if line.trim().is_empty() {
        return;
    }
    if let Err(e) = editor.add_history_entry(line) {
        tracing::debug!(error = %e, "a line could not be added to the history");
    }
}

/// Output written while the editor runs: each flush prints the whole lines written, above
/// the line being typed (the printer ends every print with a line break, so a line still
/// being written, such as a streamed answer, waits for its end).
struct PrintAbove<P> {
    printer: P,
    pending: Vec<u8>,
}

impl<P: ExternalPrinter> Write for PrintAbove<P> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let Some(end) = self.pending.iter().rposition(|b| *b == b'\n') else {
            return Ok(());
        };
        let rest = self.pending.split_off(end + 1);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        self.printer
            .print(text)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Printed(Vec<String>);

    impl ExternalPrinter for &mut Printed {
        fn print(&mut self, msg: String) -> rustyline::Result<()> {
            self.0.push(msg);
            Ok(())
        }
    }

    #[test]
    fn output_is_printed_above_the_line_one_flush_at_a_time() {
        let mut printed = Printed::default();
        {
            let mut out = PrintAbove {
                printer: &mut printed,
                pending: Vec::new(),
            };
            write!(out, "tool call: ").expect("write");
            writeln!(out, "list .").expect("write");
            out.flush().expect("flush");
            out.flush().expect("an empty flush prints nothing");
            writeln!(out, "confirm? [y/N]").expect("write");
            out.flush().expect("flush");
            // A line still being written waits for its end.
            write!(out, "riskgate: Two").expect("write");
            out.flush().expect("flush");
            writeln!(out, " files.").expect("write");
            out.flush().expect("flush");
        }
        assert_eq!(
            printed.0,
            [
                "tool call: list .\n",
                "confirm? [y/N]\n",
                "riskgate: Two files.\n"
            ]
        );
    }

    #[test]
    fn the_history_keeps_lines_typed_but_not_blank_ones() {
        let config = Config::builder().auto_add_history(false).build();
        let mut editor = rustyline::DefaultEditor::with_config(config).expect("an editor");
        for line in ["select 1", "  ", "", "/status", "/status"] {
            remember(&mut editor, line);
        }
        let history = editor.history();
        assert_eq!(rustyline::history::History::len(history), 2);
        assert_eq!(history[0], "select 1");
        assert_eq!(history[1], "/status");
    }
}
