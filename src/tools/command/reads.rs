//! `while read` loops on a line run without a click: `PRODUCER | while read -r NAME; do
//! BODY; done`, and `while read NAME; do BODY; done < FILE` (or `< <(PRODUCER)`).
//!
//! Such a loop runs its body once for each line its input gives, with `NAME` set to that
//! line. Riskgate reads it as what it is, a loop over words only known when the line runs:
//! the loop is rewritten as `for NAME in $(PRODUCER); do BODY; done` (for a file, the
//! producer is `cat < FILE`; for `< <(PRODUCER)`, what the process substitution runs), whose substitution is marked to be put in as `read` would
//! take its output apart — one word a line, each kept whole, as a quoted word — instead of
//! split at blanks. That line goes the way of every line of substitutions
//! ([`substitute`](super::substitute)): the producer must be safe alone and so must the loop
//! with a placeholder word; when the line runs, the producer runs first, in the same walls,
//! and the loop with its lines put in is written out once for each of them
//! ([`loops`](super::loops)) and judged again from scratch.
//!
//! What `read` does with a line is followed exactly for the forms taken: lines end at a
//! newline, and a last line without one is not read (the loop ends there, as in the
//! shell); NUL bytes are dropped; without `IFS=` before `read` the blanks at either end
//! are taken away; without `-r` a backslash escapes the next character, which riskgate
//! does not follow, so a line holding one is refused when the line runs. One difference
//! is left: the body's commands read nothing of the loop's input (each gets the line's own
//! empty input), where in the shell a body command reading its standard input would take
//! the lines after its own. Left to a shell: another form of `read` (`-d`, `-a`, several
//! names, none), another condition, a loop in a pipeline that also has a redirect, and a
//! line the rewriting cannot place exactly.

use brush_parser::ast::{self, SourceLocation};

/// How `read` takes a line apart: `raw` with `-r`; `trim` without `IFS=` before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadMode {
    pub raw: bool,
    pub trim: bool,
}

/// Where a `while read` loop takes its input from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Input {
    /// The commands before it in its pipeline, which end at this character.
    Pipeline { end: usize },
    /// A file after `done <`, its word as written.
    File(String),
    /// A process substitution after `done <`: its `( ... )`, in characters.
    Process { start: usize, end: usize },
}

/// A `while read` loop of the line, as the parser found it (positions in characters):
/// from the start of what feeds it (its pipeline's first command, or the `while`) to the
/// end of its `done`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ReadLoop {
    pub start: usize,
    pub end: usize,
    pub name: String,
    pub mode: ReadMode,
    pub input: Input,
    pub body_start: usize,
    pub body_end: usize,
}

/// The `while read` loop of `pipeline`, when it has one in a form taken (see the module).
pub(super) fn find(pipeline: &ast::Pipeline) -> Option<ReadLoop> {
    if pipeline.timed.is_some() {
        return None;
    }
    let at = pipeline.seq.iter().position(|command| {
        matches!(
            command,
            ast::Command::Compound(ast::CompoundCommand::WhileClause(_), _)
        )
    })?;
    let ast::Command::Compound(ast::CompoundCommand::WhileClause(clause), redirects) =
        &pipeline.seq[at]
    else {
        return None;
    };
    let ast::WhileOrUntilClauseCommand(condition, body, span) = clause;
    let (name, mode) = read_condition(condition)?;
    let redirects: Vec<&ast::IoRedirect> =
        redirects.iter().flat_map(|list| list.0.iter()).collect();
    let (start, input) = match (at, redirects.as_slice()) {
        (0, [redirect]) => (span.start.index, redirected_input(redirect)?),
        (0, _) | (_, [_, ..]) => return None,
        (_, []) => {
            let first = pipeline.seq.first()?.location()?;
            let last = pipeline.seq[at - 1].location()?;
            (
                first.start.index,
                Input::Pipeline {
                    end: last.end.index,
                },
            )
        }
    };
    Some(ReadLoop {
        start,
        end: span.end.index,
        name,
        mode,
        input,
        body_start: body.loc.start.index,
        body_end: body.loc.end.index,
    })
}

/// `read [-r] NAME`, alone or after `IFS=`, as a loop's whole condition.
fn read_condition(condition: &ast::CompoundList) -> Option<(String, ReadMode)> {
    let [ast::CompoundListItem(and_or, _)] = condition.0.as_slice() else {
        return None;
    };
    if !and_or.additional.is_empty() || and_or.first.bang || and_or.first.timed.is_some() {
        return None;
    }
    let [ast::Command::Simple(read)] = and_or.first.seq.as_slice() else {
        return None;
    };
    if read.word_or_name.as_ref()?.value != "read" {
        return None;
    }
    let trim = match read.prefix.as_ref().map(|prefix| prefix.0.as_slice()) {
        None => true,
        Some([ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, _)]) => {
            let ast::AssignmentName::VariableName(name) = &assignment.name else {
                return None;
            };
            let ast::AssignmentValue::Scalar(value) = &assignment.value else {
                return None;
            };
            if name != "IFS" || assignment.append || !value.value.is_empty() {
                return None;
            }
            false
        }
        Some(_) => return None,
    };
    let mut words = Vec::new();
    for item in read.suffix.iter().flat_map(|suffix| suffix.0.iter()) {
        let ast::CommandPrefixOrSuffixItem::Word(word) = item else {
            return None;
        };
        words.push(word.value.as_str());
    }
    let (raw, name) = match words.as_slice() {
        ["-r", name] => (true, *name),
        [name] => (false, *name),
        _ => return None,
    };
    let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then(|| (name.to_owned(), ReadMode { raw, trim }))
}

/// The input of a loop redirected from a file or a process substitution (`done < f`).
fn redirected_input(redirect: &ast::IoRedirect) -> Option<Input> {
    let ast::IoRedirect::File(fd, ast::IoFileRedirectKind::Read, target) = redirect else {
        return None;
    };
    if !matches!(fd, None | Some(0)) {
        return None;
    }
    match target {
        ast::IoFileRedirectTarget::Filename(word) => Some(Input::File(word.value.clone())),
        ast::IoFileRedirectTarget::ProcessSubstitution(
            ast::ProcessSubstitutionKind::Read,
            subshell,
        ) => Some(Input::Process {
            start: subshell.loc.start.index,
            end: subshell.loc.end.index,
        }),
        _ => None,
    }
}

/// The line with each loop of `found` rewritten as a `for` loop over a substitution, and
/// where (in bytes) each of those substitutions starts, with how its output is read.
pub(super) fn rewrite(line: &str, found: &[ReadLoop]) -> Option<(String, Vec<(usize, ReadMode)>)> {
    let bytes = |chars: usize| super::syntax::byte_offset(line, chars);
    let mut sorted: Vec<&ReadLoop> = found.iter().collect();
    sorted.sort_by_key(|found| found.start);
    let mut written = String::with_capacity(line.len() + 32);
    let mut marks = Vec::new();
    let mut from = 0;
    for found in sorted {
        let start = bytes(found.start)?;
        let mut end = bytes(found.end)?;
        if start < from {
            return None;
        }
        let script = match &found.input {
            Input::Pipeline { end } => line.get(start..bytes(*end)?)?.to_owned(),
            Input::File(word) => {
                end = after_redirect(line, end, word)?;
                format!("cat < {word}")
            }
            Input::Process { start, end: close } => {
                let (open, close) = (bytes(*start)?, bytes(*close)?);
                let process = line.get(open..close)?;
                if after_redirect(line, end, &format!("<{process}"))? != close {
                    return None;
                }
                end = close;
                process.strip_prefix('(')?.strip_suffix(')')?.to_owned()
            }
        };
        let body = line.get(bytes(found.body_start)?..bytes(found.body_end)?)?;
        if !body.starts_with("do") || !body.ends_with("done") {
            return None;
        }
        written.push_str(line.get(from..start)?);
        written.push_str("for ");
        written.push_str(&found.name);
        written.push_str(" in ");
        marks.push((written.len(), found.mode));
        written.push_str("$(");
        written.push_str(&script);
        written.push_str("); ");
        written.push_str(body);
        from = end;
    }
    written.push_str(line.get(from..)?);
    Some((written, marks))
}

/// Where `< WORD` ends, when the text right after `done` (at byte `at`) is that redirect.
fn after_redirect(line: &str, at: usize, word: &str) -> Option<usize> {
    let rest = line.get(at..)?;
    let blanks = |text: &str| text.len() - text.trim_start_matches([' ', '\t']).len();
    let skipped = blanks(rest);
    let rest = rest[skipped..].strip_prefix('<')?;
    let skipped = skipped + 1 + blanks(rest);
    let rest = line.get(at + skipped..)?;
    rest.starts_with(word).then_some(at + skipped + word.len())
}

/// The lines `read` takes from `output`, as the loop's words, each quoted whole (`'a b'`);
/// `None` for a line `read` without `-r` would take apart (one holding a backslash).
pub(super) fn as_words(output: &str, mode: ReadMode) -> Option<String> {
    let mut pieces: Vec<&str> = output.split('\n').collect();
    // What follows the last newline is not a line `read` succeeds on: the loop ends.
    pieces.pop();
    let mut words = String::with_capacity(output.len() + 3 * pieces.len());
    for piece in pieces {
        if !mode.raw && piece.contains('\\') {
            return None;
        }
        let value = if mode.trim {
            piece.trim_matches([' ', '\t'])
        } else {
            piece
        };
        if !words.is_empty() {
            words.push(' ');
        }
        words.push('\'');
        words.push_str(&value.replace('\'', r"'\''"));
        words.push('\'');
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW: ReadMode = ReadMode {
        raw: true,
        trim: false,
    };
    const PLAIN: ReadMode = ReadMode {
        raw: false,
        trim: true,
    };

    #[test]
    fn lines_are_words_as_read_takes_them() {
        assert_eq!(
            as_words("  a b  \nit's\n\nlast", RAW).as_deref(),
            Some(r"'  a b  ' 'it'\''s' ''")
        );
        assert_eq!(
            as_words("  a b  \n\tc\t\n", PLAIN).as_deref(),
            Some("'a b' 'c'")
        );
        assert_eq!(as_words("", RAW).as_deref(), Some(""));
        assert_eq!(as_words("no newline", RAW).as_deref(), Some(""));
        assert_eq!(as_words("a\\b\n", PLAIN), None);
        assert_eq!(as_words("a\\b\n", RAW).as_deref(), Some(r"'a\b'"));
    }

    fn found(line: &str, input: Input) -> ReadLoop {
        let chars = |byte: usize| line[..byte].chars().count();
        let body_start = line.find("; do ").unwrap() + 2;
        let body_end = line.find("done").unwrap() + 4;
        let start = match input {
            Input::Pipeline { .. } => 0,
            _ => chars(line.find("while").unwrap()),
        };
        ReadLoop {
            start,
            end: chars(body_end),
            name: "x".to_owned(),
            mode: RAW,
            input,
            body_start: chars(body_start),
            body_end: chars(body_end),
        }
    }

    #[test]
    fn a_loop_becomes_a_for_loop_over_its_input() {
        let line = "ls é | while read -r x; do echo $x; done | sort";
        let input = Input::Pipeline {
            end: line[..line.find(" |").unwrap()].chars().count(),
        };
        let (written, marks) = rewrite(line, &[found(line, input)]).unwrap();
        assert_eq!(written, "for x in $(ls é); do echo $x; done | sort");
        assert_eq!(marks, vec![(9, RAW)]);

        let line = "while read -r x; do echo $x; done <  'a b.txt'; echo";
        let (written, _) =
            rewrite(line, &[found(line, Input::File("'a b.txt'".to_owned()))]).unwrap();
        assert_eq!(
            written,
            "for x in $(cat < 'a b.txt'); do echo $x; done; echo"
        );
        // The word must be where the parser said.
        assert_eq!(
            rewrite(line, &[found(line, Input::File("b.txt".to_owned()))]),
            None
        );

        let line = "while read -r x; do echo $x; done < <(ls)";
        let open = line.rfind('(').unwrap();
        let input = Input::Process {
            start: open,
            end: line.len(),
        };
        let (written, _) = rewrite(line, &[found(line, input)]).unwrap();
        assert_eq!(written, "for x in $(ls); do echo $x; done");
    }
}
