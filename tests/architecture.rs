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
