//! A bench-only harness for the SMB client (`src/proto/smb/`) until
//! volbench itself runs SMB targets: one thread drives N channels of one
//! session at a queue depth, random or sequential reads or writes of one
//! block size over one file, for a time; prints one JSON line with the
//! ops, bytes, seconds and this process's CPU seconds. bench/smb-*.sh runs
//! it beside a C loop over libsmbclient.
//!
//!   smb_bench --addr 127.0.0.1:445 --share bench [--user U] [--channels N]
//!     [--rw randread|randwrite|read|write] [--bs 4096] [--qd 16]
//!     [--size 64M] [--seconds 5] [--dialect 3.1.1] [--sign] [--encrypt CIPHER]
//!     [--file NAME] [--prepare]
//!
//! The password comes from VOLBENCH_SMB_PASSWORD (never an argument).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use volbench::proto::smb::auth::creds;
use volbench::proto::smb::conn::wait::wait_all;
use volbench::proto::smb::conn::{Completion, Outcome};
use volbench::proto::smb::consts::{Cipher, Dialect};
use volbench::proto::smb::msg::info::SetInfo;
use volbench::proto::smb::session::client::Client;
use volbench::proto::smb::session::ops::Open;
use volbench::proto::smb::session::{Auth, Options, Signing, Target};

struct Args {
    addr: SocketAddr,
    share: String,
    user: Option<String>,
    channels: usize,
    rw: String,
    bs: u32,
    qd: usize,
    size: u64,
    seconds: f64,
    dialect: Option<Dialect>,
    sign: bool,
    encrypt: Option<Cipher>,
    file: String,
    prepare: bool,
}

fn size(s: &str) -> u64 {
    let (n, m) = match s.chars().last() {
        Some('K') | Some('k') => (&s[..s.len() - 1], 1 << 10),
        Some('M') | Some('m') => (&s[..s.len() - 1], 1 << 20),
        Some('G') | Some('g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    n.parse::<u64>()
        .unwrap_or_else(|_| die(&format!("bad size {s}")))
        * m
}

fn die(m: &str) -> ! {
    eprintln!("smb_bench: {m}");
    std::process::exit(2)
}

fn parse() -> Args {
    let mut a = Args {
        addr: "127.0.0.1:445".parse().unwrap_or_else(|_| die("addr")),
        share: "bench".into(),
        user: None,
        channels: 1,
        rw: "randread".into(),
        bs: 4096,
        qd: 16,
        size: 64 << 20,
        seconds: 5.0,
        dialect: None,
        sign: false,
        encrypt: None,
        file: "smb_bench.dat".into(),
        prepare: false,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let v = || {
            argv.get(i + 1)
                .cloned()
                .unwrap_or_else(|| die("missing value"))
        };
        match argv[i].as_str() {
            "--addr" => a.addr = v().parse().unwrap_or_else(|_| die("bad --addr")),
            "--share" => a.share = v(),
            "--user" => a.user = Some(v()),
            "--channels" => a.channels = v().parse().unwrap_or_else(|_| die("bad --channels")),
            "--rw" => a.rw = v(),
            "--bs" => a.bs = size(&v()) as u32,
            "--qd" => a.qd = v().parse().unwrap_or_else(|_| die("bad --qd")),
            "--size" => a.size = size(&v()),
            "--seconds" => a.seconds = v().parse().unwrap_or_else(|_| die("bad --seconds")),
            "--dialect" => {
                a.dialect = Some(Dialect::parse(&v()).unwrap_or_else(|| die("bad --dialect")))
            }
            "--encrypt" => {
                a.encrypt = Some(Cipher::parse(&v()).unwrap_or_else(|| die("bad --encrypt")))
            }
            "--file" => a.file = v(),
            "--sign" => {
                a.sign = true;
                i += 1;
                continue;
            }
            "--prepare" => {
                a.prepare = true;
                i += 1;
                continue;
            }
            other => die(&format!("unknown option {other}")),
        }
        i += 2;
    }
    a
}

fn cpu_seconds() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn main() {
    let a = parse();
    let auth = match &a.user {
        None => Auth::Guest,
        Some(u) => {
            Auth::Ntlm(creds::from_env(u, "").unwrap_or_else(|| die("set VOLBENCH_SMB_PASSWORD")))
        }
    };
    let mut opts = Options::default();
    if let Some(d) = a.dialect {
        opts.dialects = vec![d];
    }
    if a.sign {
        opts.signing = Signing::On;
    }
    if let Some(c) = a.encrypt {
        opts.encryption = vec![c];
    }
    // Credits for every slot's request, each charged by its size.
    let charge = (a.bs as usize).saturating_sub(1) / 65536 + 1;
    opts.credit_target = (a.qd * charge * 2).clamp(64, 8192) as u16;
    let target = Target {
        server: a.addr.ip().to_string(),
        addr: a.addr,
        share: a.share.clone(),
    };
    let mut c = Client::connect(target, auth, opts).unwrap_or_else(|e| die(&e.to_string()));
    if a.channels > 1 {
        c.add_channels(a.channels, &[])
            .unwrap_or_else(|e| die(&e.to_string()));
    }
    if a.prepare {
        let f = c
            .open(&a.file, Open::CreateFile)
            .unwrap_or_else(|e| die(&e.to_string()));
        let chunk = vec![0x5au8; c.negotiated().max_io.min(1 << 20) as usize];
        let mut off = 0;
        while off < a.size {
            let n = c
                .write_at(f.file_id, off, &chunk)
                .unwrap_or_else(|e| die(&e.to_string()));
            off += n as u64;
        }
        c.set_info(f.file_id, SetInfo::EndOfFile(a.size))
            .unwrap_or_else(|e| die(&e.to_string()));
        c.close(f.file_id).unwrap_or_else(|e| die(&e.to_string()));
    }
    let write = a.rw.contains("write");
    let random = a.rw.starts_with("rand");
    let how = if write {
        Open::WriteExisting
    } else {
        Open::Read
    };
    let f = c.open(&a.file, how).unwrap_or_else(|e| die(&e.to_string()));
    let tree = c.tree_id();
    let blocks = (a.size / u64::from(a.bs)).max(1);
    let mut bufs: Vec<Vec<u8>> = (0..a.qd).map(|_| vec![0xa5u8; a.bs as usize]).collect();
    let mut rng = fastrand::Rng::with_seed(42);
    let mut seq = 0u64;
    let mut next_off = |rng: &mut fastrand::Rng| {
        let b = if random {
            rng.u64(0..blocks)
        } else {
            seq = (seq + 1) % blocks;
            seq
        };
        b * u64::from(a.bs)
    };
    let chans = c.channels_mut();
    let n = chans.len();
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    let until = t0 + Duration::from_secs_f64(a.seconds);
    let (mut ops, mut bytes, mut errors) = (0u64, 0u64, 0u64);
    let mut done: Vec<Completion> = Vec::with_capacity(a.qd);
    let queue = |chans: &mut [volbench::proto::smb::conn::channel::Channel],
                 slot: usize,
                 off: u64,
                 bufs: &mut [Vec<u8>]| {
        let ch = &mut chans[slot % n];
        // SAFETY: each slot's buffer is used by one request at a time and
        // outlives the loop.
        unsafe {
            if write {
                ch.queue_write(
                    slot as u64,
                    tree,
                    f.file_id,
                    off,
                    a.bs,
                    bufs[slot].as_ptr(),
                    false,
                );
            } else {
                ch.queue_read(
                    slot as u64,
                    tree,
                    f.file_id,
                    off,
                    a.bs,
                    bufs[slot].as_mut_ptr(),
                );
            }
        }
    };
    for slot in 0..a.qd {
        let off = next_off(&mut rng);
        queue(chans, slot, off, &mut bufs);
    }
    loop {
        done.clear();
        wait_all(chans, 1, Duration::from_secs(30), &mut done)
            .unwrap_or_else(|e| die(&e.to_string()));
        let now = Instant::now();
        for d in &done {
            ops += 1;
            match d.outcome {
                Outcome::Bytes(b) if d.status == 0 => bytes += u64::from(b),
                _ => errors += 1,
            }
            if now < until {
                let off = next_off(&mut rng);
                queue(chans, d.tag as usize, off, &mut bufs);
            }
        }
        if now >= until && chans.iter().all(|c| c.in_flight() == 0 && c.waiting() == 0) {
            break;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let st = c.total_stats();
    let per: Vec<String> = c
        .channels()
        .iter()
        .map(|ch| {
            let s = ch.stats();
            let cmd = if write {
                volbench::proto::smb::consts::Command::Write
            } else {
                volbench::proto::smb::consts::Command::Read
            };
            format!("{}", s.command(cmd).requests)
        })
        .collect();
    let _ = c.close(f.file_id);
    c.logoff();
    let neg = c.negotiated();
    println!(
        "{{\"client\":\"volbench-smb\",\"rw\":\"{}\",\"bs\":{},\"qd\":{},\"channels\":{},\"ops\":{ops},\"bytes\":{bytes},\"errors\":{errors},\"seconds\":{secs:.4},\"cpu\":{cpu:.4},\"dialect\":\"{}\",\"signing\":{},\"cipher\":\"{}\",\"credit_waits\":{},\"per_channel_ops\":[{}]}}",
        a.rw,
        a.bs,
        a.qd,
        n,
        neg.dialect.name(),
        neg.signing,
        neg.cipher.map_or("none", |c| c.name()),
        st.credit_waits,
        per.join(",")
    );
}
