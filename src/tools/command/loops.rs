//! `for NAME in WORDS; do BODY; done` on a line run without a click: written out, one copy
//! of the body for each word, as a subshell (`( BODY1 \n BODY2 \n )`), and judged and planned
//! as that line.
//!
//! The words are expanded as the shell would before the loop starts (braces, then globs,
//! inside the workspace); each copy of the body has `$NAME` and `${NAME}` replaced by its
//! word, written as [`substitute`](super::substitute) writes a substitution's output: split
//! and with its globs active where unquoted, kept whole inside double quotes. So the argv
//! vectors that run are the words that were judged, as for any planned line. A loop whose
//! words are only known when the line runs (`for i in $(seq 3)`) is written out once their
//! substitution has run; one over no words is `true`. Left to a shell: a loop without a word
//! list (`for i; do`), one with more than [`MAX_ITERATIONS`] words, a body that uses the name
//! otherwise (`NAME=`, inside backquotes, an operation [`parameter`](super::parameter) does
//! not do as bash does: `${NAME@Q}`; `${NAME%.txt}` and the other plain ones are done on each
//! word), and a line whose written-out form
//! changes directory (each copy runs in one subshell, where a `cd` would not outlive the loop
//! as it does in the shell). A counting loop (`for ((i=1; i<=3; i++))`) in its plain forms
//! is first written as the `for` loop over the values it counts ([`counted`]); a body that
//! reads the name in arithmetic (`$((i*2))`) still waits.

use super::parameter::{self, Operation};
use super::substitute::{as_words, in_double_quotes};

/// Most words one loop is written out for.
pub const MAX_ITERATIONS: usize = 256;
/// Most bytes a line's loops may be written out to.
const MAX_WRITTEN_BYTES: usize = 128 * 1024;

/// A `for` loop of the line, as the parser found it: where it is (in characters), its
/// name, its words as written, and where its body is (`do ... done`, in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LoopFound {
    pub start: usize,
    pub end: usize,
    pub name: String,
    pub words: Vec<String>,
    pub body_start: usize,
    pub body_end: usize,
}

/// The line with each of its outermost loops written out, each loop's words given by
/// `expand` (one word as written to the words it stands for); `None` where a loop is left
/// to a shell.
pub(super) fn write_out(
    line: &str,
    loops: &[LoopFound],
    expand: impl Fn(&str) -> Option<Vec<String>>,
) -> Option<String> {
    let bytes = |chars: usize| super::syntax::byte_offset(line, chars);
    let mut outermost: Vec<&LoopFound> = loops
        .iter()
        .filter(|inner| {
            !loops.iter().any(|outer| {
                outer != *inner && outer.start <= inner.start && inner.end <= outer.end
            })
        })
        .collect();
    outermost.sort_by_key(|found| found.start);
    let mut written = String::with_capacity(line.len());
    let mut from = 0;
    for found in outermost {
        let (start, end) = (bytes(found.start)?, bytes(found.end)?);
        let body = line
            .get(bytes(found.body_start)?..bytes(found.body_end)?)?
            .strip_prefix("do")?
            .strip_suffix("done")?
            .trim();
        // `for i; do` loops over the positional parameters; `for i in ; do` over nothing.
        if found.words.is_empty() && !lists_nothing(line.get(start..bytes(found.body_start)?)?) {
            return None;
        }
        let mut values = Vec::new();
        for word in &found.words {
            values.extend(expand(word)?);
            if values.len() > MAX_ITERATIONS {
                return None;
            }
        }
        // The name keeps its last word after the loop, which the written-out subshell would
        // not: a line that names it outside the loops that set it (or in their words) is
        // left to a shell.
        if start < from || named_outside(line, loops, &found.name, &bytes)? {
            return None;
        }
        written.push_str(line.get(from..start)?);
        // A loop over no words runs nothing and succeeds (`for i in $(true)`, or a `while
        // read` loop whose input is empty).
        if values.is_empty() {
            written.push_str("true");
            from = end;
            continue;
        }
        written.push_str("(\n");
        for value in &values {
            written.push_str(&with_value(body, &found.name, value)?);
            written.push('\n');
            if written.len() > MAX_WRITTEN_BYTES {
                return None;
            }
        }
        written.push(')');
        from = end;
    }
    written.push_str(line.get(from..)?);
    Some(written)
}

/// A counting loop of the line, `for ((NAME=A; NAME<B; NAME++)); do BODY; done`, as the
/// parser found it (positions in characters): where it starts and where its body (`do`)
/// starts, its name, and the values the name takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CountedLoop {
    pub start: usize,
    pub body_start: usize,
    pub name: String,
    pub values: Vec<i64>,
}

/// The name a counting loop counts with and the values it takes, when its three parts are
/// the plain forms `NAME=A`, `NAME<B` (or `<=`, `>`, `>=`, `!=`) and `NAME++` (or `++NAME`,
/// `NAME--`, `--NAME`, `NAME+=N`, `NAME-=N`) with decimal numbers, and it takes at most
/// [`MAX_ITERATIONS`] values.
pub(super) fn counted(
    initializer: &str,
    condition: &str,
    updater: &str,
) -> Option<(String, Vec<i64>)> {
    let squeeze = |text: &str| -> String { text.chars().filter(|c| !c.is_whitespace()).collect() };
    let (initializer, condition, updater) =
        (squeeze(initializer), squeeze(condition), squeeze(updater));
    let (name, start) = initializer.split_once('=')?;
    if !name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let mut value = decimal(start)?;
    let bound = condition.strip_prefix(name)?;
    let (operator, limit) = ["<=", ">=", "!=", "<", ">"]
        .iter()
        .find_map(|op| Some((*op, decimal(bound.strip_prefix(op)?)?)))?;
    let step = match updater.as_str() {
        u if u == format!("{name}++") || u == format!("++{name}") => 1,
        u if u == format!("{name}--") || u == format!("--{name}") => -1,
        u => {
            let rest = u.strip_prefix(name)?;
            match (rest.strip_prefix("+="), rest.strip_prefix("-=")) {
                (Some(n), _) => decimal(n)?,
                (_, Some(n)) => decimal(n)?.checked_neg()?,
                _ => return None,
            }
        }
    };
    let holds = |v: i64| match operator {
        "<=" => v <= limit,
        ">=" => v >= limit,
        "!=" => v != limit,
        "<" => v < limit,
        _ => v > limit,
    };
    let mut values = Vec::new();
    while holds(value) {
        if values.len() == MAX_ITERATIONS {
            return None;
        }
        values.push(value);
        value = value.checked_add(step)?;
    }
    Some((name.to_owned(), values))
}

/// A decimal integer as bash's arithmetic reads it (no leading zero: that is octal).
pub(super) fn decimal(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    plain.then(|| text.parse().ok())?
}

/// The line with each counting loop's head written as a `for` loop over the values it
/// counts (`for ((i=1; i<=3; i++)); do` is `for i in 1 2 3; do`).
pub(super) fn write_counted(line: &str, found: &[CountedLoop]) -> Option<String> {
    let spans = found
        .iter()
        .map(|found| {
            let values: Vec<String> = found.values.iter().map(i64::to_string).collect();
            let head = format!("for {} in {}; ", found.name, values.join(" "));
            (found.start, found.body_start, head)
        })
        .collect();
    super::syntax::replace_spans(line, spans, |head| head.starts_with("for"))
}

/// Whether a loop's head (`for NAME in ;`) names an empty list of words.
fn lists_nothing(head: &str) -> bool {
    let words: Vec<&str> = head
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|word| !word.is_empty())
        .collect();
    matches!(words.as_slice(), ["for", _, "in"])
}

/// Whether `line` names `name` outside the loops that set it, or in the words of one of them
/// (`for i in $i`, which reads the value an earlier loop left).
fn named_outside(
    line: &str,
    loops: &[LoopFound],
    name: &str,
    bytes: &impl Fn(usize) -> Option<usize>,
) -> Option<bool> {
    let mut setting: Vec<&LoopFound> = loops.iter().filter(|found| found.name == name).collect();
    setting.sort_by_key(|found| found.start);
    let mut outside = String::with_capacity(line.len());
    let mut from = 0;
    for found in setting {
        if found.words.iter().any(|word| names(word, name)) {
            return Some(true);
        }
        let start = bytes(found.start)?;
        if start >= from {
            outside.push_str(line.get(from..start)?);
            outside.push('\n');
        }
        from = from.max(bytes(found.end)?);
    }
    outside.push_str(line.get(from..)?);
    Some(names(&outside, name))
}

/// Whether `text` holds `name` as a whole word of letters, digits and underscores (`$name`,
/// `${name}`, `name=`, `$((name))` alike).
fn names(text: &str, name: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| word == name)
}

/// `body` with each `$name` and `${name}` the shell would expand replaced by `value`, and
/// each `${name OP}` and `${#name}` by what the operation makes of it ([`parameter`]);
/// `None` for a body with a here-document (a quoted one expands nothing, and the scan does
/// not tell them apart) or an operation [`parameter::apply`] does not follow.
pub(super) fn with_value(body: &str, name: &str, value: &str) -> Option<String> {
    with_value_where(body, name, value, |_| true)
}

/// [`with_value`] for a body a shell will run itself, where only the operations `allowed`
/// are done and any other leaves the body to it (`None`).
pub(super) fn with_value_where(
    body: &str,
    name: &str,
    value: &str,
    allowed: fn(Operation<'_>) -> bool,
) -> Option<String> {
    with_expansion(body, name, |quoted, operation| {
        if !allowed(operation) {
            return None;
        }
        let value = parameter::apply(value, operation)?;
        Some(if quoted {
            in_double_quotes(&value)
        } else {
            as_words(&value)
        })
    })
}

/// [`with_value`] with each expansion written as `expand` gives it, told whether it stands
/// inside double quotes and what is done to the value; `None` where `expand` gives none.
pub(super) fn with_expansion(
    body: &str,
    name: &str,
    expand: impl Fn(bool, Operation<'_>) -> Option<String>,
) -> Option<String> {
    if body.replace("<<<", "").contains("<<") {
        return None;
    }
    let text = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    let mut quoted = false;
    let mut from = 0;
    while at < text.len() {
        match text[at] {
            b'\\' => at += 2,
            b'\'' if !quoted => {
                at += 1 + text[at + 1..].iter().position(|&c| c == b'\'')? + 1;
            }
            b'"' => {
                quoted = !quoted;
                at += 1;
            }
            b'`' => return None,
            b'$' if quoted && text.get(at + 1) == Some(&b'(') => return None,
            // `$'...'`, whose backslashes escape its quote.
            b'$' if !quoted && text.get(at + 1) == Some(&b'\'') => return None,
            b'$' => {
                let rest = &body[at + 1..];
                let braced = rest.starts_with('{');
                let named = if braced { &rest[1..] } else { rest };
                // `${#name}`, the value's length.
                let counted = braced && named.starts_with('#') && named.len() > 1;
                let named = if counted { &named[1..] } else { named };
                let length = named
                    .bytes()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                    .count();
                if &named[..length] != name {
                    at += 1;
                    continue;
                }
                let (operation, taken) = if braced {
                    let operation = &named[length..named[length..].find('}')? + length];
                    let taken = 1 + usize::from(counted) + length + operation.len() + 1;
                    match (counted, operation.is_empty()) {
                        (true, true) => (Operation::Length, taken),
                        (true, false) => return None,
                        (false, true) => (Operation::Plain, taken),
                        (false, false) => (Operation::After(operation), taken),
                    }
                } else {
                    (Operation::Plain, length)
                };
                out.push_str(&body[from..at]);
                out.push_str(&expand(quoted, operation)?);
                at += 1 + taken;
                from = at;
            }
            _ => {
                let word_start = at == 0
                    || matches!(
                        text[at - 1],
                        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'('
                    );
                let assigns = body
                    .get(at..)
                    .and_then(|rest| rest.strip_prefix(name))
                    .is_some_and(|rest| rest.starts_with('=') || rest.starts_with("+="));
                if !quoted && word_start && assigns {
                    return None;
                }
                at += 1;
            }
        }
    }
    out.push_str(body.get(from..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(line: &str) -> LoopFound {
        let chars = |byte: usize| line[..byte].chars().count();
        let start = line.find("for ").unwrap();
        let end = line.rfind("done").unwrap() + 4;
        let body_start = line.find("do ").unwrap();
        let head = &line[start + 4..start + line[start..].find(';').unwrap()];
        let mut words = head.split(' ');
        let name = words.next().unwrap().to_owned();
        assert_eq!(words.next(), Some("in"));
        LoopFound {
            start: chars(start),
            end: chars(end),
            name,
            words: words.map(str::to_owned).collect(),
            body_start: chars(body_start),
            body_end: chars(end),
        }
    }

    fn written(line: &str) -> Option<String> {
        write_out(line, &[found(line)], |word| {
            Some(match word {
                "*.txt" => vec!["a.txt".to_owned(), "b c.txt".to_owned()],
                other => vec![other.to_owned()],
            })
        })
    }

    #[test]
    fn a_loop_is_written_out_once_for_each_word() {
        assert_eq!(
            written("for i in 1 2; do echo $i \"${i}x\" '$i' $in; done | sort").as_deref(),
            Some("(\necho 1 \"1x\" '$i' $in;\necho 2 \"2x\" '$i' $in;\n) | sort")
        );
        assert_eq!(
            written("é; for f in *.txt; do wc -l \"$f\" $f; done").as_deref(),
            Some("é; (\nwc -l \"a.txt\" a.txt;\nwc -l \"b c.txt\" b c.txt;\n)")
        );
        // A loop over no words runs nothing; one without a list is the shell's.
        let empty = |line: &str| {
            let found = LoopFound {
                words: Vec::new(),
                ..found(line)
            };
            write_out(line, &[found], |w| Some(vec![w.to_owned()]))
        };
        assert_eq!(
            empty("for i in ; do rm $i; done | sort").as_deref(),
            Some("true | sort")
        );
        let line = "for i; do echo $i; done";
        let without = LoopFound {
            start: 0,
            end: line.len(),
            name: "i".to_owned(),
            words: Vec::new(),
            body_start: line.find("do").unwrap(),
            body_end: line.len(),
        };
        assert_eq!(
            write_out(line, &[without], |w| Some(vec![w.to_owned()])),
            None
        );
        // Forms of the name the writing out does not follow.
        assert_eq!(written("for i in 1; do echo ${i@Q}; done"), None);
        assert_eq!(written("for i in 1; do echo ${i:=x}; done"), None);
        assert_eq!(written("for i in 1; do echo `echo $i`; done"), None);
        assert_eq!(written("for i in 1; do i=2; echo $i; done"), None);
        assert_eq!(written("for i in 1; do echo $'\\' $i'; done"), None);
        assert_eq!(written("for i in 1; do cat <<'E'\n$i\nE\n done"), None);
        assert_eq!(written("for i in 1; do echo \"$(echo $i)\"; done"), None);
        // The name after the loop holds its last word, which the subshell would not keep.
        assert_eq!(written("for i in 1 2; do echo $i; done; echo $i"), None);
        assert_eq!(written("echo ${i}; for i in 1; do echo $i; done"), None);
        assert!(written("for i in 1 2; do echo $i; done; echo $in").is_some());
        let line = "for i in 1; do echo $i; done; for i in $i; do echo $i; done";
        let second = LoopFound {
            start: line.rfind("for").unwrap(),
            body_start: line.rfind("do ").unwrap(),
            words: vec!["$i".to_owned()],
            ..found(line)
        };
        assert_eq!(
            write_out(line, &[found(line), second], |w| Some(vec![w.to_owned()])),
            None
        );
        assert_eq!(
            written("for i in 1; do echo hi=$i $(echo $i); done").as_deref(),
            Some("(\necho hi=1 $(echo 1);\n)")
        );
    }

    #[test]
    fn counting_loops_are_counted_out() {
        let count = |i: &str, c: &str, u: &str| counted(i, c, u);
        assert_eq!(
            count("i=1", " i <= 3 ", "i++"),
            Some(("i".to_owned(), vec![1, 2, 3]))
        );
        assert_eq!(
            count("n = 10", "n>0", "n-=4"),
            Some(("n".to_owned(), vec![10, 6, 2]))
        );
        assert_eq!(count("i=0", "i<0", "++i"), Some(("i".to_owned(), vec![])));
        // Forms not followed, and loops that do not end soon.
        for (i, c, u) in [
            ("i=0", "i<3", "i+=0"),
            ("i=0", "i>=0", "i++"),
            ("i=08", "i<9", "i++"),
            ("i=0", "j<3", "i++"),
            ("i=0", "i<n", "i++"),
            ("i=0", "i<3", "i*=2"),
            ("i=0,j=0", "i<3", "i++"),
        ] {
            assert_eq!(count(i, c, u), None, "{i}; {c}; {u}");
        }
        let line = "for ((i=1; i<=2; i++)); do echo $i; done";
        let found = CountedLoop {
            start: 0,
            body_start: line.find("do ").unwrap(),
            name: "i".to_owned(),
            values: vec![1, 2],
        };
        assert_eq!(
            write_counted(line, &[found]).as_deref(),
            Some("for i in 1 2; do echo $i; done")
        );
    }

    #[test]
    fn too_many_words_are_left_to_a_shell() {
        let many = (0..=MAX_ITERATIONS)
            .map(|n| n.to_string())
            .collect::<Vec<_>>();
        let line = format!("for i in {}; do echo $i; done", many.join(" "));
        assert_eq!(written(&line), None);
        let line = format!("for i in {}; do echo $i; done", many[1..].join(" "));
        assert!(written(&line).is_some());
    }
}
