//! Rebuilds when a migration file is added: `sqlx::migrate!` embeds the files of
//! `migrations/`, and cargo only watches the files it already embedded.

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
