//! The names tools are offered under: `mcp__<server>__<tool>`, within what the OpenAI API
//! accepts for a function name (`^[a-zA-Z0-9_-]{1,64}$`).
//!
//! A name is a function of its server and tool alone wherever that can be: a tool whose name
//! is already of those characters and fits is offered as is. A tool whose name needed
//! characters replaced, or was cut to fit, or whose plain name another tool (of any server)
//! would also get, ends in `_` and eight hex digits of a SHA-256 of the server's and the
//! tool's names, so two different tools never share a name and the same tool always gets
//! the same one. The one exception to "alone": when a colliding tool appears, the plain
//! name of the tool it collides with turns hashed too (both do, so neither wins by order).

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

/// The OpenAI API's limit on a function's name.
pub const MAX_NAME_CHARS: usize = 64;
/// Every offered name starts with this.
pub const PREFIX: &str = "mcp__";

/// The offered names of `tools` (server, tool name), in the same order. The pairs are
/// distinct (the hub keeps one tool of a name per server).
pub fn offered_names(tools: &[(&str, &str)]) -> Vec<String> {
    let plain: Vec<(String, bool)> = tools
        .iter()
        .map(|(server, tool)| plain_name(server, tool))
        .collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _) in &plain {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let mut names: Vec<String> = tools
        .iter()
        .zip(&plain)
        .map(|((server, tool), (name, exact))| {
            if *exact && counts[name.as_str()] == 1 {
                name.clone()
            } else {
                hashed(name, server, tool, 8)
            }
        })
        .collect();
    // A hashed name equal to another tool's name (a plain one ending in the same digits)
    // takes more digits until none is shared.
    let mut digits = 8;
    while digits < 64 {
        let mut seen = BTreeSet::new();
        let duplicated: BTreeSet<String> = names
            .iter()
            .filter(|name| !seen.insert(name.as_str()))
            .cloned()
            .collect();
        if duplicated.is_empty() {
            break;
        }
        digits += 8;
        for (i, name) in names.iter_mut().enumerate() {
            if duplicated.contains(name.as_str()) {
                let (server, tool) = tools[i];
                *name = hashed(&plain[i].0, server, tool, digits);
            }
        }
    }
    names
}

/// `mcp__<server>__<tool>` with every character outside `[a-zA-Z0-9_-]` made `_`, and
/// whether it is exact: nothing replaced and short enough.
fn plain_name(server: &str, tool: &str) -> (String, bool) {
    let mut name = format!("{PREFIX}{server}__");
    let mut exact = true;
    for c in tool.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            name.push(c);
        } else {
            name.push('_');
            exact = false;
        }
    }
    for c in server.chars() {
        if !(c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            exact = false;
        }
    }
    if name.len() > MAX_NAME_CHARS || tool.is_empty() {
        exact = false;
    }
    (sanitise(&name), exact)
}

/// Only `[a-zA-Z0-9_-]`: a server name is checked when the settings load, but the names
/// here must hold whatever they are given.
fn sanitise(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `plain` cut to leave room for `_` and `digits` hex digits of the tool's hash, then those.
fn hashed(plain: &str, server: &str, tool: &str, digits: usize) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let digits = digits.min(hex.len()).min(MAX_NAME_CHARS - 1);
    let room = MAX_NAME_CHARS - 1 - digits;
    // `plain` is ASCII, so any byte index is a character boundary.
    let kept = &plain[..plain.len().min(room)];
    format!("{kept}_{}", &hex[..digits])
}

/// Whether `name` is one the OpenAI API accepts for a function.
pub fn is_valid_function_name(name: &str) -> bool {
    (1..=MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_stay_plain() {
        let names = offered_names(&[("git", "git_status"), ("memory", "read-graph")]);
        assert_eq!(names, ["mcp__git__git_status", "mcp__memory__read-graph"]);
    }

    #[test]
    fn replaced_characters_and_long_names_get_a_hash_and_stay_valid() {
        let long = "x".repeat(100);
        let tools = [
            ("srv", "read.file"),
            ("srv", "lire_le_fichier_é"),
            ("srv", long.as_str()),
            ("srv", ""),
            ("srv", "ünïcödé/ spaces\n"),
        ];
        let names = offered_names(&tools);
        for name in &names {
            assert!(is_valid_function_name(name), "{name:?}");
            assert!(name.starts_with("mcp__srv__"), "{name}");
        }
        assert!(names[0].starts_with("mcp__srv__read_file_"), "{}", names[0]);
        assert_eq!(names[2].len(), MAX_NAME_CHARS);
        assert_eq!(names.iter().collect::<BTreeSet<_>>().len(), names.len());
    }

    #[test]
    fn names_are_deterministic_and_do_not_depend_on_order() {
        let a = offered_names(&[("s", "a.b"), ("s", "c")]);
        let b = offered_names(&[("s", "c"), ("s", "a.b")]);
        assert_eq!(a[0], b[1]);
        assert_eq!(a[1], b[0]);
        assert_eq!(a, offered_names(&[("s", "a.b"), ("s", "c")]));
    }

    #[test]
    fn colliding_tools_both_get_distinct_hashed_names() {
        // "a_b" is exact, "a.b" sanitises to the same plain name: both are hashed.
        let names = offered_names(&[("s", "a_b"), ("s", "a.b")]);
        assert_ne!(names[0], names[1]);
        assert!(
            names.iter().all(|n| n.starts_with("mcp__s__a_b_")),
            "{names:?}"
        );
        // Across servers: server "ab__c" with tool "d" and server "ab" with tool "c__d".
        let names = offered_names(&[("ab__c", "d"), ("ab", "c__d")]);
        assert_ne!(names[0], names[1], "{names:?}");
        // Long names that agree on their first 64 characters.
        let one = format!("{}1", "y".repeat(80));
        let two = format!("{}2", "y".repeat(80));
        let names = offered_names(&[("s", one.as_str()), ("s", two.as_str())]);
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| is_valid_function_name(n)));
    }

    #[test]
    fn a_plain_name_that_looks_hashed_does_not_collide_with_a_hashed_one() {
        let hashed_name = offered_names(&[("s", "a.b")]).remove(0);
        let lookalike = hashed_name.trim_start_matches("mcp__s__").to_owned();
        let names = offered_names(&[("s", "a.b"), ("s", lookalike.as_str())]);
        assert_ne!(names[0], names[1], "{names:?}");
    }
}
