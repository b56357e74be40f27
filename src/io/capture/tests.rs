use std::time::{Duration, Instant};

use super::*;

/// /proc/self/mountstats of an NFSv4.2 client (Linux 6.1), one mount,
/// at two moments 2 s apart: 2,000 READs and 800 WRITEs in between.
fn mountstats(reads: u64, writes: u64, rtt: u64, exe: u64, sends: u64) -> String {
    format!(
        "device /dev/vda1 mounted on / with fstype ext4
device proc mounted on /proc with fstype proc
device nfs01.example.net:/export/db mounted on /srv/db with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,acregmin=3,acregmax=60,acdirmin=30,acdirmax=60,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.1.0.7,local_lock=none
\tage:\t86211
\timpl_id:\tname='',domain='',date='0,0'
\tcaps:\tcaps=0x3ffbffff,wtmult=512,dtsize=1048576,bsize=0,namlen=255
\tnfsv4:\tbm0=0xfdffbfff,bm1=0xf9be3e,bm2=0x68800,acl=0x3,sessions,pnfs=not configured,lease_time=90,lease_expired=0
\tsec:\tflavor=1,pseudoflavor=1
\tevents:\t5271 190339 17 329 2618 1261 207021 26580 6 0 26580 5 0 2617 0 2 0 0 0 0 0 0 0 0 0 0 0
\tbytes:\t99341824 26935296 0 0 98975744 26935296 24171 6578
\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)
\txprt:\ttcp 0 0 1 0 2 {sends} {sends} 0 {sends} 0 2 0 0
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t        READ: {reads} {reads} 0 {rb} 98975744 41 {rtt} {exe} 0
\t       WRITE: {writes} {wt} 0 26935296 {wb} 12 {wrtt} {wexe} 0
\t      COMMIT: 0 0 0 0 0 0 0 0 0
\t        OPEN: 29 29 0 8764 9164 0 37 42 0
\t     GETATTR: 2613 2613 0 546112 564408 4 1163 1264 0

",
        rb = reads * 240,
        wt = writes + writes / 100,
        wb = writes * 192,
        wrtt = rtt * 2,
        wexe = exe * 2,
    )
}

fn sample_at(at: Instant, mounts: &str, disks: &str) -> Sample {
    let names = vec!["nvme0n1".to_string(), "loop7".to_string()];
    Sample {
        at,
        cpu: None,
        disks: block::parse(disks, &names),
        nfs: vec![("/srv/db".into(), nfs::parse(mounts, "/srv/db").unwrap())],
        net: Vec::new(),
    }
}

// Linux 6.1's /proc/diskstats: 20 fields (discards and flushes).
const D0: &str = " 259       0 nvme0n1 70000 12 1120000 35000 30000 40 480000 60000 0 50000 95000 100 0 8000 20 500 900
   7       7 loop7 10 0 80 1 0 0 0 0 0 1 1 0 0 0 0 0 0
";
const D1: &str = " 259       0 nvme0n1 71400 12 1142400 35700 30600 40 489600 61800 1 51000 97500 110 0 8800 22 540 950
   7       7 loop7 10 0 80 1 0 0 0 0 0 1 1 0 0 0 0 0 0
";

#[test]
fn an_interval_of_a_device_and_an_nfs_mount() {
    let t0 = Instant::now();
    let a = sample_at(t0, &mountstats(1000, 400, 3000, 3500, 5000), D0);
    let b = sample_at(
        t0 + Duration::from_secs(2),
        &mountstats(3000, 1200, 7000, 8500, 7800),
        D1,
    );
    let iv = between(&a, &b, 2.0);
    assert_eq!(iv.duration_s, 2.0);
    let d = &iv.devices[0];
    assert_eq!(d.name, "nvme0n1");
    // 1,400 reads and 600 writes of 16 sectors (8 KiB) in 2 s.
    assert_eq!((d.read_iops, d.write_iops), (700.0, 300.0));
    assert_eq!((d.read_kib, d.write_kib), (8.0, 8.0));
    assert_eq!(d.request_kib(), 8.0);
    assert!((d.read_pct() - 70.0).abs() < 1e-9);
    // 700 ms over 1,400 reads; 1,800 ms over 600 writes.
    assert_eq!((d.read_await_ms, d.write_await_ms), (0.5, 3.0));
    // 2,500 ms of queue time in 2,000 ms: 1.25 in flight on average.
    assert_eq!(d.in_flight, 1.25);
    assert_eq!((d.discard_iops, d.flush_iops), (5.0, 20.0));
    assert_eq!(d.busy_pct, 50.0);
    assert_eq!(iv.devices[1].iops(), 0.0, "an idle device is still listed");
    let m = &iv.nfs[0];
    assert_eq!(m.mount, "/srv/db");
    let read = m.rates.ops.iter().find(|o| o.op == "READ").unwrap();
    assert_eq!(read.ops_s, 1000.0);
    assert_eq!(read.avg_rtt_ms, 2.0, "4,000 ms over 2,000 READs");
    assert_eq!(read.avg_exe_ms, 2.5);
    let write = m.rates.ops.iter().find(|o| o.op == "WRITE").unwrap();
    assert_eq!(write.ops_s, 400.0);
    assert_eq!(
        write.retrans_s, 4.0,
        "8 transmissions beyond one each, in 2 s"
    );
    assert_eq!(m.rates.sends_s, 1400.0);
}

#[test]
fn all_means_whole_devices_that_did_io() {
    let root = std::env::temp_dir().join(format!("vb-capture-sys-{}", std::process::id()));
    for d in ["block/nvme0n1", "block/loop7", "block/loop8", "block/ram0"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let text = format!(
        "{D0} 259       1 nvme0n1p1 500 0 4000 10 0 0 0 0 0 1 1\n   1 0 ram0 9 0 9 0 9 0 9 0 0 0 0\n   7 8 loop8 0 0 0 0 0 0 0 0 0 0 0\n"
    );
    // A partition (its disk counts it), a RAM disk and an unused loop
    // device are left out.
    assert_eq!(busy_devices(&text, &root), ["nvme0n1", "loop7"]);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_device_that_is_not_one_is_refused_by_name() {
    let sys = Path::new("/sys");
    let e = device_name("/dev/null", sys).unwrap_err();
    assert!(
        e.message.contains("/dev/null") && e.message.contains("not a block device"),
        "{}",
        e.message
    );
    let e = device_name("/dev/vb-no-such-disk", sys).unwrap_err();
    assert!(e.message.contains("no such block device"), "{}", e.message);
}
