//! Each line starts from nothing an earlier call left, and is bounded as a whole: proven by
//! effects through the real binary (`riskgate console` with a scripted model; a person
//! confirms where a test says so).
//!
//! - Calls run without a click plant what would steer a later line (git's XDG config with a
//!   `core.fsmonitor` program, a Python `.pth` in the user site, a cloned repository's
//!   tracked `.gitconfig`); a person then confirms an innocent `git add -A` and
//!   a `python3 -c` line: the planted marker file is never written and the planted
//!   listener never hears a connection, while the same plants do fire for programs run with
//!   HOME = the workspace (the control).
//! - A device node and a FIFO in the workspace are never read without a click; a confirmed
//!   line sees the workspace `nodev`.
//! - Memory (private and shared), processes and the private TMPDIR are bounded for the whole
//!   line, measured from outside by sampling `/proc` while the line runs.
//! - Other processes' `/proc` entries (command lines with passwords) are hidden, and `clone`
//!   cannot make namespaces.

mod support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use support::console_scene::{Scene, decisions, sandbox_ready, spare_answers};
use support::fake_llm::{self, FakeLlm, Scripted};

/// What a scripted call is.
enum Call<'a> {
    /// A command line, with the model's `risk_level` if any.
    Line(&'a str, Option<&'a str>),
    /// A file written with `risk_level: low` (a new file runs without a click), after its
    /// directory is made the same way.
    Write(&'a str, &'a str),
}

fn steps(calls: &[Call<'_>]) -> Vec<Scripted> {
    let mut steps: Vec<Scripted> = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let mut step = |tool: &str, args: serde_json::Value| {
            let id = format!("c{i}-{}", steps.len());
            steps.push(fake_llm::tool_calls(&[(&id, tool, args)]));
        };
        match call {
            Call::Line(line, risk) => {
                let mut args = json!({ "command": line });
                if let Some(risk) = risk {
                    args["risk_level"] = json!(risk);
                }
                step("execute_command", args);
            }
            Call::Write(path, content) => {
                if let Some((dir, _)) = path.rsplit_once('/') {
                    step(
                        "file_operations",
                        json!({"operation": "mkdir", "path": dir, "recursive": true, "risk_level": "low"}),
                    );
                }
                step(
                    "file_operations",
                    json!({"operation": "write", "path": path, "content": content, "risk_level": "low"}),
                );
            }
        }
    }
    steps.extend(spare_answers());
    steps
}

/// Whether lines get per-line groups and a view of their own on this machine; if not, the
/// test says what it skips.
fn per_line_walls(what: &str) -> bool {
    if !sandbox_ready() {
        return false;
    }
    let path = riskgate::tools::command::execute::safe_path(std::env::var_os("PATH").as_deref());
    let sandbox = riskgate::tools::command::sandbox::Sandbox::new(
        &riskgate::config::SandboxSettings::default(),
        Path::new("/tmp"),
        &path,
    );
    let per_line = sandbox.per_line();
    match (&per_line.limits, &per_line.view) {
        (Ok(_), Ok(_)) => true,
        (limits, view) => {
            eprintln!("skipped ({what}): per-line walls missing here: {limits:?} / {view:?}");
            false
        }
    }
}

fn git(ws: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .stdin(Stdio::null())
        .output()
        .expect("git")
}

/// `python3`'s user site below a HOME: `.local/lib/python3.X/site-packages`.
fn python_user_site() -> String {
    let version = Command::new("python3")
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .expect("python3");
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    format!(".local/lib/python{version}/site-packages")
}

#[tokio::test]
async fn a_confirmed_line_runs_nothing_that_calls_without_a_click_prepared() {
    if !sandbox_ready() {
        return;
    }
    let scene = Scene::new();
    let ws = scene.ws.display().to_string();
    let empty_home = scene.bot.join("home");
    std::fs::create_dir_all(&empty_home).expect("mkdir");
    assert!(
        git(&scene.ws, &empty_home, &["init", "-q"])
            .status
            .success()
    );
    std::fs::write(scene.ws.join("notes.txt"), "notes\n").expect("write");
    // A cloned repository's tracked `.gitconfig`: global configuration where HOME is the
    // workspace.
    std::fs::write(
        scene.ws.join(".gitconfig"),
        format!("[core]\n\tfsmonitor = sh {ws}/payload.sh\n"),
    )
    .expect("write");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let payload = format!(
        "#!/bin/sh\necho ran >> {ws}/PAYLOAD-RAN\npython3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\"\n"
    );
    let git_config = format!("[core]\n\tfsmonitor = sh {ws}/payload.sh\n");
    let site = python_user_site();
    let pth_path = format!("{site}/steer.pth");
    let pth = format!(
        "import socket; open('{ws}/PTH-RAN', 'a').write('ran'); socket.create_connection(('127.0.0.1', {port}))\n"
    );
    let calls = [
        Call::Write("payload.sh", &payload),
        Call::Write(".config/git/config", &git_config),
        Call::Write(&pth_path, &pth),
        Call::Write(".curlrc", "output = CURL-RAN\n"),
        Call::Line("git add -A", None),
        Call::Line(
            "python3 -c 'import platform; print(platform.python_version())'",
            None,
        ),
        Call::Line(
            "cat ~/.config/git/config ~/.gitconfig 2>&1; ls -A ~; echo HOME-LISTED",
            None,
        ),
    ];
    let fake = FakeLlm::start(steps(&calls)).await;
    let events = scene.run_answering(&fake, "tidy the repository", "y");
    let saw = tool_results(&fake).await;
    assert_eq!(
        decisions(&events),
        [
            "auto", "auto", "auto", "auto", "auto", "auto", "confirm", "confirm", "confirm"
        ],
        "{:?}\n{saw}",
        decisions(&events)
    );
    // The plants are there: the calls without a click did write them.
    for planted in [
        "payload.sh",
        ".config/git/config",
        ".curlrc",
        pth_path.as_str(),
    ] {
        assert!(scene.ws.join(planted).exists(), "{planted} was not planted");
    }
    assert!(
        !scene.ws.join("PAYLOAD-RAN").exists(),
        "git ran the payload:\n{saw}"
    );
    assert!(
        !scene.ws.join("PTH-RAN").exists(),
        "python ran the .pth:\n{saw}"
    );
    assert!(
        listener.accept().is_err(),
        "a planted program connected to the listener"
    );
    // The confirmed lines did run, each in an empty HOME of its own.
    assert!(saw.contains("HOME-LISTED"), "{saw}");
    assert!(saw.contains("No such file or directory"), "{saw}");
    let staged = git(&scene.ws, &empty_home, &["diff", "--cached", "--name-only"]);
    assert!(
        String::from_utf8_lossy(&staged.stdout).contains("notes.txt"),
        "git add -A did not run"
    );
    // The control: with HOME = the workspace, as before, the same plants fire.
    let control = git(&scene.ws, &scene.ws, &["add", "-A"]);
    assert!(control.status.success());
    assert!(
        scene.ws.join("PAYLOAD-RAN").exists(),
        "the control ran no payload: the test proves nothing"
    );
    let python = Command::new("python3")
        .args(["-m", "platform"])
        .current_dir(&scene.ws)
        .env("HOME", &scene.ws)
        .output()
        .expect("python3");
    assert!(python.status.success());
    assert!(
        scene.ws.join("PTH-RAN").exists(),
        "the control ran no .pth: the test proves nothing"
    );
}

/// What the tools returned in the last request the model got, one result after another.
async fn tool_results(fake: &FakeLlm) -> String {
    let requests = fake.requests().await;
    let Some(last) = requests.last() else {
        return String::new();
    };
    last["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `mknod` of a character device, where the test may make one (as root).
fn make_device(path: &Path, major: u32, minor: u32) -> bool {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: mknod reads a NUL-terminated path; the device number is plain integers.
    let rc = unsafe {
        libc::mknod(
            c.as_ptr(),
            libc::S_IFCHR | 0o644,
            libc::makedev(major, minor),
        )
    };
    if rc != 0 {
        eprintln!(
            "skipped: no device node can be made here ({})",
            std::io::Error::last_os_error()
        );
    }
    rc == 0
}

#[tokio::test]
async fn a_device_node_or_fifo_in_the_workspace_is_never_read_without_a_click() {
    if !sandbox_ready() {
        return;
    }
    let scene = Scene::new();
    // What an archive unpacked as root can leave: here a twin of /dev/urandom, whose bytes
    // a read would show (as a disk's would).
    if !make_device(&scene.ws.join("disk"), 1, 9) {
        return;
    }
    let fifo =
        std::ffi::CString::new(scene.ws.join("pipe").as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: mkfifo reads a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // Another program writes a secret into the FIFO as soon as anyone reads it.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, stop) = (scene.ws.join("pipe"), Arc::clone(&stop));
        std::thread::spawn(move || {
            use std::os::unix::fs::OpenOptionsExt;
            while !stop.load(Ordering::Relaxed) {
                let opened = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path);
                if let Ok(mut pipe) = opened {
                    let _ = std::io::Write::write_all(&mut pipe, b"fifo-secret-90d1\n");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let calls = [
        Call::Line("grep -a -c . disk", None),
        Call::Line("head -c 64 disk | od -An -tx1", Some("low")),
        Call::Line("cat pipe", None),
        Call::Line("grep -r secret .", None),
    ];
    let fake = FakeLlm::start(steps(&calls)).await;
    let events = scene.run(&fake, "read everything\n", &[]);
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer");
    let saw = tool_results(&fake).await;
    assert_eq!(
        decisions(&events),
        ["auto"; 4],
        "{:?}\n{saw}",
        decisions(&events)
    );
    assert!(
        !saw.contains("fifo-secret-90d1"),
        "the FIFO was read:\n{saw}"
    );
    assert!(!saw.contains("exit status 0"), "a line ran:\n{saw}");
    assert_eq!(
        saw.matches("holds a character device (`disk`)").count()
            + saw.matches("holds a FIFO (`pipe`)").count(),
        4,
        "{saw}"
    );
    // A confirmed line sees the workspace nodev: the device reads as nothing.
    if !per_line_walls("a confirmed line's nodev workspace") {
        return;
    }
    std::fs::remove_file(scene.ws.join("pipe")).expect("rm");
    let confirmed = Call::Line("head -c 64 disk | od -An -tx1", Some("medium"));
    let fake = FakeLlm::start(steps(&[confirmed])).await;
    let events = scene.run_answering(&fake, "read the disk", "y");
    let saw = tool_results(&fake).await;
    assert_eq!(decisions(&events), ["confirm"], "{saw}");
    assert!(saw.contains("Permission denied"), "{saw}");
}

/// The largest sum of resident memory, the most processes, and the largest TMPDIR file that
/// any sample saw, of the processes whose command line holds a marker.
#[derive(Debug, Default, Clone, Copy)]
struct Peak {
    rss_kib: u64,
    processes: usize,
    tmp_file_bytes: u64,
}

/// Samples `/proc` every few milliseconds until stopped.
struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Peak>,
}

impl Sampler {
    fn start(marker: &'static str) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut peak = Peak::default();
            while !flag.load(Ordering::Relaxed) {
                let mut sample = Peak::default();
                for pid in marked(marker) {
                    sample.processes += 1;
                    sample.rss_kib += resident_kib(pid);
                    sample.tmp_file_bytes = sample.tmp_file_bytes.max(tmp_file(pid));
                }
                peak.rss_kib = peak.rss_kib.max(sample.rss_kib);
                peak.processes = peak.processes.max(sample.processes);
                peak.tmp_file_bytes = peak.tmp_file_bytes.max(sample.tmp_file_bytes);
                std::thread::sleep(Duration::from_millis(5));
            }
            peak
        });
        Self { stop, thread }
    }

    fn stop(self) -> Peak {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("sampler")
    }
}

/// Processes whose command line holds `marker` (the test's own excepted).
fn marked(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// The anonymous and shared memory a process holds (RssAnon + RssShmem), in KiB: what the
/// line takes from the machine (program files, shared by every process, are left out).
fn resident_kib(pid: u32) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    ["RssAnon:", "RssShmem:"]
        .iter()
        .filter_map(|key| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .sum()
}

/// The size of `$TMPDIR/f` as the process sees it (through its own root, so in its own
/// mount namespace).
fn tmp_file(pid: u32) -> u64 {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return 0;
    };
    let tmpdir = environ
        .split(|&b| b == 0)
        .find_map(|var| var.strip_prefix(b"TMPDIR="))
        .map(|v| PathBuf::from(String::from_utf8_lossy(v).into_owned()));
    tmpdir
        .and_then(|dir| {
            let inside = dir.join("f");
            let path = format!("/proc/{pid}/root{}", inside.display());
            std::fs::metadata(path).ok()
        })
        .map_or(0, |m| m.len())
}

const MIB: u64 = 1024 * 1024;

/// Runs one line the model rated `low` (so it runs without a click) under the given
/// settings, sampling its processes by `marker`.
async fn sampled_line(line: &str, marker: &'static str, env: &[(&str, &str)]) -> (Peak, String) {
    let scene = Scene::new();
    let fake = FakeLlm::start(steps(&[Call::Line(line, Some("low"))])).await;
    let sampler = Sampler::start(marker);
    let events = scene.run(&fake, "go\n", env);
    let peak = sampler.stop();
    assert_eq!(decisions(&events), ["auto"]);
    (peak, tool_results(&fake).await)
}

#[tokio::test]
async fn memory_is_bounded_for_the_whole_line_shared_mappings_included() {
    if !per_line_walls("per-line memory") {
        return;
    }
    let memory = ("RISKGATE__COMMAND__SANDBOX__MEMORY_BYTES", "536870912");
    // Three children of 300 MiB each: every one is under the 512 MiB, together they are not.
    let forks = "python3 -c \"import os, time  # rg-forked-memory
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        b = b'x' * (300 << 20)
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
print('children', [os.waitpid(k, 0)[1] for k in kids])
\"";
    let (peak, saw) = sampled_line(forks, "rg-forked-memory", &[memory]).await;
    assert!(peak.processes >= 2, "{peak:?}");
    assert!(
        peak.rss_kib * 1024 <= 540 * MIB,
        "the line held {} MiB: {peak:?}\n{saw}",
        peak.rss_kib / 1024
    );
    assert!(saw.contains("memory limit reached"), "{saw}");
    // 700 MiB of shared memory, which RLIMIT_DATA does not count.
    let shared = "python3 -c \"import mmap  # rg-shared-memory
m = mmap.mmap(-1, 700 << 20, flags=mmap.MAP_SHARED)
for _ in range(700):
    m.write(b'y' * (1 << 20))
print('wrote shared', m.tell())
\"";
    let (peak, saw) = sampled_line(shared, "rg-shared-memory", &[memory]).await;
    assert!(
        peak.rss_kib * 1024 <= 540 * MIB,
        "the line held {} MiB: {peak:?}\n{saw}",
        peak.rss_kib / 1024
    );
    assert!(!saw.contains("wrote shared 734003200"), "{saw}");
}

#[tokio::test]
async fn processes_are_bounded_for_the_whole_line_also_as_root() {
    if !per_line_walls("per-line processes") {
        return;
    }
    let line = "python3 -c \"import os, time  # rg-fork-count
n = 0
for i in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    n += 1
print('forked', n)
\"";
    let (peak, saw) = sampled_line(
        line,
        "rg-fork-count",
        &[("RISKGATE__COMMAND__SANDBOX__PROCESSES", "20")],
    )
    .await;
    assert!(
        peak.processes <= 20,
        "{} processes at once: {peak:?}",
        peak.processes
    );
    assert!(peak.processes >= 10, "the line barely ran: {peak:?}\n{saw}");
    assert!(saw.contains("forked 19"), "{saw}");
    assert!(saw.contains("process limit reached"), "{saw}");
}

#[tokio::test]
async fn the_lines_private_tmpdir_is_bounded() {
    if !per_line_walls("a bounded TMPDIR") {
        return;
    }
    let line = "python3 -c \"import os, time  # rg-tmp-fill
n = 0
try:
    with open(os.path.join(os.environ['TMPDIR'], 'f'), 'wb') as f:
        for i in range(200):
            f.write(b'z' * (1 << 20))
            f.flush()
            n += 1
except OSError as e:
    print('stopped', e.errno)
print('wrote MiB', n)
time.sleep(0.5)
\"";
    let (peak, saw) = sampled_line(
        line,
        "rg-tmp-fill",
        &[("RISKGATE__COMMAND__SANDBOX__TMP_BYTES", "67108864")],
    )
    .await;
    assert!(saw.contains("stopped 28"), "no ENOSPC:\n{saw}");
    assert!(
        peak.tmp_file_bytes <= 64 * MIB,
        "TMPDIR held {} bytes",
        peak.tmp_file_bytes
    );
    assert!(
        peak.tmp_file_bytes >= 32 * MIB,
        "the sampler never saw the file: {peak:?}"
    );
}

#[tokio::test]
async fn other_processes_are_hidden_and_clone_makes_no_namespace() {
    if !per_line_walls("a private /proc") {
        return;
    }
    const SECRET: &str = "proc-secret-71c2";
    let mut other = Command::new("sh")
        .args([
            "-c",
            "sleep 30",
            "rg-proc-test",
            &format!("--db-password={SECRET}"),
        ])
        .spawn()
        .expect("spawn");
    // The control: from outside the sandbox the secret is plain to see (once `exec` is done).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", other.id())).expect("cmdline");
        if String::from_utf8_lossy(&cmdline).contains(SECRET) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the control cannot see the secret: the test proves nothing"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let list = "python3 -c \"import os
pids = [p for p in os.listdir('/proc') if p.isdigit()]
for p in pids:
    try:
        print('pid', p, open('/proc/%s/cmdline' % p, 'rb').read().replace(bytes(1), b' ').decode())
    except OSError as e:
        print('pid', p, 'unreadable', e.errno)
print('count', len(pids))
\"";
    let clone = "python3 -c \"import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
flags = 0x10000000 | 0x40000000
r = libc.syscall(56, flags | 17, 0, 0, 0, 0)
if r == 0:
    os._exit(0)
print('clone', r, ctypes.get_errno())
args = ctypes.create_string_buffer(struct.pack('8Q', flags, 0, 0, 0, 17, 0, 0, 0))
r = libc.syscall(435, args, 64)
if r == 0:
    os._exit(0)
print('clone3', r, ctypes.get_errno())
pid = os.fork()
if pid == 0:
    os._exit(0)
print('fork', os.waitpid(pid, 0)[1])
\"";
    let scene = Scene::new();
    let fake = FakeLlm::start(steps(&[
        Call::Line(list, Some("low")),
        Call::Line("ps -eo pid,args", Some("low")),
        Call::Line(clone, Some("low")),
    ]))
    .await;
    let events = scene.run(&fake, "look around\n", &[]);
    let _ = other.kill();
    let _ = other.wait();
    let saw = tool_results(&fake).await;
    assert_eq!(decisions(&events), ["auto"; 3], "{saw}");
    assert!(
        !saw.contains(SECRET),
        "another process's command line:\n{saw}"
    );
    assert!(!saw.contains("rg-proc-test"), "{saw}");
    let listing = saw
        .split("</tool_output>")
        .find(|c| c.contains("count "))
        .unwrap_or_else(|| panic!("the listing ran:\n{saw}"));
    let count: usize = listing
        .split("count ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .expect("a count");
    assert!(count <= 2, "the line saw {count} processes:\n{listing}");
    assert!(
        saw.contains("clone -1 1"),
        "clone with namespace flags:\n{saw}"
    );
    assert!(saw.contains("clone3 -1 38"), "clone3:\n{saw}");
    assert!(saw.contains("fork 0"), "a plain fork still works:\n{saw}");
}
