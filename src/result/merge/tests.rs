//! The merge of runs and intervals held to one result of all their operations, and the
//! refusals of what an agent could lie about.

use super::*;
use crate::spec::EngineKind;
use crate::spec::{BlockSize, Pattern};
use crate::stats::OpStats;

fn spec() -> RunSpec {
    RunSpec {
        name: "r".into(),
        rw: Pattern::Randrw,
        read_pct: 70,
        bs: vec![BlockSize {
            bytes: 4096,
            weight: 1,
        }],
        threads: 2,
        iodepth: 1,
        warmup_s: 0.0,
        duration_s: 10.0,
        ..RunSpec::default()
    }
}

fn result(seed: u64, n: usize, secs: f64) -> (RunResult, OpStats, OpStats) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut r, mut w) = (OpStats::new(), OpStats::new());
    for _ in 0..n {
        let lat = if rng.u32(0..100) < 97 {
            rng.u64(20_000..300_000)
        } else {
            rng.u64(1_000_000..9_000_000)
        };
        if rng.u32(0..100) < 70 {
            r.record(lat, 4096)
        } else {
            w.record(lat, 4096)
        }
    }
    let iv = Interval {
        t_s: secs,
        duration_s: secs,
        phase: PhaseName::Measure,
        read: IntervalOp::from_delta(r.ops, r.bytes, r.lat_sum_ns as u64, None, secs),
        write: IntervalOp::from_delta(w.ops, w.bytes, w.lat_sum_ns as u64, None, secs),
        meta_ops: Vec::new(),
    };
    let res = RunResult {
        name: "r".into(),
        workload: spec(),
        engine: vec![EngineKind::Psync],
        io_threads: 2,
        depth_per_thread: 1,
        phases: vec![Phase {
            name: PhaseName::Measure,
            start: "2026-01-01T00:00:00.000Z".into(),
            duration_s: secs,
        }],
        totals: Totals {
            read: OpTotals::from_stats(&r, secs),
            write: OpTotals::from_stats(&w, secs),
            cpu: Cpu::default(),
            flush: None,
            discard: None,
        },
        warmup: None,
        intervals: vec![iv],
        histograms: Histograms {
            read: BucketedHistogram::from_histogram(&r.hist),
            write: BucketedHistogram::from_histogram(&w.hist),
        },
        littles_law: LittlesLaw {
            concurrency: 2,
            iops_x_latency: 0.0,
        },
        interrupted: false,
        meta_ops: Vec::new(),
        counters: None,
        data_errors: None,
        targets: Vec::new(),
        stalls: Vec::new(),
        rate: None,
        steady: None,
        replay: None,
        from_intervals: false,
        histograms_left_out: false,
        // One thread did it all: its row is the totals.
        threads: vec![crate::result::threads::ThreadRun::of(0, &r, &w, secs)],
        threads_left_out: 0,
        protocol: None,
        left_out: Vec::new(),
    };
    let mut res = res;
    let (rt, wt) = (&res.totals.read, &res.totals.write);
    res.littles_law.iops_x_latency = (rt.iops * rt.lat_us.mean + wt.iops * wt.lat_us.mean) / 1e6;
    (res, r, w)
}

#[test]
fn merge_equals_one_result_of_all_operations() {
    let (a, ar, aw) = result(1, 40_000, 10.0);
    let (b, br, bw) = result(2, 25_000, 10.0);
    let m = merge_runs(&[&a, &b]).unwrap();
    let mut all_r = ar.clone();
    all_r.merge(&br);
    let mut all_w = aw.clone();
    all_w.merge(&bw);
    let exact = OpTotals::from_stats(&all_r, 10.0);
    assert_eq!(m.totals.read.ops, a.totals.read.ops + b.totals.read.ops);
    assert_eq!(m.totals.read.bytes, exact.bytes);
    assert_eq!(m.totals.write.ops, all_w.ops);
    assert!((m.totals.read.iops - (a.totals.read.iops + b.totals.read.iops)).abs() < 1e-9);
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
    assert!(close(m.totals.read.lat_us.mean, exact.lat_us.mean));
    assert!(close(m.totals.read.lat_us.stddev, exact.lat_us.stddev));
    assert_eq!(m.totals.read.lat_us.p99, exact.lat_us.p99);
    assert_eq!(m.totals.read.lat_us.p50, exact.lat_us.p50);
    assert_eq!(m.totals.read.lat_us.max, exact.lat_us.max);
    assert_eq!(
        m.histograms.read,
        BucketedHistogram::from_histogram(&all_r.hist)
    );
    assert_eq!(m.io_threads, 4);
    // Each part's threads, in order; they add up to the merged totals.
    assert_eq!((m.threads.len(), m.threads_left_out), (2, 0));
    let sums = crate::result::threads::sums(&m.threads).unwrap();
    assert_eq!(sums[0], (m.totals.read.ops, m.totals.read.bytes));
    assert_eq!(sums[1], (m.totals.write.ops, m.totals.write.bytes));
    assert_eq!(m.intervals.len(), 1);
    assert!(close(
        m.intervals[0].read.iops,
        a.intervals[0].read.iops + b.intervals[0].read.iops
    ));
    check_run(&a, &spec()).unwrap();
}

#[test]
fn threads_past_the_bound_are_counted_not_kept() {
    use crate::result::threads::MAX_KEPT_THREADS;
    let (mut a, _, _) = result(4, 1_000, 10.0);
    let row = a.threads[0].clone();
    a.threads = vec![row; MAX_KEPT_THREADS - 10];
    let (mut b, _, _) = result(5, 1_000, 10.0);
    b.threads_left_out = 3;
    b.threads = vec![b.threads[0].clone(); 20];
    let m = merge_runs(&[&a, &b]).unwrap();
    assert_eq!(m.threads.len(), MAX_KEPT_THREADS);
    // 10 of b's 20 kept, the other 10 and the 3 b had left out counted.
    assert_eq!(m.threads_left_out, 13);
}

#[test]
fn hostile_results_are_refused() {
    let (good, _, _) = result(3, 5_000, 10.0);
    type Breaker = Box<dyn Fn(&mut RunResult)>;
    let cases: Vec<(&str, Breaker)> = vec![
        (
            "threads' reads",
            Box::new(|r| {
                r.threads[0].read.ops -= 1;
                r.threads[0].read.bytes -= 4096;
                r.threads[0].read.iops = r.threads[0].read.ops as f64 / 10.0;
                r.threads[0].read.mib_s = r.threads[0].read.bytes as f64 / 1048576.0 / 10.0;
            }),
        ),
        (
            "per-thread rows",
            Box::new(|r| {
                let row = r.threads[0].clone();
                r.threads = vec![row; crate::result::threads::MAX_KEPT_THREADS + 1];
            }),
        ),
        (
            "histogram holds",
            Box::new(|r| {
                r.totals.read.ops += 1;
                r.totals.read.bytes += 4096;
                r.totals.read.iops = r.totals.read.ops as f64 / 10.0;
                r.totals.read.mib_s = r.totals.read.bytes as f64 / 1048576.0 / 10.0;
            }),
        ),
        ("is NaN", Box::new(|r| r.totals.read.iops = f64::NAN)),
        // A tampered figure that is finite but absurd, or merely inflated:
        // each rate must agree with its ops and the measured duration.
        ("IOPS is 1e308", Box::new(|r| r.totals.read.iops = 1e308)),
        ("does not agree", Box::new(|r| r.totals.write.iops *= 1.5)),
        ("does not agree", Box::new(|r| r.totals.read.mib_s *= 3.0)),
        (
            "Little's law",
            Box::new(|r| r.littles_law.iops_x_latency *= 2.0),
        ),
        (
            "intervals holding",
            Box::new(|r| r.intervals[0].read.iops *= 100.0),
        ),
        // An interval's latency histogram fuller than its rate: its 10 s
        // I/Os would outweigh every real one in the interval's p99.
        (
            "a histogram of 100000 I/Os",
            Box::new(|r| {
                let slow =
                    crate::stats::live_hist::bounds(crate::stats::live_hist::index(10_000_000_000));
                r.intervals[0].read.lat_hist = vec![[slow.0, 100_000]];
            }),
        ),
        // Each within its own slack, together a fifth more than the run.
        (
            "latency histograms hold",
            Box::new(|r| {
                let lo = crate::stats::live_hist::bounds(crate::stats::live_hist::index(100_000)).0;
                let iv = &mut r.intervals[0];
                for o in [&mut iv.read, &mut iv.write] {
                    let n = (o.iops * iv.duration_s * 1.2).round() as u64;
                    o.lat_hist = vec![[lo, n]];
                }
            }),
        ),
        (
            "without its histograms",
            Box::new(|r| r.from_intervals = true),
        ),
        (
            "min",
            Box::new(|r| {
                r.totals.read.lat_us.min = r.totals.read.lat_us.max + 1.0;
            }),
        ),
        ("is -1", Box::new(|r| r.totals.write.mib_s = -1.0)),
        ("bytes in", Box::new(|r| r.totals.read.bytes *= 2)),
        ("another run", Box::new(|r| r.workload.threads = 99)),
        (
            "configuration",
            Box::new(|r| r.histograms.read.grouping_power = 3),
        ),
        (
            "out of shape",
            Box::new(|r| {
                let b = r.histograms.write.buckets[0];
                r.histograms.write.buckets.insert(0, b);
                r.histograms.write.buckets[1][2] = 0;
            }),
        ),
        ("I/O threads", Box::new(|r| r.io_threads = 1000)),
        (
            "more than one engine",
            Box::new(|r| r.engine = vec![EngineKind::Psync, EngineKind::Null]),
        ),
        (
            "longer than the run",
            Box::new(|r| r.intervals[0].t_s = 1e12),
        ),
    ];
    for (want, break_it) in cases {
        let mut r = good.clone();
        break_it(&mut r);
        let e = check_run(&r, &spec()).expect_err(want);
        assert!(e.contains(want), "{want}: {e}");
    }
}

#[test]
fn series_merge_keeps_common_positions() {
    let iv = |t: f64, iops: f64, lat: f64| Interval {
        t_s: t,
        duration_s: 1.0,
        phase: PhaseName::Measure,
        read: IntervalOp {
            iops,
            mib_s: iops / 256.0,
            lat_us_mean: lat,
            service_us_mean: None,
            lat_hist: vec![[lat as u64 * 1000, iops as u64]],
        },
        write: IntervalOp::default(),
        meta_ops: Vec::new(),
    };
    let a = [iv(1.0, 100.0, 10.0), iv(2.0, 100.0, 10.0)];
    let b = [iv(1.001, 300.0, 20.0)];
    let m = merge_series([&a[..], &b[..]].into_iter());
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].read.iops, 400.0);
    assert!((m[0].read.lat_us_mean - 17.5).abs() < 1e-9);
    // Each host's interval histogram is added, so the merged p50 is
    // the slower host's bucket (300 of 400 I/Os), not an average.
    assert_eq!(m[0].read.lat_hist, vec![[10_000, 100], [20_000, 300]]);
    let p50 = m[0].read.lat_percentile_us(50.0).unwrap();
    assert!((p50 - 20.0).abs() < 0.7, "{p50}");
    assert_eq!(m[0].t_s, 1.001);
}

#[test]
fn host_status_keeps_its_json_strings() {
    assert_eq!(serde_json::to_string(&HostStatus::Ok).unwrap(), "\"ok\"");
    assert_eq!(
        serde_json::to_string(&HostStatus::Failed).unwrap(),
        "\"failed\""
    );
    let back: HostStatus = serde_json::from_str("\"failed\"").unwrap();
    assert_eq!(back, HostStatus::Failed);
}

#[test]
fn hosts_protocol_figures_add_and_their_latencies_weigh_by_calls() {
    use crate::result::protocol::{ProtocolOp, ProtocolStats};
    let host = |calls: u64, mean: f64| ProtocolStats {
        protocol: "nfs".into(),
        version: "3".into(),
        connections: 2,
        reconnects: 1,
        per_connection: vec![crate::result::protocol::ProtocolConn {
            conn: 1,
            calls,
            reconnects: 1,
            ..Default::default()
        }],
        ops: vec![ProtocolOp {
            op: "READ".into(),
            calls,
            bytes: calls * 4096,
            rtt_us: LatSummary {
                mean,
                min: mean,
                max: mean,
                ..LatSummary::default()
            },
            ..ProtocolOp::default()
        }],
        smb: None,
    };
    let (a, b) = (host(3, 2.0), host(1, 6.0));
    let m = super::merge_protocol(&[&a, &b]).expect("merged");
    assert_eq!((m.connections, m.reconnects), (4, 2));
    let conns: Vec<(u32, u32, u64)> = m
        .per_connection
        .iter()
        .map(|c| (c.thread, c.conn, c.calls))
        .collect();
    assert_eq!(
        conns,
        [(0, 1, 3), (1, 1, 1)],
        "each host's threads numbered on"
    );
    assert_eq!((m.ops[0].calls, m.ops[0].bytes), (4, 4 * 4096));
    assert!((m.ops[0].rtt_us.mean - 3.0).abs() < 1e-9, "{:?}", m.ops[0]);
    assert!(super::merge_protocol(&[]).is_none());
}

#[test]
fn hosts_smb_figures_add_channel_by_channel() {
    use crate::result::smb::{SmbChannel, SmbCommand, SmbStats};
    let chan = |k: u32, requests: u64, mean: f64| SmbChannel {
        channel: k,
        server: "10.0.0.1:445".into(),
        sessions: 2,
        credit_waits: 1,
        max_in_flight: 8 * u32::from(k == 0) + 4,
        commands: vec![SmbCommand {
            command: "read".into(),
            requests,
            bytes: requests * 4096,
            errors: 0,
            latency_us: LatSummary {
                mean,
                min: mean,
                max: mean,
                ..LatSummary::default()
            },
        }],
        ..SmbChannel::default()
    };
    let host = |a: u64, b: u64| SmbStats {
        dialect: "3.1.1".into(),
        channels_per_session: 2,
        channels: vec![chan(0, a, 100.0), chan(1, b, 300.0)],
        ..SmbStats::default()
    };
    let m = super::merge_smb(&[&host(3, 1), &host(1, 3)]).expect("merged");
    assert_eq!(m.dialect, "3.1.1");
    let got: Vec<(u32, u32, u64, u64, u32)> = m
        .channels
        .iter()
        .map(|c| {
            let r = &c.commands[0];
            (
                c.channel,
                c.sessions,
                r.requests,
                c.credit_waits,
                c.max_in_flight,
            )
        })
        .collect();
    assert_eq!(got, [(0, 4, 4, 2, 12), (1, 4, 4, 2, 4)]);
    assert_eq!(m.channels[1].commands[0].bytes, 4 * 4096);
    assert!((m.channels[0].commands[0].latency_us.mean - 100.0).abs() < 1e-9);
    assert!(super::merge_smb(&[]).is_none());
}
