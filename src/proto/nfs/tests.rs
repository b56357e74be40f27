//! The client against a hostile server: a small fake NFSv3 server on
//! loopback that sets up like a real one (MOUNT, GETATTR, FSINFO), then
//! breaks the protocol in one way per test. Each must end in one clear
//! error, in bounded time, without growing memory past the client's bounds.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::types::{Fh, Reply, Request};
use super::{Options, connect, url};
use crate::proto::rpc::msg::tests::accepted;
use crate::proto::rpc::record;

/// What the fake server does with one call.
enum Act {
    /// Reply with these results.
    Results(Vec<u8>),
    /// Write these bytes as they are (a broken record).
    Raw(Vec<u8>),
    /// Say nothing and keep the connection.
    Silent,
}

fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_be_bytes()).collect()
}

fn fattr_dir() -> Vec<u8> {
    // type, mode, nlink, uid, gid, size(2), used(2), rdev(2), fsid(2), fileid(2), 3 times(2 each)
    words(&[
        2, 0o755, 2, 0, 0, 0, 4096, 0, 4096, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0,
    ])
}

/// Serves calls on every connection until the test ends: MOUNT and the
/// set-up's calls answered properly, the rest by `act(proc, xid)`.
fn fake(act: impl Fn(u32, u32) -> Act + Send + Sync + 'static) -> (u16, Arc<AtomicBool>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let act = Arc::new(act);
    let s2 = stop.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            if s2.load(Ordering::Relaxed) {
                return;
            }
            let Ok(conn) = conn else { return };
            let act = act.clone();
            std::thread::spawn(move || serve(conn, &*act));
        }
    });
    (port, stop)
}

fn serve(mut s: TcpStream, act: &dyn Fn(u32, u32) -> Act) {
    let mut buf = Vec::new();
    let mut rec = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        match record::reassemble(&buf, 1 << 20, &mut rec) {
            Ok(n) => {
                buf.drain(..n);
                let w = |i: usize| u32::from_be_bytes([rec[i], rec[i + 1], rec[i + 2], rec[i + 3]]);
                let (xid, prog, proc_) = (w(0), w(12), w(20));
                let act = match (prog, proc_) {
                    (100005, 5) => Act::Results(words(&[0])),
                    (100005, 1) => {
                        Act::Results([words(&[0, 4]), b"root".to_vec(), words(&[0])].concat())
                    }
                    (100003, 1) => Act::Results([words(&[0]), fattr_dir()].concat()),
                    (100003, 19) => Act::Results(words(&[
                        0,
                        0,
                        65536,
                        65536,
                        4096,
                        65536,
                        65536,
                        4096,
                        4096,
                        0,
                        1 << 30,
                        0,
                        1,
                        0,
                    ])),
                    _ => act(proc_, xid),
                };
                let out = match act {
                    Act::Results(r) => {
                        let body = accepted(xid, &r);
                        [record::mark(body.len()).to_be_bytes().to_vec(), body].concat()
                    }
                    Act::Raw(b) => b,
                    Act::Silent => continue,
                };
                if s.write_all(&out).is_err() {
                    return;
                }
            }
            Err(_) => match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            },
        }
    }
}

fn client_of(port: u16, tune: impl FnOnce(&mut Options)) -> super::Mount {
    let u = url::parse(&format!(
        "nfs://127.0.0.1/x?version=3&nfsport={port}&mountport={port}"
    ))
    .unwrap();
    let mut o = Options::from_url(&u);
    o.call_timeout = Duration::from_millis(500);
    o.max_sends = 2;
    o.reconnect_for = Duration::from_secs(2);
    tune(&mut o);
    connect(&u, &o).expect("the fake server sets up")
}

/// A READ of 4 KiB into a buffer of the test's; its error's text.
fn read_error(m: &mut super::Mount) -> String {
    let fh = Fh::new(b"file").unwrap();
    let file = m.client.open(&fh).unwrap();
    let mut buf = vec![0u8; 4096];
    let t = Instant::now();
    let r = m.client.call(Request::Read {
        file,
        offset: 0,
        len: 4096,
        buf: buf.as_mut_ptr(),
    });
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "bounded: {:?}",
        t.elapsed()
    );
    r.expect_err("a hostile reply is an error").to_string()
}

#[test]
fn status_codes_give_linux_errnos() {
    use super::NfsError;
    use super::types::OpKind;
    let e = |code| {
        NfsError::Status {
            op: OpKind::Rmdir,
            code,
            v4: false,
        }
        .errno()
    };
    // Below 60 the protocol's numbers are Linux's; above, BSD's.
    assert_eq!(e(2), libc::ENOENT);
    assert_eq!(e(17), libc::EEXIST);
    assert_eq!(e(63), libc::ENAMETOOLONG);
    assert_eq!(e(66), libc::ENOTEMPTY);
    assert_eq!(e(69), libc::EDQUOT);
    assert_eq!(e(70), libc::ESTALE);
    assert_eq!(e(71), libc::EREMOTE);
}

#[test]
fn a_reply_to_a_call_never_made_is_refused() {
    let (port, _stop) = fake(|_, xid| {
        let body = accepted(xid ^ 0x5555_0000, &words(&[0]));
        Act::Raw([record::mark(body.len()).to_be_bytes().to_vec(), body].concat())
    });
    let e = read_error(&mut client_of(port, |_| {}));
    assert!(e.contains("xid matches no call"), "{e}");
}

#[test]
fn a_four_gib_fragment_is_refused_before_any_room_is_found_for_it() {
    let (port, _stop) = fake(|_, _| Act::Raw(vec![0xff, 0xff, 0xff, 0xff, 1, 2, 3]));
    let e = read_error(&mut client_of(port, |_| {}));
    assert!(e.contains("fragment longer"), "{e}");
}

#[test]
fn truncated_and_oversized_replies_are_malformed() {
    // A READ reply that stops after its attributes' flag.
    let (port, _stop) = fake(|_, _| Act::Results(words(&[0, 1, 2])));
    let e = read_error(&mut client_of(port, |_| {}));
    assert!(
        e.contains("cut short") || e.contains("middle of a value"),
        "{e}"
    );
    // A READ reply that claims a billion bytes for a 4 KiB read.
    let (port, _stop) = fake(|_, _| Act::Results(words(&[0, 0, 1_000_000_000, 0, 1_000_000_000])));
    let e = read_error(&mut client_of(port, |_| {}));
    assert!(
        e.contains("longer than any reply") || e.contains("more data"),
        "{e}"
    );
    // A LOOKUP reply cut in the middle of its handle.
    let (port, _stop) = fake(|_, _| Act::Results(words(&[0, 4])));
    let mut m = client_of(port, |_| {});
    let dir = m.dir;
    let e = m.client.lookup(&dir, b"f").unwrap_err().to_string();
    assert!(e.contains("malformed") && e.contains("LOOKUP"), "{e}");
}

#[test]
fn a_reply_that_never_ends_times_out() {
    // A record of 100 000 bytes, of which 12 arrive.
    let (port, _stop) = fake(|_, xid| {
        let mut b = record::mark(100_000).to_be_bytes().to_vec();
        b.extend_from_slice(&accepted(xid, &[])[..12]);
        Act::Raw(b)
    });
    let e = read_error(&mut client_of(port, |_| {}));
    assert!(
        e.contains("no reply") || e.contains("connection was lost"),
        "{e}"
    );
    // A server that never answers at all.
    let (port, _stop) = fake(|_, _| Act::Silent);
    let e = read_error(&mut client_of(port, |_| {}));
    assert!(e.contains("no reply"), "{e}");
}

#[test]
fn endless_readdir_cookies_end_in_an_error() {
    // Every page: one entry with the same cookie, never the last.
    let (port, _stop) = fake(|_, _| {
        let mut r = words(&[0, 0, 0, 0, 1, 0, 7, 1]);
        r.extend_from_slice(b"x\0\0\0");
        r.extend(words(&[0, 99, 0, 0]));
        Act::Results(r)
    });
    let mut m = client_of(port, |_| {});
    let dir = m.dir;
    let e = m
        .client
        .read_dir_all(&dir, false, 1_000_000, |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("cookie twice"), "{e}");
    // Pages with no entries that never reach the end.
    let (port, _stop) = fake(|_, _| Act::Results(words(&[0, 0, 0, 0, 0, 0])));
    let mut m = client_of(port, |_| {});
    let e = m
        .client
        .read_dir_all(&dir, false, 1_000_000, |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("empty READDIR page"), "{e}");
    let _ = Reply::Done;
}

mod decoders {
    use super::super::types::{DirPage, OP_KINDS};
    use super::super::{v3, v4::attrs, v4::reply};
    use crate::proto::rpc::xdr::Dec;
    use proptest::prelude::*;

    proptest! {
        /// Every decoder over any bytes: a value or an error, never a panic,
        /// and a READ's data range inside the bytes it was found in.
        #[test]
        fn any_reply_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let mut page = DirPage::default();
            for kind in OP_KINDS {
                let _ = v3::decode(kind, &bytes, 0, &mut page);
                let mut seq = None;
                let _ = reply::decode(kind, &bytes, 0, &mut page, &mut seq);
            }
            for at in [v3::data_at(&bytes), reply::data_at(&bytes)] {
                if let Ok(Some((off, _))) = at {
                    prop_assert!(off <= bytes.len());
                }
            }
            let _ = v3::decode_mnt(&bytes);
            let _ = v3::decode_exports(&bytes, 100);
            let _ = attrs::decode(&mut Dec::new(&bytes));
            let _ = reply::exchange_id(&bytes);
            let _ = reply::create_session(&bytes);
            let _ = reply::walk(&bytes, 3);
        }

        /// Well-formed words with random values: the decoders reach deeper.
        #[test]
        fn structured_replies_decode_or_fail_cleanly(words in proptest::collection::vec(0u32..300, 0..120)) {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            let mut page = DirPage::default();
            for kind in OP_KINDS {
                let _ = v3::decode(kind, &bytes, 0, &mut page);
                let mut seq = None;
                let _ = reply::decode(kind, &bytes, 0, &mut page, &mut seq);
            }
            prop_assert!(page.entries.len() <= bytes.len() / 8 + 1);
        }
    }
}
