//! Other machines: `ssh host cmd` runs its words as a script there (judged like one here),
//! `rsync` with `--delete` or `--remove-source-files` removes files, and `ssh-keygen -l -f`
//! prints the fingerprints of a file of public keys (a file that may hold a private key
//! waits, and every other form makes, changes or removes keys, or edits `known_hosts`);
//! `gpg` lists keys or verifies a signature, and `gpgv` verifies one (neither with another
//! home, a photo viewer, a key server or an output file).

use super::shells::{run_joined, script_from_input};
use super::table;
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::options::{self, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["ssh"], Rule::Judge(ssh)).running_code(),
    Program::new(&["ssh-keygen"], Rule::Judge(ssh_keygen)),
    Program::new(&["rsync"], Rule::Judge(rsync)),
    Program::new(&["gpg", "gpg2"], Rule::Judge(gpg)),
    Program::new(
        &["gpgv", "gpgv2"],
        Rule::Table(&table::Table {
            spec: Spec::values("o", &["keyring", "output", "status-fd", "weak-digest"]),
            path_options: &["keyring"],
            refused: &[
                table::Refusal {
                    options: &["o", "output"],
                    effect: table::Effect::Writes,
                    what: "writes the signed data to a file, replacing it",
                },
                table::Refusal {
                    options: &["homedir"],
                    effect: table::Effect::Unsafe,
                    what: "reads its configuration from another directory",
                },
            ],
            ..table::TABLE
        }),
    ),
];

/// `gpg` listing keys (`-k`, `--list-keys`, `-K`, `--list-secret-keys`, `--fingerprint`,
/// `--show-keys FILE`, `--list-packets FILE`) or verifying a signature (`--verify SIG
/// [DATA]`), with `--with-colons`, `--keyid-format`, `--with-fingerprint`, `-v`. A line
/// without a click runs it with an empty private home, so only keys given as files are
/// there to list. Never with options that name another home or configuration, show photos
/// (a viewer it would run), fetch keys, or write (`-o`, `--import`, `--decrypt`, ...).
fn gpg(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const ACTS: &[&str] = &[
        "-k",
        "--list-keys",
        "--list-public-keys",
        "-K",
        "--list-secret-keys",
        "--fingerprint",
        "--show-keys",
        "--list-packets",
        "--verify",
    ];
    const FLAGS: &[&str] = &[
        "--with-colons",
        "--with-fingerprint",
        "--with-keygrip",
        "--with-subkey-fingerprint",
        "-v",
        "--verbose",
        "-q",
        "--quiet",
        "--batch",
        "--no-tty",
        "--no-auto-key-retrieve",
    ];
    let mut acts = false;
    let mut files = Vec::new();
    let mut words = invocation.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            Some(act) if ACTS.contains(&act) => acts = true,
            Some(flag) if FLAGS.contains(&flag) => {}
            Some("--keyid-format") => {
                words.next();
            }
            Some(text) if text.starts_with("--keyid-format=") => {}
            Some(text) if !text.starts_with('-') || text == "-" => files.push(word),
            _ => {
                return Judgement::other(format!(
                    "`gpg {}` is not one of the options that only list keys or verify a signature",
                    word.raw
                ));
            }
        }
    }
    if !acts {
        return Judgement::other(
            "`gpg` without a listing or `--verify` signs, encrypts, decrypts or imports",
        );
    }
    let mut judgement = Judgement::whitelisted();
    table::check_paths(walker, &mut judgement, "gpg", &files);
    judgement
}

const SSH: Spec = Spec::values("BbcDEeFIiJLlmOoPpQRSWw", &[]).exact();

/// `ssh host cmd ...` runs the words as a script on the remote host.
fn ssh(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let (_, start) = options::split_operands(invocation.args, &SSH);
    let command = invocation.args.get(start + 1..).unwrap_or_default();
    if command.is_empty() {
        if start < invocation.args.len() && !matches!(invocation.stdin, Stdin::Inherited) {
            return script_from_input(walker, "ssh", invocation.stdin, invocation.depth + 1);
        }
        return Judgement::other("`ssh` opens a shell on another machine");
    }
    run_joined(
        walker,
        invocation,
        command,
        "runs a command on another machine",
    )
}

fn rsync(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let deletes = args
        .iter()
        .any(|a| a.may_be(|t| t.starts_with("--del") || t == "--remove-source-files"));
    if deletes {
        return Judgement::destroys("`rsync --delete` removes files at the destination");
    }
    rsync_dry_run(walker, args).unwrap_or_else(|| Judgement::not_whitelisted("rsync"))
}

/// `rsync -n` (`--dry-run`) between local directories lists what it would copy and copies
/// nothing. Even then `--log-file` and the batch options write files, and a remote shell
/// (`-e`), a daemon or another machine (`host:path`, `rsync://`) would be reached: those
/// are not read here. `None` when the call is not such a dry run.
fn rsync_dry_run(walker: &Walker<'_>, args: &[Arg]) -> Option<Judgement> {
    const RSYNC: Spec = Spec::values(
        "eBfTM",
        &[
            "rsh",
            "rsync-path",
            "filter",
            "exclude",
            "exclude-from",
            "include",
            "include-from",
            "files-from",
            "temp-dir",
            "compare-dest",
            "copy-dest",
            "link-dest",
            "backup-dir",
            "suffix",
            "log-file",
            "log-file-format",
            "write-batch",
            "only-write-batch",
            "read-batch",
            "partial-dir",
            "timeout",
            "contimeout",
            "port",
            "sockopts",
            "out-format",
            "info",
            "debug",
            "chmod",
            "chown",
            "usermap",
            "groupmap",
            "max-size",
            "min-size",
            "max-delete",
            "bwlimit",
            "protocol",
            "iconv",
            "checksum-choice",
            "compress-choice",
            "compress-level",
            "skip-compress",
            "password-file",
            "modify-window",
            "block-size",
            "outbuf",
            "max-alloc",
            "remote-option",
            "address",
            "config",
            "dparam",
        ],
    );
    const ELSEWHERE: &[&str] = &[
        "e",
        "rsh",
        "rsync-path",
        "M",
        "remote-option",
        "log-file",
        "write-batch",
        "only-write-batch",
        "read-batch",
        "password-file",
        "daemon",
        "config",
        "dparam",
        "address",
        "port",
        "server",
        "sender",
    ];
    let items = options::parse(args, &RSYNC);
    let dry = items
        .iter()
        .any(|item| item.named(&["n", "dry-run"], RSYNC.abbreviations));
    if !dry || table::opaque(&items).is_some() {
        return None;
    }
    let mut judgement = Judgement::whitelisted();
    for item in &items {
        if item.named(ELSEWHERE, RSYNC.abbreviations) {
            judgement.unknown(format!(
                "`rsync {}` writes a file even in a dry run, or reaches another program or machine",
                item.shown()
            ));
        }
        if item.named(
            &[
                "exclude-from",
                "include-from",
                "files-from",
                "compare-dest",
                "copy-dest",
                "link-dest",
            ],
            RSYNC.abbreviations,
        ) {
            table::check_value(walker, &mut judgement, "rsync", item);
        }
    }
    for operand in options::operands(&items) {
        let text = operand.text()?;
        // rsync reads `host:path` as another machine's path when the `:` comes before any
        // `/`, and `host::module` or `rsync://` as a daemon's.
        let remote = text.contains("::")
            || text.starts_with("rsync://")
            || text
                .split('/')
                .next()
                .is_some_and(|first| first.contains(':'));
        if remote {
            judgement.unknown(format!(
                "`rsync` is given `{text}`, another machine's path, reached over the network"
            ));
        } else {
            walker.check_path(&mut judgement, "rsync", text);
        }
    }
    Some(judgement)
}

/// `ssh-keygen -l -f FILE [-E HASH] [-v]` prints the fingerprints of the public keys in a
/// file (`*.pub`, `known_hosts`, `authorized_keys`). Given another file it would read what
/// may be a private key, and it waits; any other option generates, converts, signs or
/// changes keys or edits `known_hosts`.
fn ssh_keygen(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &Spec::values("fE", &[]));
    let mut judgement = Judgement::whitelisted();
    let mut lists = false;
    let mut keys = false;
    for item in &items {
        match item {
            options::Item::Short { flag: 'l', .. } => lists = true,
            options::Item::Short {
                flag: 'v' | 'q' | 'E',
                ..
            } => {}
            options::Item::Short {
                flag: 'f', value, ..
            } => match value.and_then(|v| v.text) {
                Some(path) if holds_public_keys(path) => {
                    keys = true;
                    walker.check_path(&mut judgement, "ssh-keygen", path);
                }
                Some(path) => judgement.unknown(format!(
                    "`ssh-keygen -f {path}` may read a private key (a public key file ends in .pub)"
                )),
                None => {
                    judgement.unknown("`ssh-keygen -f` reads a key only known when the line runs")
                }
            },
            _ => judgement.unknown(format!(
                "`ssh-keygen {}` makes, changes or removes keys",
                item.shown()
            )),
        }
    }
    if !lists {
        judgement.unknown("`ssh-keygen` without `-l` makes, changes or removes keys");
    } else if !keys {
        judgement.unknown("`ssh-keygen -l` without `-f` asks for a key file on its input");
    }
    judgement
}

/// Files of public keys only: `*.pub`, `known_hosts`, `authorized_keys`. Any other may be a
/// private key, which is never read without a click.
fn holds_public_keys(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".pub") || name.starts_with("known_hosts") || name.starts_with("authorized_keys")
}

#[cfg(test)]
mod tests {
    #[test]
    fn remote_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("gpg --list-keys", Safe),
            ("gpg -K --with-colons", Safe),
            ("gpg --verify notes.txt.sig notes.txt", Safe),
            ("gpg --show-keys --keyid-format long key.asc", Safe),
            ("gpg --verify /etc/x.sig", Unknown),
            ("gpg --import key.asc", Unknown),
            ("gpg -d secret.gpg", Unknown),
            ("gpg --list-keys --homedir .gnupg", Unknown),
            ("gpg --list-keys --list-options show-photos", Unknown),
            ("gpg -o out --verify x.sig", Unknown),
            ("gpg --recv-keys ABCD", Unknown),
            ("gpgv notes.txt.sig notes.txt", Safe),
            ("gpgv --keyring ./keys.kbx x.sig", Safe),
            ("gpgv -o out.txt x.sig", Destructive),
            ("gpgv --keyring /etc/keys.kbx x.sig", Unknown),
            ("gpgv --homedir .gnupg x.sig", Unknown),
            ("ssh host ls", Unknown),
            ("rsync -n -av src/ backup/", Safe),
            ("rsync -avn --exclude-from=notes.txt src/ backup/", Safe),
            ("rsync -av src/ backup/", NotSafe),
            ("rsync -n -av src/ host:backup/", NotSafe),
            ("rsync -n -av rsync://host/mod/ backup/", NotSafe),
            ("rsync -n -e ssh src/ backup/", NotSafe),
            ("rsync -n --log-file=log.txt src/ backup/", NotSafe),
            ("rsync -n --write-batch=b src/ backup/", NotSafe),
            ("rsync -n -av --delete src/ backup/", Destructive),
            ("rsync -n -av /etc/ backup/", Unknown),
            ("rsync -n --files-from=/etc/list src/ backup/", Unknown),
            ("rsync -a --delete src/ dst/", Destructive),
            ("ssh-keygen -l -f id.pub", Safe),
            ("ssh-keygen -lf src/known_hosts", Safe),
            ("ssh-keygen -l -E md5 -f authorized_keys", Safe),
            ("ssh-keygen -lv -f id.pub", Safe),
            ("ssh-keygen -lf key.pem", Unknown),
            ("ssh-keygen -l -f id_ed25519", Unknown),
            ("ssh-keygen -l", Unknown),
            ("ssh-keygen -l -f ../outside.pub", Unknown),
            ("ssh-keygen -l -f ~/.ssh/id_rsa.pub", NotSafe),
            ("ssh-keygen -l -f /etc/ssh/ssh_host_rsa_key", Unknown),
            ("ssh-keygen -t ed25519 -f key", Unknown),
            ("ssh-keygen -R host", Unknown),
            ("ssh-keygen -p -f notes.txt", Unknown),
            ("ssh-keygen -l -y -f notes.txt", Unknown),
            ("ssh-keygen", Unknown),
        ]);
    }
}
