//! Glob expansion of a planned word, done by riskgate itself and kept inside the workspace.
//!
//! Like bash without `nullglob`, `dotglob` or `globstar`: a pattern expands to the sorted
//! paths it matches, a leading dot must be matched literally, `**` is `*`, and a pattern that
//! matches nothing (or is not a valid pattern) stays the word as written. Like bash 5.2
//! (`globskipdots`), `.*` never yields `.` or `..`. Unlike bash, a pattern that names, or a
//! match that leads (through `..` or a symlink), outside the workspace refuses the line
//! instead of expanding.
//!
//! The leading-dot rule is applied here, not by the `glob` crate: its
//! `require_literal_leading_dot` (0.3.4) drops every dot entry before matching, so `.*`
//! could never match `.env`, and it unwraps each name as UTF-8, so one file with a non-UTF-8
//! name in the workspace would panic every glob.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use glob::MatchOptions;

use super::plan::Word;
use crate::tools::Workspace;

/// A pattern expanding to more paths than this refuses the line: no useful command line is
/// that long, and the kernel would refuse it anyway.
pub const MAX_MATCHES: usize = 10_000;

/// Why a word was not expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpansionRefused {
    #[error("the pattern `{pattern}` points outside the workspace: {reason}")]
    PatternOutside { pattern: String, reason: String },
    #[error("the pattern `{pattern}` matches `{path}`, which is outside the workspace: {reason}")]
    MatchOutside {
        pattern: String,
        path: String,
        reason: String,
    },
    #[error("the pattern `{pattern}` matches more than {MAX_MATCHES} paths")]
    TooMany { pattern: String },
    #[error("the workspace path {0:?} is not UTF-8, so riskgate cannot expand globs in it")]
    RootNotUtf8(String),
}

/// The arguments `word` stands for in `workspace`.
pub fn expand(word: &Word, workspace: &Workspace) -> Result<Vec<OsString>, ExpansionRefused> {
    expand_in(word, workspace, workspace.root())
}

/// The arguments `word` stands for in the directory `cwd` (after a `cd`), every match
/// still inside `workspace`.
pub fn expand_in(
    word: &Word,
    workspace: &Workspace,
    cwd: &Path,
) -> Result<Vec<OsString>, ExpansionRefused> {
    let Some(pattern) = &word.pattern else {
        return Ok(vec![OsString::from(&word.text)]);
    };
    // Glob characters are ordinary path characters to the lexical check, which catches
    // absolute paths elsewhere, `~` and `..` escapes before anything is read.
    let seen_from_root = match cwd.join(&word.text).to_str() {
        Some(joined) if !word.text.starts_with('~') => joined.to_owned(),
        _ => word.text.clone(),
    };
    workspace
        .resolve_lexically(&seen_from_root)
        .map_err(|e| ExpansionRefused::PatternOutside {
            pattern: word.text.clone(),
            reason: e.to_string(),
        })?;
    let root = cwd;
    let root_text = root
        .to_str()
        .ok_or_else(|| ExpansionRefused::RootNotUtf8(root.display().to_string()))?;
    let relative = !Path::new(&word.text).is_absolute();
    let full = if relative {
        format!("{}/{pattern}", glob::Pattern::escape(root_text))
    } else {
        pattern.clone()
    };
    let options = MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        // See the module documentation: `hides_a_dot` does this.
        require_literal_leading_dot: false,
    };
    let Ok(paths) = glob::glob_with(&full, options) else {
        // bash leaves a malformed pattern (`[abc`) as it is.
        return Ok(vec![OsString::from(&word.text)]);
    };
    let mut matches = Vec::new();
    // Unreadable directories are skipped, as bash skips them.
    for path in paths.flatten() {
        // What the word becomes: relative patterns give paths relative to the root, as
        // written (`./*.rs` gives `./a.rs`).
        let bytes = path.as_os_str().as_bytes();
        let argument = match bytes.strip_prefix(root.as_os_str().as_bytes()) {
            Some(rest) if relative => rest.strip_prefix(b"/").unwrap_or(rest),
            _ => bytes,
        };
        if hides_a_dot(pattern, argument) {
            continue;
        }
        if matches.len() == MAX_MATCHES {
            return Err(ExpansionRefused::TooMany {
                pattern: word.text.clone(),
            });
        }
        check_inside(workspace, &path).map_err(|reason| ExpansionRefused::MatchOutside {
            pattern: word.text.clone(),
            path: path.display().to_string(),
            reason,
        })?;
        matches.push(OsStr::from_bytes(argument).to_owned());
    }
    if matches.is_empty() {
        return Ok(vec![OsString::from(&word.text)]);
    }
    Ok(matches)
}

/// Whether a wildcard matched a leading dot, which bash does not allow: component by
/// component, a name starting with `.` must be matched by a pattern component starting with a
/// literal `.`, and `.` and `..` are never wildcard matches. With `require_literal_separator`
/// and `**` folded to `*`, pattern and path have the same components.
fn hides_a_dot(pattern: &str, path: &[u8]) -> bool {
    let pattern_parts = pattern.split('/').filter(|part| !part.is_empty());
    let path_parts = path.split(|&b| b == b'/').filter(|part| !part.is_empty());
    pattern_parts.zip(path_parts).any(|(pattern, name)| {
        let wildcard = pattern.contains(['*', '?', '[']);
        wildcard
            && (name == b"."
                || name == b".."
                || (name.starts_with(b".") && !pattern.starts_with('.')))
    })
}

/// Whether `path`, followed through symlinks, stays inside the workspace.
fn check_inside(workspace: &Workspace, path: &Path) -> Result<(), String> {
    match path.to_str() {
        Some(text) => workspace.resolve(text).map(drop).map_err(|e| e.to_string()),
        // Not UTF-8, so `Workspace::resolve` cannot take it: where it really is decides.
        None => match std::fs::canonicalize(path) {
            Ok(real) if real.starts_with(workspace.root()) => Ok(()),
            Ok(real) => Err(format!("it leads to {}", real.display())),
            Err(e) => Err(format!("cannot tell where it leads: {e}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::command::plan::plan;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("tempdir");
        for file in [
            "b.rs",
            "a.rs",
            ".hidden.rs",
            "notes.md",
            "src/lib.rs",
            "src/x/y.md",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "x").expect("write");
        }
        let ws = Workspace::new(dir.path());
        (dir, ws)
    }

    /// The arguments of the first command's second word, as text.
    fn expanded(line: &str, ws: &Workspace) -> Result<Vec<String>, ExpansionRefused> {
        let plan = plan(line).expect("plan");
        let word = &plan.commands().next().expect("a command").words[1];
        expand(word, ws).map(|args| {
            args.into_iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
    }

    #[test]
    fn patterns_expand_sorted_and_relative() {
        let (_dir, ws) = workspace();
        assert_eq!(
            expanded("ls *.rs", &ws),
            Ok(vec!["a.rs".into(), "b.rs".into()])
        );
        assert_eq!(
            expanded("ls src/*", &ws),
            Ok(vec!["src/lib.rs".into(), "src/x".into()])
        );
        assert_eq!(
            expanded("ls ?.rs", &ws),
            Ok(vec!["a.rs".into(), "b.rs".into()])
        );
        assert_eq!(expanded("ls [b].rs", &ws), Ok(vec!["b.rs".into()]));
    }

    #[test]
    fn a_leading_dot_must_be_literal() {
        let (_dir, ws) = workspace();
        assert_eq!(expanded("ls .*.rs", &ws), Ok(vec![".hidden.rs".into()]));
        // `.*` matches hidden names but never `.` or `..` (which would also leave the root).
        assert_eq!(expanded("ls .*", &ws), Ok(vec![".hidden.rs".into()]));
        assert!(
            !expanded("ls *", &ws)
                .expect("expands")
                .contains(&".hidden.rs".into())
        );
        assert_eq!(
            expanded("ls ?hidden.rs", &ws),
            Ok(vec!["?hidden.rs".into()])
        );
        assert_eq!(
            expanded("ls ./*.rs", &ws),
            Ok(vec!["./a.rs".into(), "./b.rs".into()])
        );
    }

    #[test]
    fn non_utf8_names_do_not_break_expansion() {
        use std::os::unix::ffi::OsStrExt;
        let (dir, ws) = workspace();
        std::fs::write(dir.path().join(OsStr::from_bytes(b"\xff.rs")), "x").expect("write");
        // glob 0.3.4 with require_literal_leading_dot panics on this name.
        assert_eq!(
            expanded("ls *.rs", &ws),
            Ok(vec!["a.rs".into(), "b.rs".into()])
        );
    }

    #[test]
    fn double_star_is_a_single_star() {
        let (_dir, ws) = workspace();
        // glob's recursive `**` would find notes.md and src/x/y.md; bash's `*/*.md` finds
        // nothing here, so the word stays as written.
        assert_eq!(expanded("ls **/*.md", &ws), Ok(vec!["**/*.md".into()]));
        assert_eq!(
            expanded("ls src/**/*.md", &ws),
            Ok(vec!["src/x/y.md".into()])
        );
        assert_eq!(
            expanded("ls src/**", &ws),
            Ok(vec!["src/lib.rs".into(), "src/x".into()])
        );
    }

    #[test]
    fn no_match_and_bad_patterns_stay_as_written() {
        let (_dir, ws) = workspace();
        assert_eq!(expanded("ls *.txt", &ws), Ok(vec!["*.txt".into()]));
        assert_eq!(expanded("ls [abc", &ws), Ok(vec!["[abc".into()]));
        assert_eq!(expanded("ls 'a'*'.md'", &ws), Ok(vec!["a*.md".into()]));
    }

    #[test]
    fn absolute_patterns_inside_the_workspace_stay_absolute() {
        let (_dir, ws) = workspace();
        let root = ws.root().display().to_string();
        assert_eq!(
            expanded(&format!("ls {root}/*.md"), &ws),
            Ok(vec![format!("{root}/notes.md")])
        );
    }

    #[test]
    fn patterns_leaving_the_workspace_are_refused() {
        let (_dir, ws) = workspace();
        for line in ["ls /etc/*", "ls ../*", "ls src/../../*", "ls /*"] {
            assert!(
                matches!(
                    expanded(line, &ws),
                    Err(ExpansionRefused::PatternOutside { .. })
                ),
                "{line}"
            );
        }
    }

    #[test]
    fn matches_through_a_symlink_out_are_refused() {
        let (dir, ws) = workspace();
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "x").expect("write");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
        assert!(matches!(
            expanded("cat link/*", &ws),
            Err(ExpansionRefused::MatchOutside { .. })
        ));
        // The link itself is a match that leads out.
        assert!(matches!(
            expanded("cat l*", &ws),
            Err(ExpansionRefused::MatchOutside { .. })
        ));
    }
}
