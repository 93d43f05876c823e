//! How a call of `execute_sql` is shown: the statement, with the database it names.

use serde_json::{Map, Value};

use crate::core::tools::CallBrief;
use crate::core::tools::view::{one_line_json, text_argument};

/// The statement whole, after a comment naming the database when the call names one.
pub fn whole_call(arguments: &Map<String, Value>) -> String {
    let sql = text_argument(arguments, "sql").unwrap_or_default();
    match text_argument(arguments, "database") {
        Some(db) => format!("-- on database {db}\n{sql}"),
        None => sql.to_owned(),
    }
}

/// The statement as SQL code, after a line naming the database when the call names one.
pub fn brief_call(arguments: &Map<String, Value>) -> CallBrief {
    let sql = text_argument(arguments, "sql").unwrap_or_default();
    match text_argument(arguments, "database") {
        Some(db) => CallBrief::line(format!("on database `{db}`")).then_code("sql", sql),
        None => CallBrief::code("sql", sql),
    }
}

/// The statement alone.
pub fn call_line(arguments: &Map<String, Value>) -> String {
    text_argument(arguments, "sql").map_or_else(|| one_line_json(arguments), str::to_owned)
}
