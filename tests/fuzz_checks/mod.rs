//! The invariants the fuzz targets check, one function per target. The targets in
//! fuzz/fuzz_targets/ include this file by path; tests/fuzz_regressions.rs runs every input
//! kept in tests/data/fuzz/<target>/ through the same functions, so a crash the fuzzer found
//! stays fixed. Each function panics, naming the input, when an invariant does not hold.
//!
//! Inputs are bytes; text is read as UTF-8 with invalid sequences replaced, so every input
//! reaches the code under test.
//!
//! Each check runs on a thread with a 2 MiB stack, the size of a tokio worker's and a test
//! thread's: recursion that a fuzzing process's 8 MiB main thread survives but the bot's
//! workers would not is a crash here too.

use std::collections::HashSet;
use std::mem::discriminant;
use std::path::PathBuf;
use std::sync::OnceLock;

use riskgate::core::agent::{CallSlot, ChatReply, Protocol, ReplyKind, json_objects};
use riskgate::core::risk::Assessment;
use riskgate::core::tools::SqlDialect;
use riskgate::tools::Workspace;
use riskgate::tools::command::{CommandPolicy, assess_command};
use riskgate::tools::sql::{SqlRules, assess_sql};
use serde_json::{Map, Value};

/// The stack of a tokio worker thread (and of a test thread).
const STACK: usize = 2 * 1024 * 1024;

/// Runs `check` on its own 2 MiB thread; a panic there panics this thread with its message.
fn on_small_stack(check: impl FnOnce() + Send) {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, check)
            .expect("spawn a checking thread");
        if let Err(panic) = worker.join() {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic without a message");
            panic!("the check panicked: {message}");
        }
    });
}

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

fn is_safe(assessment: &Assessment) -> bool {
    matches!(assessment, Assessment::Safe(_))
}

/// `json_protocol`: the JSON protocol's tool-call extractor and reader, on reply text.
///
/// - `json_objects` finds what the plain extractor (one scan per `{`) finds.
/// - Every object `json_objects` finds serialises and parses back to itself, and extracting
///   from that serialisation finds exactly that object again.
/// - No more objects than `{` in the text.
/// - `Protocol::Json.interpret` is deterministic (same reply, same starting id: same answer,
///   same ids used) and consistent with the extractor: when the text names no real tool,
///   one slot per object with a `"tool"` key, in order; every call has a non-empty, trimmed
///   tool name equal to the object's trimmed `"tool"`, and its parameters (or `arguments`);
///   when it names one (calls written as `{"name", "arguments"}` or `name{...}` count
///   then), at least that many slots, each naming a real tool or a `"tool"` object's;
///   every slot's id is non-empty and unique within the reply, and exactly one id is used
///   per slot.
/// - A reply without tool objects comes back verbatim as text, or as malformed; an empty or
///   blank one is always malformed.
pub fn json_protocol(data: &[u8]) {
    let text = text(data);
    on_small_stack(|| check_json_protocol(&text));
}

/// Every slot has a non-empty id, unique within the reply; a malformed one says why.
fn check_slot_ids(text: &str, slots: &[CallSlot]) {
    let mut ids = HashSet::new();
    for slot in slots {
        let id = match slot {
            CallSlot::Call(call) => &call.id,
            CallSlot::Malformed { id, problem, .. } => {
                assert!(!problem.is_empty(), "a malformed slot says why");
                id
            }
        };
        assert!(!id.is_empty(), "an empty call id from {text:?}");
        assert!(ids.insert(id.clone()), "call id {id:?} twice in {text:?}");
    }
}

/// The tool names `check_json_protocol` treats as real.
const KNOWN_TOOLS: [&str; 2] = ["execute_sql", "execute_command"];

/// One slot per `"tool"` object, in order, with its name and parameters.
fn check_tool_object_slots(text: &str, slots: &[CallSlot], tool_objects: &[&Map<String, Value>]) {
    assert_eq!(
        slots.len(),
        tool_objects.len(),
        "one slot per tool object in {text:?}"
    );
    for (slot, object) in slots.iter().zip(tool_objects) {
        let CallSlot::Call(call) = slot else {
            continue;
        };
        assert!(
            !call.tool.is_empty() && call.tool.trim() == call.tool,
            "tool name {:?} from {text:?}",
            call.tool
        );
        assert_eq!(
            object.get("tool").and_then(Value::as_str).map(str::trim),
            Some(call.tool.as_str()),
            "the tool named in {text:?}"
        );
        match object.get("parameters").or_else(|| object.get("arguments")) {
            Some(Value::Object(parameters)) => {
                assert_eq!(&call.arguments, parameters, "the parameters in {text:?}")
            }
            _ => assert!(
                call.arguments.is_empty(),
                "arguments from nowhere in {text:?}"
            ),
        }
    }
}

fn check_json_protocol(text: &str) {
    let objects = json_objects(text);
    // The extractor against its straightforward form, where that is quick enough.
    if text.matches('{').count() <= 256 {
        assert_eq!(
            objects,
            json_objects_one_scan_each(text),
            "json_objects differs from the plain extractor on {text:?}"
        );
    }
    for object in &objects {
        let serialised = serde_json::to_string(object).expect("a JSON map serialises");
        let reparsed: Map<String, Value> = serde_json::from_str(&serialised)
            .unwrap_or_else(|e| panic!("{serialised:?} does not parse back ({e}); from {text:?}"));
        assert_eq!(
            &reparsed, object,
            "{serialised:?} parses to another object; from {text:?}"
        );
        assert_eq!(
            json_objects(&serialised),
            vec![object.clone()],
            "extracting from {serialised:?} does not find just itself; from {text:?}"
        );
    }
    assert!(
        objects.len() <= text.matches('{').count(),
        "{} objects from {text:?}",
        objects.len()
    );

    let reply = ChatReply {
        content: Some(text.to_owned()),
        ..ChatReply::default()
    };
    const FIRST: u64 = 41;
    let known: HashSet<String> = KNOWN_TOOLS.iter().map(|t| (*t).to_owned()).collect();
    let mut next_id = FIRST;
    let kind = Protocol::Json.interpret(&reply, &mut next_id, &known);
    let mut next_id_again = FIRST;
    let again = Protocol::Json.interpret(&reply, &mut next_id_again, &known);
    assert_eq!(kind, again, "two readings of {text:?} differ");
    assert_eq!(
        next_id, next_id_again,
        "two readings of {text:?} used other ids"
    );

    let tool_objects: Vec<&Map<String, Value>> =
        objects.iter().filter(|o| o.contains_key("tool")).collect();
    let names_a_tool = KNOWN_TOOLS.iter().any(|t| text.contains(t));
    match &kind {
        ReplyKind::Calls { content, slots } => {
            assert_eq!(content.as_deref(), Some(text), "the text of the calls");
            assert_eq!(
                next_id - FIRST,
                slots.len() as u64,
                "one id per slot in {text:?}"
            );
            check_slot_ids(text, slots);
            if names_a_tool {
                assert!(slots.len() >= tool_objects.len(), "slots from {text:?}");
                for slot in slots {
                    if let CallSlot::Call(call) = slot {
                        let named = KNOWN_TOOLS.contains(&call.tool.as_str())
                            || tool_objects.iter().any(|o| {
                                o.get("tool").and_then(Value::as_str).map(str::trim)
                                    == Some(call.tool.as_str())
                            });
                        assert!(named, "tool {:?} from nowhere in {text:?}", call.tool);
                    }
                }
            } else {
                check_tool_object_slots(text, slots, &tool_objects);
            }
        }
        ReplyKind::Text(answer) => {
            assert_eq!(answer, text, "a text answer comes back verbatim");
            assert!(!text.trim().is_empty(), "a blank reply read as an answer");
            assert!(tool_objects.is_empty(), "tool objects ignored in {text:?}");
        }
        ReplyKind::Malformed { raw, problem } => {
            assert_eq!(raw, text, "a malformed reply keeps its text");
            assert!(!problem.is_empty(), "a malformed reply says why");
            assert!(tool_objects.is_empty(), "tool objects ignored in {text:?}");
        }
    }
    if text.trim().is_empty() {
        assert!(
            matches!(kind, ReplyKind::Malformed { .. }),
            "blank {text:?} -> {kind:?}"
        );
    }
}

/// What `json_objects` must find, in its plain form: every `{` not inside an object already
/// found gets its own scan for the balanced `{...}` (strings and escapes respected), which
/// is kept if it parses as a JSON object. Quadratic in the number of `{`.
fn json_objects_one_scan_each(text: &str) -> Vec<Map<String, Value>> {
    fn balanced_len(text: &str) -> Option<usize> {
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        for (i, c) in text.char_indices() {
            if in_string {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_string = false,
                    _ => {}
                }
            } else if c == '"' {
                in_string = true;
            } else if c == '{' {
                depth += 1;
            } else if c == '}' {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
        }
        None
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text.as_bytes()[i] == b'{'
            && let Some(len) = balanced_len(&text[i..])
            && let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text[i..i + len])
        {
            found.push(map);
            i += len;
            continue;
        }
        i += 1;
    }
    found
}

/// The command policy the shell target assesses against: a workspace with a few files (so
/// path checks find something), one allowed and one denied prefix, as in the module tests.
pub fn shell_policy() -> &'static CommandPolicy {
    static POLICY: OnceLock<CommandPolicy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let root: PathBuf = std::env::temp_dir().join("riskgate-fuzz-workspace");
        for file in ["README.md", "notes.txt", "src/main.rs", "docs/guide.md"] {
            let path = root.join(file);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("create the fuzz workspace");
            }
            std::fs::write(&path, "x\n").expect("write a workspace file");
        }
        CommandPolicy::new(
            Workspace::new(&root),
            &["make test".to_owned()],
            &["kubectl delete".to_owned()],
        )
    })
}

/// `shell_assess`: the command assessor on one line.
///
/// - Deterministic, and every verdict has a reason.
/// - An empty or blank line is never safe.
/// - `rm -rf / ; <line>` is destructive or forbidden, and never less severe than `<line>`
///   alone: whatever follows, the destructive part dominates.
pub fn shell_assess(data: &[u8]) {
    let line = text(data);
    let policy = shell_policy();
    on_small_stack(|| {
        let first = assess_command(&line, policy);
        let second = assess_command(&line, policy);
        assert_eq!(first, second, "two assessments of {line:?} differ");
        assert!(
            !first.reason().is_empty(),
            "{line:?} -> {first:?} has no reason"
        );
        if line.trim().is_empty() {
            assert!(!is_safe(&first), "blank {line:?} judged safe");
        }
        let prefixed = format!("rm -rf / ; {line}");
        let worse = assess_command(&prefixed, policy);
        assert!(
            matches!(worse, Assessment::Destructive(_) | Assessment::Forbidden(_)),
            "{prefixed:?} -> {worse:?}"
        );
        assert_eq!(
            discriminant(&worse.clone().worst(first.clone())),
            discriminant(&worse),
            "{prefixed:?} -> {worse:?} is milder than {line:?} -> {first:?}"
        );
    });
}

/// The SQL rules the SQL target assesses with: one denied name.
pub fn sql_rules() -> &'static SqlRules {
    static RULES: OnceLock<SqlRules> = OnceLock::new();
    RULES.get_or_init(|| SqlRules::new(&[], &["secrets".to_owned()]))
}

/// The dialect an input's first byte picks.
pub fn sql_dialect(selector: u8) -> SqlDialect {
    match selector % 3 {
        0 => SqlDialect::Postgres,
        1 => SqlDialect::Mysql,
        _ => SqlDialect::Sqlite,
    }
}

/// `sql_assess`: the SQL assessor; the first byte picks the dialect, the rest is the SQL.
///
/// - Deterministic, and every verdict has a reason.
/// - `<sql>\n; DROP TABLE t` is never safe. (On a new line: after `<sql>` ending in a `--`
///   or `#` comment, `; DROP TABLE t` on the same line is rightly part of the comment. A
///   newline ends those and nothing else: an open string, quoted name or block comment
///   still swallows the `DROP`, and is then unterminated.)
pub fn sql_assess(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let dialect = sql_dialect(selector);
    let sql = text(rest);
    let rules = sql_rules();
    on_small_stack(|| {
        let first = assess_sql(&sql, dialect, rules);
        let second = assess_sql(&sql, dialect, rules);
        assert_eq!(
            first, second,
            "two {dialect:?} assessments of {sql:?} differ"
        );
        assert!(
            !first.reason().is_empty(),
            "{dialect:?} {sql:?} -> {first:?} has no reason"
        );
        let appended = format!("{sql}\n; DROP TABLE t");
        let verdict = assess_sql(&appended, dialect, rules);
        assert!(
            !is_safe(&verdict),
            "{dialect:?} {appended:?} judged safe: {verdict:?}"
        );
    });
}
