//! The diagnosis read against what real runs looked like (the audit in
//! issue 12): each test is a shape a healthy or a limited run really had on
//! this machine, rebuilt as a synthetic result, with what a storage admin
//! would say about it. The false alarms first, then the limits missed.

use volbench::report::fixtures::{self, RunFixture};
use volbench::result::ResultDoc;
use volbench::result::diagnosis::{Confidence, Finding, Kind, diagnose};
use volbench::result::expect::Expectation;
use volbench::spec::Pattern;

use crate::counters::{healthy, host_cpu, one_run, with};

const KIB: u64 = 1024;
const MIB: f64 = 1024.0 * 1024.0;

fn kinds(f: &[Finding]) -> Vec<Kind> {
    f.iter().map(|f| f.kind).collect()
}

/// Random reads of one shape at each block size, `conc` in flight as
/// threads x 1, each at the given IOPS with Little's law met.
fn sweep(conc: u32, runs: &[(u64, f64)]) -> ResultDoc {
    let runs: Vec<RunFixture> = runs
        .iter()
        .map(|&(bs, iops)| {
            RunFixture::new(&format!("r{bs}"), Pattern::Randread, 100, bs)
                .conc(conc, 1)
                .perf(iops, f64::from(conc) * 1e6 / iops)
        })
        .collect();
    fixtures::doc("client-1", &runs)
}

#[test]
fn a_run_held_to_a_bandwidth_rate_is_neither_a_cap_nor_a_littles_law_gap() {
    // --rate 20MiB/s at 4, 64 and 256 KiB on a healthy volume: the rate
    // asked for, each I/O done in 200 us, so 2 threads mostly wait.
    let runs: Vec<RunFixture> = [4u64, 64, 256]
        .iter()
        .map(|&k| {
            let iops = 20.0 * MIB / (k * KIB) as f64;
            RunFixture::new(&format!("r{k}k"), Pattern::Randread, 100, k * KIB)
                .conc(2, 1)
                .perf(iops, 200.0)
        })
        .collect();
    let mut doc = fixtures::doc("client-1", &runs);
    // Read as closed loop, the I/Os were out of flight 99% of the time:
    // the level was set outside the I/O (the verdict asks the client
    // first), so no cap of the storage is named.
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::LittlesLawGap], "{f:#?}");
    for r in &mut doc.runs {
        r.workload.shape.rate_bytes = Some(20.0 * MIB);
    }
    let f = diagnose(&doc);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn think_time_and_syncs_keep_ios_out_of_flight_by_design() {
    // 16 in flight, IOPS x latency 4: a gap, unless the workload paused.
    let gap = || {
        fixtures::doc(
            "h",
            &[RunFixture::new("r", Pattern::Randwrite, 0, 4096)
                .conc(4, 4)
                .perf(4000.0, 1000.0)],
        )
    };
    assert_eq!(kinds(&diagnose(&gap())), vec![Kind::LittlesLawGap]);
    let mut doc = gap();
    doc.runs[0].workload.shape.think_time_s = Some(0.003);
    assert!(diagnose(&doc).is_empty());
    let mut doc = gap();
    doc.runs[0].workload.shape.fsync_every = Some(8);
    assert!(diagnose(&doc).is_empty());
}

/// Makes `doc`'s run a metadata run of stat operations (its own totals as
/// the operation's), the way result.json records one.
fn as_stat_run(doc: &mut ResultDoc) {
    let r = &doc.runs[0];
    let op = serde_json::json!([{
        "op": "stat",
        "totals": r.totals.read,
        "histogram": r.histograms.read,
    }]);
    doc.runs[0].meta_ops = serde_json::from_value(op).expect("a stat operation");
}

#[test]
fn metadata_served_from_the_clients_caches_is_no_littles_law_gap() {
    // 8 threads, 912,000 stats/s at 1.5 us each: IOPS x latency 1.4.
    let mut doc = fixtures::doc(
        "h",
        &[RunFixture::new("meta-stat", Pattern::Randread, 100, 4096)
            .conc(8, 1)
            .perf(912_000.0, 1.5)],
    );
    assert_eq!(kinds(&diagnose(&doc)), vec![Kind::LittlesLawGap]);
    as_stat_run(&mut doc);
    let f = diagnose(&doc);
    assert!(f.is_empty(), "{f:#?}");
    // Operations of 2 ms (an NFS server) short of Little's law still are.
    let mut doc = fixtures::doc(
        "h",
        &[RunFixture::new("meta-stat", Pattern::Randread, 100, 4096)
            .conc(8, 1)
            .perf(1000.0, 2000.0)],
    );
    as_stat_run(&mut doc);
    assert_eq!(kinds(&diagnose(&doc)), vec![Kind::LittlesLawGap]);
}

#[test]
fn level_figures_any_device_gives_are_no_cap() {
    // A healthy loop device: IOPS level from 512 B to 4 KiB (the cost of a
    // request, not of its bytes).
    let doc = sweep(
        4,
        &[
            (512, 36_196.0),
            (KIB, 37_816.0),
            (2 * KIB, 37_531.0),
            (4 * KIB, 37_638.0),
        ],
    );
    let f = diagnose(&doc);
    assert!(f.is_empty(), "{f:#?}");
    // MiB/s level from 256 KiB to 4 MiB: the device streaming at its top.
    let doc = sweep(
        4,
        &[
            (256 * KIB, 4193.0),
            (1024 * KIB, 1023.0),
            (4096 * KIB, 269.5),
        ],
    );
    let f = diagnose(&doc);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn a_healthy_sweep_with_noisy_small_sizes_names_no_cap() {
    // Beside a compiler: 4 and 16 KiB within 10% of each other by chance,
    // the larger sizes falling as they should.
    let doc = sweep(
        4,
        &[
            (4 * KIB, 17_396.0),
            (16 * KIB, 21_143.0),
            (64 * KIB, 13_420.0),
            (256 * KIB, 4_328.0),
            (1024 * KIB, 1_048.0),
        ],
    );
    let f = diagnose(&doc);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn the_page_cache_level_on_a_busy_client_is_no_cap() {
    // 1,661 / 1,554 / 1,622 MiB/s at 4, 8 and 64 KiB through the page
    // cache while the CPUs were busy: level, but memory, not storage.
    let level = || {
        sweep(
            2,
            &[
                (4 * KIB, 1661.0 * 256.0),
                (8 * KIB, 1554.0 * 128.0),
                (64 * KIB, 1622.0 * 16.0),
            ],
        )
    };
    let mut s = healthy();
    s.devices[0].read_mib_s = 0.0;
    let mut doc = with(level(), s, None);
    assert!(kinds(&diagnose(&doc)).contains(&Kind::InferredBandwidthCap));
    // Buffered by the whole job (`--buffered`, the target's direct off),
    // which the runs do not repeat (seen: disk-check --buffered on tmpfs
    // called a bandwidth cap near 7,623 MiB/s).
    let mut job_buffered = doc.clone();
    job_buffered.spec.target.direct = false;
    let f = diagnose(&job_buffered);
    assert!(!kinds(&f).contains(&Kind::InferredBandwidthCap), "{f:#?}");
    // Buffered over a network file system (sshfs, NFS: no block device
    // below), the data came over the wire: a level there is the storage's
    // or the link's, not memory's.
    let mut s = healthy();
    s.devices[0].read_mib_s = 0.0;
    s.net[0].rx_mib_s = 1_600.0;
    let mut wire = with(level(), s, None);
    wire.spec.target.direct = false;
    let f = diagnose(&wire);
    assert!(kinds(&f).contains(&Kind::InferredBandwidthCap), "{f:#?}");
    // ...or by the run's own `direct = false`.
    for r in &mut doc.runs {
        r.workload.buffered = true;
    }
    let f = diagnose(&doc);
    assert!(!kinds(&f).contains(&Kind::InferredBandwidthCap), "{f:#?}");
}

#[test]
fn a_volume_capped_in_iops_and_in_bandwidth_names_both() {
    // 500 IOPS and 20 MiB/s: IOPS level at 4-16 KiB, MiB/s at 64-256 KiB.
    let doc = sweep(
        8,
        &[
            (4 * KIB, 500.0),
            (16 * KIB, 499.0),
            (64 * KIB, 320.0),
            (256 * KIB, 80.0),
        ],
    );
    let f = diagnose(&doc);
    assert_eq!(
        kinds(&f),
        vec![Kind::InferredIopsCap, Kind::InferredBandwidthCap],
        "{f:#?}"
    );
    assert_eq!(f[0].runs, vec!["r4096", "r16384"]);
    assert!((f[0].figures["cap_iops"] - 499.5).abs() < 0.1, "{f:#?}");
    assert_eq!(f[1].runs, vec!["r65536", "r262144"]);
    assert!((f[1].figures["cap_mib_s"] - 20.0).abs() < 0.1, "{f:#?}");
}

#[test]
fn level_iops_with_one_io_in_flight_is_a_doubtful_cap() {
    // A 500-IOPS disk at qd1 and a 2 ms round trip look the same.
    let doc = sweep(1, &[(4 * KIB, 500.0), (16 * KIB, 499.0), (64 * KIB, 500.0)]);
    let f = diagnose(&doc);
    assert_eq!(kinds(&f), vec![Kind::InferredIopsCap], "{f:#?}");
    assert_eq!(f[0].confidence, Confidence::Low);
    assert!(
        f[0].message
            .contains("a run with more threads tells them apart"),
        "{}",
        f[0].message
    );
    // With 8 in flight the same figures are a cap, said as surely as before.
    let f = diagnose(&sweep(
        8,
        &[(4 * KIB, 500.0), (16 * KIB, 499.0), (64 * KIB, 500.0)],
    ));
    assert_eq!(f[0].confidence, Confidence::Medium);
}

#[test]
fn far_below_the_expectation_but_level_is_a_lower_cap_not_too_few_threads() {
    let mut doc = sweep(16, &[(4 * KIB, 627.0), (8 * KIB, 628.0), (64 * KIB, 629.0)]);
    doc.expect = Some(Expectation {
        given: "iops=5000".into(),
        iops: Some(5000.0),
        ..Expectation::default()
    });
    let f = diagnose(&doc);
    let below = f
        .iter()
        .find(|f| f.kind == Kind::BelowExpectedLimit)
        .expect("below");
    assert!(
        below
            .message
            .contains("level at 628 IOPS across block sizes")
            && below
                .message
                .contains("Check the volume's level, tier or quota")
            && !below.message.contains("add threads"),
        "{}",
        below.message
    );
}

/// A discarded first run and its repeat, 8 KiB random reads.
fn first_and_repeat(first: f64, repeat: f64) -> ResultDoc {
    let run = |name: &str, iops: f64| {
        RunFixture::new(name, Pattern::Randread, 100, 8192)
            .conc(8, 8)
            .perf(iops, 64.0 * 1e6 / iops)
    };
    let mut doc = fixtures::doc("h", &[run("warmup-run", first), run("8k", repeat)]);
    doc.runs[0].workload.discard = true;
    doc
}

#[test]
fn a_first_run_that_slowed_down_was_not_warming_up() {
    // Seen beside a compiler: 56,662 -> 47,671 -> 32,934 IOPS, then a
    // repeat at 55,000: the first run fell, it did not start slow.
    let mut doc = first_and_repeat(40_000.0, 55_000.0);
    assert_eq!(kinds(&diagnose(&doc)), vec![Kind::WarmUp]);
    let n = doc.runs[0].intervals.len();
    for (i, iv) in doc.runs[0].intervals.iter_mut().enumerate() {
        iv.read.iops = 56_000.0 - 24_000.0 * i as f64 / (n - 1) as f64;
    }
    let f = diagnose(&doc);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn a_warm_up_through_the_page_cache_says_the_repeat_read_memory() {
    let mut doc = first_and_repeat(20_000.0, 900_000.0);
    for r in &mut doc.runs {
        r.workload.buffered = true;
    }
    let f = diagnose(&doc);
    let w = f.iter().find(|f| f.kind == Kind::WarmUp).expect("warm_up");
    assert!(
        w.message.contains("the repeat read from memory") && w.message.contains("direct I/O"),
        "{}",
        w.message
    );
}

fn cpu_of(doc: &ResultDoc) -> Option<Finding> {
    diagnose(doc)
        .into_iter()
        .find(|f| f.kind == Kind::ClientCpu)
}

#[test]
fn a_thread_on_its_core_is_no_finding_when_the_counts_disagree_or_are_too_short() {
    // One I/O thread at 95% of a core, the host (4 CPUs) 35% busy: agrees.
    let thread_on_core = || {
        let mut doc = with(one_run(20_000.0), healthy(), None);
        doc.runs[0].io_threads = 1;
        doc.runs[0].totals.cpu.user_pct = 20.0;
        doc.runs[0].totals.cpu.sys_pct = 75.0;
        doc
    };
    let f = cpu_of(&thread_on_core()).expect("core-bound");
    assert!(f.message.contains("core-bound"), "{}", f.message);
    // Measured for 20 ms: the CPU ticks cannot tell.
    let mut doc = thread_on_core();
    for p in &mut doc.runs[0].phases {
        p.duration_s = 0.02;
    }
    assert_eq!(cpu_of(&doc), None);
    // The host saw 20% of one CPU busy while the thread claims 95%.
    let mut s = healthy();
    s.cpu = host_cpu(2.0, 3.0);
    let mut doc = with(one_run(20_000.0), s, None);
    doc.runs[0].io_threads = 1;
    doc.runs[0].totals.cpu.sys_pct = 95.0;
    assert_eq!(cpu_of(&doc), None);
    // Through the page cache, a thread on its core is what the run is.
    let mut doc = thread_on_core();
    doc.runs[0].workload.buffered = true;
    assert_eq!(cpu_of(&doc), None);
}

#[test]
fn a_host_busy_with_other_work_or_stolen_from_is_said_as_such() {
    // 4 CPUs 98% busy, volbench 20% of one of them: someone else's load.
    let mut s = healthy();
    s.cpu = host_cpu(70.0, 28.0);
    let mut doc = with(one_run(20_000.0), s, None);
    doc.runs[0].totals.cpu.sys_pct = 20.0;
    let f = cpu_of(&doc).expect("client_cpu");
    assert_eq!(f.confidence, Confidence::Low);
    assert!(
        f.message.contains("busy with other work") && !f.message.contains("CPU-bound"),
        "{}",
        f.message
    );
    // Mostly steal: the VM's CPU went to the hypervisor.
    let mut s = healthy();
    s.cpu = host_cpu(20.0, 15.0);
    if let Some(c) = &mut s.cpu {
        c.steal_pct = 60.0;
        c.idle_pct = 5.0;
    }
    let mut doc = with(one_run(20_000.0), s, None);
    doc.runs[0].totals.cpu.user_pct = 80.0;
    doc.runs[0].totals.cpu.sys_pct = 60.0;
    let f = cpu_of(&doc).expect("client_cpu");
    assert_eq!(f.confidence, Confidence::Medium);
    assert!(
        f.message.contains("60% of it steal") && f.message.contains("dedicated VM"),
        "{}",
        f.message
    );
}
