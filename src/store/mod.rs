//! Where the bot keeps its own state. For now an in-memory store (state lives as long as the
//! process); the sqlx store for SQLite and PostgreSQL arrives with the durable-state issue.

mod memory;

pub use memory::MemoryStore;
