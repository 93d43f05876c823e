//! `find`: its starting points and the primaries naming files are checked as paths;
//! `-delete` and the primaries writing a file (`-fprint`, `-fls`, ...) destroy; the command
//! of `-exec`, `-execdir`, `-ok` and `-okdir` is judged on its own, one level deeper, with
//! `{}` standing for a path under a starting point.

use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] =
    &[Program::new(&["find"], Rule::Judge(find_rule)).running_code()];

/// `find` primaries that take one value which is not a file.
const FIND_VALUES: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-size",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-used",
    "-fstype",
    "-maxdepth",
    "-mindepth",
    "-context",
    "-printf",
    "-regextype",
];

/// `find` primaries whose value names a file.
const FIND_PATHS: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"];

/// `find` without actions that delete, write or run; `-exec` and friends run a command,
/// which is judged on its own.
fn find_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let mut judgement = Judgement::whitelisted();
    if let Some(opaque) = args.iter().find(|a| a.text().is_none()) {
        judgement.destructive(format!(
            "`find` is given `{}`, which may become `-delete` or `-exec` when the line runs",
            opaque.raw
        ));
    }
    let text = |index: usize| args.get(index).and_then(Arg::text);
    let mut index = 0;
    // Global options.
    while let Some(word) = text(index) {
        match word {
            "-H" | "-L" | "-P" => index += 1,
            "-D" => index += 2,
            _ if word.starts_with("-O") => index += 1,
            _ => break,
        }
    }
    // Starting points.
    let mut starts = Vec::new();
    while let Some(word) = text(index) {
        if word.starts_with('-') || matches!(word, "(" | "!" | ")" | ",") {
            break;
        }
        walker.check_path(&mut judgement, "find", word);
        starts.push(word);
        index += 1;
    }
    // The expression.
    while index < args.len() {
        let Some(word) = text(index) else {
            index += 1;
            continue;
        };
        index += 1;
        match word {
            "-delete" => judgement.destructive("`find -delete` removes every file it matches"),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let (command, end) = find_command(args, index, &starts);
                if word.starts_with("-ok") {
                    judgement.unknown(format!("`find {word}` asks on its input before it runs"));
                }
                walker.judge(
                    &command,
                    &crate::tools::command::assess::Stdin::Inherited,
                    invocation.depth + 1,
                );
                index = end + 1;
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                let file = text(index).unwrap_or("a file");
                judgement.destructive(format!(
                    "`find {word}` writes to the file {file}, replacing it"
                ));
                index += if word == "-fprintf" { 2 } else { 1 };
            }
            "-files0-from" if text(index) == Some("-") => {
                judgement.unknown(
                    "`find -files0-from -` reads its starting points from its input, which cannot be checked",
                );
                index += 1;
            }
            _ if FIND_PATHS.contains(&word) => {
                if let Some(path) = text(index) {
                    walker.check_path(&mut judgement, "find", path);
                }
                index += 1;
            }
            _ if word.starts_with("-newer") && word.len() == 8 => {
                // `-newerXY ref`: a time string when Y is `t`, else a file.
                if !word.ends_with('t')
                    && let Some(path) = text(index)
                {
                    walker.check_path(&mut judgement, "find", path);
                }
                index += 1;
            }
            _ if FIND_VALUES.contains(&word) => index += 1,
            _ => {}
        }
    }
    judgement
}

/// The command of `find -exec` starting at `start`, and where its `;` or `+` is. `{}`
/// alone, after the program, is a path under a starting point (`./x`), never an option;
/// anywhere else what replaces it is only known at run time.
fn find_command(args: &[Arg], start: usize, starts: &[&str]) -> (Vec<Arg>, usize) {
    let mut end = start;
    while let Some(part) = args.get(end) {
        let text = part.text();
        if text == Some(";")
            || (text == Some("+") && end > start && args[end - 1].text() == Some("{}"))
        {
            break;
        }
        end += 1;
    }
    let first_start = starts.first().copied().unwrap_or(".");
    // `{} +` passes as many paths as fit on a command line: `uniq {} +` may be given two
    // and write the second.
    let batched = args.get(end).and_then(Arg::text) == Some("+");
    let last = end.min(args.len()).saturating_sub(start + 1);
    let command = args[start..end.min(args.len())]
        .iter()
        .enumerate()
        .map(|(at, a)| match a.text() {
            Some("{}") if at > 0 => Arg {
                value: Some(format!("{}/{{}}", first_start.trim_end_matches('/'))),
                several: batched && at == last,
                ..Arg::opaque("{}")
            },
            Some(t) if t.contains("{}") => Arg::opaque("{}"),
            _ => a.clone(),
        })
        .collect();
    (command, end)
}

#[cfg(test)]
mod tests {
    #[test]
    fn find_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("find src -name '*.rs' -type f", Safe),
            ("find . -name '*.pem' -not -path './node_modules/*'", Safe),
            ("find /etc -name passwd", Unknown),
            ("find . -delete", Destructive),
            ("find . -type f -fprint out.txt", Destructive),
            ("find . -exec rm -rf {} +", Destructive),
            ("find . -name x -exec cat {} +", Safe),
            ("find . -name '*.txt' -exec uniq {} +", Destructive),
            ("find . -name '*.txt' -exec uniq {} ;", Safe),
            ("find . -name '*.txt' -exec xxd {} +", Destructive),
            ("find . -name '*.txt' -exec sort {} +", Safe),
            ("find . -ok cat {} ;", Unknown),
        ]);
    }
}
