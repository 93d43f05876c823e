//! MySQL, MariaDB and SQLite forms that sqlparser cannot read, rewritten on their tokens
//! into a form it reads that does the same thing, so that the parsed path judges them in
//! full. Only a `Safe` verdict on the rewritten form is used (`assess.rs`): any other
//! verdict, or a rewritten form that still does not parse, leaves the original text to
//! the unparsed path and its floor, so a rewrite can let nothing through that the parsed
//! path would not.
//!
//! The forms, each the same statement to the engine:
//! - MySQL 5 / MariaDB `EXPLAIN EXTENDED stmt` and `EXPLAIN PARTITIONS stmt`: the plan
//!   with extra columns or notes, like `EXPLAIN stmt` (the words are gone in MySQL 8,
//!   where the text is a syntax error either way).
//! - MariaDB `ANALYZE [FORMAT=JSON] stmt`: runs the statement and reports its plan with
//!   what running it measured, as `EXPLAIN ANALYZE stmt` does, which the parsed path
//!   judges by the statement it runs. Not `ANALYZE TABLE` (nor `ANALYZE LOCAL TABLE`),
//!   which writes statistics and which sqlparser reads as what it is.
//! - MySQL `DO expr[, ...]`: evaluates the expressions and drops the values, as `SELECT`
//!   does while returning them. (`DO` in PostgreSQL runs a code block: never rewritten.)
//! - SQLite `x [NOT] IN table` and `x [NOT] IN table_function(args)`: the same as
//!   `x IN (SELECT * FROM table)` and `x IN (SELECT * FROM table_function(args))`
//!   (SQLite's documentation of the IN operator).

use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::core::tools::SqlDialect;

use super::unparsed::is_keyword;

/// The words a statement that `EXPLAIN EXTENDED` or MariaDB's `ANALYZE` can take starts
/// with. Not `TABLE`: `ANALYZE TABLE t` is the statistics statement.
const EXPLAINABLE_STARTS: &[&str] = &["SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "REPLACE"];

/// `tokens` (whitespace and comments left out) rewritten into a form sqlparser reads, with
/// a note of what was read how; `None` when no rewrite applies.
pub(super) fn readable_form(
    tokens: &[TokenWithSpan],
    dialect: SqlDialect,
) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    match dialect {
        SqlDialect::Mysql => explain_extended(tokens)
            .or_else(|| analyze_statement(tokens))
            .or_else(|| do_statement(tokens)),
        SqlDialect::Sqlite => in_table(tokens),
        SqlDialect::Postgres => None,
    }
}

fn word(text: &str) -> TokenWithSpan {
    TokenWithSpan::wrap(Token::make_keyword(text))
}

fn starts_an_explainable(token: Option<&TokenWithSpan>) -> bool {
    token.is_some_and(|t| {
        t.token == Token::LParen || EXPLAINABLE_STARTS.iter().any(|w| is_keyword(&t.token, w))
    })
}

/// `EXPLAIN|DESCRIBE|DESC EXTENDED|PARTITIONS stmt` → `EXPLAIN stmt`.
fn explain_extended(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let [first, second, rest @ ..] = tokens else {
        return None;
    };
    let explains = ["EXPLAIN", "DESCRIBE", "DESC"]
        .iter()
        .any(|w| is_keyword(&first.token, w));
    let extra = is_keyword(&second.token, "EXTENDED") || is_keyword(&second.token, "PARTITIONS");
    if !(explains && extra && starts_an_explainable(rest.first())) {
        return None;
    }
    let mut rewritten = vec![word("EXPLAIN")];
    rewritten.extend_from_slice(rest);
    Some((
        rewritten,
        "read as EXPLAIN, whose plan EXTENDED or PARTITIONS only annotates",
    ))
}

/// MariaDB `ANALYZE [FORMAT = name] stmt` → `EXPLAIN ANALYZE stmt`.
fn analyze_statement(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let [first, rest @ ..] = tokens else {
        return None;
    };
    if !is_keyword(&first.token, "ANALYZE") {
        return None;
    }
    let rest = match rest {
        [format, eq, name, statement @ ..]
            if is_keyword(&format.token, "FORMAT")
                && eq.token == Token::Eq
                && matches!(name.token, Token::Word(_)) =>
        {
            statement
        }
        statement => statement,
    };
    if !starts_an_explainable(rest.first()) {
        return None;
    }
    let mut rewritten = vec![word("EXPLAIN"), word("ANALYZE")];
    rewritten.extend_from_slice(rest);
    Some((
        rewritten,
        "MariaDB's ANALYZE stmt, read as EXPLAIN ANALYZE: it runs the statement",
    ))
}

/// MySQL `DO expr[, ...]` → `SELECT expr[, ...]`.
fn do_statement(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let [first, rest @ ..] = tokens else {
        return None;
    };
    if !is_keyword(&first.token, "DO") || rest.first().is_none_or(opens_a_code_block) {
        return None;
    }
    let mut rewritten = vec![word("SELECT")];
    rewritten.extend_from_slice(rest);
    Some((
        rewritten,
        "DO evaluates its expressions as SELECT does, and drops the values",
    ))
}

/// `$$` or `$name$` after `DO`: PostgreSQL's code block sent to the wrong engine, left to
/// the floor rather than read as MySQL's `$`-names.
fn opens_a_code_block(token: &TokenWithSpan) -> bool {
    match &token.token {
        Token::DollarQuotedString(_) | Token::Placeholder(_) => true,
        Token::Word(word) => word.value.starts_with('$'),
        _ => false,
    }
}

/// SQLite `IN [schema.]name` and `IN [schema.]name(args)` → `IN (SELECT * FROM ...)`.
fn in_table(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let mut rewritten = Vec::with_capacity(tokens.len() + 8);
    let mut changed = false;
    let mut at = 0;
    while at < tokens.len() {
        rewritten.push(tokens[at].clone());
        if is_keyword(&tokens[at].token, "IN")
            && let Some(end) = table_operand_end(tokens, at + 1)
        {
            rewritten.extend([
                TokenWithSpan::wrap(Token::LParen),
                word("SELECT"),
                TokenWithSpan::wrap(Token::Mul),
                word("FROM"),
            ]);
            rewritten.extend_from_slice(&tokens[at + 1..end]);
            rewritten.push(TokenWithSpan::wrap(Token::RParen));
            changed = true;
            at = end;
            continue;
        }
        at += 1;
    }
    changed.then_some((
        rewritten,
        "x IN table read as x IN (SELECT * FROM table), which SQLite says it means",
    ))
}

/// Where the `[schema.]name[(args)]` that starts at `start` ends (one past its last
/// token), or `None` if no such operand starts there.
fn table_operand_end(tokens: &[TokenWithSpan], start: usize) -> Option<usize> {
    let mut at = start;
    loop {
        if !matches!(tokens.get(at)?.token, Token::Word(_)) {
            return None;
        }
        at += 1;
        match tokens.get(at).map(|t| &t.token) {
            Some(Token::Period) => at += 1,
            Some(Token::LParen) => return closing_paren(tokens, at).map(|close| close + 1),
            _ => return Some(at),
        }
    }
}

/// The index of the `)` that closes the `(` at `open`.
fn closing_paren(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (index, token) in tokens.iter().enumerate().skip(open) {
        match token.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}
