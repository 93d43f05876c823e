//! `execute_sql`: one SQL statement against a named target database.
//!
//! The assessor (`assess`) is this tool's half of the risk gate; the executor (`execute`)
//! runs what the gate let through behind the engine's own walls, `value` turns driver values
//! into text, `render` makes the three faces of the output, `demo` creates the demo
//! database used when none is configured, and `schema` tells the model each database's
//! tables and columns before its first call.

mod assess;
mod demo;
mod execute;
mod render;
mod schema;
mod show;
mod similar;
mod value;

pub(crate) use assess::in_sqlite_engine;
pub use assess::{SqlRules, assess_sql};

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::config::Settings;
use crate::core::risk::Assessment;
use crate::core::tools::{
    Approval, AssessContext, BoxFuture, CallBrief, Preflight, RiskAssessor, SqlDialect, Tool,
    ToolError, ToolOutput, ToolSet,
};
use execute::{Access, SqlExecutor};
use schema::SchemaCache;

pub const NAME: &str = "execute_sql";

/// Adds the SQL tool as `[sql]` and `[tools.execute_sql]` set it up.
pub fn register(tools: &mut ToolSet, settings: &Settings) {
    tools.register_with(
        Arc::new(SqlTool::from_settings(settings)),
        settings.tools.execute_sql.enabled,
    );
}

/// The name of the demo database used when no `[[sql.databases]]` is configured.
pub const DEMO_DATABASE: &str = "demo";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SqlArgs {
    sql: String,
    #[serde(default)]
    database: Option<String>,
}

/// The SQL tool: its target databases (name and dialect), the operator's rules, and the
/// executor that reaches the databases.
#[derive(Debug, Clone)]
pub struct SqlTool {
    /// Name and dialect of each target; the first is the default.
    databases: Vec<(String, SqlDialect)>,
    rules: SqlRules,
    executor: Arc<SqlExecutor>,
    /// The databases' tables and columns as last read, for the prompt.
    schema: Arc<SchemaCache>,
}

impl SqlTool {
    /// A tool that can assess calls but has no connection settings: executing says so. Use
    /// [`SqlTool::from_settings`] for one that runs statements.
    pub fn new(databases: Vec<(String, SqlDialect)>, rules: SqlRules) -> Self {
        Self {
            databases,
            rules,
            executor: Arc::new(SqlExecutor::without_targets()),
            schema: Arc::new(SchemaCache::from_settings(&Settings::default())),
        }
    }

    pub fn from_settings(settings: &Settings) -> Self {
        let mut databases: Vec<(String, SqlDialect)> = settings
            .sql
            .databases
            .iter()
            .filter_map(|db| db.dialect().ok().map(|d| (db.name.clone(), d)))
            .collect();
        if databases.is_empty() {
            databases.push((DEMO_DATABASE.to_owned(), SqlDialect::Sqlite));
        }
        let rules = SqlRules::new(
            &settings.tools.execute_sql.allow,
            &settings.tools.execute_sql.deny,
        );
        Self {
            databases,
            rules,
            executor: Arc::new(SqlExecutor::from_settings(settings)),
            schema: Arc::new(SchemaCache::from_settings(settings)),
        }
    }

    fn dialect_of(&self, database: Option<&str>) -> Result<SqlDialect, String> {
        match database {
            None => Ok(self
                .databases
                .first()
                .map(|(_, d)| *d)
                .unwrap_or(SqlDialect::Sqlite)),
            Some(name) => self
                .databases
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, d)| *d)
                .ok_or_else(|| {
                    format!(
                        "there is no database named {name:?} (configured: {})",
                        self.databases
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }),
        }
    }
}

impl RiskAssessor for SqlTool {
    fn assess(&self, arguments: &Map<String, Value>, ctx: &AssessContext) -> Assessment {
        let args: SqlArgs = match super::parse_arguments(NAME, arguments) {
            Ok(args) => args,
            Err(assessment) => return assessment,
        };
        let dialect = match (ctx.dialect, self.dialect_of(args.database.as_deref())) {
            (Some(dialect), _) => dialect,
            (None, Ok(dialect)) => dialect,
            (None, Err(problem)) => return Assessment::Forbidden(problem),
        };
        assess_sql(&args.sql, dialect, &self.rules)
    }
}

impl Tool for SqlTool {
    fn name(&self) -> &str {
        NAME
    }

    fn similarity(&self, arguments: &Map<String, Value>) -> Option<crate::core::rules::Similarity> {
        let args: SqlArgs = super::parse_arguments(NAME, arguments).ok()?;
        let dialect = self.dialect_of(args.database.as_deref()).ok()?;
        let database = match args.database {
            Some(name) => name,
            None => self.databases.first()?.0.clone(),
        };
        similar::similarity(&args.sql, dialect, &database)
    }

    fn description(&self) -> &str {
        "Run one SQL statement against a target database and return its rows (or, for a confirmed write, the number of rows affected). Use the database's own SQL dialect."
    }

    /// Runs the statement: read-only unless a person confirmed it (see `execute`).
    fn execute<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: SqlArgs =
                serde_json::from_value(Value::Object(arguments.clone())).map_err(|e| {
                    ToolError::InvalidArguments(format!(
                        "{e}; {NAME} takes `sql` (one statement) and optionally `database`"
                    ))
                })?;
            let access = Access::from(approval);
            let result = self
                .executor
                .run(&args.sql, args.database.as_deref(), access)
                .await;
            if access == Access::ReadWrite {
                // It may have created, changed or dropped a table, even when it failed
                // halfway (MySQL commits DDL at once).
                self.schema.mark_stale();
            }
            result
        })
    }

    fn prompt_context(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(self.schema.text(&self.executor))
    }

    fn target(&self, arguments: &Map<String, Value>) -> Option<String> {
        let named = arguments.get("database").and_then(Value::as_str);
        let (name, dialect) = match named {
            Some(name) => self.databases.iter().find(|(n, _)| n == name)?,
            None => self.databases.first()?,
        };
        let default = if named.is_none() { ", the default" } else { "" };
        Some(format!("database `{name}` ({dialect}{default})"))
    }

    fn preflight(&self) -> BoxFuture<'_, Vec<Preflight>> {
        Box::pin(self.executor.check_auto_accounts())
    }

    fn whole_call(&self, arguments: &Map<String, Value>) -> String {
        show::whole_call(arguments)
    }

    fn brief_call(&self, arguments: &Map<String, Value>) -> CallBrief {
        show::brief_call(arguments)
    }

    fn call_line(&self, arguments: &Map<String, Value>) -> String {
        show::call_line(arguments)
    }

    fn parameters(&self) -> Value {
        let names: Vec<&str> = self.databases.iter().map(|(n, _)| n.as_str()).collect();
        let databases = self
            .databases
            .iter()
            .map(|(n, d)| format!("{n} ({d})"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut sql = json!({
            "type": "string",
            "description": "Exactly one SQL statement."
        });
        if let Some(table) = self.schema.example_table() {
            sql["examples"] = json!([format!("SELECT * FROM {table} LIMIT 10")]);
        }
        json!({
            "type": "object",
            "properties": {
                "sql": sql,
                "database": {
                    "type": "string",
                    "enum": names,
                    "description": format!("Which database to run it on: {databases}. Defaults to the first.")
                }
            },
            "required": ["sql"],
            "additionalProperties": false
        })
    }
}
