//! A TCP relay in front of a real server that can make it answer late:
//! while the relay holds, what the server sends reaches the client only
//! when the hold ends (a server stalled behind a deep queue, its
//! connection up all along). What the client sends goes through at once
//! and is kept, a byte stream per connection, for the test to read which
//! calls it made (`rpc_calls`). Loopback only.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

type Stream = Arc<Mutex<Vec<u8>>>;

pub struct SlowLink {
    /// The relay's port: the client's target instead of the server's.
    pub port: u16,
    held_until: Arc<Mutex<Option<Instant>>>,
    sent: Arc<Mutex<Vec<Stream>>>,
}

impl SlowLink {
    /// A relay to the server at 127.0.0.1:`to`, passing everything through
    /// until `hold_until`.
    pub fn start(to: u16) -> SlowLink {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        let link = SlowLink {
            port,
            held_until: Arc::default(),
            sent: Arc::default(),
        };
        let (held, sent) = (link.held_until.clone(), link.sent.clone());
        // Lives as long as the test process: one relay per test.
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                    continue;
                };
                let record = Stream::default();
                lock(&sent).push(record.clone());
                relay(client, server, held.clone(), record);
            }
        });
        link
    }

    /// From now on the server's bytes wait until `until` before they are
    /// passed on (the hold is this relay's own clock: a late server, not a
    /// synchronisation).
    pub fn hold_until(&self, until: Instant) {
        *lock(&self.held_until) = Some(until);
    }

    /// What the client sent on each connection so far, in the order the
    /// connections were made.
    pub fn sent(&self) -> Vec<Vec<u8>> {
        lock(&self.sent).iter().map(|s| lock(s).clone()).collect()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Copies both ways between `client` and `server`, each way on a thread:
/// the client's bytes at once (kept in `record`), the server's once the
/// hold, if any, has ended. An end or error on one side shuts the other's
/// writing half.
fn relay(client: TcpStream, server: TcpStream, held: Arc<Mutex<Option<Instant>>>, record: Stream) {
    let (Ok(mut from_client), Ok(mut to_server)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = from_client.read(&mut buf) {
            lock(&record).extend_from_slice(&buf[..n]);
            if to_server.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to_server.shutdown(Shutdown::Write);
    });
    let (mut from_server, mut to_client) = (server, client);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = from_server.read(&mut buf) {
            let until = *lock(&held);
            if let Some(wait) = until.and_then(|u| u.checked_duration_since(Instant::now())) {
                std::thread::sleep(wait);
            }
            if to_client.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to_client.shutdown(Shutdown::Write);
    });
}

/// The ONC RPC calls in a client's byte stream over TCP (RFC 5531's
/// record marking: a 4-byte mark, its top bit the last fragment's, then
/// the fragment): each record's (program, procedure), in order.
pub fn rpc_calls(stream: &[u8]) -> Vec<(u32, u32)> {
    let word = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
    };
    let mut calls = Vec::new();
    let (mut at, mut starts_record) = (0, true);
    while let Some(mark) = word(stream, at) {
        let len = (mark & 0x7fff_ffff) as usize;
        let body = &stream[at + 4..(at + 4 + len).min(stream.len())];
        // xid, message type (0: a call), RPC version, program, version,
        // procedure.
        if starts_record && word(body, 4) == Some(0) {
            if let (Some(prog), Some(proc)) = (word(body, 12), word(body, 20)) {
                calls.push((prog, proc));
            }
        }
        starts_record = mark & 0x8000_0000 != 0;
        at += 4 + len;
    }
    calls
}

/// The SMB2 commands in a client's byte stream over TCP (a 4-byte length
/// before each message, MS-SMB2 2.1), a compound's commands one by one
/// (its NextCommand offsets): each header's Command, in order. A sealed
/// message (its protocol id 0xFD 'SMB') hides its commands and is passed
/// over.
pub fn smb_commands(stream: &[u8]) -> Vec<u16> {
    let mut commands = Vec::new();
    let mut at = 0;
    while let Some(len) = stream.get(at..at + 4) {
        let len = usize::from(len[1]) << 16 | usize::from(len[2]) << 8 | usize::from(len[3]);
        let msg = &stream[at + 4..(at + 4 + len).min(stream.len())];
        let mut h = 0;
        while let Some(head) = msg.get(h..h + 64) {
            if head[..4] != *b"\xfeSMB" {
                break;
            }
            commands.push(u16::from_le_bytes([head[12], head[13]]));
            let next = u32::from_le_bytes([head[20], head[21], head[22], head[23]]) as usize;
            if next == 0 {
                break;
            }
            h += next;
        }
        at += 4 + len;
    }
    commands
}

/// Runs `run` (4 s measured, `--interval 500ms`, watched through a live
/// file of its own) and, once two intervals moved data, holds the server's
/// answers until at least 1.5 s past the run's end (three times the wait
/// after which a stop gives up); the run must then end as usual, exit 0.
pub fn end_while_slow(run: crate::common::Vb, link: &SlowLink) {
    use crate::common::live_run::{busy_intervals, spawn_watched, wait_end, wait_for};
    use std::time::Duration;
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let (live, out) = (tmp.path().join("live.jsonl"), tmp.path().join("out"));
    let mut child = spawn_watched(run, &live, &out);
    let limit = Duration::from_secs(120);
    assert!(
        wait_for(&mut child, &live, limit, |l| busy_intervals(l) >= 2),
        "measured"
    );
    // At least 1 s of the 4 is over: the run's end is at most 3 s away.
    link.hold_until(Instant::now() + Duration::from_millis(4500));
    let status = wait_end(&mut child, limit);
    let o = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(status.success(), "the run ends as usual: {err}");
}

/// What the client sent from its last `op` on, on the connection that
/// carried the most of them (an I/O thread's, not the set-up client's),
/// as `parse` reads the stream (`rpc_calls`, `smb_commands`).
pub fn from_last<T: PartialEq + Copy>(
    link: &SlowLink,
    parse: fn(&[u8]) -> Vec<T>,
    op: T,
) -> Vec<T> {
    let count = |c: &Vec<T>| c.iter().filter(|&&x| x == op).count();
    let busiest = link
        .sent()
        .iter()
        .map(|s| parse(s))
        .max_by_key(count)
        .expect("a connection through the relay");
    let last = busiest.iter().rposition(|&x| x == op);
    busiest[last.expect("the I/O went through the relay")..].to_vec()
}
