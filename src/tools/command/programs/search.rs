//! Searching file contents: `grep` (and `egrep`, `fgrep`) and ripgrep (`rg`), as [`Table`]
//! rows whose first operand is a pattern unless an option gives it. ripgrep's options that
//! run programs (`--pre`, `-z`, `--hostname-bin`) are refused. (`find`, which searches
//! names and can run commands, has its own file.)

use super::table::{Effect, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::options::Spec;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["grep", "egrep", "fgrep", "rgrep"], Rule::Table(&GREP)),
    Program::new(
        &["rg"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ABCefgjmMrtTEd",
                &[
                    "after-context",
                    "before-context",
                    "context",
                    "regexp",
                    "file",
                    "glob",
                    "iglob",
                    "threads",
                    "max-count",
                    "max-columns",
                    "replace",
                    "type",
                    "type-not",
                    "encoding",
                    "max-depth",
                    "max-filesize",
                    "colors",
                    "color",
                    "context-separator",
                    "field-context-separator",
                    "field-match-separator",
                    "ignore-file",
                    "path-separator",
                    "sort",
                    "sortr",
                    "type-add",
                    "type-clear",
                    "dfa-size-limit",
                    "regex-size-limit",
                    "engine",
                    "pre",
                    "pre-glob",
                    "hostname-bin",
                    "hyperlink-format",
                    "generate",
                ],
            )
            .exact(),
            operands: Operands::PatternThenPaths(&[
                "e",
                "regexp",
                "f",
                "file",
                "files",
                "type-list",
                "generate",
            ]),
            path_options: &["f", "file", "ignore-file"],
            names_from: &[],
            refused: &[
                Refusal {
                    options: &["pre", "pre-glob"],
                    effect: Effect::Unsafe,
                    what: "runs a program on every file it searches",
                },
                Refusal {
                    options: &["z", "search-zip"],
                    effect: Effect::Unsafe,
                    what: "runs decompression programs",
                },
                Refusal {
                    options: &["hostname-bin"],
                    effect: Effect::Unsafe,
                    what: "runs a program to find the host name",
                },
            ],
        }),
    ),
];

/// grep's options, also those of the compressed-file greps (`zgrep`, `xzgrep`, ...), which
/// hand them to grep.
pub(super) const GREP: Table = Table {
    spec: Spec::values(
        "efmABCdD",
        &[
            "regexp",
            "file",
            "max-count",
            "after-context",
            "before-context",
            "context",
            "directories",
            "devices",
            "label",
            "include",
            "exclude",
            "exclude-dir",
            "exclude-from",
            "binary-files",
            "group-separator",
        ],
    ),
    operands: Operands::PatternThenPaths(&["e", "regexp", "f", "file"]),
    path_options: &["f", "file", "exclude-from"],
    ..TABLE
};

#[cfg(test)]
mod tests {
    #[test]
    fn search_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("grep -rn foo src", Safe),
            ("rg TODO src", Safe),
            ("grep -rn foo /etc", Unknown),
            ("rg --pre cat TODO", Unknown),
            ("rg --pre=sh TODO", Unknown),
            ("rg -z foo", Unknown),
            ("rg --hostname-bin=x foo", Unknown),
        ]);
    }
}
