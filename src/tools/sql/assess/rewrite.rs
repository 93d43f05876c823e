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
//! - MariaDB `MATCH col AGAINST (...)`: `MATCH (col) AGAINST (...)`, which MySQL
//!   requires and MariaDB also reads.
//! - MariaDB `LIMIT ... ROWS EXAMINED n`: the statement without the clause, which only
//!   stops it early, so the rewritten form does at least as much.
//! - MySQL `CAST(x AS CHAR CHARACTER SET cs)`: `CAST(x AS CHAR)`; the clause names only
//!   the result's character set.
//! - MySQL `a MOD b`: the remainder, `a % b` (the function `MOD(a, b)` is read as it is).
//! - SQLite `x [NOT] IN table` and `x [NOT] IN table_function(args)`: the same as
//!   `x IN (SELECT * FROM table)` and `x IN (SELECT * FROM table_function(args))`
//!   (SQLite's documentation of the IN operator).

use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::core::tools::SqlDialect;

use super::unparsed::is_keyword;

/// The words a statement that `EXPLAIN EXTENDED` or MariaDB's `ANALYZE` can take starts
/// with. Not `TABLE`: `ANALYZE TABLE t` is the statistics statement.
const EXPLAINABLE_STARTS: &[&str] = &["SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "REPLACE"];

/// One rewrite: the tokens in the new form and a note of what was read how, or `None`.
type Rewrite = fn(&[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)>;

/// MySQL's and MariaDB's rewrites, in order: how the statement starts, then clauses
/// within it. Each applies to what the ones before it left.
const MYSQL: &[Rewrite] = &[
    explain_extended,
    analyze_statement,
    do_statement,
    match_without_parentheses,
    rows_examined,
    cast_character_set,
    mod_operator,
];

const SQLITE: &[Rewrite] = &[in_table];

/// `tokens` (whitespace and comments left out) rewritten into a form sqlparser reads, with
/// notes of what was read how; `None` when no rewrite applies.
pub(super) fn readable_form(
    tokens: &[TokenWithSpan],
    dialect: SqlDialect,
) -> Option<(Vec<TokenWithSpan>, String)> {
    let rewrites = match dialect {
        SqlDialect::Mysql => MYSQL,
        SqlDialect::Sqlite => SQLITE,
        SqlDialect::Postgres => return None,
    };
    let mut current = tokens.to_vec();
    let mut notes = Vec::new();
    for rewrite in rewrites {
        if let Some((rewritten, note)) = rewrite(&current) {
            current = rewritten;
            notes.push(note);
        }
    }
    (!notes.is_empty()).then(|| (current, notes.join("; ")))
}

fn word(text: &str) -> TokenWithSpan {
    TokenWithSpan::wrap(Token::make_keyword(text))
}

/// The words `start`, then `rest`, with the note of what was read how.
fn starting_with(
    start: &[&str],
    rest: &[TokenWithSpan],
    note: &'static str,
) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let mut rewritten: Vec<TokenWithSpan> = start.iter().map(|w| word(w)).collect();
    rewritten.extend_from_slice(rest);
    Some((rewritten, note))
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
    starting_with(
        &["EXPLAIN"],
        rest,
        "read as EXPLAIN, whose plan EXTENDED or PARTITIONS only annotates",
    )
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
    starting_with(
        &["EXPLAIN", "ANALYZE"],
        rest,
        "MariaDB's ANALYZE stmt, read as EXPLAIN ANALYZE: it runs the statement",
    )
}

/// MySQL `DO expr[, ...]` → `SELECT expr[, ...]`.
fn do_statement(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let [first, rest @ ..] = tokens else {
        return None;
    };
    if !is_keyword(&first.token, "DO") || rest.first().is_none_or(opens_a_code_block) {
        return None;
    }
    starting_with(
        &["SELECT"],
        rest,
        "DO evaluates its expressions as SELECT does, and drops the values",
    )
}

/// MySQL `a MOD b` → `a % b`: a `MOD` word between two operands (after a value, a name or
/// `)`, and not before `(`, where it is the function `MOD(a, b)`).
fn mod_operator(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let mut rewritten = tokens.to_vec();
    let mut changed = false;
    for at in 1..tokens.len().saturating_sub(1) {
        let after_operand = matches!(
            tokens[at - 1].token,
            Token::Number(..) | Token::Word(_) | Token::RParen | Token::SingleQuotedString(_)
        );
        let before_operand = tokens[at + 1].token != Token::LParen
            || matches!(tokens[at - 1].token, Token::Number(..) | Token::RParen);
        if is_keyword(&tokens[at].token, "MOD") && after_operand && before_operand {
            rewritten[at] = TokenWithSpan::wrap(Token::Mod);
            changed = true;
        }
    }
    changed.then_some((rewritten, "`a MOD b` read as `a % b`, the same remainder"))
}

/// MariaDB `MATCH col[, ...] AGAINST (...)` → `MATCH (col[, ...]) AGAINST (...)`.
fn match_without_parentheses(
    tokens: &[TokenWithSpan],
) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    let opening = [TokenWithSpan::wrap(Token::LParen)];
    wrap_after(tokens, "MATCH", columns_before_against, &opening).map(|rewritten| {
        (
            rewritten,
            "MATCH col AGAINST read as MATCH (col) AGAINST, as MariaDB does",
        )
    })
}

/// The index of `AGAINST` when `[t.]col[, [t.]col ...]` starts at `start` and runs up to it.
fn columns_before_against(tokens: &[TokenWithSpan], start: usize) -> Option<usize> {
    let mut at = start;
    loop {
        at = table_operand_end(tokens, at).filter(|&end| {
            // A column, not a call.
            tokens[end - 1].token != Token::RParen
        })?;
        match tokens.get(at).map(|t| &t.token) {
            Some(Token::Comma) => at += 1,
            Some(token) if is_keyword(token, "AGAINST") => return Some(at),
            _ => return None,
        }
    }
}

/// MariaDB `LIMIT [n[, m] | n OFFSET m] ROWS EXAMINED k` → the same without `ROWS
/// EXAMINED k` (and without a `LIMIT` left bare). The clause only stops the statement
/// early, so the form without it does at least as much.
fn rows_examined(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    drop_clauses(tokens, |tokens, at, kept| {
        let clause = is_keyword(&tokens[at].token, "ROWS")
            && tokens
                .get(at + 1)
                .is_some_and(|t| is_keyword(&t.token, "EXAMINED"))
            && matches!(
                tokens.get(at + 2).map(|t| &t.token),
                Some(Token::Number(..))
            );
        if !clause {
            return 0;
        }
        if kept.last().is_some_and(|t| is_keyword(&t.token, "LIMIT")) {
            kept.pop();
        }
        3
    })
    .map(|rewritten| {
        (
            rewritten,
            "LIMIT ROWS EXAMINED only stops the statement early",
        )
    })
}

/// `CHAR[(n)] CHARACTER SET cs` and `CHAR[(n)] CHARSET cs` (in `CAST` and `CONVERT`) →
/// `CHAR[(n)]`: the character set of the result, not what is computed.
fn cast_character_set(tokens: &[TokenWithSpan]) -> Option<(Vec<TokenWithSpan>, &'static str)> {
    drop_clauses(tokens, |tokens, at, kept| {
        let words = match (&tokens[at].token, tokens.get(at + 1).map(|t| &t.token)) {
            (t, Some(next)) if is_keyword(t, "CHARACTER") && is_keyword(next, "SET") => 2,
            (t, _) if is_keyword(t, "CHARSET") => 1,
            _ => return 0,
        };
        let named = matches!(
            tokens.get(at + words).map(|t| &t.token),
            Some(Token::Word(_))
        );
        if named && follows_a_char_type(kept) {
            words + 1
        } else {
            0
        }
    })
    .map(|rewritten| {
        (
            rewritten,
            "a CHARACTER SET after a CHAR type names the result's character set only",
        )
    })
}

/// `tokens` less the clauses `clause` finds: at each token, given the tokens kept so far
/// (which it may trim), it says how many tokens to leave out from there (0: none). `None`
/// if it left out none.
fn drop_clauses(
    tokens: &[TokenWithSpan],
    clause: fn(&[TokenWithSpan], usize, &mut Vec<TokenWithSpan>) -> usize,
) -> Option<Vec<TokenWithSpan>> {
    let mut kept = Vec::with_capacity(tokens.len());
    let mut changed = false;
    let mut at = 0;
    while at < tokens.len() {
        match clause(tokens, at, &mut kept) {
            0 => {
                kept.push(tokens[at].clone());
                at += 1;
            }
            skip => {
                changed = true;
                at += skip;
            }
        }
    }
    changed.then_some(kept)
}

/// Whether `tokens` end with `CHAR` or `CHAR(n)` written as a cast's target (after `AS`
/// or `,`).
fn follows_a_char_type(tokens: &[TokenWithSpan]) -> bool {
    let significant: Vec<&Token> = tokens.iter().rev().take(5).map(|t| &t.token).collect();
    let before_type = match significant.as_slice() {
        [char, before, ..] if is_keyword(char, "CHAR") => before,
        [
            Token::RParen,
            Token::Number(..),
            Token::LParen,
            char,
            before,
            ..,
        ] if is_keyword(char, "CHAR") => before,
        _ => return false,
    };
    is_keyword(before_type, "AS") || **before_type == Token::Comma
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
    let opening = [
        TokenWithSpan::wrap(Token::LParen),
        word("SELECT"),
        TokenWithSpan::wrap(Token::Mul),
        word("FROM"),
    ];
    wrap_after(tokens, "IN", table_operand_end, &opening).map(|rewritten| {
        (
            rewritten,
            "x IN table read as x IN (SELECT * FROM table), which SQLite says it means",
        )
    })
}

/// `tokens` with each operand that `operand_end` finds right after the word `keyword`
/// put between `opening` and `)`; `None` if there is none.
fn wrap_after(
    tokens: &[TokenWithSpan],
    keyword: &str,
    operand_end: fn(&[TokenWithSpan], usize) -> Option<usize>,
    opening: &[TokenWithSpan],
) -> Option<Vec<TokenWithSpan>> {
    let mut rewritten = Vec::with_capacity(tokens.len() + opening.len() + 1);
    let mut changed = false;
    let mut at = 0;
    while at < tokens.len() {
        rewritten.push(tokens[at].clone());
        if is_keyword(&tokens[at].token, keyword)
            && let Some(end) = operand_end(tokens, at + 1)
        {
            rewritten.extend_from_slice(opening);
            rewritten.extend_from_slice(&tokens[at + 1..end]);
            rewritten.push(TokenWithSpan::wrap(Token::RParen));
            changed = true;
            at = end;
            continue;
        }
        at += 1;
    }
    changed.then_some(rewritten)
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
