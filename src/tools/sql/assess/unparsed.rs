//! Judging SQL that sqlparser could not read, or that is too long to read safely.
//!
//! Such text is never safe and, since nothing in it can be vouched for, it is held at the
//! destructive floor: the model's `low` cannot run it, only a person can. There are two
//! narrow exceptions, recognised on the token stream (never on the raw text): `TABLE
//! [schema.]name` and SQLite's read-only `PRAGMA` forms, which sqlparser 0.63 does not parse.
//! The tokens are still scanned for destructive keywords and functions outside strings and
//! comments, and inside dollar-quoted bodies (PostgreSQL `DO $$ ... $$`), whose strings are
//! scanned too because PL/pgSQL can `EXECUTE` them, so the reason names what was found.

use sqlparser::dialect::Dialect;
use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, TokenizerError};

use crate::core::risk::Assessment;
use crate::core::tools::SqlDialect;

use super::by_tokens;
use super::functions::{FunctionRisk, side_effect};
use super::pragma::{PragmaArgument, assess_pragma};
use super::{MAX_TOKENS, SqlRules};

/// Words that start or carry a statement that destroys or overwrites something.
const DESTRUCTIVE_KEYWORDS: &[&str] = &[
    "DROP", "DELETE", "TRUNCATE", "UPDATE", "ALTER", "GRANT", "REVOKE", "MERGE", "REPLACE", "KILL",
    "RENAME",
];

/// How deep dollar-quoted bodies inside bodies are opened.
const MAX_BODY_DEPTH: u8 = 4;

/// Judges text whose tokens are fine but which sqlparser could not parse.
pub(super) fn assess_unparsed(
    tokens: &[TokenWithSpan],
    error: &ParserError,
    parser_dialect: &dyn Dialect,
    dialect: SqlDialect,
    rules: &SqlRules,
) -> Assessment {
    let mut findings = Findings::default();
    scan_tokens(tokens, parser_dialect, rules, false, 0, &mut findings);
    if let Some(forbidden) = findings.forbidden() {
        return forbidden;
    }
    let significant = significant(tokens);
    if let Some(assessment) = pragma_by_tokens(&significant, dialect, rules) {
        return assessment;
    }
    if let Some(assessment) = table_by_tokens(&significant, dialect) {
        return assessment;
    }
    if dialect == SqlDialect::Mysql
        && let Some(assessment) = mysql_by_tokens(&significant)
    {
        return assessment;
    }
    let mut context = match error {
        ParserError::RecursionLimitExceeded => {
            "the SQL nests too deeply for the parser to check".to_owned()
        }
        ParserError::TokenizerError(message) | ParserError::ParserError(message) => {
            format!("the SQL could not be parsed as {dialect} ({message})")
        }
    };
    // PostgreSQL text in a form the parser does not know may still be a plain query, read
    // by its tokens. Not text that nests past the parser's limit (held at the floor like
    // all text built to exhaust a reader), nor text whose escapes could not be decoded (a
    // tokenizer error here): its names are not the ones the server will see.
    if dialect == SqlDialect::Postgres && matches!(error, ParserError::ParserError(_)) {
        match by_tokens::read_query(&significant, rules) {
            Ok(()) => {
                return Assessment::Safe(format!(
                    "{context}; read by its tokens instead, it is one query that only reads: \
                     no writing, locking or session word, and only built-in functions that \
                     only read"
                ));
            }
            Err(why) => {
                context = format!("{context}; read by its tokens, it is not a plain read: {why}")
            }
        }
    }
    findings.verdict(&context)
}

/// Judges text that has more tokens than the parser is trusted with ([`MAX_TOKENS`]).
pub(super) fn assess_too_long(
    tokens: &[TokenWithSpan],
    count: usize,
    parser_dialect: &dyn Dialect,
    rules: &SqlRules,
) -> Assessment {
    let mut findings = Findings::default();
    scan_tokens(tokens, parser_dialect, rules, false, 0, &mut findings);
    findings.forbidden().unwrap_or_else(|| {
        findings.verdict(&format!(
            "the SQL has {count} tokens, more than the {MAX_TOKENS} this check parses"
        ))
    })
}

/// Judges text that sqlparser cannot even split into tokens (an unterminated string or
/// comment, say). Strings and comments cannot be told apart, so every word counts.
pub(super) fn assess_untokenizable(
    sql: &str,
    error: &TokenizerError,
    dialect: SqlDialect,
    rules: &SqlRules,
) -> Assessment {
    let mut findings = Findings::default();
    scan_raw_words(sql, rules, &mut findings);
    findings.forbidden().unwrap_or_else(|| {
        findings.verdict(&format!(
            "the SQL could not be read as {dialect} ({})",
            error.message
        ))
    })
}

/// What the scans found, first of each kind.
#[derive(Debug, Default)]
struct Findings {
    /// A name the operator forbids.
    denied: Option<String>,
    /// What makes the text destructive (`DELETE`, `pg_terminate_backend()`).
    destructive: Option<String>,
}

impl Findings {
    fn forbidden(&self) -> Option<Assessment> {
        self.denied.as_ref().map(|name| {
            Assessment::Forbidden(format!("the SQL names {name}, which the operator forbids"))
        })
    }

    fn verdict(&self, context: &str) -> Assessment {
        match &self.destructive {
            Some(what) => Assessment::Destructive(format!(
                "{context}, and it contains {what}, which is destructive if it runs"
            )),
            // What the check cannot read, it cannot vouch for, and neither can the model's
            // `low`: a `DO` block, `SHUTDOWN` or a statement hidden in odd syntax would run
            // unseen. So it is held at the floor: only a person can let it run.
            None => Assessment::Destructive(format!(
                "{context}, and text the check cannot read never runs without a person's confirmation"
            )),
        }
    }

    fn deny(&mut self, name: &str, rules: &SqlRules) {
        if self.denied.is_none() && rules.denies(name) {
            self.denied = Some(name.to_owned());
        }
    }

    fn word(&mut self, word: &str, called: bool, rules: &SqlRules) {
        if self.destructive.is_some() {
            return;
        }
        // A no-break or zero-width character glued to a keyword makes it an identifier for
        // the tokenizer; some clients strip those characters, so look at the pieces too.
        for piece in word.split(is_invisible).filter(|piece| !piece.is_empty()) {
            if let Some(keyword) = DESTRUCTIVE_KEYWORDS
                .iter()
                .find(|keyword| piece.eq_ignore_ascii_case(keyword))
            {
                self.destructive = Some((*keyword).to_owned());
                return;
            }
            if called {
                let lower = piece.to_lowercase();
                if !rules.allows_function(&lower)
                    && matches!(side_effect(&lower, None), FunctionRisk::Destructive(_))
                {
                    self.destructive = Some(format!("a call to {lower}()"));
                    return;
                }
            }
        }
    }
}

/// Whitespace that SQL does not treat as whitespace, and invisible format characters.
pub(super) fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{FEFF}'
        )
}

fn scan_tokens(
    tokens: &[TokenWithSpan],
    parser_dialect: &dyn Dialect,
    rules: &SqlRules,
    in_body: bool,
    depth: u8,
    findings: &mut Findings,
) {
    for (index, token) in tokens.iter().enumerate() {
        match &token.token {
            Token::Word(word) => {
                findings.deny(&word.value, rules);
                if word.quote_style.is_none() {
                    let called = tokens[index + 1..]
                        .iter()
                        .find(|t| !matches!(t.token, Token::Whitespace(_)))
                        .is_some_and(|t| t.token == Token::LParen);
                    findings.word(&word.value, called, rules);
                }
            }
            Token::DollarQuotedString(body) => {
                scan_body(&body.value, parser_dialect, rules, depth, findings);
            }
            Token::SingleQuotedString(text)
            | Token::EscapedStringLiteral(text)
            | Token::NationalStringLiteral(text)
            | Token::DoubleQuotedString(text)
                if in_body =>
            {
                scan_body(text, parser_dialect, rules, depth, findings);
            }
            _ => {}
        }
    }
}

/// Scans code held in a string: a dollar-quoted body, or a string inside one.
fn scan_body(
    text: &str,
    parser_dialect: &dyn Dialect,
    rules: &SqlRules,
    depth: u8,
    findings: &mut Findings,
) {
    if depth >= MAX_BODY_DEPTH {
        scan_raw_words(text, rules, findings);
        return;
    }
    match Tokenizer::new(parser_dialect, text).tokenize_with_location() {
        Ok(tokens) => scan_tokens(&tokens, parser_dialect, rules, true, depth + 1, findings),
        Err(_) => scan_raw_words(text, rules, findings),
    }
}

/// The last resort when text cannot be tokenized: every run of letters, digits and `_` is
/// a word, wherever it stands. It only ever raises the verdict.
fn scan_raw_words(text: &str, rules: &SqlRules, findings: &mut Findings) {
    let is_word_char = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut rest = text;
    while let Some(start) = rest.find(is_word_char) {
        let after_start = &rest[start..];
        let end = after_start
            .find(|c: char| !is_word_char(c))
            .unwrap_or(after_start.len());
        let (word, after) = after_start.split_at(end);
        findings.deny(word, rules);
        findings.word(word, after.trim_start().starts_with('('), rules);
        rest = after;
    }
}

/// The tokens that are not whitespace or comments, without trailing semicolons.
fn significant(tokens: &[TokenWithSpan]) -> Vec<&Token> {
    let mut significant: Vec<&Token> = tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    while significant.last() == Some(&&Token::SemiColon) {
        significant.pop();
    }
    significant
}

pub(super) fn is_keyword(token: &Token, keyword: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword))
}

/// `[schema.]name` at the start of `tokens`: the name and the tokens after it.
fn object_name<'t>(tokens: &'t [&'t Token]) -> Option<(&'t str, &'t [&'t Token])> {
    match tokens {
        [Token::Word(_), Token::Period, Token::Word(name), rest @ ..]
        | [Token::Word(name), rest @ ..] => Some((name.value.as_str(), rest)),
        _ => None,
    }
}

/// SQLite `PRAGMA [schema.]name`, `PRAGMA [schema.]name(argument)` and
/// `PRAGMA [schema.]name = value`, exactly; anything else is left to the general rule.
fn pragma_by_tokens(
    tokens: &[&Token],
    dialect: SqlDialect,
    rules: &SqlRules,
) -> Option<Assessment> {
    let [first, rest @ ..] = tokens else {
        return None;
    };
    if !is_keyword(first, "PRAGMA") {
        return None;
    }
    let (name, rest) = object_name(rest)?;
    let value_text;
    let argument = match rest {
        [] => PragmaArgument::None,
        [Token::LParen, value, Token::RParen] => {
            value_text = single_value(value)?;
            PragmaArgument::Call(&value_text)
        }
        [Token::Eq, value] => {
            value_text = single_value(value)?;
            PragmaArgument::Assign(&value_text)
        }
        [
            Token::Eq,
            sign @ (Token::Minus | Token::Plus),
            value @ Token::Number(..),
        ] => {
            value_text = format!("{sign}{value}");
            PragmaArgument::Assign(&value_text)
        }
        _ => return None,
    };
    Some(assess_pragma(name, argument, dialect, rules))
}

/// A single word, number or string, as its text.
fn single_value(token: &Token) -> Option<String> {
    match token {
        Token::Word(word) => Some(word.value.clone()),
        Token::Number(number, _) => Some(number.clone()),
        Token::SingleQuotedString(text) | Token::DoubleQuotedString(text) => Some(text.clone()),
        _ => None,
    }
}

/// `TABLE [schema.]name` (PostgreSQL, MySQL 8): `SELECT * FROM name`, which sqlparser 0.63
/// does not parse.
fn table_by_tokens(tokens: &[&Token], dialect: SqlDialect) -> Option<Assessment> {
    if dialect == SqlDialect::Sqlite {
        return None;
    }
    let [first, rest @ ..] = tokens else {
        return None;
    };
    if !is_keyword(first, "TABLE") {
        return None;
    }
    match object_name(rest)? {
        (name, []) => Some(Assessment::Safe(format!(
            "TABLE {name} only reads the table, like SELECT * FROM {name}"
        ))),
        _ => None,
    }
}

/// MySQL and MariaDB statements sqlparser 0.63 does not parse, recognised exactly:
/// - `CHECKSUM TABLE t[, ...] [QUICK | EXTENDED]` only reads the tables to sum their rows;
/// - `HELP 'topic'` reads the server's help tables;
/// - `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] db` shows a database's definition;
/// - `CHECK TABLE` keeps the floor with its own reason: besides reading, it updates
///   MyISAM's key statistics, marks a table it finds damaged as corrupted (`FOR UPGRADE`:
///   as needing an upgrade), and on a damaged InnoDB page can stop the server, so a
///   person decides. (`REPAIR` and `OPTIMIZE` rebuild tables, and `ANALYZE TABLE` writes
///   statistics; sqlparser reads those, and they wait on the parsed path.)
fn mysql_by_tokens(tokens: &[&Token]) -> Option<Assessment> {
    let (first, second) = (*tokens.first()?, *tokens.get(1)?);
    if is_keyword(first, "CHECKSUM") && is_keyword(second, "TABLE") {
        return is_name_list(&tokens[2..]).then(|| {
            Assessment::Safe("CHECKSUM TABLE only reads the tables to sum their rows".to_owned())
        });
    }
    if is_keyword(first, "HELP") {
        return matches!(
            &tokens[1..],
            [Token::SingleQuotedString(_)] | [Token::Word(_)]
        )
        .then(|| Assessment::Safe("HELP only reads the server's help tables".to_owned()));
    }
    if is_keyword(first, "SHOW")
        && is_keyword(second, "CREATE")
        && tokens
            .get(2)
            .is_some_and(|t| is_keyword(t, "DATABASE") || is_keyword(t, "SCHEMA"))
    {
        let rest = match &tokens[3..] {
            [if_, not, exists, rest @ ..]
                if is_keyword(if_, "IF")
                    && is_keyword(not, "NOT")
                    && is_keyword(exists, "EXISTS") =>
            {
                rest
            }
            rest => rest,
        };
        return matches!(rest, [Token::Word(_)]).then(|| {
            Assessment::Safe("SHOW CREATE DATABASE only shows a database's definition".to_owned())
        });
    }
    (is_keyword(first, "CHECK") && is_keyword(second, "TABLE")).then(|| {
        Assessment::Destructive(
            "CHECK TABLE does more than read: it updates MyISAM key statistics, marks a \
             damaged table as corrupted or as needing an upgrade, and a damaged InnoDB page \
             can stop the server, so a person decides"
                .to_owned(),
        )
    })
}

/// `[schema.]name[, ...]` with at most a trailing `QUICK` or `EXTENDED`.
fn is_name_list(tokens: &[&Token]) -> bool {
    let tokens = match tokens {
        [names @ .., last] if is_keyword(last, "QUICK") || is_keyword(last, "EXTENDED") => names,
        names => names,
    };
    let mut rest = tokens;
    loop {
        let Some((_, after)) = object_name(rest) else {
            return false;
        };
        match after {
            [] => return true,
            [Token::Comma, more @ ..] => rest = more,
            _ => return false,
        }
    }
}
