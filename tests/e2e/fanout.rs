//! Launching at scale: the bounded launch pool (`--launch-parallel`) and
//! ssh multiplexing (`--ssh-mux`), over real sshd hosts in network
//! namespaces, several agents a machine (ssh_config aliases).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::hosts::{TestHosts, io_running, processes_with, wait_until};
use crate::common::{read_json, stderr, vb, volbench};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

/// An ssh_config where `hI` also answers to `hIa`, `hIb`, ... (`per`
/// aliases), so several agents reach one machine under different names.
fn aliases(h: &TestHosts, per: usize) -> (PathBuf, String) {
    let mut cfg = std::fs::read_to_string(h.ssh_config()).unwrap();
    let mut names = Vec::new();
    for i in 1..=h.n {
        let alias: Vec<String> = (0..per)
            .map(|k| format!("h{i}{}", (b'a' + k as u8) as char))
            .collect();
        cfg = cfg.replace(
            &format!("Host h{i}\n"),
            &format!("Host h{i} {}\n", alias.join(" ")),
        );
        names.extend(alias);
    }
    let path = h.dir.path().join("ssh_config_aliases");
    std::fs::write(&path, cfg).unwrap();
    (path, names.join(","))
}

/// Connections each machine's sshd accepted so far.
fn accepted(h: &TestHosts) -> Vec<usize> {
    (1..=h.n)
        .map(|i| {
            std::fs::read_to_string(h.dir.path().join(format!("sshd_h{i}.log")))
                .unwrap_or_default()
                .matches("Accepted publickey")
                .count()
        })
        .collect()
}

fn run(cfg: &Path, hosts: &str, tmp: &Path, out: &str, extra: &[&str]) -> Command {
    let mut c = volbench();
    c.args(["run", "--hosts", hosts])
        .arg("--ssh-command")
        .arg(format!("ssh -F {}", cfg.display()))
        .arg("--target")
        .arg(tmp.join("{host}"))
        .arg("--output")
        .arg(tmp.join(out))
        .args(["--engine", "null", "--rate", "2000"])
        .args(["--remote-volbench", BIN])
        .args(extra)
        // The masters' sockets go under TMPDIR: here, where the test can
        // look for them.
        .env("TMPDIR", tmp);
    if !extra.contains(&"--duration") {
        c.args(["--duration", "1s"]);
    }
    c
}

fn ops(run: &Value, op: &str) -> u64 {
    run["totals"][op]["ops"].as_u64().unwrap()
}

/// Every host ok, and the merge is the hosts' figures added: operations,
/// bytes, and the merged histogram's count.
fn assert_exact_merge(doc: &Value, n: usize) {
    let hosts = doc["cluster"]["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), n);
    for h in hosts {
        assert_eq!(h["status"], "ok", "{h}");
    }
    let run = &doc["runs"][0];
    let sum: u64 = hosts.iter().map(|h| ops(&h["runs"][0], "read")).sum();
    assert!(sum > 0);
    assert_eq!(ops(run, "read"), sum);
    let bytes: u64 = hosts
        .iter()
        .map(|h| h["runs"][0]["totals"]["read"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(run["totals"]["read"]["bytes"].as_u64().unwrap(), bytes);
    let counted = crate::common::histogram_count(run, "read");
    assert_eq!(counted, sum);
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

#[test]
fn agents_on_one_machine_share_an_ssh_master_and_none_outlives_the_run() {
    let Some(h) = TestHosts::up("fanout_mux", 2) else {
        return;
    };
    let (cfg, names) = aliases(&h, 3);
    let tmp = tempfile::tempdir().unwrap();

    let before = accepted(&h);
    let o = run(&cfg, &names, tmp.path(), "mux", &["--rw", "randread"])
        .output()
        .unwrap();
    ok(&o);
    let with_mux = accepted(&h);
    let doc = read_json(&tmp.path().join("mux/result.json"));
    assert_exact_merge(&doc, 6);
    // One connection a machine carried its three agents.
    for i in 0..h.n {
        assert_eq!(with_mux[i] - before[i], 1, "h{}: {with_mux:?}", i + 1);
    }
    assert!(
        stderr(&o).contains("2 ssh masters for 6 agents"),
        "{}",
        stderr(&o)
    );
    // The masters were told to exit; nothing with our sockets lingers.
    let tag = tmp.path().to_string_lossy().into_owned();
    assert!(
        wait_until(Duration::from_secs(10), || processes_with(&tag, None)
            .is_empty()),
        "{:?}",
        processes_with(&tag, None)
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("vb-mux-"))
        .collect();
    assert!(left.is_empty(), "socket directory left: {left:?}");

    // The flat way, two launches at a time: the same merge, one
    // connection an agent.
    let o = run(
        &cfg,
        &names,
        tmp.path(),
        "flat",
        &[
            "--rw",
            "randread",
            "--ssh-mux",
            "off",
            "--launch-parallel",
            "2",
        ],
    )
    .output()
    .unwrap();
    ok(&o);
    let flat = accepted(&h);
    assert_exact_merge(&read_json(&tmp.path().join("flat/result.json")), 6);
    for i in 0..h.n {
        assert_eq!(flat[i] - with_mux[i], 3, "h{}: {flat:?}", i + 1);
    }
}

/// Ctrl-C in the middle of a multiplexed run: the merge of what was
/// measured is kept, and the masters end with the run.
#[test]
fn ctrl_c_on_a_multiplexed_run_keeps_the_results_and_ends_the_masters() {
    let Some(h) = TestHosts::up("fanout_mux_ctrl_c", 1) else {
        return;
    };
    let (cfg, names) = aliases(&h, 3);
    let tmp = tempfile::tempdir().unwrap();
    let tag = format!("vbfan-ctrlc-{}", std::process::id());
    let extra = [
        "--rw",
        "randread",
        "--duration",
        "60s",
        "--warmup",
        "0s",
        "--session",
        &tag,
    ];
    let mut c = run(&cfg, &names, tmp.path(), "out", &extra);
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut coord = c.spawn().unwrap();
    let started = wait_until(Duration::from_secs(60), || {
        processes_with(&tag, Some(coord.id()))
            .iter()
            .filter(|(pid, _)| io_running(*pid))
            .count()
            == 3
    });
    assert!(started, "the three agents never ran");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(coord.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let mut status = None;
    assert!(wait_until(Duration::from_secs(20), || {
        status = coord.try_wait().unwrap();
        status.is_some()
    }));
    assert_eq!(status.unwrap().code(), Some(130));
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_eq!(doc["interrupted"], true);
    assert_exact_merge(&doc, 3);
    let path = tmp.path().to_string_lossy().into_owned();
    assert!(
        wait_until(Duration::from_secs(10), || processes_with(&path, None)
            .is_empty()),
        "{:?}",
        processes_with(&path, None)
    );
    assert!(
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().starts_with("vb-mux-")),
        "socket directory left"
    );
}

#[test]
fn launch_parallel_and_ssh_mux_are_checked_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    for (flag, value, want) in [
        ("--launch-parallel", "0", "from 1 to 1024"),
        ("--launch-parallel", "1025", "from 1 to 1024"),
        ("--launch-parallel", "-3", "from 1 to 1024"),
        ("--ssh-mux", "maybe", "possible values"),
    ] {
        let o = vb(["run", "--hosts", "a,b", "--engine", "null"])
            .arg("--target")
            .arg(tmp.path().join("{host}"))
            .args([flag, value])
            .expect(2);
        assert!(stderr(&o).contains(want), "{flag} {value}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    // --dry-run says what start-up will hold at once.
    let dry = |extra: &[&str]| {
        let o = vb(["run", "--hosts", "a,b", "--engine", "null", "--dry-run"])
            .arg("--target")
            .arg(tmp.path().join("{host}"))
            .args(extra)
            .expect(0);
        crate::common::stdout(&o)
    };
    let out = dry(&["--launch-parallel", "7"]);
    assert!(
        out.contains("launch:   7 at a time (--launch-parallel); ssh multiplexing on"),
        "{out}"
    );
    let out = dry(&["--ssh-mux", "off"]);
    assert!(out.contains("launch:   32 at a time"), "{out}");
    assert!(!out.contains("multiplexing"), "{out}");
    let out = dry(&["--launcher", "ip netns exec {host}"]);
    assert!(!out.contains("multiplexing"), "not ssh: {out}");
}

/// CPU of everything started in a cpuacct cgroup of its own (volbench, its
/// ssh clients, and the masters, which fork away but stay in the group).
fn in_cgroup(mut c: Command, name: &str) -> (Output, f64, usize) {
    let dir = PathBuf::from(format!("/sys/fs/cgroup/cpuacct/{name}"));
    std::fs::create_dir(&dir).unwrap();
    let procs = dir.join("cgroup.procs");
    // The child joins the group before it execs volbench.
    let c = unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, move || {
            std::fs::write(&procs, std::process::id().to_string())
        })
    };
    let mut child = c
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        let n = processes_with("ssh_config_aliases", None)
            .iter()
            .filter(|(_, c)| c.starts_with("ssh "))
            .count();
        peak = peak.max(n);
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    // Masters may still be exiting: the group is read once empty.
    wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap()
            .trim()
            .is_empty()
    });
    let ns: f64 = std::fs::read_to_string(dir.join("cpuacct.usage"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::remove_dir(&dir).unwrap();
    (o, ns / 1e9, peak)
}

/// Not a check: the figures for docs/guide/many-hosts.md. 4 machines x 4
/// agents, multiplexed and flat, alternating, 3 rounds each:
/// `cargo test --test e2e fanout::measure -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_mux_against_flat() {
    let Some(h) = TestHosts::up("measure_mux_against_flat", 4) else {
        return;
    };
    let (cfg, names) = aliases(&h, 4);
    let tmp = tempfile::tempdir().unwrap();
    for round in 0..3 {
        for (mode, extra) in [
            ("mux", &["--ssh-mux", "on"][..]),
            (
                "flat",
                &["--ssh-mux", "off", "--launch-parallel", "1024"][..],
            ),
        ] {
            let out = format!("{mode}{round}");
            let t = Instant::now();
            let c = run(&cfg, &names, tmp.path(), &out, extra);
            let before = accepted(&h).iter().sum::<usize>();
            let name = format!("vbfan-{}-{out}", std::process::id());
            let (o, cpu, peak) = in_cgroup(c, &name);
            ok(&o);
            let conns = accepted(&h).iter().sum::<usize>() - before;
            let doc = read_json(&tmp.path().join(format!("{out}/result.json")));
            assert_exact_merge(&doc, 16);
            let co = &doc["cluster"]["coordinator"];
            println!(
                "{mode:4} round {round}: launch {:.3}s, wall {:.2}s, coordinator-side CPU {cpu:.3}s \
                 (volbench {:.3}s), ssh processes at peak {peak}, TCP connections {conns}",
                co["launch_s"].as_f64().unwrap(),
                t.elapsed().as_secs_f64(),
                co["user_s"].as_f64().unwrap() + co["sys_s"].as_f64().unwrap(),
            );
        }
    }
}

/// A fleet-sized mistake costs a bounded moment and one clear line, before
/// anything is started: 100,000 hosts (a Slurm list, a hosts file, a
/// command's output), a host named twice, a 1 GiB hosts file.
#[test]
fn huge_or_repeated_host_lists_are_refused_at_a_bounded_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let many = tmp.path().join("many.txt");
    let lines: String = (0..100_000).map(|i| format!("h{i}\n")).collect();
    std::fs::write(&many, &lines).unwrap();
    let big = tmp.path().join("big.txt");
    // Sparse: a 1 GiB file that costs no disk.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let many_s = many.to_string_lossy().into_owned();
    let big_s = big.to_string_lossy().into_owned();
    let from = format!("sh -c 'cat {many_s}'");
    let cases: [(&[&str], &str); 5] = [
        (&["--hosts", "h[0-99999]"], "at most 1024"),
        (&["--hosts-file", &many_s], "more than 1024 hosts"),
        (&["--hosts-from", &from], "more than 1024 hosts"),
        (&["--hosts", "vm1,vm2,vm1"], "host 'vm1' is listed twice"),
        (&["--hosts-file", &big_s], "at most 1MiB"),
    ];
    let target = tmp.path().join("t").join("{host}");
    for (args, want) in cases {
        let t = Instant::now();
        let o = vb([
            "run",
            "--engine",
            "null",
            "--launcher",
            "ip netns exec {host}",
        ])
        .args(args)
        .arg("--target")
        .arg(&target)
        .expect(2);
        let e = stderr(&o);
        assert!(e.contains(want), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{args:?}: one line: {e}");
        // Generous for a loaded machine: the point is no quadratic work
        // and no reading of the whole gigabyte.
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{args:?}: {:?}",
            t.elapsed()
        );
    }
    assert!(!tmp.path().join("t").exists(), "nothing was made");
}
