//! Mercurial in a line without a click loads no configuration: a repository's `.hg/hgrc`
//! that names an extension (Python code) and a hook loads and runs neither, and an alias
//! there does not change what a subcommand does, while the same repository confirmed (where
//! hg reads its configuration as usual) shows that the planted file would have acted.
//!
//! Needs a real `hg`: `RISKGATE_TEST_HG` names it (`.ci/run` installs Mercurial from PyPI
//! into `target/hg-venv`), else `hg` on PATH; without either the test says it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use riskgate::config::{CommandSettings, OutputSettings, ToolRules};
use riskgate::core::risk::Assessment;
use riskgate::core::tools::Approval;
use riskgate::tools::Workspace;
use riskgate::tools::command::{CommandPolicy, CommandTool, Exit, assess_command};

/// The `hg` to test with, if there is one.
fn find_hg() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os("RISKGATE_TEST_HG") {
        let named = PathBuf::from(named);
        assert!(
            named.is_file(),
            "RISKGATE_TEST_HG names {}, which is not a file",
            named.display()
        );
        return Some(named);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("hg"))
        .find(|candidate| candidate.is_file())
}

/// Runs the test's own hg (outside riskgate) in `repo`, with no configuration of the
/// machine's or the user's.
fn hg(hg: &Path, repo: &Path, args: &[&str]) {
    let status = Command::new(hg)
        .args(args)
        .current_dir(repo)
        .env("HGRCPATH", "")
        .env("HGUSER", "tester <tester@example.invalid>")
        .status()
        .expect("run hg");
    assert!(status.success(), "hg {args:?}: {status}");
}

async fn run(tool: &CommandTool, line: &str, approval: &Approval) -> (String, String, Exit) {
    let outcome = tool
        .run(line, approval)
        .await
        .unwrap_or_else(|e| panic!("{line:?} failed: {e}"));
    (
        String::from_utf8_lossy(&outcome.stdout.bytes).into_owned(),
        String::from_utf8_lossy(&outcome.stderr.bytes).into_owned(),
        outcome.exit,
    )
}

#[tokio::test]
async fn a_repository_hgrc_loads_nothing_in_a_line_without_a_click() {
    let Some(hg_path) = find_hg() else {
        eprintln!("skipped: no hg (set RISKGATE_TEST_HG, or put hg on PATH)");
        return;
    };
    let bin = hg_path.parent().expect("hg's directory").to_owned();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    // SAFETY: the only test in this binary, before it builds a tool or spawns anything.
    unsafe { std::env::set_var("PATH", path) };

    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("workspace");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("notes.txt"), "first\n").expect("write");
    hg(&hg_path, &root, &["init"]);
    hg(&hg_path, &root, &["commit", "-A", "-m", "the first change"]);
    std::fs::write(root.join("notes.txt"), "first\nsecond\n").expect("write");
    // What a repository from elsewhere may carry: an extension that announces itself when
    // it is imported, a hook before `status`, and an alias that turns `log` into `status`.
    std::fs::write(
        root.join("planted.py"),
        "import sys\nsys.stderr.write('PLANTED-EXTENSION-LOADED\\n')\n",
    )
    .expect("write");
    std::fs::write(
        root.join(".hg/hgrc"),
        format!(
            "[extensions]\nplanted = {}\n[hooks]\npre-status = echo PLANTED-HOOK-RAN\n[alias]\nlog = status\n",
            root.join("planted.py").display()
        ),
    )
    .expect("write");

    let tool = CommandTool::new(
        Workspace::new(&root),
        &ToolRules::default(),
        &CommandSettings::default(),
        &OutputSettings::default(),
    );
    let policy = CommandPolicy::new(Workspace::new(&root), &[], &[]);
    for line in ["hg status", "hg log -T '{desc}\\n'", "hg diff notes.txt"] {
        let verdict = assess_command(line, &policy);
        assert!(
            matches!(verdict, Assessment::Safe(_)),
            "{line}: {verdict:?}"
        );
    }

    let auto = Approval::Auto;
    let (out, err, exit) = run(&tool, "hg status", &auto).await;
    assert_eq!(exit, Exit::Code(0), "{out} {err}");
    assert_eq!(out, "M notes.txt\n? planted.py\n", "{err}");
    assert!(!err.contains("PLANTED"), "{err}");
    let (out, err, exit) = run(&tool, "hg log -T '{desc}\\n'", &auto).await;
    assert_eq!(exit, Exit::Code(0), "{out} {err}");
    assert_eq!(out, "the first change\n", "{err}");
    assert!(!err.contains("PLANTED"), "{err}");
    let (out, _, _) = run(&tool, "hg diff notes.txt", &auto).await;
    assert!(out.contains("+second"), "{out}");

    // Confirmed, hg reads the repository's configuration: the planted file acts, so the
    // lines above would have shown it had the walls not kept it unread.
    let confirmed = Approval::Confirmed {
        by: "tester".to_owned(),
    };
    let (out, err, _) = run(&tool, "hg status", &confirmed).await;
    assert!(err.contains("PLANTED-EXTENSION-LOADED"), "{out} {err}");
    assert!(out.contains("PLANTED-HOOK-RAN"), "{out} {err}");
}
