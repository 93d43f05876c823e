//! A PostgreSQL schema of its own for one test, on the server `RISKGATE_TEST_POSTGRES_URL`
//! names, dropped when the test ends: tests sharing the server never see each other's rows.

use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection};

pub const POSTGRES_ENV: &str = "RISKGATE_TEST_POSTGRES_URL";

pub struct TestSchema {
    /// The server's URL with the schema as its search path: give it to the store.
    pub url: String,
    /// The server's URL as given.
    pub admin_url: String,
    /// The schema's name.
    pub schema: String,
}

impl TestSchema {
    /// `None` when `RISKGATE_TEST_POSTGRES_URL` is not set (the test says it is skipped).
    pub async fn new() -> Option<Self> {
        Self::named("t").await
    }

    /// Like [`TestSchema::new`], the schema's name starting with `prefix`.
    pub async fn named(prefix: &str) -> Option<Self> {
        let admin_url = std::env::var(POSTGRES_ENV).ok().filter(|u| !u.is_empty())?;
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        let schema = format!("{prefix}_{:016x}", hasher.finish());
        let mut admin = sqlx::PgConnection::connect(&admin_url)
            .await
            .expect("RISKGATE_TEST_POSTGRES_URL is set, so PostgreSQL must be reachable");
        sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
            .execute(&mut admin)
            .await
            .expect("create schema");
        admin.close().await.expect("close");
        let separator = if admin_url.contains('?') { '&' } else { '?' };
        let url = format!("{admin_url}{separator}options[search_path]={schema}");
        Some(Self {
            url,
            admin_url,
            schema,
        })
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        let (admin_url, schema) = (self.admin_url.clone(), self.schema.clone());
        // Drop runs inside the test's runtime: clean up from a thread with its own.
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async {
                let mut admin = sqlx::PgConnection::connect(&admin_url).await?;
                sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
                    .execute(&mut admin)
                    .await?;
                admin.close().await
            })
        });
        if let Ok(Err(e)) = cleanup.join() {
            eprintln!("could not drop test schema {}: {e}", self.schema);
        }
    }
}
