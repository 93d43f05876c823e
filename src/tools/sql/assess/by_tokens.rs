//! Reading, by its tokens, a PostgreSQL query that sqlparser cannot parse.
//!
//! Why a token reader and not PostgreSQL's own parser (issue 26): the `pg_query` crate
//! (libpg_query, the server's grammar) would read every form exactly, but its build script
//! runs bindgen unconditionally, which needs libclang and clang's own headers
//! (`libclang1-14`, `libclang-common-14-dev` on Debian), not only the Rust toolchain and gcc
//! that the README promises a fresh machine needs; with them it built in 2 min 17 s on this
//! machine's 2 cores (a clean build of `pg_query` alone). So the assessor keeps sqlparser,
//! whose reading of what it can parse the rest of this module tree relies on, and this
//! reader fills the gaps of its PostgreSQL grammar (the SQL/JSON clauses, `EXCLUDE` in
//! window frames, `SEARCH`/`CYCLE`, `ROWS FROM`, XML forms, `GROUP BY DISTINCT`, `TABLE`
//! in set operations, ...).
//!
//! It says "a read" only when, outside strings and comments:
//! - the text is one statement (no `;` but trailing ones) that starts with `SELECT`,
//!   `WITH`, `VALUES`, `TABLE` or `(`, so no other statement kind can be meant;
//! - no word of [`NOT_IN_A_READ`] appears (writing: `INSERT`, `UPDATE`, `DELETE`, `MERGE`,
//!   `INTO` as in `SELECT ... INTO`; locking: `FOR UPDATE` / `SHARE` / `NO KEY UPDATE` /
//!   `KEY SHARE`; other statements' words), `SET` only in `SEARCH ... SET col` and
//!   `CYCLE ... SET col`, `END` only closing a `CASE` (sqlparser stops at any other), no
//!   `OPERATOR(schema.op)` (it runs the operator's function, whoever wrote it), and no
//!   backslash (psql's `\gexec`);
//! - the text does not stop in the middle of a clause (`SELECT 1 FROM`): that is no query;
//! - every function call is a read-only built-in, as [`judge`] decides for parsed SQL (a
//!   schema other than `pg_catalog` is refused). A call is any name followed by `(` that
//!   PostgreSQL could read as one: everything but the grammar's own words
//!   ([`PgKeyword::Syntax`]: `IN (`, `CAST(`, `XMLTABLE(`), a few keyword pairs whose
//!   second word is part of the first (`ORDER BY (`, `GROUPING SETS (`, `LEFT JOIN (`), and
//!   places where a name followed by `(` is not a call because no expression can stand
//!   there: after `AS`, `::`, a literal, a plain identifier or `)` (alias column lists,
//!   type modifiers, `COLUMNS (` in `JSON_TABLE`), and a `WITH` query's name. The SQL/JSON
//!   constructs (`JSON_VALUE`, `JSON_QUERY`, `JSON_EXISTS`, `JSON_TABLE`, `JSON`, ...) are
//!   keywords only since PostgreSQL 16 or 17; before, `json_value(a, b)` calls a function
//!   of that name. So they count as the construct only with a clause no function call can
//!   have (`RETURNING`, `... ON ERROR`, `WITH WRAPPER`, `PASSING x AS y`, `COLUMNS (`,
//!   `FORMAT JSON`, `KEEP`/`OMIT QUOTES`, `key: value`), which older servers reject as a
//!   syntax error; without one they are calls, judged like any other.
//!
//! Anything else keeps the verdict of text the check cannot read, with the reader's reason
//! added. The reader pairs the brackets once and then walks the tokens, looking back or
//! ahead a few tokens at a call; it never recurses.

use sqlparser::ast::Ident;
use sqlparser::tokenizer::{Token, Word};

use crate::core::tools::SqlDialect;

use super::SqlRules;
use super::functions::{FunctionRisk, judge};
use super::keywords::{PgKeyword, pg_keyword};
use super::unparsed::{is_invisible, is_keyword};

/// Words that never stand in a read-only query, each with what it does (quoted, they are
/// identifiers, and allowed): the ones that write or lock inside a query, and the first
/// words of other statements. Words that only start a statement and are also common column
/// names (`END` of `CASE`, `START`, `CLOSE`, `MOVE`, `LOAD`, `RELEASE`, `COMMENT`,
/// `CLUSTER`) are left out: a query cannot hold another statement but as a `WITH` query,
/// and only the writing kinds below can stand there. `SHARE` counts after `FOR` or `KEY`
/// (`FOR SHARE`, `FOR KEY SHARE`), and `SET` is judged on its own.
const NOT_IN_A_READ: &[(&str, &str)] = &[
    ("INSERT", "writes rows"),
    (
        "UPDATE",
        "writes rows or locks them (FOR UPDATE, FOR NO KEY UPDATE)",
    ),
    ("DELETE", "removes rows"),
    ("MERGE", "writes rows"),
    ("TRUNCATE", "removes rows"),
    ("INTO", "writes the result into a table (SELECT ... INTO)"),
    ("LOCK", "locks tables"),
    ("LOCKED", "belongs to a row lock (SKIP LOCKED)"),
    ("NOWAIT", "belongs to a lock"),
    ("COPY", "moves data in or out of the server"),
    ("CALL", "runs a procedure"),
    ("DO", "runs code (DO blocks, ON CONFLICT DO)"),
    ("EXECUTE", "runs a prepared statement or code"),
    ("PERFORM", "runs a query in PL/pgSQL"),
    ("PREPARE", "stores a statement in the session"),
    ("DEALLOCATE", "changes the session"),
    ("DECLARE", "opens a cursor"),
    ("CREATE", "creates objects"),
    ("DROP", "removes objects"),
    ("ALTER", "changes objects or settings"),
    ("RENAME", "renames objects"),
    ("GRANT", "changes privileges"),
    ("REVOKE", "changes privileges"),
    ("REASSIGN", "changes owners"),
    ("SECURITY", "changes security labels"),
    ("VACUUM", "rewrites tables"),
    (
        "ANALYZE",
        "writes statistics or runs the statement it explains",
    ),
    (
        "ANALYSE",
        "writes statistics or runs the statement it explains",
    ),
    ("EXPLAIN", "explains or runs another statement"),
    ("REINDEX", "rebuilds indexes"),
    ("REFRESH", "rewrites materialized views"),
    ("CHECKPOINT", "forces a checkpoint"),
    ("IMPORT", "creates foreign tables"),
    ("LISTEN", "changes the session"),
    ("UNLISTEN", "changes the session"),
    ("NOTIFY", "sends a notification"),
    ("DISCARD", "changes the session"),
    ("RESET", "changes settings"),
    ("BEGIN", "controls the transaction"),
    ("COMMIT", "controls the transaction"),
    ("ROLLBACK", "controls the transaction"),
    ("ABORT", "controls the transaction"),
    ("SAVEPOINT", "controls the transaction"),
];

/// The words a read may start with.
const READ_STARTS: &[&str] = &["SELECT", "WITH", "VALUES", "TABLE"];

/// Reads `tokens` (no whitespace or comments, no trailing `;`) as one PostgreSQL query.
/// `Ok` when it only reads; otherwise what it is not, to tell the person why.
pub(super) fn read_query(tokens: &[&Token], rules: &SqlRules) -> Result<(), String> {
    match tokens.first() {
        Some(Token::LParen) => {}
        Some(Token::Word(word))
            if word.quote_style.is_none()
                && READ_STARTS
                    .iter()
                    .any(|start| word.value.eq_ignore_ascii_case(start)) => {}
        _ => return Err("it does not start with SELECT, WITH, VALUES, TABLE or (".to_owned()),
    }
    if !ends_like_a_query(tokens) {
        return Err("it stops in the middle of a clause".to_owned());
    }
    let partners = pair_brackets(tokens)?;
    let mut open_cases = 0usize;
    for (index, token) in tokens.iter().enumerate() {
        match token {
            Token::SemiColon => return Err("it holds more than one statement".to_owned()),
            // `END` closes a `CASE`; anywhere else it ends a transaction or a block, and
            // sqlparser stops reading there.
            Token::Word(word) if is_keyword(token, "CASE") && word.quote_style.is_none() => {
                open_cases += 1;
            }
            Token::Word(_) if is_keyword(token, "END") => {
                open_cases = open_cases.checked_sub(1).ok_or_else(|| {
                    "it contains END outside a CASE, which ends a transaction or a block".to_owned()
                })?;
            }
            Token::Backslash => {
                return Err("it holds a backslash, which only psql reads".to_owned());
            }
            Token::Word(word) if word.quote_style.is_none() => {
                check_word(tokens, index, word)?;
            }
            _ => {}
        }
        if matches!(token, Token::Word(_))
            && next_is_open_paren(tokens, index)
            && is_call(tokens, index, &partners)
        {
            check_call(tokens, index, &partners, rules)?;
        }
    }
    Ok(())
}

/// Whether the text's last token can end a query: a literal, a name, `)`, `]`, `*`, or
/// a keyword that can (`NULL`, `DESC`, `ONLY`, a type, ...); not `FROM`, `AND`, `,`. Text
/// that stops in the middle of a clause is no query, and is left to the person.
fn ends_like_a_query(tokens: &[&Token]) -> bool {
    /// Reserved and column-name keywords that can end a query.
    const CAN_END: &[&str] = &[
        "NULL",
        "TRUE",
        "FALSE",
        "END",
        "ONLY",
        "ALL",
        "ASC",
        "DESC",
        "CURRENT_DATE",
        "CURRENT_TIME",
        "CURRENT_TIMESTAMP",
        "LOCALTIME",
        "LOCALTIMESTAMP",
        "CURRENT_USER",
        "CURRENT_ROLE",
        "CURRENT_CATALOG",
        "SESSION_USER",
        "USER",
        "BIGINT",
        "BIT",
        "BOOLEAN",
        "CHAR",
        "CHARACTER",
        "DEC",
        "DECIMAL",
        "FLOAT",
        "INT",
        "INTEGER",
        "INTERVAL",
        "NCHAR",
        "NUMERIC",
        "PRECISION",
        "REAL",
        "SMALLINT",
        "TIME",
        "TIMESTAMP",
        "VARCHAR",
    ];
    match tokens.last() {
        Some(Token::Word(word)) => {
            word.quote_style.is_some()
                || pg_keyword(&word.value) != Some(PgKeyword::Syntax)
                || CAN_END
                    .iter()
                    .any(|end| word.value.eq_ignore_ascii_case(end))
        }
        Some(Token::RParen | Token::RBracket | Token::Mul) => true,
        Some(token) => is_literal(token),
        None => false,
    }
}

/// The index of each bracket's partner (`(` with `)`, `[` with `]`).
fn pair_brackets(tokens: &[&Token]) -> Result<Vec<Option<usize>>, String> {
    let mut partners = vec![None; tokens.len()];
    let mut open: Vec<usize> = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        match token {
            Token::LParen | Token::LBracket => open.push(index),
            Token::RParen | Token::RBracket => {
                let Some(start) = open.pop() else {
                    return Err("its brackets do not match".to_owned());
                };
                let matches = matches!(
                    (tokens[start], token),
                    (Token::LParen, Token::RParen) | (Token::LBracket, Token::RBracket)
                );
                if !matches {
                    return Err("its brackets do not match".to_owned());
                }
                partners[start] = Some(index);
                partners[index] = Some(start);
            }
            _ => {}
        }
    }
    if open.is_empty() {
        Ok(partners)
    } else {
        Err("its brackets do not match".to_owned())
    }
}

/// Refuses a word that does not belong in a read.
fn check_word(tokens: &[&Token], index: usize, word: &Word) -> Result<(), String> {
    if word.value.chars().any(is_invisible) {
        return Err(format!(
            "the word {:?} holds an invisible or unusual space character",
            word.value
        ));
    }
    let before = index.checked_sub(1).map(|i| tokens[i]);
    if word.value.eq_ignore_ascii_case("SHARE") {
        return match before {
            Some(t) if is_keyword(t, "FOR") || is_keyword(t, "KEY") => {
                Err("it contains FOR SHARE or FOR KEY SHARE, which locks rows".to_owned())
            }
            _ => Ok(()),
        };
    }
    // `a OPERATOR(schema.op) b` runs the operator's function, which may be anyone's, and
    // puts a `)` where an operand ends, which the call rules below rely on not happening.
    if word.value.eq_ignore_ascii_case("OPERATOR") && next_is_open_paren(tokens, index) {
        return Err(
            "it names an operator with OPERATOR(...), which can run any function".to_owned(),
        );
    }
    if word.value.eq_ignore_ascii_case("SET") {
        return if sets_a_search_or_cycle_column(tokens, index) {
            Ok(())
        } else {
            Err("it contains SET, which changes a setting or writes rows".to_owned())
        };
    }
    match NOT_IN_A_READ
        .iter()
        .find(|(keyword, _)| word.value.eq_ignore_ascii_case(keyword))
    {
        Some((keyword, what)) => Err(format!("it contains {keyword}, which {what}")),
        None => Ok(()),
    }
}

/// `SEARCH {DEPTH|BREADTH} FIRST BY col[, ...] SET col` or `CYCLE col[, ...] SET col`
/// (a recursive `WITH` query's ordering or cycle column) ends just before `index`.
fn sets_a_search_or_cycle_column(tokens: &[&Token], index: usize) -> bool {
    // Back over `col [, col ...]`.
    let mut at = index;
    loop {
        match at.checked_sub(1).map(|i| tokens[i]) {
            Some(Token::Word(_)) => at -= 1,
            _ => return false,
        }
        match at.checked_sub(1).map(|i| tokens[i]) {
            Some(Token::Comma) => at -= 1,
            _ => break,
        }
    }
    let before = |back: usize| at.checked_sub(back).map(|i| tokens[i]);
    if before(1).is_some_and(|t| is_keyword(t, "CYCLE")) {
        return true;
    }
    before(1).is_some_and(|t| is_keyword(t, "BY"))
        && before(2).is_some_and(|t| is_keyword(t, "FIRST"))
        && before(3).is_some_and(|t| is_keyword(t, "DEPTH") || is_keyword(t, "BREADTH"))
        && before(4).is_some_and(|t| is_keyword(t, "SEARCH"))
}

fn next_is_open_paren(tokens: &[&Token], index: usize) -> bool {
    tokens.get(index + 1) == Some(&&Token::LParen)
}

/// Whether the name ending at `index` (followed by `(`) is read by PostgreSQL as a
/// function call. When unsure, it is a call, and judged as one.
fn is_call(tokens: &[&Token], index: usize, partners: &[Option<usize>]) -> bool {
    let Token::Word(word) = tokens[index] else {
        return false;
    };
    let first = first_name_part(tokens, index);
    let qualified = first < index;
    let before = first.checked_sub(1).map(|i| tokens[i]);
    if !qualified && word.quote_style.is_none() {
        match pg_keyword(&word.value) {
            Some(PgKeyword::Syntax) => return false,
            Some(PgKeyword::Newer) => return !has_sql_json_clause(tokens, index + 1, partners),
            Some(PgKeyword::Name) if continues_a_keyword(tokens, index, partners) => {
                return false;
            }
            _ => {}
        }
    }
    if !qualified && names_a_with_query(tokens, index, partners) {
        return false;
    }
    match before {
        // `AS t(a, b)`, `AS numeric(10, 2)`, `::varchar(20)`: an alias or a type.
        Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("AS") => {
            false
        }
        Some(Token::DoubleColon) => false,
        // An expression never follows a literal, a name or `)` without an operator or a
        // keyword between, so here the name is an alias with its column list, a type with
        // its modifier, or `COLUMNS (` after JSON_TABLE's path.
        Some(Token::RParen) => false,
        Some(Token::Word(w)) => !(w.quote_style.is_some() || is_plain_identifier(w)),
        Some(token) if is_literal(token) => false,
        _ => true,
    }
}

/// The index of the first part of the dotted name that ends at `index`.
fn first_name_part(tokens: &[&Token], index: usize) -> usize {
    let mut first = index;
    while first >= 2
        && tokens[first - 1] == &Token::Period
        && matches!(tokens[first - 2], Token::Word(_))
    {
        first -= 2;
    }
    first
}

/// A word PostgreSQL reads as a name whatever stands around it: no keyword of
/// PostgreSQL's, nor of any dialect sqlparser knows (so that a keyword missing from one
/// list still counts as one).
fn is_plain_identifier(word: &Word) -> bool {
    word.keyword == sqlparser::keywords::Keyword::NoKeyword && pg_keyword(&word.value).is_none()
}

fn is_literal(token: &Token) -> bool {
    matches!(
        token,
        Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::Placeholder(_)
    )
}

/// A keyword that is the second word of a construct the previous word started, so its
/// `(` opens an expression or a list, not a call: `ORDER BY (`, `GROUPING SETS (`,
/// `LEFT JOIN (`, `AS MATERIALIZED (`, `AT TIME ZONE (`, `character varying(`,
/// `FETCH FIRST (`, and `ROLLUP (`/`CUBE (` as grouping sets.
fn continues_a_keyword(tokens: &[&Token], index: usize, partners: &[Option<usize>]) -> bool {
    let Token::Word(word) = tokens[index] else {
        return false;
    };
    let before = |back: usize| index.checked_sub(back).map(|i| tokens[i]);
    let after_any =
        |words: &[&str]| before(1).is_some_and(|t| words.iter().any(|w| is_keyword(t, w)));
    let upper = word.value.to_ascii_uppercase();
    match upper.as_str() {
        "BY" => after_any(&["ORDER", "GROUP", "PARTITION"]),
        "SETS" => after_any(&["GROUPING"]),
        "JOIN" => after_any(&[
            "CROSS", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "NATURAL",
        ]),
        "MATERIALIZED" => {
            after_any(&["AS"])
                || (after_any(&["NOT"]) && before(2).is_some_and(|t| is_keyword(t, "AS")))
        }
        "ZONE" => after_any(&["TIME"]) && before(2).is_some_and(|t| is_keyword(t, "AT")),
        "VARYING" => after_any(&["CHARACTER", "CHAR", "BIT", "NCHAR"]),
        "FIRST" | "NEXT" => after_any(&["FETCH"]),
        "ROLLUP" | "CUBE" => is_a_grouping_set(tokens, index, partners),
        _ => false,
    }
}

/// `ROLLUP (` or `CUBE (` as an item of `GROUP BY` or of `GROUPING SETS (...)`, where
/// PostgreSQL's grammar reads them as grouping sets, not as calls.
fn is_a_grouping_set(tokens: &[&Token], index: usize, partners: &[Option<usize>]) -> bool {
    // Back at this item's level, over whole bracketed groups, to what holds the list.
    let mut at = index;
    while let Some(i) = at.checked_sub(1) {
        at = i;
        match tokens[i] {
            Token::RParen | Token::RBracket => match partners[i] {
                Some(open) => at = open,
                None => return false,
            },
            // The bracket the item is directly inside: GROUPING SETS (...)?
            Token::LParen | Token::LBracket => {
                return i >= 2
                    && is_keyword(tokens[i - 1], "SETS")
                    && is_keyword(tokens[i - 2], "GROUPING")
                    && item_starts_after(tokens, index, i);
            }
            // The GROUP BY list this item belongs to?
            token if is_keyword(token, "BY") => {
                return i >= 1
                    && is_keyword(tokens[i - 1], "GROUP")
                    && item_starts_after(tokens, index, i);
            }
            token if is_clause_word(token) => return false,
            _ => {}
        }
    }
    false
}

/// Whether the item at `index` starts right after `opener` or after a `,`, with at most
/// `ALL` or `DISTINCT` between (`GROUP BY DISTINCT ROLLUP (...)`).
fn item_starts_after(tokens: &[&Token], index: usize, opener: usize) -> bool {
    let previous = tokens[index - 1];
    index - 1 == opener
        || previous == &Token::Comma
        || (index.checked_sub(2) == Some(opener)
            && (is_keyword(previous, "ALL") || is_keyword(previous, "DISTINCT")))
}

/// The words that start a clause of a query; a grouping item does not reach past one.
fn is_clause_word(token: &Token) -> bool {
    [
        "SELECT",
        "FROM",
        "WHERE",
        "HAVING",
        "WINDOW",
        "ORDER",
        "LIMIT",
        "OFFSET",
        "FETCH",
        "UNION",
        "INTERSECT",
        "EXCEPT",
        "WITH",
        "VALUES",
    ]
    .iter()
    .any(|clause| is_keyword(token, clause))
}

/// `name(col, ...) AS [[NOT] MATERIALIZED] (` as an item of a `WITH` list: the name and
/// column list of a `WITH` query. (`FROM t, f(1) AS (a int)` has the same shape and calls
/// `f`: there the list is a `FROM` list.)
fn names_a_with_query(tokens: &[&Token], index: usize, partners: &[Option<usize>]) -> bool {
    let Some(close) = partners.get(index + 1).copied().flatten() else {
        return false;
    };
    let after = |ahead: usize| tokens.get(close + ahead).copied();
    let defines_a_query = after(1).is_some_and(|t| is_keyword(t, "AS"))
        && match after(2) {
            Some(Token::LParen) => true,
            Some(t) if is_keyword(t, "MATERIALIZED") => after(3) == Some(&Token::LParen),
            Some(t) if is_keyword(t, "NOT") => {
                after(3).is_some_and(|t| is_keyword(t, "MATERIALIZED"))
                    && after(4) == Some(&Token::LParen)
            }
            _ => false,
        };
    defines_a_query && in_a_with_list(tokens, index, partners)
}

/// Whether the item starting at `index` (right after `WITH`, `RECURSIVE` or a `,`) belongs
/// to a `WITH` list: back at its level, over whole bracketed groups, only the words of
/// earlier `WITH` items stand between it and `WITH`.
fn in_a_with_list(tokens: &[&Token], index: usize, partners: &[Option<usize>]) -> bool {
    /// The keywords of a `WITH` item: `name AS [NOT] MATERIALIZED (...)`, `SEARCH DEPTH
    /// FIRST BY a SET b`, `CYCLE a SET b TO x DEFAULT y USING c`.
    const ITEM_WORDS: &[&str] = &[
        "RECURSIVE",
        "AS",
        "NOT",
        "MATERIALIZED",
        "SEARCH",
        "DEPTH",
        "BREADTH",
        "FIRST",
        "BY",
        "SET",
        "CYCLE",
        "TO",
        "DEFAULT",
        "USING",
    ];
    let starts_an_item = index
        .checked_sub(1)
        .map(|i| tokens[i])
        .is_some_and(|t| t == &Token::Comma || is_keyword(t, "WITH") || is_keyword(t, "RECURSIVE"));
    if !starts_an_item {
        return false;
    }
    let mut at = index;
    while let Some(i) = at.checked_sub(1) {
        at = i;
        match tokens[i] {
            token if is_keyword(token, "WITH") => return true,
            Token::RParen | Token::RBracket => match partners[i] {
                Some(open) => at = open,
                None => return false,
            },
            Token::Comma => {}
            Token::Word(word)
                if word.quote_style.is_some()
                    || is_plain_identifier(word)
                    || ITEM_WORDS
                        .iter()
                        .any(|w| word.value.eq_ignore_ascii_case(w)) => {}
            token if is_literal(token) => {}
            _ => return false,
        }
    }
    false
}

/// Whether the parentheses opening at `open` hold, at their own level, a clause of the
/// SQL/JSON constructs that no function call's arguments can hold.
fn has_sql_json_clause(tokens: &[&Token], open: usize, partners: &[Option<usize>]) -> bool {
    let Some(close) = partners.get(open).copied().flatten() else {
        return false;
    };
    let mut at = open + 1;
    while at < close {
        let token = tokens[at];
        let next = tokens.get(at + 1).copied();
        let clause = match token {
            // `JSON_OBJECT('a': 1)`.
            Token::Colon => true,
            // Reserved words that no argument expression holds at this level.
            t if ["RETURNING", "ON", "WITH", "AS", "DEFAULT"]
                .iter()
                .any(|w| is_keyword(t, w)) =>
            {
                true
            }
            // Two words side by side, which no expression has.
            t if is_keyword(t, "KEEP") || is_keyword(t, "OMIT") => {
                next.is_some_and(|n| is_keyword(n, "QUOTES"))
            }
            t if is_keyword(t, "WITHOUT") => next.is_some_and(|n| {
                is_keyword(n, "WRAPPER") || is_keyword(n, "UNIQUE") || is_keyword(n, "ARRAY")
            }),
            t if is_keyword(t, "FORMAT") => next.is_some_and(|n| is_keyword(n, "JSON")),
            t if is_keyword(t, "COLUMNS") => next == Some(&Token::LParen),
            _ => false,
        };
        if clause {
            return true;
        }
        at = match token {
            Token::LParen | Token::LBracket => partners[at].map_or(close, |end| end + 1),
            _ => at + 1,
        };
    }
    false
}

/// Judges the call whose name ends at `index`, as the parsed path judges calls.
fn check_call(
    tokens: &[&Token],
    index: usize,
    partners: &[Option<usize>],
    rules: &SqlRules,
) -> Result<(), String> {
    let first = first_name_part(tokens, index);
    let idents: Vec<Ident> = (first..=index)
        .step_by(2)
        .filter_map(|i| match tokens[i] {
            Token::Word(word) => Some(match word.quote_style {
                Some(quote) => Ident::with_quote(quote, word.value.clone()),
                None => Ident::new(word.value.clone()),
            }),
            _ => None,
        })
        .collect();
    let name = idents
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(".");
    let lower = idents
        .last()
        .map(|ident| ident.value.to_lowercase())
        .unwrap_or_default();
    if rules.allows_function(&lower) {
        return Ok(());
    }
    let parts: Vec<&Ident> = idents.iter().collect();
    match judge(
        &parts,
        argument_count(tokens, index + 1, partners),
        SqlDialect::Postgres,
    ) {
        FunctionRisk::Builtin => Ok(()),
        FunctionRisk::Unlisted(why) => Err(format!("it calls {name}(), which {why}")),
        FunctionRisk::SideEffect(what) | FunctionRisk::Destructive(what) => {
            Err(format!("it calls {name}(), which {what}"))
        }
    }
}

/// How many arguments the parentheses opening at `open` hold (commas at their level).
fn argument_count(tokens: &[&Token], open: usize, partners: &[Option<usize>]) -> Option<usize> {
    let close = partners.get(open).copied().flatten()?;
    if close == open + 1 {
        return Some(0);
    }
    let mut count = 1;
    let mut at = open + 1;
    while at < close {
        at = match tokens[at] {
            Token::LParen | Token::LBracket => partners[at]? + 1,
            Token::Comma => {
                count += 1;
                at + 1
            }
            _ => at + 1,
        };
    }
    Some(count)
}
