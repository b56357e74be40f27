//! Host-count sweeps (`--host-counts`, the suite key `host_counts`): every
//! run once per point, the point N running on the first N hosts of the host
//! list, so the runs differ only in how many clients drive the storage.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashSet;

use crate::error::{Result, VbError};
use crate::input::sweep::parse_counts;
use crate::spec::JobSpec;
use crate::units::bounds::{MAX_HOSTS, MAX_RUNS};

/// Where the hosts of a host-count sweep come from, for the refusal when
/// there are not several.
const HOST_SOURCES: &str = "--hosts, --hosts-file, --hosts-from or a Slurm host list";

/// The points of a host-count sweep, in the order given: whole numbers in
/// 1..MAX_HOSTS, none twice (a repeated point would be one run under two
/// names).
pub(crate) fn parse(flag: &str, text: &str) -> Result<Vec<u32>> {
    let points = parse_counts(flag, text, 1, MAX_HOSTS as u64)?;
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(points.len());
    for p in points {
        if !seen.insert(p) {
            return Err(VbError::input(format!(
                "{flag} '{text}': {p} is given twice; each host count is one run"
            )));
        }
        // parse_counts kept every point within 1..MAX_HOSTS.
        out.push(u32::try_from(p).unwrap_or(u32::MAX));
    }
    Ok(out)
}

/// A host-count sweep asked for where there are no hosts to sweep over.
pub(crate) fn refuse_local(flag: &str) -> VbError {
    VbError::input(format!(
        "{flag} sweeps over several hosts; give them with {HOST_SOURCES}"
    ))
}

/// Crosses the job's runs with the host counts: each run becomes one run per
/// count, named `NAME-hostsN`, next to each other so the report reads them
/// as one scaling series. A discarded warm-up run stays one run on every
/// host. A rate given as a share of an earlier run, and a stop rule's group,
/// follow their own count. Refused before any I/O: fewer than two hosts, a
/// count above the number of hosts, or too many runs in all.
pub(crate) fn apply(job: &mut JobSpec, flag: &str, counts: &[u32], hosts: usize) -> Result<()> {
    if hosts < 2 {
        return Err(VbError::input(format!(
            "{flag} needs several hosts, and {hosts} {} listed; give them with {HOST_SOURCES}",
            if hosts == 1 { "is" } else { "are" }
        )));
    }
    if let Some(n) = counts.iter().find(|&&n| n as usize > hosts) {
        return Err(VbError::input(format!(
            "{flag}: {n} hosts asked for, but only {hosts} are listed"
        )));
    }
    let crossed = job.runs.iter().filter(|r| !r.discard).count();
    let total = crossed.saturating_mul(counts.len()) + (job.runs.len() - crossed);
    if total > MAX_RUNS {
        return Err(VbError::input(format!(
            "{flag}: {} host counts x {crossed} runs is {total} runs; at most {MAX_RUNS}",
            counts.len()
        )));
    }
    let swept: HashSet<String> = job
        .runs
        .iter()
        .filter(|r| !r.discard)
        .map(|r| r.name.clone())
        .collect();
    let mut out = Vec::with_capacity(total);
    for run in &job.runs {
        if run.discard {
            out.push(run.clone());
            continue;
        }
        for &n in counts {
            let mut r = run.clone();
            r.name = point_name(&run.name, n);
            r.host_count = Some(n);
            if let Some(p) = &mut r.rate_pct {
                if swept.contains(&p.of) {
                    p.of = point_name(&p.of, n);
                }
            }
            if let Some(s) = &mut r.stop_rule {
                s.group = point_name(&s.group, n);
            }
            out.push(r);
        }
    }
    job.runs = out;
    job.validate()
}

/// A run's name at one host count.
pub(crate) fn point_name(name: &str, n: u32) -> String {
    if name.is_empty() {
        format!("hosts{n}")
    } else {
        format!("{name}-hosts{n}")
    }
}

/// Whether the host at `index` in the host list takes part in a run.
pub(crate) fn takes_part(host_count: Option<u32>, index: u32) -> bool {
    host_count.is_none_or(|n| index < n)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::spec::{RatePct, RunSpec, StopRule};

    fn job(names: &[&str]) -> JobSpec {
        use crate::spec::{EngineChoice, TargetSpec, WriteSync};
        let mut j = JobSpec {
            target: TargetSpec {
                write_sync: WriteSync::None,
                data: Default::default(),
                fill: Default::default(),
                path: "/tmp/x".into(),
                size: 1 << 20,
                files: 1,
                direct: false,
                allow_overwrite: false,
                open_files: None,
            },
            engine: EngineChoice::Auto,
            interval_s: 1.0,
            seed: 1,
            suite: None,
            targets: None,
            reading: Default::default(),
            runs: Vec::new(),
        };
        j.runs = names
            .iter()
            .map(|n| RunSpec {
                name: (*n).into(),
                ..RunSpec::default()
            })
            .collect();
        j
    }

    #[test]
    fn lists_and_ranges_parse_in_order() {
        assert_eq!(parse("--host-counts", "1,2,4").ok(), Some(vec![1, 2, 4]));
        assert_eq!(
            parse("--host-counts", "1:8:*2").ok(),
            Some(vec![1, 2, 4, 8])
        );
    }

    #[test]
    fn zero_repeats_and_fractions_are_refused_with_the_bound() {
        let e = parse("--host-counts", "0,2").err().map(|e| e.message);
        assert_eq!(e.as_deref(), Some("--host-counts 0 is outside 1..1024"));
        let e = parse("--host-counts", "1,2,2").err().map(|e| e.message);
        assert!(e.is_some_and(|m| m.contains("2 is given twice")));
        assert!(parse("--host-counts", "1.5").is_err());
        assert!(parse("--host-counts", "1:100000").is_err());
    }

    #[test]
    fn each_run_becomes_one_run_per_count_named_after_it() {
        let mut j = job(&["seq", "rand"]);
        j.runs[1].rate_pct = Some(RatePct {
            percent: 50.0,
            of: "seq".into(),
        });
        j.runs[1].stop_rule = Some(StopRule {
            group: "g".into(),
            gain_below_pct: Some(5.0),
            latency_above_us: None,
            percentile_above: Vec::new(),
        });
        apply(&mut j, "--host-counts", &[1, 2], 3).expect("valid");
        let names: Vec<&str> = j.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["seq-hosts1", "seq-hosts2", "rand-hosts1", "rand-hosts2"]
        );
        let counts: Vec<Option<u32>> = j.runs.iter().map(|r| r.host_count).collect();
        assert_eq!(counts, [Some(1), Some(2), Some(1), Some(2)]);
        assert_eq!(
            j.runs[3].rate_pct.as_ref().map(|p| p.of.as_str()),
            Some("seq-hosts2")
        );
        assert_eq!(
            j.runs[3].stop_rule.as_ref().map(|s| s.group.as_str()),
            Some("g-hosts2")
        );
    }

    #[test]
    fn a_warm_up_run_stays_one_run_on_every_host() {
        let mut j = job(&["warm", "seq"]);
        j.runs[0].discard = true;
        apply(&mut j, "--host-counts", &[1, 2], 2).expect("valid");
        assert_eq!(j.runs.len(), 3);
        assert_eq!(j.runs[0].host_count, None);
    }

    #[test]
    fn too_few_hosts_or_a_count_above_them_is_refused() {
        let mut j = job(&["seq"]);
        let e = apply(&mut j, "--host-counts", &[1, 2], 1)
            .err()
            .map(|e| e.message);
        assert!(e.is_some_and(|m| m.contains("needs several hosts, and 1 is listed")));
        let e = apply(&mut j, "--host-counts", &[1, 4], 3)
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some("--host-counts: 4 hosts asked for, but only 3 are listed")
        );
    }

    #[test]
    fn the_first_hosts_of_the_list_take_part() {
        assert!(takes_part(Some(2), 1));
        assert!(!takes_part(Some(2), 2));
        assert!(takes_part(None, 7));
    }
}
