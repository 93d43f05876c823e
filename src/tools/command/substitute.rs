//! Command substitutions (`$(...)`, backquotes) on a line run without a click.
//!
//! A shell runs a substitution's script, then puts its output in the line where the
//! substitution was. Riskgate cannot judge the outer command before the script has run:
//! `cat $(find . -name '*.md')` reads whatever `find` prints. So a line of substitutions is
//! judged twice:
//!
//! - before it runs, each substitution's script must be safe on its own, and so must the
//!   line with each substitution replaced by a [`PLACEHOLDER`] word (`cat substituted`);
//! - when it runs, the scripts run first (read-only, in the same walls), their output is
//!   put in the line as the shell would put it — split into words where the substitution
//!   is unquoted, each word quoted so that only its glob characters stay active (the shell
//!   expands those too), or as the text of the double-quoted string it stands in, or as one
//!   word of literal text where it is the value of an assignment (`n=$(wc -l < f)`) — and that
//!   line, now without substitutions, is judged again from scratch. Only a safe reading of
//!   it runs; any other is refused, the line it became shown whole, so that a person can be
//!   asked for exactly that.
//!
//! The scripts run before the rest of the line, so a line where the directory changes
//! (`cd`) is left to a shell; every command of a line run without a click only reads, so
//! the order of the others does not change what they see. Where the substitutions are is
//! found by [`scan`], a scanner of the shell's quoting; a line it cannot be sure of (a
//! here-document, backslashes inside backquotes) is left to a shell, and what it finds must
//! be exactly the scripts the parser found at the line's own level.

use super::reads::{self, ReadMode};

/// What stands for a substitution's output when the line is judged before it runs.
pub(super) const PLACEHOLDER: &str = "substituted";

/// Most bytes the substitutions of one line may put into it.
pub const MAX_SUBSTITUTED_BYTES: usize = 128 * 1024;
/// Most scripts one line runs first, its substitutions' own substitutions counted: each
/// is a run of its own, and a line written out from a loop may hold many.
pub const MAX_SCRIPTS: usize = 8;

/// One command substitution at the line's own level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where it is in the line: from its `$(` or backquote to just after its end.
    pub start: usize,
    pub end: usize,
    /// The script it runs.
    pub script: String,
    /// Whether it stands inside a double-quoted string (its output is not split into words).
    pub quoted: bool,
    /// Whether it is the value of an assignment where a command starts (`n=$(wc -l < f)`),
    /// which the shell does not split into words either.
    pub assigned: bool,
    /// Set for the input of a `while read` loop rewritten as a `for` loop over it: its
    /// output is put in as `read` takes it apart, one quoted word a line ([`reads`]).
    pub lines: Option<ReadMode>,
}

/// A line whose substitutions run first; see the module's documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Substituting {
    pub line: String,
    pub found: Vec<Found>,
    /// The scripts it runs in all, its substitutions' own substitutions counted.
    pub scripts: usize,
}

/// Why a substitution's output cannot be put into the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    #[error("the output of `{0}` is not text")]
    NotText(String),
    #[error(
        "a line the input of `{0}` gives holds a backslash, which `read` without -r takes apart as riskgate does not; write `read -r` if the backslashes are part of the data"
    )]
    Unread(String),
    #[error(
        "the output of the line's substitutions is longer than {MAX_SUBSTITUTED_BYTES} bytes, more than riskgate puts into one line"
    )]
    TooLong,
}

impl Substituting {
    /// The line with each substitution replaced by its script's output (`outputs`, in
    /// order), as the shell would put it there.
    pub fn splice(&self, outputs: &[Vec<u8>]) -> Result<String, SpliceError> {
        let mut line = String::with_capacity(self.line.len());
        let mut from = 0;
        let mut added = 0;
        for (found, output) in self.found.iter().zip(outputs) {
            let text: String = std::str::from_utf8(output)
                .map_err(|_| SpliceError::NotText(found.script.clone()))?
                .chars()
                .filter(|&c| c != '\0')
                .collect();
            let rendered = match found.lines {
                Some(mode) => reads::as_words(&text, mode)
                    .ok_or_else(|| SpliceError::Unread(found.script.clone()))?,
                None if found.quoted => in_double_quotes(text.trim_end_matches('\n')),
                None if found.assigned => single_quoted(text.trim_end_matches('\n')),
                None => as_words(text.trim_end_matches('\n')),
            };
            added += rendered.len();
            if added > MAX_SUBSTITUTED_BYTES {
                return Err(SpliceError::TooLong);
            }
            line.push_str(&self.line[from..found.start]);
            line.push_str(&rendered);
            from = found.end;
        }
        line.push_str(&self.line[from..]);
        Ok(line)
    }

    /// The line as judged before it runs: each substitution is one [`PLACEHOLDER`] word.
    pub(super) fn placeholder_line(&self) -> String {
        self.written_as(PLACEHOLDER)
    }

    /// The line with each of its substitutions written as `text`.
    pub(super) fn written_as(&self, text: &str) -> String {
        let mut line = String::with_capacity(self.line.len());
        let mut from = 0;
        for found in &self.found {
            line.push_str(&self.line[from..found.start]);
            line.push_str(text);
            from = found.end;
        }
        line.push_str(&self.line[from..]);
        line
    }
}

/// `text` as one word of literal text: in single quotes, each of its own written `"'"`
/// between them (`it's` is `'it'"'"'s'`), so that no backslash is needed.
pub(super) fn single_quoted(text: &str) -> String {
    let parts: Vec<String> = text.split('\'').map(|part| format!("'{part}'")).collect();
    parts.join("\"'\"")
}

/// Whether a word after `before` starts a command: nothing but blanks since the line's start
/// or an operator (`;`, `&&`, `|`, `(`, a newline).
fn starts_command(before: &[u8]) -> bool {
    let before = before.trim_ascii_end();
    before.is_empty() || matches!(before.last(), Some(b';' | b'&' | b'|' | b'(' | b'\n'))
}

/// Whether a word after `before` is the first word after an `export` that starts a
/// command: bash reads it as an assignment (a declaration's words are not split).
fn exported(before: &[u8]) -> bool {
    before.last().is_some_and(u8::is_ascii_whitespace)
        && before
            .trim_ascii_end()
            .strip_suffix(b"export")
            .is_some_and(starts_command)
}

/// Whether a word so far is `NAME=` or `NAME+=`: the shell does not split a substitution in
/// an assignment into words; one where a command starts is put in as one word, and any other
/// (`export X=$(cmd)`) is left to a shell.
fn is_assignment(word: &[u8]) -> bool {
    let Some(equals) = word.iter().position(|&c| c == b'=') else {
        return false;
    };
    let name = word[..equals].strip_suffix(b"+").unwrap_or(&word[..equals]);
    name.first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Words the shell reads as its own at the start of a command, which an output word must
/// not become.
const RESERVED: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while",
];

/// An unquoted substitution's output as the shell splits it (on spaces, tabs and
/// newlines), each word written so that the shell reads it back as the same word with only
/// its glob characters (`*`, `?`, `[`, `]`) active: the shell expands those in a
/// substitution's words too, and riskgate's own expansion does so inside the workspace.
pub(super) fn as_words(text: &str) -> String {
    let mut words = Vec::new();
    for word in text.split([' ', '\t', '\n']).filter(|w| !w.is_empty()) {
        let mut written = String::with_capacity(word.len() + 4);
        let reserved = RESERVED.contains(&word);
        for (at, c) in word.chars().enumerate() {
            // A reserved word's first character is quoted, whatever it is.
            let plain = !(reserved && at == 0)
                && (c.is_ascii_alphanumeric()
                    || !c.is_ascii()
                    || matches!(c, '_' | '.' | '/' | ',' | ':' | '+' | '@' | '%' | '^' | '-')
                    || matches!(c, '*' | '?' | '[' | ']'));
            if !plain {
                written.push('\\');
            }
            written.push(c);
        }
        words.push(written);
    }
    // A blank at either end parts the words from the text beside them (`a$(echo ' b')` is
    // the two words `a` and `b`), as the shell's splitting does.
    let blank = |c: char| matches!(c, ' ' | '\t' | '\n');
    let before = if text.starts_with(blank) { " " } else { "" };
    let after = if text.ends_with(blank) { " " } else { "" };
    match words.is_empty() {
        true if !text.is_empty() => " ".to_owned(),
        true => String::new(),
        false => format!("{before}{}{after}", words.join(" ")),
    }
}

/// A double-quoted substitution's output as the text of the string it stands in.
pub(super) fn in_double_quotes(text: &str) -> String {
    let mut written = String::with_capacity(text.len() + 4);
    for c in text.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            written.push('\\');
        }
        written.push(c);
    }
    written
}

/// The command substitutions at `line`'s own level, in order; `None` where the line holds
/// what this scanner does not follow (a here-document, a backslash inside backquotes, an
/// unclosed quote or substitution).
pub fn scan(line: &str) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    let end = Scanner {
        text: line.as_bytes(),
        line,
    }
    .words(0, Some(&mut found), false)?;
    (end == line.len()).then_some(found)
}

struct Scanner<'a> {
    text: &'a [u8],
    line: &'a str,
}

impl Scanner<'_> {
    /// Scans unquoted text from `at`; with `nested`, a script inside `$( )`, up to the `)`
    /// that closes it (its index is returned). Substitutions are recorded in `found` when
    /// given (the line's own level).
    fn words(
        &self,
        mut at: usize,
        mut found: Option<&mut Vec<Found>>,
        nested: bool,
    ) -> Option<usize> {
        let text = self.text;
        let mut depth = 0usize;
        let mut word_start = true;
        let mut word_begin = 0;
        let mut braces = false;
        while at < text.len() {
            let c = text[at];
            if word_start {
                word_begin = at;
            }
            match c {
                b'\\' => at += 2,
                b'\'' => at = self.single_quoted(at + 1)?,
                b'"' => at = self.double_quoted(at + 1, found.as_deref_mut())?,
                b'#' if word_start => {
                    at = text[at..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(text.len(), |p| at + p);
                    continue;
                }
                b'$' | b'`' => {
                    // In an assignment the shell does not split the output into words: one
                    // where a command starts is put in whole; elsewhere (`echo a=$(cmd)`, an
                    // argument split as any) or after `export` it is left to a shell.
                    let substitutes = c == b'`' || text[at..].starts_with(b"$(");
                    let assigned = substitutes && is_assignment(&text[word_begin..at]);
                    let declared =
                        starts_command(&text[..word_begin]) || exported(&text[..word_begin]);
                    if found.is_some() && assigned && !declared {
                        return None;
                    }
                    let before = found.as_ref().map_or(0, |found| found.len());
                    at = match c {
                        b'$' => self.dollar(at, found.as_deref_mut(), false)?,
                        _ => self.backquoted(at, found.as_deref_mut(), false)?,
                    };
                    if assigned
                        && let Some(found) = found.as_deref_mut()
                        && found.len() > before
                    {
                        found.last_mut()?.assigned = true;
                    }
                }
                b'<' if text[at..].starts_with(b"<<<") => at += 3,
                b'<' if text[at..].starts_with(b"<<") => return None,
                b'{' => {
                    let group = text[at..].iter().position(|&c| c == b'}');
                    braces |= group.is_some_and(|close| {
                        let inside = &text[at..at + close];
                        inside.contains(&b',') || inside.windows(2).any(|pair| pair == b"..")
                    });
                    at += 1;
                }
                b'(' => {
                    depth += 1;
                    at += 1;
                }
                b')' if nested && depth == 0 => return Some(at),
                b')' => {
                    depth = depth.saturating_sub(1);
                    at += 1;
                }
                _ => at += 1,
            }
            word_start = matches!(
                c,
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
            );
        }
        // The shell expands braces before substitutions: `{a,b}$(date)` runs `date` twice
        // and puts all of its words after each.
        if braces && found.is_some_and(|found| !found.is_empty()) {
            return None;
        }
        if nested { None } else { Some(text.len()) }
    }

    fn single_quoted(&self, from: usize) -> Option<usize> {
        let close = self.text[from..].iter().position(|&c| c == b'\'')?;
        Some(from + close + 1)
    }

    /// `$'...'`, whose backslashes escape the quote.
    fn ansi_c_quoted(&self, mut at: usize) -> Option<usize> {
        while at < self.text.len() {
            match self.text[at] {
                b'\\' => at += 2,
                b'\'' => return Some(at + 1),
                _ => at += 1,
            }
        }
        None
    }

    fn double_quoted(&self, mut at: usize, mut found: Option<&mut Vec<Found>>) -> Option<usize> {
        while at < self.text.len() {
            match self.text[at] {
                b'\\' => at += 2,
                b'"' => return Some(at + 1),
                b'$' => at = self.dollar(at, found.as_deref_mut(), true)?,
                b'`' => at = self.backquoted(at, found.as_deref_mut(), true)?,
                _ => at += 1,
            }
        }
        None
    }

    /// What starts with `$` at `at`: a substitution, an arithmetic or parameter expansion,
    /// ANSI-C quoting, or a plain `$`.
    fn dollar(&self, at: usize, found: Option<&mut Vec<Found>>, quoted: bool) -> Option<usize> {
        let rest = &self.text[at..];
        if rest.starts_with(b"$((") {
            return self.balanced(at + 1, b'(', b')');
        }
        if rest.starts_with(b"${") {
            return self.balanced(at + 1, b'{', b'}');
        }
        if rest.starts_with(b"$'") && !quoted {
            return self.ansi_c_quoted(at + 2);
        }
        if !rest.starts_with(b"$(") {
            return Some(at + 1);
        }
        let close = self.words(at + 2, None, true)?;
        if let Some(found) = found {
            found.push(Found {
                start: at,
                end: close + 1,
                script: self.line.get(at + 2..close)?.to_owned(),
                quoted,
                assigned: false,
                lines: None,
            });
        }
        Some(close + 1)
    }

    /// An arithmetic or parameter expansion, to its closing bracket; one holding a
    /// substitution or a quote is not followed.
    fn balanced(&self, from: usize, open: u8, close: u8) -> Option<usize> {
        let mut depth = 0usize;
        for (offset, &c) in self.text[from..].iter().enumerate() {
            match c {
                b'`' | b'\'' | b'"' | b'\\' => return None,
                b'$' if self.text.get(from + offset + 1) == Some(&b'(')
                    && self.text.get(from + offset + 2) != Some(&b'(') =>
                {
                    return None;
                }
                c if c == open => depth += 1,
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(from + offset + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn backquoted(&self, at: usize, found: Option<&mut Vec<Found>>, quoted: bool) -> Option<usize> {
        let from = at + 1;
        let close = from + self.text[from..].iter().position(|&c| c == b'`')?;
        if self.text[from..close].contains(&b'\\') {
            return None;
        }
        if let Some(found) = found {
            found.push(Found {
                start: at,
                end: close + 1,
                script: self.line.get(from..close)?.to_owned(),
                quoted,
                assigned: false,
                lines: None,
            });
        }
        Some(close + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripts(line: &str) -> Option<Vec<(String, bool)>> {
        scan(line).map(|found| {
            found
                .into_iter()
                .map(|f| {
                    assert_eq!(
                        &line[f.start..f.end],
                        if line[f.start..].starts_with('`') {
                            format!("`{}`", f.script)
                        } else {
                            format!("$({})", f.script)
                        }
                    );
                    (f.script, f.quoted)
                })
                .collect()
        })
    }

    fn owned(pairs: &[(&str, bool)]) -> Option<Vec<(String, bool)>> {
        Some(pairs.iter().map(|(s, q)| ((*s).to_owned(), *q)).collect())
    }

    #[test]
    fn substitutions_are_found_where_the_shell_runs_them() {
        assert_eq!(scripts("echo $(date)"), owned(&[("date", false)]));
        assert_eq!(
            scripts("echo \"Today is $(date +%F)\" `whoami`"),
            owned(&[("date +%F", true), ("whoami", false)])
        );
        assert_eq!(
            scripts("wc -l $(find . -name '*.py' | grep -v \"$(echo x)\")"),
            owned(&[("find . -name '*.py' | grep -v \"$(echo x)\"", false)])
        );
        assert_eq!(
            scripts("echo $( (ls) | wc -l )"),
            owned(&[(" (ls) | wc -l ", false)])
        );
        // Not substitutions: quoted, escaped, commented, arithmetic, parameters.
        assert_eq!(
            scripts("echo '$(date)' \\$(date) $((1+2)) ${x}"),
            owned(&[])
        );
        assert_eq!(scripts("echo hi # $(date)"), owned(&[]));
        assert_eq!(scripts("echo $'it\\'s' $(pwd)"), owned(&[("pwd", false)]));
        assert_eq!(scripts("cat <<< $(date)"), owned(&[("date", false)]));
        // What the scanner does not follow.
        assert_eq!(scripts("cat <<EOF\n$(date)\nEOF"), None);
        assert_eq!(scripts("echo `echo \\`date\\``"), None);
        assert_eq!(scripts("echo $(date"), None);
        assert_eq!(scripts("echo \"$(date)"), None);
        assert_eq!(scripts("echo ${x:-$(date)}"), None);
        assert_eq!(scripts("echo {a,b}$(date)"), None);
        assert_eq!(scripts("echo {1..3} $(date)"), None);
        // An assignment's, where a command starts, is found (put in whole); one after
        // `export`, or an argument shaped like one, is left to a shell.
        assert_eq!(scripts("X+=$(date) env"), owned(&[("date", false)]));
        assert_eq!(scripts("ls && n=`date`; x"), owned(&[("date", false)]));
        assert_eq!(scripts("export X=$(date)"), owned(&[("date", false)]));
        assert_eq!(scripts("ls; export  X=`date`"), owned(&[("date", false)]));
        assert_eq!(scripts("export A=1 X=$(date)"), None);
        assert_eq!(scripts("myexport X=$(date)"), None);
        assert_eq!(scripts("echo export X=$(date)"), None);
        assert_eq!(scripts("echo a=$(date)"), None);
        assert_eq!(
            scripts("echo {} $(date) x=\"$(pwd)\""),
            owned(&[("date", false), ("pwd", true)])
        );
    }

    fn splice(line: &str, outputs: &[&str]) -> Result<String, SpliceError> {
        let found = scan(line).expect("scans");
        let outputs: Vec<Vec<u8>> = outputs.iter().map(|o| o.as_bytes().to_vec()).collect();
        Substituting {
            line: line.to_owned(),
            found,
            scripts: 1,
        }
        .splice(&outputs)
    }

    #[test]
    fn output_is_put_in_as_the_shell_would() {
        assert_eq!(
            splice("wc -l $(find .)", &["a.py\nb c.py\n\n"]).unwrap(),
            "wc -l a.py b c.py"
        );
        assert_eq!(
            splice("echo \"now: $(date)\"", &["it's $5 \"x\" `y` \\\n\n"]).unwrap(),
            "echo \"now: it's \\$5 \\\"x\\\" \\`y\\` \\\\\""
        );
        assert_eq!(splice("ls $(x) -l", &[""]).unwrap(), "ls  -l");
        // An assignment's value is one word, whatever it holds.
        assert_eq!(
            splice("n=$(x); echo $n", &["a  b*\n$c\\\n\n"]).unwrap(),
            "n='a  b*\n$c\\'; echo $n"
        );
        assert_eq!(
            splice("n=pre`x`; echo $n", &["it's"]).unwrap(),
            "n=pre'it'\"'\"'s'; echo $n"
        );
        assert_eq!(splice("ls \"$(x)\"", &["\n"]).unwrap(), "ls \"\"");
        // Globs stay active; what the shell does not expand in output is quoted.
        assert_eq!(
            splice("ls $(x)", &["*.md ~/a $HOME a;rm b|c {a,b} x=1 #c"]).unwrap(),
            "ls *.md \\~/a \\$HOME a\\;rm b\\|c \\{a,b\\} x\\=1 \\#c"
        );
        assert_eq!(splice("$(x) y", &["if then"]).unwrap(), "\\if \\then y");
        assert_eq!(splice("$(x) y", &["[[ } {"]).unwrap(), "\\[[ \\} \\{ y");
        assert_eq!(
            splice("ls $(x)", &["\u{0}a\u{0}b"]).unwrap(),
            "ls ab",
            "NUL bytes are dropped, as bash does"
        );
        assert!(matches!(splice("ls $(x)", &["\u{0}"]).map(|_| ()), Ok(())));
        let outputs = [vec![0xffu8]];
        let found = scan("ls $(x)").unwrap();
        let line = Substituting {
            line: "ls $(x)".into(),
            found,
            scripts: 1,
        };
        assert_eq!(line.splice(&outputs), Err(SpliceError::NotText("x".into())));
        let long = "a ".repeat(MAX_SUBSTITUTED_BYTES);
        assert_eq!(splice("ls $(x)", &[&long]), Err(SpliceError::TooLong));
    }

    #[test]
    fn the_placeholder_line_stands_one_word_for_each() {
        let line = "cat $(ls) \"a $(b) c\"";
        let substituting = Substituting {
            line: line.into(),
            found: scan(line).unwrap(),
            scripts: 2,
        };
        assert_eq!(
            substituting.placeholder_line(),
            "cat substituted \"a substituted c\""
        );
    }
}
