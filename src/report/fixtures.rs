//! Synthetic results with known numbers, for tests of the report, the
//! exports and the comparison (unit tests here, end-to-end tests through
//! `volbench report` on JSON files written from them). Deterministic: the
//! same call gives the same bytes.

use crate::result::{
    Cpu, Histograms, HostInfo, Interval, IntervalOp, LittlesLaw, OpTotals, Phase, PhaseName,
    ResultDoc, RunResult, SCHEMA, TargetInfo, Tool, Totals,
};
use crate::spec::{
    Arrivals, BlockSize, EngineChoice, EngineKind, JobSpec, Pattern, RunSpec, TargetKind,
    TargetSpec,
};
use crate::stats::{BucketedHistogram, OpStats};

/// What a synthetic run does and measures.
#[derive(Debug, Clone)]
pub struct RunFixture {
    pub name: String,
    pub rw: Pattern,
    pub read_pct: u8,
    pub bs: u64,
    pub threads: u32,
    pub iodepth: u32,
    /// Total IOPS over reads and writes, split by `read_pct`.
    pub iops: f64,
    /// Mean latency in µs; the synthetic distribution has a tail 10x longer.
    pub(crate) lat_us: f64,
    pub intervals: usize,
    pub(crate) warmup_intervals: usize,
    /// A rate-limited point of a latency curve: percent of the maximum.
    pub rate_pct: Option<f64>,
}

impl RunFixture {
    pub fn new(name: &str, rw: Pattern, read_pct: u8, bs: u64) -> Self {
        Self {
            name: name.into(),
            rw,
            read_pct,
            bs,
            threads: 4,
            iodepth: 8,
            iops: 10_000.0,
            lat_us: 200.0,
            intervals: 5,
            warmup_intervals: 1,
            rate_pct: None,
        }
    }

    pub fn conc(mut self, threads: u32, iodepth: u32) -> Self {
        self.threads = threads;
        self.iodepth = iodepth;
        self
    }

    pub fn perf(mut self, iops: f64, lat_us: f64) -> Self {
        self.iops = iops;
        self.lat_us = lat_us;
        self
    }

    pub fn spec(&self) -> RunSpec {
        let warm = self.warmup_intervals as f64;
        RunSpec {
            name: self.name.clone(),
            rw: self.rw,
            read_pct: self.read_pct,
            bs: vec![BlockSize {
                bytes: self.bs,
                weight: 1,
            }],
            write_bs: Vec::new(),
            threads: self.threads,
            iodepth: self.iodepth,
            warmup_s: warm,
            duration_s: (self.intervals - self.warmup_intervals.min(self.intervals)) as f64,
            io_limit: None,
            files: None,
            size: None,
            // A rate point reaches its target: achieved IOPS = target IOPS.
            rate_iops: self.rate_pct.map(|_| self.iops),
            rate_pct: self.rate_pct.map(|percent| crate::spec::RatePct {
                percent,
                of: "max".into(),
            }),
            arrivals: Default::default(),
            steady: false,
            discard: false,
            stop_rule: None,
            latency_target: None,
            meta: None,
            shape: Default::default(),
            buffered: false,
            host_count: None,
            replay: None,
        }
    }

    pub(crate) fn build(&self) -> RunResult {
        let spec = self.spec();
        let secs = spec.duration_s.max(1.0);
        let share = [
            ("read", self.read_pct as f64 / 100.0),
            ("write", 1.0 - self.read_pct as f64 / 100.0),
        ];
        let mut stats = [OpStats::new(), OpStats::new()];
        for (k, (_, f)) in share.iter().enumerate() {
            let ops = (self.iops * f * secs).round() as u64;
            // 95% around 0.86x the mean, 4.5% at 3x, 0.5% at 10x, spread
            // a little so percentiles are not all one bucket:
            // 0.95*0.8579 + 0.045*3 + 0.005*10 = 1.0.
            for i in 0..ops {
                let m = match i % 1000 {
                    0..=4 => 10.0,
                    5..=49 => 3.0,
                    j => 0.8579 * (0.9 + 0.2 * (j % 10) as f64 / 9.0),
                };
                stats[k].record((self.lat_us * m * 1000.0) as u64, self.bs);
            }
        }
        let read = OpTotals::from_stats(&stats[0], secs);
        let write = OpTotals::from_stats(&stats[1], secs);
        let mut intervals = Vec::new();
        for i in 0..self.intervals {
            // A gentle ramp then flat, so the time series is not a ruler.
            let f = if i < self.warmup_intervals {
                0.7
            } else {
                1.0 + 0.02 * ((i % 3) as f64 - 1.0)
            };
            let op = |t: &OpTotals| IntervalOp {
                iops: t.iops * f,
                mib_s: t.mib_s * f,
                lat_us_mean: t.lat_us.mean / f,
                service_us_mean: None,
                lat_hist: interval_hist(t, f),
            };
            intervals.push(Interval {
                t_s: (i + 1) as f64,
                duration_s: 1.0,
                phase: if i < self.warmup_intervals {
                    PhaseName::Warmup
                } else {
                    PhaseName::Measure
                },
                read: op(&read),
                write: op(&write),
                meta_ops: Vec::new(),
            });
        }
        let conc = self.threads * self.iodepth;
        let in_flight = (read.iops * read.lat_us.mean + write.iops * write.lat_us.mean) / 1e6;
        RunResult {
            name: self.name.clone(),
            workload: spec.clone(),
            engine: vec![EngineKind::IoUring],
            io_threads: self.threads,
            depth_per_thread: self.iodepth,
            phases: vec![
                Phase {
                    name: PhaseName::Warmup,
                    start: "2026-01-02T03:04:05.000Z".into(),
                    duration_s: spec.warmup_s,
                },
                Phase {
                    name: PhaseName::Measure,
                    start: "2026-01-02T03:04:06.000Z".into(),
                    duration_s: secs,
                },
            ],
            totals: Totals {
                read,
                write,
                cpu: Cpu {
                    user_pct: 5.0,
                    sys_pct: 20.0,
                },
                flush: None,
                discard: None,
            },
            warmup: None,
            intervals,
            histograms: Histograms {
                read: BucketedHistogram::from_histogram(&stats[0].hist),
                write: BucketedHistogram::from_histogram(&stats[1].hist),
            },
            littles_law: LittlesLaw {
                concurrency: conc,
                iops_x_latency: in_flight,
            },
            interrupted: false,
            meta_ops: Vec::new(),
            counters: None,
            data_errors: None,
            targets: Vec::new(),
            stalls: Vec::new(),
            replay: None,
            from_intervals: false,
            histograms_left_out: false,
            threads: Vec::new(),
            threads_left_out: 0,
            protocol: None,
            left_out: Vec::new(),
            rate: self.rate_pct.map(|_| crate::result::RateResult {
                target_iops: self.iops,
                achieved_iops: self.iops,
                reached: true,
                arrivals: Arrivals::Uniform,
            }),
            steady: None,
        }
    }
}

pub fn doc(host: &str, runs: &[RunFixture]) -> ResultDoc {
    let built: Vec<RunResult> = runs.iter().map(RunFixture::build).collect();
    ResultDoc {
        schema: SCHEMA.into(),
        tool: Tool {
            name: "volbench".into(),
            version: "0.0.0-test".into(),
        },
        host: HostInfo {
            hostname: host.into(),
            kernel: "6.1.0-test".into(),
            cpus: 32,
            memory_bytes: 128 << 30,
            cpu_model: "Test CPU 3000".into(),
            machine: String::new(),
            os: String::new(),
            vm_size: None,
            net: crate::result::environment::NetBuffers {
                rmem_max: Some(212_992),
                wmem_max: Some(212_992),
                rmem_default: Some(212_992),
                wmem_default: Some(212_992),
                tcp_rmem: Some([4096, 131_072, 6_291_456]),
                tcp_wmem: Some([4096, 16_384, 4_194_304]),
            },
            platform: Default::default(),
        },
        started: "2026-01-02T03:04:05.000Z".into(),
        spec: JobSpec {
            target: TargetSpec {
                write_sync: Default::default(),
                data: Default::default(),
                fill: Default::default(),
                path: "/mnt/anf/volbench".into(),
                size: 1 << 30,
                files: 1,
                direct: true,
                allow_overwrite: false,
                open_files: None,
            },
            engine: EngineChoice::Auto,
            interval_s: 1.0,
            seed: 1,
            runs: built.iter().map(|r| r.workload.clone()).collect(),
            suite: None,
            targets: None,
            reading: Default::default(),
        },
        target: Some(TargetInfo {
            kind: TargetKind::Directory,
            path: "/mnt/anf/volbench".into(),
            files: 1,
            file_size: 1 << 30,
            align: 4096,
            mount: Some(crate::result::mount::MountInfo {
                mount_point: "/mnt/anf".into(),
                fs_type: "nfs".into(),
                source: "anf-server:/vol1".into(),
                options: "rw,relatime,vers=3,rsize=65536,wsize=65536,hard,nconnect=16,proto=tcp"
                    .into(),
            }),
            memory: None,
            blocks: crate::result::environment::BlockSizes {
                fs_block: Some(65_536),
                fs_fragment: Some(65_536),
                ..Default::default()
            },
        }),
        runs: built,
        interrupted: false,
        error: None,
        error_code: None,
        notes: Vec::new(),
        cluster: None,
        expect: None,
        diagnosis: Vec::new(),
        fill: Vec::new(),
        latency_search: Vec::new(),
        headroom: None,
    }
}

/// The six vendor patterns with plausible numbers.
pub fn six_patterns() -> ResultDoc {
    use Pattern::*;
    doc(
        "client-1",
        &[
            RunFixture::new("8k-random-read", Randread, 100, 8 << 10).perf(126_000.0, 250.0),
            RunFixture::new("8k-random-write", Randwrite, 0, 8 << 10).perf(78_000.0, 410.0),
            RunFixture::new("8k-random-50-50", Randrw, 50, 8 << 10).perf(96_000.0, 330.0),
            RunFixture::new("64k-seq-read", Read, 100, 64 << 10).perf(68_000.0, 470.0),
            RunFixture::new("64k-seq-write", Write, 0, 64 << 10).perf(23_000.0, 1400.0),
            RunFixture::new("64k-seq-50-50", Rw, 50, 64 << 10).perf(43_000.0, 740.0),
        ],
    )
}

/// Read percentage 100, 75, 50, 25, 0 at 64 KiB sequential, like seed 003's
/// tables: read MiB/s falls, write MiB/s rises.
pub fn mix_sweep() -> ResultDoc {
    let runs: Vec<RunFixture> = [100u8, 75, 50, 25, 0]
        .iter()
        .map(|&p| {
            let rw = match p {
                100 => Pattern::Read,
                0 => Pattern::Write,
                _ => Pattern::Rw,
            };
            let iops = 68_000.0 - (100 - p) as f64 * 450.0;
            RunFixture::new(&format!("64k-seq-{p}r"), rw, p, 64 << 10).perf(iops, 500.0)
        })
        .collect();
    doc("client-1", &runs)
}

/// A thread sweep on 4 KiB random reads: IOPS flattens while latency climbs
/// (the hockey stick).
pub fn thread_curve() -> ResultDoc {
    let runs: Vec<RunFixture> = [1u32, 2, 4, 8, 16, 32]
        .iter()
        .map(|&t| {
            let iops = 200_000.0 * (t as f64) / (t as f64 + 6.0);
            let lat = t as f64 * 8.0 * 1e6 / iops;
            RunFixture::new(
                &format!("4k-randread-{t}t"),
                Pattern::Randread,
                100,
                4 << 10,
            )
            .conc(t, 8)
            .perf(iops, lat)
        })
        .collect();
    doc("client-1", &runs)
}

/// A latency curve as the latency-curve suite runs it: a discarded warm-up
/// run, the unthrottled maximum, then rate-limited points at 10..100% of
/// it, with latency (from the intended start) climbing near 100% while the
/// service time stays nearly flat.
pub fn latency_curve() -> ResultDoc {
    let max = 50_000.0;
    let mut runs = vec![
        RunFixture::new("warmup-run", Pattern::Randread, 100, 8 << 10).perf(max, 640.0),
        RunFixture::new("curve-max", Pattern::Randread, 100, 8 << 10).perf(max, 640.0),
    ];
    for pct in [10.0, 50.0, 70.0, 80.0, 90.0, 100.0] {
        let u: f64 = pct / 100.0;
        // Queueing: wait grows like u / (1 - u), capped at the 100% point.
        let lat = 100.0 + 150.0 * u / (1.0 - u).max(0.02);
        let mut r = RunFixture::new(&format!("curve-{pct}pct"), Pattern::Randread, 100, 8 << 10)
            .perf(max * u, lat);
        r.rate_pct = Some(pct);
        runs.push(r);
    }
    let mut d = doc("client-1", &runs);
    d.runs[0].workload.discard = true;
    d.spec.runs[0].discard = true;
    for r in d.runs.iter_mut().filter(|r| r.workload.rate_pct.is_some()) {
        let service = crate::result::LatSummary {
            mean: 100.0 + 20.0 * r.workload.rate_pct.as_ref().map_or(0.0, |p| p.percent) / 100.0,
            ..r.totals.read.lat_us.clone()
        };
        r.totals.read.service_lat_us = Some(service);
    }
    d
}

/// An interval's latency histogram in the fixture's shape: 95% near 0.86x
/// the interval's mean, 4.5% at 3x, 0.5% at 10x, so its p50 follows the
/// mean and its p99 sits at 3x.
fn interval_hist(t: &OpTotals, f: f64) -> Vec<[u64; 2]> {
    use crate::stats::live_hist::{bounds, index, sparse_add};
    let n = t.iops * f;
    if n < 1.0 {
        return Vec::new();
    }
    let mean_ns = t.lat_us.mean / f * 1000.0;
    let mut h: Vec<[u64; 2]> = Vec::new();
    for (m, share) in [(0.8579, 0.95), (3.0, 0.045), (10.0, 0.005)] {
        let count = (n * share).round() as u64;
        if count > 0 {
            let lo = bounds(index((mean_ns * m) as u64)).0;
            h = sparse_add(&h, &[[lo, count]]);
        }
    }
    h
}

/// A multi-host result: `iops[i]` is host i's IOPS in each of two runs
/// (8 KiB random reads, 64 KiB sequential reads at a tenth of it), merged
/// exactly into the totals as a real coordinator does.
pub fn multi_host(iops: &[f64]) -> ResultDoc {
    multi_host_intervals(iops, 5)
}

/// `multi_host` with `intervals` measured intervals per run (the store's
/// benchmark: 1,000 hosts, 600 intervals).
pub fn multi_host_intervals(iops: &[f64], intervals: usize) -> ResultDoc {
    use crate::result::merge::{Cluster, ClusterRun, HostResult, HostStatus, merge_runs};
    let run_fixtures = |f: f64| {
        let mut r = vec![
            RunFixture::new("8k-random-read", Pattern::Randread, 100, 8 << 10).perf(f, 32.0e6 / f),
            RunFixture::new("64k-seq-read", Pattern::Read, 100, 64 << 10)
                .perf(f / 10.0, 320.0e6 / f),
        ];
        for x in &mut r {
            x.intervals = intervals;
        }
        r
    };
    let hosts: Vec<HostResult> = iops
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let d = doc(&format!("client-{}", i + 1), &run_fixtures(v));
            HostResult {
                name: format!("client-{}", i + 1),
                index: i as u32,
                status: HostStatus::Ok,
                error: None,
                version: Some("0.0.0-test".into()),
                host: Some(d.host.clone()),
                clock_offset_ms: Some(0.1),
                rtt_ms: Some(0.2),
                targets: d.target.iter().cloned().collect(),
                runs: d.runs,
                target_runs: Vec::new(),
                unfinished: None,
            }
        })
        .collect();
    let names = ["8k-random-read", "64k-seq-read"];
    let merged: Vec<RunResult> = names
        .iter()
        .filter_map(|n| {
            let parts: Vec<&RunResult> = hosts
                .iter()
                .filter_map(|h| h.runs.iter().find(|r| r.name == *n))
                .collect();
            merge_runs(&parts).ok()
        })
        .collect();
    let mut d = doc(
        "coordinator",
        &run_fixtures(iops.first().copied().unwrap_or(1000.0)),
    );
    d.runs = merged;
    d.cluster = Some(Cluster {
        runs: names
            .iter()
            .map(|n| ClusterRun {
                name: n.to_string(),
                hosts_merged: iops.len() as u32,
                hosts_total: iops.len() as u32,
                start_skew_ms: 0.5,
                partial: false,
            })
            .collect(),
        hosts,
        ssh_command: "ssh".into(),
        coordinator: Default::default(),
    });
    d
}

/// Random reads at 4, 8, 16 and 64 KiB, one run each, doing the given
/// IOPS (flat IOPS is what a provisioned IOPS cap looks like).
pub fn transfer_sizes(iops: [f64; 4]) -> ResultDoc {
    let runs: Vec<RunFixture> = [4u64, 8, 16, 64]
        .iter()
        .zip(iops)
        .map(|(&k, v)| {
            RunFixture::new(&format!("randread-{k}k"), Pattern::Randread, 100, k << 10)
                .conc(4, 4)
                .perf(v, 16.0 * 1e6 / v)
        })
        .collect();
    doc("client-1", &runs)
}

/// A multi-host result of one run (8 KiB random reads) whose hosts
/// (`client-1`...) each drove targets `/mnt/t0`, `/mnt/t1`... at the given
/// IOPS, with each target's own figures kept (`runs[].targets[]`).
pub fn multi_target(per_host: &[&[f64]]) -> ResultDoc {
    use crate::result::merge::merge_runs;
    use crate::result::targets::TargetRun;
    let sums: Vec<f64> = per_host.iter().map(|t| t.iter().sum()).collect();
    let mut d = multi_host(&sums);
    let name = "8k-random-read";
    let Some(c) = d.cluster.as_mut() else {
        return d;
    };
    c.runs.retain(|r| r.name == name);
    let mut targets = Vec::new();
    for (h, mine) in c.hosts.iter_mut().zip(per_host) {
        let parts: Vec<RunResult> = mine
            .iter()
            .map(|&v| {
                RunFixture::new(name, Pattern::Randread, 100, 8 << 10)
                    .perf(v, 32.0e6 / v)
                    .build()
            })
            .collect();
        let template = h.targets.first().cloned();
        h.targets = (0..parts.len())
            .filter_map(|i| {
                let mut t = template.clone()?;
                t.path = format!("/mnt/t{i}");
                Some(t)
            })
            .collect();
        targets.extend(parts.iter().enumerate().map(|(i, r)| {
            TargetRun::of(r, i as u32, &format!("/mnt/t{i}"), None).on_host(&h.name)
        }));
        h.runs = merge_runs(&parts.iter().collect::<Vec<_>>())
            .into_iter()
            .collect();
    }
    let hosts: Vec<&RunResult> = c.hosts.iter().flat_map(|h| h.runs.iter()).collect();
    d.runs = merge_runs(&hosts).into_iter().collect();
    for r in &mut d.runs {
        r.targets = std::mem::take(&mut targets);
    }
    d
}

/// A host-count sweep of 64 KiB sequential reads: `per_point[k]` holds each
/// host's IOPS at point k (run `seq-read-hostsN` on the first N hosts),
/// merged exactly; with `nic` = (MiB/s, link speed in Mbit/s) every host's
/// own runs carry that interface's counters.
pub fn host_sweep(per_point: &[&[f64]], nic: Option<(f64, Option<f64>)>) -> ResultDoc {
    use crate::result::counters::{CounterInterval, InterfaceInfo, NetRates, RunCounters};
    use crate::result::merge::{Cluster, ClusterRun, HostResult, merge_runs};
    let n_hosts = per_point.iter().map(|p| p.len()).max().unwrap_or(0);
    let mut hosts: Vec<HostResult> = (0..n_hosts)
        .filter_map(|i| {
            let mut h = multi_host(&[1.0]).cluster?.hosts.into_iter().next()?;
            h.name = format!("client-{}", i + 1);
            h.index = i as u32;
            h.runs.clear();
            Some(h)
        })
        .collect();
    let mut merged = Vec::new();
    let mut cluster_runs = Vec::new();
    for point in per_point {
        let n = point.len() as u32;
        let name = format!("seq-read-hosts{n}");
        let mut parts = Vec::new();
        for (h, &v) in hosts.iter_mut().zip(point.iter()) {
            let mut r = RunFixture::new(&name, Pattern::Read, 100, 64 << 10)
                .conc(1, 16)
                .perf(v, 16.0e6 / v)
                .build();
            r.workload.host_count = Some(n);
            r.counters = nic.map(|(mib_s, mbit)| RunCounters {
                host: h.name.clone(),
                cpus: 32,
                interfaces: vec![InterfaceInfo {
                    name: "eth0".into(),
                    speed_mbit: mbit,
                }],
                summary: Some(CounterInterval {
                    duration_s: 4.0,
                    phase: PhaseName::Measure,
                    net: vec![NetRates {
                        name: "eth0".into(),
                        rx_mib_s: mib_s,
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            });
            h.runs.push(r.clone());
            parts.push(r);
        }
        if let Ok(m) = merge_runs(&parts.iter().collect::<Vec<_>>()) {
            merged.push(m);
        }
        cluster_runs.push(ClusterRun {
            name,
            hosts_merged: n,
            hosts_total: n,
            start_skew_ms: 0.5,
            partial: false,
        });
    }
    let mut d = doc("coordinator", &[]);
    d.spec.runs = merged.iter().map(|r| r.workload.clone()).collect();
    d.runs = merged;
    d.cluster = Some(Cluster {
        runs: cluster_runs,
        hosts,
        ssh_command: "ssh".into(),
        coordinator: Default::default(),
    });
    d
}

/// A curve's percentile stop rule judged on runs built here (the rule
/// lives in plan/, below the fixtures, so its test lives above it).
#[cfg(test)]
mod stop_rule_tests {
    use crate::report::fixtures::{self, RunFixture};
    use crate::spec::latency::LatencyLimit;
    use crate::spec::{Pattern, StopRule};

    /// A curve stops once a point breaks a percentile limit, judged on the
    /// point's merged histograms, and goes on while it keeps it.
    #[test]
    fn a_curve_stops_on_a_percentile() {
        let doc = fixtures::doc(
            "h",
            &[RunFixture::new("c-50pct", Pattern::Randread, 100, 4096).perf(1000.0, 200.0)],
        );
        let mut runs = doc.runs;
        let rule = |limit: &str| StopRule {
            group: "c".into(),
            gain_below_pct: None,
            latency_above_us: None,
            percentile_above: LatencyLimit::parse_list("x", limit).unwrap(),
        };
        runs[0].workload.stop_rule = Some(rule("p99=1h"));
        let p99 = crate::result::search::measured_us(&runs[0], &rule("p99=1h").percentile_above[0])
            .unwrap();
        assert!(p99 > 200.0, "a tail above the mean: {p99}");
        assert_eq!(
            crate::plan::sequence::stop_reason(&rule("p99=1h"), &runs),
            None
        );
        assert_eq!(
            crate::plan::sequence::stop_reason(&rule("p50=1h"), &runs),
            None
        );
        let why = crate::plan::sequence::stop_reason(&rule("p99=100us"), &runs).unwrap();
        assert!(
            why.contains("p99 <= 100µs") || why.contains("p99 <= 100us"),
            "{why}"
        );
        // A limit on writes of a run without writes is broken: nothing met it.
        assert!(crate::plan::sequence::stop_reason(&rule("write:p99=1h"), &runs).is_some());
    }
}
