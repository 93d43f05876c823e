//! What a name runs: the shell's questions about names, `command -v NAME`, `command -V
//! NAME` and `type [-afptP] NAME`, which a line asks to learn whether a program is there
//! (`command -v git && git --version`). They print and change nothing, so the runner
//! answers them itself, without a shell, from the PATH every command of the line gets and
//! in bash's words: a bash builtin or keyword is one, a name with a `/` is that file, and
//! any other name is the first executable file of that name on PATH. Other forms (`command
//! NAME args`, which runs NAME, or `command -p`) need a shell.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// bash's builtins (`compgen -b` of bash 5.2).
pub(super) const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// bash's reserved words (`compgen -k`).
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
];

/// The programs whose question forms the runner answers.
pub const QUERY_PROGRAMS: &[&str] = &["command", "type"];

/// How the answer is worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// `command -v`: the name of a builtin or keyword, the path of a file.
    Short,
    /// `type`, `command -V`: `ls is /usr/bin/ls`, `cd is a shell builtin`.
    Describe,
    /// `type -t`: `builtin`, `keyword` or `file`.
    Kind,
    /// `type -p`: the path of a file, nothing for a builtin or keyword.
    Path,
    /// `type -P`: the path of a file on PATH, even when a builtin has the name.
    ForcePath,
}

/// One question about names: `command -v|-V NAME...` or `type [-afptP] NAME...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query<'a> {
    program: &'static str,
    style: Style,
    /// `-a`: every meaning of the name, not only the first.
    all: bool,
    names: Vec<&'a str>,
}

/// What one kind of name is, in the order bash looks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Meaning {
    Keyword,
    Builtin,
    File(PathBuf),
}

/// The answer to a [`Query`]: what it prints on each stream, and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl<'a> Query<'a> {
    /// The question `program args` asks, or `None` when it is not one of the forms above
    /// (then it runs something, or asks what only a shell knows).
    pub fn parse(program: &str, args: &[&'a str]) -> Option<Self> {
        let (program, allowed) = match program {
            "command" => ("command", "vV"),
            "type" => ("type", "afptP"),
            _ => return None,
        };
        let mut flags = String::new();
        let mut rest = args;
        while let Some((first, tail)) = rest.split_first() {
            if *first == "--" {
                rest = tail;
                break;
            }
            match first.strip_prefix('-') {
                Some(letters) if !letters.is_empty() => {
                    if !letters.chars().all(|c| allowed.contains(c)) {
                        return None;
                    }
                    flags.push_str(letters);
                    rest = tail;
                }
                _ => break,
            }
        }
        let has = |c: char| flags.contains(c);
        let style = if program == "command" {
            if has('V') {
                Style::Describe
            } else if has('v') {
                Style::Short
            } else {
                // `command NAME args` runs NAME: not a question.
                return None;
            }
        } else if has('t') {
            Style::Kind
        } else if has('P') {
            Style::ForcePath
        } else if has('p') {
            Style::Path
        } else {
            Style::Describe
        };
        let names = rest.to_vec();
        if names.is_empty() || names.iter().any(|n| n.is_empty() || n.contains('\0')) {
            return None;
        }
        Some(Self {
            program,
            style,
            all: program == "type" && has('a'),
            names,
        })
    }

    /// Answers the question from `search_path` (the PATH the line's commands get), a name
    /// with a `/` taken from `cwd` and looked at only where `visible` says the line may
    /// look (elsewhere it is not found), as bash words it.
    pub fn answer(
        &self,
        search_path: &OsStr,
        cwd: &Path,
        visible: &dyn Fn(&Path) -> bool,
    ) -> Answer {
        let mut stdout = String::new();
        let mut stderr = String::new();
        let mut found_all = true;
        let mut found_any = false;
        for name in &self.names {
            let files_only = self.style == Style::ForcePath;
            let meanings = meanings(name, search_path, cwd, visible, files_only);
            let shown: Vec<&Meaning> = if self.all {
                meanings.iter().collect()
            } else {
                meanings.iter().take(1).collect()
            };
            if shown.is_empty() {
                found_all = false;
                if self.style == Style::Describe {
                    stderr.push_str(&format!("{}: {name}: not found\n", self.program));
                }
                continue;
            }
            found_any = true;
            for meaning in shown {
                let line = match (self.style, meaning) {
                    (Style::Short, Meaning::File(path)) => Some(path.display().to_string()),
                    (Style::Short, _) => Some((*name).to_owned()),
                    (Style::Describe, Meaning::Keyword) => {
                        Some(format!("{name} is a shell keyword"))
                    }
                    (Style::Describe, Meaning::Builtin) => {
                        Some(format!("{name} is a shell builtin"))
                    }
                    (Style::Describe, Meaning::File(path)) => {
                        Some(format!("{name} is {}", path.display()))
                    }
                    (Style::Kind, Meaning::Keyword) => Some("keyword".to_owned()),
                    (Style::Kind, Meaning::Builtin) => Some("builtin".to_owned()),
                    (Style::Kind, Meaning::File(_)) => Some("file".to_owned()),
                    (Style::Path | Style::ForcePath, Meaning::File(path)) => {
                        Some(path.display().to_string())
                    }
                    (Style::Path | Style::ForcePath, _) => None,
                };
                if let Some(line) = line {
                    stdout.push_str(&line);
                    stdout.push('\n');
                }
            }
        }
        // bash: `command -v` succeeds when any name is found, `type` when every one is.
        let ok = if self.program == "command" {
            found_any
        } else {
            found_all
        };
        Answer {
            stdout,
            stderr,
            code: if ok { 0 } else { 1 },
        }
    }
}

/// Every meaning of `name`, in bash's order: keyword, builtin, then each executable file
/// on `search_path` (`files_only`: the files alone, as `type -P`).
fn meanings(
    name: &str,
    search_path: &OsStr,
    cwd: &Path,
    visible: &dyn Fn(&Path) -> bool,
    files_only: bool,
) -> Vec<Meaning> {
    let mut found = Vec::new();
    if name.contains('/') {
        let path = Path::new(name);
        let real = cwd.join(path);
        if visible(&real) && is_executable_file(&real) {
            found.push(Meaning::File(path.to_path_buf()));
        }
        return found;
    }
    if !files_only {
        if KEYWORDS.contains(&name) {
            found.push(Meaning::Keyword);
        }
        if BUILTINS.contains(&name) {
            found.push(Meaning::Builtin);
        }
    }
    found.extend(executables_on(search_path, name).map(Meaning::File));
    found
}

/// The executable files named `name` in the directories of `search_path`, in its order:
/// the first is what the runner runs for `name`. An empty entry (the current directory,
/// which the runner's PATH never holds) is skipped.
pub(super) fn executables_on<'a>(
    search_path: &'a OsStr,
    name: &'a str,
) -> impl Iterator<Item = PathBuf> + 'a {
    search_path
        .as_bytes()
        .split(|&b| b == b':')
        .filter(move |dir| !dir.is_empty() && !name.is_empty())
        .map(move |dir| Path::new(OsStr::from_bytes(dir)).join(name))
        .filter(|candidate| is_executable_file(candidate))
}

/// Whether `path` is a regular file with an execute bit.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query<'a>(program: &str, args: &[&'a str]) -> Option<Query<'a>> {
        Query::parse(program, args)
    }

    #[test]
    fn only_the_question_forms_are_questions() {
        for (program, args) in [
            ("command", &["-v", "git"][..]),
            ("command", &["-V", "git", "ls"]),
            ("command", &["-v", "--", "git"]),
            ("command", &["-vV", "git"]),
            ("type", &["git"]),
            ("type", &["-t", "git"]),
            ("type", &["-ap", "git"]),
            ("type", &["-P", "-f", "git"]),
            ("type", &["--", "-v"]),
        ] {
            assert!(query(program, args).is_some(), "{program} {args:?}");
        }
        for (program, args) in [
            // Runs the program.
            ("command", &["git", "status"][..]),
            ("command", &["rm", "-rf", "x"]),
            ("command", &["-p", "ls"]),
            ("command", &["-pv", "ls"]),
            ("command", &["-v"]),
            ("type", &[]),
            ("type", &["-x", "ls"]),
            ("type", &["-t"]),
            ("hash", &["ls"]),
            ("which", &["ls"]),
        ] {
            assert!(query(program, args).is_none(), "{program} {args:?}");
        }
    }

    /// A PATH of two directories in a temporary directory, `tool` executable in both and
    /// `plain` not executable.
    fn path() -> (tempfile::TempDir, std::ffi::OsString) {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["a", "b"] {
            let bin = dir.path().join(sub);
            std::fs::create_dir(&bin).expect("mkdir");
            let tool = bin.join("tool");
            std::fs::write(&tool, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            std::fs::write(bin.join("plain"), "").expect("write");
        }
        let path = format!(
            "{}:{}",
            dir.path().join("a").display(),
            dir.path().join("b").display()
        );
        (dir, path.into())
    }

    fn ask(program: &str, args: &[&str], path: &OsStr, cwd: &Path) -> (String, String, i32) {
        // Everything but the directory `b` may be looked at.
        let visible = |p: &Path| !p.starts_with(cwd.join("b"));
        let answer = query(program, args)
            .expect("a question")
            .answer(path, cwd, &visible);
        (answer.stdout, answer.stderr, answer.code)
    }

    #[test]
    fn answers_are_worded_as_bash_words_them() {
        let (dir, path) = path();
        let a = dir.path().join("a/tool").display().to_string();
        let b = dir.path().join("b/tool").display().to_string();
        let cwd = dir.path();
        let out = |s: &str| s.to_owned();
        assert_eq!(
            ask(
                "command",
                &["-v", "tool", "cd", "if", "nope", "plain"],
                &path,
                cwd
            ),
            (format!("{a}\ncd\nif\n"), String::new(), 0)
        );
        assert_eq!(
            ask("command", &["-v", "nope"], &path, cwd),
            (String::new(), String::new(), 1)
        );
        assert_eq!(
            ask("command", &["-V", "tool", "cd", "nope"], &path, cwd),
            (
                format!("tool is {a}\ncd is a shell builtin\n"),
                out("command: nope: not found\n"),
                0
            )
        );
        assert_eq!(
            ask("type", &["tool", "nope"], &path, cwd),
            (format!("tool is {a}\n"), out("type: nope: not found\n"), 1)
        );
        assert_eq!(
            ask("type", &["-a", "tool"], &path, cwd),
            (format!("tool is {a}\ntool is {b}\n"), String::new(), 0)
        );
        assert_eq!(
            ask("type", &["-t", "time", "echo", "tool", "nope"], &path, cwd),
            (out("keyword\nbuiltin\nfile\n"), String::new(), 1)
        );
        // `-p` prints nothing for a builtin; `-P` looks for a file even so.
        assert_eq!(
            ask("type", &["-p", "cd"], &path, cwd),
            (String::new(), String::new(), 0)
        );
        assert_eq!(
            ask("type", &["-P", "cd"], &path, cwd),
            (String::new(), String::new(), 1)
        );
        assert_eq!(
            ask("type", &["-pa", "tool"], &path, cwd),
            (format!("{a}\n{b}\n"), String::new(), 0)
        );
        // A name with a slash is that file, from the line's directory.
        assert_eq!(
            ask(
                "command",
                &["-v", "a/tool", "a/plain", "./nope", "b/tool"],
                &path,
                cwd
            ),
            (out("a/tool\n"), String::new(), 0)
        );
    }
}
