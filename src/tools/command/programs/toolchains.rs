//! The package and version managers of language toolchains, in their listing and showing
//! forms: `gem list`, `conda list`, `npm ls`, `pyenv versions` (and `rbenv`, `plenv`,
//! `nodenv`, `goenv`), `perlbrew list`, `brew list`, `port installed`, `go env`, what
//! the Rust compiler tells of itself (`rustc --print sysroot`), and what a Ninja build file
//! holds (`ninja -t targets`, `-t query`, `-t commands`: the tools that print, which run
//! before Ninja would regenerate its build file; `-t clean` is destructive).
//!
//! Each reads what is installed and prints it; the forms that ask a package index over the
//! network (`gem search`, `npm view`, `npm outdated`, `brew info`) are not among them. Their other forms install, upgrade or configure, and
//! are left to a person; the forms that remove packages (`gem uninstall`, `npm ci`, which
//! deletes `node_modules` first, `brew cleanup`, `go clean -modcache`) are destructive. As
//! with `pip`, an option before the subcommand waits: it is not read here, and some choose
//! another interpreter, prefix or configuration file.
//!
//! Left out on purpose: `cargo tree`/`metadata` and `go list`, which run the compiler named
//! by a configuration file in the workspace (`build.rustc`) or may invoke cgo, and the
//! managers that answer through a daemon's socket (`snap`, `flatpak`'s system store).

use super::subcommands::{SUBCOMMANDS, Subcommands, Verb, options_before_wait};
use super::table::{Effect, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;
use crate::tools::command::words::{Arg, shown_words};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["gem"], Rule::Subcommands(&GEM)),
    Program::new(&["conda", "mamba", "micromamba"], Rule::Subcommands(&CONDA)),
    Program::new(&["npm"], Rule::Subcommands(&NPM)),
    Program::new(
        &["pyenv", "rbenv", "plenv", "nodenv", "goenv"],
        Rule::Subcommands(&VERSION_MANAGER),
    ),
    Program::new(&["perlbrew"], Rule::Subcommands(&PERLBREW)),
    Program::new(&["brew"], Rule::Subcommands(&BREW)),
    Program::new(&["port"], Rule::Subcommands(&PORT)),
    Program::new(&["go"], Rule::Subcommands(&GO)),
    Program::new(&["rustc"], Rule::Judge(rustc)),
    Program::new(&["cmake"], Rule::Judge(cmake)),
    Program::new(&["ninja", "samu"], Rule::Judge(ninja_tool)),
    // When a Perl module entered the core distribution: module names and versions.
    Program::new(&["corelist"], Rule::Table(&NAMES)),
];

/// What `rustc --print` tells without a crate to compile: where the toolchain is, the
/// targets, and a target's configuration, CPUs and features. `--print NAME=PATH` writes the
/// answer to a file, and the other names need a crate, so they are not here.
const RUSTC_PRINTS: &[&str] = &[
    "sysroot",
    "target-list",
    "target-libdir",
    "host-tuple",
    "cfg",
    "target-cpus",
    "target-features",
    "relocation-models",
    "code-models",
    "tls-models",
    "split-debuginfo",
    "stack-protector-strategies",
    "calling-conventions",
];

/// `rustc --print NAME [--target TRIPLE]`: the compiler answers and compiles nothing. Any
/// other form compiles, and writes what it builds.
fn rustc(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let mut words = call.args.iter().map(Arg::text);
    let mut prints = false;
    while let Some(word) = words.next() {
        let (option, value) = match word {
            Some(w) => match w.split_once('=') {
                Some((option, value)) if option.starts_with("--") => (option, Some(value)),
                _ => (w, None),
            },
            None => return Judgement::not_whitelisted(call.program),
        };
        let value = match value {
            Some(value) => Some(value),
            None if matches!(option, "--print" | "--target") => words.next().flatten(),
            None => None,
        };
        let fine = match (option, value) {
            ("--print", Some(name)) => {
                prints = true;
                RUSTC_PRINTS.contains(&name)
            }
            ("--target", Some(triple)) => triple
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')),
            _ => false,
        };
        if !fine {
            return Judgement::not_whitelisted(call.program);
        }
    }
    if prints {
        Judgement::whitelisted()
    } else {
        Judgement::not_whitelisted(call.program)
    }
}

/// `cmake --help-*`, which prints the documentation, and the commands of `cmake -E` that
/// print or read (`capabilities`, `echo`, `environment`, the checksums, `cat`,
/// `compare_files`). `-E rm`, `remove`, `remove_directory` and `rename` delete or move
/// files; the other commands of `-E` write, or run a command (`env`, `time`, `chdir`), and
/// configuring or building runs the project's own CMake code.
fn cmake(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const LISTS: &[&str] = &[
        "full",
        "manual-list",
        "command-list",
        "commands",
        "module-list",
        "modules",
        "policy-list",
        "policies",
        "property-list",
        "properties",
        "variable-list",
        "variables",
    ];
    const TOPICS: &[&str] = &[
        "manual", "command", "module", "policy", "property", "variable",
    ];
    const READS: &[&str] = &[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "cat",
        "compare_files",
    ];
    let Some(words) = shown_words(call.args) else {
        return Judgement::not_whitelisted(call.program);
    };
    match words.as_slice() {
        [help]
            if help
                .strip_prefix("--help-")
                .is_some_and(|h| LISTS.contains(&h)) =>
        {
            Judgement::whitelisted()
        }
        [help, topic]
            if help
                .strip_prefix("--help-")
                .is_some_and(|h| TOPICS.contains(&h))
                && !topic.starts_with('-')
                && !topic.contains('/') =>
        {
            Judgement::whitelisted()
        }
        ["-E", "rm" | "remove" | "remove_directory", ..] => {
            Judgement::destroys("`cmake -E rm` deletes files")
        }
        ["-E", "rename", ..] => {
            Judgement::destroys("`cmake -E rename` moves a file, replacing the target")
        }
        ["-E", "capabilities" | "environment" | "true" | "false"] => Judgement::whitelisted(),
        ["-E", "echo" | "echo_append", ..] => Judgement::whitelisted(),
        ["-E", command, files @ ..] if READS.contains(command) => {
            let mut judgement = Judgement::whitelisted();
            for file in files {
                if file.starts_with('-') {
                    judgement.unknown(format!("`cmake -E {command} {file}` is not read here"));
                } else {
                    walker.check_path(&mut judgement, "cmake -E", file);
                }
            }
            judgement
        }
        _ => Judgement::not_whitelisted(call.program),
    }
}

/// Package names, versions and other words that name no file.
const NAMES: Table = Table {
    operands: Operands::Text,
    ..TABLE
};

/// `gem`'s queries of installed gems (not `--remote`, which asks a gem server).
const GEM: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &[
                "list",
                "info",
                "contents",
                "environment",
                "which",
                "dependency",
                "specification",
            ],
            &Table {
                spec: Spec::values("v", &["version", "platform", "prefix"]),
                refused: &[Refusal {
                    options: &["config-file", "remote", "r", "both", "b", "source", "s"],
                    effect: Effect::Unsafe,
                    what: "reads another configuration file or asks a gem server over the network",
                }],
                ..NAMES
            },
        ),
        Verb::destroys(
            &["uninstall", "cleanup", "yank"],
            "removes installed gems or published versions",
        ),
    ],
    ..SUBCOMMANDS
};

/// `conda list`, `conda info`, `conda env list`.
const CONDA: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &["list"],
            &Table {
                spec: Spec::values("np", &["name", "prefix"]),
                path_options: &["p", "prefix"],
                ..NAMES
            },
        ),
        Verb::judged(&["info"], conda_info),
        Verb::nested(&["env"], &CONDA_ENV),
        Verb::destroys(
            &["remove", "uninstall", "clean"],
            "removes packages, environments or caches",
        ),
    ],
    ..SUBCOMMANDS
};

const CONDA_ENV: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(&["list"], &NAMES),
        Verb::destroys(&["remove"], "removes an environment"),
    ],
    ..SUBCOMMANDS
};

/// `conda info` (`--envs`, `--json`) describes the installation; given a package name it
/// asks the channels over the network.
fn conda_info(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match call
        .args
        .iter()
        .find(|arg| !arg.text().is_some_and(|text| text.starts_with('-')))
    {
        Some(word) => Judgement::other(format!(
            "`{} {}` asks the package channels over the network",
            call.program, word.raw
        )),
        None => Judgement::whitelisted(),
    }
}

/// `npm ls` and its aliases, `npm explain`, `npm config get`.
const NPM: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &["ls", "list", "ll", "la", "explain", "why", "root", "prefix"],
            &Table {
                spec: Spec::values("w", &["depth", "omit", "include", "workspace", "prefix"]),
                path_options: &["prefix"],
                refused: &[Refusal {
                    options: &["userconfig", "globalconfig"],
                    effect: Effect::Unsafe,
                    what: "reads another configuration file",
                }],
                ..NAMES
            },
        ),
        Verb::nested(&["config", "c"], &NPM_CONFIG),
        Verb::destroys(
            &[
                "uninstall",
                "remove",
                "rm",
                "r",
                "un",
                "unlink",
                "prune",
                "unpublish",
                "ci",
                "clean-install",
            ],
            "removes installed or published packages (`npm ci` deletes node_modules first)",
        ),
    ],
    ..SUBCOMMANDS
};

const NPM_CONFIG: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(&["get", "list", "ls"], &NAMES),
        Verb::destroys(&["delete", "rm"], "deletes a configuration key"),
    ],
    ..SUBCOMMANDS
};

/// `pyenv`, `rbenv`, `plenv`, `nodenv`, `goenv`: which versions are installed and chosen.
/// `global`/`local` are left out: given a version they write the choice.
const VERSION_MANAGER: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &[
                "versions",
                "version",
                "version-name",
                "version-file",
                "which",
                "whence",
                "root",
                "prefix",
                "commands",
            ],
            &NAMES,
        ),
        Verb::destroys(&["uninstall"], "removes an installed version"),
    ],
    ..SUBCOMMANDS
};

const PERLBREW: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(&["list", "list-modules", "info", "version"], &NAMES),
        Verb::destroys(&["uninstall", "clean"], "removes installed perls or builds"),
    ],
    ..SUBCOMMANDS
};

/// Homebrew's queries. `brew home`/`brew edit` open other programs and wait.
const BREW: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &[
                "list", "ls", "leaves", "deps", "config", "missing", "doctor", "dr",
            ],
            &NAMES,
        ),
        Verb::destroys(
            &[
                "uninstall",
                "remove",
                "rm",
                "cleanup",
                "untap",
                "autoremove",
            ],
            "removes installed packages, taps or caches",
        ),
    ],
    ..SUBCOMMANDS
};

/// MacPorts' queries of its ports tree and installed ports.
const PORT: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &[
                "installed",
                "info",
                "search",
                "echo",
                "contents",
                "deps",
                "rdeps",
                "dependents",
                "rdependents",
                "list",
                "outdated",
                "provides",
                "location",
                "variants",
                "file",
                "dir",
                "url",
                "version",
                "platform",
            ],
            &NAMES,
        ),
        Verb::destroys(
            &["uninstall", "clean", "reclaim"],
            "removes installed ports or their files",
        ),
    ],
    ..SUBCOMMANDS
};

/// `go env` prints the toolchain's settings (`-w`/`-u` write them); `go version`, `go doc`
/// and `go tool dist list` only read. `go clean` deletes build output or caches.
const GO: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &["env"],
            &Table {
                refused: &[Refusal {
                    options: &["w", "u"],
                    effect: Effect::Writes,
                    what: "writes the toolchain's settings file",
                }],
                ..NAMES
            },
        ),
        Verb::reads(&["version"], &NAMES),
        Verb::nested(&["tool"], &GO_TOOL),
        Verb::destroys(&["clean"], "deletes build output, test or module caches"),
        Verb::destroys(
            &["fmt"],
            "rewrites the package's files in place (`gofmt -l -w`)",
        ),
    ],
    ..SUBCOMMANDS
};

const GO_TOOL: Subcommands = Subcommands {
    verbs: &[Verb::nested(&["dist"], &GO_DIST)],
    ..SUBCOMMANDS
};

const GO_DIST: Subcommands = Subcommands {
    verbs: &[Verb::reads(&["list"], &NAMES)],
    ..SUBCOMMANDS
};

/// `ninja -t TOOL` for the tools that read the build file and print: `targets`, `query`,
/// `graph`, `commands`, `inputs`, `rules`, `compdb`, `list`. Ninja runs them once the build
/// file is loaded, before it would regenerate the build file or open its logs, and stops
/// reading its own options at the tool (what follows is the tool's). Without `-t` it builds,
/// running the project's commands; `-t clean` and `-t cleandead` delete what was built.
fn ninja_tool(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const PRINTS: &[&str] = &[
        "targets", "query", "graph", "commands", "inputs", "rules", "compdb", "list",
    ];
    let Some(words) = shown_words(call.args) else {
        return Judgement::other(format!(
            "`{}` is given words only known when the line runs",
            call.program
        ));
    };
    let mut judgement = Judgement::whitelisted();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let (option, attached) = match word.get(..2) {
            Some(flag) if word.starts_with('-') && !word.starts_with("--") => {
                (flag, Some(&word[2..]).filter(|rest| !rest.is_empty()))
            }
            _ => (word, None),
        };
        let mut value = || attached.or_else(|| words.next());
        match option {
            "-t" => {
                return match value() {
                    Some(tool) if PRINTS.contains(&tool) => judgement,
                    Some(tool @ ("clean" | "cleandead")) => Judgement::destroys(format!(
                        "`{} -t {tool}` deletes the files the build made",
                        call.program
                    )),
                    Some(tool) => Judgement::other(format!(
                        "`{} -t {tool}` is not a tool known to only print",
                        call.program
                    )),
                    None => Judgement::other(format!("`{} -t` names no tool", call.program)),
                };
            }
            "-C" | "-f" => match value() {
                Some(path) => walker.check_path(&mut judgement, call.program, path),
                None => {
                    return Judgement::other(format!(
                        "`{} {option}` is given no value",
                        call.program
                    ));
                }
            },
            "-j" | "-k" | "-l" | "-d" | "-w" => {
                value();
            }
            "-v" | "--verbose" | "--quiet" => {}
            _ => break,
        }
    }
    Judgement::other(format!(
        "`{}` builds, running the commands of the project's build file (`-t targets` and the like only print)",
        call.program
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn toolchain_queries_read_and_their_removals_destroy() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("ninja -t targets", Safe),
            ("ninja -t targets all", Safe),
            ("ninja -C src -t query all", Safe),
            ("ninja -Csrc -tcommands", Safe),
            ("ninja -t compdb | jq length", Safe),
            ("samu -t graph", Safe),
            ("ninja -t clean", Destructive),
            ("ninja -t cleandead", Destructive),
            ("ninja -t browse", NotSafe),
            ("ninja -t restat", NotSafe),
            ("ninja", NotSafe),
            ("ninja -C src", NotSafe),
            ("ninja -n all", NotSafe),
            ("ninja -C /etc -t targets", Unknown),
            ("ninja -f /etc/build.ninja -t targets", Unknown),
            ("ninja -t targets > targets.txt", Destructive),
            ("gem list", Safe),
            ("go fmt ./...", Destructive),
            ("cmake --help-command-list", Safe),
            ("cmake --help-command add_executable", Safe),
            ("cmake --help-command-list out.txt", Unknown),
            ("cmake --help-command add_executable out.txt", Unknown),
            ("cmake -E capabilities", Safe),
            ("cmake -E sha256sum notes.txt", Safe),
            ("cmake -E cat /etc/shadow", Unknown),
            ("cmake -E rm -rf build", Destructive),
            ("cmake -E remove_directory build", Destructive),
            ("cmake -E env FOO=1 rm -rf x", Unknown),
            ("cmake -S . -B build", Unknown),
            ("cmake --build build", Unknown),
            ("cmake --version", Safe),
            ("rustc --print sysroot", Safe),
            ("rustc --print=cfg --target wasm32-unknown-unknown", Safe),
            ("rustc --print target-list --print host-tuple", Safe),
            ("rustc --print cfg=out.txt", Unknown),
            ("rustc --print crate-name main.rs", Unknown),
            ("rustc --print sysroot main.rs", Unknown),
            ("rustc --target ../x.json --print cfg", Unknown),
            ("rustc main.rs", Unknown),
            ("rustc -V", Safe),
            ("gem list --local", Safe),
            ("gem info rails", Safe),
            ("gem list -v 7.1 rails", Safe),
            ("gem contents rake", Safe),
            ("gem search htop", Unknown),
            ("gem list --remote rails", Unknown),
            ("gem list -r rails", Unknown),
            ("gem install rails", Unknown),
            ("gem uninstall rails", Destructive),
            ("gem cleanup", Destructive),
            ("gem --config-file x.rc list", Unknown),
            ("gem list --config-file /etc/x.rc", Unknown),
            ("conda list", Safe),
            ("conda list --name dev", Safe),
            ("conda env list", Safe),
            ("conda search numpy", Unknown),
            ("conda info --envs", Safe),
            ("conda info", Safe),
            ("conda info numpy", Unknown),
            ("conda list -p /opt/conda/envs/x", Unknown),
            ("conda install numpy", Unknown),
            ("conda env create -f env.yml", Unknown),
            ("conda env remove -n dev", Destructive),
            ("conda remove --all -n dev", Destructive),
            ("npm ls", Safe),
            ("npm ls --depth 0", Safe),
            ("npm list --json --all", Safe),
            ("npm view react version", Unknown),
            ("npm outdated", Unknown),
            ("npm config get registry", Safe),
            ("npm config set registry x", Unknown),
            ("npm config delete registry", Destructive),
            ("npm install", Unknown),
            ("npm run build", Unknown),
            ("npm ci", Destructive),
            ("npm uninstall react", Destructive),
            ("npm -g ls", Unknown),
            ("npm ls --prefix /opt/app", Unknown),
            ("npm ls > deps.txt", Destructive),
            ("pyenv versions", Safe),
            ("pyenv which python", Safe),
            ("rbenv version", Safe),
            ("plenv which app", Safe),
            ("pyenv global 3.11", Unknown),
            ("pyenv install 3.12", Unknown),
            ("plenv exec ls -l", Unknown),
            ("pyenv uninstall 3.8", Destructive),
            ("perlbrew list", Safe),
            ("perlbrew list-modules", Safe),
            ("perlbrew install perl-5.38", Unknown),
            ("perlbrew uninstall perl-5.30", Destructive),
            ("brew list", Safe),
            ("brew deps git", Safe),
            ("brew doctor", Safe),
            ("brew info git", Unknown),
            ("brew search git", Unknown),
            ("brew install git", Unknown),
            ("brew cleanup", Destructive),
            ("port installed", Safe),
            ("port echo outdated", Safe),
            ("port info demo", Safe),
            ("port install demo", Unknown),
            ("port uninstall demo", Destructive),
            ("go env", Safe),
            ("go env GOCACHE GOPATH", Safe),
            ("go env -json", Safe),
            ("go env -w GOPROXY=direct", Destructive),
            ("go version", Safe),
            ("go tool dist list", Safe),
            ("go tool dist install", Unknown),
            ("go tool compile x.go", Unknown),
            ("go build ./...", Unknown),
            ("go run main.go", NotSafe),
            ("go clean -modcache", Destructive),
            ("corelist File::Spec 0.83", Safe),
            ("corelist -a Data::Dumper", Safe),
        ]);
    }
}
