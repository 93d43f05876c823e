//! `file_operations` executing for real in a temp workspace.

use std::sync::Arc;

use riskgate::config::Settings;
use riskgate::core::risk::ChannelMode;
use riskgate::core::tools::{Approval, AssessContext, RiskGate, Tool, ToolCall, ToolError};
use serde_json::{Value, json};

struct Workspace {
    dir: tempfile::TempDir,
    gate: RiskGate,
    tool: Arc<dyn Tool>,
}

fn workspace(configure: impl FnOnce(&mut Settings)) -> Workspace {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = dir.path().to_path_buf();
    configure(&mut settings);
    let gate = riskgate::tools::builtin_gate(&settings);
    let tool = gate
        .registry()
        .get("file_operations")
        .expect("registered")
        .clone();
    Workspace { dir, gate, tool }
}

impl Workspace {
    async fn run(&self, args: Value) -> Result<riskgate::core::tools::ToolOutput, ToolError> {
        let Value::Object(args) = args else {
            panic!("object")
        };
        self.tool
            .execute(
                &args,
                &Approval::Confirmed {
                    by: "tester".into(),
                },
            )
            .await
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }
}

#[tokio::test]
async fn reads_text_and_describes_binary() {
    let ws = workspace(|_| {});
    std::fs::write(ws.path("notes.md"), "# Notes\nline 2\n").expect("write");
    let out = ws
        .run(json!({"operation": "read", "path": "notes.md"}))
        .await
        .expect("read");
    assert_eq!(out.text, "# Notes\nline 2\n");
    assert!(out.summary.contains("2 lines"), "{}", out.summary);
    assert!(out.chat.contains("```md\n# Notes"), "{}", out.chat);
    assert!(out.attachment.is_none());

    std::fs::write(ws.path("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("write");
    let out = ws
        .run(json!({"operation": "read", "path": "logo.png"}))
        .await
        .expect("read");
    assert!(out.summary.starts_with("binary file"), "{}", out.summary);
    assert!(out.text.contains("89 50 4e 47"), "{}", out.text);

    let err = ws
        .run(json!({"operation": "read", "path": "."}))
        .await
        .expect_err("dir");
    assert!(err.to_string().contains("list"), "{err}");
    let err = ws
        .run(json!({"operation": "read", "path": "missing.txt"}))
        .await
        .expect_err("missing");
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[tokio::test]
async fn huge_files_are_read_up_to_the_limit_and_attached() {
    let ws = workspace(|s| s.files.read_limit_bytes = 64 * 1024);
    let line = "0123456789abcdef\n";
    std::fs::write(ws.path("big.log"), line.repeat(400_000)).expect("write"); // 6.8 MB
    let out = ws
        .run(json!({"operation": "read", "path": "big.log"}))
        .await
        .expect("read");
    assert!(
        out.summary.contains("only the first 64.0 KiB read"),
        "{}",
        out.summary
    );
    assert!(out.text.len() < 70 * 1024);
    assert!(
        out.text.ends_with("read]"),
        "{}",
        &out.text[out.text.len() - 60..]
    );
    let attachment = out.attachment.expect("attached");
    assert_eq!(attachment.bytes.len(), 64 * 1024);
    assert!(out.chat.chars().count() < 2000, "chat stays within budget");
}

#[tokio::test]
async fn lists_sorted_capped_with_type_and_size() {
    let ws = workspace(|s| s.files.list_limit = 3);
    for name in ["b.txt", "a.txt", "d.txt"] {
        std::fs::write(ws.path(name), "12345").expect("write");
    }
    std::fs::create_dir(ws.path("c")).expect("mkdir");
    let out = ws
        .run(json!({"operation": "list", "path": "."}))
        .await
        .expect("list");
    assert_eq!(out.summary, "3 of 4 entries");
    let names: Vec<&str> = out
        .text
        .lines()
        .map(|l| l.split_whitespace().last().unwrap_or(""))
        .collect();
    assert_eq!(names, ["a.txt", "b.txt", "c/"]);
    assert!(
        out.text
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("file") && l.contains("5 B"))
    );
    assert!(out.text.contains("dir "));
}

#[tokio::test]
async fn writes_appends_and_directories() {
    let ws = workspace(|_| {});
    let out = ws
        .run(json!({"operation": "write", "path": "out.txt", "content": "hello"}))
        .await
        .expect("write");
    assert_eq!(out.summary, "wrote 5 B to out.txt");
    ws.run(json!({"operation": "append", "path": "out.txt", "content": " world"}))
        .await
        .expect("append");
    assert_eq!(
        std::fs::read_to_string(ws.path("out.txt")).expect("read"),
        "hello world"
    );
    let leftovers: Vec<_> = std::fs::read_dir(ws.dir.path())
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".riskgate-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files are renamed away");

    let err = ws
        .run(json!({"operation": "write", "path": "no/dir/x.txt", "content": "x"}))
        .await
        .expect_err("parent");
    assert!(err.to_string().contains("mkdir"), "{err}");
    ws.run(json!({"operation": "mkdir", "path": "no/dir", "recursive": true}))
        .await
        .expect("mkdir -p");
    ws.run(json!({"operation": "write", "path": "no/dir/x.txt", "content": "x"}))
        .await
        .expect("write");

    let err = ws
        .run(json!({"operation": "delete", "path": "no"}))
        .await
        .expect_err("not empty");
    assert!(err.to_string().contains("recursive"), "{err}");
    ws.run(json!({"operation": "delete", "path": "no", "recursive": true}))
        .await
        .expect("rm -r");
    assert!(!ws.path("no").exists());

    ws.run(json!({"operation": "move", "path": "out.txt", "destination": "moved.txt"}))
        .await
        .expect("move");
    assert!(ws.path("moved.txt").exists() && !ws.path("out.txt").exists());
    let err = ws
        .run(json!({"operation": "write", "path": "x.txt"}))
        .await
        .expect_err("content");
    assert!(matches!(err, ToolError::InvalidArguments(_)), "{err}");
}

#[tokio::test]
async fn writes_are_atomic_for_a_concurrent_reader() {
    let ws = workspace(|_| {});
    let size = 512 * 1024;
    let a = "A".repeat(size);
    let b = "B".repeat(size);
    std::fs::write(ws.path("data.txt"), &a).expect("write");
    let path = ws.path("data.txt");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let content = std::fs::read(&path).expect("the file always exists");
                assert_eq!(content.len(), size, "a reader never sees a partial file");
                assert!(
                    content.iter().all(|&c| c == content[0]),
                    "never a mix of old and new"
                );
                reads += 1;
            }
            reads
        })
    };
    for i in 0..40 {
        let content = if i % 2 == 0 { &b } else { &a };
        ws.run(json!({"operation": "write", "path": "data.txt", "content": content}))
            .await
            .expect("write");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reads = reader.join().expect("reader saw only whole files");
    assert!(reads > 0);
}

#[tokio::test]
async fn symlinks_out_of_the_workspace_are_refused_at_execution_too() {
    let ws = workspace(|_| {});
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "s3cret").expect("write");

    // The gate saw a harmless path; a symlink appears before the call runs.
    let call = ToolCall {
        tool: "file_operations".into(),
        arguments: json!({"operation": "read", "path": "report.txt"})
            .as_object()
            .cloned()
            .expect("object"),
    };
    let gated = ws
        .gate
        .check(&call, ChannelMode::Smart, &AssessContext::default());
    assert_eq!(gated.decision.decision.as_str(), "auto");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), ws.path("report.txt"))
        .expect("symlink");
    let err = ws
        .tool
        .execute(&gated.arguments, &Approval::Auto)
        .await
        .expect_err("refused");
    assert!(matches!(err, ToolError::Refused(_)), "{err}");

    std::os::unix::fs::symlink(outside.path(), ws.path("out")).expect("symlink");
    for args in [
        json!({"operation": "write", "path": "out/new.txt", "content": "x"}),
        json!({"operation": "list", "path": "out"}),
        json!({"operation": "move", "path": "a.txt", "destination": "out/a.txt"}),
        json!({"operation": "read", "path": "../etc/passwd"}),
    ] {
        let err = ws.run(args.clone()).await.expect_err("refused");
        assert!(matches!(err, ToolError::Refused(_)), "{args}: {err}");
    }
    assert!(!outside.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).expect("read"),
        "s3cret"
    );
}
