//! Client counters and the findings that read them: the device under a
//! target must agree with volbench's own IOPS, the host CPU must be there,
//! and each finder must fire on its shape (synthetic results with known
//! answers, and real runs where this machine can make the shape) and stay
//! quiet on healthy results.

use std::process::Command;

use volbench::report::fixtures::{self, RunFixture};
use volbench::result::ResultDoc;
use volbench::result::counters::{
    CounterInterval, DeviceInfo, DeviceRates, DeviceRole, HostCpu, InterfaceInfo, NetRates,
    NfsOpRates, NfsRates, RunCounters,
};
use volbench::result::diagnosis::{Confidence, Kind, diagnose};
use volbench::spec::Pattern;

use crate::common::volume::{VolumeSpec, create_or_skip};
use crate::common::*;

const MIB: u64 = 1 << 20;

fn kinds(doc: &ResultDoc) -> Vec<Kind> {
    diagnose(doc).iter().map(|f| f.kind).collect()
}

/// One random-read run, 4 threads x iodepth 4, at `iops`.
pub(crate) fn one_run(iops: f64) -> ResultDoc {
    let r = RunFixture::new("randread-4k", Pattern::Randread, 100, 4096)
        .conc(4, 4)
        .perf(iops, 16.0 * 1e6 / iops);
    fixtures::doc("client-1", &[r])
}

/// The same random read at 2 x 4 and 4 x 4 in flight, at the given IOPS.
fn two_depths(iops_8: f64, iops_16: f64) -> ResultDoc {
    let r = |name: &str, threads: u32, iops: f64| {
        RunFixture::new(name, Pattern::Randread, 100, 4096)
            .conc(threads, 4)
            .perf(iops, f64::from(threads * 4) * 1e6 / iops)
    };
    fixtures::doc(
        "client-1",
        &[
            r("randread-4k-qd8", 2, iops_8),
            r("randread-4k", 4, iops_16),
        ],
    )
}

/// Gives every run of `doc` counters whose measured summary is `summary`.
pub(crate) fn with(
    mut doc: ResultDoc,
    summary: CounterInterval,
    speed_mbit: Option<f64>,
) -> ResultDoc {
    for r in &mut doc.runs {
        r.counters = Some(RunCounters {
            host: "client-1".into(),
            cpus: 4,
            devices: vec![DeviceInfo {
                name: "sdb".into(),
                role: DeviceRole::Target,
                via: String::new(),
            }],
            interfaces: vec![InterfaceInfo {
                name: "eth0".into(),
                speed_mbit,
            }],
            nfs_mount: Some("/mnt/vol".into()),
            unavailable: Vec::new(),
            intervals: vec![summary.clone()],
            summary: Some(summary.clone()),
        });
    }
    doc
}

pub(crate) fn host_cpu(user: f64, system: f64) -> Option<HostCpu> {
    Some(HostCpu {
        user_pct: user,
        system_pct: system,
        idle_pct: 100.0 - user - system,
        busiest_cpu_pct: (user + system) * 1.2,
        ..HostCpu::default()
    })
}

fn device(busy: f64, queue: f64, iops: f64) -> Vec<DeviceRates> {
    vec![DeviceRates {
        name: "sdb".into(),
        read_iops: iops,
        read_mib_s: iops / 256.0,
        avg_request_kib: 4.0,
        avg_queue: queue,
        busy_pct: busy,
        ..DeviceRates::default()
    }]
}

/// What a healthy run looks like from the client: CPUs mostly idle, the
/// device busy part of the time, the link far from full, NFS execution
/// about its round trip.
pub(crate) fn healthy() -> CounterInterval {
    CounterInterval {
        t_s: 3.0,
        duration_s: 2.0,
        cpu: host_cpu(20.0, 15.0),
        devices: device(60.0, 3.0, 20_000.0),
        net: vec![NetRates {
            name: "eth0".into(),
            rx_mib_s: 80.0,
            tx_mib_s: 2.0,
            ..NetRates::default()
        }],
        nfs: Some(NfsRates {
            ops: vec![NfsOpRates {
                op: "READ".into(),
                ops_s: 20_000.0,
                avg_rtt_ms: 0.6,
                avg_exe_ms: 0.8,
                retrans_s: 0.0,
            }],
            sends_s: 20_000.0,
            avg_backlog: 0.1,
        }),
        ..CounterInterval::default()
    }
}

#[test]
fn no_client_finding_on_healthy_counters() {
    let doc = with(one_run(20_000.0), healthy(), Some(10_000.0));
    assert_eq!(kinds(&doc), Vec::<Kind>::new());
    // The report fixtures have no counters at all.
    for doc in [fixtures::six_patterns(), fixtures::thread_curve()] {
        assert!(diagnose(&doc).iter().all(|f| !matches!(
            f.kind,
            Kind::ClientCpu | Kind::DeviceBusy | Kind::NetworkLimit | Kind::NfsQueueing
        )));
    }
}

#[test]
fn saturated_client_cpu_is_named_with_its_figures() {
    let mut s = healthy();
    s.cpu = host_cpu(70.0, 28.0);
    let mut doc = with(one_run(20_000.0), s, None);
    // volbench's own threads are the load: 3.8 of the 4 CPUs.
    doc.runs[0].totals.cpu.user_pct = 270.0;
    doc.runs[0].totals.cpu.sys_pct = 110.0;
    let f = diagnose(&doc);
    let cpu = f
        .iter()
        .find(|f| f.kind == Kind::ClientCpu)
        .expect("{f:#?}");
    assert_eq!(cpu.confidence, Confidence::High);
    assert_eq!(cpu.figures["host_busy_pct"], 98.0);
    assert_eq!(cpu.figures["cpus"], 4.0);
    assert!(
        cpu.message.contains("client client-1 CPU-bound"),
        "{cpu:#?}"
    );
    assert!(cpu.message.contains("4 CPUs were 98% busy"), "{cpu:#?}");
    assert_eq!(cpu.runs, vec!["randread-4k".to_string()]);
    // 89% is not saturated.
    let mut s = healthy();
    s.cpu = host_cpu(60.0, 29.0);
    assert!(!kinds(&with(one_run(20_000.0), s, None)).contains(&Kind::ClientCpu));
}

#[test]
fn one_io_thread_on_a_full_core_is_core_bound() {
    let mut doc = with(one_run(20_000.0), healthy(), None);
    // 4 I/O threads using 380% of one core: each ~95% of a core, while the
    // host (16 CPUs, say) is far from busy.
    doc.runs[0].totals.cpu.user_pct = 300.0;
    doc.runs[0].totals.cpu.sys_pct = 80.0;
    if let Some(c) = &mut doc.runs[0].counters {
        c.cpus = 16;
    }
    let f = diagnose(&doc);
    let cpu = f
        .iter()
        .find(|f| f.kind == Kind::ClientCpu)
        .expect("{f:#?}");
    assert!(cpu.message.contains("core-bound"), "{cpu:#?}");
    assert_eq!(cpu.confidence, Confidence::Medium);
}

#[test]
fn a_device_holding_the_ios_all_the_time_is_busy_and_a_half_idle_one_is_not() {
    // Busy with the whole queue in it is any driven device, a healthy one
    // serving requests in parallel too (a loop device read 97% busy with
    // 13 of 16 in it at 59,000 IOPS): one run alone names nothing.
    let mut s = healthy();
    s.devices = device(99.5, 15.6, 500.0);
    let doc = with(one_run(500.0), s.clone(), None);
    assert!(
        !kinds(&doc).contains(&Kind::DeviceBusy),
        "{:#?}",
        diagnose(&doc)
    );
    // Twice the I/Os in flight gave 2% more: the device is at its limit.
    let doc = with(two_depths(490.0, 500.0), s, None);
    let f = diagnose(&doc);
    let d = f
        .iter()
        .find(|f| f.kind == Kind::DeviceBusy)
        .expect("{f:#?}");
    assert_eq!(d.confidence, Confidence::High);
    assert_eq!(d.figures["busy_pct"], 99.5);
    assert_eq!(d.figures["concurrency"], 16.0);
    assert!(d.message.contains("sdb was 100% busy"), "{d:#?}");
    assert!(
        d.message
            .contains("16 in flight gave +2% IOPS over 8 (run randread-4k-qd8, 490 IOPS)"),
        "{d:#?}"
    );
    assert_eq!(d.runs, vec!["randread-4k".to_string()]);
    // Twice the I/Os in flight gave 60% more: still climbing, not named.
    let mut s = healthy();
    s.devices = device(99.5, 15.6, 800.0);
    let doc = with(two_depths(500.0, 800.0), s, None);
    assert!(
        !kinds(&doc).contains(&Kind::DeviceBusy),
        "{:#?}",
        diagnose(&doc)
    );
    // Busy all the time but holding few of the I/Os in flight: the time
    // goes elsewhere (the client), so the device is not named.
    let mut s = healthy();
    s.devices = device(99.5, 4.0, 500.0);
    assert!(!kinds(&with(two_depths(490.0, 500.0), s, None)).contains(&Kind::DeviceBusy));
    // A disk shared with other work (under a loop device, say) moving far
    // more than volbench asked for is busy with someone else's I/O.
    let mut s = healthy();
    s.devices = device(99.5, 15.6, 500.0);
    s.devices[0].read_mib_s = 800.0;
    assert!(!kinds(&with(two_depths(490.0, 500.0), s, None)).contains(&Kind::DeviceBusy));
}

#[test]
fn a_link_near_its_speed_is_the_network_limit() {
    // 10 Gbit/s is 1,192 MiB/s: 1,150 MiB/s in is 96% of it.
    let mut s = healthy();
    s.net[0].rx_mib_s = 1150.0;
    let doc = with(one_run(20_000.0), s, Some(10_000.0));
    let f = diagnose(&doc);
    let n = f
        .iter()
        .find(|f| f.kind == Kind::NetworkLimit)
        .expect("{f:#?}");
    assert!((n.figures["link_mib_s"] - 1192.093).abs() < 0.01, "{n:#?}");
    assert!(n.message.contains("eth0 moved 1,150 MiB/s in"), "{n:#?}");
    // The same traffic on a link of unknown speed says nothing by itself.
    let mut s = healthy();
    s.net[0].rx_mib_s = 1150.0;
    assert!(!kinds(&with(one_run(20_000.0), s, None)).contains(&Kind::NetworkLimit));
}

#[test]
fn io_flat_across_block_sizes_on_the_interface_is_a_network_cap() {
    // 4, 16 and 64 KiB reads all at ~40 MiB/s, and eth0 carrying them.
    let runs: Vec<RunFixture> = [4u64, 16, 64]
        .iter()
        .map(|&k| {
            let iops = 40.0 * 1024.0 / k as f64;
            RunFixture::new(&format!("read-{k}k"), Pattern::Randread, 100, k << 10)
                .conc(4, 4)
                .perf(iops, 16.0 * 1e6 / iops)
        })
        .collect();
    let mut doc = fixtures::doc("client-1", &runs);
    for (r, rx) in doc.runs.iter_mut().zip([41.0, 42.5, 41.8]) {
        let mut s = healthy();
        s.net[0].rx_mib_s = rx;
        r.counters = with(one_run(1.0), s, None).runs[0].counters.clone();
    }
    let f = diagnose(&doc);
    let n = f
        .iter()
        .find(|f| f.kind == Kind::NetworkLimit)
        .expect("{f:#?}");
    assert!(n.message.contains("network cap: eth0"), "{n:#?}");
    assert!((n.figures["mib_s"] - 41.767).abs() < 0.01, "{n:#?}");
    assert_eq!(n.runs.len(), 3);
}

#[test]
fn nfs_execution_well_above_round_trip_is_client_queueing() {
    let mut s = healthy();
    if let Some(nfs) = s.nfs.as_mut() {
        nfs.ops[0].avg_exe_ms = 6.0;
        nfs.ops[0].avg_rtt_ms = 1.2;
        nfs.avg_backlog = 11.0;
    }
    let doc = with(one_run(20_000.0), s, None);
    let f = diagnose(&doc);
    let n = f
        .iter()
        .find(|f| f.kind == Kind::NfsQueueing)
        .expect("{f:#?}");
    assert_eq!(n.figures["ratio"], 5.0);
    assert_eq!(n.confidence, Confidence::High);
    assert!(n.message.contains("nconnect"), "{n:#?}");
    assert!(n.message.contains("/mnt/vol"), "{n:#?}");
    // 0.3 ms against 0.1 ms is 3x, but a few tenths of a millisecond on a
    // fast LAN is no queue worth naming.
    let mut s = healthy();
    if let Some(nfs) = s.nfs.as_mut() {
        nfs.ops[0].avg_exe_ms = 0.3;
        nfs.ops[0].avg_rtt_ms = 0.1;
    }
    assert!(!kinds(&with(one_run(20_000.0), s, None)).contains(&Kind::NfsQueueing));
}

// ---- real runs ----

fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "volbench failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stderr(o)))
}

fn f64_at(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_loop_device_run_records_the_devices_iops_and_the_host_cpu() {
    let _one = heavy_io();
    let Some(vol) = create_or_skip("counters_loop", VolumeSpec::new(64 * MIB)) else {
        return;
    };
    let o = vol
        .volbench()
        .args(["run", "--target", vol.device_str(), "--allow-overwrite"])
        .args(["--rw", "randread", "--threads", "1", "--iodepth", "4"])
        .args(["--duration", "2s", "--warmup", "0", "--json"])
        .output()
        .unwrap();
    let doc = json_of(&o);
    let run = &doc["runs"][0];
    let c = &run["counters"];
    let loop_name = vol.device.file_name().unwrap().to_str().unwrap();
    assert_eq!(c["devices"][0]["name"], loop_name, "{c:#}");
    assert_eq!(c["devices"][0]["role"], "target");
    // The image is a file: the loop device resolves to the disk it is on
    // (when that is a block device at all).
    if let Some(below) = c["devices"].as_array().unwrap().get(1) {
        assert_eq!(below["role"], "below");
        assert!(
            below["via"].as_str().unwrap().contains("backing file"),
            "{below:#}"
        );
    }
    let s = &c["summary"];
    let dev = &s["devices"][0];
    let ours = f64_at(&run["totals"]["read"]["iops"]);
    let theirs = f64_at(&dev["read_iops"]);
    assert!(ours > 100.0, "{run:#}");
    assert!(
        (theirs / ours - 1.0).abs() <= 0.03,
        "device {theirs} IOPS against volbench's {ours}"
    );
    assert!(
        (f64_at(&dev["avg_request_kib"]) - 4.0).abs() < 0.01,
        "{dev:#}"
    );
    let cpu = &s["cpu"];
    let sum: f64 = [
        "user_pct",
        "system_pct",
        "iowait_pct",
        "steal_pct",
        "idle_pct",
    ]
    .iter()
    .map(|k| f64_at(&cpu[k]))
    .sum();
    assert!((sum - 100.0).abs() < 0.5, "{cpu:#}");
    let ivs = c["intervals"].as_array().unwrap();
    assert_eq!(ivs.len(), run["intervals"].as_array().unwrap().len());
    assert!(
        ivs.iter()
            .all(|i| i["cpu"].is_object() && i["devices"][0]["name"] == loop_name)
    );
}

/// A loop device over a file on a throttled volume: what sits in the cap
/// is the upper device's requests, so it is busy all the time with every
/// I/O in it, as a cloud disk at its provisioned IOPS looks from the VM.
struct Nested {
    device: String,
}

impl Drop for Nested {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.device]).status();
    }
}

#[test]
fn a_device_held_at_its_cap_is_named_busy() {
    let _one = heavy_io();
    let spec = VolumeSpec::new(128 * MIB).read_iops(300).ext4();
    let Some(vol) = create_or_skip("counters_busy", spec) else {
        return;
    };
    let mnt = vol.mountpoint.clone().unwrap();
    let image = mnt.join("nested.img");
    // Written data, not a hole: reads of a hole never reach the capped device.
    std::fs::write(&image, vec![0x5au8; 16 << 20]).unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .arg(&image)
        .output()
        .unwrap();
    assert!(out.status.success(), "losetup: {}", stderr(&out));
    let nested = Nested {
        device: String::from_utf8_lossy(&out.stdout).trim().to_string(),
    };
    let o = vol
        .volbench()
        .args(["run", "--target", &nested.device, "--allow-overwrite"])
        // Two depths: busy alone is any driven device; at the cap, twice
        // the I/Os in flight give no more.
        .args(["--rw", "randread", "--threads", "1", "--iodepth", "4,8"])
        .args(["--engine", "io_uring"])
        .args(["--duration", "1500ms", "--warmup", "500ms", "--json"])
        .output()
        .unwrap();
    let doc = json_of(&o);
    let f = doc["diagnosis"].as_array().cloned().unwrap_or_default();
    let name = nested.device.trim_start_matches("/dev/");
    let busy = f
        .iter()
        .find(|x| x["kind"] == "device_busy")
        .unwrap_or_else(|| {
            panic!(
                "no device_busy in {f:#?}\n{:#}",
                doc["runs"][0]["counters"]["summary"]
            )
        });
    assert!(busy["message"].as_str().unwrap().contains(name), "{busy:#}");
    assert!(f64_at(&busy["figures"]["busy_pct"]) >= 85.0, "{busy:#}");
    assert!(f64_at(&busy["figures"]["avg_queue"]) >= 6.0, "{busy:#}");
    assert!(
        busy["message"]
            .as_str()
            .unwrap()
            .contains("8 in flight gave"),
        "{busy:#}"
    );
    let iops = f64_at(&busy["figures"]["device_iops"]);
    assert!((iops / 300.0 - 1.0).abs() <= 0.1, "{busy:#}");
    // The chain down from the nested device: its file is on the capped volume.
    let devs = doc["runs"][0]["counters"]["devices"].as_array().unwrap();
    let capped = vol.device.file_name().unwrap().to_str().unwrap();
    assert!(devs.iter().any(|d| d["name"] == capped), "{devs:#?}");
    drop(nested);
}

#[test]
fn the_page_cache_with_more_threads_than_cores_names_the_client_cpu() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        skip("page_cache_client_cpu", "no /dev/shm");
        return;
    }
    let _one = heavy_io();
    let dir = tempfile::tempdir_in(shm).unwrap();
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let o = volbench()
        .args(["run", "--target"])
        .arg(dir.path().join("set"))
        .args(["--size", "16M", "--buffered", "--rw", "randread"])
        .args(["--threads", &(cpus * 2).to_string(), "--iodepth", "1"])
        .args(["--duration", "1s", "--warmup", "0", "--json"])
        .output()
        .unwrap();
    let doc = json_of(&o);
    let f = doc["diagnosis"].as_array().cloned().unwrap_or_default();
    let cpu = f
        .iter()
        .find(|x| x["kind"] == "client_cpu")
        .unwrap_or_else(|| panic!("no client_cpu in {f:#?}"));
    assert!(f64_at(&cpu["figures"]["host_busy_pct"]) >= 90.0, "{cpu:#}");
    assert_eq!(f64_at(&cpu["figures"]["cpus"]), cpus as f64);
}

/// An sshfs mount, unmounted on drop (lazily if still busy).
struct Sshfs(std::path::PathBuf);

impl Drop for Sshfs {
    fn drop(&mut self) {
        let ok = Command::new("fusermount3")
            .arg("-u")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

fn tool(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_remote_file_system_over_a_capped_link_names_the_network() {
    const TEST: &str = "sshfs_network_cap";
    if !tool("sshfs") || !tool("tc") || !std::path::Path::new("/dev/fuse").exists() {
        skip(
            TEST,
            "needs sshfs (apt-get install sshfs), tc and /dev/fuse",
        );
        return;
    }
    let _one = heavy_io();
    let Some(h) = crate::common::hosts::TestHosts::up(TEST, 1) else {
        return;
    };
    // 8 Mbit/s (1 MiB/s) each way, well below what sshfs does here even
    // on a loaded machine at 4 KiB: the root side of the veth shapes what
    // goes to the host, the host's eth0 what comes back. Both go with the
    // namespace when the fixture drops.
    let tbf = [
        "root", "tbf", "rate", "8mbit", "burst", "16kb", "latency", "100ms",
    ];
    let ns = h.ns(1);
    for mut c in [Command::new("tc"), Command::new("ip")] {
        if c.get_program() == "ip" {
            c.args(["netns", "exec", &ns, "tc", "qdisc", "add", "dev", "eth0"]);
        } else {
            c.args(["qdisc", "add", "dev", &ns]);
        }
        let st = c.args(tbf).status().unwrap();
        assert!(st.success(), "{c:?}");
    }
    // The hosts share this file system (only the network is namespaced).
    let export = tempfile::tempdir().unwrap();
    let mnt = tempfile::tempdir().unwrap();
    let out = Command::new("sshfs")
        .arg("-F")
        .arg(h.ssh_config())
        .arg(format!("h1:{}", export.path().display()))
        .arg(mnt.path())
        // The fixture's sshd has no sftp subsystem; direct_io keeps the
        // client's page cache out, so every read crosses the link.
        .args([
            "-o",
            "sftp_server=/usr/lib/openssh/sftp-server",
            "-o",
            "direct_io",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "sshfs: {}", stderr(&out));
    let _mount = Sshfs(mnt.path().to_path_buf());
    let o = volbench()
        .args(["run", "--target"])
        .arg(mnt.path().join("set"))
        .args(["--size", "2M", "--buffered", "--rw", "randread"])
        // 4 to 16 KiB (the 4x span a cap needs): at 1 MiB/s a 1 s run of
        // 64 KiB reads is only ~15 I/Os, whose count alone moved the MiB/s
        // 14% off the others and hid the cap.
        .args(["--bs", "4k,8k,16k", "--threads", "4", "--iodepth", "1"])
        .args(["--duration", "1s", "--warmup", "500ms", "--json"])
        .output()
        .unwrap();
    let doc = json_of(&o);
    let f = doc["diagnosis"].as_array().cloned().unwrap_or_default();
    let net = f
        .iter()
        .find(|x| x["kind"] == "network_limit")
        .unwrap_or_else(|| {
            let nets: Vec<_> = doc["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    (
                        &r["totals"]["read"]["mib_s"],
                        &r["counters"]["summary"]["net"],
                    )
                })
                .collect();
            panic!("no network_limit in {f:#?}\n{nets:#?}")
        });
    let mib_s = f64_at(&net["figures"]["mib_s"]);
    assert!((0.75..=1.15).contains(&mib_s), "{net:#}");
    assert!(net["message"].as_str().unwrap().contains("vbt"), "{net:#}");
}
