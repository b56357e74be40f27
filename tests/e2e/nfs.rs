//! The user-space NFS client (`volbench::proto::nfs`) against a real
//! server (nfs-ganesha, `common::nfs`), NFSv3 and NFSv4.1: exact op and
//! byte counts against what lands in the exported directory, N connections
//! seen as N TCP connections by `ss`, ownership read back, the refusals a
//! user meets (access denied, an export that does not exist, a symlink in
//! the path, a target name taken), and the server restarting or going away.

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use volbench::proto::nfs::{
    self, Client, Completion, CreateHow, FileType, OpKind, Reply, Request, Stable,
};

use crate::common::nfs::NfsServer;

const VERSIONS: [&str; 2] = ["3", "4.1"];

fn connect(url: &str, f: impl FnOnce(&mut nfs::Options)) -> Result<nfs::Mount, String> {
    let u = nfs::url::parse(url)?;
    let mut o = nfs::Options::from_url(&u);
    f(&mut o);
    nfs::connect(&u, &o).map_err(|e| e.message)
}

/// Ops and bytes of one kind, summed over the connections.
fn seen(c: &Client, kind: OpKind) -> (u64, u64) {
    c.conn_stats()
        .filter_map(|s| s.get(kind as u8))
        .fold((0, 0), |(o, b), x| (o + x.rtt.ops, b + x.rtt.bytes))
}

/// Runs `n` requests through `depth` slots: `make(i)` gives request i.
fn pipeline(
    c: &mut Client,
    n: usize,
    depth: u32,
    mut make: impl FnMut(usize) -> Request<'static>,
) -> Vec<Completion> {
    let mut done = Vec::new();
    let mut out = Vec::with_capacity(depth as usize);
    let mut next = 0;
    let mut free: Vec<u32> = (0..depth).rev().collect();
    while done.len() < n {
        while next < n {
            let Some(slot) = free.pop() else { break };
            // SAFETY: the buffers behind the requests are the test's, alive
            // until the end of the test and untouched while in flight.
            unsafe { c.queue(slot, make(next)).expect("queued") };
            next += 1;
        }
        out.clear();
        c.poll(1, Duration::from_secs(60), &mut out).expect("poll");
        assert!(!out.is_empty(), "no completion within 60 s");
        for comp in &out {
            free.push(comp.slot);
            done.push(*comp);
        }
    }
    done
}

#[test]
fn writes_and_reads_land_exactly_and_are_counted_exactly() {
    let Some(srv) = NfsServer::start("writes_and_reads_land_exactly_and_are_counted_exactly")
    else {
        return;
    };
    for v in VERSIONS {
        let mut m = connect(&srv.url("", v), |o| {
            o.connections = 2;
            o.wsize = Some(65536);
            o.rsize = Some(65536);
        })
        .expect("connects");
        let c = &mut m.client;
        assert_eq!((c.rsize(), c.wsize()), (65536, 65536), "v{v}");
        let name = format!("data-v{v}");
        let (file, _, attr) = c
            .create_file(&m.dir, name.as_bytes(), 0o640, CreateHow::Guarded, true)
            .expect("created");
        assert_eq!(attr.kind, FileType::Regular);
        let file = file.expect("kept open");
        // 4 MiB in 128 KiB writes: each split in two 64 KiB WRITEs.
        let data: &'static mut [u8] = Box::leak(vec![0u8; 4 << 20].into_boxed_slice());
        for (i, b) in data.iter_mut().enumerate() {
            *b = (i * 7 + i / 4096) as u8;
        }
        let src = data.as_ptr() as usize;
        let done = pipeline(c, 32, 8, |i| Request::Write {
            file,
            offset: i as u64 * 131072,
            len: 131072,
            buf: (src + i * 131072) as *const u8,
            stable: Stable::Unstable,
        });
        for d in &done {
            match d.result {
                Ok(Reply::Write { count, .. }) => assert_eq!(count, 131072),
                ref other => panic!("v{v}: {other:?}"),
            }
        }
        c.call(Request::Commit {
            file,
            offset: 0,
            len: 0,
        })
        .expect("commit");
        assert_eq!(
            seen(c, OpKind::Write),
            (64, 4 << 20),
            "v{v}: WRITEs and bytes"
        );
        assert_eq!(seen(c, OpKind::Commit).0, 1);
        let on_disk = std::fs::read(srv.export.join(&name)).expect("the file on the server");
        assert!(on_disk == *data, "v{v}: the bytes on the server differ");
        // 4 KiB reads at random offsets, 16 in flight.
        let back: &'static mut [u8] = Box::leak(vec![0u8; 256 * 4096].into_boxed_slice());
        let dst = back.as_mut_ptr() as usize;
        let offsets: Vec<u64> = (0..256).map(|i| ((i * 389) % 1024) as u64 * 4096).collect();
        let offs = offsets.clone();
        let done = pipeline(c, 256, 16, move |i| Request::Read {
            file,
            offset: offs[i],
            len: 4096,
            buf: (dst + i * 4096) as *mut u8,
        });
        assert!(
            done.iter()
                .all(|d| matches!(d.result, Ok(Reply::Read { count: 4096, .. })))
        );
        for (i, off) in offsets.iter().enumerate() {
            let o = *off as usize;
            assert!(
                back[i * 4096..(i + 1) * 4096] == data[o..o + 4096],
                "v{v}: read {i} differs"
            );
        }
        assert_eq!(
            seen(c, OpKind::Read),
            (256, 256 * 4096),
            "v{v}: READs and bytes"
        );
        // A large read goes straight into its buffer and reads the end.
        let tail: &'static mut [u8] = Box::leak(vec![0u8; 1 << 20].into_boxed_slice());
        let r = c
            .call(Request::Read {
                file,
                offset: (3 << 20) + 4096,
                len: 1 << 20,
                buf: tail.as_mut_ptr(),
            })
            .expect("read");
        assert_eq!(
            r,
            Reply::Read {
                count: (1 << 20) - 4096,
                eof: true
            },
            "v{v}"
        );
        assert!(tail[..(1 << 20) - 4096] == data[(3 << 20) + 4096..], "v{v}");
        c.close(file).expect("closed");
        let per_conn: Vec<u64> = c.conn_stats().map(|s| s.total_ops()).collect();
        assert!(
            per_conn.iter().all(|&n| n > 50),
            "v{v}: calls spread over both connections: {per_conn:?}"
        );
    }
}

#[test]
fn n_connections_are_n_tcp_connections_to_the_server() {
    let Some(srv) = NfsServer::start("n_connections_are_n_tcp_connections_to_the_server") else {
        return;
    };
    for v in VERSIONS {
        let m = connect(&srv.url("", v), |o| o.connections = 4).expect("connects");
        assert_eq!(m.client.connections_up(), 4);
        assert_eq!(
            srv.connections(),
            4,
            "v{v}: ss sees the client's connections"
        );
        drop(m);
        let deadline = Instant::now() + Duration::from_secs(10);
        while srv.connections() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn files_are_owned_as_auth_sys_says_and_read_back_so() {
    let Some(srv) = NfsServer::start("files_are_owned_as_auth_sys_says_and_read_back_so") else {
        return;
    };
    let open = srv.export.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let shut = srv.export.join("shut");
    std::fs::create_dir(&shut).unwrap();
    std::fs::set_permissions(&shut, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for v in VERSIONS {
        let url = format!("{}&uid=4242&gid=4343", srv.url("open", v));
        let mut m = connect(&url, |_| {}).expect("connects");
        let name = format!("mine-v{v}");
        let (_, fh, attr) = m
            .client
            .create_file(
                &m.dir,
                name.as_bytes(),
                0o600,
                CreateHow::Exclusive(*b"volbench"),
                false,
            )
            .expect("created");
        let md = std::fs::symlink_metadata(open.join(&name)).unwrap();
        assert_eq!(
            (md.uid(), md.gid()),
            (4242, 4343),
            "v{v}: owner on the server"
        );
        assert_eq!(md.mode() & 0o777, 0o600, "v{v}: the mode was set");
        assert_eq!(
            (attr.uid, attr.gid),
            (Some(4242), Some(4343)),
            "v{v}: owner read back"
        );
        assert_eq!(attr.fileid, md.ino(), "v{v}: file id");
        assert_eq!(attr.nlink, 1);
        let again = m.client.getattr(&fh).unwrap();
        assert_eq!(again.fileid, md.ino());
        // A second GUARDED or EXCLUSIVE create of the name is refused.
        for how in [CreateHow::Guarded, CreateHow::Exclusive(*b"another!")] {
            let e = m
                .client
                .create_file(&m.dir, name.as_bytes(), 0o600, how, false)
                .unwrap_err();
            assert!(e.is(17), "v{v}: {e}");
        }
        // The same uid cannot write where only root may.
        let url = format!("{}&uid=4242&gid=4343", srv.url("shut", v));
        let mut m = connect(&url, |_| {}).expect("connects");
        let e = m
            .client
            .create_file(&m.dir, b"nope", 0o600, CreateHow::Guarded, false)
            .unwrap_err();
        assert!(e.to_string().contains("ACCES"), "v{v}: {e}");
        assert!(!shut.join("nope").exists());
    }
}

#[test]
fn a_missing_export_a_symlink_in_the_path_and_a_bad_url_are_one_clear_error() {
    let Some(srv) = NfsServer::start(
        "a_missing_export_a_symlink_in_the_path_and_a_bad_url_are_one_clear_error",
    ) else {
        return;
    };
    std::os::unix::fs::symlink("/tmp", srv.export.join("link")).unwrap();
    for v in VERSIONS {
        let e = connect(&srv.url("no-such-dir", v), |_| {})
            .err()
            .expect("refused");
        assert!(e.contains("NOENT"), "v{v}: {e}");
        let e = connect(&srv.url("link", v), |_| {}).err().expect("refused");
        assert!(
            e.contains("symbolic link") || e.contains("not a directory"),
            "v{v}: {e}"
        );
        let url = srv
            .url("", v)
            .replace(&srv.export.display().to_string(), "/not-exported");
        let e = connect(&url, |_| {}).err().expect("refused");
        assert!(e.contains("NOENT") || e.contains("no export"), "v{v}: {e}");
    }
    let e = connect("nfs://127.0.0.1/x?version=7", |_| {})
        .err()
        .unwrap();
    assert!(e.contains("use 3 or 4.1"), "{e}");
}

#[test]
fn a_rename_never_replaces_and_listings_are_whole() {
    let Some(srv) = NfsServer::start("a_rename_never_replaces_and_listings_are_whole") else {
        return;
    };
    for v in VERSIONS {
        let sub = format!("r{}", v.replace('.', ""));
        std::fs::create_dir(srv.export.join(&sub)).unwrap();
        let mut m = connect(&srv.url(&sub, v), |_| {}).expect("connects");
        let c = &mut m.client;
        for n in ["a", "b"] {
            c.create_file(&m.dir, n.as_bytes(), 0o644, CreateHow::Guarded, false)
                .unwrap();
        }
        std::fs::write(srv.export.join(&sub).join("b"), b"theirs").unwrap();
        let e = c.rename_noreplace(&m.dir, b"a", &m.dir, b"b").unwrap_err();
        assert!(e.is(17), "v{v}: {e}");
        assert_eq!(
            std::fs::read(srv.export.join(&sub).join("b")).unwrap(),
            b"theirs"
        );
        c.rename_noreplace(&m.dir, b"a", &m.dir, b"c").unwrap();
        let (d, _) = c.mkdir(&m.dir, b"d", 0o755).unwrap();
        c.rename_noreplace(&m.dir, b"d", &m.dir, b"e").unwrap();
        let e = c.rename_noreplace(&m.dir, b"e", &m.dir, b"b").unwrap_err();
        assert!(e.is(17), "v{v}: {e}");
        let _ = d;
        for i in 0..300 {
            c.create_file(
                &m.dir,
                format!("n{i:03}").as_bytes(),
                0o644,
                CreateHow::Guarded,
                false,
            )
            .unwrap();
        }
        for plus in [false, true] {
            let mut names = Vec::new();
            let n = c
                .read_dir_all(&m.dir, plus, 10_000, |p, e| {
                    names.push(String::from_utf8_lossy(p.name(e)).into_owned())
                })
                .unwrap();
            names.sort();
            assert_eq!(n, 303, "v{v} plus={plus}: {names:?}");
            assert!(names.contains(&"c".to_string()) && !names.contains(&"a".to_string()));
            let err = c.read_dir_all(&m.dir, plus, 100, |_, _| {}).unwrap_err();
            assert!(err.to_string().contains("bound"), "{err}");
        }
        c.remove(&m.dir, b"c").unwrap();
        c.rmdir(&m.dir, b"e").unwrap();
        assert!(!srv.export.join(&sub).join("c").exists());
    }
}

#[test]
fn a_server_restart_mid_run_is_survived_and_counted() {
    let Some(mut srv) = NfsServer::start("a_server_restart_mid_run_is_survived_and_counted") else {
        return;
    };
    std::fs::write(srv.export.join("f"), vec![5u8; 1 << 20]).unwrap();
    for v in VERSIONS {
        let mut m = connect(&srv.url("", v), |o| {
            o.connections = 2;
            o.reconnect_for = Duration::from_secs(60);
        })
        .expect("connects");
        let (fh, _) = m.client.lookup(&m.dir, b"f").unwrap();
        let file = m.client.open(&fh).unwrap();
        let buf: &'static mut [u8] = Box::leak(vec![0u8; 16 * 4096].into_boxed_slice());
        let dst = buf.as_mut_ptr() as usize;
        let c = &mut m.client;
        let reads = |c: &mut Client, n| {
            pipeline(c, n, 16, |i| Request::Read {
                file,
                offset: (i % 256) as u64 * 4096,
                len: 4096,
                buf: (dst + (i % 16) * 4096) as *mut u8,
            })
        };
        assert!(reads(c, 64).iter().all(|d| d.result.is_ok()));
        srv.kill();
        // Queued while the server is down: resent once it is back.
        let mut out = Vec::new();
        for s in 0..8u32 {
            unsafe {
                c.queue(
                    s,
                    Request::Read {
                        file,
                        offset: 0,
                        len: 4096,
                        buf: (dst + s as usize * 4096) as *mut u8,
                    },
                )
                .unwrap()
            };
        }
        c.poll(0, Duration::from_millis(100), &mut out).unwrap();
        srv.restart();
        c.poll(8, Duration::from_secs(60), &mut out).unwrap();
        assert_eq!(out.len(), 8, "v{v}");
        for d in &out {
            assert!(
                matches!(d.result, Ok(Reply::Read { count: 4096, .. })),
                "v{v}: {:?}",
                d.result
            );
        }
        assert!(
            reads(c, 64).iter().all(|d| d.result.is_ok()),
            "v{v}: reads after the restart"
        );
        let reconnects: u64 = c.conn_stats().map(|s| s.reconnects).sum();
        assert!(reconnects >= 1, "v{v}: the reconnect is counted");
        assert_eq!(c.connections_up(), 2, "v{v}");
    }
}

#[test]
fn a_server_that_goes_away_is_one_error_in_bounded_time() {
    let Some(mut srv) = NfsServer::start("a_server_that_goes_away_is_one_error_in_bounded_time")
    else {
        return;
    };
    std::fs::write(srv.export.join("f"), vec![5u8; 8192]).unwrap();
    for v in VERSIONS {
        if v == "4.1" {
            srv.restart();
        }
        let mut m = connect(&srv.url("", v), |o| {
            o.reconnect_for = Duration::from_secs(2)
        })
        .expect("connects");
        let (fh, _) = m.client.lookup(&m.dir, b"f").unwrap();
        srv.stop();
        let t = Instant::now();
        let e = m.client.getattr(&fh).unwrap_err();
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "v{v}: waited {:?}",
            t.elapsed()
        );
        assert!(
            e.to_string().contains("did not come back within 2 s"),
            "v{v}: {e}"
        );
    }
}
