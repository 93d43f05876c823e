//! Functions: which ones may run without a person, by an allow-list per engine.
//!
//! A SELECT can still change the world, or reach past the engine's walls, through the
//! functions it calls. So a call is safe only when it is a built-in function of the target
//! engine known to only compute or read (`builtins/*.txt`; on PostgreSQL also the contrib
//! extensions' functions, unqualified), named the way the engine would
//! find the built-in: after the tokenizer has undone quoting and escapes (`assess.rs`
//! decodes PostgreSQL's `U&"..."` identifiers before parsing), unqualified or, on
//! PostgreSQL, qualified by `pg_catalog`. A function in any other schema, a quoted MySQL name
//! (a stored function) and every name not on the list is user-defined or unknown: the
//! statement is then not safe, and runs without a click only when the model vouches for it,
//! behind the read-only account and transaction (`execute/postgres.rs`, `execute/mysql.rs`).
//!
//! Before the allow-list, [`side_effect`] names the built-ins (and common extensions') with
//! effects, matched on the last name part whatever the schema or quoting: those are never
//! safe, and the ones that escape the walls (server files, shell, other connections, SQL
//! given as text, other sessions) are destructive, which the model's `low` cannot lift.

use std::collections::HashSet;
use std::sync::LazyLock;

use sqlparser::ast::Ident;

use crate::core::tools::SqlDialect;

/// What calling a function does, beyond returning a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FunctionRisk {
    /// A built-in of the engine that only computes or reads.
    Builtin,
    /// Not known to be a read-only built-in: user-defined, from an extension, or unknown.
    Unlisted(&'static str),
    /// Has a side effect (a lock, a setting, a sleep, a sequence, ...): needs a person
    /// unless the model vouches for it.
    SideEffect(&'static str),
    /// Destroys something or escapes the read-only wall: always needs a person.
    Destructive(&'static str),
}

static POSTGRES: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| names(include_str!("builtins/postgres.txt")));
/// The functions of PostgreSQL's contrib extensions (pg_trgm, hstore, isn, cube, ...) that
/// only compute or read, generated from the catalogue like `POSTGRES`.
static POSTGRES_CONTRIB: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| names(include_str!("builtins/postgres.contrib.txt")));
static MYSQL: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| names(include_str!("builtins/mysql.txt")));
/// SQLite's reviewed built-ins: not consulted to judge a call on riskgate's own connection
/// (see [`judge`]), but checked against what the bundled engine has, so a new engine
/// function is reviewed before it runs without a click; SQL for the `sqlite3` program calls
/// only these ([`in_sqlite_engine`]).
static SQLITE: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| names(include_str!("builtins/sqlite.txt")));

fn names(list: &'static str) -> HashSet<&'static str> {
    list.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

/// Whether `name` is one of the bundled SQLite engine's functions reviewed here, or a
/// read-only pragma's table function. The `sqlite3` program adds functions of its own that
/// are not (`sha3_query` runs the SQL it is given, `writefile` writes a file, `edit` starts
/// an editor), so SQL for that program calls only these to be read as safe.
pub(crate) fn in_sqlite_engine(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SQLITE.contains(lower.as_str())
        || lower
            .strip_prefix("pragma_")
            .is_some_and(super::pragma::is_read_only_table_function)
}

/// Judges a call of the function named by `parts` (quotes already removed) with `args`
/// arguments (`None` when not a plain list), in `dialect`.
pub(super) fn judge(parts: &[&Ident], args: Option<usize>, dialect: SqlDialect) -> FunctionRisk {
    let Some((name, qualifiers)) = parts.split_last() else {
        return FunctionRisk::Unlisted("has no name this check can read");
    };
    let lower = name.value.to_lowercase();
    match side_effect(&lower, args) {
        FunctionRisk::Builtin => {}
        risk => return risk,
    }
    let found = match dialect {
        SqlDialect::Postgres => {
            let in_pg_catalog = match qualifiers {
                [] => true,
                [schema] => folded(schema) == "pg_catalog",
                _ => false,
            };
            if !in_pg_catalog {
                return FunctionRisk::Unlisted(
                    "is qualified by a schema other than pg_catalog, so it is not the built-in",
                );
            }
            let name = folded(name);
            // A contrib extension's function is found through the search path, so only an
            // unqualified name can be it.
            POSTGRES.contains(name.as_str())
                || (qualifiers.is_empty() && POSTGRES_CONTRIB.contains(name.as_str()))
        }
        SqlDialect::Mysql => {
            if !qualifiers.is_empty() || name.quote_style.is_some() {
                return FunctionRisk::Unlisted(
                    "is quoted or qualified by a database, which names a stored function",
                );
            }
            MYSQL.contains(lower.as_str()) || lower.starts_with("st_")
        }
        SqlDialect::Sqlite => {
            if !qualifiers.is_empty() {
                return FunctionRisk::Unlisted("is qualified, so it is not a built-in");
            }
            // A riskgate SQLite connection has the bundled engine's functions and no
            // other: riskgate registers none, and the read-only connection an auto call
            // runs on refuses `load_extension`. The engine's functions are reviewed (the
            // list, and `side_effect` above for those with effects; a test checks that
            // every one the engine lists is either), and a name the engine lacks fails
            // with "no such function" before the statement runs. Any other name is safe
            // to try, and the read-only connection holds whatever it is. A pragma's table
            // function is judged as its pragma is.
            match lower.strip_prefix("pragma_") {
                Some(pragma) => super::pragma::is_read_only_table_function(pragma),
                None => true,
            }
        }
    };
    if found {
        FunctionRisk::Builtin
    } else {
        FunctionRisk::Unlisted("is not a built-in function this check knows to only read")
    }
}

/// A PostgreSQL name as the server looks it up: unquoted names fold to lower case, quoted
/// names stay as written.
fn folded(ident: &Ident) -> String {
    match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_lowercase(),
    }
}

/// The built-in (and common extension) functions with effects, by their name's last part,
/// already lower-cased; [`FunctionRisk::Builtin`] for every other name, which only means
/// "not on this list". `args` tells the two `ts_rewrite` forms apart.
pub(super) fn side_effect(name: &str, args: Option<usize>) -> FunctionRisk {
    if let Some(reason) = destroys(name).or_else(|| escapes_the_walls(name, args)) {
        FunctionRisk::Destructive(reason)
    } else if let Some(reason) = has_an_effect(name) {
        FunctionRisk::SideEffect(reason)
    } else {
        FunctionRisk::Builtin
    }
}

/// Functions that destroy something: other sessions or their queries, large objects,
/// server files, replication state, statistics; or that run native code or a shell.
fn destroys(name: &str) -> Option<&'static str> {
    let reason = match name {
        "pg_terminate_backend" | "pg_cancel_backend" => "stops other sessions or their queries",
        "dblink" | "dblink_exec" | "dblink_send_query" | "dblink_open" => {
            "runs SQL on another connection, outside the read-only transaction"
        }
        "lo_unlink" => "deletes a large object",
        "lo_put" | "lo_truncate" | "lowrite" | "lo_write" => "overwrites a large object",
        "lo_export" | "pg_file_write" | "writefile" => "writes a file on the server",
        "pg_file_rename" | "pg_file_unlink" => "renames or deletes a server file",
        "load_extension" => "loads native code into the database server",
        "sys_exec" | "sys_eval" => "runs a shell command on the server",
        "fts3_tokenizer" => "can register a native code pointer (memory corruption)",
        "pg_drop_replication_slot" | "pg_replication_origin_drop" => "drops replication state",
        "pg_truncate_visibility_map" => "truncates a visibility map",
        "pg_promote" => "promotes a standby server to primary",
        "pg_stat_statements_reset" => "erases collected statistics",
        _ if name.starts_with("pg_stat_reset") => "erases collected statistics",
        _ => return None,
    };
    Some(reason)
}

/// Ways out of the walls: server files and directories, SQL given as text (which this
/// check cannot read), other connections. Read-only transactions do not stop any of them
/// for a privileged account.
fn escapes_the_walls(name: &str, args: Option<usize>) -> Option<&'static str> {
    let reason = match name {
        "pg_read_file"
        | "pg_read_binary_file"
        | "pg_stat_file"
        | "pg_file_read"
        | "pg_file_length"
        | "pg_logdir_ls"
        | "load_file"
        | "readfile"
        | "fsdir"
        | "zipfile"
        | "lo_import" => "reads files on the database server",
        _ if name.starts_with("pg_ls_") => "lists directories on the database server",
        "query_to_xml"
        | "query_to_xml_and_xmlschema"
        | "query_to_xmlschema"
        | "cursor_to_xml"
        | "cursor_to_xmlschema"
        | "ts_stat"
        | "sha3_query" => {
            "runs SQL given as text, which this check reads only as a plain string literal"
        }
        // `ts_rewrite(query, 'SELECT ...')` runs its second argument; the three-argument
        // form only rewrites a tsquery.
        "ts_rewrite" if args != Some(3) => {
            "runs SQL given as text, which this check reads only as a plain string literal"
        }
        _ if name.starts_with("dblink") => {
            "uses another database connection, outside the read-only transaction"
        }
        _ => return None,
    };
    Some(reason)
}

/// Functions with an effect that stays inside the walls: a sleep, large objects, a
/// setting, a sequence, a lock, a notification, server administration.
fn has_an_effect(name: &str) -> Option<&'static str> {
    let reason = match name {
        "sleep" | "benchmark" => "keeps the session busy on purpose",
        // SQLite's FTS3/FTS4 auxiliary function: it merges the table's index segments.
        "optimize" => "merges a full-text index, which is a write",
        "sqlite_log" => "writes a message into the application's log",
        _ if name.starts_with("pg_sleep") => "keeps the session busy on purpose",
        "loread" | "lo_creat" | "lo_create" | "lo_open" | "lo_close" | "lo_from_bytea" => {
            "works on large objects"
        }
        _ if name.starts_with("lo_") => "works on large objects",
        "set_config" => "changes a session setting",
        "nextval" | "setval" => "advances or sets a sequence",
        "get_lock" | "release_lock" | "release_all_locks" => {
            "takes or releases a named lock that outlives the statement"
        }
        _ if name.starts_with("pg_advisory_") || name.starts_with("pg_try_advisory_") => {
            "takes or releases an advisory lock that can outlive the transaction"
        }
        "pg_notify" => "sends a notification to listeners",
        "txid_current" | "pg_current_xact_id" => "assigns a transaction id, which is a write",
        "pg_reload_conf"
        | "pg_rotate_logfile"
        | "pg_switch_wal"
        | "pg_switch_xlog"
        | "pg_create_restore_point"
        | "pg_backup_start"
        | "pg_backup_stop"
        | "pg_start_backup"
        | "pg_stop_backup"
        | "pg_wal_replay_pause"
        | "pg_wal_replay_resume"
        | "pg_log_backend_memory_contexts"
        | "pg_log_standby_snapshot"
        | "pg_import_system_collations"
        | "pg_replication_slot_advance"
        | "pg_logical_emit_message"
        | "pg_logical_slot_get_changes"
        | "pg_logical_slot_get_binary_changes"
        | "pg_prewarm" => "is a server administration function",
        _ if (name.starts_with("pg_create_") && name.ends_with("_replication_slot"))
            || (name.starts_with("pg_copy_") && name.ends_with("_replication_slot"))
            || name.starts_with("pg_replication_origin_")
            || name.starts_with("binary_upgrade_") =>
        {
            "is a server administration function"
        }
        "master_pos_wait"
        | "source_pos_wait"
        | "master_gtid_wait"
        | "wait_for_executed_gtid_set"
        | "wait_until_sql_thread_after_gtids" => {
            "waits on replication and can block for a long time"
        }
        "sys_get" | "sys_set" => "reads or changes the server's environment",
        "edit" => "opens an editor on the machine running SQLite",
        _ => return None,
    };
    Some(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(name: &str) -> Ident {
        Ident::new(name)
    }

    fn judge_name(parts: &[Ident], dialect: SqlDialect) -> FunctionRisk {
        let refs: Vec<&Ident> = parts.iter().collect();
        judge(&refs, Some(1), dialect)
    }

    #[test]
    fn families_match_by_prefix() {
        for name in [
            "pg_sleep_for",
            "pg_advisory_xact_lock",
            "pg_try_advisory_lock_shared",
            "lo_lseek64",
            "pg_create_logical_replication_slot",
        ] {
            assert!(
                matches!(side_effect(name, None), FunctionRisk::SideEffect(_)),
                "{name}"
            );
        }
        for name in ["pg_stat_reset_shared", "pg_ls_waldir", "dblink_connect_u"] {
            assert!(
                matches!(side_effect(name, None), FunctionRisk::Destructive(_)),
                "{name}"
            );
        }
    }

    #[test]
    fn ts_rewrite_runs_sql_only_in_its_two_argument_form() {
        assert!(matches!(
            side_effect("ts_rewrite", Some(2)),
            FunctionRisk::Destructive(_)
        ));
        assert_eq!(side_effect("ts_rewrite", Some(3)), FunctionRisk::Builtin);
    }

    #[test]
    fn ordinary_built_ins_are_on_every_engine_list() {
        for (dialect, names) in [
            (
                SqlDialect::Postgres,
                &[
                    "now",
                    "lower",
                    "count",
                    "coalesce",
                    "version",
                    "jsonb_agg",
                    "row_number",
                    "md5",
                    "generate_series",
                    "random",
                ][..],
            ),
            (
                SqlDialect::Mysql,
                &[
                    "now",
                    "lower",
                    "count",
                    "coalesce",
                    "version",
                    "json_extract",
                    "row_number",
                    "md5",
                    "date_format",
                    "st_distance",
                ][..],
            ),
            (
                SqlDialect::Sqlite,
                &[
                    "lower",
                    "count",
                    "coalesce",
                    "json_extract",
                    "row_number",
                    "strftime",
                    "json_each",
                    "pragma_table_info",
                ][..],
            ),
        ] {
            for name in names {
                assert_eq!(
                    judge_name(&[plain(name)], dialect),
                    FunctionRisk::Builtin,
                    "{dialect} {name}"
                );
            }
        }
    }

    #[test]
    fn names_are_judged_as_the_engine_finds_them() {
        let quoted = |name: &str| Ident::with_quote('"', name);
        let pg = SqlDialect::Postgres;
        let builtin = FunctionRisk::Builtin;
        assert_eq!(
            judge_name(&[plain("PG_CATALOG"), plain("LOWER")], pg),
            builtin
        );
        assert_eq!(judge_name(&[quoted("lower")], pg), builtin);
        // A quoted upper-case name is another function on PostgreSQL.
        assert!(matches!(
            judge_name(&[quoted("LOWER")], pg),
            FunctionRisk::Unlisted(_)
        ));
        assert!(matches!(
            judge_name(&[plain("public"), plain("lower")], pg),
            FunctionRisk::Unlisted(_)
        ));
        assert!(matches!(
            judge_name(&[plain("my_func")], pg),
            FunctionRisk::Unlisted(_)
        ));
        // The side-effect list looks at the last part whatever the schema or quotes.
        assert!(matches!(
            judge_name(&[plain("public"), quoted("pg_read_file")], pg),
            FunctionRisk::Destructive(_)
        ));
        let my = SqlDialect::Mysql;
        assert_eq!(judge_name(&[plain("LOWER")], my), builtin);
        assert!(matches!(
            judge_name(&[Ident::with_quote('`', "lower")], my),
            FunctionRisk::Unlisted(_)
        ));
        assert!(matches!(
            judge_name(&[plain("shop"), plain("lower")], my),
            FunctionRisk::Unlisted(_)
        ));
        assert!(matches!(
            judge_name(&[plain("pragma_writable_schema")], SqlDialect::Sqlite),
            FunctionRisk::Unlisted(_)
        ));
    }

    /// postgres.txt is generated (builtins/generate_postgres.py); a hand edit that adds a
    /// denied name or drops a reviewed addition shows here.
    #[test]
    fn the_postgres_list_keeps_its_reviewed_exceptions() {
        let reviewed = |file: &'static str| -> Vec<&'static str> {
            file.lines()
                .filter_map(|line| line.split('#').next())
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .collect()
        };
        for name in reviewed(include_str!("builtins/postgres.deny.txt")) {
            assert!(!POSTGRES.contains(name), "{name} is denied but listed");
        }
        for name in reviewed(include_str!("builtins/postgres.allow.txt")) {
            assert!(POSTGRES.contains(name), "{name} is allowed but not listed");
        }
        // Newer built-ins come from the catalogue, with their volatility.
        for name in [
            "gamma",
            "lgamma",
            "pg_input_is_valid",
            "array_sort",
            "any_value",
        ] {
            assert!(POSTGRES.contains(name), "{name}");
        }
        for name in ["setseed", "nextval", "pg_notify", "pg_sleep"] {
            assert!(!POSTGRES.contains(name), "{name} is VOLATILE");
        }
    }

    /// Every function the bundled SQLite has (its own list, as a riskgate connection sees
    /// it) is reviewed: on the list of those that only compute or read, or judged for its
    /// effect. A name the engine lacks cannot run at all.
    #[tokio::test]
    async fn every_function_of_the_bundled_sqlite_is_reviewed() {
        use sqlx::Connection;
        let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .expect("an in-memory database");
        let names: Vec<(String,)> =
            sqlx::query_as("SELECT DISTINCT name FROM pragma_function_list ORDER BY name")
                .fetch_all(&mut conn)
                .await
                .expect("the engine's functions");
        assert!(names.len() > 100, "{names:?}");
        let unreviewed: Vec<&str> = names
            .iter()
            .map(|(name,)| name.as_str())
            .filter(|name| {
                !SQLITE.contains(name) && side_effect(name, Some(1)) == FunctionRisk::Builtin
            })
            .collect();
        assert!(unreviewed.is_empty(), "not reviewed: {unreviewed:?}");
        let missing = sqlx::query("SELECT ieee754(47.49)")
            .fetch_all(&mut conn)
            .await
            .expect_err("a shell extension's function, not the library's");
        assert!(
            missing.to_string().contains("no such function"),
            "{missing}"
        );
    }

    #[test]
    fn no_list_names_a_function_with_effects() {
        for (dialect, list) in [
            (SqlDialect::Postgres, &*POSTGRES),
            (SqlDialect::Postgres, &*POSTGRES_CONTRIB),
            (SqlDialect::Mysql, &*MYSQL),
            (SqlDialect::Sqlite, &*SQLITE),
        ] {
            for name in list {
                assert_eq!(
                    side_effect(name, Some(3)),
                    FunctionRisk::Builtin,
                    "{dialect} {name}"
                );
            }
        }
    }
}
