//! The schema, one numbered migration per change, embedded in the binary by sqlx's
//! `migrate!`: each file's version and description come from its name
//! (`0002_audit_idempotency_key.sql` is version 2, "audit idempotency key") and its checksum
//! is the SHA-384 of its text. SQLite and PostgreSQL each have a folder under
//! `migrations/`: the SQL differs in types and identity columns. Add a file to both folders
//! (`build.rs` makes cargo embed a new file); never edit an applied file (sqlx refuses a
//! database whose applied migration no longer matches its checksum).

use sqlx::migrate::Migrator;

static SQLITE: Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES: Migrator = sqlx::migrate!("migrations/postgres");

pub fn sqlite() -> &'static Migrator {
    &SQLITE
}

pub fn postgres() -> &'static Migrator {
    &POSTGRES
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha384};
    use sqlx::Connection;
    use sqlx::migrate::{Migration, MigrationType};

    use super::*;

    /// The SQLite list releases before `migrate!` embedded, as they built it by hand (the
    /// PostgreSQL list had the same versions and descriptions).
    const HAND_LIST_SQLITE: [(i64, &str, &str); 4] = [
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

    fn files(folder: &str) -> Vec<(String, String)> {
        let dir = format!("{}/migrations/{folder}", env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .expect("migrations folder")
            .map(|entry| {
                let path = entry.expect("entry").path();
                let name = path
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned();
                (
                    name,
                    std::fs::read_to_string(&path).expect("migration text"),
                )
            })
            .collect();
        files.sort();
        files
    }

    #[test]
    fn every_file_is_embedded_with_the_version_description_and_checksum_of_its_text() {
        for (folder, migrator) in [("sqlite", sqlite()), ("postgres", postgres())] {
            let embedded: Vec<&Migration> = migrator.iter().collect();
            let files = files(folder);
            assert_eq!(
                embedded.len(),
                files.len(),
                "{folder}: every file is embedded"
            );
            for (migration, (name, text)) in embedded.iter().zip(&files) {
                let (number, rest) = name.split_once('_').expect("NNNN_what.sql");
                assert_eq!(migration.version, number.parse::<i64>().expect("a number"));
                assert_eq!(
                    migration.description,
                    rest.trim_end_matches(".sql").replace('_', " ")
                );
                assert_eq!(migration.migration_type, MigrationType::Simple);
                assert!(!migration.no_tx, "{name} runs in a transaction");
                // What the hand list computed (`Migration::new` hashes the SQL text), so
                // databases it migrated still validate.
                assert_eq!(
                    migration.checksum.as_ref(),
                    &Sha384::digest(text.as_bytes())[..],
                    "{folder}/{name}"
                );
                assert_eq!(migration.sql.as_str(), text.as_str());
            }
            let versions: Vec<(i64, &str)> = embedded
                .iter()
                .map(|m| (m.version, m.description.as_ref()))
                .take(HAND_LIST_SQLITE.len())
                .collect();
            let hand: Vec<(i64, &str)> = HAND_LIST_SQLITE.iter().map(|&(v, d, _)| (v, d)).collect();
            assert_eq!(versions, hand, "{folder}");
        }
    }

    #[test]
    fn both_backends_have_the_same_versions() {
        let versions = |migrator: &Migrator| {
            migrator
                .iter()
                .map(|m| (m.version, m.description.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(versions(sqlite()), versions(postgres()));
        let names = |folder| {
            files(folder)
                .into_iter()
                .map(|(name, _)| name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names("sqlite"), names("postgres"));
    }

    /// (version, checksum) of each applied migration.
    async fn applied(connection: &mut sqlx::SqliteConnection) -> Vec<(i64, Vec<u8>)> {
        sqlx::query_as("SELECT version, checksum FROM _sqlx_migrations ORDER BY version")
            .fetch_all(connection)
            .await
            .expect("the applied migrations")
    }

    #[tokio::test]
    async fn a_database_migrated_by_the_hand_list_is_accepted_and_left_alone() {
        // The list as releases before `migrate!` built it.
        let hand_list = Migrator::with_migrations(
            HAND_LIST_SQLITE
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        description.into(),
                        MigrationType::Simple,
                        sqlx::SqlStr::from_static(sql),
                        false,
                    )
                })
                .collect(),
        );
        let mut connection = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .expect("an in-memory database");
        hand_list.run(&mut connection).await.expect("the hand list");
        let before = applied(&mut connection).await;
        sqlite()
            .run(&mut connection)
            .await
            .expect("migrate! accepts what the hand list applied");
        let after = applied(&mut connection).await;
        assert_eq!(before.len(), HAND_LIST_SQLITE.len());
        assert_eq!(
            after[..before.len()],
            before[..],
            "nothing applied is redone"
        );
    }
}
