//! PostgreSQL's keywords, as its grammar sorts them (`builtins/postgres.keywords.txt`,
//! generated from the server's own keyword list with the function list; see
//! `builtins/generate_postgres.py`).
//!
//! What matters here is whether `word(` can call a function: an unquoted reserved or
//! column-name keyword never names one (`IN (`, `CAST(`, `COALESCE(` are the grammar's
//! own), while every other word, keywords included, may.

use std::collections::HashMap;
use std::sync::LazyLock;

/// How PostgreSQL reads an unquoted keyword followed by `(`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PgKeyword {
    /// Reserved or column-name keyword in every version the list was made from: `word(`
    /// is the grammar's own construct, never a function call.
    Syntax,
    /// Such a keyword only in the newest version (the SQL/JSON constructs of 16 and 17,
    /// `JSON_VALUE`, `JSON_TABLE`, ...): older servers call a function of that name.
    Newer,
    /// Any other keyword: it may name a function, a column or a table.
    Name,
}

static KEYWORDS: LazyLock<HashMap<&'static str, PgKeyword>> = LazyLock::new(|| {
    include_str!("builtins/postgres.keywords.txt")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (word, kind) = line.split_once(' ')?;
            let kind = match kind.trim() {
                "syntax" => PgKeyword::Syntax,
                "newer" => PgKeyword::Newer,
                _ => PgKeyword::Name,
            };
            Some((word, kind))
        })
        .collect()
});

/// The keyword kind of an unquoted word (any case), or `None` when it is no keyword.
pub(super) fn pg_keyword(word: &str) -> Option<PgKeyword> {
    if word.bytes().any(|b| b.is_ascii_uppercase()) {
        KEYWORDS.get(word.to_ascii_lowercase().as_str()).copied()
    } else {
        KEYWORDS.get(word).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_s_words_are_sorted_as_postgresql_does() {
        for word in [
            "in", "CAST", "coalesce", "Exists", "xmltable", "values", "row",
        ] {
            assert_eq!(pg_keyword(word), Some(PgKeyword::Syntax), "{word}");
        }
        for word in ["json_value", "JSON_TABLE", "json_exists", "json_query"] {
            assert_eq!(pg_keyword(word), Some(PgKeyword::Newer), "{word}");
        }
        // Unreserved and type-or-function-name keywords can name a function.
        for word in ["by", "columns", "left", "join", "filter", "over", "cube"] {
            assert_eq!(pg_keyword(word), Some(PgKeyword::Name), "{word}");
        }
        for word in ["lower", "users", "pg_sleep"] {
            assert_eq!(pg_keyword(word), None, "{word}");
        }
    }
}
