//! The SQL assessor. (Being written.)

use crate::core::risk::Assessment;
use crate::core::tools::SqlDialect;

/// Operator rules for SQL, from `[tools.execute_sql]`.
#[derive(Debug, Clone, Default)]
pub struct SqlRules {
    /// Function names (lower case) the operator vouches for although they are on the
    /// built-in side-effect list.
    pub allow_functions: Vec<String>,
    /// Table or function names (lower case) no statement may touch.
    pub deny_names: Vec<String>,
}

impl SqlRules {
    pub fn new(allow: &[String], deny: &[String]) -> Self {
        Self {
            allow_functions: allow.iter().map(|s| s.trim().to_lowercase()).collect(),
            deny_names: deny.iter().map(|s| s.trim().to_lowercase()).collect(),
        }
    }
}

/// Judges one SQL text in a dialect.
pub fn assess_sql(_sql: &str, _dialect: SqlDialect, _rules: &SqlRules) -> Assessment {
    Assessment::Unknown("the SQL assessor is being written".to_owned())
}
