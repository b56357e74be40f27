//! The built-in suites expand as their papers describe, and a bad suite
//! file names its line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;
use crate::spec::JobSpec;

mod include;

fn job(name: &str) -> JobSpec {
    let (origin, text) = load(name).unwrap();
    let suite = parse(&origin, &text).unwrap();
    to_job(&origin, &text, &suite, &Overrides::new("/tmp/x".into())).unwrap()
}

#[test]
fn every_built_in_suite_parses_and_validates() {
    for (name, _) in BUILTIN {
        let j = job(name);
        assert!(!j.runs.is_empty(), "{name}");
        assert_eq!(j.suite.as_ref().unwrap().name, name);
    }
}

#[test]
fn six_patterns_has_a_warm_up_run_then_the_six() {
    let j = job("six-patterns");
    let names: Vec<&str> = j.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "warmup-run",
            "8k-random-read",
            "8k-random-write",
            "8k-random-50-50",
            "64k-seq-read",
            "64k-seq-write",
            "64k-seq-50-50"
        ]
    );
    assert!(j.runs[0].discard && !j.runs[1].discard);
    assert_eq!(j.runs[3].read_pct, 50);
    assert_eq!(j.runs[4].bs[0].bytes, 65536);
}

#[test]
fn mix_sweep_steps_by_ten_percent() {
    let j = job("mix-sweep");
    let pcts: Vec<u8> = j
        .runs
        .iter()
        .filter(|r| !r.discard && r.bs[0].bytes == 4096)
        .map(|r| r.read_pct)
        .collect();
    assert_eq!(pcts, [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0]);
    assert_eq!(j.runs.iter().filter(|r| !r.discard).count(), 22);
}

#[test]
fn mix_table_crosses_sizes_and_mixes() {
    let j = job("mix-table");
    let runs: Vec<_> = j.runs.iter().filter(|r| !r.discard).collect();
    assert_eq!(runs.len(), 20);
    assert_eq!(runs[0].name, "random-4KiB-100r");
    assert_eq!(runs[19].name, "sequential-256KiB-0r");
}

#[test]
fn latency_curve_refers_to_its_maximum() {
    let j = job("latency-curve");
    let runs: Vec<_> = j.runs.iter().filter(|r| !r.discard).collect();
    assert_eq!(runs[0].name, "curve-max");
    assert!(runs[0].rate_pct.is_none());
    let pcts: Vec<f64> = runs[1..]
        .iter()
        .map(|r| r.rate_pct.as_ref().unwrap().percent)
        .collect();
    assert_eq!(pcts, [10.0, 50.0, 70.0, 80.0, 90.0, 100.0]);
    assert!(
        runs[1..]
            .iter()
            .all(|r| r.rate_pct.as_ref().unwrap().of == "curve-max")
    );
}

#[test]
fn thread_sweep_doubles_until_the_knee() {
    let j = job("thread-sweep");
    let runs: Vec<_> = j.runs.iter().filter(|r| !r.discard).collect();
    let threads: Vec<u32> = runs.iter().map(|r| r.threads).collect();
    assert_eq!(threads, [1, 2, 4, 8, 16, 32, 64, 128, 256]);
    assert!(
        runs.iter()
            .all(|r| r.stop_rule.as_ref().unwrap().gain_below_pct == Some(5.0))
    );
}

#[test]
fn files_threads_uses_two_file_sets() {
    let j = job("files-threads");
    let files: std::collections::BTreeSet<u32> = j.runs.iter().filter_map(|r| r.files).collect();
    assert_eq!(files.into_iter().collect::<Vec<_>>(), [1, 10]);
    assert_eq!(j.runs.iter().filter(|r| !r.discard).count(), 12);
}

#[test]
fn overrides_replace_defaults_but_not_a_runs_own_values() {
    let (origin, text) = load("thread-sweep").unwrap();
    let suite = parse(&origin, &text).unwrap();
    let o = Overrides {
        threads: Some(vec![3]),
        duration_s: Some(2.0),
        iodepth: Some(vec![2]),
        no_warmup_run: true,
        ..Overrides::new("/tmp/x".into())
    };
    let j = to_job(&origin, &text, &suite, &o).unwrap();
    assert_eq!(j.runs[0].threads, 1, "the sweep's own threads win");
    assert_eq!(j.runs[0].iodepth, 2);
    assert_eq!(j.runs[0].duration_s, 2.0);
    assert!(!j.runs[0].discard, "--no-warmup-run");
}

fn parse_err(text: &str) -> String {
    let r = parse("my.toml", text)
        .and_then(|s| to_job("my.toml", text, &s, &Overrides::new("/tmp/x".into())));
    r.unwrap_err().to_string()
}

#[test]
fn a_bad_suite_names_the_bad_line() {
    let base = "name = \"x\"\ntable = \"patterns\"\n\n[[run]]\nname = \"a\"\n";
    let e = parse_err(&format!("{base}bs = \"12Q\"\n"));
    assert!(
        e.starts_with("my.toml line 6: bs:") && e.contains("12Q"),
        "{e}"
    );
    let e = parse_err(&format!("{base}frobnicate = 1\n"));
    assert!(
        e.starts_with("my.toml line 6:") && e.contains("frobnicate"),
        "{e}"
    );
    let e = parse_err(&format!("{base}read_pct = [100, 150]\nrw = \"randrw\"\n"));
    assert!(
        e.starts_with("my.toml line 6: read_pct") && e.contains("150"),
        "{e}"
    );
    let e = parse_err(&format!("{base}[[run]]\nname = \"b\\u001b[2J\"\n"));
    assert!(
        e.starts_with("my.toml line 7:") && e.contains("control character"),
        "{e}"
    );
    let e = parse_err("name = \"x\\ny\"\ntable = \"patterns\"\n[[run]]\nname = \"a\"\n");
    assert!(
        e.contains("suite name") && e.contains("control character"),
        "{e}"
    );
    let e = parse_err("name = \"x\"\ntable = \"pie\"\n");
    assert!(e.starts_with("my.toml line 2:") && e.contains("pie"), "{e}");
    let e = parse_err("name = \"x\"\ntable = \"patterns\"\n");
    assert!(e.contains("no [[run]]"), "{e}");
    let e = parse_err(&format!("{base}threads = \"1:8:x\"\n"));
    assert!(e.starts_with("my.toml line 6: threads"), "{e}");
    let e = parse_err(
        "name = \"x\"\ntable = \"patterns\"\n[defaults]\nduration = \"soon\"\n[[run]]\nname = \"a\"\n",
    );
    assert!(e.starts_with("my.toml line 4: duration:"), "{e}");
}

#[test]
fn unknown_suite_names_the_built_ins() {
    let e = load("nope").unwrap_err().to_string();
    assert!(
        e.contains("six-patterns") && e.contains("thread-sweep"),
        "{e}"
    );
}

#[test]
fn small_files_passes_are_buffered_beside_a_direct_benchmark() {
    let j = job("small-files");
    assert!(j.target.direct);
    let by = |n: &str| j.runs.iter().find(|r| r.name == n).unwrap();
    let small = by("small-create").meta.as_ref().unwrap();
    assert!(!small.direct);
    // The tree's bytes are the large file's, and what its passes move.
    let bytes = small.total_files() * 3072;
    assert_eq!(j.target.size, bytes);
    for n in ["large-write", "large-read"] {
        assert!(by(n).buffered, "{n}");
        assert_eq!(by(n).io_limit, Some(bytes), "{n}");
    }
    assert!(!by("benchmark-read").buffered);
    assert_eq!(j.suite.as_ref().unwrap().table, TableKind::SmallFiles);
}

#[test]
fn direct_on_a_block_run_takes_true_or_false() {
    let base = "name = \"x\"\ntable = \"patterns\"\n\n[[run]]\nname = \"a\"\n";
    let e = parse_err(&format!("{base}direct = \"no\"\n"));
    assert!(e.contains("line 6") && e.contains("true or false"), "{e}");
}

fn text_job(text: &str) -> JobSpec {
    let s = parse("my.toml", text).unwrap();
    let o = Overrides {
        no_warmup_run: true,
        ..Overrides::new("/tmp/x".into())
    };
    to_job("my.toml", text, &s, &o).unwrap()
}

#[test]
fn a_run_sets_its_own_size_or_sweeps_it_each_a_set_of_its_own() {
    let j = text_job(
        "name = \"x\"\ntable = \"patterns\"\n[defaults]\nsize = \"8m\"\n\
         [[run]]\nname = \"many\"\nfiles = 4\nsize = \"4m\"\n\
         [[run]]\nname = \"one\"\nfiles = 1\nsize = [\"8m\", \"16m\"]\n\
         [[run]]\nname = \"plain\"\n",
    );
    let got: Vec<(&str, u32, u64, String)> = j
        .runs
        .iter()
        .map(|r| {
            let l = j.layout_of(r);
            (r.name.as_str(), l.files, l.file_size(), j.subset_name(&l))
        })
        .collect();
    assert_eq!(
        got,
        [
            ("many", 4, 1 << 20, "files-4-size-4MiB".to_string()),
            ("one-8MiB", 1, 8 << 20, "files-1".to_string()),
            ("one-16MiB", 1, 16 << 20, "files-1-size-16MiB".to_string()),
            ("plain", 1, 8 << 20, "files-1".to_string()),
        ]
    );
    // "plain" takes the suite's size, the same set as "one-8MiB".
    assert_eq!(j.layouts().len(), 3);
}

#[test]
fn a_runs_size_is_bounded_like_the_size_flag_and_named_with_its_line() {
    let base = "name = \"x\"\ntable = \"patterns\"\n\n[[run]]\nname = \"a\"\n";
    for (extra, says) in [
        (
            "size = \"9P\"\n",
            "my.toml line 6: size 9PiB is outside 1B..8PiB",
        ),
        (
            "size = \"0\"\n",
            "my.toml line 6: size 0B is outside 1B..8PiB",
        ),
        ("size = \"1g:4g\"\n", "not given as a range"),
        (
            "size = \"4k\"\nbs = \"64k\"\n",
            "--bs 64KiB is larger than each file (4KiB = --size 4KiB / --files 1)",
        ),
        ("ops = \"create\"\nsize = \"1g\"\n", "size is for block I/O"),
    ] {
        let e = parse_err(&format!("{base}{extra}"));
        assert!(e.contains(says), "{extra}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn a_tree_runs_rate_is_kept_and_is_one_number_of_operations_per_second() {
    let j = text_job(
        "name = \"x\"\ntable = \"ops\"\n\n[[run]]\nname = \"m\"\nops = \"stat:50,create:50\"\n\
         threads = 2\nrate = 500\n",
    );
    assert!(!j.runs.is_empty());
    assert!(
        j.runs.iter().all(|r| r.rate_iops == Some(500.0)),
        "{:?}",
        j.runs
    );
    let base = "name = \"x\"\ntable = \"ops\"\n\n[[run]]\nname = \"m\"\nops = \"create\"\n";
    for (extra, says) in [
        (
            "rate = \"100,200\"\n",
            "my.toml line 7: rate: a run with ops takes one rate",
        ),
        ("rate = \"20MiB/s\"\n", "my.toml line 7"),
        ("rate = 0\n", "my.toml line 7"),
    ] {
        let e = parse_err(&format!("{base}{extra}"));
        assert!(e.contains(says), "{extra}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn a_curve_stops_on_a_percentile_and_a_run_searches_its_latency_target() {
    let curve = "name = \"x\"\ntable = \"curve\"\n\n[[run]]\nname = \"c\"\ncurve = [50, 90]\n";
    let j = text_job(&format!(
        "{curve}curve_stop_latency = \"p99=20ms,read:p50=2ms\"\n"
    ));
    let rule = j.runs[1].stop_rule.as_ref().unwrap();
    assert_eq!(rule.latency_above_us, None);
    assert_eq!(rule.percentile_above.len(), 2);
    assert_eq!(rule.percentile_above[0].limit_us, 20_000.0);
    // The mean, as before.
    let j = text_job(&format!("{curve}curve_stop_latency = \"20ms\"\n"));
    let rule = j.runs[1].stop_rule.as_ref().unwrap();
    assert_eq!(rule.latency_above_us, Some(20_000.0));
    assert!(rule.percentile_above.is_empty());

    let run = "name = \"x\"\ntable = \"curve\"\n\n[[run]]\nname = \"s\"\nrw = \"randrw\"\n";
    let j = text_job(&format!(
        "{run}latency_target = \"p99.9=5ms\"\nsearch_steps = 6\n"
    ));
    let s = j.runs[0].latency_target.as_ref().unwrap();
    assert_eq!((s.limits[0].percentile, s.max_steps), (99.9, 6));
    let j = text_job(&format!("{run}rate_iops = \"300,100\"\n"));
    assert_eq!((j.runs[0].read_pct, j.runs[0].rate_iops), (75, Some(400.0)));
    let j = text_job(&format!("{run}rate_bw = \"30MiB/s,10MiB/s\"\n"));
    let r = &j.runs[0];
    assert_eq!(
        (r.read_pct, r.rate_iops, r.shape.rate_bytes),
        (75, None, Some(40.0 * 1048576.0))
    );
    for (extra, says) in [
        ("rate_bw = \"5MiB,5MiB\"\nread_pct = \"50,70\"\n", "rate_bw"),
        ("rate_bw = \"5MiB\"\n", "--rate-bw '5MiB' takes read,write"),
        (
            "rate_bw = \"5MiB,5MiB\"\nrate = \"100\"\n",
            "--rate-bw and --rate",
        ),
        ("curve_stop_latency = \"p101=2ms\"\n", "my.toml line 7"),
        ("latency_target = \"p0=1ms\"\n", "my.toml line 7"),
        ("search_steps = 5\n", "needs latency_target"),
        ("rate_iops = \"500\"\nread_pct = \"50,70\"\n", "rate_iops"),
    ] {
        let text = if extra.starts_with("curve") {
            format!("{curve}{extra}")
        } else {
            format!("{run}{extra}")
        };
        let e = parse_err(&text);
        assert!(e.contains(says), "{extra}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
