//! A result any run writes is one `report`, `compare` and `store import`
//! read back: past the readers' bound (256 MiB), `result::thin::fit` gives
//! up the hosts' own detail first, and what it leaves still passes every
//! reader's checks.

use volbench::report::fixtures;
use volbench::result::ResultDoc;
use volbench::result::thin::{fit, json_bytes};

use crate::common::{stderr, volbench, write_result};

fn hosts_doc(hosts: usize, intervals: usize) -> ResultDoc {
    let iops: Vec<f64> = (0..hosts).map(|h| 1000.0 + 37.0 * h as f64).collect();
    fixtures::multi_host_intervals(&iops, intervals)
}

/// Operations and seconds of host `h`'s first run, from its intervals.
fn host_sums(d: &ResultDoc, h: usize) -> (usize, f64, f64) {
    let r = &d.cluster.as_ref().expect("a cluster").hosts[h].runs[0];
    let secs = r.intervals.iter().map(|i| i.duration_s).sum();
    let ops = r.intervals.iter().map(|i| i.read.iops * i.duration_s).sum();
    (r.intervals.len(), secs, ops)
}

#[test]
fn a_result_within_the_bound_is_written_as_it_is() {
    let mut d = hosts_doc(2, 10);
    let before = serde_json::to_string_pretty(&d).unwrap();
    assert_eq!(fit(&mut d, 1 << 30), before.len() as u64);
    assert_eq!(serde_json::to_string_pretty(&d).unwrap(), before);
}

#[test]
fn many_hosts_give_up_their_own_detail_and_the_merged_runs_keep_theirs() {
    let mut d = hosts_doc(40, 120);
    let full = json_bytes(&d);
    let merged = serde_json::to_string(&d.runs).unwrap();
    let totals: Vec<u64> = d.cluster.as_ref().unwrap().hosts[3]
        .runs
        .iter()
        .map(|r| r.totals.read.ops)
        .collect();
    let cap = full / 3;
    let n = fit(&mut d, cap);
    assert!(n <= cap, "{n} > {cap}");
    assert_eq!(n, json_bytes(&d), "fit returns the size it left");
    // What every table reads is untouched; each host keeps its totals.
    assert_eq!(serde_json::to_string(&d.runs).unwrap(), merged);
    let h = &d.cluster.as_ref().unwrap().hosts[3];
    let now: Vec<u64> = h.runs.iter().map(|r| r.totals.read.ops).collect();
    assert_eq!(now, totals);
    assert!(
        h.runs[0]
            .intervals
            .iter()
            .all(|i| i.read.lat_hist.is_empty())
    );
    let note = d.notes.last().expect("a note says what went");
    assert!(note.contains("latency buckets"), "{note}");
}

#[test]
fn merging_a_hosts_intervals_keeps_its_time_and_operations() {
    let mut d = hosts_doc(3, 64);
    let before = host_sums(&d, 0);
    // The bound between "no buckets" and "no host intervals at all", so
    // merging pairwise is what reaches it.
    let mut bare = d.clone();
    for h in &mut bare.cluster.as_mut().unwrap().hosts {
        for r in &mut h.runs {
            for i in &mut r.intervals {
                i.read.lat_hist.clear();
                i.write.lat_hist.clear();
            }
        }
    }
    let no_buckets = json_bytes(&bare);
    for h in &mut bare.cluster.as_mut().unwrap().hosts {
        for r in &mut h.runs {
            r.intervals.clear();
        }
    }
    let none = json_bytes(&bare);
    fit(&mut d, none + (no_buckets - none) * 6 / 10);
    let after = host_sums(&d, 0);
    assert!(after.0 > 0 && after.0 < before.0, "{} intervals", after.0);
    assert!((before.1 - after.1).abs() < 1e-6, "{before:?} {after:?}");
    assert!(
        (before.2 - after.2).abs() < 1e-6 * before.2,
        "{before:?} {after:?}"
    );
    let note = d.notes.last().unwrap();
    assert!(note.contains("merged pairwise"), "{note}");
}

#[test]
fn a_thinned_result_passes_every_readers_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let mut d = hosts_doc(40, 120);
    // Down to the hosts' histograms: the last of their own detail to go.
    let cap = json_bytes(&d) / 6;
    fit(&mut d, cap);
    let hosts = &d.cluster.as_ref().unwrap().hosts;
    assert!(
        hosts
            .iter()
            .all(|h| h.runs.iter().all(|r| r.histograms_left_out)),
        "the bound took the hosts' histograms too: {}",
        d.notes.last().unwrap()
    );
    let dir = write_result(&tmp.path().join("r"), &d);
    for format in ["md", "csv", "intervals-csv", "json", "fio-json", "html"] {
        let o = volbench()
            .args(["report", dir.to_str().unwrap(), "--format", format])
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "report --format {format}: {}",
            stderr(&o)
        );
    }
    let o = volbench()
        .args(["compare", dir.to_str().unwrap(), dir.to_str().unwrap()])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "compare: {}", stderr(&o));
}

/// A result.json of `runs` runs that are not runs at all (`0`): only a
/// count read before the runs are built can name their number.
fn not_runs(runs: usize, extra: &str) -> Vec<u8> {
    let schema = serde_json::to_value(fixtures::six_patterns()).unwrap()["schema"].clone();
    let list = vec!["0"; runs].join(",");
    format!("{{\"schema\":{schema},{extra}\"runs\":[{list}]}}").into_bytes()
}

/// Too many runs or hosts are refused from a count of the text, before
/// any run is built (a 253 MB file of 20,000 runs took 665 MB to refuse
/// when they were built first; `volbench report` now holds its text).
#[test]
fn too_many_runs_or_hosts_are_refused_before_any_is_built() {
    use volbench::result::check::parse_result;
    use volbench::units::bounds::{MAX_HOSTS, MAX_RUNS};
    let most = MAX_RUNS + 1;
    let e = parse_result(&not_runs(most + 1, "")).unwrap_err();
    assert!(
        e.starts_with(&format!("{} runs, more than {most}", most + 1)),
        "{e}"
    );
    // A latency search's steps are runs of their own: within the bound so
    // counted, the runs are built (and these, not being runs, fail).
    let search = "\"latency_search\":[{\"steps\":[0,0,0]}],";
    let e = parse_result(&not_runs(most + 1, search)).unwrap_err();
    assert!(!e.contains("runs, more than"), "{e}");
    let e = parse_result(&not_runs(most + 4, search)).unwrap_err();
    assert!(
        e.starts_with(&format!("{} runs, more than {}", most + 4, most + 3)),
        "{e}"
    );
    let hosts = vec!["0"; MAX_HOSTS + 1].join(",");
    let cluster = format!("\"cluster\":{{\"hosts\":[{hosts}],\"runs\":[]}},");
    let e = parse_result(&not_runs(1, &cluster)).unwrap_err();
    assert_eq!(e, "a cluster section out of bounds");
}
