//! Host-count sweeps: `flat_with_hosts` on synthetic sweeps with known
//! answers (fires on flat, silent on linear, on noisy-but-growing and on a
//! single point), and `--host-counts` end to end on namespace hosts sharing
//! one throttled device.

use volbench::report::fixtures;
use volbench::result::diagnosis::{Confidence, Finding, Kind, diagnose};

fn flat(doc: &volbench::result::ResultDoc) -> Vec<Finding> {
    diagnose(doc)
        .into_iter()
        .filter(|f| f.kind == Kind::FlatWithHosts)
        .collect()
}

/// 1,600 IOPS of 64 KiB is 100 MiB/s.
const HUNDRED_MIB_S: f64 = 1600.0;

#[test]
fn flat_aggregate_with_idle_nics_names_a_shared_limit_surely() {
    let h = HUNDRED_MIB_S;
    // 100 MiB/s on one host, 100 on two, 101 on four; each NIC moving
    // its share, far below a 10 Gbit/s link.
    let doc = fixtures::host_sweep(
        &[&[h], &[h / 2.0, h / 2.0], &[h * 0.2525; 4]],
        Some((50.0, Some(10_000.0))),
    );
    let f = flat(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    let f = &f[0];
    assert_eq!(f.confidence, Confidence::High, "{}", f.message);
    assert!(f.message.contains("not their NICs"), "{}", f.message);
    assert!(f.message.contains("volume or service"), "{}", f.message);
    assert_eq!(f.figures["hosts_from"], 1.0);
    assert_eq!(f.figures["hosts_to"], 4.0);
    assert!(
        (f.figures["value_from"] - 100.0).abs() < 0.5,
        "{:?}",
        f.figures
    );
    assert_eq!(
        f.runs,
        ["seq-read-hosts1", "seq-read-hosts2", "seq-read-hosts4"]
    );
}

#[test]
fn flat_aggregate_with_every_nic_at_its_link_names_the_client_nics() {
    let h = HUNDRED_MIB_S;
    // Each host's interface at 99% of a 800 Mbit/s link (95.4 MiB/s).
    let doc = fixtures::host_sweep(&[&[h], &[h * 0.55, h * 0.55]], Some((94.5, Some(800.0))));
    let f = flat(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].message.contains("clients' NICs"), "{}", f[0].message);
    assert_eq!(f[0].confidence, Confidence::Medium);
}

#[test]
fn scaling_that_stops_is_named_from_where_it_stopped() {
    let h = HUNDRED_MIB_S;
    let doc = fixtures::host_sweep(&[&[h], &[h, h], &[h / 2.0; 4]], None);
    let f = flat(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].figures["hosts_from"], 2.0);
    assert_eq!(f[0].runs, ["seq-read-hosts2", "seq-read-hosts4"]);
    // Without interface counters the clients' NICs are not ruled out.
    assert!(
        f[0].message.contains("no interface counters"),
        "{}",
        f[0].message
    );
    assert_eq!(f[0].confidence, Confidence::Medium);
}

#[test]
fn linear_noisy_growing_or_single_point_sweeps_are_not_flat() {
    let h = HUNDRED_MIB_S;
    let nic = Some((50.0, Some(10_000.0)));
    for (what, points) in [
        ("linear", vec![vec![h], vec![h, h], vec![h; 4]]),
        (
            "noisy but growing",
            vec![
                vec![h],
                vec![h * 0.85, h * 0.95],
                vec![h * 0.8, h * 0.7, h * 0.65, h * 0.9],
            ],
        ),
        ("one point", vec![vec![h, h]]),
        // Two hosts are not twice three: no doubling to judge.
        ("less than double", vec![vec![h, h], vec![h * 0.7; 3]]),
    ] {
        let refs: Vec<&[f64]> = points.iter().map(|p| p.as_slice()).collect();
        let doc = fixtures::host_sweep(&refs, nic);
        assert!(flat(&doc).is_empty(), "{what}: {:?}", flat(&doc));
    }
}

/// Two hosts reading one cgroup-throttled volume (8 MiB/s of reads in
/// all), each in its own directory on it: one host reaches the cap and two
/// share it, so the sweep is flat and the finder names a limit the hosts
/// share. The hosts are agents on this machine behind a stand-in ssh, not
/// `common::hosts` namespaces: those agents start under sshd in `ip netns
/// exec`'s own /sys, where the cgroup mount is absent, so they could not
/// join the cap (they read 700+ MiB/s when tried). Healthy scaling is
/// tested on the synthetic sweeps above only: two agents and the
/// coordinator on this 2-core machine cannot show a clean doubling.
#[test]
fn two_hosts_on_one_throttled_volume_are_flat_and_name_a_shared_limit() {
    const TEST: &str = "two_hosts_on_one_throttled_volume_are_flat";
    const MIB: u64 = 1 << 20;
    let _one = crate::common::heavy_io();
    let spec = crate::common::volume::VolumeSpec::new(96 * MIB)
        .read_bps(8 * MIB)
        .ext4();
    let Some(vol) = crate::common::volume::create_or_skip(TEST, spec) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The hosts are reached through a stand-in for ssh that runs the agent
    // here (as `multihost` does), started from inside the volume's cgroup:
    // every agent inherits it, so both hosts' reads count against one cap.
    let ssh = r#"sh -c 'exec sh -c "$2"' fake"#;
    let mount = vol.mountpoint.clone().unwrap();
    let out = tmp.path().join("out");
    let o = vol
        .volbench()
        .args(["run", "--hosts", "h1,h2", "--ssh-command", ssh])
        .arg("--remote-volbench")
        .arg(env!("CARGO_BIN_EXE_volbench"))
        .arg("--target")
        .arg(mount.join("{host}"))
        .arg("--output")
        .arg(&out)
        .args([
            "--host-counts",
            "1,2",
            "--rw",
            "read",
            "--bs",
            "64k",
            // 16 x 64 KiB is 125 ms of the 8 MiB/s cap's work queued: a
            // host's thread waiting for a CPU on a busy machine leaves the
            // device busy, so one host alone reaches the cap (at 4 in
            // flight, 31 ms, one host read 6.6 MiB/s beside two compilers
            // and the "flat" check failed for the machine's sake).
            "--iodepth",
            "16",
            "--size",
            "16m",
            "--warmup",
            "500ms",
            "--duration",
            "1500ms",
            "--interval",
            "250ms",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    let doc = crate::common::read_json(&out.join("result.json"));
    let runs = doc["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].ends_with("-hosts1") && names[1].ends_with("-hosts2"),
        "{names:?}"
    );
    assert_eq!(runs[0]["workload"]["host_count"], 1);
    assert_eq!(runs[1]["workload"]["host_count"], 2);
    // The one-host point ran on h1 alone; h2 was connected and idle.
    let hosts = doc["cluster"]["hosts"].as_array().unwrap();
    let per_host: Vec<usize> = hosts
        .iter()
        .map(|x| x["runs"].as_array().map_or(0, |r| r.len()))
        .collect();
    assert_eq!(per_host, [2, 1], "{hosts:#?}");
    let mib_s = |r: &serde_json::Value| {
        r["totals"]["read"]["mib_s"].as_f64().unwrap()
            + r["totals"]["write"]["mib_s"].as_f64().unwrap()
    };
    let (one, two) = (mib_s(&runs[0]), mib_s(&runs[1]));
    assert!(one < 8.0 * 1.25, "one host is held by the cap: {one} MiB/s");
    assert!(
        two < one * 1.15,
        "one host {one} MiB/s, two hosts {two} MiB/s"
    );
    let f: Vec<&serde_json::Value> = doc["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "flat_with_hosts")
        .collect();
    assert_eq!(f.len(), 1, "{:#}", doc["diagnosis"]);
    let m = f[0]["message"].as_str().unwrap();
    assert!(m.contains("volume or service"), "{m}");
    assert_eq!(f[0]["figures"]["hosts_to"], 2.0, "{:#}", f[0]);
    eprintln!("{TEST}: {one:.2} -> {two:.2} MiB/s; {m}");
}

/// The report of a sweep has the host-count table (Markdown) and chart
/// (HTML); `compare` over results each on its own number of hosts pairs
/// them by host count and runs the finder across them.
#[test]
fn report_and_compare_show_the_scaling_by_host_count() {
    let h = HUNDRED_MIB_S;
    let tmp = tempfile::tempdir().unwrap();
    let sweep = crate::common::write_result(
        &tmp.path().join("sweep"),
        &fixtures::host_sweep(&[&[h], &[h / 2.0, h / 2.0]], None),
    );
    let run = |args: &[&std::ffi::OsStr]| crate::common::volbench().args(args).output().unwrap();
    let o = run(&[
        "report".as_ref(),
        sweep.as_os_str(),
        "--format".as_ref(),
        "md".as_ref(),
    ]);
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    let md = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(md.contains("Host counts"), "{md}");
    assert!(md.contains("| seq-read-hosts2 | 2 |"), "{md}");
    let page = tmp.path().join("page.html");
    let o = run(&[
        "report".as_ref(),
        sweep.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("against host count"), "no host-count chart");
    // Two results, one host and two hosts, one run each.
    let one = crate::common::write_result(
        &tmp.path().join("one"),
        &fixtures::host_sweep(&[&[h]], None),
    );
    let two = crate::common::write_result(
        &tmp.path().join("two"),
        &fixtures::host_sweep(&[&[h / 2.0, h / 2.0]], None),
    );
    let cmp = tmp.path().join("cmp.html");
    let o = run(&[
        "compare".as_ref(),
        one.as_os_str(),
        two.as_os_str(),
        "-o".as_ref(),
        cmp.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    let html = std::fs::read_to_string(&cmp).unwrap();
    assert!(html.contains("Host counts"), "no host-count section");
    assert!(html.contains("flat as hosts are added"), "no finding");
}

/// Every malformed host-count sweep is one line and exit 2 before any
/// host is reached (the hosts here do not exist, so reaching one would
/// fail differently).
#[test]
fn bad_host_counts_are_refused_before_any_host_is_reached() {
    use volbench::error::exit;
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("{host}");
    let t = target.to_str().unwrap();
    for (hosts, counts, says) in [
        (None, "1,2", "--host-counts sweeps over several hosts"),
        (Some("a"), "1", "needs several hosts, and 1 is listed"),
        (
            Some("a,b"),
            "1,3",
            "3 hosts asked for, but only 2 are listed",
        ),
        (Some("a,b"), "0,2", "--host-counts 0 is outside 1..1024"),
        (Some("a,b"), "2,2", "2 is given twice"),
        (Some("a,b"), "1.5", "is not a whole number"),
    ] {
        let mut c = crate::common::volbench();
        c.args([
            "run",
            "--target",
            t,
            "--host-counts",
            counts,
            "--duration",
            "1s",
        ]);
        if let Some(h) = hosts {
            c.args(["--hosts", h, "--ssh-command", "/nonexistent/ssh"]);
        }
        let o = c.output().unwrap();
        let err = crate::common::stderr(&o);
        assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{counts}: {err}");
        assert!(err.contains(says), "{counts}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // The suite key, without hosts.
    let suite = tmp.path().join("s.toml");
    std::fs::write(
        &suite,
        "name = \"s\"\ntable = \"patterns\"\nhost_counts = [1, 2]\n[[run]]\nname = \"r\"\n",
    )
    .unwrap();
    let o = crate::common::volbench()
        .args(["suite", "run"])
        .arg(&suite)
        .args(["--target", t])
        .output()
        .unwrap();
    let err = crate::common::stderr(&o);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{err}");
    assert!(
        err.contains("host_counts sweeps over several hosts"),
        "{err}"
    );
    // A result read back whose run claims more hosts than it names.
    let mut doc = fixtures::host_sweep(&[&[HUNDRED_MIB_S], &[800.0, 800.0]], None);
    doc.runs[1].workload.host_count = Some(5);
    let dir = crate::common::write_result(&tmp.path().join("bad"), &doc);
    let o = crate::common::volbench()
        .arg("report")
        .arg(&dir)
        .args(["--format", "md"])
        .output()
        .unwrap();
    let err = crate::common::stderr(&o);
    assert_ne!(o.status.code(), Some(exit::OK), "{err}");
    assert!(
        err.contains("host_count 5, but the result names 2 hosts"),
        "{err}"
    );
}
