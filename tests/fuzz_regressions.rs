//! Every input kept in tests/data/fuzz/<target>/ (crashes the fuzzers found, minimised, and
//! hand-made hard cases: deep nesting, unterminated quotes, long repeats, invalid UTF-8)
//! through the same invariant checks as the fuzz targets (tests/fuzz_checks/mod.rs).
//! "Fuzzing" in README.md says how to run the fuzzers.

mod fuzz_checks;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long one input's checks may take here (a debug build): the slowest kept input takes
/// milliseconds; the fuzzers report an input taking 10 s (optimised) as a hang.
const SLOW: Duration = Duration::from_secs(10);

/// Runs `check` on every file of `tests/data/fuzz/<target>/`, and fails naming every input
/// whose check panicked or took longer than [`SLOW`].
fn replay(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fuzz")
        .join(target);
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 5,
        "{} holds only {} inputs",
        dir.display(),
        inputs.len()
    );
    let failed: Vec<String> = inputs
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).expect("read an input");
            let started = Instant::now();
            let panicked = catch_unwind(AssertUnwindSafe(|| check(&data))).is_err();
            let took = started.elapsed();
            if took > SLOW {
                eprintln!("{} took {took:?}", path.display());
            }
            panicked || took > SLOW
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{target}: the invariants fail on {failed:#?} (the messages above say how)"
    );
}

#[test]
fn json_protocol_inputs_keep_their_invariants() {
    replay("json_protocol", fuzz_checks::json_protocol);
}

#[test]
fn shell_assess_inputs_keep_their_invariants() {
    replay("shell_assess", fuzz_checks::shell_assess);
}

#[test]
fn sql_assess_inputs_keep_their_invariants() {
    replay("sql_assess", fuzz_checks::sql_assess);
}

/// A reply of nothing but `{` (a model stuck repeating itself) is read in linear time: one
/// scan per `{` took about 10 s for 32 KiB in an optimised fuzz build, and this is 8 times
/// as long (64 times the work).
#[test]
fn json_objects_takes_linear_time_on_open_braces() {
    let text = "{".repeat(256 * 1024);
    let started = Instant::now();
    assert!(riskgate::core::agent::json_objects(&text).is_empty());
    let mut next_id = 0;
    let reply = riskgate::core::agent::ChatReply {
        content: Some(text),
        ..Default::default()
    };
    assert!(matches!(
        riskgate::core::agent::Protocol::Json.interpret(&reply, &mut next_id, &Default::default()),
        riskgate::core::agent::ReplyKind::Text(_)
    ));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

/// The checks are not vacuous: they reject what they are meant to reject.
#[test]
fn the_checks_catch_what_they_guard() {
    use riskgate::core::risk::Assessment;
    use riskgate::tools::command::assess_command;
    use riskgate::tools::sql::assess_sql;

    let policy = fuzz_checks::shell_policy();
    assert!(matches!(
        assess_command("rm -rf / ; ls", policy),
        Assessment::Destructive(_) | Assessment::Forbidden(_)
    ));
    assert!(matches!(
        assess_command("kubectl delete pod x", policy),
        Assessment::Forbidden(_)
    ));
    assert!(matches!(
        assess_command("cat notes.txt", policy),
        Assessment::Safe(_)
    ));
    let rules = fuzz_checks::sql_rules();
    for selector in *b"012" {
        let dialect = fuzz_checks::sql_dialect(selector);
        assert!(matches!(
            assess_sql("SELECT 1", dialect, rules),
            Assessment::Safe(_)
        ));
        assert!(!matches!(
            assess_sql("SELECT 1\n; DROP TABLE t", dialect, rules),
            Assessment::Safe(_)
        ));
        // Why the SQL check appends on a new line: on the same line, a trailing comment
        // rightly swallows the DROP. (`-- ` with the space: MySQL needs it.)
        assert!(matches!(
            assess_sql("SELECT 1 -- ; DROP TABLE t", dialect, rules),
            Assessment::Safe(_)
        ));
    }
    assert!(matches!(
        riskgate::core::agent::json_objects(r#"x {"tool": "a"} {"b": {"c": "}"}} {"#).as_slice(),
        [a, b] if a["tool"] == "a" && b["b"]["c"] == "}"
    ));
}
