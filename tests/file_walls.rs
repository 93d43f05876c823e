//! `file_operations` against the ways out of the workspace, proven by effects: files planted
//! outside (in the test's own temp directory) keep their content, no new file appears there,
//! and their secret, like a secret in this process's environment, never shows in any output
//! or error. Each call goes through the real gate and then the real executor, also as if a
//! person had confirmed it, so the executor's own wall is tested, not only the gate's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use riskgate::config::Settings;
use riskgate::core::risk::ChannelMode;
use riskgate::core::tools::{Approval, AssessContext, RiskGate, Tool, ToolCall};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

const SECRET: &str = "s3cret-outside-the-workspace-7f3a";
const ENV_NAME: &str = "RISKGATE_FILE_WALLS_SECRET";
const ENV_SECRET: &str = "env-s3cret-of-the-test-process-91c2";

struct Case {
    ws: tempfile::TempDir,
    /// Files nobody may read or change; in the test's own temp directory.
    outside: tempfile::TempDir,
    gate: RiskGate,
    tool: Arc<dyn Tool>,
}

fn case() -> Case {
    let ws = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), SECRET).expect("write");
    std::fs::create_dir(outside.path().join("dir")).expect("mkdir");
    std::fs::write(outside.path().join("dir/readme.txt"), SECRET).expect("write");
    let mut settings = Settings::default();
    settings.tools.workspace = ws.path().to_path_buf();
    let gate = riskgate::tools::builtin_gate(&settings);
    let tool = gate
        .registry()
        .get("file_operations")
        .expect("registered")
        .clone();
    Case {
        ws,
        outside,
        gate,
        tool,
    }
}

fn object(args: &Value) -> Map<String, Value> {
    args.as_object().cloned().expect("object")
}

/// Every file below `dir` with the SHA-256 of its content (links listed, not followed).
fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("meta");
            if meta.is_dir() {
                stack.push(path.clone());
                out.push((path, "dir".to_owned()));
            } else if meta.is_file() {
                let digest = Sha256::digest(std::fs::read(&path).expect("read"));
                out.push((path, format!("{digest:x}")));
            } else {
                out.push((path, "other".to_owned()));
            }
        }
    }
    out.sort();
    out
}

impl Case {
    fn path(&self, rel: &str) -> PathBuf {
        self.ws.path().join(rel)
    }

    /// The gate's decision for `args` in smart mode.
    fn decide(&self, args: &Value) -> String {
        let call = ToolCall {
            tool: "file_operations".into(),
            arguments: object(args),
        };
        self.gate
            .check(&call, ChannelMode::Smart, &AssessContext::default())
            .decision
            .decision
            .as_str()
            .to_owned()
    }

    /// Runs `args` through the executor with `approval`; the text of whatever came back.
    async fn execute(&self, args: &Value, approval: &Approval) -> (bool, String) {
        let mut args = object(args);
        args.remove("risk_level");
        match self.tool.execute(&args, approval).await {
            Ok(out) => (
                true,
                format!(
                    "{}\n{}\n{}\n{:?}",
                    out.summary,
                    out.text,
                    out.chat,
                    out.attachment.map(|a| a.bytes)
                ),
            ),
            Err(e) => (false, e.to_string()),
        }
    }

    /// The gate must not auto-run `args`, and the executor, even with a person's click, must
    /// refuse it without showing a secret; the outside stays as it was.
    async fn walled(&self, args: Value) {
        let before = snapshot(self.outside.path());
        let decision = self.decide(&args);
        assert_ne!(decision, "auto", "{args} must not run without a click");
        for approval in [
            Approval::Auto,
            Approval::Confirmed {
                by: "tester".into(),
            },
        ] {
            let (ok, text) = self.execute(&args, &approval).await;
            assert!(!ok, "{args} ({approval:?}) ran: {text}");
            assert!(
                text.starts_with("refused"),
                "{args} ({approval:?}) must be a refusal: {text}"
            );
            assert!(!text.contains(SECRET), "{args} showed the secret: {text}");
            assert!(!text.contains(ENV_SECRET), "{args} showed the env: {text}");
        }
        assert_eq!(
            snapshot(self.outside.path()),
            before,
            "{args} changed files outside the workspace"
        );
    }
}

#[tokio::test]
async fn a_symlink_to_proc_never_shows_this_process_environment() {
    // SAFETY: set once, before this test reads anything through the tool; the other tests in
    // this binary only read the environment through std, which serialises access with its own
    // lock, and none calls C code that reads it.
    unsafe { std::env::set_var(ENV_NAME, ENV_SECRET) };
    let c = case();
    std::os::unix::fs::symlink("/proc", c.path("sysinfo")).expect("symlink");
    std::os::unix::fs::symlink("../../../../../../../../../../proc", c.path("rel"))
        .expect("symlink");
    for link in ["sysinfo", "rel"] {
        for args in [
            json!({"operation": "read", "path": format!("{link}/self/environ")}),
            json!({"operation": "read", "path": format!("{link}/thread-self/environ")}),
            json!({"operation": "read", "path": format!("{link}/{}/environ", std::process::id())}),
            json!({"operation": "read", "path": format!("{link}/self/root/etc/hostname")}),
            json!({"operation": "list", "path": link}),
            json!({"operation": "list", "path": format!("{link}/self")}),
            json!({"operation": "list", "path": format!("{link}/self/cwd")}),
            json!({"operation": "exists", "path": format!("{link}/self/environ")}),
            json!({"operation": "read", "path": format!("{link}/self/environ"), "risk_level": "low"}),
        ] {
            c.walled(args).await;
        }
    }
    // The link itself may be listed as a link, and removed as one.
    let (ok, text) = c
        .execute(&json!({"operation": "list", "path": "."}), &Approval::Auto)
        .await;
    assert!(
        ok && text.contains("link") && text.contains("sysinfo"),
        "{text}"
    );
    assert!(!text.contains(ENV_SECRET));
}

#[tokio::test]
async fn a_symlink_to_an_outside_directory_leads_nowhere() {
    let c = case();
    std::os::unix::fs::symlink(c.outside.path(), c.path("out")).expect("symlink");
    std::os::unix::fs::symlink(c.outside.path().join("secret.txt"), c.path("s.txt"))
        .expect("symlink");
    std::fs::write(c.path("mine.txt"), "mine").expect("write");
    for args in [
        json!({"operation": "read", "path": "out/secret.txt"}),
        json!({"operation": "read", "path": "s.txt"}),
        json!({"operation": "list", "path": "out"}),
        json!({"operation": "list", "path": "out/dir"}),
        json!({"operation": "exists", "path": "out/secret.txt"}),
        json!({"operation": "write", "path": "out/new.txt", "content": "x"}),
        json!({"operation": "write", "path": "out/secret.txt", "content": "x"}),
        json!({"operation": "append", "path": "out/secret.txt", "content": "x"}),
        json!({"operation": "append", "path": "s.txt", "content": "x"}),
        json!({"operation": "mkdir", "path": "out/d"}),
        json!({"operation": "delete", "path": "out/secret.txt"}),
        json!({"operation": "delete", "path": "out/dir", "recursive": true}),
        json!({"operation": "move", "path": "out/secret.txt", "destination": "got.txt"}),
        json!({"operation": "move", "path": "mine.txt", "destination": "out/mine.txt"}),
    ] {
        c.walled(args).await;
    }
    assert!(c.path("mine.txt").exists());
    assert!(!c.path("got.txt").exists());
}

#[tokio::test]
async fn hard_links_to_outside_files_are_refused() {
    let c = case();
    std::fs::hard_link(c.outside.path().join("secret.txt"), c.path("notes.txt")).expect("link");
    for args in [
        json!({"operation": "read", "path": "notes.txt"}),
        json!({"operation": "read", "path": "notes.txt", "risk_level": "low"}),
        json!({"operation": "write", "path": "notes.txt", "content": "overwritten"}),
        json!({"operation": "append", "path": "notes.txt", "content": "more"}),
    ] {
        c.walled(args).await;
    }
    let (_, text) = c
        .execute(
            &json!({"operation": "read", "path": "notes.txt"}),
            &Approval::Confirmed {
                by: "tester".into(),
            },
        )
        .await;
    assert!(
        text.contains("2 hard links") && text.contains("outside the workspace"),
        "the refusal says why: {text}"
    );
}

#[tokio::test]
async fn a_symlink_swapped_in_after_the_gate_looked_is_not_followed() {
    let c = case();
    std::fs::create_dir(c.path("docs")).expect("mkdir");
    std::fs::write(c.path("docs/readme.txt"), "inside").expect("write");
    let before = snapshot(c.outside.path());
    let calls = [
        json!({"operation": "read", "path": "docs/readme.txt"}),
        json!({"operation": "list", "path": "docs"}),
        json!({"operation": "write", "path": "docs/new.txt", "content": "x", "risk_level": "low"}),
    ];
    for args in &calls {
        assert_eq!(
            c.decide(args),
            "auto",
            "{args} is harmless as the gate sees it"
        );
    }
    // Between the gate and the executor, `docs` becomes a link to the outside directory.
    std::fs::rename(c.path("docs"), c.path("docs.old")).expect("rename");
    std::os::unix::fs::symlink(c.outside.path().join("dir"), c.path("docs")).expect("symlink");
    for args in &calls {
        let (ok, text) = c.execute(args, &Approval::Auto).await;
        assert!(!ok && text.starts_with("refused"), "{args}: {text}");
        assert!(!text.contains(SECRET), "{text}");
    }
    assert_eq!(snapshot(c.outside.path()), before);
}

/// The same swap, raced: a thread flips `docs` between a directory inside and a link to the
/// outside while reads run; no read ever returns the outside file's content.
#[tokio::test]
async fn reads_racing_a_flipping_symlink_never_see_outside() {
    let c = case();
    let inside = c.path("docs.real");
    std::fs::create_dir(&inside).expect("mkdir");
    std::fs::write(inside.join("readme.txt"), "inside").expect("write");
    let link_in = c.path("docs.in");
    let link_out = c.path("docs.out");
    std::os::unix::fs::symlink("docs.real", &link_in).expect("symlink");
    std::os::unix::fs::symlink(c.outside.path().join("dir"), &link_out).expect("symlink");
    let docs = c.path("docs");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (stop, docs, link_in, link_out) = (stop.clone(), docs.clone(), link_in, link_out);
        std::thread::spawn(move || {
            let mut flips = 0u64;
            let tmp = docs.with_extension("tmp");
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let target = if flips.is_multiple_of(2) {
                    &link_in
                } else {
                    &link_out
                };
                let _ = std::fs::remove_file(&tmp);
                std::fs::hard_link(target, &tmp).expect("link the symlink");
                std::fs::rename(&tmp, &docs).expect("swap");
                flips += 1;
            }
            flips
        })
    };
    let args = object(&json!({"operation": "read", "path": "docs/readme.txt"}));
    let (mut inside_reads, mut refused) = (0, 0);
    for _ in 0..400 {
        match c.tool.execute(&args, &Approval::Auto).await {
            Ok(out) => {
                assert!(!out.text.contains(SECRET), "read the outside file");
                assert_eq!(out.text, "inside");
                inside_reads += 1;
            }
            Err(e) => {
                assert!(!e.to_string().contains(SECRET), "{e}");
                refused += 1;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let flips = flipper.join().expect("flipper");
    assert!(flips > 10, "the link flipped {flips} times");
    assert!(
        inside_reads + refused == 400 && refused > 0,
        "{inside_reads} / {refused}"
    );
}

#[tokio::test]
async fn changes_to_git_files_and_existing_files_wait_for_a_person() {
    let c = case();
    std::fs::create_dir_all(c.path(".git/hooks")).expect("mkdir");
    std::fs::write(c.path(".git/config"), "[core]\n").expect("write");
    std::fs::write(c.path("report.txt"), "original").expect("write");
    std::os::unix::fs::symlink(".git/hooks", c.path("hooks")).expect("symlink");
    for args in [
        json!({"operation": "write", "path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n", "risk_level": "low"}),
        json!({"operation": "append", "path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n", "risk_level": "low"}),
        json!({"operation": "write", "path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n", "risk_level": "low"}),
        json!({"operation": "write", "path": ".GIT/hooks/post-checkout", "content": "#!/bin/sh\n", "risk_level": "low"}),
        json!({"operation": "write", "path": "hooks/pre-push", "content": "#!/bin/sh\n", "risk_level": "low"}),
        json!({"operation": "write", "path": ".gitattributes", "content": "* filter=x\n", "risk_level": "low"}),
        json!({"operation": "write", "path": "report.txt", "content": "replaced", "risk_level": "low"}),
        json!({"operation": "append", "path": "report.txt", "content": " and more", "risk_level": "low"}),
    ] {
        assert_eq!(c.decide(&args), "confirm", "{args}");
        // Had it run without a click anyway, the executor refuses it.
        let (ok, text) = c.execute(&args, &Approval::Auto).await;
        assert!(!ok && text.starts_with("refused"), "{args}: {text}");
    }
    assert_eq!(
        std::fs::read_to_string(c.path(".git/config")).expect("read"),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(c.path("report.txt")).expect("read"),
        "original"
    );
    let hooks: Vec<_> = std::fs::read_dir(c.path(".git/hooks"))
        .expect("hooks")
        .collect();
    assert!(hooks.is_empty(), "no hook was written");
    assert!(!c.path(".gitattributes").exists());
    assert!(!c.path(".GIT").exists());
    // A person's click runs it.
    let (ok, text) = c
        .execute(
            &json!({"operation": "append", "path": "report.txt", "content": " and more"}),
            &Approval::Confirmed {
                by: "tester".into(),
            },
        )
        .await;
    assert!(ok, "{text}");
    assert_eq!(
        std::fs::read_to_string(c.path("report.txt")).expect("read"),
        "original and more"
    );
}

#[tokio::test]
async fn a_new_file_is_private_and_a_replaced_one_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let c = case();
    let confirmed = Approval::Confirmed {
        by: "tester".into(),
    };
    let (ok, text) = c
        .execute(
            &json!({"operation": "write", "path": "new.txt", "content": "x"}),
            &confirmed,
        )
        .await;
    assert!(ok, "{text}");
    let mode = |p: &str| {
        std::fs::metadata(c.path(p))
            .expect("meta")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("new.txt"), 0o600, "nobody else can write a new file");
    std::fs::write(c.path("script.sh"), "old").expect("write");
    std::fs::set_permissions(c.path("script.sh"), std::fs::Permissions::from_mode(0o750))
        .expect("chmod");
    let (ok, text) = c
        .execute(
            &json!({"operation": "write", "path": "script.sh", "content": "new"}),
            &confirmed,
        )
        .await;
    assert!(ok, "{text}");
    assert_eq!(mode("script.sh"), 0o750);
}
