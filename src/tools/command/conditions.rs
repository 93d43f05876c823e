//! `[[ ... ]]` on a line run without a click, read as the `test` commands it amounts to.
//!
//! bash's conditional expression is syntax, not a program: the runner cannot run it
//! without a shell. But the forms people write most — a file's kind (`[[ -f f ]]`), a
//! string's length (`[[ -z $x ]]` once its variable is put in), two strings or two numbers
//! compared, joined by `&&`, `||` and `!` — mean exactly what `test` with the same words
//! means, one `test` for each, grouped as the expression groups them (`[[ -f a && -d b ]]`
//! is `{ test -f a && test -d b; }`). That line is judged and planned instead, as the other
//! exact rewritings are.
//!
//! Only where the two agree word for word: every word literal (plain characters, or quoted
//! with nothing expanded inside), since `[[ ]]` neither splits nor globs what it expands
//! and `test`'s words would be; no glob character even quoted on the right of `==` or `!=`
//! (`[[ ]]` matches a pattern there); numbers only as decimal literals (`[[ ]]` evaluates
//! arithmetic, `010` being eight); and none of the forms `test` reads otherwise or lacks:
//! `=~`, `<` and `>` (which sort by the locale in `[[ ]]`), `-nt`, `-ot`, `-ef`, `-o`,
//! `-v`, `-R`, `-t`.

use brush_parser::ast::{self, BinaryPredicate as B, ExtendedTestExpr as E, UnaryPredicate as U};

/// A `[[ ... ]]` of the line (where it is, brackets included, in characters) and the
/// `test` commands it amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestFound {
    pub start: usize,
    pub end: usize,
    pub written: String,
}

/// The `test` commands `expr` amounts to, where they mean exactly what it means.
pub(super) fn as_test_commands(expr: &ast::ExtendedTestExpr) -> Option<String> {
    Some(match expr {
        E::And(left, right) => format!(
            "{{ {} && {}; }}",
            as_test_commands(left)?,
            as_test_commands(right)?
        ),
        E::Or(left, right) => format!(
            "{{ {} || {}; }}",
            as_test_commands(left)?,
            as_test_commands(right)?
        ),
        E::Not(inner) => format!("{{ ! {}; }}", as_test_commands(inner)?),
        E::Parenthesized(inner) => as_test_commands(inner)?,
        E::UnaryTest(predicate, word) => {
            let taken = !matches!(
                predicate,
                U::ShellOptionEnabled
                    | U::ShellVariableIsSetAndAssigned
                    | U::ShellVariableIsSetAndNameRef
                    | U::FdIsOpenTerminal
                    | U::FileExistsAndModifiedSinceLastRead
            );
            if !taken || !is_literal(&word.value) {
                return None;
            }
            format!("test {predicate} {}", word.value)
        }
        E::BinaryTest(predicate, left, right) => {
            let (left, right) = (&left.value, &right.value);
            if !is_literal(left) || !is_literal(right) {
                return None;
            }
            let operator = match predicate {
                B::StringExactlyMatchesPattern | B::StringExactlyMatchesString
                    if !has_glob(right) =>
                {
                    "="
                }
                B::StringDoesNotExactlyMatchPattern | B::StringDoesNotExactlyMatchString
                    if !has_glob(right) =>
                {
                    "!="
                }
                B::ArithmeticEqualTo
                | B::ArithmeticNotEqualTo
                | B::ArithmeticLessThan
                | B::ArithmeticLessThanOrEqualTo
                | B::ArithmeticGreaterThan
                | B::ArithmeticGreaterThanOrEqualTo
                    if is_decimal(left) && is_decimal(right) =>
                {
                    return Some(format!("test {left} {predicate} {right}"));
                }
                _ => return None,
            };
            format!("test {left} {operator} {right}")
        }
    })
}

/// The line with each `[[ ... ]]` of `found` replaced by its `test` commands; `None` where
/// one is not where the parser said.
pub(super) fn rewrite(line: &str, found: &[TestFound]) -> Option<String> {
    let spans = found
        .iter()
        .map(|found| (found.start, found.end, found.written.clone()))
        .collect();
    super::syntax::replace_spans(line, spans, |whole| {
        whole.starts_with("[[") && whole.ends_with("]]")
    })
}

/// Whether a word is the same text to `[[ ]]` and to a command: plain characters, and
/// quoted strings with nothing in them the shell expands.
fn is_literal(word: &str) -> bool {
    let mut rest = word;
    while let Some(c) = rest.chars().next() {
        rest = match c {
            '\'' => match rest[1..].find('\'') {
                Some(close) => &rest[close + 2..],
                None => return false,
            },
            '"' => match rest[1..].find('"') {
                Some(close) if !rest[1..=close].contains(['$', '`', '\\']) => &rest[close + 2..],
                _ => return false,
            },
            c if c.is_ascii_alphanumeric() || "._/@%+,:=-".contains(c) => &rest[1..],
            _ => return false,
        };
    }
    !word.is_empty()
}

/// Whether a word holds a character `[[ ]]` would match as a pattern on the right of `==`
/// (quoted ones are literal there, but are kept out all the same).
fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// A decimal integer as `test` and bash's arithmetic both read it (no leading zero, which
/// arithmetic reads as octal).
fn is_decimal(word: &str) -> bool {
    super::loops::decimal(word).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(line: &str) -> Option<String> {
        let program = super::super::syntax::parse_script(line).ok()?;
        let mut found = Vec::new();
        for item in &program.complete_commands {
            for ast::CompoundListItem(and_or, _) in &item.0 {
                for (_, pipeline) in and_or.iter() {
                    for command in &pipeline.seq {
                        if let ast::Command::ExtendedTest(test, _) = command {
                            found.push(TestFound {
                                start: test.loc.start.index,
                                end: test.loc.end.index,
                                written: as_test_commands(&test.expr)?,
                            });
                        }
                    }
                }
            }
        }
        rewrite(line, &found)
    }

    #[test]
    fn tests_are_written_as_the_test_commands_they_amount_to() {
        assert_eq!(
            written("[[ -f notes.txt ]] && echo yes").as_deref(),
            Some("test -f notes.txt && echo yes")
        );
        assert_eq!(
            written("é; [[ -f a && ( -d b || ! -s 'c d' ) ]]").as_deref(),
            Some("é; { test -f a && { test -d b || { ! test -s 'c d'; }; }; }")
        );
        assert_eq!(
            written("[[ \"$x\" == \"\" ]] || [[ a != b ]]").as_deref(),
            None
        );
        assert_eq!(
            written("[[ abc == \"abc\" ]] || [[ 10 -gt -2 ]]").as_deref(),
            Some("test abc = \"abc\" || test 10 -gt -2")
        );
        // What `test` would read otherwise.
        for line in [
            "[[ $f == *.txt ]]",
            "[[ x == '*' ]]",
            "[[ $x =~ ^a ]]",
            "[[ a < b ]]",
            "[[ 010 -eq 8 ]]",
            "[[ 1+1 -eq 2 ]]",
            "[[ -o errexit ]]",
            "[[ -v x ]]",
            "[[ a -nt b ]]",
            "[[ -f *.txt ]]",
            "[[ -f ~/x ]]",
            "[[ -f $(ls) ]]",
        ] {
            assert_eq!(written(line), None, "{line}");
        }
    }
}
