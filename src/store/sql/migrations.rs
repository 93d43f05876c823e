//! The schema, one numbered migration per change, embedded in the binary (sqlx's `migrate!`
//! needs its macros feature, so they are listed by hand). SQLite and PostgreSQL each have a
//! folder under `migrations/`: the SQL differs in types and identity columns. Add a file to
//! both folders and a line to both lists below; never edit an applied file (sqlx refuses a
//! database whose applied migration no longer matches its checksum).

use sqlx::SqlStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// (version, description, SQL) of each SQLite migration.
const SQLITE: &[(i64, &str, &str)] = &[
    (
        1,
        "initial",
        include_str!("../../../migrations/sqlite/0001_initial.sql"),
    ),
    (
        2,
        "audit idempotency key",
        include_str!("../../../migrations/sqlite/0002_audit_idempotency_key.sql"),
    ),
    (
        3,
        "undeliverable approvals",
        include_str!("../../../migrations/sqlite/0003_undeliverable_approvals.sql"),
    ),
    (
        4,
        "approval choices",
        include_str!("../../../migrations/sqlite/0004_approval_choices.sql"),
    ),
];

/// (version, description, SQL) of each PostgreSQL migration.
const POSTGRES: &[(i64, &str, &str)] = &[
    (
        1,
        "initial",
        include_str!("../../../migrations/postgres/0001_initial.sql"),
    ),
    (
        2,
        "audit idempotency key",
        include_str!("../../../migrations/postgres/0002_audit_idempotency_key.sql"),
    ),
    (
        3,
        "undeliverable approvals",
        include_str!("../../../migrations/postgres/0003_undeliverable_approvals.sql"),
    ),
    (
        4,
        "approval choices",
        include_str!("../../../migrations/postgres/0004_approval_choices.sql"),
    ),
];

fn migrator(list: &'static [(i64, &'static str, &'static str)]) -> Migrator {
    Migrator::with_migrations(
        list.iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    description.into(),
                    MigrationType::Simple,
                    SqlStr::from_static(sql),
                    false,
                )
            })
            .collect(),
    )
}

pub fn sqlite() -> Migrator {
    migrator(SQLITE)
}

pub fn postgres() -> Migrator {
    migrator(POSTGRES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_backends_have_the_same_versions() {
        let versions = |list: &[(i64, &'static str, &'static str)]| {
            list.iter().map(|&(v, d, _)| (v, d)).collect::<Vec<_>>()
        };
        assert_eq!(versions(SQLITE), versions(POSTGRES));
        let dir = |name: &str| {
            let mut files: Vec<String> =
                std::fs::read_dir(format!("{}/migrations/{name}", env!("CARGO_MANIFEST_DIR")))
                    .expect("migrations folder")
                    .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                    .collect();
            files.sort();
            files
        };
        // Every file on disk is embedded: nothing is forgotten in the lists above.
        assert_eq!(dir("sqlite").len(), SQLITE.len());
        assert_eq!(dir("sqlite"), dir("postgres"));
    }
}
