//! Clients of the machine's and the user's daemons, asked what they hold: terminal
//! multiplexers' sessions (`tmux ls`, `screen -ls`), the keys an SSH agent holds (`ssh-add
//! -l`/`-L`: fingerprints and public keys), NetworkManager's devices and connections
//! (`nmcli`'s showing forms, never `--show-secrets` or `wifi show-password`), the disks
//! UDisks knows (`udisksctl status`/`info`), a D-Bus object's interfaces (`gdbus
//! introspect`), installed snaps and flatpaks. A line without a click reaches no daemon's socket, so there these fail
//! and say so; every other form (attaching, adding or deleting keys, connecting, turning a
//! radio off) waits, and the removing ones (`ssh-add -d`/`-D`, `nmcli connection delete`,
//! `tmux kill-*`, `snap remove`, `flatpak uninstall`) are destructive.

use super::subcommands::by_prefix as resolve;
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["tmux"], Rule::Judge(tmux)),
    Program::new(&["screen"], Rule::Judge(screen)),
    Program::new(&["ssh-add"], Rule::Judge(ssh_add)),
    Program::new(&["nmcli"], Rule::Judge(nmcli)),
    Program::new(&["udisksctl"], Rule::Judge(udisksctl)),
    Program::new(&["gdbus"], Rule::Judge(gdbus)),
    Program::new(&["snap"], Rule::Judge(snap)),
    Program::new(&["flatpak"], Rule::Judge(flatpak)),
];

fn words<'a>(call: &Invocation<'a>) -> Option<Vec<&'a str>> {
    call.args.iter().map(Arg::text).collect()
}

fn unknown_words(program: &str) -> Judgement {
    Judgement::other(format!(
        "`{program}` is given a word only known when the line runs"
    ))
}

/// `tmux ls` and the other `list-*` commands, without global options (a configuration file,
/// another server's socket). A format may hold `#(command)`, which tmux runs in a shell.
fn tmux(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const LISTS: &[&str] = &[
        "ls",
        "list-sessions",
        "lsw",
        "list-windows",
        "lsp",
        "list-panes",
        "lsc",
        "list-clients",
        "lscm",
        "list-commands",
        "lsk",
        "list-keys",
    ];
    let Some(words) = words(call) else {
        return unknown_words("tmux");
    };
    if let Some(word) = words.iter().find(|w| w.contains("#(")) {
        return Judgement::other(format!(
            "`tmux ... {word}` holds `#(...)`, a command tmux runs in a shell"
        ));
    }
    match words.split_first() {
        Some((verb, _)) if LISTS.contains(verb) => Judgement::whitelisted(),
        Some((verb, _)) if verb.starts_with("kill-") => Judgement::destroys(format!(
            "`tmux {verb}` ends sessions, windows or the server, and what runs in them"
        )),
        _ => Judgement::other(
            "`tmux` without `ls` or another `list-*` command starts, attaches to or changes a session",
        ),
    }
}

/// `screen -ls`/`-list` (with a session name to match); every other form starts or
/// attaches to a session, `-X` sends it commands.
fn screen(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match words(call).as_deref() {
        Some(["-ls" | "-list"] | ["-ls" | "-list", _]) => Judgement::whitelisted(),
        Some(_) => Judgement::other(
            "`screen` without `-ls` starts, attaches to or sends commands to a session",
        ),
        None => unknown_words("screen"),
    }
}

/// `ssh-add -l`/`-L` (with `-E HASH`): the agent's keys, as fingerprints or public keys.
/// `-d`/`-D` delete keys from it; every other form adds a key, locks the agent or sets a
/// lifetime.
fn ssh_add(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = words(call) else {
        return unknown_words("ssh-add");
    };
    if words.iter().any(|w| *w == "-d" || *w == "-D") {
        return Judgement::destroys("`ssh-add -d`/`-D` deletes keys from the agent");
    }
    match words.as_slice() {
        ["-l" | "-L"] | ["-l" | "-L", "-E", _] | ["-E", _, "-l" | "-L"] => Judgement::whitelisted(),
        _ => Judgement::other(
            "`ssh-add` without only `-l` or `-L` adds keys to the agent or changes it",
        ),
    }
}

/// `nmcli [-t -p -m MODE -c WHEN -f FIELDS -g FIELDS -e WHEN -w SECS] OBJECT [COMMAND
/// ...]` in its showing forms: `general` (`status`, `permissions`, `hostname` and `logging`
/// without a value), `networking` (alone or `connectivity`), `radio` (a radio's state
/// without `on`/`off`), `connection show`, `device` (`status`, `show`, `wifi [list]`, `lldp
/// [list]`). Objects and commands may be any prefix nmcli accepts, resolved against the
/// whole list of their level. Never `-s`/`--show-secrets` (passwords), `-a`/`--ask`.
fn nmcli(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const OBJECTS: &[&str] = &[
        "general",
        "networking",
        "radio",
        "connection",
        "device",
        "agent",
        "monitor",
    ];
    let Some(words) = words(call) else {
        return unknown_words("nmcli");
    };
    let wait = |what: String| Judgement::other(what);
    let mut at = 0;
    while let Some(word) = words.get(at).filter(|w| w.starts_with('-')) {
        match *word {
            "-t" | "--terse" | "-p" | "--pretty" => {}
            "-m" | "--mode" | "-c" | "--colors" | "-f" | "--fields" | "-g" | "--get-values"
            | "-e" | "--escape" | "-w" | "--wait" => at += 1,
            _ => {
                return wait(format!(
                    "`nmcli {word}` is not an option of its showing forms"
                ));
            }
        }
        at += 1;
    }
    let rest = &words[at.min(words.len())..];
    // nmcli takes options with one dash or two and by any prefix (`-show-s`), so after the
    // object only `--active` and `--order` (of `connection show`) are read as options.
    if let Some(option) = rest
        .iter()
        .find(|w| w.starts_with('-') && !matches!(**w, "--active" | "--order"))
    {
        return wait(format!(
            "`nmcli ... {option}` is not an option of its showing forms (`--show-secrets` shows passwords, `--ask` asks for them)"
        ));
    }
    let Some((object, rest)) = rest.split_first() else {
        // `nmcli` alone prints every device's state.
        return Judgement::whitelisted();
    };
    let command = |names: &[&'static str], default: &'static str| -> Option<&'static str> {
        match rest.first() {
            None => Some(default),
            Some(given) => resolve(given, names),
        }
    };
    let shows = match resolve(object, OBJECTS) {
        Some("general") => match command(
            &["status", "hostname", "permissions", "logging", "reload"],
            "status",
        ) {
            Some("status" | "permissions") => rest.len() <= 1,
            Some("hostname" | "logging") => rest.len() == 1,
            _ => false,
        },
        Some("networking") => match rest {
            [] => true,
            [given] => resolve(given, &["on", "off", "connectivity"]) == Some("connectivity"),
            [given, check] => {
                resolve(given, &["on", "off", "connectivity"]) == Some("connectivity")
                    && *check == "check"
            }
            _ => false,
        },
        Some("radio") => match rest {
            [] => true,
            [radio] => resolve(radio, &["all", "wifi", "wwan"]).is_some(),
            _ => false,
        },
        Some("connection") => {
            let commands = &[
                "show", "up", "down", "add", "modify", "clone", "edit", "delete", "monitor",
                "reload", "load", "import", "export", "migrate",
            ];
            match command(commands, "show") {
                Some("show") => true,
                Some("delete") => {
                    return Judgement::destroys(
                        "`nmcli connection delete` deletes connection profiles",
                    );
                }
                _ => false,
            }
        }
        Some("device") => {
            let commands = &[
                "status",
                "show",
                "set",
                "connect",
                "reapply",
                "modify",
                "disconnect",
                "delete",
                "monitor",
                "wifi",
                "lldp",
                "up",
                "down",
            ];
            match command(commands, "status") {
                Some("status" | "show") => true,
                Some("wifi") => match rest.get(1..).unwrap_or_default() {
                    [] => true,
                    [sub, args @ ..] => {
                        resolve(
                            sub,
                            &["list", "connect", "hotspot", "rescan", "show-password"],
                        ) == Some("list")
                            && !args
                                .iter()
                                .any(|a| a.starts_with("--rescan") || *a == "yes")
                    }
                },
                Some("lldp") => match rest.get(1..).unwrap_or_default() {
                    [] => true,
                    [sub, ..] => resolve(sub, &["list"]) == Some("list"),
                },
                Some("delete") => {
                    return Judgement::destroys("`nmcli device delete` deletes software devices");
                }
                _ => false,
            }
        }
        _ => false,
    };
    if shows {
        Judgement::whitelisted()
    } else {
        wait(format!(
            "`nmcli {}` is not one of its showing forms; its other forms connect, change or turn off the network",
            words[at..].join(" ")
        ))
    }
}

/// `udisksctl status`/`info`/`dump`: the disks the daemon knows; its other commands mount,
/// unmount, power off or set up loop devices.
fn udisksctl(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match words(call).as_deref() {
        Some(["status" | "dump" | "help" | "--version"]) => Judgement::whitelisted(),
        Some(["info", "-p" | "--object-path" | "-d" | "--drive", _]) => Judgement::whitelisted(),
        Some(["info", "-b" | "--block-device", _]) => {
            let mut judgement = Judgement::whitelisted();
            super::table::check_devices(walker, &mut judgement, "udisksctl", &[&call.args[2]]);
            judgement
        }
        Some(_) => Judgement::other(
            "`udisksctl` without `status`, `info` or `dump` mounts, powers off or changes a disk",
        ),
        None => unknown_words("udisksctl"),
    }
}

/// `gdbus introspect`: the interfaces, methods and properties of a D-Bus object, printed.
/// `call` calls a method, `emit` sends a signal, `monitor` never ends.
fn gdbus(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match words(call).as_deref() {
        Some(["introspect", rest @ ..])
            if rest.iter().all(|w| {
                !w.starts_with('-')
                    || matches!(
                        *w,
                        "--system"
                            | "-y"
                            | "--session"
                            | "-e"
                            | "--dest"
                            | "-d"
                            | "--object-path"
                            | "-o"
                            | "--recurse"
                            | "-r"
                            | "--only-properties"
                            | "-p"
                            | "--xml"
                            | "-x"
                    )
            }) =>
        {
            Judgement::whitelisted()
        }
        Some(_) => Judgement::other(
            "`gdbus` without `introspect` calls methods or sends signals on the bus",
        ),
        None => unknown_words("gdbus"),
    }
}

/// `snap list`/`version`/`connections`/`services`/`changes`/`warnings`: what is installed
/// and how (`info` asks the store); `remove` is destructive; every other command installs, refreshes or
/// changes snaps.
fn snap(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match words(call).as_deref() {
        Some([verb, ..])
            if matches!(
                *verb,
                "list"
                    | "version"
                    | "connections"
                    | "services"
                    | "changes"
                    | "warnings"
                    | "aliases"
                    | "interfaces"
            ) =>
        {
            Judgement::whitelisted()
        }
        Some(["remove", ..]) => Judgement::destroys("`snap remove` removes snaps and their data"),
        Some(_) => Judgement::other(
            "`snap` without a listing command installs, refreshes or changes snaps",
        ),
        None => unknown_words("snap"),
    }
}

/// `flatpak list`/`info`/`remotes`/`history`/`--version`; `uninstall` is destructive; every
/// other command installs, updates or runs applications.
fn flatpak(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match words(call).as_deref() {
        Some([verb, ..]) if matches!(*verb, "list" | "info" | "remotes" | "history") => {
            Judgement::whitelisted()
        }
        Some(["uninstall" | "remove", ..]) => {
            Judgement::destroys("`flatpak uninstall` removes applications and their data")
        }
        Some(_) => Judgement::other(
            "`flatpak` without a listing command installs, updates or runs applications",
        ),
        None => unknown_words("flatpak"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn daemons_are_asked_what_they_hold_and_their_changes_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("tmux ls", Safe),
            ("tmux list-windows -a", Safe),
            ("tmux -V", Safe),
            ("tmux ls -F '#{session_name}'", Safe),
            ("tmux ls -F '#(touch x)'", Unknown),
            ("tmux -f evil.conf ls", Unknown),
            ("tmux new -s work", Unknown),
            ("tmux attach", Unknown),
            ("tmux kill-server", Destructive),
            ("tmux kill-session -t work", Destructive),
            ("screen -ls", Safe),
            ("screen -list work", Safe),
            ("screen -r", Unknown),
            ("screen -S work -X quit", Unknown),
            ("ssh-add -l", Safe),
            ("ssh-add -L", Safe),
            ("ssh-add -l -E md5", Safe),
            ("ssh-add ~/.ssh/id_rsa", Unknown),
            ("ssh-add -D", Destructive),
            ("ssh-add -d key", Destructive),
            ("ssh-add -x", Unknown),
            ("nmcli", Safe),
            ("nmcli radio wifi", Safe),
            ("nmcli dev wifi list", Safe),
            ("nmcli d wifi", Safe),
            ("nmcli con", Safe),
            ("nmcli con show --active", Safe),
            ("nmcli dev status", Safe),
            ("nmcli -t -f NAME,UUID c s", Safe),
            ("nmcli general hostname", Safe),
            ("nmcli networking connectivity check", Safe),
            ("nmcli general hostname box", Unknown),
            ("nmcli radio wifi off", Unknown),
            ("nmcli networking off", Unknown),
            ("nmcli -s con show home", Unknown),
            ("nmcli con show home --show-secrets", Unknown),
            ("nmcli dev wifi show-password", Unknown),
            ("nmcli dev wifi s", Unknown),
            ("nmcli dev wifi list --rescan yes", Unknown),
            ("nmcli dev wifi connect home password x", Unknown),
            ("nmcli con up home", Unknown),
            ("nmcli dev s", Unknown),
            ("nmcli con delete home", Destructive),
            ("nmcli c del home", Destructive),
            ("nmcli monitor", Unknown),
            ("udisksctl status", Safe),
            ("udisksctl info -b /dev/sdb", Safe),
            ("udisksctl mount -b /dev/sdb1", Unknown),
            ("udisksctl info -b /etc/shadow", Unknown),
            ("udisksctl power-off -b /dev/sdb", Unknown),
            (
                "gdbus introspect --system --dest org.freedesktop.UPower --object-path / --recurse --only-properties",
                Safe,
            ),
            (
                "gdbus call --system --dest org.freedesktop.login1 --object-path /org/freedesktop/login1 --method org.freedesktop.login1.Manager.PowerOff true",
                Unknown,
            ),
            ("gdbus monitor --system", Unknown),
            ("snap list", Safe),
            ("snap list --all", Safe),
            ("snap install htop", Unknown),
            ("snap info htop", Unknown),
            ("nmcli con show -show-sec home", Unknown),
            ("snap remove htop", Destructive),
            ("flatpak list", Safe),
            ("flatpak install flathub org.x.Y", Unknown),
            ("flatpak uninstall org.x.Y", Destructive),
            ("flatpak run org.x.Y", Unknown),
        ]);
    }
}
