//! `riskgate run` stops on SIGTERM and SIGINT within a few seconds while Discord cannot be
//! reached: a port that refuses connections, and one that accepts them and never answers.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long the bot gets after the signal; the grace for running steps does not apply, as
/// nothing is running.
const STOP_WITHIN: Duration = Duration::from_secs(5);

/// A loopback port whose connections are accepted and then never answered.
fn black_hole() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    address
}

/// A loopback port nothing listens on, so connections are refused.
fn refusing() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener);
    address
}

fn start_bot(discord: SocketAddr, dir: &std::path::Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_riskgate"))
        .arg("run")
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("RISKGATE_LOG", "info")
        .env("DISCORD_TOKEN", "fake-token")
        .env(
            "RISKGATE__DISCORD__API_BASE_URL",
            format!("http://{discord}"),
        )
        .env(
            "RISKGATE__STORE__URL",
            format!("sqlite://{}", dir.join("state.db").display()),
        )
        .env("RISKGATE__TOOLS__WORKSPACE", dir.join("workspace"))
        // Nothing listens there: the bot must not need the model to start or stop.
        .env(
            "RISKGATE__LLM__BASE_URL",
            format!("http://{}/v1", refusing()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start riskgate")
}

/// Sends `signal` after a second and returns the exit status and the time the bot took to
/// stop, killing it (and failing) if it is still running after [`STOP_WITHIN`].
fn stop_with(discord: SocketAddr, signal: libc::c_int) -> (ExitStatus, Duration, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = start_bot(discord, dir.path());
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "the bot exited before the signal"
    );
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: `pid` is our own child, which has not been waited for, so it is still ours.
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0, "kill failed");
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if signalled.elapsed() > STOP_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            panic!("riskgate run was still running {STOP_WITHIN:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = signalled.elapsed();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stderr);
    }
    (status, took, stderr)
}

fn assert_stopped(case: &str, (status, took, stderr): (ExitStatus, Duration, String)) {
    assert!(
        status.success(),
        "{case}: a requested stop exits with 0, got {status:?} after {took:?}\n{stderr}"
    );
    assert!(
        stderr.contains("signal received: shutting down"),
        "{case}: the stop was not the bot's own\n{stderr}"
    );
    assert!(took < STOP_WITHIN, "{case}: took {took:?}");
}

#[test]
fn sigterm_stops_the_bot_while_discord_refuses_connections() {
    assert_stopped("SIGTERM, refused", stop_with(refusing(), libc::SIGTERM));
}

#[test]
fn sigint_stops_the_bot_while_discord_refuses_connections() {
    assert_stopped("SIGINT, refused", stop_with(refusing(), libc::SIGINT));
}

#[test]
fn sigterm_stops_the_bot_while_discord_never_answers() {
    assert_stopped(
        "SIGTERM, black hole",
        stop_with(black_hole(), libc::SIGTERM),
    );
}

#[test]
fn sigint_stops_the_bot_while_discord_never_answers() {
    assert_stopped("SIGINT, black hole", stop_with(black_hole(), libc::SIGINT));
}
