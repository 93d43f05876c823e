//! What makes two SQL calls "similar" for a channel rule: one statement of the same kind on
//! the same database and the same set of tables, whatever its conditions and values.
//!
//! Only statements that read get a rule: a call a rule lets run runs like any other call
//! without a click, in a read-only transaction, where a write could only fail. A write
//! keeps asking a person every time.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{Statement, visit_relations};
use sqlparser::parser::Parser;

use crate::core::rules::Similarity;
use crate::core::tools::SqlDialect;

/// The similarity of `sql` on `database`, or `None` when it is not exactly one statement
/// the parser reads.
pub fn similarity(sql: &str, dialect: SqlDialect, database: &str) -> Option<Similarity> {
    let statements = Parser::parse_sql(super::assess::parser_dialect(dialect), sql).ok()?;
    let [statement] = statements.as_slice() else {
        return None;
    };
    let kind = kind(statement);
    if !READS.contains(&kind.as_str()) {
        return None;
    }
    let mut tables = BTreeSet::new();
    let _ = visit_relations(statement, |name| {
        tables.insert(name.to_string().to_lowercase());
        ControlFlow::<()>::Continue(())
    });
    let tables: Vec<String> = tables.into_iter().collect();
    let on = if tables.is_empty() {
        "no table".to_owned()
    } else {
        tables.join(", ")
    };
    Some(Similarity::new(
        format!("`{kind}` on {on} in database `{database}`"),
        &[
            ("kind", kind),
            ("database", database.to_owned()),
            ("tables", tables.join(" ")),
        ],
    ))
}

/// Kinds of statements that only read.
const READS: &[&str] = &[
    "SELECT", "SHOW", "EXPLAIN", "DESCRIBE", "DESC", "VALUES", "TABLE",
];

/// The statement's kind: its first keyword as written in SQL.
fn kind(statement: &Statement) -> String {
    match statement {
        Statement::Query(_) => "SELECT".to_owned(),
        Statement::Insert(_) => "INSERT".to_owned(),
        Statement::Update { .. } => "UPDATE".to_owned(),
        Statement::Delete(_) => "DELETE".to_owned(),
        other => other
            .to_string()
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(sql: &str, database: &str) -> Option<Vec<String>> {
        similarity(sql, SqlDialect::Postgres, database).map(|s| s.key.into_values().collect())
    }

    #[test]
    fn statements_of_one_kind_on_the_same_tables_and_database_are_similar() {
        assert_eq!(
            key("SELECT * FROM orders WHERE id = 1", "prod"),
            key("select id FROM ORDERS where status = 'lost'", "prod")
        );
        assert!(key("SELECT 1 FROM orders", "prod").is_some());
        assert_ne!(
            key("SELECT * FROM orders WHERE id = 1", "prod"),
            key("SELECT * FROM orders WHERE id = 1", "staging")
        );
        // Writes keep asking: contained, they could only fail.
        assert_eq!(key("UPDATE orders SET status = 'x'", "prod"), None);
        assert_eq!(key("DELETE FROM orders", "prod"), None);
        assert_ne!(
            key("SELECT * FROM orders", "prod"),
            key("SELECT * FROM orders JOIN users ON true", "prod")
        );
        let summary = similarity(
            "SELECT * FROM b JOIN a ON true",
            SqlDialect::Postgres,
            "prod",
        )
        .map(|s| s.summary);
        assert_eq!(
            summary.as_deref(),
            Some("`SELECT` on a, b in database `prod`")
        );
        assert_eq!(key("SELECT 1; DROP TABLE x", "prod"), None);
        assert_eq!(key("SELEC nonsense", "prod"), None);
    }
}
