//! Database clients: `psql`, `mysql`/`mariadb`, `sqlite3`, `redis-cli`, and the server tools
//! that drop or stop things (`dropdb`, `dropuser`, `mysqladmin`).
//!
//! None is on the read-only whitelist: a client runs whatever SQL or commands it is given,
//! against a server the line does not show (an auto line has no sockets anyway). SQL given on
//! the command line (`psql -c`, `mysql -e`, `sqlite3 FILE SQL`) is read by the SQL tool's own
//! assessor, so `psql -c 'DROP TABLE users'` is destructive exactly when `execute_sql` with
//! the same text would be; the reason says to use `execute_sql`, which the gate reads
//! statement by statement and runs in a read-only transaction when it is safe.

use super::subcommands::{Global, SUBCOMMANDS, Subcommands, Verb};
use super::{Program, Rule};
use crate::core::risk::Assessment;
use crate::core::tools::SqlDialect;
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::Arg;
use crate::tools::sql::{assess_sql, in_sqlite_engine};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["psql"], Rule::Judge(psql)).running_code(),
    Program::new(&["mysql", "mariadb"], Rule::Judge(mysql)).running_code(),
    Program::new(&["sqlite3"], Rule::Judge(sqlite3)).running_code(),
    Program::new(&["redis-cli"], Rule::Subcommands(&REDIS_CLI)).running_code(),
    Program::new(
        &["dropdb", "dropuser"],
        Rule::Destroys("drops a database or a role on the server"),
    ),
    Program::new(
        &["mysqladmin", "mariadb-admin"],
        Rule::Subcommands(&MYSQLADMIN),
    ),
];

const PSQL: Spec = Spec::values(
    "cdfhLopPTUv",
    &[
        "command",
        "dbname",
        "file",
        "host",
        "log-file",
        "output",
        "port",
        "pset",
        "table-attr",
        "username",
        "set",
        "variable",
    ],
);

const MYSQL: Spec = Spec::values(
    "eDhPuSO",
    &[
        "execute",
        "database",
        "host",
        "port",
        "user",
        "socket",
        "init-command",
        "defaults-file",
        "defaults-extra-file",
        "login-path",
    ],
)
// mysql's `-p` takes its password attached, or asks for it.
.optional("p");

fn psql(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let items = options::parse(call.args, &PSQL);
    let sql = given_sql(&items, &["c", "command"]);
    judge_sql(walker, call.program, sql, SqlDialect::Postgres).verdict
}

fn mysql(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let items = options::parse(call.args, &MYSQL);
    let sql = given_sql(&items, &["e", "execute", "init-command"]);
    judge_sql(walker, call.program, sql, SqlDialect::Mysql).verdict
}

/// `sqlite3 [options] [FILE [SQL...]]`: the first operand is the database file and every
/// operand after it is SQL, as is `-cmd`'s value. Its options take one dash or two and may
/// come anywhere. Given a file in the workspace (or none: an in-memory database), only
/// options that choose how it prints, and SQL that the SQL tool reads as safe with dot
/// commands that only show something, it reads and runs without a click: in the sandbox
/// the file opens read-only, whatever the SQL.
fn sqlite3(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let mut sql: Vec<Option<&str>> = Vec::new();
    let mut file = None;
    let mut unread = None;
    let mut sql_operands = false;
    let mut words = call.args.iter();
    while let Some(word) = words.next() {
        let Some(text) = word.text() else {
            // It may be `-cmd` or SQL: its SQL is not known.
            sql_operands = true;
            sql.push(None);
            continue;
        };
        let Some(name) = text.strip_prefix('-').filter(|name| !name.is_empty()) else {
            match file {
                None => file = Some(text),
                Some(_) => {
                    sql_operands = true;
                    sql.push(Some(text));
                }
            }
            continue;
        };
        let name = name.strip_prefix('-').unwrap_or(name);
        if name == "cmd" {
            sql.push(words.next().map_or(Some(""), Arg::text));
        } else if SQLITE3_VALUES.contains(&name) {
            words.next();
        } else if !SQLITE3_PRINTING.contains(&name) {
            unread.get_or_insert(text);
            if SQLITE3_WITH_VALUE.contains(&name) {
                words.next();
            }
        }
    }
    // Without SQL after the file, sqlite3 reads its commands from its input.
    if !sql_operands {
        match call.stdin {
            Stdin::Inherited => {}
            Stdin::Text(text) => sql.push(Some(text)),
            Stdin::File(path) => {
                return Judgement::other(format!(
                    "`sqlite3` runs the SQL in {path}, whose contents are not checked"
                ));
            }
            Stdin::Unseen(from) | Stdin::Paths { from, .. } => {
                return Judgement::destroys(format!(
                    "`sqlite3` runs the SQL read from {from}, which cannot be seen before it runs"
                ));
            }
        }
    }
    if let Some(dot) = sql
        .iter()
        .flatten()
        .find_map(|text| writing_dot_command(text))
    {
        return Judgement::destroys(format!(
            "`sqlite3 .{dot}` runs a program, loads code or writes a file"
        ));
    }
    // What is left once the (read-only) dot commands are taken out is SQL.
    let statements: Vec<String> = sql
        .iter()
        .flatten()
        .map(|text| {
            let lines = text.lines().filter(|l| !l.trim_start().starts_with('.'));
            lines.collect::<Vec<_>>().join("\n")
        })
        .filter(|rest| !rest.trim().is_empty())
        .collect();
    let unknown = sql.iter().filter(|text| text.is_none()).map(|_| None);
    let sql = statements.iter().map(|s| Some(s.as_str())).chain(unknown);
    let sql: Vec<Option<&str>> = sql.collect();
    let mut judgement = judge_sql(walker, call.program, sql.clone(), SqlDialect::Sqlite);
    if !judgement.all_sql_safe {
        return judgement.verdict;
    }
    if let Some(name) = sql.iter().flatten().find_map(|text| cli_function(text)) {
        judgement.verdict.unknown(format!(
            "`sqlite3` calls {name}(), which riskgate's SQLite engine does not have: the sqlite3 program defines functions of its own (`sha3_query` runs SQL, `writefile` writes a file)"
        ));
        return judgement.verdict;
    }
    if let Some(option) = unread {
        judgement
            .verdict
            .unknown(format!("`sqlite3 {option}` is an option not read here"));
        return judgement.verdict;
    }
    let mut verdict = Judgement::whitelisted();
    if let Some(file) = file.filter(|file| *file != ":memory:") {
        walker.check_path(&mut verdict, call.program, file);
    }
    verdict
}

/// Words that a `(` may follow in SQL without being a function's name.
const SQL_WORDS_BEFORE_PARENTHESIS: &[&str] = &[
    "in",
    "values",
    "exists",
    "cast",
    "over",
    "filter",
    "using",
    "as",
    "on",
    "and",
    "or",
    "not",
    "select",
    "from",
    "where",
    "join",
    "with",
    "recursive",
    "materialized",
    "like",
    "glob",
    "between",
    "when",
    "then",
    "else",
    "case",
    "window",
    "by",
    "all",
    "any",
    "is",
    "union",
    "intersect",
    "except",
    "returning",
    "limit",
    "offset",
    "distinct",
    "escape",
];

/// The first name in `sql` called like a function (`name(`, `"name"(`) that is not one of
/// the bundled engine's reviewed functions. String literals are skipped; a quoted name is a
/// name (SQLite calls `"usleep"(5)` as `usleep`), never a keyword.
fn cli_function(sql: &str) -> Option<String> {
    let mut chars = sql.char_indices().peekable();
    let mut word = String::new();
    let mut quoted = false;
    while let Some((_, c)) = chars.next() {
        match c {
            '\'' | '"' | '`' | '[' => {
                let close = if c == '[' { ']' } else { c };
                word.clear();
                for (_, inner) in chars.by_ref() {
                    if inner == close {
                        break;
                    }
                    word.push(inner);
                }
                quoted = c != '\'';
                if !quoted {
                    word.clear();
                }
            }
            c if c.is_alphanumeric() || c == '_' => {
                if quoted {
                    word.clear();
                    quoted = false;
                }
                word.push(c);
            }
            c if c.is_whitespace() && !word.is_empty() => {
                // A name may stand apart from its parenthesis: `count (x)`.
                while chars.peek().is_some_and(|(_, next)| next.is_whitespace()) {
                    chars.next();
                }
                if chars.peek().is_some_and(|(_, next)| *next == '(') {
                    continue;
                }
                word.clear();
            }
            '(' if !word.is_empty() => {
                let lower = word.to_ascii_lowercase();
                let keyword = !quoted && SQL_WORDS_BEFORE_PARENTHESIS.contains(&lower.as_str());
                if !keyword
                    && !lower.starts_with(|c: char| c.is_ascii_digit())
                    && !in_sqlite_engine(&lower)
                {
                    return Some(word);
                }
                word.clear();
                quoted = false;
            }
            _ => {
                word.clear();
                quoted = false;
            }
        }
    }
    None
}

/// sqlite3's options that only choose how results print or how errors stop it.
const SQLITE3_PRINTING: &[&str] = &[
    "header", "noheader", "column", "csv", "json", "line", "list", "markdown", "box", "table",
    "html", "tabs", "ascii", "quote", "readonly", "bail", "batch", "echo", "safe", "nofollow",
    "version", "help",
];

/// Its options whose value is printing text (a separator, the text shown for NULL).
const SQLITE3_VALUES: &[&str] = &["separator", "newline", "nullvalue", "escape"];

/// Its other options that take a value (`-init FILE` runs a file's commands).
const SQLITE3_WITH_VALUE: &[&str] = &[
    "init",
    "mmap",
    "vfs",
    "lookaside",
    "pagecache",
    "heap",
    "maxsize",
    "nonce",
    "memtrace",
];

/// sqlite3's dot commands that only show something; every other one may run a program
/// (`.shell`, `.system`), load code (`.load`) or write a file (`.output`, `.save`, ...).
const SQLITE_DOT_READS: &[&str] = &[
    "tables",
    "schema",
    "indexes",
    "indices",
    "headers",
    "mode",
    "databases",
    "dbinfo",
    "fullschema",
    "show",
    "help",
    "width",
    "nullvalue",
    "separator",
    "timer",
    "changes",
];

/// The first dot command in `text` that is not one of [`SQLITE_DOT_READS`].
fn writing_dot_command(text: &str) -> Option<&str> {
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix('.'))
        .map(|rest| rest.split_whitespace().next().unwrap_or(""))
        .find(|dot| !SQLITE_DOT_READS.contains(dot))
}

/// The SQL texts given by the options in `names` (`None` for one only known at run time).
fn given_sql<'a>(items: &[Item<'a>], names: &[&str]) -> Vec<Option<&'a str>> {
    items
        .iter()
        .filter(|item| item.named(names, true))
        .map(|item| item.value().and_then(|value| value.text))
        .collect()
}

/// What the SQL given to a client makes the call: its verdict, and whether every statement
/// was read as safe (so a client that reaches nothing else may run it).
struct SqlVerdict {
    verdict: Judgement,
    all_sql_safe: bool,
}

/// Destructive when some SQL the client is given is, by the SQL tool's reading with the
/// operator's SQL rules; forbidden when it touches a name they deny; otherwise not
/// whitelisted, with a reason that points to `execute_sql`.
fn judge_sql(
    walker: &mut Walker<'_>,
    program: &str,
    sql: Vec<Option<&str>>,
    dialect: SqlDialect,
) -> SqlVerdict {
    let destroys = |verdict| SqlVerdict {
        verdict,
        all_sql_safe: false,
    };
    let mut all_sql_safe = true;
    for text in &sql {
        let Some(text) = text else {
            return destroys(Judgement::destroys(format!(
                "`{program}` is given SQL only known when the line runs, so it could drop or change anything"
            )));
        };
        match assess_sql(text, dialect, &walker.policy.sql) {
            Assessment::Forbidden(why) => {
                walker.forbidden(format!(
                    "`{program}` is given SQL that execute_sql would refuse: {why}"
                ));
                return destroys(Judgement::destroys(format!(
                    "`{program}` runs SQL that {why}"
                )));
            }
            Assessment::Destructive(why) => {
                return destroys(Judgement::destroys(format!(
                    "`{program}` runs SQL that {why}"
                )));
            }
            Assessment::Safe(_) => {}
            _ => all_sql_safe = false,
        }
    }
    SqlVerdict {
        verdict: Judgement::other(format!(
            "`{program}` runs SQL against a server the line does not show; use execute_sql, which the gate reads statement by statement"
        )),
        all_sql_safe,
    }
}

/// Redis commands that delete keys, wipe databases, or stop or reconfigure the server.
const REDIS_DESTRUCTIVE: &[&str] = &[
    "del",
    "unlink",
    "flushall",
    "flushdb",
    "shutdown",
    "config",
    "debug",
    "swapdb",
    "rename",
    "renamenx",
    "expire",
    "pexpire",
    "expireat",
    "pexpireat",
    "getdel",
    "getex",
    "migrate",
    "move",
    "restore",
    "script",
    "function",
    "eval",
    "evalsha",
    "fcall",
    "acl",
    "replicaof",
    "slaveof",
    "failover",
    "cluster",
    "module",
];

const REDIS: Spec = Spec::values(
    "hpsaunrid",
    &["user", "pass", "cacert", "cacertdir", "cert", "key", "sni"],
)
.posix();

/// `redis-cli [options] [command [args]]`: the command decides. Without one it reads
/// commands from its input, which the line does not show.
const REDIS_CLI: Subcommands = Subcommands {
    global: Global::Options(REDIS),
    verbs: &[Verb::destroys(
        REDIS_DESTRUCTIVE,
        "deletes keys, wipes data, runs scripts or changes the server",
    )],
    any_case: true,
    without: Some("without a command runs what its input sends, which the line does not show"),
    ..SUBCOMMANDS
};

/// `mysqladmin` commands that drop databases, stop the server or its work, or change it;
/// one line may give several.
const MYSQLADMIN: Subcommands = Subcommands {
    global: Global::Options(MYSQL),
    verbs: &[Verb::destroys(
        &[
            "drop",
            "shutdown",
            "kill",
            "password",
            "stop-replica",
            "flush*",
            "refresh*",
            "reload*",
        ],
        "drops a database or stops or changes the server",
    )],
    any_case: true,
    several: true,
    ..SUBCOMMANDS
};

#[cfg(test)]
mod tests {
    use crate::core::risk::Assessment;
    use crate::tools::Workspace;
    use crate::tools::command::{CommandPolicy, assess_command};
    use crate::tools::sql::SqlRules;

    #[test]
    fn sql_on_the_line_meets_the_operators_sql_rules() {
        let dir = tempfile::tempdir().expect("tempdir");
        let policy = CommandPolicy::new(Workspace::new(dir.path()), &[], &[])
            .with_sql_rules(SqlRules::new(&[], &["secrets".to_owned()]));
        let verdict = |line: &str| assess_command(line, &policy);
        for line in [
            "psql -c 'SELECT * FROM secrets'",
            "mysql -e 'select token from Secrets'",
            "sqlite3 app.db 'SELECT * FROM secrets'",
        ] {
            assert!(
                matches!(verdict(line), Assessment::Forbidden(_)),
                "{line}: {:?}",
                verdict(line)
            );
        }
        assert!(matches!(
            verdict("psql -c 'SELECT * FROM users'"),
            Assessment::Unknown(_)
        ));
        let default = CommandPolicy::new(Workspace::new(dir.path()), &[], &[]);
        assert!(matches!(
            assess_command("psql -c 'SELECT * FROM secrets'", &default),
            Assessment::Unknown(_)
        ));
    }

    #[test]
    fn databases_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("psql -c 'SELECT count(*) FROM users'", Unknown),
            ("psql -h db -U app -c \"select 1\"", Unknown),
            ("psql", Unknown),
            ("mysql -e 'SHOW TABLES'", Unknown),
            ("mysql -uroot -p -e 'select 1'", Unknown),
            ("sqlite3 app.db 'SELECT * FROM t'", Safe),
            ("sqlite3 -header -column app.db 'SELECT * FROM t'", Safe),
            ("sqlite3 --json app.db 'SELECT 1'", Safe),
            ("sqlite3 :memory: 'SELECT 1 + 1'", Safe),
            ("sqlite3 app.db .tables", Safe),
            ("sqlite3 app.db \".schema 't'\"", Safe),
            ("sqlite3 /etc/app.db 'SELECT 1'", Unknown),
            ("sqlite3 ../app.db 'SELECT 1'", Unknown),
            ("sqlite3 -init setup.sql app.db 'SELECT 1'", Unknown),
            ("sqlite3 -A -tf app.db", Unknown),
            ("sqlite3 app.db \"SELECT writefile('x', 'y')\"", NotSafe),
            ("sqlite3 app.db \"SELECT load_extension('x')\"", NotSafe),
            ("sqlite3 app.db \"ATTACH 'x.db' AS y\"", NotSafe),
            ("sqlite3 app.db 'PRAGMA journal_mode=WAL'", NotSafe),
            (
                "sqlite3 app.db \"SELECT sha3_query('DELETE FROM t')\"",
                Destructive,
            ),
            ("sqlite3 app.db 'SELECT usleep(10)'", Unknown),
            ("sqlite3 app.db 'SELECT \"usleep\"(10)'", Unknown),
            (
                "sqlite3 app.db 'SELECT [usleep] (10), \"name\" FROM t'",
                Unknown,
            ),
            (
                "sqlite3 app.db \"SELECT \\\"name\\\", 'x(1)' FROM t WHERE a IN (1)\"",
                Safe,
            ),
            (
                "sqlite3 app.db \"SELECT shell_escape_crnl(x) FROM t\"",
                Unknown,
            ),
            (
                "sqlite3 app.db \"SELECT count (*), max(x) FROM t WHERE y IN (1, 2)\"",
                Safe,
            ),
            (
                "sqlite3 app.db \"SELECT json_extract(d, '$.a(b)') FROM t\"",
                Safe,
            ),
            (
                "sqlite3 app.db \"SELECT * FROM pragma_table_info('t')\"",
                Safe,
            ),
            ("sqlite3 app.db 'SELECT 1' '.once out.txt'", Destructive),
            ("sqlite3 app.db < dump.sql", Unknown),
            ("cat dump.sql | sqlite3 app.db", NotSafe),
            ("echo 'DROP TABLE t;' | sqlite3 app.db", Destructive),
            ("echo 'SELECT 1;' | sqlite3 app.db", Safe),
            ("sqlite3 $DB 'SELECT 1'", Destructive),
            ("sqlite3 app.db 'SELECT 1' > out.txt", Destructive),
            ("redis-cli get session:1", Unknown),
            ("redis-cli -h cache info", Unknown),
            ("mysqladmin status", Unknown),
            ("psql -c 'DROP TABLE users'", Destructive),
            ("psql --command='TRUNCATE orders'", Destructive),
            ("psql -h db -c \"delete from users\"", Destructive),
            ("psql -c \"$SQL\"", Destructive),
            ("mysql -e 'drop database app'", Destructive),
            (
                "mariadb --execute='UPDATE users SET admin = 1'",
                Destructive,
            ),
            ("sqlite3 app.db 'DELETE FROM t'", Destructive),
            ("sqlite3 -cmd 'DROP TABLE t' app.db", Destructive),
            ("sqlite3 app.db '.shell rm -rf data'", Destructive),
            ("sqlite3 app.db '.output /tmp/x'", Destructive),
            ("redis-cli FLUSHALL", Destructive),
            ("redis-cli -n 2 del key", Destructive),
            ("redis-cli -h cache config set dir /tmp", Destructive),
            ("dropdb app", Destructive),
            ("dropuser app", Destructive),
            ("mysqladmin -uroot drop app", Destructive),
            ("mysqladmin shutdown", Destructive),
            ("mysqladmin flush-privileges", Destructive),
            ("mysqladmin status FLUSH-LOGS", Destructive),
            ("mysqladmin -u drop status", Unknown),
            ("mysqladmin $CMD", Destructive),
            ("redis-cli", Unknown),
            ("redis-cli $CMD key", Destructive),
        ]);
    }
}
