//! Every program the command assessor knows, one file per program family, behind one
//! registry: the name a command runs (`rm` for `/bin/rm`) finds its [`Program`], and its
//! [`Rule`] judges the words after it. A program's rules live in one place whatever the
//! verdict: `git.rs` holds `git log` (read-only) and `git push --force` (destructive) alike.
//! A program that is in no family is not on the read-only whitelist, so a person confirms it.
//!
//! Families (see "How to add a program" in ARCHITECTURE.md):
//! - [`coreutils`] — `ls`, `cat`, `head`, `sort`, `echo`, `test`, ... and `rm`, `mv`, `dd`,
//!   `cp`, `tee`, `chmod`.
//! - [`search`] — `grep`, `rg`. [`find`] — `find` and the command its `-exec` runs.
//! - [`inspect`] — `diff`, `cmp`, `file`, `hexdump`, `tree`, `xxd`, `jq`.
//! - [`readers`] — compressed-file readers and the compressors by form, `join`, `look`, `pr`,
//!   `strings`, `readelf`, `objdump`, `ag`, and facts about the machine (`free`, `nproc`).
//! - [`queries`] — the querying forms of `ip`, `ss`, `rpm`, `dpkg`, `apt`, `pacman`,
//!   `timedatectl`; `fd`, `bat`, `man` as readers.
//! - [`sed`], [`awk`] — text programs, each with a reader of its script language.
//! - [`tar`] — archives. [`git`] — git.
//! - [`containers`] — `docker`, `podman`, compose, `kubectl`, `terraform`.
//! - [`databases`] — `psql`, `mysql`, `sqlite3`, `redis-cli` (SQL given on the line is read
//!   by the SQL tool's assessor), `dropdb`, `mysqladmin`.
//! - [`system`] — disks, power, processes, accounts, services, cron, `hostname`.
//! - [`processes`] — `ps`, `pgrep`, `pidof`, `pstree`, `top -b -n N`, `lsof`: marked as
//!   listing processes, so they run without a click only where a line sees its own alone.
//! - [`systemd`] — `journalctl`, `systemd-delta`, `systemd-analyze`, `busctl` queries.
//! - [`links`] — the showing forms of `tc`, `devlink`, `rdma`, `bridge`, `vdpa`, `tipc`,
//!   `dcb`, `ifconfig`, `route`, `ethtool`.
//! - [`remote`] — `ssh`, `rsync`.
//! - [`wrappers`] — `sudo`, `env`, `timeout`, `nohup`, ... and `xargs`, `watch`, `at`.
//! - [`shells`] — `sh`/`bash`/..., `eval`, `source`, `trap`, `alias`, `export`, `cd`.
//! - [`interpreters`] — `python`, `perl`, `ruby`, `node`, `php`, `lua`.
//! - [`viewers`] — `eza`/`exa`, `lsd`, `dust`, `duf`, `tokei`, `pdfinfo`, `yq` (not
//!   `-i`/`-s`, which write).
//! - [`documents`] — `pandoc`, `xmlstarlet`'s queries, the csvkit readers, `xsv`,
//!   `datamash`, `htmlq`, `units`, `hexyl`, `7z l`, `unrar l`.
//! - [`checkers`] — formatters and linters in their reporting modes (`gofmt -l`,
//!   `rustfmt --check`, `black --diff`, `clang-format`, `shellcheck`), `nkf`, `jar t`; their
//!   writing modes (`-w`, `-i`, files without `--check`) are destructive.
//! - [`toolchains`] — the listing forms of `gem`, `conda`, `npm`, `pyenv`/`rbenv`/...,
//!   `perlbrew`, `brew`, `port`, and `go env`; their removals are destructive.
//! - [`utilities`] — small read-only utilities: `col`, `pathchk`, `getopt`, `pg_config`,
//!   `dpkg-buildflags`, `mountpoint`, fontconfig's and gettext's readers, `toe`, `perror`.
//! - [`hardware`] — `lspci`, `lsusb`, `sensors`, `dmidecode`, `blkid`, `udevadm info`,
//!   `hwclock` showing, `partx` listing, `e2freefrag`; their acting options wait.
//! - [`storage`] — LVM's reports, `mdadm --detail`, `zfs list`/`zpool status`, `btrfs`'s
//!   showing commands, `losetup` listing, `cryptsetup status`, `dmsetup ls`; their removing
//!   forms are destructive, their other forms wait.
//! - [`firewall`] — `iptables -L`/`-S`, `iptables-save`, `nft list`, `firewall-cmd
//!   --list-*`, `ufw status`; flushing and deleting forms are destructive.
//! - [`clients`] — daemons asked what they hold: `tmux ls`, `screen -ls`, `ssh-add -l`,
//!   `nmcli`'s showing forms, `snap list`, `flatpak list`; their removing forms destructive.
//! - [`monitors`] — more facts of the machine: `networkctl`, `resolvectl`, `bootctl`,
//!   `machinectl list`, `systemd-cgls`, `efibootmgr`, `mokutil --sb-state`, `conntrack -L`,
//!   `ipset list`, `cpupower frequency-info`, `vnstat`, `lshw`, `hwinfo`, `neofetch`.
//! - [`services`] — servers and desktop tools asked what they hold (`asterisk -rx "sip show
//!   peers"`, `wmctrl -l`, `multipass list`), configuration checks (`nginx -t`, `apachectl
//!   configtest`, `promtool check`), `cheat`, `cpan -l`, `ansible-galaxy list`, `run-parts
//!   --list`.
//! - [`about`] — any program asked only for its version or usage (`go version`,
//!   `docker run --help`), where its own rule does not already decide.
//! - [`table`] — the one table shape for flags and operands that read-only programs use;
//!   [`subcommands`] — the one table shape for programs with subcommands (`git`, `kubectl`,
//!   `systemctl`, `docker`, `redis-cli`, ...), a row per subcommand.

mod about;
mod awk;
mod checkers;
mod clients;
mod containers;
mod coreutils;
mod databases;
mod documents;
mod find;
mod firewall;
mod git;
mod hardware;
mod inspect;
mod interpreters;
mod links;
mod monitors;
mod named;
mod perl;
mod processes;
mod queries;
mod readers;
mod remote;
mod search;
mod sed;
mod services;
mod shells;
mod storage;
mod subcommands;
mod system;
mod systemd;
mod table;
mod tar;
mod toolchains;
mod utilities;
mod vcs;
mod viewers;
mod wrappers;

use std::collections::HashMap;
use std::sync::LazyLock;

use super::assess::{Invocation, Judgement, Walker};

pub(super) use coreutils::output_of;
pub(super) use shells::program_variable;

/// A judge of its own: what the command's words make it.
type Judge = fn(&mut Walker<'_>, &Invocation<'_>) -> Judgement;

/// How a program's words are judged.
enum Rule {
    /// Read-only, with the options and operands of a table row (`ls`, `grep`, `diff`).
    Table(&'static table::Table),
    /// Destructive whatever its arguments. The text completes "`rm` ...".
    Destroys(&'static str),
    /// Runs the command given as its operands after its own options (`sudo`, `timeout`).
    Wraps(&'static wrappers::Wrapper),
    /// Its first operand is a subcommand, each with a row of its own (`git`, `kubectl`).
    Subcommands(&'static subcommands::Subcommands),
    /// A rule of its own, for programs with scripts or forms that decide (`sed`, `find`).
    Judge(Judge),
}

/// One program, under each name it is installed as.
struct Program {
    names: &'static [&'static str],
    rule: Rule,
    /// It runs other programs or code given to it (shells, wrappers, interpreters, `find`
    /// with `-exec`, `sed` with `e`): a channel rule never covers it, since its flags say
    /// nothing of what it runs.
    runs_code: bool,
    /// It lists processes and what they hold (`ps`, `lsof`): read-only only where a line
    /// sees its own processes alone (a view with a private `/proc`), so the runner refuses
    /// it without a click where lines share the machine's `/proc`.
    lists_processes: bool,
    /// A program of GNU coreutils on a floor (`rm`, `mv`): `--help` or `--version` alone is
    /// read by its option parser first, printed, and nothing else happens, so that form is
    /// read-only although every other form is destructive.
    answers_standard_options: bool,
    /// A GNU binutils program (`nm`, `objdump`, `readelf`): an argument `@FILE` is replaced
    /// by the words the file holds, options among them, which the line does not show.
    reads_argument_files: bool,
}

impl Program {
    const fn new(names: &'static [&'static str], rule: Rule) -> Self {
        Self {
            names,
            rule,
            runs_code: false,
            lists_processes: false,
            answers_standard_options: false,
            reads_argument_files: false,
        }
    }

    const fn reading_argument_files(self) -> Self {
        Self {
            reads_argument_files: true,
            ..self
        }
    }

    const fn answering_standard_options(self) -> Self {
        Self {
            answers_standard_options: true,
            ..self
        }
    }

    const fn running_code(self) -> Self {
        Self {
            runs_code: true,
            ..self
        }
    }

    const fn listing_processes(self) -> Self {
        Self {
            lists_processes: true,
            ..self
        }
    }
}

/// Every family's programs. A family missing here is never consulted.
const FAMILIES: &[&[Program]] = &[
    coreutils::PROGRAMS,
    search::PROGRAMS,
    find::PROGRAMS,
    inspect::PROGRAMS,
    readers::PROGRAMS,
    queries::PROGRAMS,
    sed::PROGRAMS,
    awk::PROGRAMS,
    tar::PROGRAMS,
    git::PROGRAMS,
    containers::PROGRAMS,
    databases::PROGRAMS,
    system::PROGRAMS,
    processes::PROGRAMS,
    systemd::PROGRAMS,
    links::PROGRAMS,
    hardware::PROGRAMS,
    storage::PROGRAMS,
    firewall::PROGRAMS,
    clients::PROGRAMS,
    monitors::PROGRAMS,
    services::PROGRAMS,
    remote::PROGRAMS,
    wrappers::PROGRAMS,
    shells::PROGRAMS,
    interpreters::PROGRAMS,
    viewers::PROGRAMS,
    toolchains::PROGRAMS,
    checkers::PROGRAMS,
    documents::PROGRAMS,
    vcs::PROGRAMS,
    named::PROGRAMS,
    utilities::PROGRAMS,
];

/// Names that stand for a whole series (`mkfs.ext4`, `mkfs.xfs`, ... under `mkfs`).
const SERIES: &[(&str, &str)] = &[("mkfs.", "mkfs")];

static REGISTRY: LazyLock<HashMap<&'static str, &'static Program>> = LazyLock::new(|| {
    FAMILIES
        .iter()
        .flat_map(|family| family.iter())
        .flat_map(|program| program.names.iter().map(move |name| (*name, program)))
        .collect()
});

/// The program registered under `name` (a base name, `rm` rather than `/bin/rm`).
fn lookup(name: &str) -> Option<&'static Program> {
    let name = SERIES
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map_or(name, |(_, series)| series);
    REGISTRY
        .get(name)
        .or_else(|| REGISTRY.get(binutils_reader(name)?))
        .copied()
}

/// The binutils readers that cross and LLVM toolchains install under names of their own:
/// `x86_64-linux-gnu-nm`, `aarch64-linux-gnu-objdump`, `llvm-readelf-14`, `llvm-cxxfilt`.
/// Only the readers: a toolchain's `ar`, `strip` and `objcopy` rewrite files.
fn binutils_reader(name: &str) -> Option<&'static str> {
    const READERS: &[(&str, &str)] = &[
        ("nm", "nm"),
        ("objdump", "objdump"),
        ("readelf", "readelf"),
        ("readobj", "readelf"),
        ("size", "size"),
        ("strings", "strings"),
        ("c++filt", "c++filt"),
        ("cxxfilt", "c++filt"),
        ("addr2line", "addr2line"),
    ];
    let tool = match name.strip_prefix("llvm-") {
        Some(rest) => rest
            .rsplit_once('-')
            .filter(|(_, version)| {
                !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit())
            })
            .map_or(rest, |(tool, _)| tool),
        None => {
            let (triplet, tool) = name.rsplit_once('-')?;
            // A target triplet: `arch-vendor-os` or `arch-os-abi`, as GNU names them.
            let parts: Vec<&str> = triplet.split('-').collect();
            let plain = |part: &&str| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            };
            if !(3..=4).contains(&parts.len()) || !parts.iter().all(plain) {
                return None;
            }
            tool
        }
    };
    READERS
        .iter()
        .find(|(installed, _)| *installed == tool)
        .map(|(_, reader)| *reader)
}

/// What the program's rule says about one command (not about the commands it runs, which
/// the rule hands back to the walker).
pub(super) fn judge(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let registered = lookup(program);
    let mut judgement = match registered.map(|p| &p.rule) {
        None => Judgement::not_whitelisted(program),
        Some(Rule::Table(row)) => table::judge(walker, invocation, row),
        Some(Rule::Destroys(what)) => Judgement::destroys(format!("`{program}` {what}")),
        Some(Rule::Wraps(wrapper)) => wrappers::wrapped(walker, invocation, wrapper),
        Some(Rule::Subcommands(table)) => subcommands::judge(walker, invocation, table),
        Some(Rule::Judge(judge)) => judge(walker, invocation),
    };
    if registered.is_some_and(|p| p.reads_argument_files)
        && let Some(file) = invocation
            .args
            .iter()
            .find_map(|arg| arg.text()?.strip_prefix('@').filter(|f| !f.is_empty()))
    {
        judgement.unknown(format!(
            "`{program} @{file}` reads more arguments, options among them, from {file}, which the line does not show"
        ));
    }
    if registered.is_some_and(|p| p.answers_standard_options)
        && let [only] = invocation.args
        && matches!(only.text(), Some("--help" | "--version"))
        && only.pattern.is_none()
    {
        return Judgement::whitelisted();
    }
    // A program asked only about itself: what its own rule left unknown is read-only. A
    // floor (`Destroys`), a wrapper's command and a destructive verdict are never lifted.
    let liftable = !matches!(
        registered.map(|p| &p.rule),
        Some(Rule::Destroys(_) | Rule::Wraps(_))
    );
    if liftable
        && judgement.destructive.is_none()
        && (judgement.unknown.is_some() || !judgement.whitelisted)
        && about::asks_about_itself(
            invocation,
            about::Forms::of(
                program,
                registered.is_some_and(|p| p.runs_code),
                matches!(registered.map(|p| &p.rule), Some(Rule::Subcommands(_))),
                registered.is_none(),
            ),
        )
    {
        return Judgement::whitelisted();
    }
    // A program the rules do not know that says it deletes: the destructive floor, so the
    // model's `low` never decides it. (A known program's rule says which of its forms
    // delete; its words may be values this cannot tell, `mysqladmin -u drop status`.)
    if registered.is_none()
        && judgement.destructive.is_none()
        && let Some(why) = says_it_deletes(program, invocation.args)
    {
        judgement.destructive(why);
    }
    judgement
}

/// Subcommands of the programs the rules do not know that delete what they name (`yum
/// remove`, `vagrant destroy`, `zfs destroy`, `make clean`, `virsh undefine`).
const DELETING_WORDS: &[&str] = &[
    "remove",
    "rm",
    "rmi",
    "delete",
    "del",
    "destroy",
    "uninstall",
    "purge",
    "autoremove",
    "erase",
    "prune",
    "clean",
    "clear",
    "drop",
    "wipe",
    "undefine",
    "kill",
];

/// Why `program ARGS` says it deletes: a deleting subcommand word among its words, a
/// long option that deletes (`--delete`, `--remove-source-files`, `--purge`,
/// `--zero-superblock`), or a name that does (`lvremove`, `userdel`, `fkill`).
fn says_it_deletes(program: &str, args: &[crate::tools::command::words::Arg]) -> Option<String> {
    let name = program.rsplit('/').next().unwrap_or(program);
    if ["remove", "del", "delete", "kill"]
        .iter()
        .any(|end| name.ends_with(end) && name.len() > end.len())
        || matches!(name, "deluser" | "delgroup")
    {
        return Some(format!(
            "`{name}` deletes or ends what it names, by its name"
        ));
    }
    for arg in args {
        let Some(text) = arg.text() else {
            continue;
        };
        if DELETING_WORDS.contains(&text) {
            return Some(format!(
                "`{program} {text}` deletes what it names (a deleting subcommand of a program the rules do not know)"
            ));
        }
        let Some(long) = text.strip_prefix("--") else {
            continue;
        };
        let option = long.split_once('=').map_or(long, |(option, _)| option);
        if [
            "delete",
            "remove",
            "purge",
            "destroy",
            "wipe",
            "erase",
            "zero",
            "uninstall",
        ]
        .iter()
        .any(|verb| option.starts_with(verb))
        {
            return Some(format!("`{program} {text}` deletes what it names"));
        }
    }
    None
}

/// Whether `program` runs other programs or code given to it (see [`Program::runs_code`]).
pub(super) fn runs_other_code(program: &str) -> bool {
    lookup(program).is_some_and(|p| p.runs_code)
}

/// Whether `program` lists other processes (see [`Program::lists_processes`]).
pub(super) fn lists_processes(program: &str) -> bool {
    lookup(program).is_some_and(|p| p.lists_processes)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{FAMILIES, lookup, runs_other_code};

    /// Programs the rules do not know that say they delete are on the floor, as are the
    /// deleting forms of `apt`, `pip` and `pacman` by their rules. Neighbours that say
    /// nothing of deleting stay undecided (the model's `low` may run them in the walls),
    /// and a question about itself stays read-only.
    #[test]
    fn forms_that_say_they_delete_are_on_the_floor() {
        use crate::tools::command::tests::Expect::{Destructive, NotDestructive, Safe};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("apt remove curl", Destructive),
            ("apt-get purge curl", Destructive),
            ("yum remove htop", Destructive),
            ("pip uninstall requests", Destructive),
            ("cargo uninstall ripgrep", Destructive),
            ("helm uninstall rel", Destructive),
            ("zfs destroy pool/fs", Destructive),
            ("vagrant destroy", Destructive),
            ("make clean", Destructive),
            ("gradle clean build", Destructive),
            ("virsh undefine vm", Destructive),
            ("aws s3 rm s3://bucket/key", Destructive),
            ("gh repo delete x", Destructive),
            ("lvremove vg/lv", Destructive),
            ("userdel alice", Destructive),
            ("fkill 1337", Destructive),
            ("rsync -a --delete src/ dst/", Destructive),
            ("rsync -a --remove-source-files src/ dst/", Destructive),
            ("mdadm --zero-superblock /dev/sdb1", Destructive),
            ("pacman -Rns htop", Destructive),
            // Neighbours that say nothing of deleting.
            ("make test", NotDestructive),
            ("helm list", NotDestructive),
            ("zfs list", NotDestructive),
            ("apt install curl", NotDestructive),
            ("rsync -a src/ dst/", NotDestructive),
            ("mytool --cleanup-hint x", NotDestructive),
            ("delta a.txt b.txt", NotDestructive),
            // Read-only forms and questions are not judged by their words.
            ("vagrant destroy --help", Safe),
            ("git log --grep remove", Safe),
            ("grep -rn delete src", Safe),
            ("echo rm", Safe),
        ]);
    }

    #[test]
    fn no_program_is_registered_twice() {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for name in FAMILIES.iter().flat_map(|f| f.iter()).flat_map(|p| p.names) {
            *seen.entry(name).or_default() += 1;
        }
        let mut twice: Vec<&str> = seen
            .into_iter()
            .filter(|(_, count)| *count > 1)
            .map(|(name, _)| name)
            .collect();
        twice.sort_unstable();
        assert!(
            twice.is_empty(),
            "registered in more than one place: {twice:?}"
        );
    }

    #[test]
    fn a_series_is_found_under_its_name() {
        assert!(lookup("mkfs.ext4").is_some_and(|p| p.names.contains(&"mkfs")));
        assert!(lookup("mkfs").is_some());
        assert!(lookup("mkfsx").is_none());
    }

    #[test]
    fn unknown_programs_are_not_registered_and_run_no_code() {
        assert!(lookup("make").is_none());
        assert!(!runs_other_code("make"));
        assert!(runs_other_code("bash"));
        assert!(runs_other_code("find"));
        assert!(!runs_other_code("ls"));
    }
}
