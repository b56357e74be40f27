//! nfs_loop URL SECONDS DEPTH BS MODE [CONNECTIONS]: what bench/nfs-loop/libnfs-loop.c
//! does, through volbench's NFS client (`volbench::proto::nfs`): DEPTH requests of BS
//! bytes kept in flight to the file URL names, for SECONDS; MODE is randread, read or
//! write (sequential, wrapping). Prints "ops=N bytes=B seconds=S cpu=C" like the C loop,
//! and the client's calls per connection on stderr. bench/nfs-vs-libnfs.sh runs it (the
//! client alone, without the worker loop above it). An example of the crate, so every
//! `cargo clippy --all-targets` and `cargo test` compiles it against the client as it is.
//! Unix only, as the client.

#[cfg(not(unix))]
fn main() {
    eprintln!("nfs_loop: the NFS client is Unix only");
    std::process::exit(2);
}

#[cfg(unix)]
fn main() {
    unix::main()
}

#[cfg(unix)]
mod unix {
    use std::time::{Duration, Instant};

    use volbench::proto::nfs::{self, Reply, Request, Stable};

    fn cpu() -> f64 {
        // SAFETY: getrusage fills the structure given.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        t(r.ru_utime) + t(r.ru_stime)
    }

    pub(super) fn main() {
        let a: Vec<String> = std::env::args().collect();
        if a.len() < 6 {
            eprintln!("usage: nfs_loop URL SECONDS DEPTH BS randread|read|write [CONNECTIONS]");
            std::process::exit(2);
        }
        let die = |e: String| -> ! {
            eprintln!("nfs_loop: {e}");
            std::process::exit(1)
        };
        let secs: f64 = a[2].parse().unwrap_or_else(|_| die("SECONDS".into()));
        let depth: usize = a[3].parse().unwrap_or_else(|_| die("DEPTH".into()));
        let bs: u32 = a[4].parse().unwrap_or_else(|_| die("BS".into()));
        let mode = a[5].as_str();
        let (dir_url, file) = match a[1].split_once('?') {
            Some((p, q)) => {
                let (d, f) = p.rsplit_once('/').unwrap_or_else(|| die("URL".into()));
                (format!("{d}?{q}"), f.to_string())
            }
            None => {
                let (d, f) = a[1].rsplit_once('/').unwrap_or_else(|| die("URL".into()));
                (d.to_string(), f.to_string())
            }
        };
        let url = nfs::url::parse(&dir_url).unwrap_or_else(|e| die(e));
        let mut o = nfs::Options::from_url(&url);
        o.depth = depth;
        o.max_io = bs;
        if let Some(n) = a.get(6) {
            o.connections = n.parse().unwrap_or_else(|_| die("CONNECTIONS".into()));
        }
        let mut m = nfs::connect(&url, &o).unwrap_or_else(|e| die(e.to_string()));
        let c = &mut m.client;
        let (fh, attr) = c
            .lookup(&m.dir, file.as_bytes())
            .unwrap_or_else(|e| die(e.to_string()));
        let f = c.open(&fh).unwrap_or_else(|e| die(e.to_string()));
        let blocks = attr.size() / bs as u64;
        if blocks == 0 {
            die("the file is smaller than one block".into());
        }
        let mut bufs = vec![0x5au8; depth * bs as usize];
        let base = bufs.as_mut_ptr();
        let mut rng = 88172645463325252u64;
        let mut next = 0u64;
        let mut offset = || {
            if mode == "randread" {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                (rng % blocks) * bs as u64
            } else {
                let o = next;
                next = if next + 1 >= blocks { 0 } else { next + 1 };
                o * bs as u64
            }
        };
        let write = mode == "write";
        let mut out = Vec::with_capacity(depth);
        let (mut ops, mut bytes) = (0u64, 0u64);
        let t0 = Instant::now();
        let c0 = cpu();
        let queue = |c: &mut nfs::Client, slot: u32, off: u64| {
            // SAFETY: each slot owns its part of `bufs`, alive until the end of
            // main and untouched while its request is in flight.
            let buf = unsafe { base.add(slot as usize * bs as usize) };
            let req = if write {
                Request::Write {
                    file: f,
                    offset: off,
                    len: bs,
                    buf,
                    stable: Stable::Unstable,
                }
            } else {
                Request::Read {
                    file: f,
                    offset: off,
                    len: bs,
                    buf,
                }
            };
            unsafe { c.queue(slot, req) }.unwrap_or_else(|e| die(e.to_string()));
        };
        for s in 0..depth as u32 {
            queue(c, s, offset());
        }
        let mut stopping = false;
        let mut inflight = depth;
        while inflight > 0 {
            if !stopping && t0.elapsed().as_secs_f64() >= secs {
                stopping = true;
            }
            out.clear();
            c.poll(1, Duration::from_secs(30), &mut out)
                .unwrap_or_else(|e| die(e.to_string()));
            for done in &out {
                inflight -= 1;
                match done.result {
                    Ok(Reply::Read { count, .. }) | Ok(Reply::Write { count, .. }) => {
                        ops += 1;
                        bytes += count as u64;
                    }
                    Ok(other) => die(format!("unexpected {other:?}")),
                    Err(e) => die(e.to_string()),
                }
                if !stopping {
                    queue(c, done.slot, offset());
                    inflight += 1;
                }
            }
        }
        let t = t0.elapsed().as_secs_f64();
        let used = cpu() - c0;
        println!("ops={ops} bytes={bytes} seconds={t:.3} cpu={used:.3}");
        for (i, s) in c.conn_stats().enumerate() {
            for k in [nfs::OpKind::Read, nfs::OpKind::Write] {
                if let Some(x) = s.get(k as u8) {
                    eprintln!("conn {i} {k:?}: calls {}", x.rtt.ops);
                }
            }
        }
    }
}
