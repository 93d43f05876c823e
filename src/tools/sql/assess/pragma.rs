//! SQLite `PRAGMA`: which forms only read.
//!
//! A pragma without a value reports its setting; with `= value` (or, for setting pragmas,
//! `(value)`) it changes it, and `PRAGMA query_only = 0` switches off the very guard the
//! executor relies on. So only an allow-list of pragma names is read-only, and only the
//! table-argument pragmas may take an argument.

use crate::core::risk::Assessment;
use crate::core::tools::SqlDialect;

use super::SqlRules;

/// Pragmas that only report something when queried without a value.
const READ_ONLY: &[&str] = &[
    "analysis_limit",
    "application_id",
    "auto_vacuum",
    "automatic_index",
    "busy_timeout",
    "cache_size",
    "cache_spill",
    "cell_size_check",
    "checkpoint_fullfsync",
    "collation_list",
    "compile_options",
    "data_version",
    "database_list",
    "defer_foreign_keys",
    "encoding",
    "foreign_keys",
    "freelist_count",
    "fullfsync",
    "function_list",
    "hard_heap_limit",
    "ignore_check_constraints",
    "journal_mode",
    "journal_size_limit",
    "legacy_alter_table",
    "locking_mode",
    "max_page_count",
    "mmap_size",
    "module_list",
    "page_count",
    "page_size",
    "pragma_list",
    "query_only",
    "read_uncommitted",
    "recursive_triggers",
    "reverse_unordered_selects",
    "schema_version",
    "secure_delete",
    "soft_heap_limit",
    "synchronous",
    "table_list",
    "temp_store",
    "threads",
    "trusted_schema",
    "user_version",
    "wal_autocheckpoint",
];

/// Pragmas that take a table (or index, or row limit) argument and only read the schema.
const TABLE_ARGUMENT: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
];

/// What follows the pragma's name.
#[derive(Debug, Clone, Copy)]
pub(super) enum PragmaArgument<'a> {
    /// `PRAGMA name`: reads the setting.
    None,
    /// `PRAGMA name(argument)`: a table argument, or a new value for a setting.
    Call(&'a str),
    /// `PRAGMA name = value`: always a change.
    Assign(&'a str),
}

/// Judges `PRAGMA [schema.]name ...`; `name` is the pragma's name without its schema.
pub(super) fn assess_pragma(
    name: &str,
    argument: PragmaArgument<'_>,
    dialect: SqlDialect,
    rules: &SqlRules,
) -> Assessment {
    let name = name.to_ascii_lowercase();
    if dialect != SqlDialect::Sqlite {
        return Assessment::Unknown(format!(
            "PRAGMA {name} is a SQLite statement; on {dialect} it is not a known read"
        ));
    }
    let is = |list: &[&str]| list.contains(&name.as_str());
    match argument {
        PragmaArgument::None if is(READ_ONLY) || is(TABLE_ARGUMENT) => Assessment::Safe(format!(
            "PRAGMA {name} only reports a setting or the schema"
        )),
        PragmaArgument::None => Assessment::Unknown(format!(
            "PRAGMA {name} is not on the list of read-only pragmas (it may act, not just report)"
        )),
        PragmaArgument::Call(table) if rules.denies(table) => Assessment::Forbidden(format!(
            "PRAGMA {name} names {table}, which the operator forbids"
        )),
        PragmaArgument::Call(table) if is(TABLE_ARGUMENT) => {
            Assessment::Safe(format!("PRAGMA {name}({table}) only reads the schema"))
        }
        PragmaArgument::Call(value) => Assessment::Unknown(format!(
            "PRAGMA {name}({value}) sets a value; only table pragmas such as table_info take an argument"
        )),
        PragmaArgument::Assign(value) => Assessment::Unknown(format!(
            "PRAGMA {name} = {value} changes a setting of the connection or the database"
        )),
    }
}

/// Whether `pragma_<name>(...)`, SQLite's table-valued form of a pragma, only reads: the
/// same read-only and table-argument pragmas as the statement form.
pub(super) fn is_read_only_table_function(name: &str) -> bool {
    READ_ONLY.contains(&name) || TABLE_ARGUMENT.contains(&name)
}
