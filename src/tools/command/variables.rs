//! The line's own variables, put in as their values, so that the line the shell would run
//! is the line judged.
//!
//! A line starts in a new shell whose variables are known: the machine's (`PATH`, `LANG`,
//! and `PWD`, the workspace), the rest of its environment (the line's private `HOME` and
//! `TMPDIR`, the operator's `command.env_allow`), and the shell's own, every one of which
//! is named in capitals. So a name with a small letter that the environment does not hold
//! is unset when the line starts, and `$name` is empty, as in any new shell. And a line
//! that begins by setting such names (`name=world; echo "hello $name"`, `dir=src && ls
//! $dir`) gives each the value written, once, before anything else runs.
//!
//! [`put_in`] takes those leading assignments away and writes every `$name` and `${name}`
//! as its value ([`loops::with_value`](super::loops), as a substitution's output is
//! written: split and with its globs active where unquoted, whole inside double quotes).
//! It follows only what it can be sure of: a value of plain text (no `$`, backquote,
//! backslash, `~` or parenthesis in it, no space at either end), a name that appears
//! nowhere else in the line but as `$name`, `${name}`, `${#name}` or `${name OP}` with an
//! operation [`parameter`](super::parameter) does as bash does (`${name%.txt}`; not set
//! again, read by `read`, counted in `$(( ))` or exported), and capitalised names only for
//! the machine's values and where the line sets them first (`FILES=$(ls); echo $FILES`)
//! with a name neither the shell nor the environment holds (not `IFS`, `PATH`, `LC_ALL`,
//! `BASH_ENV`, ...). A line is run with no positional parameters, so `$1` to `$9` are
//! empty too, where nothing in it sets them (`set --`, `shift`, `getopts`, a function).
//! Anything else leaves the line as it was, and it waits.

use super::loops::with_value;

/// The line with its leading assignments of the line's own names taken away and the
/// variables it expands put in: the machine's (`known`) as their values, its own as theirs,
/// and names it never sets that the environment (`environment`) does not hold as nothing.
/// Without `environment` (a substitution's script, whose names the line around it may
/// set), only the machine's. `None` where nothing was put in, or where the line uses a name
/// in a way this does not follow.
pub(super) fn put_in(
    line: &str,
    known: &[(String, String)],
    environment: Option<&[String]>,
) -> Option<String> {
    let own = |name: &str| environment.is_some_and(|held| is_own_name(name, held));
    let (assigned, body) = match environment {
        Some(_) => leading_assignments(line),
        None => (Vec::new(), line),
    };
    // A name in capitals is the line's own only where the line sets it first, and the shell
    // and the environment do not hold it (`FILES=$(ls); echo $FILES`): the shell sets some
    // itself, so one never set is not known to be empty.
    let line_owns = |name: &str| {
        own(name)
            || (is_name(name)
                && assigned.iter().any(|(set, _)| set == name)
                && environment.is_some_and(|held| !read_by_the_shell(name, held)))
    };
    let mut values: Vec<(String, String)> = Vec::new();
    for (name, value) in &assigned {
        if !line_owns(name)
            || values.iter().any(|(seen, _)| seen == name)
            || value.starts_with([' ', '\t', '\n'])
            || value.ends_with([' ', '\t', '\n'])
        {
            return None;
        }
        values.push((name.clone(), value.clone()));
    }
    for name in expanded_names(body) {
        if values.iter().any(|(seen, _)| *seen == name) {
            continue;
        }
        if let Some((_, value)) = known.iter().find(|(known, _)| *known == name) {
            values.push((name, value.clone()));
        } else if own(&name) {
            values.push((name, String::new()));
        }
    }
    // The positional parameters: a line is run with none, so `$1` is empty (as in `bash -c
    // LINE`), where nothing in the line sets them (`set --`, `shift`, a function's call).
    if environment.is_some() && !sets_parameters(body) {
        for digit in positional_parameters(body) {
            let name = char::from(digit).to_string();
            if !values.iter().any(|(seen, _)| *seen == name) {
                values.push((name, String::new()));
            }
        }
    }
    for (name, _) in &values {
        if line_owns(name) && named_otherwise(body, name) {
            return None;
        }
    }
    // A line of nothing but its own assignments (`x=5`, `n=$(date)` once its output is in)
    // leaves nothing behind: it does what `:` does.
    if body.trim().is_empty() {
        return (!assigned.is_empty()).then(|| ":".to_owned());
    }
    let mut written = body.to_owned();
    for (name, value) in &values {
        written = with_value(&written, name, value)?;
    }
    (written != line).then_some(written)
}

/// A name the line itself owns: one with a small letter (every variable the shell sets
/// itself, and every one riskgate gives a line, is named in capitals), that the line's
/// environment does not hold (`command.env_allow` may name `http_proxy`), and not `_`.
fn is_own_name(name: &str, environment: &[String]) -> bool {
    is_name(name)
        && name.bytes().any(|b| b.is_ascii_lowercase())
        && !environment.iter().any(|held| held == name)
}

/// Variables the shell itself reads or sets (its field separator, its search path, its
/// counters and facts), named in capitals; with `BASH_`, `COMP_`, `HIST`, `LC_` and
/// `READLINE_` names.
const SHELL_VARIABLES: &[&str] = &[
    "IFS",
    "PATH",
    "CDPATH",
    "GLOBIGNORE",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "OPTIND",
    "OPTARG",
    "OPTERR",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "PPID",
    "UID",
    "EUID",
    "GROUPS",
    "HOSTNAME",
    "HOSTTYPE",
    "MACHTYPE",
    "OSTYPE",
    "SHELL",
    "SHELLOPTS",
    "SHLVL",
    "TERM",
    "PWD",
    "OLDPWD",
    "DIRSTACK",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "ENV",
    "POSIXLY_CORRECT",
    "TZ",
    "TMOUT",
    "FUNCNEST",
    "HOME",
    "LANG",
    "LANGUAGE",
    "TMPDIR",
    "COLUMNS",
    "LINES",
    "MAIL",
    "MAILPATH",
    "PROMPT_COMMAND",
    "TIMEFORMAT",
    "FIGNORE",
    "EXECIGNORE",
    "INPUTRC",
    "PIPESTATUS",
    "FUNCNAME",
    "REPLY",
    "COPROC",
    "MAPFILE",
    "MAILCHECK",
    "PROMPT_DIRTRIM",
    "PS0",
    "CHILD_MAX",
    "EMACS",
    "HOSTFILE",
    "IGNOREEOF",
];

/// Whether setting `name` changes what the shell or the line's programs do: a variable of
/// the line's environment (exported, so its programs see it) or one the shell reads or
/// sets itself ([`SHELL_VARIABLES`]). A `for` loop over such a name is left to a shell.
pub(super) fn read_by_the_shell(name: &str, environment: &[String]) -> bool {
    const PREFIXES: &[&str] = &["BASH", "COMP_", "HIST", "LC_", "READLINE_"];
    environment.iter().any(|held| held == name)
        || SHELL_VARIABLES.contains(&name)
        || PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

/// Whether the line's environment holds a variable that makes a new shell run or read
/// something before or beside its script: a startup file (`BASH_ENV`, `ENV`), exported
/// functions (`BASH_FUNC_*`), options (`SHELLOPTS`, `BASHOPTS`), the trace prompt it
/// expands (`PS4`), how it splits words or finds directories (`IFS`, `CDPATH`,
/// `GLOBIGNORE`). None does unless the operator's `command.env_allow` passes one.
pub(super) fn shell_starts_otherwise(environment: &[String]) -> bool {
    const STARTUP: &[&str] = &[
        "ENV",
        "SHELLOPTS",
        "PS4",
        "IFS",
        "CDPATH",
        "GLOBIGNORE",
        "POSIXLY_CORRECT",
    ];
    environment
        .iter()
        .any(|name| name.starts_with("BASH") || STARTUP.contains(&name.as_str()))
}

/// The digits `1` to `9` the line expands as `$N`, `${N...}` or `${#N}`, once each, in order.
fn positional_parameters(line: &str) -> Vec<u8> {
    let mut found = Vec::new();
    for (at, _) in line.match_indices('$') {
        let rest = &line.as_bytes()[at + 1..];
        let digit = match rest {
            [b'{', b'#', digit, ..] | [b'{', digit, ..] | [digit, ..] => *digit,
            [] => continue,
        };
        if (b'1'..=b'9').contains(&digit) && !found.contains(&digit) {
            found.push(digit);
        }
    }
    found.sort_unstable();
    found
}

/// Whether the line may set its positional parameters: `set`, `shift`, `getopts`, or a
/// function (whose calls give it parameters of its own).
fn sets_parameters(line: &str) -> bool {
    line.contains("()")
        || line
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|word| matches!(word, "set" | "shift" | "getopts" | "function"))
}

fn is_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The assignments `name=value` the line starts with, each a command of its own followed by
/// `;`, `&&` or a new line, with the values the shell gives them (quotes removed); and the
/// rest of the line. An assignment this does not read (a value with an expansion, an
/// escape or a `~`, an array, or one that prefixes a command: `x=1 cmd`) ends them, and
/// stays in the rest.
fn leading_assignments(line: &str) -> (Vec<(String, String)>, &str) {
    let mut assigned = Vec::new();
    let mut rest = line;
    while let Some((name, value, after)) = one_assignment(rest) {
        assigned.push((name, value));
        rest = after;
    }
    (assigned, rest)
}

/// One leading `name=value` followed by its separator: the name, the value, and what
/// follows the separator.
fn one_assignment(text: &str) -> Option<(String, String, &str)> {
    let text = text.trim_start_matches([' ', '\t', '\n']);
    let name_len = text
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let name = &text[..name_len];
    if !is_name(name) || text.as_bytes().get(name_len) != Some(&b'=') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut at = name_len + 1;
    let mut value = String::new();
    while let Some(&b) = bytes.get(at) {
        match b {
            b'\'' => {
                let close = at + 1 + text[at + 1..].find('\'')?;
                value.push_str(&text[at + 1..close]);
                at = close + 1;
            }
            b'"' => {
                let close = at + 1 + text[at + 1..].find('"')?;
                let inner = &text[at + 1..close];
                if inner.contains(['$', '`', '\\']) {
                    return None;
                }
                value.push_str(inner);
                at = close + 1;
            }
            b' ' | b'\t' | b'\n' | b';' | b'&' => break,
            b'$' | b'`' | b'\\' | b'~' | b'(' | b')' | b'<' | b'>' | b'|' | b'#' => return None,
            _ => {
                let c = text[at..].chars().next()?;
                value.push(c);
                at += c.len_utf8();
            }
        }
    }
    let after = text[at..].trim_start_matches([' ', '\t']);
    let rest = if let Some(rest) = after.strip_prefix("&&") {
        rest
    } else if let Some(rest) = after.strip_prefix(';') {
        if rest.starts_with([';', '&']) {
            return None;
        }
        rest
    } else if let Some(rest) = after.strip_prefix('\n') {
        rest
    } else if after.is_empty() {
        after
    } else {
        return None;
    };
    Some((name.to_owned(), value, rest))
}

/// Every name the line writes as `$name`, `${name}`, `${name OP}` or `${#name}`, once each.
fn expanded_names(line: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (at, _) in line.match_indices('$') {
        let rest = &line[at + 1..];
        let rest = match rest.strip_prefix('{') {
            // `${#name}`, its length.
            Some(braced) => braced.strip_prefix('#').unwrap_or(braced),
            None => rest,
        };
        let len = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = &rest[..len];
        if is_name(name) && !names.iter().any(|seen| seen == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// Whether `name` stands in the line anywhere but right after `$`, `${` or `${#`: where it
/// may be set (`name=`, `read name`, `for name`), counted (`$((name + 1))`) or used
/// otherwise (`$#name` is `$#` and a word). Right after a `-` it is
/// an option's name (`head -n $n`), unless the line has a place where the shell counts
/// (`$(( ))`, `(( ))`, `$[ ]`, `let`, `[[ ]]`, a declaration), where `-n` may be a negation.
fn named_otherwise(line: &str, name: &str) -> bool {
    const COUNTING: &[&str] = &["((", "$[", "let", "[[", "declare", "typeset", "local"];
    let counts = COUNTING.iter().any(|marker| line.contains(marker));
    let bytes = line.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut at = 0;
    while at < bytes.len() {
        if !word(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && word(bytes[at]) {
            at += 1;
        }
        if &line[start..at] != name {
            continue;
        }
        let before = &line[..start];
        let option = before.ends_with('-') && !counts;
        if !(before.ends_with('$') || before.ends_with("${") || before.ends_with("${#") || option) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(line: &str) -> Option<String> {
        let known = [("PATH".to_owned(), "/usr/bin:/bin".to_owned())];
        put_in(line, &known, Some(&["http_proxy".to_owned()]))
    }

    #[test]
    fn leading_assignments_are_taken_away_and_put_in() {
        assert_eq!(put("x=5; echo $x").as_deref(), Some(" echo 5"));
        assert_eq!(
            put("name=world; echo \"hello $name\"").as_deref(),
            Some(" echo \"hello world\"")
        );
        assert_eq!(
            put("dir='my docs' && ls $dir \"${dir}\"").as_deref(),
            Some(" ls my docs \"my docs\"")
        );
        assert_eq!(
            put("a=1\nb=\"two\"\necho $a $b $PATH").as_deref(),
            Some("echo 1 two /usr/bin:/bin")
        );
        assert_eq!(put("pat=*.txt; ls $pat").as_deref(), Some(" ls *.txt"));
        // An option of the same name is not the variable.
        assert_eq!(
            put("n=3; head -n $n a.txt").as_deref(),
            Some(" head -n 3 a.txt")
        );
    }

    #[test]
    fn names_the_line_never_sets_are_empty() {
        assert_eq!(put("ls $dir").as_deref(), Some("ls "));
        assert_eq!(
            put("echo \"[$dir]\" a${dir}b").as_deref(),
            Some("echo \"[]\" ab")
        );
        assert_eq!(put("echo '$dir'"), None);
        // Capitalised names and the environment's are not the line's own.
        assert_eq!(put("echo $HOME"), None);
        assert_eq!(put("echo $http_proxy"), None);
        assert_eq!(put("echo $_"), None);
        // In a substitution's script, the line around it may set any name.
        let known = [("PATH".to_owned(), "/bin".to_owned())];
        assert_eq!(put_in("echo $i", &known, None), None);
        assert_eq!(put_in("x=1; echo $x", &known, None), None);
        // A name of the line around it stays, so the script waits.
        assert_eq!(
            put_in("echo $i $PATH", &known, None).as_deref(),
            Some("echo $i /bin")
        );
        assert_eq!(
            put_in("echo $PATH", &known, None).as_deref(),
            Some("echo /bin")
        );
    }

    #[test]
    fn operations_on_values_the_line_is_sure_of_are_done() {
        assert_eq!(
            put("f=notes.txt; cp -- \"$f\" \"${f%.txt}.md\"").as_deref(),
            Some(" cp -- \"notes.txt\" \"notes.md\"")
        );
        assert_eq!(
            put("p=src/a/b.rs; echo ${p##*/} ${#p} ${p^^}").as_deref(),
            Some(" echo b.rs 10 SRC/A/B.RS")
        );
        assert_eq!(
            put("echo ${#x} ${x:-none} [${x%a}]").as_deref(),
            Some("echo 0 none []")
        );
    }

    #[test]
    fn a_line_has_no_positional_parameters() {
        assert_eq!(put("find $1 -name x").as_deref(), Some("find  -name x"));
        assert_eq!(
            put("find ${1:-.} -name \"$2\"").as_deref(),
            Some("find . -name \"\"")
        );
        assert_eq!(put("echo ${#1}").as_deref(), Some("echo 0"));
        for line in [
            "set -- a b; echo $1",
            "shift; echo $1",
            "f() { echo $1; }; f x",
            "function f { echo $1; }",
            "getopts ab o; echo $1",
        ] {
            assert_eq!(put(line), None, "{line}");
        }
        // Without the line's environment (a substitution's script), nothing is known.
        assert_eq!(put_in("echo $1", &[], None), None);
    }

    #[test]
    fn names_the_shell_reads_are_known() {
        let environment = ["http_proxy".to_owned(), "MY_SETTING".to_owned()];
        for name in [
            "PATH",
            "IFS",
            "LC_ALL",
            "BASH_ENV",
            "HISTFILE",
            "http_proxy",
            "MY_SETTING",
        ] {
            assert!(read_by_the_shell(name, &environment), "{name}");
        }
        for name in ["f", "FILE", "i", "Dir", "path"] {
            assert!(!read_by_the_shell(name, &environment), "{name}");
        }
    }

    #[test]
    fn forms_this_does_not_follow_leave_the_line_as_it_was() {
        for line in [
            "x=5 echo $x",
            "x=5 || echo $x",
            "x=5 | cat $x",
            "x=5 & echo $x",
            "x=5; x=6; echo $x",
            "x=5; echo $x; x=6",
            "echo $x; x=6",
            "x=$(date); echo $x",
            "x=`date`; echo $x",
            "x=~/a; echo $x",
            "x=\"$y\"; echo $x",
            "x=(a b); echo $x",
            "x=a\\ b; echo $x",
            "x=' a'; echo pre$x",
            "PATH=/tmp; echo $PATH",
            "http_proxy=x; echo $http_proxy",
            "read x; echo $x",
            "for f in a b; do echo $f; done",
            "echo ${x@Q}",
            "echo ${x:=a} $x",
            "x=a.b; echo ${x%[.]b}",
            "echo $((x + 1)) $x",
            "echo $((-x)) $x",
            "let -x; echo $x",
            "[[ -x -eq 1 ]] && echo $x",
            "printf -v x hi; echo $x",
            "export x=5; echo $x",
            "x=5 ls",
            "ls; x=5",
        ] {
            assert_eq!(put(line), None, "{line}");
        }
        // A line of nothing but its own assignments does what `:` does.
        for line in ["x=5", "x=5;", "a=1 && b='two words'\n"] {
            assert_eq!(put(line).as_deref(), Some(":"), "{line}");
        }
    }
}
