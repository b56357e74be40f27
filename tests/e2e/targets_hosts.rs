//! Per-target figures across real hosts (issue 12): two namespace hosts,
//! two targets each, one of them on a throttled device. Each target's own
//! figures reach result.json, add up to their host's, the capped one reads
//! near its cap and is named as the slow target with its host, and the
//! report shows the per-target table.

use std::path::Path;
use std::process::Command;

use volbench::error::exit;

use crate::common::hosts::TestHosts;
use crate::common::volume::{self, VolumeSpec};
use crate::common::{heavy_io, read_json, run, stderr};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");
const MIB: u64 = 1 << 20;
const CAP: f64 = 200.0;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn sh(cmd: &mut Command) {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?}: {}", stderr(&o));
}

#[test]
fn a_capped_target_on_one_host_is_named_with_its_host_and_path() {
    let _heavy = heavy_io();
    let test = "a_capped_target_on_one_host_is_named_with_its_host_and_path";
    let Some(slow) =
        volume::create_or_skip(test, VolumeSpec::new(64 * MIB).ext4().read_iops(CAP as u64))
    else {
        return;
    };
    let Some(mnt) = slow.mountpoint.clone() else {
        panic!("an ext4 volume has a mount point");
    };
    // h1's second target is a directory on the capped file system, bound
    // onto the path the template gives it; everything else sits on the
    // (uncapped) disk. Mounted before the hosts start: each host's sshd
    // gets a copy of this machine's mounts when it starts, and / is private
    // here, so later mounts would not reach it.
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("vols");
    let capped = mnt.join("set");
    std::fs::create_dir_all(&capped).unwrap();
    for h in ["h1", "h2"] {
        for t in ["t0", "t1"] {
            std::fs::create_dir_all(base.join(h).join(t)).unwrap();
        }
    }
    let bound = base.join("h1/t1");
    sh(Command::new("mount").arg("--bind").arg(&capped).arg(&bound));
    let _unbind = Unbind(bound.clone());
    let Some(hosts) = TestHosts::up(test, 2) else {
        return;
    };
    // h1's sshd goes into the volume's cgroup (from here: a namespace's
    // own /sys has no cgroup file system), so its agent starts there. The
    // cap is on the capped device only, so h1's other target runs free.
    for pid in hosts.pids_in(1) {
        std::fs::write(slow.cgroup.join("cgroup.procs"), pid.to_string()).unwrap();
    }
    let out = tmp.path().join("out");
    let template = base.join("{host}/t{0..1}");
    // The timeout turns a hang into a failure rather than a stuck CI job.
    let o = Command::new("timeout")
        .args(["-k", "5", "30", BIN, "run", "--hosts", &hosts.list()])
        .args(["--ssh-command", &hosts.ssh_command()])
        .args(["--remote-volbench", BIN])
        .args(["--target", s(&template), "--output", s(&out)])
        .args(["--rw", "randread", "--bs", "4k", "--direct"])
        .args(["--engine", "psync", "--threads", "2", "--size", "16m"])
        .args(["--duration", "2s", "--warmup", "500ms"])
        .args([
            "--session",
            &format!("vbtest-targets-{}", std::process::id()),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let r0 = &doc["runs"][0];
    let ts = r0["targets"].as_array().expect("runs[].targets");
    assert_eq!(ts.len(), 4, "{ts:#?}");
    let capped_path = s(&bound);
    for t in ts {
        let host = t["host"].as_str().unwrap();
        let path = t["path"].as_str().unwrap();
        assert!(path.starts_with(s(&base.join(host))), "{t}");
        let iops = f(&t["read"]["iops"]);
        if path == capped_path {
            assert!(
                (iops - CAP).abs() / CAP < 0.15,
                "capped target: {iops} IOPS, cap {CAP}"
            );
        } else {
            assert!(
                iops > 5.0 * CAP,
                "uncapped target {path} on {host}: {iops} IOPS"
            );
        }
        // Its rate is its own count over its own window.
        let (ops, secs) = (f(&t["read"]["ops"]), f(&t["duration_s"]));
        assert!((iops - ops / secs).abs() < 1e-6 * iops, "{t}");
    }
    // Each host's targets add up to that host's totals, all to the run's.
    for h in doc["cluster"]["hosts"].as_array().unwrap() {
        let sum: u64 = ts
            .iter()
            .filter(|t| t["host"] == h["name"])
            .map(|t| t["read"]["ops"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, h["runs"][0]["totals"]["read"]["ops"].as_u64().unwrap());
    }
    let sum: u64 = ts.iter().map(|t| t["read"]["ops"].as_u64().unwrap()).sum();
    assert_eq!(sum, r0["totals"]["read"]["ops"].as_u64().unwrap());
    // The diagnosis names that host and path, and nothing else as slow.
    let slow: Vec<&str> = doc["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "slow_target")
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert!(
        slow[0].starts_with(&format!("slow target: {capped_path} on h1 did")),
        "{}",
        slow[0]
    );
    // The report shows the per-target table, the capped target's row in it.
    let o = run(&["report", s(&out), "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("Per target"), "{md}");
    let row = format!("| h1 | {capped_path} | 2 |");
    assert!(md.contains(&row), "no row {row} in {md}");
}

/// Unmounts the bind mount when the test ends, however it ends.
struct Unbind(std::path::PathBuf);

impl Drop for Unbind {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}
