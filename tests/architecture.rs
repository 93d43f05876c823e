//! Architecture invariants that a test can hold (ARCHITECTURE.md lists them all).

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `core` imports none of serenity, sqlx, reqwest, tokio::process: adapters implement its
/// ports instead.
#[test]
fn core_depends_on_no_adapter_crate() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut files = Vec::new();
    rust_files(&core, &mut files);
    assert!(!files.is_empty(), "src/core has Rust files");
    let forbidden = [
        "serenity",
        "sqlx",
        "reqwest",
        "tokio::process",
        "brush_parser",
        "sqlparser",
    ];
    let mut violations = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for name in forbidden {
                if code.contains(name) {
                    violations.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "core must stay adapter-free:\n{}",
        violations.join("\n")
    );
}

/// The code of a file a test reads for what it depends on: comments dropped, and nothing
/// from its inline test module on (tests may name anything; a `mod tests;` in a file of its
/// own is left out by name).
fn code_of(file: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(file).expect("read");
    let lines: Vec<&str> = text.lines().collect();
    let tests_begin = lines
        .windows(2)
        .position(|pair| pair[0].trim_start().starts_with("#[cfg(test)]") && pair[1].contains('{'))
        .unwrap_or(lines.len());
    lines[..tests_begin]
        .iter()
        .enumerate()
        .map(|(n, line)| {
            (
                n + 1,
                line.split("//").next().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The core's modules depend on each other one way only: the words every part shares
/// (`message`, `event`, `approval`, `risk`, `tools`, `profile`, ...) are modules of their
/// own, so the ports, the loop and the front ends can all use them without going round in
/// circles.
#[test]
fn the_cores_modules_import_each_other_without_a_cycle() {
    use std::collections::{BTreeMap, BTreeSet};
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core");
    let mut files = Vec::new();
    rust_files(&core, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&core).expect("under src/core");
        let first = relative
            .components()
            .next()
            .expect("a component")
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("read");
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default();
            assert!(
                !code.contains("core::{"),
                "{}: name the core's modules one by one, so this test sees them",
                file.display()
            );
            for (at, _) in code.match_indices("crate::core::") {
                let rest = &code[at + "crate::core::".len()..];
                let used: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !used.is_empty() && used != module {
                    edges.entry(module.clone()).or_default().insert(used);
                }
            }
        }
    }
    assert!(
        edges
            .get("ports")
            .is_some_and(|used| used.contains("message")),
        "the scan sees the ports' imports: {edges:?}"
    );
    // Depth-first search; a module met again while still on the path closes a cycle.
    fn visit(
        module: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == module) {
            let mut cycle = path[start..].to_vec();
            cycle.push(module.to_owned());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in edges.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        if let Some(cycle) = visit(module, &edges, &mut Vec::new(), &mut done) {
            panic!(
                "core modules import each other in a circle: {}",
                cycle.join(" -> ")
            );
        }
    }
}

/// A tool is one unit: its name is written in its own folder and nowhere else. Everything
/// else (the loop, the profiles, the front ends that show calls) asks the tool, so adding a
/// tool is its folder and the line that registers it.
#[test]
fn no_tool_is_known_by_name_outside_its_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.retain(|f| f.file_name().is_none_or(|n| n != "tests.rs"));
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = riskgate::config::Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    let tools = riskgate::tools::builtin_tools(&settings);
    let names: Vec<&str> = tools.names().collect();
    assert_eq!(names.len(), riskgate::tools::BUILTINS.len(), "{names:?}");
    for name in names {
        let quoted = format!("\"{name}\"");
        let mut places = Vec::new();
        for file in &files {
            for (n, code) in code_of(file) {
                if code.contains(&quoted) {
                    places.push((file.clone(), n));
                }
            }
        }
        let folders: std::collections::BTreeSet<_> = places
            .iter()
            .map(|(file, _)| file.strip_prefix(&src).expect("under src").parent())
            .collect();
        let in_its_folder = folders.len() == 1
            && folders
                .iter()
                .flatten()
                .all(|folder| folder.parent() == Some(Path::new("tools")));
        assert!(
            in_its_folder,
            "{name} is written outside its tool's folder: {}",
            places
                .iter()
                .map(|(file, n)| format!("{}:{n}", file.display()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}
