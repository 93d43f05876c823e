//! A TCP proxy between riskgate and a real PostgreSQL, to play a database restart without
//! touching the shared server: a "restart" drops every open connection and stops listening
//! (new connections are refused, as by a stopped server) for a while, then listens on the
//! same port again.
//!
//! `cut_after` plays the worst moment of a restart: a statement reaches the server and is
//! committed, but its answer is lost because the connection dies first.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

struct Shared {
    upstream: SocketAddr,
    /// Whether the "server" is up: listening and passing answers.
    up: watch::Sender<bool>,
    /// Bumped to drop every open connection.
    generation: watch::Sender<u64>,
    /// The next client chunk containing these bytes is forwarded, then the proxy goes down
    /// for the given time, its answer discarded.
    cut: Mutex<Option<(Vec<u8>, Duration)>>,
    /// Times a `cut_after` fired.
    cuts: AtomicUsize,
}

/// The running proxy; it stops with the test's runtime.
pub struct PgProxy {
    shared: Arc<Shared>,
    address: SocketAddr,
}

impl PgProxy {
    /// Listens on a free loopback port and forwards to the server of `upstream_url`.
    pub async fn start(upstream_url: &str) -> Self {
        let url = url::Url::parse(upstream_url).expect("a PostgreSQL URL");
        let host = url.host_str().unwrap_or("127.0.0.1").to_owned();
        let port = url.port().unwrap_or(5432);
        let upstream = tokio::net::lookup_host((host.as_str(), port))
            .await
            .expect("resolve the PostgreSQL host")
            .next()
            .expect("an address for the PostgreSQL host");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let shared = Arc::new(Shared {
            upstream,
            up: watch::channel(true).0,
            generation: watch::channel(0).0,
            cut: Mutex::new(None),
            cuts: AtomicUsize::new(0),
        });
        tokio::spawn(serve(listener, address, shared.clone()));
        Self { shared, address }
    }

    /// `url` with its host and port replaced by the proxy's.
    pub fn url(&self, url: &str) -> String {
        let mut url = url::Url::parse(url).expect("a PostgreSQL URL");
        url.set_host(Some("127.0.0.1")).expect("host");
        url.set_port(Some(self.address.port())).expect("port");
        url.to_string()
    }

    /// The database goes away: every open connection is dropped, new ones are refused.
    pub fn go_down(&self) {
        self.shared.up.send_replace(false);
        self.shared.generation.send_modify(|g| *g += 1);
    }

    /// The database is back.
    pub fn come_up(&self) {
        self.shared.up.send_replace(true);
    }

    /// A restart: down now, up again after `downtime` (in the background).
    pub fn restart(&self, downtime: Duration) {
        self.go_down();
        let shared = self.shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(downtime).await;
            shared.up.send_replace(true);
        });
    }

    /// The next statement whose bytes (a bound value, say) contain `marker` reaches the
    /// server, but its answer is lost: the proxy goes down as it passes, for `downtime`.
    pub fn cut_after(&self, marker: &[u8], downtime: Duration) {
        *self.shared.cut.lock().expect("cut") = Some((marker.to_vec(), downtime));
    }

    /// How many `cut_after`s fired.
    pub fn cuts(&self) -> usize {
        self.shared.cuts.load(Ordering::SeqCst)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Listens while up; while down the port is closed, so connecting is refused.
async fn serve(listener: TcpListener, address: SocketAddr, shared: Arc<Shared>) {
    let mut listener = Some(listener);
    let mut up = shared.up.subscribe();
    loop {
        let current = match listener.take() {
            Some(listener) => listener,
            None => {
                if up.wait_for(|up| *up).await.is_err() {
                    return;
                }
                match rebind(address).await {
                    Some(listener) => listener,
                    None => return,
                }
            }
        };
        loop {
            tokio::select! {
                accepted = current.accept() => match accepted {
                    Ok((client, _)) => {
                        tokio::spawn(pump(client, shared.clone()));
                    }
                    Err(_) => return,
                },
                down = up.wait_for(|up| !*up) => {
                    if down.is_err() {
                        return;
                    }
                    break;
                }
            }
        }
        drop(current);
    }
}

/// The same port again (the listening socket was closed; nothing else holds it).
async fn rebind(address: SocketAddr) -> Option<TcpListener> {
    for _ in 0..100 {
        if let Ok(listener) = TcpListener::bind(address).await {
            return Some(listener);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

async fn pump(client: TcpStream, shared: Arc<Shared>) {
    let Ok(server) = TcpStream::connect(shared.upstream).await else {
        return;
    };
    let mut generation = shared.generation.subscribe();
    generation.mark_unchanged();
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let mut up_buffer = vec![0u8; 64 * 1024];
    let mut down_buffer = vec![0u8; 64 * 1024];
    loop {
        tokio::select! {
            _ = generation.changed() => return,
            read = client_read.read(&mut up_buffer) => {
                let n = match read { Ok(0) | Err(_) => return, Ok(n) => n };
                if !*shared.up.borrow() {
                    return;
                }
                let chunk = &up_buffer[..n];
                let cut = {
                    let mut armed = shared.cut.lock().expect("cut");
                    match armed.as_ref() {
                        Some((marker, _)) if contains(chunk, marker) => armed.take(),
                        _ => None,
                    }
                };
                if let Some((_, downtime)) = cut {
                    // Answers are discarded from now on; the statement still reaches the
                    // server, which runs and commits it; then every connection drops.
                    shared.up.send_replace(false);
                    shared.cuts.fetch_add(1, Ordering::SeqCst);
                    let _ = server_write.write_all(chunk).await;
                    let later = shared.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        later.generation.send_modify(|g| *g += 1);
                        tokio::time::sleep(downtime).await;
                        later.up.send_replace(true);
                    });
                    continue;
                }
                if server_write.write_all(chunk).await.is_err() {
                    return;
                }
            }
            read = server_read.read(&mut down_buffer) => {
                let n = match read { Ok(0) | Err(_) => return, Ok(n) => n };
                if !*shared.up.borrow() {
                    // Going down: the answer is lost.
                    continue;
                }
                if client_write.write_all(&down_buffer[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}
