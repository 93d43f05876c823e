//! Parsing with brush-parser, behind guards.
//!
//! brush-parser is a recursive-descent (PEG) parser, so it has two failure modes besides a
//! syntax error that an assessor must survive: it overflows the stack on deeply nested input
//! (an abort, which no `catch_unwind` can stop), and it panics on a few number overflows
//! (`99999999999>x`, `~99999999999999999999`, `{1..99999999999999999999}`). The first is
//! prevented by measuring nesting before parsing; the second is caught. Its backtracking is
//! also exponential on unclosed constructs, which [`structure::unclosed`] refuses first.
//! Either way the caller gets a [`ParseFailure`] and treats the text as something that
//! cannot be shown harmless.

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ast::Program;
use brush_parser::word::WordPieceWithSource;
use brush_parser::{Parser, ParserOptions};

use super::structure;

/// Lines longer than this are not parsed at all.
pub(super) const MAX_SCRIPT_BYTES: usize = 64 * 1024;

/// How deeply `(`, `{`, `[` and `if`/`case`/loop keywords may nest before parsing is refused.
/// brush-parser overflows a 2 MiB stack (the size of test and tokio worker threads) at about
/// 90 nested function bodies in a debug build; 40 leaves room for the walk that follows.
pub(super) const MAX_NESTING: usize = 40;

/// How deeply `(` alone may nest. brush-parser's backtracking doubles with each `(` around
/// a syntax error: `(` x 22, `&;`, `)` x 22 (165 bytes as the fuzzer found it) took minutes,
/// 18 levels 0.1 s, 12 levels 2 ms in an optimised build (found by fuzz/shell_assess).
pub(super) const MAX_PAREN_NESTING: usize = 12;

/// Why a text was not turned into a syntax tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ParseFailure {
    TooLong,
    TooDeep,
    Syntax(String),
    Panicked,
}

impl ParseFailure {
    /// What went wrong, without the conclusion [`Self::reason`] draws.
    pub(super) fn detail(&self) -> String {
        match self {
            Self::TooLong => format!("it is longer than {} KiB", MAX_SCRIPT_BYTES / 1024),
            Self::TooDeep => "it nests too deeply".to_owned(),
            Self::Syntax(error) => error.clone(),
            Self::Panicked => "the parser failed on it".to_owned(),
        }
    }

    /// A sentence for a person, saying why the text cannot be shown to be harmless.
    pub(super) fn reason(&self) -> String {
        match self {
            Self::TooLong => format!(
                "the command is longer than {} KiB, too long to check, so it cannot be shown to be harmless",
                MAX_SCRIPT_BYTES / 1024
            ),
            Self::TooDeep => format!(
                "the command nests more than {MAX_NESTING} levels deep, or more than {MAX_PAREN_NESTING} parentheses, too deep to check, so it cannot be shown to be harmless"
            ),
            Self::Syntax(error) => format!(
                "the line could not be parsed ({error}), so it cannot be shown to be harmless"
            ),
            Self::Panicked => {
                "the line could not be parsed (the parser failed on it), so it cannot be shown to be harmless"
                    .to_owned()
            }
        }
    }
}

/// Bash mode: extended globs on, not POSIX, tilde expansion at word starts.
pub(super) fn options() -> ParserOptions {
    ParserOptions::default()
}

/// sh mode, as close to dash (`/bin/sh`, which runs lines the executor cannot plan) as
/// brush-parser gets: no `[[`, `((`, `&>`, `|&`, `<<<`, arrays or extended globs.
fn sh_options() -> ParserOptions {
    ParserOptions {
        sh_mode: true,
        posix_mode: true,
        enable_extended_globbing: false,
        ..ParserOptions::default()
    }
}

/// `line` with each span (from and to a character, as the parser counts) replaced by its
/// text; `None` where spans overlap, or where one's text in the line is not what `fits`
/// expects (the parser's place for it was not exact).
pub(super) fn replace_spans(
    line: &str,
    mut spans: Vec<(usize, usize, String)>,
    fits: impl Fn(&str) -> bool,
) -> Option<String> {
    spans.sort_by_key(|span| span.0);
    let mut written = String::with_capacity(line.len() + 64);
    let mut from = 0;
    for (start, end, text) in spans {
        let (start, end) = (byte_offset(line, start)?, byte_offset(line, end)?);
        if start < from || !fits(line.get(start..end)?) {
            return None;
        }
        written.push_str(line.get(from..start)?);
        written.push_str(&text);
        from = end;
    }
    written.push_str(line.get(from..)?);
    Some(written)
}

/// The byte offset in `text` of the character at `chars` (the parser counts positions in
/// characters); its length for the position just after its end.
pub(super) fn byte_offset(text: &str, chars: usize) -> Option<usize> {
    text.char_indices()
        .map(|(at, _)| at)
        .chain(std::iter::once(text.len()))
        .nth(chars)
}

/// Parses a whole script (a command line, a `sh -c` script, a here-document fed to a shell)
/// as bash does.
pub(super) fn parse_script(text: &str) -> Result<Program, ParseFailure> {
    parse_with(text, &options())
}

/// The script as dash would read it, when that can differ from bash's reading in a way
/// that runs more: `cmd &>/dev/null other` is `cmd &` then `>/dev/null other` in dash,
/// `((cmd))` is two nested subshells, `[[ a > b ]]` runs `[[` with a real redirection, and
/// dash has no `$'...'` quoting (it reads `$` and then a plain quote; writing `X'` instead of
/// `$'` gives brush-parser the same quote structure). `None` when the readings cannot differ
/// that way, or when the script is not valid sh (dash would then refuse it too).
pub(super) fn parse_as_dash(text: &str) -> Option<Program> {
    if !["&>", "((", "[[", "$'"]
        .iter()
        .any(|marker| text.contains(marker))
    {
        return None;
    }
    parse_with(&text.replace("$'", "X'"), &sh_options()).ok()
}

fn parse_with(text: &str, options: &ParserOptions) -> Result<Program, ParseFailure> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Err(ParseFailure::TooLong);
    }
    if nesting(text) > MAX_NESTING || paren_nesting(text) > MAX_PAREN_NESTING {
        return Err(ParseFailure::TooDeep);
    }
    if let Some(problem) = structure::unclosed(text) {
        return Err(ParseFailure::Syntax(problem.to_owned()));
    }
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        Parser::new(text.as_bytes(), options).parse_program()
    }));
    match parsed {
        Ok(Ok(program)) => Ok(program),
        Ok(Err(error)) => Err(ParseFailure::Syntax(error.to_string())),
        Err(_) => Err(ParseFailure::Panicked),
    }
}

/// Splits one word (as written, quotes included) into its pieces.
pub(super) fn parse_word(raw: &str) -> Result<Vec<WordPieceWithSource>, ParseFailure> {
    guarded(raw, |options| brush_parser::word::parse(raw, options))
}

/// Splits a here-document body into literal text and expansions.
pub(super) fn parse_heredoc(body: &str) -> Result<Vec<WordPieceWithSource>, ParseFailure> {
    if let Some(problem) = structure::unclosed_in_heredoc(body) {
        return Err(ParseFailure::Syntax(problem.to_owned()));
    }
    guarded(body, |options| {
        brush_parser::word::parse_heredoc(body, options)
    })
}

fn guarded<T, E: std::fmt::Display>(
    text: &str,
    parse: impl FnOnce(&ParserOptions) -> Result<T, E>,
) -> Result<T, ParseFailure> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Err(ParseFailure::TooLong);
    }
    if nesting(text) > MAX_NESTING || paren_nesting(text) > MAX_PAREN_NESTING {
        return Err(ParseFailure::TooDeep);
    }
    let options = options();
    match catch_unwind(AssertUnwindSafe(|| parse(&options))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(ParseFailure::Syntax(error.to_string())),
        Err(_) => Err(ParseFailure::Panicked),
    }
}

/// The deepest running nesting of `(` alone, counted as [`nesting`] counts.
pub(super) fn paren_nesting(text: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    for byte in text.bytes() {
        match byte {
            b'(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The deepest running nesting of the text, counted without regard to quoting (so it can
/// only over-count): `(`, `{`, `[` and the words `if`, `case`, `for`, `while`, `until`,
/// `select` open a level; `)`, `}`, `]`, `fi`, `esac`, `done` close one. The count never goes
/// below zero, so the nesting of any part of the text is at most that of the whole.
pub(super) fn nesting(text: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut word_start: Option<usize> = None;
    let bytes = text.as_bytes();
    let close_word = |start: usize, end: usize, depth: &mut usize| match &bytes[start..end] {
        b"if" | b"case" | b"for" | b"while" | b"until" | b"select" => *depth += 1,
        b"fi" | b"esac" | b"done" => *depth = depth.saturating_sub(1),
        _ => {}
    };
    for (index, &byte) in bytes.iter().enumerate() {
        if byte.is_ascii_alphanumeric() || byte == b'_' {
            word_start.get_or_insert(index);
            continue;
        }
        if let Some(start) = word_start.take() {
            close_word(start, index, &mut depth);
        }
        match byte {
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        deepest = deepest.max(depth);
    }
    if let Some(start) = word_start {
        close_word(start, bytes.len(), &mut depth);
    }
    deepest.max(depth)
}
