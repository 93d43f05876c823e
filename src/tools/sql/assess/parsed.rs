//! Judging statements that sqlparser could read.
//!
//! The top statement decides the base verdict (a query, SHOW, DESCRIBE, EXPLAIN or a
//! read-only PRAGMA may be safe; everything else is not). Then one [`Inspector`] walks the
//! whole tree, because a query is not read-only just because it parsed as one: a
//! data-modifying CTE (`SetExpr::{Insert,Update,Delete,Merge}`) arrives as a nested
//! statement, and `SELECT ... INTO`, `FOR UPDATE`, `:=` and side-effect functions (in the
//! select list, WHERE, subqueries and FROM alike) hide inside an ordinary SELECT.

use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, CopyTarget, Expr, Function, FunctionArg, FunctionArgOperator,
    FunctionArgumentClause, FunctionArguments, Ident, ObjectName, ObjectNamePart, OnConflict,
    OnConflictAction, OnInsert, Query, Select, SqliteOnConflict, Statement, TableFactor,
    UtilityOption, Value, Visit, Visitor,
};

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use crate::core::risk::Assessment;
use crate::core::tools::SqlDialect;

use super::functions::{FunctionRisk, judge};
use super::keywords::{PgKeyword, pg_keyword};
use super::pragma::{PragmaArgument, assess_pragma};
use super::{SqlRules, rank, with_reason};

/// Judges the statements of one SQL text.
pub(super) fn assess_statements(
    statements: &[Statement],
    dialect: SqlDialect,
    rules: &SqlRules,
) -> Assessment {
    match statements {
        [] => Assessment::Unknown(
            "there is no SQL statement to run: the text is empty or only comments".to_owned(),
        ),
        [only] => assess_statement(only, dialect, rules),
        many => {
            let count = many.len();
            let mut worst = (0, assess_statement(&many[0], dialect, rules));
            for (index, statement) in many.iter().enumerate().skip(1) {
                let assessment = assess_statement(statement, dialect, rules);
                if rank(&assessment) > rank(&worst.1) {
                    worst = (index, assessment);
                }
            }
            let (index, assessment) = worst;
            match assessment {
                Assessment::Safe(_) => Assessment::Destructive(format!(
                    "{count} statements; only one may run at a time, so a person must look at them"
                )),
                Assessment::Unknown(reason) => Assessment::Destructive(format!(
                    "{count} statements; only one may run at a time, and statement {} is not safe: {reason}",
                    index + 1
                )),
                other => with_reason(other, |reason| {
                    format!(
                        "{count} statements; only one may run at a time, and statement {} is not safe: {reason}",
                        index + 1
                    )
                }),
            }
        }
    }
}

/// Judges one top-level statement.
fn assess_statement(statement: &Statement, dialect: SqlDialect, rules: &SqlRules) -> Assessment {
    match statement {
        Statement::Explain {
            analyze,
            options,
            statement: inner,
            ..
        } => {
            if explain_executes(*analyze, options.as_deref()) {
                match assess_statement(inner, dialect, rules) {
                    Assessment::Safe(_) => Assessment::Safe(
                        "EXPLAIN ANALYZE runs the statement, and it only reads".to_owned(),
                    ),
                    other => with_reason(other, |reason| {
                        format!("EXPLAIN ANALYZE runs the statement it explains, and {reason}")
                    }),
                }
            } else {
                // The statement is only planned, never run. Planners may still evaluate
                // constant subqueries and functions, so those are checked all the same.
                Inspector::new(
                    dialect,
                    rules,
                    Scope::PlanOnly,
                    Assessment::Safe(
                        "EXPLAIN without ANALYZE only plans the statement; it does not run it"
                            .to_owned(),
                    ),
                )
                .inspect(inner)
            }
        }
        _ => {
            let verdict =
                Inspector::new(dialect, rules, Scope::Full, Assessment::Safe(String::new()))
                    .inspect(statement);
            if runs_unseen_code(statement) {
                not_a_read(verdict)
            } else {
                verdict
            }
        }
    }
}

/// Statement kinds whose effect the text does not show (a procedure call, a prepared
/// statement run by name, loading files or extensions) and statements that take over the
/// transaction the executor's read-only wall is made of. They never run because the model
/// called them low risk. Other writes the code can read (an INSERT, a CREATE TABLE, a SET)
/// keep the seeds' rule: the model's `low` runs them, inside the read-only transaction on
/// the read-only account, where they fail harmlessly.
fn runs_unseen_code(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::Call(_)
            | Statement::Prepare { .. }
            | Statement::Execute { .. }
            | Statement::LoadData { .. }
            | Statement::Load { .. }
            | Statement::Install { .. }
            | Statement::StartTransaction { .. }
            | Statement::Commit { .. }
            | Statement::Rollback { .. }
            | Statement::Savepoint { .. }
            | Statement::ReleaseSavepoint { .. }
            | Statement::Set(sqlparser::ast::Set::SetTransaction { .. })
    )
}

/// The floor for the kinds above.
fn not_a_read(verdict: Assessment) -> Assessment {
    match verdict {
        Assessment::Unknown(reason) => Assessment::Destructive(format!(
            "{reason}; only a recognised read-only statement may run without a person's confirmation"
        )),
        other => other,
    }
}

/// Whether an EXPLAIN runs its statement: `EXPLAIN ANALYZE ...`, or `ANALYZE` in the option
/// list (`EXPLAIN (ANALYZE, BUFFERS) ...`) unless its argument is explicitly false.
fn explain_executes(analyze: bool, options: Option<&[UtilityOption]>) -> bool {
    analyze
        || options.unwrap_or_default().iter().any(|option| {
            option.name.value.eq_ignore_ascii_case("analyze")
                && !option.arg.as_ref().is_some_and(is_false_option)
        })
}

/// PostgreSQL's boolean option values for "off": `false`, `off`, `0` (anything else is on
/// or an error, so it is treated as on).
fn is_false_option(arg: &Expr) -> bool {
    let text = match arg {
        Expr::Value(v) => match &v.value {
            Value::Boolean(b) => return !b,
            Value::Number(n, _) => n.as_str(),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.as_str(),
            _ => return false,
        },
        Expr::Identifier(ident) => ident.value.as_str(),
        _ => return false,
    };
    ["false", "off", "0"]
        .iter()
        .any(|off| text.eq_ignore_ascii_case(off))
}

/// How much of a statement the inspector judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The statement runs: everything counts.
    Full,
    /// The statement is only planned (EXPLAIN without ANALYZE): names and functions count,
    /// the statement kinds, locks and INTO do not.
    PlanOnly,
}

/// Walks one statement tree and keeps the worst thing found.
struct Inspector<'a> {
    dialect: SqlDialect,
    rules: &'a SqlRules,
    scope: Scope,
    verdict: Assessment,
    /// Set once the top statement has been classified; later statements are nested ones.
    seen_top: bool,
    /// Deny names are matched on every identifier of statements that change things (their
    /// object names sit in many places that sqlparser does not mark as relations), and on
    /// tables and functions only for reads, so a column sharing a denied name does not block
    /// a query.
    match_every_identifier: bool,
}

impl<'a> Inspector<'a> {
    fn new(dialect: SqlDialect, rules: &'a SqlRules, scope: Scope, verdict: Assessment) -> Self {
        Self {
            dialect,
            rules,
            scope,
            verdict,
            seen_top: scope == Scope::PlanOnly,
            match_every_identifier: false,
        }
    }

    fn inspect(mut self, statement: &Statement) -> Assessment {
        self.match_every_identifier = !is_read_kind(statement);
        // A `Break` only means a forbidden name was found; the verdict already says so.
        let _ = statement.visit(&mut self);
        self.verdict
    }

    fn note(&mut self, finding: Assessment) -> ControlFlow<()> {
        let verdict = std::mem::replace(&mut self.verdict, Assessment::Safe(String::new()));
        self.verdict = verdict.worst(finding);
        match self.verdict {
            Assessment::Forbidden(_) => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    }

    fn check_name(&mut self, name: &str) -> ControlFlow<()> {
        if self.rules.denies(name) {
            self.note(Assessment::Forbidden(format!(
                "the SQL names {name}, which the operator forbids"
            )))
        } else {
            ControlFlow::Continue(())
        }
    }

    fn check_object_name(&mut self, name: &ObjectName) -> ControlFlow<()> {
        match name.0.last().and_then(|part| part.as_ident()) {
            Some(ident) => self.check_name(&ident.value),
            None => ControlFlow::Continue(()),
        }
    }

    /// Judges a call of `name` with `args` arguments (`None`: not a plain list), given as
    /// `call_args` where they are a plain list.
    fn check_function(
        &mut self,
        name: &ObjectName,
        args: Option<usize>,
        call_args: &[FunctionArg],
    ) -> ControlFlow<()> {
        let parts: Option<Vec<&Ident>> = name.0.iter().map(|part| part.as_ident()).collect();
        let Some(parts) = parts.filter(|parts| !parts.is_empty()) else {
            return self.note(Assessment::Unknown(format!(
                "{name} calls a function through a computed name"
            )));
        };
        let lower = match parts.last() {
            Some(ident) => {
                self.check_name(&ident.value)?;
                ident.value.to_lowercase()
            }
            None => String::new(),
        };
        if self.rules.allows_function(&lower) || self.runs_only_safe_sql(&lower, call_args) {
            return ControlFlow::Continue(());
        }
        match judge(&parts, args, self.dialect) {
            FunctionRisk::Builtin => ControlFlow::Continue(()),
            FunctionRisk::Unlisted(why) => self.note(Assessment::Unknown(format!(
                "{name}() {why}; a user-defined or unknown function can do whatever its owner wrote"
            ))),
            FunctionRisk::SideEffect(what) => self.note(Assessment::Unknown(format!(
                "{lower}() has side effects: it {what}"
            ))),
            FunctionRisk::Destructive(what) => self.note(Assessment::Destructive(format!(
                "{lower}() escapes the read-only walls or destroys something: it {what}"
            ))),
        }
    }
}

impl Inspector<'_> {
    /// Whether `name` is a PostgreSQL function that runs SQL given to it as text
    /// ([`SQL_TEXT_ARGUMENTS`]) and every such text in `args` is a string literal this check
    /// reads as safe on its own: it then runs a safe query in the same read-only
    /// transaction (`ts_stat('SELECT vector FROM apod')`). A text built at run time (a
    /// column, a concatenation, a cast) is not read, and the call is judged by its name.
    fn runs_only_safe_sql(&self, name: &str, args: &[FunctionArg]) -> bool {
        if self.dialect != SqlDialect::Postgres {
            return false;
        }
        let positions: &[usize] = match (name, args.len()) {
            // `ts_rewrite(query, 'SELECT ...')`: the two-argument form runs its second.
            ("ts_rewrite", 2) => &[1],
            _ => match SQL_TEXT_ARGUMENTS.iter().find(|(known, _)| *known == name) {
                Some((_, positions)) => positions,
                None => return false,
            },
        };
        !args.is_empty()
            && positions.iter().filter(|&&at| at < args.len()).all(|&at| {
                string_literal(&args[at])
                    .is_some_and(|text| nested_read_is_safe(text, self.dialect, self.rules))
            })
    }
}

/// How deep SQL given as text is read inside SQL given as text: dollar quotes nest without
/// growing (`$a$ ... $b$ ... $b$ ... $a$`), so without a bound a long enough text would
/// recurse until the stack ran out.
const MAX_NESTED_SQL: usize = 3;

thread_local! {
    static NESTED_SQL: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether `text`, read on its own, is a safe query: never deeper than [`MAX_NESTED_SQL`].
fn nested_read_is_safe(text: &str, dialect: SqlDialect, rules: &SqlRules) -> bool {
    let depth = NESTED_SQL.with(std::cell::Cell::get);
    if depth >= MAX_NESTED_SQL {
        return false;
    }
    /// Puts the depth back however the read ends, a panic included.
    struct Level(usize);
    impl Drop for Level {
        fn drop(&mut self) {
            NESTED_SQL.with(|d| d.set(self.0));
        }
    }
    NESTED_SQL.with(|d| d.set(depth + 1));
    let _level = Level(depth);
    matches!(super::assess_sql(text, dialect, rules), Assessment::Safe(_))
}

/// PostgreSQL functions that run SQL given as text, and the arguments that hold it.
const SQL_TEXT_ARGUMENTS: &[(&str, &[usize])] = &[
    ("query_to_xml", &[0]),
    ("query_to_xml_and_xmlschema", &[0]),
    ("query_to_xmlschema", &[0]),
    ("ts_stat", &[0]),
    // tablefunc: the source query, and `crosstab`'s category query.
    ("crosstab", &[0, 1]),
    ("crosstab2", &[0]),
    ("crosstab3", &[0]),
    ("crosstab4", &[0]),
];

/// The text of an argument written as a plain or dollar-quoted string literal.
fn string_literal(arg: &FunctionArg) -> Option<&str> {
    let FunctionArg::Unnamed(sqlparser::ast::FunctionArgExpr::Expr(Expr::Value(value))) = arg
    else {
        return None;
    };
    match &value.value {
        Value::SingleQuotedString(text) => Some(text),
        Value::DollarQuotedString(quoted) => Some(&quoted.value),
        _ => None,
    }
}

impl Visitor for Inspector<'_> {
    type Break = ();

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        if self.scope == Scope::Full {
            let assessment = classify(statement, self.dialect, self.rules);
            if !self.seen_top {
                self.seen_top = true;
                self.verdict = assessment;
            } else if !matches!(assessment, Assessment::Safe(_)) {
                let assessment = if is_read_kind(statement) {
                    assessment
                } else {
                    not_a_read(assessment)
                };
                self.note(with_reason(assessment, |reason| {
                    format!("it contains a statement that is not read-only: {reason}")
                }))?;
            }
        }
        match statement {
            Statement::ShowCreate { obj_name, .. } => self.check_object_name(obj_name),
            // `CALL f(...)` holds a `Function`, not an `Expr`, so the expression hook misses it.
            Statement::Call(function) => self.check_function(
                &function.name,
                argument_count(&function.args),
                plain_arguments(&function.args),
            ),
            _ => match self.verdict {
                Assessment::Forbidden(_) => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            },
        }
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if self.scope == Scope::Full && !query.locks.is_empty() {
            let locks: Vec<String> = query.locks.iter().map(ToString::to_string).collect();
            return self.note(Assessment::Unknown(format!(
                "{} locks rows until the transaction ends",
                locks.join(" ")
            )));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
        if self.scope == Scope::Full && select.into.is_some() {
            return self.note(Assessment::Unknown(
                "SELECT ... INTO writes the result into a table or variables".to_owned(),
            ));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Function(function)
                if self.dialect == SqlDialect::Postgres && is_sql_json_construct(function) =>
            {
                ControlFlow::Continue(())
            }
            Expr::Function(function) => self.check_function(
                &function.name,
                argument_count(&function.args),
                plain_arguments(&function.args),
            ),
            Expr::BinaryOp {
                op: BinaryOperator::Assignment,
                ..
            } if self.scope == Scope::Full => self.note(Assessment::Unknown(
                ":= assigns a session variable".to_owned(),
            )),
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        match factor {
            // `FROM dblink(...)`, `FROM generate_series(...)`: a table function.
            TableFactor::Table {
                name,
                args: Some(args),
                ..
            } => self.check_function(name, Some(args.args.len()), &args.args),
            TableFactor::Function { name, args, .. } => {
                self.check_function(name, Some(args.len()), args)
            }
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        self.check_object_name(relation)
    }

    fn pre_visit_ident(&mut self, ident: &Ident) -> ControlFlow<()> {
        if self.match_every_identifier {
            self.check_name(&ident.value)
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// A PostgreSQL SQL/JSON construct that sqlparser reads as a call (`JSON_VALUE(j, '$.a'
/// RETURNING int)`, `JSON_OBJECT('a' VALUE 1)`). Since PostgreSQL 16 and 17 these names are
/// keywords and the construct is the grammar's own, whatever the search_path; older
/// servers call a function of that name, but reject such a clause as a syntax error. So
/// only a call with a clause that no function call can have counts as the construct; a
/// plain `json_value(a, b)` is judged as a call (see `by_tokens.rs` for unparsed text).
fn is_sql_json_construct(function: &Function) -> bool {
    let [ObjectNamePart::Identifier(ident)] = &function.name.0[..] else {
        return false;
    };
    if ident.quote_style.is_some() || pg_keyword(&ident.value) != Some(PgKeyword::Newer) {
        return false;
    }
    let FunctionArguments::List(list) = &function.args else {
        return false;
    };
    let json_operator = |operator: &FunctionArgOperator| {
        matches!(
            operator,
            FunctionArgOperator::Value | FunctionArgOperator::Colon
        )
    };
    list.clauses.iter().any(|clause| {
        matches!(
            clause,
            FunctionArgumentClause::JsonNullClause(_)
                | FunctionArgumentClause::JsonReturningClause(_)
        )
    }) || list.args.iter().any(|arg| match arg {
        FunctionArg::Named { operator, .. } | FunctionArg::ExprNamed { operator, .. } => {
            json_operator(operator)
        }
        FunctionArg::Unnamed(_) => false,
    })
}

/// The arguments of a call, when they are a plain list.
fn plain_arguments(args: &FunctionArguments) -> &[FunctionArg] {
    match args {
        FunctionArguments::List(list) => &list.args,
        _ => &[],
    }
}

/// How many arguments a call passes, when they are a plain list.
fn argument_count(args: &FunctionArguments) -> Option<usize> {
    match args {
        FunctionArguments::None => Some(0),
        FunctionArguments::List(list) => Some(list.args.len()),
        FunctionArguments::Subquery(_) => None,
    }
}

/// Statements that may be safe: they only read, if what they contain only reads.
fn is_read_kind(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::Query(_)
            | Statement::Explain { .. }
            | Statement::ExplainTable { .. }
            | Statement::Pragma { .. }
    ) || is_show(statement)
}

fn is_show(statement: &Statement) -> bool {
    matches!(
        statement,
        Statement::ShowFunctions { .. }
            | Statement::ShowVariable { .. }
            | Statement::ShowStatus { .. }
            | Statement::ShowVariables { .. }
            | Statement::ShowCreate { .. }
            | Statement::ShowColumns { .. }
            | Statement::ShowCatalogs { .. }
            | Statement::ShowDatabases { .. }
            | Statement::ShowProcessList { .. }
            | Statement::ShowSchemas { .. }
            | Statement::ShowCharset(_)
            | Statement::ShowObjects(_)
            | Statement::ShowTables { .. }
            | Statement::ShowViews { .. }
            | Statement::ShowCollation { .. }
    )
}

/// What one statement is, by its kind alone (what it contains is the inspector's job). The
/// kinds are tried in this order: read-only, destroying or changing, writing, session or
/// server state, anything else (a guarded kind not matched by one group falls through to
/// the next, as in one match).
fn classify(statement: &Statement, dialect: SqlDialect, rules: &SqlRules) -> Assessment {
    read_only(statement, dialect, rules)
        .or_else(|| destroys_or_changes(statement))
        .or_else(|| writes(statement))
        .or_else(|| session_or_server(statement))
        .unwrap_or_else(|| other(statement))
}

/// Queries, EXPLAIN, DESCRIBE, SHOW and PRAGMA: safe, or judged by the pragma.
fn read_only(statement: &Statement, dialect: SqlDialect, rules: &SqlRules) -> Option<Assessment> {
    use Assessment::Safe;
    let assessment = match statement {
        Statement::Query(_) => Safe("a query only reads data".to_owned()),
        // Reached only when nested (say in PREPARE); the inspector also walks the inner
        // statement, as if it ran.
        Statement::Explain { .. } => Safe("EXPLAIN shows a plan".to_owned()),
        Statement::ExplainTable { .. } => {
            Safe("DESCRIBE only reads a table's definition".to_owned())
        }
        s if is_show(s) => Safe("SHOW only reads settings or metadata".to_owned()),
        Statement::Pragma { name, value, is_eq } => {
            let pragma = name
                .0
                .last()
                .and_then(|part| part.as_ident())
                .map_or_else(|| name.to_string(), |ident| ident.value.clone());
            let text = value.as_ref().map(|v| match &v.value {
                Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
                other => other.to_string(),
            });
            let argument = match (&text, is_eq) {
                (None, _) => PragmaArgument::None,
                (Some(text), true) => PragmaArgument::Assign(text),
                (Some(text), false) => PragmaArgument::Call(text),
            };
            assess_pragma(&pragma, argument, dialect, rules)
        }
        _ => return None,
    };
    Some(assessment)
}

/// Statements that remove or overwrite data, objects, privileges or sessions.
fn destroys_or_changes(statement: &Statement) -> Option<Assessment> {
    use Assessment::Destructive;
    let assessment = match statement {
        Statement::Drop {
            object_type, names, ..
        } => Destructive(format!(
            "DROP {object_type} removes {}",
            join_names(names.iter())
        )),
        Statement::DropFunction(_)
        | Statement::DropDomain(_)
        | Statement::DropProcedure { .. }
        | Statement::DropSecret { .. }
        | Statement::DropPolicy(_)
        | Statement::DropConnector { .. }
        | Statement::DropExtension(_)
        | Statement::DropOperator(_)
        | Statement::DropOperatorFamily(_)
        | Statement::DropOperatorClass(_)
        | Statement::DropTrigger(_) => Destructive(format!(
            "{} removes a database object",
            leading_keywords(statement)
        )),
        Statement::Truncate(truncate) => Destructive(format!(
            "TRUNCATE removes every row of {}",
            join_names(truncate.table_names.iter().map(|t| &t.name))
        )),
        Statement::Delete(_) => Destructive("a DELETE statement removes rows".to_owned()),
        Statement::Update(_) => Destructive("an UPDATE statement overwrites rows".to_owned()),
        Statement::Merge(_) => {
            Destructive("a MERGE statement can overwrite and remove rows".to_owned())
        }
        Statement::AlterTable(_)
        | Statement::AlterSchema(_)
        | Statement::AlterIndex { .. }
        | Statement::AlterView { .. }
        | Statement::AlterFunction(_)
        | Statement::AlterType(_)
        | Statement::AlterCollation(_)
        | Statement::AlterOperator(_)
        | Statement::AlterOperatorFamily(_)
        | Statement::AlterOperatorClass(_)
        | Statement::AlterTextSearch(_)
        | Statement::AlterRole { .. }
        | Statement::AlterPolicy(_)
        | Statement::AlterConnector { .. }
        | Statement::AlterSession { .. }
        | Statement::AlterUser(_) => Destructive(format!(
            "{} changes an existing schema object, setting or account",
            leading_keywords(statement)
        )),
        Statement::Grant(_) => Destructive("GRANT changes privileges".to_owned()),
        Statement::Revoke(_) => Destructive("REVOKE changes privileges".to_owned()),
        Statement::Deny(_) => Destructive("DENY changes privileges".to_owned()),
        Statement::RenameTable(_) => Destructive(
            "RENAME TABLE renames tables, breaking whatever uses the old names".to_owned(),
        ),
        Statement::Kill { .. } => Destructive("KILL ends another session or its query".to_owned()),
        _ => return None,
    };
    Some(assessment)
}

/// Statements that add data or objects, replace them, or move data in and out.
fn writes(statement: &Statement) -> Option<Assessment> {
    use Assessment::{Destructive, Unknown};
    let assessment = match statement {
        Statement::Insert(insert) => {
            let starts_with_replace = matches!(
                &insert.insert_token.0.token,
                Token::Word(word) if word.keyword == Keyword::REPLACE
            );
            let overwrite = if insert.replace_into || starts_with_replace {
                Some("REPLACE")
            } else if insert.or == Some(SqliteOnConflict::Replace) {
                Some("INSERT OR REPLACE")
            } else if insert.overwrite {
                Some("INSERT OVERWRITE")
            } else {
                match &insert.on {
                    Some(OnInsert::DuplicateKeyUpdate(_)) => {
                        Some("INSERT ... ON DUPLICATE KEY UPDATE")
                    }
                    Some(OnInsert::OnConflict(OnConflict {
                        action: OnConflictAction::DoUpdate(_),
                        ..
                    })) => Some("INSERT ... ON CONFLICT DO UPDATE"),
                    _ => None,
                }
            };
            match overwrite {
                Some(kind) => Destructive(format!("{kind} overwrites existing rows")),
                None => Unknown("an INSERT statement adds rows".to_owned()),
            }
        }
        Statement::CreateView(view) if view.or_replace || view.or_alter => or_replace(statement),
        Statement::CreateTable(table) if table.or_replace => or_replace(statement),
        Statement::CreateFunction(function) if function.or_replace || function.or_alter => {
            or_replace(statement)
        }
        Statement::CreateTrigger(trigger) if trigger.or_replace || trigger.or_alter => {
            or_replace(statement)
        }
        Statement::CreateUser(user) if user.or_replace => or_replace(statement),
        Statement::CreateProcedure { or_alter: true, .. }
        | Statement::CreateSchema {
            or_replace: true, ..
        }
        | Statement::CreateDatabase {
            or_replace: true, ..
        }
        | Statement::CreateMacro {
            or_replace: true, ..
        }
        | Statement::CreateSecret {
            or_replace: true, ..
        }
        | Statement::CreateStage {
            or_replace: true, ..
        }
        | Statement::CreateFileFormat {
            or_replace: true, ..
        } => or_replace(statement),
        Statement::Copy { target, to, .. } => match (target, to) {
            (CopyTarget::Program { .. }, _) => Destructive(
                "COPY ... PROGRAM runs a shell command on the database server".to_owned(),
            ),
            (CopyTarget::File { filename }, true) => Destructive(format!(
                "COPY ... TO '{filename}' writes a file on the database server"
            )),
            (CopyTarget::Stdout, true) => Unknown(
                "COPY ... TO STDOUT needs the copy protocol; it is never run automatically"
                    .to_owned(),
            ),
            _ => Unknown("COPY ... FROM loads rows into a table".to_owned()),
        },
        Statement::Directory {
            overwrite: true, ..
        }
        | Statement::LoadData {
            overwrite: true, ..
        } => Destructive(format!(
            "{} overwrites existing data",
            leading_keywords(statement)
        )),
        Statement::Remove(_) => Destructive("REMOVE deletes staged files".to_owned()),
        _ => return None,
    };
    Some(assessment)
}

/// Statements that change the session, the transaction or the server, or run what this
/// check cannot see.
fn session_or_server(statement: &Statement) -> Option<Assessment> {
    use Assessment::Unknown;
    let assessment = match statement {
        Statement::Call(function) => Unknown(format!(
            "CALL runs {}(), which this check cannot see",
            function.name
        )),
        Statement::Set(_) => Unknown("SET changes a session or server setting".to_owned()),
        Statement::Reset(_) => Unknown("RESET changes session settings".to_owned()),
        Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. }
        | Statement::Savepoint { .. }
        | Statement::ReleaseSavepoint { .. } => Unknown(format!(
            "{} controls the transaction, which the executor manages itself",
            leading_keywords(statement)
        )),
        Statement::Vacuum(_) => Unknown("VACUUM rewrites tables or the database file".to_owned()),
        Statement::Analyze(_) => Unknown("ANALYZE writes table statistics".to_owned()),
        Statement::AttachDatabase { .. } | Statement::AttachDuckDBDatabase { .. } => {
            Unknown("ATTACH opens (or creates) another database file".to_owned())
        }
        Statement::LISTEN { .. } | Statement::UNLISTEN { .. } => {
            Unknown("LISTEN and UNLISTEN change session state".to_owned())
        }
        Statement::NOTIFY { .. } => Unknown("NOTIFY sends a notification to listeners".to_owned()),
        Statement::Execute { .. } => {
            Unknown("EXECUTE runs a prepared statement, which this check cannot see".to_owned())
        }
        Statement::Prepare { .. } => {
            Unknown("PREPARE stores a statement in the session for later".to_owned())
        }
        Statement::Declare { .. } => {
            Unknown("DECLARE opens a cursor or declares variables in the session".to_owned())
        }
        Statement::Lock(_) | Statement::LockTables { .. } | Statement::UnlockTables => {
            Unknown(format!(
                "{} takes or releases table locks",
                leading_keywords(statement)
            ))
        }
        Statement::Flush { .. } => {
            Unknown("FLUSH resets server caches or logs, or takes a global lock".to_owned())
        }
        Statement::Use(_) => Unknown("USE switches the session's database".to_owned()),
        _ => return None,
    };
    Some(assessment)
}

/// Every other kind: not read-only, named by its leading keywords.
fn other(statement: &Statement) -> Assessment {
    use Assessment::Unknown;
    let keywords = leading_keywords(statement);
    if keywords.starts_with("CREATE") {
        Unknown(format!("{keywords} creates a database object"))
    } else {
        Unknown(format!("{keywords} is not a read-only statement"))
    }
}

fn or_replace(statement: &Statement) -> Assessment {
    Assessment::Destructive(format!(
        "{} replaces an existing object if there is one",
        leading_keywords(statement)
    ))
}

fn join_names<'n>(names: impl Iterator<Item = &'n ObjectName>) -> String {
    names
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statement's leading keywords (`CREATE TEMPORARY TABLE`, `ALTER INDEX`), to name it in
/// a reason. Only used for statements that are not safe, so the rendering cost is rare.
fn leading_keywords(statement: &Statement) -> String {
    let text = statement.to_string();
    let words: Vec<&str> = text
        .split_whitespace()
        .take_while(|word| word.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .take(4)
        .collect();
    if words.is_empty() {
        "this statement".to_owned()
    } else {
        words.join(" ")
    }
}
