//! Parameter expansions with an operation (`${name%.txt}`, `${name:0:3}`, `${#name}`,
//! `${name/a/b}`, `${name^^}`, `${name:-default}`), done as bash does them on a value the
//! line is sure of: a loop's word, a name the line sets to plain text, a shell's parameter.
//! Where the plan runs the words, the words judged are the words run whatever bash would
//! make of them; in a script given to `sh -c`, which the shell runs itself, only the
//! operations POSIX defines are done ([`is_posix`]), which dash and bash do alike and no
//! locale changes on ASCII.
//!
//! Only the plain forms are followed: a value of ASCII (so bytes are characters in every
//! locale), and every pattern, replacement and default of printable ASCII without quotes,
//! backslashes, expansions or blanks (nothing in them is expanded again); patterns of literal
//! characters, `*` and `?` for the removing forms (`%`, `%%`, `#`, `##`) and of literal
//! characters alone for replacement (`/`, `//`, `/#`, `/%`; no `&`, which bash 5.2 puts the
//! match in for); offsets and lengths as decimal numbers without a sign or a leading zero
//! (`${x:010}` is octal to bash, `${x: -1}` counts from the end); the defaults `:-` and
//! `:+` (the forms without a colon tell an unset name from an empty one, `:=` assigns and
//! `:?` ends the shell). Anything else (`${x@Q}`, `${x~}`, `${x:1:-1}`, a bracket pattern)
//! is left to a shell, and the line waits.

/// What is done to the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operation<'a> {
    /// `$name`, `${name}`: the value itself.
    Plain,
    /// `${#name}`: its length.
    Length,
    /// `${name OP}`: the text after the name, before the closing brace.
    After(&'a str),
}

/// Whether `operation` is one POSIX defines (`${#x}`, `%`, `%%`, `#`, `##`, `:-`, `:+`),
/// which dash does as bash does and no locale changes on ASCII; bash's own (`/`, `^^`,
/// `:1:2`) are not, and in a Turkish locale bash upper-cases `i` as `İ`.
pub(super) fn is_posix(operation: Operation<'_>) -> bool {
    match operation {
        Operation::Plain | Operation::Length => true,
        Operation::After(op) => {
            op.starts_with(":-") || op.starts_with(":+") || op.starts_with(['%', '#'])
        }
    }
}

/// `value` with `operation` done to it, as bash would; `None` for a form this does not
/// follow.
pub(super) fn apply(value: &str, operation: Operation<'_>) -> Option<String> {
    match operation {
        Operation::Plain => Some(value.to_owned()),
        Operation::Length => value.is_ascii().then(|| value.len().to_string()),
        Operation::After(op) => {
            if !value.is_ascii() || !plain(op) {
                return None;
            }
            after(value, op)
        }
    }
}

/// Text of printable ASCII with nothing the shell would read again in it.
fn plain(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'\'' | b'"' | b'\\' | b'$' | b'`'))
}

fn after(value: &str, op: &str) -> Option<String> {
    if let Some(word) = op.strip_prefix(":-") {
        return literal(word).then(|| if value.is_empty() { word } else { value }.to_owned());
    }
    if let Some(word) = op.strip_prefix(":+") {
        return literal(word).then(|| if value.is_empty() { "" } else { word }.to_owned());
    }
    if let Some(range) = op.strip_prefix(':') {
        return substring(value, range);
    }
    for (marker, from_end, longest) in [
        ("%%", true, true),
        ("%", true, false),
        ("##", false, true),
        ("#", false, false),
    ] {
        if let Some(pattern) = op.strip_prefix(marker) {
            return removed(value, pattern, from_end, longest);
        }
    }
    if let Some(rest) = op.strip_prefix('/') {
        return replaced(value, rest);
    }
    match op {
        "^^" => Some(value.to_ascii_uppercase()),
        ",," => Some(value.to_ascii_lowercase()),
        "^" | "," => {
            let mut chars = value.chars();
            Some(match chars.next() {
                Some(first) if op == "^" => first.to_ascii_uppercase().to_string() + chars.as_str(),
                Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                None => String::new(),
            })
        }
        _ => None,
    }
}

/// A default or a replacement: no glob character, no brace, nothing bash reads in it.
fn literal(word: &str) -> bool {
    !word.contains([
        '*', '?', '[', ']', '{', '}', '~', '&', '!', '(', ')', '|', '<', '>', ';',
    ])
}

/// A removing pattern: literal characters, `*` and `?`.
fn pattern(text: &str) -> bool {
    !text.contains([
        '[', ']', '{', '}', '~', '&', '!', '(', ')', '|', '<', '>', ';', '%', '#',
    ])
}

/// `${x:OFFSET}` and `${x:OFFSET:LENGTH}`.
fn substring(value: &str, range: &str) -> Option<String> {
    let number = |text: &str| -> Option<usize> {
        let valid = !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && (text == "0" || !text.starts_with('0'));
        valid.then(|| text.parse().ok()).flatten()
    };
    let (offset, length) = match range.split_once(':') {
        Some((offset, length)) => (number(offset)?, Some(number(length)?)),
        None => (number(range)?, None),
    };
    let rest = value.get(offset.min(value.len())..)?;
    Some(match length {
        Some(length) => rest[..length.min(rest.len())].to_owned(),
        None => rest.to_owned(),
    })
}

/// `${x%P}`, `${x%%P}` (from the end), `${x#P}`, `${x##P}` (from the start): the shortest
/// or longest part matching the pattern taken away.
fn removed(value: &str, pattern_text: &str, from_end: bool, longest: bool) -> Option<String> {
    if !pattern(pattern_text) {
        return None;
    }
    let p = pattern_text.as_bytes();
    let v = value.as_bytes();
    let cuts: Vec<usize> = match (from_end, longest) {
        // The suffix starting at `cut`: shortest first is the latest start.
        (true, false) => (0..=v.len()).rev().collect(),
        (true, true) => (0..=v.len()).collect(),
        // The prefix ending at `cut`.
        (false, false) => (0..=v.len()).collect(),
        (false, true) => (0..=v.len()).rev().collect(),
    };
    for cut in cuts {
        let (kept, part) = if from_end {
            (&value[..cut], &v[cut..])
        } else {
            (&value[cut..], &v[..cut])
        };
        if matches(p, part) {
            return Some(kept.to_owned());
        }
    }
    Some(value.to_owned())
}

/// `${x/P/R}` (the first match), `${x//P/R}` (every one), `${x/#P/R}` (at the start),
/// `${x/%P/R}` (at the end); `rest` is the text after the first `/`. Literal patterns only.
fn replaced(value: &str, rest: &str) -> Option<String> {
    let (mode, rest) = match rest.as_bytes().first() {
        Some(b'/') => ('a', &rest[1..]),
        Some(b'#') => ('s', &rest[1..]),
        Some(b'%') => ('e', &rest[1..]),
        _ => ('f', rest),
    };
    let (from, to) = rest.split_once('/').unwrap_or((rest, ""));
    if from.is_empty() || !literal(from) || !literal(to) {
        return None;
    }
    Some(match mode {
        'a' => value.replace(from, to),
        's' => match value.strip_prefix(from) {
            Some(tail) => format!("{to}{tail}"),
            None => value.to_owned(),
        },
        'e' => match value.strip_suffix(from) {
            Some(head) => format!("{head}{to}"),
            None => value.to_owned(),
        },
        _ => value.replacen(from, to, 1),
    })
}

/// Whether `text` matches the whole of `pattern` (`*` any run of bytes, `?` one byte).
fn matches(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((star_p, star_t)) => {
                    p = star_p + 1;
                    t = star_t + 1;
                    star = Some((star_p, star_t + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(value: &str, op: &str) -> Option<String> {
        apply(value, Operation::After(op))
    }

    #[test]
    fn the_plain_forms_are_done_as_written() {
        assert_eq!(op("file.tar.gz", "%.gz").as_deref(), Some("file.tar"));
        assert_eq!(op("file.tar.gz", "%.*").as_deref(), Some("file.tar"));
        assert_eq!(op("file.tar.gz", "%%.*").as_deref(), Some("file"));
        assert_eq!(op("src/a/b.rs", "#*/").as_deref(), Some("a/b.rs"));
        assert_eq!(op("src/a/b.rs", "##*/").as_deref(), Some("b.rs"));
        assert_eq!(op("a-b-c", "/-/_").as_deref(), Some("a_b-c"));
        assert_eq!(op("a-b-c", "//-/_").as_deref(), Some("a_b_c"));
        assert_eq!(op("a-b-c", "//-").as_deref(), Some("abc"));
        assert_eq!(op("abc", "/#a/x").as_deref(), Some("xbc"));
        assert_eq!(op("abc", "/%c/x").as_deref(), Some("abx"));
        assert_eq!(op("abcdef", ":2").as_deref(), Some("cdef"));
        assert_eq!(op("abcdef", ":2:3").as_deref(), Some("cde"));
        assert_eq!(op("abc", ":9").as_deref(), Some(""));
        assert_eq!(op("abc", "^^").as_deref(), Some("ABC"));
        assert_eq!(op("abc", "^").as_deref(), Some("Abc"));
        assert_eq!(op("ABC", ",,").as_deref(), Some("abc"));
        assert_eq!(op("", ":-dflt").as_deref(), Some("dflt"));
        assert_eq!(op("x", ":-dflt").as_deref(), Some("x"));
        assert_eq!(op("x", ":+alt").as_deref(), Some("alt"));
        assert_eq!(op("", ":+alt").as_deref(), Some(""));
        assert_eq!(apply("hello", Operation::Length).as_deref(), Some("5"));
    }

    #[test]
    fn forms_it_does_not_follow_are_left_to_a_shell() {
        for (value, form) in [
            ("abc", ":1:-1"),
            ("abc", ": -1"),
            ("abc", ":010"),
            ("abc", ":x"),
            ("abc", "@Q"),
            ("abc", "~~"),
            ("abc", "=x"),
            ("abc", ":=x"),
            ("abc", ":?x"),
            ("abc", "-x"),
            ("abc", "+x"),
            ("abc", "%[ab]"),
            ("abc", "/a*/x"),
            ("abc", "/a/&"),
            ("abc", "/"),
            ("abc", ":-a*"),
            ("abc", ":-~"),
            ("abc", "%b c"),
            ("abc", "%'b'"),
            ("é", "^^"),
            ("abc", "%$x"),
            ("abc", "[0]"),
        ] {
            assert_eq!(op(value, form), None, "${{x{form}}} of {value:?}");
        }
        assert_eq!(apply("é", Operation::Length), None);
    }

    #[test]
    fn posix_operations_are_told_from_bash_ones() {
        for op in ["%.txt", "%%.*", "#*/", "##*/", ":-x", ":+y"] {
            assert!(is_posix(Operation::After(op)), "{op}");
        }
        for op in ["/a/b", "//a/b", "^^", ",,", ":1:2", ":2"] {
            assert!(!is_posix(Operation::After(op)), "{op}");
        }
        assert!(is_posix(Operation::Length) && is_posix(Operation::Plain));
    }

    /// Every form against bash itself, where bash is installed.
    #[test]
    fn bash_agrees() {
        let Ok(bash) = which_bash() else {
            eprintln!("skipped: no bash to compare with");
            return;
        };
        let values = [
            "",
            "a",
            "file.tar.gz",
            "src/a/b.rs",
            "a-b-c",
            "-rf",
            "aaa",
            "x.y/z",
            "a b.c",
        ];
        let forms = [
            "%.gz", "%.*", "%%.*", "#*/", "##*/", "%*", "%%*", "#*", "##*", "#?", "%?", "%a",
            "%%a*", "#a", "##a*", "#-", "/-/_", "//-/_", "//-", "/a/b", "//a/b", "/#a/x", "/%a/x",
            "/#-/", "/%z/", ":0", ":1", ":2:3", ":9", ":0:0", "^^", "^", ",,", ",", ":-dflt",
            ":+alt", "#*.", "%/*", "%%/*", "#*-", "##*-", "%.*.*", "##?",
        ];
        let mut script = String::new();
        let mut expected = Vec::new();
        for value in values {
            for form in forms {
                let Some(ours) = op(value, form) else {
                    panic!("${{x{form}}} of {value:?} is not followed");
                };
                script.push_str(&format!("x='{value}'; printf '%s\\n' \"${{x{form}}}\"\n"));
                expected.push(ours);
            }
            script.push_str(&format!("x='{value}'; printf '%s\\n' \"${{#x}}\"\n"));
            expected.push(apply(value, Operation::Length).expect("length"));
        }
        let output = std::process::Command::new(bash)
            .args(["--norc", "--noprofile", "-c", &script])
            .env("LC_ALL", "C")
            .output()
            .expect("bash runs");
        let printed = String::from_utf8(output.stdout).expect("utf-8");
        let lines: Vec<&str> = printed.split('\n').collect();
        assert_eq!(lines.len(), expected.len() + 1, "{printed}");
        for (index, ours) in expected.iter().enumerate() {
            assert_eq!(
                lines[index],
                ours,
                "line {index} of the script:\n{}",
                script.lines().nth(index).unwrap_or("")
            );
        }
    }

    fn which_bash() -> Result<&'static str, ()> {
        ["/bin/bash", "/usr/bin/bash"]
            .into_iter()
            .find(|path| std::path::Path::new(path).exists())
            .ok_or(())
    }
}
