//! Built-in functions that are not read-only, by what they do.
//!
//! A SELECT can still change the world through the functions it calls. This list names the
//! engines' built-in ones (PostgreSQL and its common extensions, MySQL/MariaDB and
//! lib_mysqludf_sys, SQLite and its CLI). Unknown user functions cannot be judged from their
//! name; the engine's read-only mode is the wall there (see SQL_SAFETY.md).

/// What calling a function does, beyond returning a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FunctionRisk {
    /// Not on the list: judged by the engine's read-only mode, not here.
    Harmless,
    /// Has a side effect (a lock, a setting, a sleep, a server file read, ...): needs a person.
    SideEffect(&'static str),
    /// Destroys something or escapes the read-only wall: always needs a person.
    Destructive(&'static str),
}

/// Judges a function by its name's last part, already lower-cased.
pub(super) fn function_risk(name: &str) -> FunctionRisk {
    use FunctionRisk::{Destructive, Harmless, SideEffect};
    match name {
        "pg_terminate_backend" | "pg_cancel_backend" => {
            Destructive("stops other sessions or their queries")
        }
        "dblink" | "dblink_exec" | "dblink_send_query" | "dblink_open" => {
            Destructive("runs SQL on another connection, outside the read-only transaction")
        }
        "lo_unlink" => Destructive("deletes a large object"),
        "lo_put" | "lo_truncate" | "lowrite" | "lo_write" => {
            Destructive("overwrites a large object")
        }
        "lo_export" | "pg_file_write" | "writefile" => Destructive("writes a file on the server"),
        "pg_file_rename" | "pg_file_unlink" => Destructive("renames or deletes a server file"),
        "load_extension" => Destructive("loads native code into the database server"),
        "sys_exec" | "sys_eval" => Destructive("runs a shell command on the server"),
        "fts3_tokenizer" => Destructive("can register a native code pointer (memory corruption)"),
        "pg_drop_replication_slot" | "pg_replication_origin_drop" => {
            Destructive("drops replication state")
        }
        "pg_truncate_visibility_map" => Destructive("truncates a visibility map"),
        "pg_promote" => Destructive("promotes a standby server to primary"),
        "pg_stat_statements_reset" => Destructive("erases collected statistics"),
        _ if name.starts_with("pg_stat_reset") => Destructive("erases collected statistics"),

        "sleep" | "benchmark" => SideEffect("keeps the session busy on purpose"),
        _ if name.starts_with("pg_sleep") => SideEffect("keeps the session busy on purpose"),
        "pg_read_file"
        | "pg_read_binary_file"
        | "pg_stat_file"
        | "pg_file_read"
        | "pg_file_length"
        | "pg_logdir_ls"
        | "load_file"
        | "readfile"
        | "fsdir"
        | "zipfile" => SideEffect("reads files on the server"),
        _ if name.starts_with("pg_ls_") => SideEffect("lists directories on the server"),
        "lo_import" => SideEffect("reads a server file into a large object"),
        "loread" | "lo_creat" | "lo_create" | "lo_open" | "lo_close" | "lo_from_bytea" => {
            SideEffect("works on large objects")
        }
        _ if name.starts_with("lo_") => SideEffect("works on large objects"),
        _ if name.starts_with("dblink") => SideEffect("uses another database connection"),
        "set_config" => SideEffect("changes a session setting"),
        "nextval" | "setval" => SideEffect("advances or sets a sequence"),
        "get_lock" | "release_lock" | "release_all_locks" => {
            SideEffect("takes or releases a named lock that outlives the statement")
        }
        _ if name.starts_with("pg_advisory_") || name.starts_with("pg_try_advisory_") => {
            SideEffect("takes or releases an advisory lock that can outlive the transaction")
        }
        "pg_notify" => SideEffect("sends a notification to listeners"),
        "txid_current" | "pg_current_xact_id" => {
            SideEffect("assigns a transaction id, which is a write")
        }
        "query_to_xml"
        | "query_to_xml_and_xmlschema"
        | "query_to_xmlschema"
        | "cursor_to_xml"
        | "cursor_to_xmlschema"
        | "ts_stat" => SideEffect("runs a query given as text, which this check cannot see"),
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
        | "pg_prewarm" => SideEffect("is a server administration function"),
        _ if (name.starts_with("pg_create_") && name.ends_with("_replication_slot"))
            || (name.starts_with("pg_copy_") && name.ends_with("_replication_slot"))
            || name.starts_with("pg_replication_origin_")
            || name.starts_with("binary_upgrade_") =>
        {
            SideEffect("is a server administration function")
        }
        "master_pos_wait"
        | "source_pos_wait"
        | "master_gtid_wait"
        | "wait_for_executed_gtid_set"
        | "wait_until_sql_thread_after_gtids" => {
            SideEffect("waits on replication and can block for a long time")
        }
        "sys_get" | "sys_set" => SideEffect("reads or changes the server's environment"),
        "edit" => SideEffect("opens an editor on the machine running SQLite"),
        _ => Harmless,
    }
}

#[cfg(test)]
mod tests {
    use super::{FunctionRisk, function_risk};

    #[test]
    fn families_match_by_prefix() {
        for name in [
            "pg_sleep_for",
            "pg_advisory_xact_lock",
            "pg_try_advisory_lock_shared",
            "lo_lseek64",
            "dblink_connect_u",
            "pg_ls_waldir",
            "pg_create_logical_replication_slot",
        ] {
            assert!(
                matches!(function_risk(name), FunctionRisk::SideEffect(_)),
                "{name}"
            );
        }
        assert!(matches!(
            function_risk("pg_stat_reset_shared"),
            FunctionRisk::Destructive(_)
        ));
    }

    #[test]
    fn ordinary_functions_are_harmless() {
        for name in [
            "now",
            "lower",
            "count",
            "coalesce",
            "version",
            "log",
            "lower_inc",
            "md5",
        ] {
            assert_eq!(function_risk(name), FunctionRisk::Harmless, "{name}");
        }
    }
}
