//! The operator's path rules from `[tools.file_operations]`: `allow` (new files and
//! directories there are made without asking) and `deny` (nobody may touch them).
//!
//! An entry is a path or a glob pattern (`*`, `?`, `[...]`, `{a,b}`, `**` for any number of
//! directories; `\` makes the next character literal), relative to the workspace:
//! - without `/`, it matches a path component anywhere, and everything below it: `.env`
//!   matches `app/.env`, `*.pem` matches `certs/site.pem`, `.git` matches `.git/config`;
//! - with `/`, it matches from the workspace root, and everything below what it matches:
//!   `secrets/prod` matches `secrets/prod/key`, `config/*.key` matches `config/tls.key`,
//!   `**/secrets/**` matches anything inside a `secrets` directory at any depth.
//!
//! `*` and `?` never cross a `/`. Matching is case-sensitive. Leading and trailing `/` are
//! ignored (`/secrets` is `secrets`). The patterns are compiled once, into one `globset`
//! matcher per list.

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// An entry that is not a valid pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{entry:?} is {}", self.advice())]
pub struct PatternError {
    /// The entry as the operator wrote it.
    pub entry: String,
    /// What the pattern parser found wrong.
    pub problem: String,
}

impl PatternError {
    /// What is wrong and what to do, without the entry.
    pub fn advice(&self) -> String {
        format!(
            "not a valid pattern ({}). Fix it, or put a \\ before * ? [ ] {{ }} to match that character itself",
            self.problem
        )
    }
}

/// Checks that every entry of a list is a valid pattern, for the configuration's validation.
pub fn check(entries: &[String]) -> Result<(), PatternError> {
    PatternList::new(entries).map(|_| ())
}

/// One list of entries, compiled.
#[derive(Debug, Clone, Default)]
struct PatternList {
    /// The entries as written, for naming the one that matched.
    entries: Vec<String>,
    /// Two globs per entry: the entry itself and everything below it.
    set: GlobSet,
    /// For each glob in `set`, the index of its entry.
    owners: Vec<usize>,
}

impl PatternList {
    fn new(entries: &[String]) -> Result<Self, PatternError> {
        let mut builder = GlobSetBuilder::new();
        let mut kept = Vec::new();
        let mut owners = Vec::new();
        for written in entries {
            let entry = written.trim().trim_matches('/');
            if entry.is_empty() {
                continue;
            }
            let rooted = if entry.contains('/') {
                entry.to_owned()
            } else {
                format!("**/{entry}")
            };
            for glob in [rooted.clone(), format!("{rooted}/**")] {
                let compiled = GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| PatternError {
                        entry: written.clone(),
                        problem: e.kind().to_string(),
                    })?;
                builder.add(compiled);
                owners.push(kept.len());
            }
            kept.push(written.trim().to_owned());
        }
        let set = builder.build().map_err(|e| PatternError {
            entry: e.glob().unwrap_or_default().to_owned(),
            problem: e.kind().to_string(),
        })?;
        Ok(Self {
            entries: kept,
            set,
            owners,
        })
    }

    /// The first entry (in the operator's order) that matches `relative`.
    fn first_match(&self, relative: &Path) -> Option<&str> {
        let glob = self.set.matches(relative).into_iter().min()?;
        self.entries.get(self.owners[glob]).map(String::as_str)
    }
}

/// What the deny list says about a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denial {
    /// The path is covered by this entry.
    Entry(String),
    /// The deny list could not be compiled (the configuration was not validated), so every
    /// path is refused until it is fixed.
    BrokenList(PatternError),
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Entry(entry) => write!(f, "is covered by the operator's deny rule {entry:?}"),
            Self::BrokenList(error) => write!(
                f,
                "cannot be checked against the operator's deny rules: {error}"
            ),
        }
    }
}

/// The allow and deny lists of `file_operations`.
#[derive(Debug, Clone)]
pub struct PathRules {
    allow: PatternList,
    deny: Result<PatternList, PatternError>,
}

impl Default for PathRules {
    fn default() -> Self {
        Self {
            allow: PatternList::default(),
            deny: Ok(PatternList::default()),
        }
    }
}

impl PathRules {
    /// Compiles both lists. A settings file is validated before this (an invalid entry stops
    /// the start with [`PatternError`]); settings built in code are not, so an invalid deny
    /// entry here refuses every path and an invalid allow entry allows nothing: never more
    /// than the operator asked for.
    pub fn new(allow: &[String], deny: &[String]) -> Self {
        Self {
            allow: PatternList::new(allow).unwrap_or_default(),
            deny: PatternList::new(deny),
        }
    }

    /// Why `relative` (workspace-relative) may not be touched, if it may not.
    pub fn denied(&self, relative: &Path) -> Option<Denial> {
        match &self.deny {
            Ok(list) => list
                .first_match(relative)
                .map(|entry| Denial::Entry(entry.to_owned())),
            Err(error) => Some(Denial::BrokenList(error.clone())),
        }
    }

    /// Whether a new file or directory at `relative` may be made without asking.
    pub fn allowed(&self, relative: &Path) -> bool {
        self.allow.first_match(relative).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| e.to_string()).collect()
    }

    fn denied_by(deny: &[&str], path: &str) -> Option<String> {
        match PathRules::new(&[], &list(deny)).denied(Path::new(path)) {
            Some(Denial::Entry(entry)) => Some(entry),
            Some(Denial::BrokenList(error)) => panic!("{error}"),
            None => None,
        }
    }

    #[test]
    fn a_bare_name_matches_any_component_and_everything_below_it() {
        for path in [
            ".env",
            "app/.env",
            "app/.env/inner",
            ".git/hooks/pre-commit",
        ] {
            assert!(denied_by(&[".env", ".git"], path).is_some(), "{path}");
        }
        for path in ["app/.envrc", "x.env", "env", ".gitignore"] {
            assert_eq!(denied_by(&[".env", ".git"], path), None, "{path}");
        }
    }

    #[test]
    fn an_entry_with_a_slash_matches_that_path_from_the_root_and_below() {
        for path in ["secrets/prod", "secrets/prod/key.pem", "secrets/prod/a/b"] {
            assert!(denied_by(&["secrets/prod"], path).is_some(), "{path}");
        }
        for path in [
            "secrets",
            "secrets/production",
            "app/secrets/prod",
            "secrets/dev",
        ] {
            assert_eq!(denied_by(&["secrets/prod"], path), None, "{path}");
        }
        // Slashes around an entry change nothing.
        assert!(denied_by(&["/secrets/prod/"], "secrets/prod/k").is_some());
        assert!(denied_by(&["/.env"], "app/.env").is_some());
    }

    #[test]
    fn glob_patterns_match_names_paths_and_any_depth() {
        let deny = ["*.pem", "config/*.key", "**/secrets/**", "id_{rsa,ed25519}"];
        for (path, entry) in [
            ("site.pem", "*.pem"),
            ("certs/deep/site.pem", "*.pem"),
            (".hidden.pem", "*.pem"),
            ("config/tls.key", "config/*.key"),
            ("a/b/secrets/token", "**/secrets/**"),
            ("secrets/token", "**/secrets/**"),
            ("home/.ssh/id_ed25519", "id_{rsa,ed25519}"),
        ] {
            assert_eq!(denied_by(&deny, path).as_deref(), Some(entry), "{path}");
        }
        for path in [
            "site.pem.txt",
            "config/sub/tls.key",
            "app/config/tls.key",
            "secrets",
            "id_dsa",
        ] {
            assert_eq!(denied_by(&deny, path), None, "{path}");
        }
    }

    #[test]
    fn the_first_matching_entry_in_the_operators_order_is_named() {
        assert_eq!(
            denied_by(&["keys", "*.pem"], "keys/a.pem").as_deref(),
            Some("keys")
        );
        assert_eq!(
            denied_by(&["*.pem", "keys"], "keys/a.pem").as_deref(),
            Some("*.pem")
        );
    }

    #[test]
    fn a_backslash_makes_a_pattern_character_literal() {
        assert!(denied_by(&["report\\[1\\].txt"], "report[1].txt").is_some());
        assert_eq!(denied_by(&["report\\[1\\].txt"], "report1.txt"), None);
    }

    #[test]
    fn an_invalid_pattern_is_named_with_what_to_do() {
        let error = check(&list(&["ok", "keys/[a-"])).expect_err("an unclosed class");
        assert_eq!(error.entry, "keys/[a-");
        let said = error.to_string();
        assert!(
            said.contains("\"keys/[a-\"") && said.contains("put a \\"),
            "{said}"
        );
        assert!(check(&list(&["{a,b"])).is_err());
        assert!(check(&list(&["*.pem", "**/secrets/**", " scratch/ ", ""])).is_ok());
    }

    #[test]
    fn an_invalid_list_refuses_every_path_and_allows_nothing() {
        let rules = PathRules::new(&list(&["scratch", "[x"]), &list(&["[y"]));
        assert!(matches!(
            rules.denied(Path::new("anything.txt")),
            Some(Denial::BrokenList(PatternError { entry, .. })) if entry == "[y"
        ));
        assert!(!rules.allowed(Path::new("scratch/new.txt")));
    }
}
