//! A program asked about itself: `perl --version`, `java -version`, `go version`,
//! `docker run --help`, `terraform help`. Whatever the program, these words ask it to print
//! its version or its usage and stop, so the line reads nothing of the team's and changes
//! nothing; and like every line that runs without a click it runs in the read-only sandbox
//! without network, so a program that ignored the words could still change nothing.
//!
//! The forms, and nothing else on the command:
//! - one of [`INFO_FLAGS`] alone (`nmcli --help`);
//! - for programs that take subcommands (by their rules, or not known to any rule): one
//!   subcommand word, then `--help` (`docker run --help`); `version` or `help` alone (`go
//!   version`, `helm help`); `help` and one subcommand word (`git help log`). Never where
//!   the first operand is something to run: a script for a shell or an interpreter, a
//!   target for a build tool, a package for `npx` ([`FIRST_OPERAND_RUNS`]).
//!
//! Never `-h` for a program a rule knows, to many of which it means something else
//! (`shutdown -h`, `sort -h`); for a program no rule knows, `-h` alone is its help, as it is
//! to nearly every program without `--help` (a program whose `-h` acts gets a rule).
//!
//! A subcommand word is a plain lowercase word, never a path or a pattern, so none of these
//! forms names a file. Programs the rules know as destructive whatever their words (`rm`,
//! `reboot`) and wrappers that run the command after them (`sudo`, `timeout`) are never
//! judged here: a floor is not lifted by a flag, and a wrapper's words are a command. (The
//! coreutils on a floor answer `--help` and `--version` alone before anything else; the
//! registry lifts that one form for them, see `Program::answers_standard_options`.)
//! A form a program's own rule already finds destructive (`kubectl delete --help` is judged
//! as `kubectl delete`) stays so: this only ever turns "not on the whitelist" into read-only.

use super::super::assess::{Invocation, Stdin};
use super::super::words::Arg;

/// The words that ask a program for its version or its usage, by the common conventions:
/// GNU's long options, and the single-dash long forms of Java, Go and ffmpeg.
const INFO_FLAGS: &[&str] = &["--version", "--help", "-version", "-help"];

/// The subcommands that print the version or the usage (`go version`, `helm help`).
const INFO_SUBCOMMANDS: &[&str] = &["version", "help"];

/// Programs whose first operand names something to run: a target of the project's own
/// build file (`make help` runs the Makefile's `help` recipe), a package to fetch and run
/// (`npx cowsay --help` runs cowsay), a class or script (`java Main --help`), or a change to
/// make (`yarn version` bumps the package's version). Only a lone flag counts for them.
const FIRST_OPERAND_RUNS: &[&str] = &[
    "make", "gmake", "bmake", "just", "rake", "ninja", "ant", "gradle", "mage", "task", "invoke",
    "scons", "waf", "nox", "tox", "doit", "yarn", "npx", "bunx", "pnpx", "uvx", "pipx", "jbang",
    "java", "deno", "bun", "julia", "Rscript", "runghc", "elixir", "scala", "kotlin", "groovy",
    "tclsh", "wish", "guile", "racket", "sbcl", "clojure", "dotnet",
];

/// Programs whose `version` subcommand also asks a server or daemon for its version (the
/// cluster's API server, the container engine): for them `version` alone does not count.
const VERSION_ASKS_A_SERVER: &[&str] = &["kubectl", "oc", "docker", "podman", "nerdctl"];

/// Which forms count for a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Forms {
    /// A lone flag only: the program's first operand is code, a file or a target.
    FlagsOnly,
    /// Also the subcommand forms: the program takes subcommands, or is not known at all and
    /// is not one whose first operand runs something.
    Subcommands,
    /// The subcommand forms and `-h` alone: a program no rule knows.
    Unknown,
}

impl Forms {
    /// The forms for `program`, which runs code given to it (`runs_code`) or not, and
    /// whose first operand is a subcommand by its rules (`has_subcommands`) or may be one
    /// (`unknown`: no rule knows the program).
    pub(super) fn of(program: &str, runs_code: bool, has_subcommands: bool, unknown: bool) -> Self {
        let plain = !runs_code && !FIRST_OPERAND_RUNS.contains(&program);
        if plain && unknown {
            Self::Unknown
        } else if plain && has_subcommands {
            Self::Subcommands
        } else {
            Self::FlagsOnly
        }
    }
}

/// The flags some programs print their version or their setup with (`python3 -V`, `node
/// -v`, `mvn -v`, `gcc -dumpmachine`, `dotnet --info`), which mean something else to other
/// programs (`-v` is often "verbose"), so each counts for its own programs only. Counted
/// only when the line gives the program no input: `ruby -v` and `lua -v` go on to run a
/// program read from their input. A compiler given nothing to compile prints its version
/// and configuration and stops.
const VERSION_FLAGS: &[(&[&str], &[&str])] = &[
    (&["python", "python3"], &["-V", "-VV"]),
    (&["python2", "pip", "pip3"], &["-V"]),
    (&["perl"], &["-v", "-V"]),
    (
        &[
            "ruby", "node", "nodejs", "php", "lua", "npm", "pnpm", "yarn", "bun", "tsc", "gradle",
        ],
        &["-v"],
    ),
    (&["mvn"], &["-v", "-version"]),
    (&["rustc", "cargo"], &["-V", "-vV"]),
    (
        &["gcc", "g++", "cc", "c++", "clang", "clang++"],
        &["-v", "-dumpversion", "-dumpfullversion", "-dumpmachine"],
    ),
    (
        &["java"],
        &["-showversion", "--show-version", "-fullversion"],
    ),
    (&["dotnet"], &["--info", "--list-sdks", "--list-runtimes"]),
    (&["ssh", "tmux", "psql", "mysql", "mariadb"], &["-V"]),
    (super::documents::GRAPHVIZ, &["-V"]),
    (&["redis-cli", "nginx", "screen"], &["-v"]),
    (&["nginx"], &["-V"]),
    // Programs whose `-h` is their help (never `shutdown -h` or `sort -h`).
    (&["kubectl", "helm", "oc", "kustomize"], &["-h"]),
];

/// Whether the command only asks the program for its version or its usage, in the `forms`
/// that count for it.
pub(super) fn asks_about_itself(invocation: &Invocation<'_>, forms: Forms) -> bool {
    let Some(words) = invocation
        .args
        .iter()
        .map(literal)
        .collect::<Option<Vec<&str>>>()
    else {
        return false;
    };
    let subcommands = forms != Forms::FlagsOnly;
    match words.as_slice() {
        [only] if INFO_FLAGS.contains(only) => true,
        ["-h"] if forms == Forms::Unknown => true,
        [only] if own_version_flag(invocation, only) => true,
        ["version"] if VERSION_ASKS_A_SERVER.contains(&invocation.program) => false,
        [only] => subcommands && INFO_SUBCOMMANDS.contains(only),
        [subcommand, "--help"] | ["help", subcommand] => {
            subcommands && is_subcommand_word(subcommand)
        }
        _ => false,
    }
}

fn own_version_flag(invocation: &Invocation<'_>, flag: &str) -> bool {
    *invocation.stdin == Stdin::Inherited
        && VERSION_FLAGS.iter().any(|(programs, flags)| {
            programs.contains(&invocation.program) && flags.contains(&flag)
        })
}

/// The word as written when it is plain text the line fully shows (no pattern, no `~`).
fn literal(arg: &Arg) -> Option<&str> {
    if arg.pattern.is_some() || arg.tilde {
        return None;
    }
    arg.text()
}

/// A subcommand's name: lowercase letters, digits and inner dashes (`run`, `show-ref`),
/// never a path, an option or a pattern.
fn is_subcommand_word(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && word.len() <= 40
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asks_of(program: &str, forms: Forms, words: &[&str]) -> bool {
        let args: Vec<Arg> = words.iter().map(|w| Arg::literal(w)).collect();
        let invocation = Invocation {
            program,
            args: &args,
            stdin: &Stdin::Inherited,
            depth: 0,
        };
        asks_about_itself(&invocation, forms)
    }

    fn asks(words: &[&str]) -> bool {
        asks_of("tool", Forms::Subcommands, words)
    }

    #[test]
    fn where_the_first_operand_runs_something_only_a_lone_flag_counts() {
        // (program, runs code, has subcommands by its rules, known to no rule)
        for (program, runs_code, subcommands, unknown) in [
            ("python3", true, false, false),
            ("make", false, false, true),
            ("npx", false, false, true),
            ("java", false, false, true),
            ("sed", false, false, false),
        ] {
            let forms = Forms::of(program, runs_code, subcommands, unknown);
            assert_eq!(forms, Forms::FlagsOnly, "{program}");
            assert!(asks_of(program, forms, &["--version"]), "{program}");
            assert!(asks_of(program, forms, &["--help"]), "{program}");
            for words in [
                &["x", "--help"][..],
                &["help"],
                &["version"],
                &["help", "x"],
            ] {
                assert!(!asks_of(program, forms, words), "{program} {words:?}");
            }
        }
        assert_eq!(Forms::of("go", false, false, true), Forms::Unknown);
        assert_eq!(Forms::of("make", false, false, true), Forms::FlagsOnly);
        assert_eq!(Forms::of("docker", false, true, false), Forms::Subcommands);
        assert!(asks_of("go", Forms::Subcommands, &["version"]));
    }

    #[test]
    fn only_the_words_that_ask_about_the_program_count() {
        for asking in [
            &["--version"][..],
            &["--help"],
            &["-version"],
            &["-help"],
            &["version"],
            &["help"],
            &["run", "--help"],
            &["show-ref", "--help"],
            &["help", "log"],
        ] {
            assert!(asks(asking), "{asking:?}");
        }
        for other in [
            &[][..],
            &["-h"],
            &["-v"],
            &["-V"],
            &["--version", "--help"],
            &["--help", "file.txt"],
            &["file.txt", "--help"],
            &["/etc/passwd", "--help"],
            &["../x", "--help"],
            &["run", "-h"],
            &["run", "x", "--help"],
            &["help", "/etc/shadow"],
            &["help", "Log"],
            &["version", "extra"],
            &["--version=1"],
            &["-rf", "--help"],
        ] {
            assert!(!asks(other), "{other:?}");
        }
        // `-h` alone, for a program no rule knows only.
        assert!(asks_of("tool", Forms::Unknown, &["-h"]));
        assert!(asks_of("tool", Forms::Unknown, &["run", "--help"]));
        assert!(!asks_of("tool", Forms::Unknown, &["-h", "x"]));
        assert!(!asks_of("tool", Forms::Unknown, &["run", "-h"]));
        assert!(!asks_of("tool", Forms::Subcommands, &["-h"]));
        assert!(!asks_of("tool", Forms::FlagsOnly, &["-h"]));
    }
}
