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
