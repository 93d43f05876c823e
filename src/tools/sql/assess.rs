//! The SQL assessor: what one SQL text would do, judged on sqlparser's reading of it in the
//! target engine's own dialect (never GenericDialect, never prefix matching).
//!
//! - [`parsed`]: statements sqlparser could read — the normal path.
//! - [`unparsed`]: text it could not read (or too long to read safely): destructive when
//!   its tokens carry a destructive keyword or function, and never safe, but for PostgreSQL
//!   queries that [`by_tokens`] reads as plain reads (sqlparser's gaps in PostgreSQL's
//!   grammar; why this and not PostgreSQL's own parser is said there).
//! - [`rewrite`]: MySQL, MariaDB and SQLite forms the parser cannot read (`EXPLAIN
//!   EXTENDED`, MariaDB's `ANALYZE SELECT`, `DO`, SQLite's `x IN table`), handed to it
//!   again written in a form it reads that does the same; only a safe verdict on that form
//!   counts, anything else keeps the unparsed path's.
//! - [`pragma`]: SQLite's read-only pragmas, shared by both paths.
//! - [`functions`]: which functions are read-only built-ins (an allow-list per engine) and
//!   which have effects.
//! - [`escapes`]: PostgreSQL's `U&"..."` identifiers, decoded before parsing so a function
//!   is judged by the name the server will call; and its `name := value` arguments, read as
//!   the `name => value` they are ([`named_argument_arrows`]).
//! - [`keywords`]: PostgreSQL's keywords, for the token reader.
//!
//! The verdicts, as the gate uses them: `Safe` may run without asking, so it is given only
//! to exactly one statement that only reads; `Destructive` always needs a person, whatever
//! the LLM says; `Unknown` needs a person unless the LLM vouches for it; `Forbidden` (a name
//! the operator denies) never runs. The engine facts behind the rules are stated where each
//! rule is: `parsed.rs`, `functions.rs`, `pragma.rs`, and the executors' walls in `execute/`.

mod by_tokens;
mod escapes;
mod functions;
pub(crate) use functions::in_sqlite_engine;
mod keywords;
mod parsed;
mod pragma;
mod rewrite;
mod unparsed;

#[cfg(test)]
mod tests;

use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, TokenizerError, Whitespace};

use crate::core::risk::Assessment;
use crate::core::tools::SqlDialect;

/// The most tokens (not counting whitespace and comments) handed to the parser.
///
/// sqlparser limits recursion while parsing, but builds long operator chains (`1+1+...`,
/// `SELECT 1 UNION SELECT 1 ...`) as left-deep trees in a loop; visiting, printing or
/// dropping such a tree then recurses once per link. On a 2 MiB thread stack (a test thread,
/// a tokio worker) a debug build overflows between 6,000 and 10,000 `UNION` links and
/// between 15,000 and 20,000 `+` links; a stack overflow aborts the whole bot. An expression
/// link takes at least one token (a postfix `!`) and a `UNION` link three, so no tree built
/// from this many tokens gets near those depths. Longer text is never safe: it is only
/// scanned for destructive tokens and denied names.
const MAX_TOKENS: usize = 4_000;

/// Operator rules for SQL, from `[tools.execute_sql]`.
#[derive(Debug, Clone, Default)]
pub struct SqlRules {
    /// Function names (lower case) the operator vouches for although they are on the
    /// built-in side-effect list.
    pub allow_functions: Vec<String>,
    /// Table or function names (lower case) no statement may touch.
    pub deny_names: Vec<String>,
}

impl SqlRules {
    pub fn new(allow: &[String], deny: &[String]) -> Self {
        Self {
            allow_functions: allow.iter().map(|s| s.trim().to_lowercase()).collect(),
            deny_names: deny.iter().map(|s| s.trim().to_lowercase()).collect(),
        }
    }

    /// Whether a name (one part, quotes already removed) is one the operator forbids.
    fn denies(&self, name: &str) -> bool {
        !self.deny_names.is_empty() && self.deny_names.contains(&name.to_lowercase())
    }

    /// Whether the operator vouches for a function (its lower-cased last name part).
    fn allows_function(&self, lower: &str) -> bool {
        self.allow_functions.iter().any(|allowed| allowed == lower)
    }
}

/// Judges one SQL text in a dialect.
pub fn assess_sql(sql: &str, dialect: SqlDialect, rules: &SqlRules) -> Assessment {
    let parser_dialect = parser_dialect(dialect);
    let tokens = match tokenize(sql, dialect) {
        Ok(tokens) => tokens,
        Err(error) => return unparsed::assess_untokenizable(sql, &error, dialect, rules),
    };
    let count = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .count();
    if count > MAX_TOKENS {
        return unparsed::assess_too_long(&tokens, count, parser_dialect, rules);
    }
    let tokens = if dialect == SqlDialect::Postgres {
        match postgres_tokens(tokens) {
            Ok(tokens) => tokens,
            Err(problem) => {
                let tokens = Tokenizer::new(parser_dialect, sql)
                    .tokenize_with_location()
                    .unwrap_or_default();
                let error = ParserError::TokenizerError(problem);
                return unparsed::assess_unparsed(&tokens, &error, parser_dialect, dialect, rules);
            }
        }
    } else {
        tokens
    };
    match parse_all(parser_dialect, tokens) {
        Ok(statements) => parsed::assess_statements(&statements, dialect, rules),
        Err(error) => {
            // The parser consumed the tokens; tokenizing again costs only on this rare path.
            // They were read once already, so neither step fails here.
            let tokens = tokenize(sql, dialect).unwrap_or_default();
            let tokens = if dialect == SqlDialect::Postgres {
                postgres_tokens(tokens).unwrap_or_default()
            } else {
                tokens
            };
            if let Some(safe) = assess_rewritten(&tokens, parser_dialect, dialect, rules) {
                return safe;
            }
            unparsed::assess_unparsed(&tokens, &error, parser_dialect, dialect, rules)
        }
    }
}

/// Parses every token, or says where the parser stopped.
fn parse_all(
    parser_dialect: &dyn Dialect,
    tokens: Vec<TokenWithSpan>,
) -> Result<Vec<sqlparser::ast::Statement>, ParserError> {
    let mut parser = Parser::new(parser_dialect).with_tokens_with_locations(tokens);
    let statements = parser.parse_statements()?;
    // `parse_statements` also stops, without an error, at an `END` after a statement (the
    // end of a `BEGIN ... END` block): `SELECT 1 end; DROP TABLE t` came back as just
    // `SELECT 1`. Text it did not read is never judged by what it did read.
    match parser.peek_token_ref() {
        rest if rest.token == Token::EOF => Ok(statements),
        rest => Err(ParserError::ParserError(format!(
            "the parser stopped at {} before the end of the text",
            rest.token
        ))),
    }
}

/// The verdict on text the parser could not read, when [`rewrite`] turns it into a form
/// the parser reads and that form is safe; `None` otherwise, for the unparsed path.
fn assess_rewritten(
    tokens: &[TokenWithSpan],
    parser_dialect: &dyn Dialect,
    dialect: SqlDialect,
    rules: &SqlRules,
) -> Option<Assessment> {
    let significant: Vec<TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .cloned()
        .collect();
    let (rewritten, how) = rewrite::readable_form(&significant, dialect)?;
    let statements = parse_all(parser_dialect, rewritten).ok()?;
    match parsed::assess_statements(&statements, dialect, rules) {
        Assessment::Safe(reason) => Some(Assessment::Safe(format!("{how}; {reason}"))),
        _ => None,
    }
}

/// The tokens of `sql` in `dialect`, with MariaDB's executable comments opened (below).
fn tokenize(sql: &str, dialect: SqlDialect) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    let parser_dialect = parser_dialect(dialect);
    let tokens = Tokenizer::new(parser_dialect, sql).tokenize_with_location()?;
    if dialect != SqlDialect::Mysql {
        return Ok(tokens);
    }
    let mut opened = Vec::with_capacity(tokens.len());
    for token in tokens {
        match &token.token {
            Token::Whitespace(Whitespace::MultiLineComment(comment))
                if comment.starts_with("M!") =>
            {
                opened.extend(executable_comment(parser_dialect, comment, &token)?);
            }
            _ => opened.push(token),
        }
    }
    Ok(opened)
}

/// The tokens of a MariaDB executable comment, `/*M![version] code */`, which MariaDB runs
/// as code (when it is at least that version) and MySQL skips. sqlparser opens MySQL's
/// own `/*![version] code */` this way but keeps `/*M!` a comment, which would hide its
/// code from the check: `SELECT 1 /*M! INTO OUTFILE '/tmp/x' */` read as `SELECT 1`. So
/// the code is read the way sqlparser reads MySQL's form: the version's digits dropped,
/// the rest tokenized on its own (a string or comment cannot run past the comment's end).
fn executable_comment(
    parser_dialect: &dyn Dialect,
    comment: &str,
    token: &TokenWithSpan,
) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    let code = comment["M!".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    let tokens = Tokenizer::new(parser_dialect, code).tokenize_with_location()?;
    let nested = tokens.iter().any(|t| {
        matches!(&t.token, Token::Whitespace(Whitespace::MultiLineComment(c)) if c.starts_with('!') || c.starts_with("M!"))
    });
    if nested {
        return Err(TokenizerError {
            message: "an executable comment inside an executable comment".to_owned(),
            location: token.span.start,
        });
    }
    Ok(tokens
        .into_iter()
        .map(|t| TokenWithSpan::new(t.token, token.span))
        .collect())
}

/// PostgreSQL's tokens as the parser should read them: `U&"..."` names decoded, and
/// `name := value` arguments written `name => value`.
fn postgres_tokens(tokens: Vec<TokenWithSpan>) -> Result<Vec<TokenWithSpan>, String> {
    let mut tokens = escapes::decode_unicode_identifiers(tokens)?;
    named_argument_arrows(&mut tokens);
    Ok(tokens)
}

/// Rewrites PostgreSQL's `:=` as `=>`.
///
/// In PostgreSQL's SQL grammar both mean one thing only: a named argument of a function
/// call (`make_interval(days := 1)`); its `:=` assignment belongs to PL/pgSQL, whose
/// statements never reach the server as SQL text. sqlparser, though, reads `:=` inside an
/// argument list as an expression, MySQL's session-variable assignment `x := 1`, which the
/// assessor must refuse (it writes a variable in MySQL). Its PostgreSQL dialect reads `=>`
/// as the named argument it is, so the same call is handed over written that way, before
/// parsing; the fallback then needs nothing of its own. In any other place `:=` is a syntax
/// error to PostgreSQL either way.
fn named_argument_arrows(tokens: &mut [TokenWithSpan]) {
    for token in tokens {
        if token.token == Token::Assignment {
            token.token = Token::RArrow;
        }
    }
}

pub(super) fn parser_dialect(dialect: SqlDialect) -> &'static dyn Dialect {
    static POSTGRES: PostgreSqlDialect = PostgreSqlDialect {};
    static MYSQL: MySqlDialect = MySqlDialect {};
    static SQLITE: SQLiteDialect = SQLiteDialect {};
    match dialect {
        SqlDialect::Postgres => &POSTGRES,
        SqlDialect::Mysql => &MYSQL,
        SqlDialect::Sqlite => &SQLITE,
    }
}

/// The order of [`Assessment::worst`]: safe < unknown < destructive < forbidden.
fn rank(assessment: &Assessment) -> u8 {
    match assessment {
        Assessment::Safe(_) => 0,
        Assessment::Unknown(_) => 1,
        Assessment::Destructive(_) => 2,
        Assessment::Forbidden(_) => 3,
    }
}

/// The same verdict with a reworded reason.
fn with_reason(assessment: Assessment, reword: impl FnOnce(&str) -> String) -> Assessment {
    match assessment {
        Assessment::Safe(r) => Assessment::Safe(reword(&r)),
        Assessment::Unknown(r) => Assessment::Unknown(reword(&r)),
        Assessment::Destructive(r) => Assessment::Destructive(reword(&r)),
        Assessment::Forbidden(r) => Assessment::Forbidden(reword(&r)),
    }
}
