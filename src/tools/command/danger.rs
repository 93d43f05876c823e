//! Commands known to destroy, overwrite or stop things.
//!
//! Some are destructive whatever their arguments (`rm`, `dd`, `kill`, `mv`, ...); others
//! only in some forms (`chmod -R`, `systemctl stop`, `docker rm`, `crontab -r`). For the
//! latter, a word whose value is only known when the line runs may be the destructive form,
//! so it counts as one: the line is then destructive in doubt.

use super::assess::{Invocation, Judgement, Walker, is_sink};
use super::options::{self, Item, Spec};
use super::words::Arg;

/// The judgement for destructive commands, or `None` when the command is not one of them.
pub(super) fn judge(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Option<Judgement> {
    let program = invocation.program;
    let args = invocation.args;
    let always = |what: &str| Some(Judgement::destroys(format!("`{program}` {what}")));
    match program {
        "rm" => always("deletes files"),
        "rmdir" => always("removes directories"),
        "unlink" => always("deletes a file"),
        "shred" => always("overwrites files to destroy their contents"),
        "dd" => always("copies raw data and can overwrite files and whole disks"),
        "truncate" => always("cuts files to a new size, discarding their data"),
        "mv" => always("moves files, removing the old name and possibly replacing the target"),
        "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "sgdisk"
        | "parted" | "blkdiscard" => always("rewrites disks or partitions"),
        _ if program == "mkfs" || program.starts_with("mkfs.") => {
            always("creates a file system, erasing what the device held")
        }
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" | "telinit" => {
            always("stops or restarts the machine")
        }
        "kill" | "pkill" | "killall" | "killall5" | "skill" | "xkill" => {
            always("terminates processes")
        }
        "srm" | "wipe" => always("overwrites and deletes files"),
        "fuser" => Some(fuser(args)),
        "userdel" | "deluser" | "groupdel" | "delgroup" => always("deletes accounts"),
        "chmod" | "chown" | "chgrp" => Some(recursive_permissions(program, args)),
        "crontab" => Some(crontab(args)),
        "systemctl" => Some(systemctl(args)),
        "service" => Some(service(args)),
        "kubectl" => Some(kubectl(walker, invocation)),
        "terraform" | "tofu" => Some(terraform(program, args)),
        "docker" | "podman" => Some(docker(walker, invocation)),
        "docker-compose" | "podman-compose" => Some(compose(program, args)),
        "tee" => Some(tee(args)),
        "cp" | "install" => Some(copy(walker, program, args)),
        "rsync" => Some(rsync(args)),
        _ => None,
    }
}

/// Whether a parsed option list holds the short flag or long option (abbreviations
/// accepted), or a word only known at run time (which may be it).
fn has_option(items: &[Item<'_>], short: Option<char>, long: Option<&str>) -> bool {
    items
        .iter()
        .any(|item| matches!(item, Item::Opaque(_)) || item.is(short, long, true))
}

fn recursive_permissions(program: &str, args: &[Arg]) -> Judgement {
    // `chmod -x file` is a mode, not an option, but `R` is never a mode letter.
    let recursive = args.iter().any(|arg| {
        arg.may_be(|text| {
            (text.starts_with('-') && !text.starts_with("--") && text.contains('R'))
                || text
                    .strip_prefix("--")
                    .is_some_and(|long| options::long_matches(long, "recursive"))
        })
    });
    if recursive {
        Judgement::destroys(format!(
            "`{program} -R` changes ownership or permissions of a whole tree at once"
        ))
    } else {
        Judgement::not_whitelisted(program)
    }
}

fn crontab(args: &[Arg]) -> Judgement {
    let items = options::parse(args, &Spec::values("u", &[]));
    if has_option(&items, Some('r'), Some("remove")) {
        Judgement::destroys("`crontab -r` deletes the user's crontab")
    } else {
        Judgement::not_whitelisted("crontab")
    }
}

const SYSTEMCTL: Spec = Spec::values(
    "tspPHMon",
    &[
        "type",
        "signal",
        "property",
        "host",
        "machine",
        "output",
        "lines",
        "state",
        "kill-whom",
        "kill-value",
        "job-mode",
        "root",
        "image",
        "what",
        "timestamp",
        "boot-loader-menu",
        "boot-loader-entry",
        "reboot-argument",
        "message",
        "drop-in",
        "when",
        "check-inhibitors",
        "preset-mode",
    ],
);

fn systemctl(args: &[Arg]) -> Judgement {
    const STOPPING: &[&str] = &[
        "stop",
        "kill",
        "disable",
        "mask",
        "poweroff",
        "reboot",
        "halt",
        "kexec",
        "suspend",
        "hibernate",
        "hybrid-sleep",
        "suspend-then-hibernate",
        "soft-reboot",
        "rescue",
        "emergency",
        "isolate",
        "default",
        "exit",
        "switch-root",
        "clean",
    ];
    let items = options::parse(args, &SYSTEMCTL);
    match options::operands(&items).first() {
        Some(verb) if verb.may_be(|v| STOPPING.contains(&v)) => Judgement::destroys(format!(
            "`systemctl {}` stops, disables or powers off services or the machine",
            verb.raw
        )),
        _ => Judgement::not_whitelisted("systemctl"),
    }
}

fn service(args: &[Arg]) -> Judgement {
    match args.get(1) {
        Some(action) if action.may_be(|a| matches!(a, "stop" | "force-stop")) => {
            Judgement::destroys(format!(
                "`service {} {}` stops a service",
                args[0].raw, action.raw
            ))
        }
        _ => Judgement::not_whitelisted("service"),
    }
}

const KUBECTL: Spec = Spec::values(
    "nsv",
    &[
        "namespace",
        "context",
        "cluster",
        "user",
        "kubeconfig",
        "server",
        "token",
        "as",
        "as-group",
        "as-uid",
        "cache-dir",
        "certificate-authority",
        "client-certificate",
        "client-key",
        "request-timeout",
        "tls-server-name",
        "v",
    ],
)
.exact();

fn kubectl(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let items = options::parse(args, &KUBECTL);
    let operands = options::operands(&items);
    let Some(verb) = operands.first() else {
        return Judgement::not_whitelisted("kubectl");
    };
    if verb.may_be(|v| matches!(v, "delete" | "drain")) {
        return Judgement::destroys(format!(
            "`kubectl {}` deletes or evicts cluster resources",
            verb.raw
        ));
    }
    if verb.text() == Some("exec") {
        // `kubectl exec pod -- cmd ...` runs cmd in the pod.
        if let Some(split) = args.iter().position(|a| a.text() == Some("--")) {
            walker.judge(&args[split + 1..], invocation.stdin, invocation.depth + 1);
        }
    }
    Judgement::not_whitelisted("kubectl")
}

fn terraform(program: &str, args: &[Arg]) -> Judgement {
    let operands: Vec<&Arg> = args
        .iter()
        .filter(|a| a.may_be(|t| !t.starts_with('-')))
        .collect();
    let Some(verb) = operands.first() else {
        return Judgement::not_whitelisted(program);
    };
    let destroy_flag = args
        .iter()
        .any(|a| a.may_be(|t| t == "-destroy" || t == "--destroy" || t.starts_with("-destroy=")));
    if verb.may_be(|v| v == "destroy") || (verb.text() == Some("apply") && destroy_flag) {
        return Judgement::destroys(format!(
            "`{program} {}` destroys managed infrastructure",
            verb.raw
        ));
    }
    Judgement::not_whitelisted(program)
}

const DOCKER: Spec = Spec::values(
    "Hcl",
    &[
        "host",
        "context",
        "config",
        "log-level",
        "tlscacert",
        "tlscert",
        "tlskey",
    ],
)
.exact()
.posix();

fn docker(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let args = invocation.args;
    let items = options::parse(args, &DOCKER);
    let operands = options::operands(&items);
    let Some(verb) = operands.first() else {
        return Judgement::not_whitelisted(program);
    };
    let object_verb = operands
        .iter()
        .skip(1)
        .find(|a| a.may_be(|t| !t.starts_with('-')));
    let removes = |v: &str| matches!(v, "rm" | "remove" | "rmi" | "prune" | "kill");
    let destructive = verb.may_be(|v| matches!(v, "rm" | "rmi" | "kill"))
        || (verb.may_be(|v| {
            matches!(
                v,
                "container" | "image" | "volume" | "network" | "system" | "builder" | "buildx"
            )
        }) && object_verb.is_some_and(|o| o.may_be(removes)))
        || (verb.text() == Some("compose")
            && object_verb.is_some_and(|o| o.text() == Some("down"))
            && args.iter().any(|a| {
                a.may_be(|t| matches!(t, "-v" | "--volumes" | "--rmi") || t.starts_with("--rmi="))
            }));
    if destructive {
        return Judgement::destroys(format!(
            "`{program} {}` removes or kills containers, images, volumes or networks",
            operands
                .iter()
                .take(2)
                .map(|a| a.raw.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    if verb.text() == Some("exec") {
        // `docker exec [options] container cmd ...`
        let exec_spec = Spec::values(
            "euw",
            &["env", "env-file", "user", "workdir", "detach-keys"],
        )
        .exact()
        .posix();
        let start = args
            .iter()
            .position(|a| a.text() == Some("exec"))
            .map_or(0, |i| i + 1);
        let rest = &args[start..];
        let exec_items = options::parse(rest, &exec_spec);
        let exec_operands = options::operands(&exec_items);
        if exec_operands.len() > 1
            && let Some(at) = rest.iter().position(|a| std::ptr::eq(a, exec_operands[1]))
        {
            walker.judge(&rest[at..], invocation.stdin, invocation.depth + 1);
        }
    }
    Judgement::not_whitelisted(program)
}

fn tee(args: &[Arg]) -> Judgement {
    let items = options::parse(args, &Spec::NONE);
    let files: Vec<&Arg> = options::operands(&items)
        .into_iter()
        .filter(|a| a.may_be(|t| !is_sink(t)))
        .collect();
    match files.first() {
        Some(file) => Judgement::destroys(format!(
            "`tee` writes to the file {}, replacing or growing it",
            file.raw
        )),
        None => Judgement::not_whitelisted("tee"),
    }
}

fn rsync(args: &[Arg]) -> Judgement {
    let deletes = args
        .iter()
        .any(|a| a.may_be(|t| t.starts_with("--del") || t == "--remove-source-files"));
    if deletes {
        Judgement::destroys("`rsync --delete` removes files at the destination")
    } else {
        Judgement::not_whitelisted("rsync")
    }
}

fn fuser(args: &[Arg]) -> Judgement {
    let kills = args
        .iter()
        .any(|a| a.may_be(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('k')));
    if kills {
        Judgement::destroys("`fuser -k` kills the processes using a file")
    } else {
        Judgement::not_whitelisted("fuser")
    }
}

const COPY: Spec = Spec::values(
    "tSmogb",
    &[
        "target-directory",
        "suffix",
        "sparse",
        "no-preserve",
        "mode",
        "owner",
        "group",
        "strip-program",
    ],
);

/// `cp`/`install` replace the target when it exists (and no `-n` stops them); a target
/// only known at run time may be any existing file.
fn copy(walker: &Walker<'_>, program: &str, args: &[Arg]) -> Judgement {
    let items = options::parse(args, &COPY);
    if items
        .iter()
        .any(|i| i.named(&["n", "no-clobber"], true) || i.is(None, Some("update=none"), false))
    {
        return Judgement::not_whitelisted(program);
    }
    let directory = items
        .iter()
        .find(|i| i.named(&["t", "target-directory"], true))
        .and_then(|i| i.value());
    let operands = options::operands(&items);
    let (target, sources): (Option<&str>, &[&Arg]) = match directory {
        Some(value) => (value.text, &operands[..]),
        None => match operands.split_last() {
            Some((target, sources)) if !sources.is_empty() => {
                if target.text().is_none() {
                    return Judgement::destroys(format!(
                        "`{program}` copies onto `{}`, which may be an existing file",
                        target.raw
                    ));
                }
                (target.text(), sources)
            }
            _ => return Judgement::not_whitelisted(program),
        },
    };
    let Some(target) = target else {
        return Judgement::not_whitelisted(program);
    };
    let root = walker.workspace().root();
    let target_path = root.join(target);
    let clobbered = if target_path.is_dir() {
        sources.iter().filter_map(|s| s.text()).find_map(|source| {
            let name = std::path::Path::new(source).file_name()?;
            let path = target_path.join(name);
            path.exists().then(|| path.display().to_string())
        })
    } else {
        target_path.exists().then(|| target.to_owned())
    };
    match clobbered {
        Some(path) => Judgement::destroys(format!("`{program}` replaces the existing file {path}")),
        None => Judgement::not_whitelisted(program),
    }
}

/// `docker-compose down -v` (like `docker compose down -v`) deletes the project's volumes.
fn compose(program: &str, args: &[Arg]) -> Judgement {
    let down = args.iter().any(|a| a.may_be(|t| t == "down"));
    let volumes = args.iter().any(|a| {
        a.may_be(|t| matches!(t, "-v" | "--volumes" | "--rmi") || t.starts_with("--rmi="))
    });
    if down && volumes {
        Judgement::destroys(format!("`{program} down -v` deletes the project's volumes"))
    } else {
        Judgement::not_whitelisted(program)
    }
}
