//! The terminal's live view of a run on many hosts: one row per host (IOPS,
//! MiB/s, p99, state), a host that falls behind or goes silent marked as it
//! happens, the slowest first and the rest folded into one line so that 50
//! hosts still fit a screen, then the totals. It is built from each host's
//! own interval events (`events::Scope::Part`), which the coordinator
//! passes on before it merges them: a silent host holds the merged total
//! back, so the total alone could never show which host is the problem.

use std::collections::BTreeMap;

use crate::output::fmt;
use crate::result::Interval;
use crate::result::merge::merge_intervals;
use crate::stats::live_hist::{sparse_add, sparse_percentile};

/// Host rows shown before the rest fold into one line: with the header,
/// the fold and the totals a frame stays under a dozen lines.
pub(super) const SHOWN: usize = 8;
/// A host under this share of the median host's IOPS is marked slow
/// (hosts of one job run the same workload, so the median is the norm).
const SLOW_SHARE: f64 = 0.5;
/// A host whose newest interval is this many intervals behind the newest
/// any host sent is marked silent: one interval late is network jitter.
const SILENT_AFTER: f64 = 2.0;
/// Host names wider than this are cut, so the columns stay aligned.
const NAME_WIDTH: usize = 24;

#[derive(Default)]
struct Seen {
    /// Each of the host's targets' newest interval.
    targets: BTreeMap<String, Interval>,
    /// What the coordinator last said of it ("running", "idle", "failed").
    state: Option<String>,
}

/// What the terminal knows of each host during a run.
#[derive(Default)]
pub(super) struct Board {
    hosts: BTreeMap<String, Seen>,
    /// The newest interval end any host reported, and the interval length.
    newest_t: f64,
    period_s: f64,
}

/// One host's row as shown.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    pub(crate) host: String,
    pub(crate) iops: f64,
    pub(crate) mib_s: f64,
    pub(crate) p99_us: Option<f64>,
    /// "failed", "silent 12s", "slow", else the coordinator's state.
    pub(crate) mark: String,
    /// Ordering key: problems (failed, silent) before the rest.
    alarm: bool,
}

impl Board {
    /// A new run: the figures of the last one no longer apply; what the
    /// coordinator said of each host still does.
    pub(super) fn new_run(&mut self) {
        for s in self.hosts.values_mut() {
            s.targets.clear();
        }
        self.newest_t = 0.0;
        self.period_s = 0.0;
    }

    pub(super) fn part(&mut self, host: &str, target: &str, iv: &Interval) {
        let seen = self.hosts.entry(host.to_string()).or_default();
        seen.targets.insert(target.to_string(), iv.clone());
        self.newest_t = self.newest_t.max(iv.t_s);
        self.period_s = self.period_s.max(iv.duration_s);
    }

    pub(super) fn state(&mut self, host: &str, state: &str) {
        self.hosts.entry(host.to_string()).or_default().state = Some(state.to_string());
    }

    /// Several hosts: the board is worth a frame.
    pub(super) fn many(&self) -> bool {
        self.hosts.len() > 1
    }

    /// Every host's row, the ones to look at first: failed or silent hosts,
    /// then the slowest; ties by name, so the frame does not jump.
    pub(super) fn rows(&self) -> Vec<Row> {
        let merged: Vec<(&String, &Seen, Option<Interval>)> = self
            .hosts
            .iter()
            .map(|(name, s)| {
                let parts: Vec<&Interval> = s.targets.values().collect();
                let iv = (!parts.is_empty()).then(|| merge_intervals(&parts));
                (name, s, iv)
            })
            .collect();
        let mut iops: Vec<f64> = merged
            .iter()
            .filter_map(|(_, _, iv)| iv.as_ref().map(both_iops))
            .collect();
        iops.sort_by(f64::total_cmp);
        let median = iops.get(iops.len() / 2).copied().unwrap_or(0.0);
        let mut rows: Vec<Row> = merged
            .into_iter()
            .map(|(name, s, iv)| self.row(name, s, iv.as_ref(), median, iops.len()))
            .collect();
        rows.sort_by(|a, b| {
            b.alarm
                .cmp(&a.alarm)
                .then(a.iops.total_cmp(&b.iops))
                .then(a.host.cmp(&b.host))
        });
        rows
    }

    fn row(&self, name: &str, s: &Seen, iv: Option<&Interval>, median: f64, n: usize) -> Row {
        let state = s.state.as_deref().unwrap_or("running");
        // A host is as recent as its least recent target.
        let oldest = s
            .targets
            .values()
            .map(|i| i.t_s)
            .min_by(f64::total_cmp)
            .unwrap_or(0.0);
        let behind = self.newest_t - oldest;
        let silent = state == "running"
            && self.period_s > 0.0
            && (iv.is_none() || behind >= SILENT_AFTER * self.period_s);
        let iops = iv.map_or(0.0, both_iops);
        let (mark, alarm) = if state == "failed" || state.starts_with("failed") {
            ("failed".to_string(), true)
        } else if silent {
            (format!("silent {}s", behind.round()), true)
        } else if state == "running" && n >= 2 && iops < SLOW_SHARE * median {
            ("slow".to_string(), false)
        } else {
            (state.to_string(), false)
        };
        Row {
            host: name.to_string(),
            iops,
            mib_s: iv.map_or(0.0, |i| i.read.mib_s + i.write.mib_s),
            p99_us: iv.and_then(p99_us),
            mark,
            alarm,
        }
    }

    /// The frame: a header, the first `SHOWN` rows, the rest folded into
    /// one line, and the totals over every host (the sum of the rows; the
    /// p99 of every host's I/Os together, from the merged histograms).
    pub(super) fn frame(&self) -> Vec<String> {
        let rows = self.rows();
        let mut out = vec![format!(
            "  {:<NAME_WIDTH$} {:>10} {:>9} {:>9}  state",
            "host", "IOPS", "MiB/s", "p99"
        )];
        for r in rows.iter().take(SHOWN) {
            out.push(line(&r.host, r.iops, r.mib_s, r.p99_us, &r.mark));
        }
        let rest = rows.get(SHOWN..).unwrap_or_default();
        if let (Some(lo), Some(hi)) = (rest.first(), rest.last()) {
            let marked = rest.iter().filter(|r| r.mark != "running").count();
            out.push(format!(
                "  ... {} more hosts, {} to {} IOPS each{}",
                rest.len(),
                fmt::thousands(lo.iops),
                fmt::thousands(hi.iops),
                if marked > 0 {
                    format!(", {marked} of them not running")
                } else {
                    String::new()
                }
            ));
        }
        let all: Vec<Interval> = self
            .hosts
            .values()
            .flat_map(|s| s.targets.values().cloned())
            .collect();
        let refs: Vec<&Interval> = all.iter().collect();
        let total = (!refs.is_empty()).then(|| merge_intervals(&refs));
        out.push(line(
            &format!("total ({} hosts)", rows.len()),
            rows.iter().map(|r| r.iops).sum(),
            rows.iter().map(|r| r.mib_s).sum(),
            total.as_ref().and_then(p99_us),
            "",
        ));
        out
    }
}

fn both_iops(iv: &Interval) -> f64 {
    iv.read.iops + iv.write.iops
}

/// The p99 of the interval's reads and writes together, in µs.
fn p99_us(iv: &Interval) -> Option<f64> {
    let h = sparse_add(&iv.read.lat_hist, &iv.write.lat_hist);
    sparse_percentile(&h, 99.0).map(|ns| ns / 1000.0)
}

fn line(name: &str, iops: f64, mib_s: f64, p99: Option<f64>, mark: &str) -> String {
    let name: String = if name.chars().count() > NAME_WIDTH {
        name.chars().take(NAME_WIDTH - 1).chain(['~']).collect()
    } else {
        name.to_string()
    };
    format!(
        "  {name:<NAME_WIDTH$} {:>10} {:>9} {:>9}  {mark}",
        fmt::thousands(iops),
        fmt::mib_s(mib_s),
        p99.map_or_else(|| "-".to_string(), fmt::micros)
    )
    .trim_end()
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{IntervalOp, PhaseName};

    fn iv(t_s: f64, iops: f64, lat_ns: u64) -> Interval {
        Interval {
            t_s,
            duration_s: 1.0,
            phase: PhaseName::Measure,
            read: IntervalOp {
                iops,
                mib_s: iops * 4096.0 / 1048576.0,
                lat_hist: vec![[lat_ns, iops as u64]],
                ..IntervalOp::default()
            },
            write: IntervalOp::default(),
            meta_ops: Vec::new(),
        }
    }

    /// 50 hosts at 1,000..1,049 IOPS, two targets each, one of them at a
    /// tenth of the rest, one silent since t=3 and one failed.
    fn fifty() -> Board {
        let mut b = Board::default();
        for i in 0..50u32 {
            let name = format!("h{i:02}");
            b.state(&name, "running");
            let (t, iops) = match i {
                7 => (10.0, 50.0),
                9 => (3.0, 500.0),
                _ => (10.0, 500.0 + f64::from(i)),
            };
            for target in ["/a", "/b"] {
                b.part(&name, target, &iv(t, iops, 100_000 + u64::from(i)));
            }
        }
        b.state("h12", "failed");
        b
    }

    #[test]
    fn fifty_hosts_fit_a_frame_the_problems_and_the_slowest_first() {
        let b = fifty();
        let f = b.frame();
        // Header, 8 rows, the fold, the totals.
        assert_eq!(f.len(), SHOWN + 3, "{f:#?}");
        let first: Vec<&str> = f[1..4]
            .iter()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        // Failed and silent before anything else (by name), then the slow one.
        assert_eq!(first, ["h09", "h12", "h07"], "{f:#?}");
        assert!(f[1].ends_with("silent 7s"), "{}", f[1]);
        assert!(f[2].ends_with("failed"), "{}", f[2]);
        assert!(f[3].ends_with("slow"), "{}", f[3]);
        assert!(f[3].contains(" 100 "), "two targets of 50 IOPS: {}", f[3]);
        // Then the slowest of the rest, in order: h00 (1,000), h01 ...
        assert!(
            f[4].starts_with("  h00 ") && f[4].contains("1,000"),
            "{}",
            f[4]
        );
        assert!(f[5].starts_with("  h01 "), "{}", f[5]);
        // 42 folded, the fastest last.
        assert_eq!(
            f[9], "  ... 42 more hosts, 1,010 to 1,098 IOPS each",
            "{f:#?}"
        );
        // The totals are the sum of every host, shown or folded.
        let rows = b.rows();
        let sum: f64 = rows.iter().map(|r| r.iops).sum();
        assert!(f[10].starts_with("  total (50 hosts)"), "{}", f[10]);
        assert!(f[10].contains(&fmt::thousands(sum)), "{} vs {sum}", f[10]);
        // Every I/O took 100.0xx µs: the p99 over all hosts says so.
        assert!(f[10].contains("100 µs"), "{}", f[10]);
    }

    #[test]
    fn a_host_is_marked_as_it_falls_behind_and_cleared_when_it_catches_up() {
        let mut b = Board::default();
        for t in 1..=3 {
            b.part("a", "/x", &iv(f64::from(t), 1000.0, 1000));
        }
        b.part("b", "/x", &iv(1.0, 1000.0, 1000));
        // b is one interval behind: jitter, not silence.
        b.part("a", "/x", &iv(2.0, 1000.0, 1000));
        b.part("b", "/x", &iv(2.0, 1000.0, 1000));
        assert_eq!(b.rows().iter().filter(|r| r.alarm).count(), 0);
        b.part("a", "/x", &iv(4.0, 1000.0, 1000));
        let rows = b.rows();
        assert_eq!(
            (rows[0].host.as_str(), rows[0].mark.as_str()),
            ("b", "silent 2s")
        );
        b.part("b", "/x", &iv(4.0, 1000.0, 1000));
        assert!(
            b.rows().iter().all(|r| r.mark == "running"),
            "{:?}",
            b.rows()
        );
        // A new run forgets the figures, not that a host failed.
        b.state("b", "failed");
        b.new_run();
        assert_eq!(b.rows()[0].mark, "failed");
    }

    #[test]
    fn a_long_host_name_is_cut_so_the_columns_stay_aligned() {
        let mut b = Board::default();
        let long = "a-very-long-host-name.example.internal";
        b.part(long, "/x", &iv(1.0, 10.0, 1000));
        b.part("b", "/x", &iv(1.0, 10.0, 1000));
        let f = b.frame();
        let row = f.iter().find(|l| l.contains('~')).unwrap();
        assert!(row.starts_with("  a-very-long-host-name.e~ "), "{row}");
        // The IOPS column ends where its header does.
        let end_of = |l: &str, s: &str| l.find(s).unwrap() + s.len();
        assert_eq!(end_of(&f[0], "IOPS"), end_of(row, " 10"), "{f:#?}");
    }
}
