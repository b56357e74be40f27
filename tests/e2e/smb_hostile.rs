//! The SMB client against servers that misbehave, played by a small fake
//! server in the test: a 16 MiB frame length, silence, STATUS_PENDING
//! forever, no credits, replies to requests never sent, fuzzed bytes. Each
//! gets one error line within a bounded time, never a panic or a hang.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use volbench::proto::smb::session::client::Client;
use volbench::proto::smb::session::{Auth, Options, Target};

/// One connection's script: what the fake server does with each request.
type Script = Box<dyn FnMut(&mut TcpStream, u64) -> bool + Send>;

/// Serves one connection with `script` (given each request's message id);
/// returns when the client closes or the script says stop.
fn fake(mut script: Script) -> (SocketAddr, JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("listen");
    let addr = l.local_addr().expect("addr");
    let h = std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
        loop {
            let mut p = [0u8; 4];
            if s.read_exact(&mut p).is_err() {
                return;
            }
            let len = u32::from_be_bytes(p) as usize;
            let mut m = vec![0u8; len];
            if s.read_exact(&mut m).is_err() {
                return;
            }
            let mid = u64::from_le_bytes(m[24..32].try_into().unwrap_or([0; 8]));
            if !script(&mut s, mid) {
                // Hold the connection open until the client leaves.
                let mut sink = [0u8; 1024];
                while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
        }
    });
    (addr, h)
}

fn header(command: u16, status: u32, credits: u16, mid: u64, flags: u32) -> Vec<u8> {
    let mut h = vec![0xFE, b'S', b'M', b'B'];
    h.extend_from_slice(&64u16.to_le_bytes());
    h.extend_from_slice(&0u16.to_le_bytes());
    h.extend_from_slice(&status.to_le_bytes());
    h.extend_from_slice(&command.to_le_bytes());
    h.extend_from_slice(&credits.to_le_bytes());
    h.extend_from_slice(&(flags | 1).to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes());
    h.extend_from_slice(&mid.to_le_bytes());
    h.extend_from_slice(&[0u8; 8]);
    h.extend_from_slice(&[0u8; 8]);
    h.extend_from_slice(&[0u8; 16]);
    h
}

/// A valid SMB 2.1 NEGOTIATE reply granting `credits`.
fn negotiate_reply(mid: u64, credits: u16) -> Vec<u8> {
    let mut m = header(0, 0, credits, mid, 0);
    m.extend_from_slice(&65u16.to_le_bytes());
    m.extend_from_slice(&1u16.to_le_bytes());
    m.extend_from_slice(&0x0210u16.to_le_bytes());
    m.extend_from_slice(&0u16.to_le_bytes());
    m.extend_from_slice(&[0x11; 16]);
    m.extend_from_slice(&0x4u32.to_le_bytes());
    for _ in 0..3 {
        m.extend_from_slice(&(1u32 << 20).to_le_bytes());
    }
    m.extend_from_slice(&[0u8; 16]);
    m.extend_from_slice(&128u16.to_le_bytes());
    m.extend_from_slice(&0u16.to_le_bytes());
    m.extend_from_slice(&0u32.to_le_bytes());
    m
}

fn send(s: &mut TcpStream, m: &[u8]) {
    let mut f = (m.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(m);
    let _ = s.write_all(&f);
}

fn opts() -> Options {
    Options {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(1),
        pending_timeout: Duration::from_secs(1),
        ..Options::default()
    }
}

/// Connects to the fake server; returns the one error line and how long it took.
fn against(script: Script) -> (String, Duration) {
    let (addr, h) = fake(script);
    let t = Target {
        server: "fake".into(),
        addr,
        share: "s".into(),
    };
    let start = Instant::now();
    let r = Client::connect(t, Auth::Guest, opts());
    let took = start.elapsed();
    let line = match r {
        Ok(_) => panic!("a hostile server was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(!line.contains('\n'), "one line: {line}");
    drop(h);
    (line, took)
}

#[test]
fn smb_a_16_mib_frame_length_is_refused_at_once() {
    let (line, took) = against(Box::new(|s, _| {
        let _ = s.write_all(&[0, 0xff, 0xff, 0xff]);
        let _ = s.write_all(&[0u8; 4096]);
        false
    }));
    assert!(line.contains("16777215"), "{line}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn smb_a_silent_server_is_a_bounded_wait_with_one_error() {
    let (line, took) = against(Box::new(|_, _| false));
    assert!(
        line.contains("no answer") || line.contains("no reply"),
        "{line}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn smb_status_pending_forever_ends_in_one_error() {
    let (line, took) = against(Box::new(|s, mid| {
        let mut m = header(0, 0x103, 1, mid, 2);
        m.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0, 0]);
        send(s, &m);
        false
    }));
    assert!(line.contains("STATUS_PENDING"), "{line}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn smb_a_server_that_grants_no_credits_is_named() {
    let (line, _) = against(Box::new(|s, mid| {
        send(s, &negotiate_reply(mid, 0));
        false
    }));
    assert!(line.contains("credits"), "{line}");
}

#[test]
fn smb_a_reply_to_a_request_never_sent_is_refused() {
    let (line, _) = against(Box::new(|s, _| {
        send(s, &negotiate_reply(77, 1));
        false
    }));
    assert!(line.contains("message id 77"), "{line}");
}

#[test]
fn smb_lengths_past_the_reply_are_refused() {
    let (line, _) = against(Box::new(|s, mid| {
        let mut m = negotiate_reply(mid, 1);
        // SecurityBufferLength far past the end of the message.
        m[64 + 58..64 + 60].copy_from_slice(&60000u16.to_le_bytes());
        send(s, &m);
        false
    }));
    assert!(line.contains("malformed"), "{line}");
}

#[test]
fn smb_endless_credit_grants_do_not_overflow_and_a_closed_connection_is_one_error() {
    let (line, _) = against(Box::new(|s, mid| {
        if mid == 0 {
            send(s, &negotiate_reply(mid, u16::MAX));
            return true;
        }
        let _ = s.shutdown(std::net::Shutdown::Both);
        false
    }));
    assert!(
        line.contains("closed the connection") || line.contains("reset"),
        "{line}"
    );
}

#[test]
fn smb_fuzzed_replies_get_one_error_never_a_panic_or_a_hang() {
    for seed in 0..24u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let (line, took) = against(Box::new(move |s, mid| {
            // A reply that starts right (sometimes) and goes wrong.
            let mut m = if rng.bool() {
                negotiate_reply(mid, rng.u16(..))
            } else {
                header(rng.u16(0..20), rng.u32(..), rng.u16(..), mid, rng.u32(..))
            };
            let n = m.len();
            for _ in 0..rng.usize(1..8) {
                let i = rng.usize(0..n);
                m[i] = rng.u8(..);
            }
            m.extend((0..rng.usize(0..200)).map(|_| rng.u8(..)));
            send(s, &m);
            rng.bool()
        }));
        assert!(!line.is_empty());
        assert!(took < Duration::from_secs(15), "seed {seed}: {took:?}");
    }
}
