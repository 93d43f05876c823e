//! Programs that answer questions about the machine's configuration and packages, in their
//! querying forms only: `ip addr` / `ip route show` (not `ip addr add`), `ss` and `netstat`
//! (not `ss -K`, which closes sockets), `findmnt`, the package managers' queries (`rpm -q`,
//! `dpkg -l`, `apt show`, `apt-cache policy`, `apt-mark showmanual`, `pacman -Q`), `systemctl status` and its
//! listings, `timedatectl` / `hostnamectl` / `localectl` status, and `fd`, `bat`, `tput`
//! and `man` as readers.
//!
//! Each program's other forms change the machine (`ip link set`, `apt install`, `rpm -e`,
//! `timedatectl set-time`) and are left to a person. Inside the sandbox these queries run
//! without network or the system's sockets; those that need the service manager's socket
//! (`systemctl status`) fail there instead of answering, which reveals nothing.

use super::subcommands::{
    Global, SUBCOMMANDS, SYSTEMD_ELSEWHERE, Subcommands, Verb, options_before_wait,
};
use super::table::{self, Effect, OUTPUT_FILE, Operands, Refusal, TABLE, Table, check_paths};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::options::{self, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["ip"], Rule::Judge(ip)),
    Program::new(
        &["ss"],
        Rule::Table(&Table {
            spec: Spec::values(
                "fAFND",
                &["family", "query", "socket", "filter", "net", "diag"],
            ),
            operands: Operands::Text,
            refused: &[
                Refusal {
                    options: &["K", "kill"],
                    effect: Effect::Writes,
                    what: "closes the sockets it lists",
                },
                Refusal {
                    options: &["D", "diag"],
                    effect: Effect::Writes,
                    what: "writes raw socket information to a file",
                },
                Refusal {
                    options: &["F", "filter", "N", "net"],
                    effect: Effect::Unsafe,
                    what: "reads a filter file or enters another network namespace",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        &["netstat"],
        Rule::Table(&Table {
            spec: Spec::values("A", &["protocol"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["findmnt"],
        Rule::Table(&Table {
            spec: Spec::values(
                "otFOSTdNwHM",
                &[
                    "output",
                    "types",
                    "tab-file",
                    "options",
                    "source",
                    "target",
                    "direction",
                    "task",
                    "timeout",
                    "mountpoint",
                ],
            ),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(&["openssl"], Rule::Judge(openssl)),
    Program::new(
        &["sar"],
        Rule::Table(&Table {
            spec: Spec::values("ABPIfnoqesimj", &["dev", "fs", "iface", "human"]),
            operands: Operands::Text,
            path_options: &["f"],
            refused: &[Refusal {
                options: &["o"],
                effect: Effect::Writes,
                what: "writes the readings to a file",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["systemd-escape"],
        Rule::Table(&Table {
            spec: Spec::values("", &["suffix", "template"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["uconv"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ftxo",
                &[
                    "from-code",
                    "to-code",
                    "callback",
                    "from-callback",
                    "to-callback",
                    "output",
                    "transliterate",
                ],
            ),
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(&["rpm"], Rule::Judge(rpm)),
    Program::new(
        // The build and host architectures, printed, queried (`-q`), checked (`-e`, `-i`)
        // or listed; `-c` runs a command with them set.
        &["dpkg-architecture"],
        Rule::Table(&Table {
            spec: Spec::values(
                "aAtTeiqWc",
                &[
                    "host-arch",
                    "target-arch",
                    "host-type",
                    "target-type",
                    "equal",
                    "is",
                    "query",
                    "command",
                    "match-wildcard",
                    "match-bits",
                    "match-endian",
                ],
            ),
            operands: Operands::Text,
            refused: &[Refusal {
                options: &["c", "command"],
                effect: Effect::Unsafe,
                what: "runs a command",
            }],
            ..TABLE
        }),
    ),
    Program::new(&["dpkg", "dpkg-query"], Rule::Judge(dpkg)),
    Program::new(
        &["apt", "apt-cache", "aptitude", "apt-mark"],
        Rule::Judge(apt),
    ),
    Program::new(&["pacman", "yay", "paru"], Rule::Judge(pacman)),
    Program::new(&["dnf", "yum", "dnf5", "microdnf"], Rule::Judge(dnf)),
    Program::new(&["perf"], Rule::Judge(perf_list)),
    Program::new(&["pip", "pip3"], Rule::Subcommands(&PIP)),
    Program::new(
        &["update-alternatives", "alternatives"],
        Rule::Judge(|_, call| alternatives(call)),
    ),
    Program::new(
        &["timedatectl", "hostnamectl", "localectl"],
        Rule::Subcommands(&CTL),
    ),
    Program::new(&["fd", "fdfind"], Rule::Judge(fd)),
    Program::new(
        &["bat", "batcat"],
        Rule::Table(&Table {
            spec: Spec::values(
                "lHmr",
                &[
                    "language",
                    "highlight-line",
                    "file-name",
                    "diff-context",
                    "tabs",
                    "wrap",
                    "terminal-width",
                    "color",
                    "italic-text",
                    "decorations",
                    "paging",
                    "pager",
                    "map-syntax",
                    "theme",
                    "style",
                    "line-range",
                ],
            ),
            refused: &[Refusal {
                options: &["pager"],
                effect: Effect::Unsafe,
                what: "runs a program of its choice on the output",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["tput"],
        Rule::Table(&Table {
            spec: Spec::values("T", &[]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["man"],
        Rule::Table(&Table {
            spec: Spec::values(
                "CMPSeLmpRrEHTsl",
                &[
                    "config-file",
                    "manpath",
                    "pager",
                    "sections",
                    "extension",
                    "locale",
                    "systems",
                    "preprocessor",
                    "recode",
                    "prompt",
                    "encoding",
                    "html",
                    "troff-device",
                    "local-file",
                ],
            )
            .optional("HTX"),
            path_options: &["C", "config-file", "l", "local-file"],
            refused: &[Refusal {
                options: &["P", "pager", "H", "html", "X", "gxditview", "Z", "ditroff"],
                effect: Effect::Unsafe,
                what: "runs a program of its choice on the page",
            }],
            ..TABLE
        }),
    ),
];

/// `apt`, `apt-cache`, `aptitude` and `apt-mark`: the querying subcommands, without `-o`/`-c` (configuration can
/// name commands apt runs).
fn apt(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const QUERIES: &[&str] = &[
        "list",
        "show",
        "search",
        "policy",
        "depends",
        "rdepends",
        "madison",
        "showpkg",
        "showsrc",
        "stats",
        "pkgnames",
        "dump",
        "dumpavail",
        "unmet",
        // aptitude's.
        "versions",
        "why",
        "why-not",
        // apt-mark's (its other subcommands mark packages).
        "showauto",
        "showmanual",
        "showhold",
        "showinstall",
        "showremove",
        "showpurge",
    ];
    let program = invocation.program;
    let mut verb = None;
    for word in invocation.args {
        let Some(text) = word.text() else {
            return Judgement::not_whitelisted(program);
        };
        if ["-o", "-c", "--option", "--config-file"]
            .iter()
            .any(|o| text.starts_with(o))
        {
            return Judgement::other(format!(
                "`{program} {text}` sets configuration, which can name commands it runs"
            ));
        }
        if verb.is_none() && !text.starts_with('-') {
            verb = Some(text);
        }
    }
    match verb {
        Some(verb) if QUERIES.contains(&verb) => Judgement::whitelisted(),
        Some(verb @ ("remove" | "purge" | "autoremove" | "autopurge" | "clean" | "autoclean")) => {
            Judgement::destroys(format!(
                "`{program} {verb}` removes packages or their files"
            ))
        }
        Some(verb) => Judgement::not_whitelisted(&format!("{program} {verb}")),
        None => Judgement::not_whitelisted(program),
    }
}

/// `dnf` and `yum`: the queries that read what is installed (`list installed`, `info
/// --installed`, `repoquery --installed`, `history` listed), or any query with `-C`
/// (`--cacheonly`), which reads the repositories' metadata from the cache; the other
/// queries (`search`, `provides`, `repolist`, `info NAME`) fetch it over the network first,
/// and wait. Options that set configuration or another root, which can name plugins and
/// commands they run (`--setopt`, `-c`, `--installroot`, ...), wait wherever they stand.
/// Removals are destructive; installs, upgrades and `history undo` wait.
fn dnf(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const QUERIES: &[&str] = &[
        "list",
        "info",
        "search",
        "repolist",
        "repoinfo",
        "repoquery",
        "provides",
        "whatprovides",
        "deplist",
        "check-update",
        "updateinfo",
        "grouplist",
        "groupinfo",
    ];
    const CONFIGURES: &[&str] = &[
        "-c",
        "--config",
        "--setopt",
        "--installroot",
        "--repofrompath",
        "--enableplugin",
        "--pluginpath",
        "--pluginconfpath",
        "--destdir",
        "--downloaddir",
        "--downloadonly",
    ];
    let program = invocation.program;
    let mut words = Vec::new();
    let mut cache_only = false;
    let mut installed = false;
    for word in invocation.args {
        let Some(text) = word.text() else {
            return Judgement::not_whitelisted(program);
        };
        if CONFIGURES.iter().any(|option| text.starts_with(option)) {
            return Judgement::other(format!(
                "`{program} {text}` sets configuration, a root or a download directory"
            ));
        }
        cache_only |= matches!(text, "-C" | "--cacheonly");
        installed |= text == "--installed";
        if !text.starts_with('-') {
            words.push(text);
        }
    }
    let local = match words.as_slice() {
        [verb, ..] if cache_only => QUERIES.contains(verb) || *verb == "history",
        ["list" | "info", "installed", ..] => true,
        ["list" | "info" | "repoquery", ..] => installed,
        ["history"] | ["history", "list" | "info", ..] => true,
        _ => false,
    };
    match words.as_slice() {
        _ if local => Judgement::whitelisted(),
        [verb, ..] if QUERIES.contains(verb) => Judgement::other(format!(
            "`{program} {verb}` fetches the repositories' metadata over the network first (`-C` reads the cache alone)"
        )),
        [verb @ ("remove" | "erase" | "autoremove" | "clean"), ..] => Judgement::destroys(format!(
            "`{program} {verb}` removes packages or their files"
        )),
        [verb, ..] => Judgement::not_whitelisted(&format!("{program} {verb}")),
        [] => Judgement::not_whitelisted(program),
    }
}

/// `timedatectl`, `hostnamectl`, `localectl`: status and listings.
const CTL: Subcommands = Subcommands {
    global: Global::Options(Spec::values("HMp", &["host", "machine", "property"])),
    verbs: &[Verb::reads(
        &[
            "status",
            "show",
            "list-timezones",
            "timesync-status",
            "show-timesync",
            "list-locales",
            "list-keymaps",
            "list-x11-keymap-models",
            "list-x11-keymap-layouts",
            "list-x11-keymap-variants",
            "list-x11-keymap-options",
        ],
        &Table {
            operands: Operands::Text,
            ..TABLE
        },
    )],
    implied: Some("status"),
    elsewhere: SYSTEMD_ELSEWHERE,
    ..SUBCOMMANDS
};

/// `pip`'s listing subcommands read the installed packages. Any option before the
/// subcommand waits (`--python` runs another interpreter, `--log` writes a file), and so do
/// those options after it; package names are text.
const PIP: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &["list", "show", "freeze", "check"],
            &Table {
                spec: Spec::values("r", &["format", "path", "exclude", "requirement"]),
                operands: Operands::Text,
                path_options: &["path", "r", "requirement"],
                refused: &[Refusal {
                    options: &[
                        "python",
                        "log",
                        "log-file",
                        "cache-dir",
                        "src",
                        "exists-action",
                        "index-url",
                        "extra-index-url",
                        "find-links",
                        "outdated",
                        "uptodate",
                        "o",
                        "u",
                    ],
                    effect: Effect::Unsafe,
                    what: "runs another interpreter, writes a file, or asks a package index",
                }],
                ..TABLE
            },
        ),
        Verb::destroys(&["uninstall"], "removes installed packages"),
    ],
    without: None,
    ..SUBCOMMANDS
};

/// `update-alternatives --display`, `--list`, `--query` and `--get-selections` report;
/// `--remove` and `--remove-all` delete alternatives, and the other actions (`--install`,
/// `--set`, `--config`, `--auto`, ...) or another administrative directory wait.
fn alternatives(call: &Invocation<'_>) -> Judgement {
    const REPORTS: &[&str] = &["--display", "--list", "--query", "--get-selections"];
    const HARMLESS: &[&str] = &["--quiet", "--verbose", "--debug"];
    let mut reporting = false;
    for word in call.args {
        match word.text() {
            Some(text) if REPORTS.contains(&text) => reporting = true,
            Some(text) if HARMLESS.contains(&text) => {}
            Some(text) if !text.starts_with('-') => {}
            _ if word.may_be(|t| matches!(t, "--remove" | "--remove-all")) => {
                return Judgement::destroys(format!(
                    "`{} {}` removes alternatives",
                    call.program, word.raw
                ));
            }
            _ => {
                return Judgement::other(format!(
                    "`{} {}` changes or moves the alternatives",
                    call.program, word.raw
                ));
            }
        }
    }
    if reporting {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!(
            "`{}` without a report is not read here",
            call.program
        ))
    }
}

/// Words of `ip` that change the network configuration, or run a command in a namespace.
const IP_CHANGES: &[&str] = &[
    "add", "del", "delete", "change", "chg", "replace", "set", "flush", "append", "prepend",
    "exec", "update", "restore", "attach", "detach",
];

/// `ip [options] object [show|list|get ...]`: the object's listing forms read.
fn ip(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut words = invocation.args.iter();
    // Options before the object; these take a value.
    let mut object = None;
    while let Some(word) = words.next() {
        let Some(text) = word.text() else {
            return Judgement::destroys(format!(
                "`ip` is given `{}`, only known when the line runs, which may change the network configuration",
                word.raw
            ));
        };
        match text {
            "-n" | "-netns" | "-f" | "-family" | "-l" | "-loops" | "-rc" | "-rcvbuf" | "-b"
            | "-batch" => {
                if matches!(text, "-b" | "-batch") {
                    return Judgement::other("`ip -batch` runs the commands a file holds");
                }
                if matches!(text, "-n" | "-netns") {
                    return Judgement::other(
                        "`ip -netns` enters another network namespace, another container's",
                    );
                }
                words.next();
            }
            _ if text.starts_with('-') => {}
            _ => {
                object = Some(text);
                break;
            }
        }
    }
    if object.is_none() {
        return Judgement::whitelisted();
    }
    for word in words {
        let Some(text) = word.text() else {
            return Judgement::destroys(format!(
                "`ip` is given `{}`, only known when the line runs, which may change the network configuration",
                word.raw
            ));
        };
        // `ip monitor` follows events forever, and `monitor file F` reads a saved log.
        if matches!(text, "monitor" | "file") {
            return Judgement::not_whitelisted(&format!("ip ... {text}"));
        }
        if IP_CHANGES.contains(&text) {
            return Judgement::destroys(format!(
                "`ip ... {text}` changes the machine's network configuration"
            ));
        }
    }
    Judgement::whitelisted()
}

/// `openssl` commands that print what a certificate, key, request or list holds, or a
/// digest of files: their output goes to standard output. Not the key commands (`rsa`,
/// `ec`, `pkey`), which print private keys. Options that write a file
/// (`-out`, `-keyout`, `-CAcreateserial`), load code (`-engine`, `-provider`, a `-config`
/// that can name either) or generate a key into a default file (`req -new`) are left to a
/// person, and the files named by `-in`, `-key`, `-CAfile`, ... are checked like operands.
fn openssl(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const READS: &[&str] = &[
        "x509",
        "req",
        "crl",
        "crl2pkcs7",
        "asn1parse",
        "ciphers",
        "dgst",
        "md5",
        "sha1",
        "sha256",
        "sha384",
        "sha512",
        "version",
        "list",
        "ecparam",
        "verify",
        "pkcs7",
        "errstr",
        "prime",
        "rand",
        "base64",
    ];
    const REFUSED: &[&str] = &[
        "out",
        "keyout",
        "writerand",
        "engine",
        "provider",
        "provider-path",
        "config",
        "CAcreateserial",
        "CAserial",
        "new",
        "newkey",
        "x509",
        "genkey",
        "sign",
        "signkey",
    ];
    const PATHS: &[&str] = &[
        "in",
        "key",
        "inkey",
        "CAfile",
        "CApath",
        "CA",
        "CAkey",
        "certfile",
        "signature",
        "cert",
        "untrusted",
        "trusted",
        "CRLfile",
        "rand",
        "paramfile",
        "peerkey",
        "prverify",
        "verify",
        "oid",
        "genconf",
    ];
    const VALUES: &[&str] = &[
        "inform",
        "outform",
        "keyform",
        "CAform",
        "CAkeyform",
        "certform",
        "nameopt",
        "certopt",
        "passin",
        "passout",
        "pass",
        "sigopt",
        "days",
        "set_serial",
        "subj",
        "name",
        "digest",
        "offset",
        "length",
        "strparse",
        "genstr",
        "purpose",
        "checkend",
        "mac",
        "macopt",
        "hmac",
        "keyfrom",
        "s",
        "section",
        "reqexts",
        "extensions",
        "ext",
        "addtrust",
        "addreject",
        "setalias",
        "ciphersuites",
        "convform",
        "param_enc",
        "propquery",
        "vfyopt",
        "pkeyopt",
        "dateopt",
        "num",
        "bits",
        "checks",
    ];
    let program = invocation.program;
    let Some(command) = invocation.args.first().and_then(|a| a.text()) else {
        return Judgement::not_whitelisted(program);
    };
    if !READS.contains(&command) {
        return Judgement::not_whitelisted(&format!("{program} {command}"));
    }
    let mut judgement = Judgement::whitelisted();
    let mut words = invocation.args[1..].iter();
    let digest = matches!(
        command,
        "dgst" | "md5" | "sha1" | "sha256" | "sha384" | "sha512"
    );
    while let Some(word) = words.next() {
        let Some(text) = word.text() else {
            judgement.destructive(format!(
                "`{program} {command}` is given `{}`, which may become `-out` (write a file) when the line runs",
                word.raw
            ));
            continue;
        };
        let Some(name) = text.strip_prefix('-') else {
            if digest {
                walker.check_path(&mut judgement, program, text);
            }
            continue;
        };
        // `x509 -x509toreq`, `req -x509`: only `req` makes a certificate with `-x509`.
        let refused = REFUSED.contains(&name) && !(name == "x509" && command != "req");
        if refused {
            judgement.unknown(format!(
                "`{program} {command} -{name}` writes a file or loads code"
            ));
        } else if PATHS.contains(&name) {
            if let Some(value) = words.next().and_then(|w| w.text()) {
                walker.check_path(&mut judgement, program, value);
            }
        } else if VALUES.contains(&name)
            && let Some(value) = words.next().and_then(|w| w.text())
            && let Some(file) = value.strip_prefix("file:")
        {
            walker.check_path(&mut judgement, program, file);
        }
    }
    judgement
}

/// `rpm -q...` and `rpm -V...` query and verify; every other mode installs, erases or
/// rewrites the package database. Options that load or expand macros (`--define`, `--eval`,
/// `--macros`, `--rcfile`: a macro can run a shell command), pipe the output to a command, or
/// point rpm at another database are left to a person.
fn rpm(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const REFUSED: &[&str] = &[
        "--define", "-D", "--eval", "-E", "--pipe", "--dbpath", "--root", "-r", "--macros",
        "--rcfile", "--load",
    ];
    let first = invocation.args.iter().find_map(|a| a.text()).unwrap_or("");
    let checksig = first == "--checksig"
        || (first.starts_with('-')
            && !first.starts_with("--")
            && first.chars().nth(1) == Some('K'));
    let querying = matches!(first, "--query" | "--verify" | "--querytags" | "--version")
        || checksig
        || (first.starts_with('-')
            && !first.starts_with("--")
            && matches!(first.chars().nth(1), Some('q' | 'V')));
    let refused = invocation.args.iter().any(|a| {
        a.text()
            .is_none_or(|t| REFUSED.iter().any(|r| t.starts_with(r)))
    });
    if !querying || refused {
        return Judgement::not_whitelisted("rpm");
    }
    let mut judgement = Judgement::whitelisted();
    // `rpm -qp PKG` and `rpm -K PKG` read the package file; `rpm -qf FILE` only looks the
    // name up.
    if checksig || first.contains('p') && !first.starts_with("--") {
        let files: Vec<_> = invocation
            .args
            .iter()
            .filter(|a| a.text().is_some_and(|t| !t.starts_with('-')))
            .collect();
        check_paths(walker, &mut judgement, "rpm", &files);
    }
    judgement
}

/// `dpkg -l`, `-s`, `-L`, `-S`, `-p`, `-c`, `-I` and the `--print-...` forms only report.
fn dpkg(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const SHORT: &[&str] = &["-l", "-s", "-L", "-S", "-p", "-c", "-I", "-W"];
    const LONG: &[&str] = &[
        "--list",
        "--status",
        "--listfiles",
        "--search",
        "--print-avail",
        "--contents",
        "--info",
        "--show",
        "--print-architecture",
        "--print-foreign-architectures",
        "--get-selections",
        "--version",
        "--help",
        "--compare-versions",
    ];
    // `-f FORMAT` / `--showformat=FORMAT` only chooses how `-W` prints, wherever it stands.
    let mut mode = None;
    let mut rest = Vec::new();
    let mut words = invocation.args.iter();
    while let Some(arg) = words.next() {
        let Some(text) = arg.text() else {
            return Judgement::not_whitelisted(invocation.program);
        };
        if text == "-f" || text == "--showformat" {
            words.next();
        } else if text.starts_with("-f") || text.starts_with("--showformat=") {
        } else if mode.is_none() {
            mode = Some(text.split_once('=').map_or(text, |(m, _)| m));
        } else {
            rest.push(arg);
        }
    }
    let Some(mode) = mode else {
        return Judgement::not_whitelisted(invocation.program);
    };
    if !(SHORT.contains(&mode) || LONG.contains(&mode)) {
        return Judgement::not_whitelisted(invocation.program);
    }
    let mut judgement = Judgement::whitelisted();
    // Archives given to `-c`/`-I` are files; other operands name packages or patterns.
    if matches!(mode, "-c" | "--contents" | "-I" | "--info") {
        check_paths(walker, &mut judgement, invocation.program, &rest);
    }
    if rest
        .iter()
        .any(|a| a.text().is_none_or(|t| t.starts_with('-')))
    {
        judgement.unknown(format!(
            "`{} {mode}` is given a further option, which may change what it does",
            invocation.program
        ));
    }
    judgement
}

/// `pacman -Q...` queries the local database and `-Ss`/`-Si` the sync database without
/// refreshing it; every other operation installs, removes or downloads. The AUR helpers
/// `yay` and `paru` pass `-Q` to pacman (their `-S` forms also ask the AUR, over the
/// network, and alone they upgrade the system).
fn pacman(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let Some(first) = invocation.args.first().and_then(|a| a.text()) else {
        return Judgement::not_whitelisted(program);
    };
    let letters = first.strip_prefix('-').filter(|l| !l.starts_with('-'));
    let reads = match letters {
        Some(l) if l.starts_with('Q') => true,
        Some(l) if l.starts_with('S') && program == "pacman" => {
            l.len() > 1
                && l[1..]
                    .chars()
                    .all(|c| matches!(c, 's' | 'i' | 'q' | 'l' | 'g'))
        }
        _ => false,
    };
    let rest_plain = invocation.args[1..]
        .iter()
        .all(|a| a.text().is_some_and(|t| !t.starts_with('-') || t == "-q"));
    if reads && rest_plain {
        Judgement::whitelisted()
    } else if letters.is_some_and(|l| l.starts_with('R')) || first == "--remove" {
        Judgement::destroys(format!("`{program} -R` removes packages"))
    } else {
        Judgement::not_whitelisted(program)
    }
}

/// `perf list [FILTER...]` prints the events perf knows; every other form records,
/// traces or runs a program (and a line without a click cannot open performance events).
fn perf_list(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match crate::tools::command::words::shown_words(call.args).as_deref() {
        Some(["list", rest @ ..])
            if rest.iter().all(|w| {
                !w.starts_with('-')
                    || matches!(*w, "--long-desc" | "--details" | "--json" | "--no-desc")
            }) =>
        {
            Judgement::whitelisted()
        }
        // The metrics `perf iostat` could count, listed.
        Some(["iostat", "list"]) => Judgement::whitelisted(),
        _ => Judgement::not_whitelisted("perf"),
    }
}

/// `fd`'s options and operands: a pattern, then the directories to search.
const FD: Table = Table {
    spec: Spec::values(
        "edtEcjS",
        &[
            "extension",
            "max-depth",
            "min-depth",
            "exact-depth",
            "type",
            "exclude",
            "ignore-file",
            "color",
            "threads",
            "size",
            "changed-within",
            "changed-before",
            "owner",
            "max-results",
            "base-directory",
            "path-separator",
            "search-path",
            "format",
            "batch-size",
        ],
    ),
    operands: Operands::PatternThenPaths(&[]),
    path_options: &["ignore-file", "base-directory", "search-path"],
    ..TABLE
};

/// `fd`: a search, judged by [`FD`]; with `-x`/`--exec` (once per file) or `-X`/
/// `--exec-batch` (once, with every file) the words after it, up to a `;`, are a command,
/// judged one level deeper like `find -exec`'s. The placeholders `{}`, `{/}`, `{//}`, `{.}`,
/// `{/.}` stand for a path under the directory searched, never an option; a command with
/// none gets the path (with `-X`, every path) as its last word.
fn fd(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const EXEC: &[&str] = &["-x", "--exec", "-X", "--exec-batch"];
    const PLACEHOLDERS: &[&str] = &["{}", "{/}", "{//}", "{.}", "{/.}"];
    let args = call.args;
    let Some(at) = args
        .iter()
        .position(|arg| arg.text().is_some_and(|t| EXEC.contains(&t)))
    else {
        let mut judgement = table::judge(walker, call, &FD);
        if let Some(bundle) = args.iter().find(|arg| {
            arg.text().is_none_or(|t| {
                t.starts_with("--exec")
                    || (t.starts_with('-') && !t.starts_with("--") && t.contains(['x', 'X']))
            })
        }) {
            judgement.unknown(format!(
                "`{} {}` may run a command on every file it finds",
                call.program, bundle.raw
            ));
        }
        return judgement;
    };
    let batch = matches!(args[at].text(), Some("-X" | "--exec-batch"));
    let end = args[at + 1..]
        .iter()
        .position(|arg| arg.text() == Some(";"))
        .map_or(args.len(), |n| at + 1 + n);
    let own: Vec<Arg> = args[..at]
        .iter()
        .chain(args.get(end + 1..).unwrap_or_default())
        .cloned()
        .collect();
    let own_call = Invocation {
        program: call.program,
        args: &own,
        stdin: call.stdin,
        depth: call.depth,
    };
    let mut judgement = fd(walker, &own_call);
    let root = {
        let items = options::parse(&own, &FD.spec);
        options::operands(&items)
            .get(1)
            .and_then(|arg| arg.text())
            .unwrap_or(".")
            .trim_end_matches('/')
            .to_owned()
    };
    let path = || Arg {
        value: Some(format!("{root}/{{}}")),
        several: batch,
        ..Arg::opaque("{}")
    };
    let mut command: Vec<Arg> = args[at + 1..end]
        .iter()
        .enumerate()
        .map(|(n, arg)| match arg.text() {
            Some(t) if n > 0 && PLACEHOLDERS.contains(&t) => path(),
            Some(t) if PLACEHOLDERS.iter().any(|p| t.contains(p)) => Arg::opaque(t),
            _ => arg.clone(),
        })
        .collect();
    if command.is_empty() {
        judgement.unknown(format!(
            "`{} {}` is given no command",
            call.program, args[at].raw
        ));
        return judgement;
    }
    let placed = args[at + 1..end].iter().any(|arg| {
        arg.text()
            .is_some_and(|t| PLACEHOLDERS.iter().any(|p| t.contains(p)))
    });
    if !placed {
        command.push(path());
    }
    walker.judge(&command, &Stdin::Inherited, call.depth + 1);
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn query_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("dpkg-architecture", Safe),
            ("yay -Qe", Safe),
            ("paru -Qi foo", Safe),
            ("yay -Ss foo", NotSafe),
            ("yay", NotSafe),
            ("yay -Rns foo", Destructive),
            ("perf list", Safe),
            ("perf list cache", Safe),
            ("perf iostat list", Safe),
            ("perf iostat --all -- ls", Unknown),
            ("perf record ls", NotSafe),
            ("dpkg-architecture -elinux-alpha", Safe),
            ("dpkg-architecture -amips -elinux-mips", Safe),
            ("dpkg-architecture -ilinux-any", Safe),
            ("dpkg-architecture -q DEB_HOST_MULTIARCH", Safe),
            ("dpkg-architecture -c make", Unknown),
            ("dpkg-architecture --command make", Unknown),
            ("rpm -K htop.rpm", Safe),
            ("update-alternatives --display vi", Safe),
            ("update-alternatives --list editor", Safe),
            ("update-alternatives --get-selections", Safe),
            ("update-alternatives --set editor /usr/bin/vim", Unknown),
            (
                "update-alternatives --remove editor /usr/bin/vim",
                Destructive,
            ),
            ("update-alternatives --altdir /tmp/x --display vi", Unknown),
            ("rpm --checksig htop.rpm", Safe),
            ("rpm -K /tmp/htop.rpm", Unknown),
            ("aptitude search error", Safe),
            ("aptitude show vim", Safe),
            ("aptitude why libc6", Safe),
            ("aptitude install vim", Unknown),
            ("aptitude -o Dir::Etc=/x search vim", Unknown),
            ("ip a", Safe),
            ("ip -br addr show dev eth0", Safe),
            ("ip -4 route list", Safe),
            ("ip route get 1.1.1.1", Safe),
            ("ip link set eth0 down", Destructive),
            ("ip addr add 10.0.0.2/24 dev eth0", Destructive),
            ("ip neigh flush all", Destructive),
            ("ip netns exec blue sh", Destructive),
            ("ip -batch cmds.txt", Unknown),
            ("ip monitor file /var/log/rtmon.log", Unknown),
            ("ip route $VERB", Destructive),
            ("ss -tlnp", Safe),
            ("ss -K dst 10.0.0.1", Destructive),
            ("netstat -tulpn", Safe),
            ("findmnt -t ext4", Safe),
            ("rpm -qa | grep ssl", Safe),
            ("openssl x509 -text -noout -in server.crt", Safe),
            ("openssl req -text -noout -in server.csr", Safe),
            ("openssl dgst -md5 -hex notes.txt", Safe),
            ("openssl ciphers -v 'ALL:!aNULL'", Safe),
            ("openssl x509 -in /etc/ssl/private/key.pem -text", Unknown),
            ("openssl dgst -sha256 /etc/shadow", Unknown),
            ("openssl x509 -in server.crt -out copy.crt", Unknown),
            ("openssl req -new -newkey rsa:2048 -nodes", Unknown),
            ("openssl x509 -engine /tmp/evil.so -in server.crt", Unknown),
            ("openssl rsa -in key.pem -text -noout", Unknown),
            (
                "openssl x509 -in server.crt -passin file:/etc/shadow",
                Unknown,
            ),
            ("openssl enc -aes256 -in notes.txt -out x", Unknown),
            ("openssl s_client -connect example.com:443", Unknown),
            ("sar -u 2 5", Safe),
            ("sar -o /tmp/sa 1 3", Destructive),
            ("systemd-escape -p /tmp/waldi", Safe),
            ("uconv -f utf-8 -x any-name notes.txt", Safe),
            ("uconv -o out.txt notes.txt", Destructive),
            ("rpm -qf /usr/bin/ls", Safe),
            ("rpm -qpl notes.rpm", Safe),
            ("rpm -qp /tmp/x.rpm", Unknown),
            ("rpm -e openssl", Unknown),
            ("rpm -q --eval '%(id)' bash", Unknown),
            ("rpm -q --define='x %(id)' bash", Unknown),
            ("dpkg -l | grep ssh", Safe),
            ("dpkg -S /usr/bin/ls", Safe),
            ("dpkg -c notes.deb", Safe),
            ("dpkg -i notes.deb", Unknown),
            ("dpkg -l --admindir=/tmp/x", Unknown),
            ("dpkg-query -W -f='${Package} ${Version}\\n'", Safe),
            ("dpkg-query --showformat='${Package}\\n' --show bash", Safe),
            ("dpkg-query -f '${Package}\\n' -W", Safe),
            ("dpkg-query -f '${Package}\\n'", Unknown),
            ("dpkg-query -f x -W --admindir=/tmp/x", Unknown),
            ("dpkg -f x -i notes.deb", Unknown),
            ("apt show htop", Safe),
            ("apt-cache policy htop", Safe),
            ("pacman -Rns htop", Destructive),
            ("apt remove curl", Destructive),
            ("apt-get purge curl", NotSafe),
            ("apt autoremove", Destructive),
            ("apt install curl", NotSafe),
            ("apt-mark showmanual", Safe),
            ("apt-mark showhold htop", Safe),
            ("apt-mark hold htop", NotSafe),
            ("apt-mark minimize-manual", NotSafe),
            ("apt-mark -o Dir::State=x showmanual", NotSafe),
            ("apt install htop", Unknown),
            ("apt -o APT::Update::Pre-Invoke::=id show htop", Unknown),
            ("pip list", Safe),
            ("pip3 list --format json", Safe),
            ("pip show requests", Safe),
            ("pip show -f requests", Safe),
            ("pip freeze", Safe),
            ("pip freeze | grep -i django", Safe),
            ("pip check", Safe),
            ("pip --version", Safe),
            ("pip freeze > requirements.txt", Destructive),
            ("pip install requests", Unknown),
            ("pip uninstall -y requests", Destructive),
            ("pip --python /tmp/evil list", Unknown),
            ("pip --python=/tmp/evil list", Unknown),
            ("pip list --python /tmp/evil", Unknown),
            ("pip list --log out.txt", Unknown),
            ("pip list --outdated", Unknown),
            ("pip list -o", Unknown),
            ("pip list --path /etc", Unknown),
            ("pip freeze -r /etc/reqs.txt", Unknown),
            ("pip $VERB", Destructive),
            ("pip download requests", Unknown),
            ("pacman -Qe", Safe),
            ("pacman -Ss vim", Safe),
            ("pacman -Syu", Unknown),
            ("pacman -S vim", Unknown),
            ("timedatectl status", Safe),
            ("ip -n ns1 addr", Unknown),
            ("ip -netns ns1 route show", Unknown),
            ("ip -4 addr", Safe),
            ("timedatectl set-time '2026-01-01'", Unknown),
            ("hostnamectl", Safe),
            // Another machine (ssh) or a container, wherever the option stands.
            ("timedatectl -H user@host", Unknown),
            ("hostnamectl --host=db1 status", Unknown),
            ("localectl status -M c1", Unknown),
            ("systemctl -H user@host status nginx", Unknown),
            ("systemctl status -H host nginx", Unknown),
            ("systemctl status -qH host nginx", Unknown),
            ("systemctl --machine=c1 list-units", Unknown),
            ("systemctl status -n 50 nginx", Safe),
            ("systemctl status nginx", Safe),
            ("systemctl list-units --type=service", Safe),
            ("systemctl restart nginx", Unknown),
            ("systemctl stop nginx", Destructive),
            ("fd -e rs src", Safe),
            // `fd -x`/`-X` runs its command on each file found, or on all of them.
            ("fd -x rm", Destructive),
            ("fd --exec-batch rm -rf", Destructive),
            ("fd -x wc -l", Safe),
            ("fd -e txt -x cat {}", Safe),
            ("fd -X wc -l", Safe),
            ("fd -x cat {} \\; -e txt", Safe),
            ("fd -e txt -X uniq", Destructive),
            ("fd -x uniq {} {}", Destructive),
            ("fd -x sed -i s/a/b/ {}", Destructive),
            ("fd -x sh -c 'echo {}'", NotSafe),
            ("fd -e jpg -x convert {} {.}.png", NotSafe),
            ("fd . /etc -x cat", Unknown),
            ("fd -Hx cat", NotSafe),
            ("fd -x", NotSafe),
            ("bat notes.txt", Safe),
            ("bat --pager 'sh -c id' notes.txt", Unknown),
            ("tput cols", Safe),
            ("man 7 ascii", Safe),
            ("man /etc/shadow", Unknown),
            ("man -P 'sh -c id' ls", Unknown),
            ("man -l /etc/shadow", Unknown),
        ]);
    }
}
