//! `--metrics-listen`'s HTTP side: a thread per connection up to a cap, a
//! deadline per request, a bounded request head, one answer per connection,
//! and the linger after the run that lets the last scrape read the final
//! figures.
//!
//! Written on std's `TcpListener` rather than an HTTP crate: the endpoint
//! answers one GET at a time per scraper, and what it must get right is
//! the bounds (no idle or slow client may blind it, no request may grow
//! without limit); the small blocking servers within MSRV 1.85 leave those
//! to their caller, and the others bring an async runtime this program has
//! no other use for.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::registry::Registry;

use crate::units::bounds::{
    METRICS_LINGER, METRICS_MAX_CONNECTIONS, METRICS_MAX_HEAD_BYTES, METRICS_MAX_HEADERS,
    METRICS_MAX_LINGER, METRICS_REQUEST_DEADLINE, METRICS_RESPONSE_DEADLINE,
};

/// The limits one server keeps (the bounds' values; shorter in tests).
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(crate) connections: usize,
    pub(crate) request: Duration,
    pub(crate) response: Duration,
    pub(crate) head_bytes: usize,
    pub(crate) headers: usize,
    pub(crate) linger: Duration,
    pub(crate) max_linger: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: METRICS_MAX_CONNECTIONS,
            request: METRICS_REQUEST_DEADLINE,
            response: METRICS_RESPONSE_DEADLINE,
            head_bytes: METRICS_MAX_HEAD_BYTES,
            headers: METRICS_MAX_HEADERS,
            linger: METRICS_LINGER,
            max_linger: METRICS_MAX_LINGER,
        }
    }
}

/// Scrapes answered whole, for the linger.
#[derive(Default)]
struct Scrapes {
    count: u64,
    last: Option<Instant>,
    /// The time between the last two.
    gap: Option<Duration>,
}

/// What the accepting thread and the connections share.
pub(super) struct Server {
    reg: Arc<Registry>,
    limits: Limits,
    active: AtomicUsize,
    scrapes: Mutex<Scrapes>,
    answered: Condvar,
}

/// A connection's slot, given back however its thread ends.
struct Slot(Arc<Server>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Server {
    /// Serves `listener` from a thread of its own until the process ends.
    pub(super) fn start(
        listener: TcpListener,
        reg: Arc<Registry>,
        limits: Limits,
    ) -> std::io::Result<Arc<Server>> {
        let server = Arc::new(Server {
            reg,
            limits,
            active: AtomicUsize::new(0),
            scrapes: Mutex::new(Scrapes::default()),
            answered: Condvar::new(),
        });
        let s = server.clone();
        std::thread::Builder::new()
            .name("vb-metrics".into())
            .spawn(move || {
                for conn in listener.incoming().flatten() {
                    s.accept(conn);
                }
            })?;
        Ok(server)
    }

    /// A connection gets a thread of its own, or 503 when the cap is
    /// reached (or no thread can be made).
    fn accept(self: &Arc<Self>, mut conn: TcpStream) {
        if self.active.fetch_add(1, Ordering::SeqCst) >= self.limits.connections {
            self.active.fetch_sub(1, Ordering::SeqCst);
            busy(&mut conn);
            return;
        }
        let slot = Slot(self.clone());
        let spawned = std::thread::Builder::new()
            .name("vb-metrics-conn".into())
            .stack_size(256 << 10)
            .spawn(move || {
                let server = slot.0.clone();
                server.serve(conn);
                drop(slot);
            });
        // Unspawned, the closure (its slot, the connection) is dropped: the
        // count is right and the client sees a close.
        drop(spawned);
    }

    /// One request on one connection, then close.
    fn serve(&self, mut conn: TcpStream) {
        let _ = conn.set_nodelay(true);
        let head = match read_head(
            &mut conn,
            Instant::now() + self.limits.request,
            &self.limits,
        ) {
            Ok(h) => h,
            Err(Refused::Closed) => return,
            Err(Refused::Late) => {
                self.answer(
                    &mut conn,
                    "408 Request Timeout",
                    "text/plain",
                    b"too slow\n",
                );
                return;
            }
            Err(Refused::Large) => {
                let why = b"request head too large\n";
                self.answer(
                    &mut conn,
                    "431 Request Header Fields Too Large",
                    "text/plain",
                    why,
                );
                return;
            }
        };
        let text = String::from_utf8_lossy(&head);
        let mut lines = text.lines();
        let line = lines.next().unwrap_or("");
        let openmetrics = lines.any(|h| {
            let h = h.to_ascii_lowercase();
            h.starts_with("accept:") && h.contains("application/openmetrics-text")
        });
        let mut parts = line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        if path != "/metrics" && !path.starts_with("/metrics?") {
            let body = b"volbench serves /metrics\n";
            self.answer(&mut conn, "404 Not Found", "text/plain", body);
            return;
        }
        if method != "GET" {
            let body = b"GET /metrics\n";
            self.answer(&mut conn, "405 Method Not Allowed", "text/plain", body);
            return;
        }
        let mut body = String::new();
        if prometheus_client::encoding::text::encode(&mut body, &self.reg).is_err() {
            body = "# EOF\n".into();
        }
        let kind = if openmetrics {
            "application/openmetrics-text; version=1.0.0; charset=utf-8"
        } else {
            body = prometheus_text(&body);
            "text/plain; version=0.0.4; charset=utf-8"
        };
        if self.answer(&mut conn, "200 OK", kind, body.as_bytes()) {
            let mut s = self.scrapes.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            s.gap = s.last.map(|l| now.duration_since(l));
            s.last = Some(now);
            s.count += 1;
            self.answered.notify_all();
        }
    }

    /// Writes a whole answer within the response deadline; true when all
    /// of it went out.
    fn answer(&self, conn: &mut TcpStream, status: &str, kind: &str, body: &[u8]) -> bool {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            body.len()
        );
        let by = Instant::now() + self.limits.response;
        write_by(conn, head.as_bytes(), by).is_ok() && write_by(conn, body, by).is_ok()
    }

    /// After the run: waits until one more scrape has been answered, for at
    /// most the scrape interval seen during the run plus a second
    /// (`METRICS_LINGER` when fewer than two scrapes came; never more than
    /// `METRICS_MAX_LINGER`). Returns how long it would wait, before it
    /// does, through `said`.
    pub(super) fn linger(&self, said: impl FnOnce(Duration)) {
        let s = self.scrapes.lock().unwrap_or_else(|p| p.into_inner());
        let wait = match s.gap {
            Some(g) => (g + Duration::from_secs(1)).min(self.limits.max_linger),
            None => self.limits.linger,
        };
        let seen = s.count;
        said(wait);
        let _ = self
            .answered
            .wait_timeout_while(s, wait, |s| s.count == seen);
    }
}

/// OpenMetrics text as Prometheus' older text format, for scrapers that do
/// not ask for OpenMetrics (curl, promtool): a counter's family takes its
/// samples' `_total` name, and there is no `# EOF`. The rest is the same.
fn prometheus_text(om: &str) -> String {
    let mut out = String::with_capacity(om.len());
    let mut help: Option<&str> = None;
    for line in om.lines() {
        if line == "# EOF" {
            continue;
        }
        if line.starts_with("# HELP ") {
            help = Some(line);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let counter = rest.ends_with(" counter");
            let name = rest.split(' ').next().unwrap_or("");
            let fix = |l: &str| {
                if counter {
                    l.replacen(&format!(" {name} "), &format!(" {name}_total "), 1)
                } else {
                    l.to_string()
                }
            };
            if let Some(h) = help.take() {
                out.push_str(&fix(h));
                out.push('\n');
            }
            out.push_str(&fix(line));
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Why a request head was not read.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    /// The client closed (or the connection broke) first.
    Closed,
    /// Past the request deadline.
    Late,
    /// Past the byte or header-line bound.
    Large,
}

/// The request line and headers, up to the blank line, within `by` and
/// the limits; whatever follows (a body) is never read.
fn read_head(conn: &mut TcpStream, by: Instant, limits: &Limits) -> Result<Vec<u8>, Refused> {
    let mut head: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let left = by.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Refused::Late);
        }
        if conn.set_read_timeout(Some(left)).is_err() {
            return Err(Refused::Closed);
        }
        let n = match conn.read(&mut chunk) {
            Ok(0) => return Err(Refused::Closed),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(Refused::Late);
            }
            Err(_) => return Err(Refused::Closed),
        };
        head.extend_from_slice(chunk.get(..n).unwrap_or_default());
        if let Some(end) = head_end(&head) {
            head.truncate(end);
            return if lines(&head) > limits.headers + 1 {
                Err(Refused::Large)
            } else {
                Ok(head)
            };
        }
        if head.len() > limits.head_bytes || lines(&head) > limits.headers + 1 {
            return Err(Refused::Large);
        }
    }
}

/// Where the head ends (the blank line, CRLF or bare LF), if it has.
fn head_end(b: &[u8]) -> Option<usize> {
    let crlf = b.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4);
    let lf = b.windows(2).position(|w| w == b"\n\n").map(|p| p + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn lines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// All of `bytes` by `by`, or an error.
fn write_by(conn: &mut TcpStream, bytes: &[u8], by: Instant) -> std::io::Result<()> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let left = by.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        conn.set_write_timeout(Some(left))?;
        match conn.write(rest) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => rest = rest.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// 503 to a client past the cap, written without waiting (it fits the
/// socket's buffer; a client that does not read gets a close instead).
fn busy(conn: &mut TcpStream) {
    let _ = conn.set_nonblocking(true);
    let body = "busy: too many connections\n";
    let _ = write!(
        conn,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Retry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Shutdown;

    fn server(limits: Limits) -> (Arc<Server>, u16) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let s = Server::start(l, Arc::new(Registry::default()), limits).unwrap();
        (s, port)
    }

    fn get(port: u16, request: &[u8]) -> String {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(request).unwrap();
        let mut text = String::new();
        let _ = c.read_to_string(&mut text);
        text
    }

    const GET: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

    #[test]
    fn an_idle_client_does_not_keep_a_scrape_waiting() {
        let (s, port) = server(Limits::default());
        // Connected and silent for the whole test.
        let idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let half = {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.write_all(b"GET /metrics HTTP/1.1\r\nHost:").unwrap();
            c
        };
        let answer = get(port, GET);
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert_eq!(s.scrapes.lock().unwrap().count, 1);
        drop((idle, half));
    }

    #[test]
    fn a_silent_client_gets_408_at_the_deadline() {
        let limits = Limits {
            request: Duration::from_millis(200),
            ..Limits::default()
        };
        let (_s, port) = server(limits);
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut text = String::new();
        let _ = c.read_to_string(&mut text);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    }

    #[test]
    fn too_many_header_lines_or_bytes_get_431() {
        let (_s, port) = server(Limits::default());
        let mut many = b"GET /metrics HTTP/1.1\r\n".to_vec();
        for i in 0..100 {
            many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert!(get(port, &many).starts_with("HTTP/1.1 431"));
        let mut long = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
        long.extend(std::iter::repeat_n(b'a', 64 << 10));
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        // The server answers before reading it all; the rest may not go.
        let _ = c.write_all(&long);
        let _ = c.shutdown(Shutdown::Write);
        let mut text = String::new();
        let _ = c.read_to_string(&mut text);
        assert!(
            text.is_empty() || text.starts_with("HTTP/1.1 431"),
            "{text}"
        );
    }

    #[test]
    fn past_the_cap_a_client_gets_503_and_the_slots_come_back() {
        let limits = Limits {
            connections: 2,
            ..Limits::default()
        };
        let (s, port) = server(limits);
        let idle: Vec<TcpStream> = (0..2)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        // Both slots taken once the server has accepted them.
        while s.active.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
        assert!(get(port, GET).starts_with("HTTP/1.1 503"));
        drop(idle);
        while s.active.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
        assert!(get(port, GET).starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn other_paths_and_methods_are_refused() {
        let (_s, port) = server(Limits::default());
        assert!(get(port, b"GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(port, b"POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
    }

    #[test]
    fn the_linger_ends_at_the_next_scrape() {
        let long = Duration::from_secs(600);
        let (s, port) = server(Limits {
            linger: long,
            ..Limits::default()
        });
        let waiter = {
            let s = s.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                s.linger(|_| {});
                t.elapsed()
            })
        };
        // Scrapes until the waiter has seen one (a scrape before it began
        // waiting does not end it; the next does).
        while !waiter.is_finished() {
            assert!(get(port, GET).starts_with("HTTP/1.1 200"));
        }
        assert!(waiter.join().unwrap() < long);
    }
}
