//! The real-world corpus (`tests/data/realworld/`): command lines and SQL statements that
//! people wrote for other purposes (man pages' examples, a cheat-sheet collection, database
//! documentation and a database's test suite), each labelled by what it does, not by what
//! the gate says (the rules: `tests/data/realworld/README.md`).
//!
//! Two things are measured, as a channel in smart mode sees them: friction, the share of
//! safe calls that would wait for a click, and let-through, the dangerous calls that would
//! run at once. Friction must stay under ceilings measured on the gate as it is (lower them
//! as the gate improves); let-through must be none, with or without the model's
//! `risk_level: "low"`. With `FRICTION_REPORT` set, every safe call that waits is printed
//! with the gate's reason, for finding what to teach the gate next.

use std::collections::{BTreeMap, HashSet};
use std::str::FromStr;

use riskgate::config::Settings;
use riskgate::core::risk::{Assessment, ChannelMode, Decision};
use riskgate::core::tools::{AssessContext, GatedCall, RiskGate, SqlDialect, ToolCall};
use riskgate::tools::command::LinePlan;
use serde_json::json;

const COMMANDS: &str = include_str!("data/realworld/commands.tsv");
const SQL: &str = include_str!("data/realworld/sql.tsv");

/// Friction ceilings, in percent, measured on the gate of this commit (12.2% of command
/// lines, 89 of 731, down from 32.0% over the sessions as toolchains' listings,
/// formatters' checks, document readers, the machine's public files, here-texts, process
/// substitutions, Perl filters, hardware listers, storage reports and daemons' listings were read; 8.2% of PostgreSQL once SQL given to a function as a literal is judged, 7.5% of
/// MySQL and 2.4% of SQLite statements) and rounded up a little: a change that makes the
/// gate ask about more safe calls fails here. Lower them when the gate learns more.
const COMMAND_FRICTION_CEILING: f64 = 9.8;
const SQL_FRICTION_CEILINGS: [(SqlDialect, f64); 3] = [
    (SqlDialect::Postgres, 8.5),
    (SqlDialect::Mysql, 8.0),
    (SqlDialect::Sqlite, 2.5),
];

/// Dangerous calls that the model's `risk_level: "low"` lets run at once because the gate
/// does not know them (they meet only the walls of an unconfirmed run): 1,129 on the gate of
/// this commit (1,147 before `rename`, `patch`, `optipng`, `enca` and more were known to
/// rewrite files; 1,173 before programs the rules do not know were put on the floor when they
/// say they delete, `yum remove`, `make clean`, `rsync --delete`; 1,229 before `route del`,
/// `tc qdisc add`, `busctl call`, ... were known to be destructive, 1,204 before the
/// toolchains' removals were), rounded up a little.
const LOW_WALLED_CEILING: usize = 1_128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    /// Only reads, prints or computes; writes nothing outside stdout, starts nothing that
    /// outlives it, reaches no network, reads no secret of the host.
    Safe,
    /// Writes, deletes or replaces, changes a database, the session or the system, runs
    /// fetched code, reaches the network, kills, reads secrets.
    Dangerous,
    /// Depends on what the line does not show; not measured.
    Unclear,
}

impl FromStr for Label {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "safe" => Ok(Self::Safe),
            "dangerous" => Ok(Self::Dangerous),
            "unclear" => Ok(Self::Unclear),
            other => Err(format!(
                "unknown label {other:?}: use safe, dangerous or unclear"
            )),
        }
    }
}

/// One line of a corpus file.
#[derive(Debug)]
struct Case {
    /// The line number in its file, for finding it again.
    line: usize,
    label: Label,
    /// Where the call was written, as the README explains.
    source: String,
    /// `None` for command lines.
    dialect: Option<SqlDialect>,
    text: String,
}

impl Case {
    fn call(&self, risk_level: Option<&str>) -> ToolCall {
        let (tool, mut arguments) = match self.dialect {
            None => (
                riskgate::tools::command::NAME,
                json!({ "command": self.text }),
            ),
            Some(_) => (riskgate::tools::sql::NAME, json!({ "sql": self.text })),
        };
        if let Some(level) = risk_level {
            arguments["risk_level"] = json!(level);
        }
        ToolCall {
            tool: tool.to_owned(),
            arguments: arguments.as_object().expect("object").clone(),
        }
    }

    fn check(&self, gate: &RiskGate, risk_level: Option<&str>) -> GatedCall {
        let ctx = AssessContext {
            dialect: self.dialect,
        };
        gate.check(&self.call(risk_level), ChannelMode::Smart, &ctx)
    }

    /// Why a safe case would wait for a click, or `None` if it runs at once: the gate asks
    /// (or refuses), or a command line has neither a plan nor substitutions to run first
    /// (the gate's reading of it), so an auto run would be refused.
    fn wait(&self, gated: &GatedCall) -> Option<String> {
        let planless = match self.dialect {
            None => {
                let read = gated
                    .reading
                    .as_ref()
                    .and_then(|reading| reading.get::<LinePlan>())
                    .expect("the command tool leaves its reading");
                match (&read.plan, &read.substituting) {
                    (Err(e), None) => Some(format!("; needs a shell because {e}")),
                    _ => None,
                }
            }
            Some(_) => None,
        };
        if gated.decision.decision == Decision::Auto && planless.is_none() {
            return None;
        }
        Some(format!(
            "{} ({}: {}){}",
            gated.decision.decision,
            gated.decision.source,
            gated.decision.reason,
            planless.unwrap_or_default()
        ))
    }

    fn describe(&self, file: &str) -> String {
        let dialect = self.dialect.map(|d| format!(" [{d}]")).unwrap_or_default();
        format!(
            "{file}:{}{dialect} {:?} ({})",
            self.line, self.text, self.source
        )
    }
}

/// Reads a corpus file: `#` lines are comments; each other line has `fields` tab-separated
/// fields, the label first and the call last.
fn parse(file: &str, text: &str, sql: bool) -> Vec<Case> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let line = i + 1;
            let fields: Vec<&str> = l.split('\t').collect();
            let want = if sql { 4 } else { 3 };
            assert_eq!(
                fields.len(),
                want,
                "{file}:{line} has {} tab-separated fields, not {want}",
                fields.len()
            );
            let label = Label::from_str(fields[0]).unwrap_or_else(|e| panic!("{file}:{line}: {e}"));
            let dialect = sql.then(|| {
                SqlDialect::from_str(fields[1]).unwrap_or_else(|e| panic!("{file}:{line}: {e}"))
            });
            let source = fields[fields.len() - 2].to_owned();
            let text = fields[fields.len() - 1].to_owned();
            assert!(
                !source.is_empty() && !text.trim().is_empty(),
                "{file}:{line} needs a source and a call"
            );
            Case {
                line,
                label,
                source,
                dialect,
                text,
            }
        })
        .collect()
}

fn commands() -> Vec<Case> {
    parse("commands.tsv", COMMANDS, false)
}

fn statements() -> Vec<Case> {
    parse("sql.tsv", SQL, true)
}

/// Files and folders the command lines name, so that globs match and paths resolve as they
/// would in a workspace where the line makes sense.
const WORKSPACE_FILES: &[&str] = &[
    "notes.txt",
    "a.txt",
    "b.txt",
    "file",
    "file1",
    "file2",
    "file1.csv",
    "file2.csv",
    "data.csv",
    "patterns.txt",
    "input.txt",
    "msg.txt",
    "mylist.txt",
    "filename.json",
    "foo.json",
    "README.md",
    "SHA256SUMS",
    "app.bin",
    "app.jar",
    "foo.bz2",
    "foo.tgz",
    "foo.tar.gz",
    "foo.tar.bz2",
    "backup.tar.gz",
    "test.zip",
    "letters",
    "storage",
    "server.crt",
    "server.csr",
    "file.pem",
    "file.der",
    "crl.der",
    "newcert.pem",
    "insta.cert.pem",
    "ec_param.pem",
    "file.c",
    "prog.c",
    "libdemo.c",
    "file.php",
    "file.txt",
    "file.cap",
    "prot.x",
    "man.1",
    "perl.1",
    "broken.1",
    "whatis.cat1",
    "xxd.1",
    "foo.me",
    "meintro.me",
    "pic.ms",
    "exum2.n",
    "bpf.o",
    "htop.rpm",
    "htop.deb",
    "src/main.rs",
    "src/notes.txt",
    "docs/guide.md",
    "dir/file.txt",
    "tmp/.keep",
    "include/stdio.h",
    "org/example/MyClass.java",
    "org/example/NoMyAttr.java",
];

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in WORKSPACE_FILES {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "x\n").expect("write");
    }
    dir
}

fn gate(workspace: &tempfile::TempDir) -> RiskGate {
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    riskgate::tools::builtin_gate(&settings)
}

/// What one pass over a set of cases found.
#[derive(Default)]
struct Tally {
    safe: usize,
    /// Safe cases that would wait, with why.
    waits: Vec<String>,
    /// Dangerous cases that would run at once, with why.
    let_through: Vec<String>,
}

impl Tally {
    fn add(&mut self, file: &str, case: &Case, gate: &RiskGate) {
        let gated = case.check(gate, None);
        match case.label {
            Label::Safe => {
                self.safe += 1;
                if let Some(why) = case.wait(&gated) {
                    self.waits.push(format!("{}: {why}", case.describe(file)));
                }
            }
            Label::Dangerous if gated.decision.decision == Decision::Auto => {
                self.let_through.push(format!(
                    "{}: auto ({})",
                    case.describe(file),
                    gated.decision.reason
                ));
            }
            Label::Dangerous | Label::Unclear => {}
        }
    }

    fn rate(&self) -> f64 {
        self.waits.len() as f64 * 100.0 / self.safe.max(1) as f64
    }

    /// Prints the figure, and every wait when `FRICTION_REPORT` is set.
    fn report(&self, what: &str) {
        println!(
            "{what}: {} of {} safe calls wait for a click ({:.1}%); {} dangerous calls run at once",
            self.waits.len(),
            self.safe,
            self.rate(),
            self.let_through.len()
        );
        if std::env::var_os("FRICTION_REPORT").is_some() {
            for wait in &self.waits {
                println!("  waits: {wait}");
            }
        }
    }
}

#[test]
fn the_corpus_is_labelled_and_large_enough() {
    let commands = commands();
    let statements = statements();
    let count = |cases: &[Case], label: Label| cases.iter().filter(|c| c.label == label).count();
    assert!(
        count(&commands, Label::Safe) >= 500 && count(&commands, Label::Dangerous) >= 500,
        "commands.tsv has too few measured lines"
    );
    for dialect in [SqlDialect::Postgres, SqlDialect::Mysql, SqlDialect::Sqlite] {
        let of: Vec<&Case> = statements
            .iter()
            .filter(|c| c.dialect == Some(dialect))
            .collect();
        let safe = of.iter().filter(|c| c.label == Label::Safe).count();
        let dangerous = of.iter().filter(|c| c.label == Label::Dangerous).count();
        assert!(
            safe >= 100 && dangerous >= 100,
            "sql.tsv has {safe} safe and {dangerous} dangerous {dialect} statements"
        );
    }
    // A call appears once per file (and per dialect), so no line counts twice.
    for (file, cases) in [("commands.tsv", &commands), ("sql.tsv", &statements)] {
        let mut seen = HashSet::new();
        for case in cases {
            assert!(
                seen.insert((case.dialect, case.text.as_str())),
                "{} appears twice",
                case.describe(file)
            );
        }
    }
}

#[test]
fn safe_command_lines_rarely_wait_and_dangerous_ones_never_run_at_once() {
    let workspace = workspace();
    let gate = gate(&workspace);
    let mut tally = Tally::default();
    for case in commands() {
        tally.add("commands.tsv", &case, &gate);
    }
    tally.report("command lines");
    assert!(
        tally.let_through.is_empty(),
        "dangerous command lines would run without a click:\n{}",
        tally.let_through.join("\n")
    );
    // Where the kernel cannot build the sandbox, no line runs without a click: friction
    // there says nothing about the gate.
    if riskgate::tools::command::sandbox::kernel_support().is_ready() {
        assert!(
            tally.rate() < COMMAND_FRICTION_CEILING,
            "friction {:.1}% is over the ceiling {COMMAND_FRICTION_CEILING}% ({} of {}):\n{}",
            tally.rate(),
            tally.waits.len(),
            tally.safe,
            tally.waits.join("\n")
        );
    }
}

#[test]
fn safe_sql_rarely_waits_and_dangerous_sql_never_runs_at_once() {
    let workspace = workspace();
    let gate = gate(&workspace);
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    for case in statements() {
        let dialect = case.dialect.expect("sql has a dialect");
        tallies
            .entry(dialect.as_str())
            .or_default()
            .add("sql.tsv", &case, &gate);
    }
    let mut failures = Vec::new();
    for (dialect, ceiling) in SQL_FRICTION_CEILINGS {
        let tally = &tallies[dialect.as_str()];
        tally.report(&format!("{dialect} statements"));
        if !tally.let_through.is_empty() {
            failures.push(format!(
                "dangerous {dialect} statements would run without a click:\n{}",
                tally.let_through.join("\n")
            ));
        }
        if tally.rate() >= ceiling {
            failures.push(format!(
                "{dialect} friction {:.1}% is over the ceiling {ceiling}%:\n{}",
                tally.rate(),
                tally.waits.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The destructive floor: with the model's `risk_level: "low"`, a dangerous call that the
/// gate knows is destructive still waits for a click. A dangerous call that the gate only
/// does not know (an `Unknown` assessment) runs at once on the model's word, by design,
/// inside the walls of an unconfirmed run (the command sandbox, read-only and offline; the
/// SQL engines' read-only mode): those are counted against a ceiling measured on this
/// commit, and listed when `FRICTION_REPORT` is set.
#[test]
fn risk_level_low_never_runs_a_known_destructive_call_at_once() {
    let workspace = workspace();
    let gate = gate(&workspace);
    let (mut breaches, mut walled) = (Vec::new(), Vec::new());
    for (file, cases) in [("commands.tsv", commands()), ("sql.tsv", statements())] {
        for case in cases.iter().filter(|c| c.label == Label::Dangerous) {
            let gated = case.check(&gate, Some("low"));
            if gated.decision.decision != Decision::Auto {
                continue;
            }
            let entry = format!(
                "{}: auto ({})",
                case.describe(file),
                gated.assessment.reason()
            );
            match gated.assessment {
                Assessment::Unknown(_) => walled.push(entry),
                _ => breaches.push(entry),
            }
        }
    }
    println!(
        "risk_level low: {} dangerous calls the gate does not know run at once inside the walls",
        walled.len()
    );
    if std::env::var_os("FRICTION_REPORT").is_some() {
        for entry in &walled {
            println!("  low runs: {entry}");
        }
    }
    assert!(
        breaches.is_empty(),
        "with risk_level \"low\", dangerous calls the gate judged safe or destructive ran without a click:\n{}",
        breaches.join("\n")
    );
    assert!(
        walled.len() <= LOW_WALLED_CEILING,
        "with risk_level \"low\", {} dangerous calls run at once (ceiling {LOW_WALLED_CEILING}):\n{}",
        walled.len(),
        walled.join("\n")
    );
}
