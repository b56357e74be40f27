//! A replay across hosts, shown and judged by each host's own part:
//! `--dry-run` lists every host's part as the split deals it (requests,
//! reads and writes, bytes, span, start), and the slow-host finding holds
//! each host against what its part asked, so an uneven share or a later
//! start is not a slow host while a host that fell behind its part is.

use serde_json::json;
use volbench::error::exit;
use volbench::report::fixtures;
use volbench::result::ResultDoc;
use volbench::result::diagnosis::{Kind, diagnose};

use crate::cli_help::p;
use crate::common::*;

const LOCAL_SSH: &str = r#"sh -c 'exec sh -c "$2"' fake"#;

/// 40 requests: host 0's stripe (0..1 MiB) gets 30 reads of 4 KiB, host
/// 1's (1..2 MiB) 10 writes of 8 KiB; the last at 3.9 s.
fn uneven(d: &std::path::Path) -> std::path::PathBuf {
    let mut t =
        String::from("# volbench.trace/v1 sector=512\nissue_ns,complete_ns,op,offset,bytes\n");
    for i in 0..40u64 {
        let (op, off, len) = if i % 4 == 3 {
            ("W", (1 << 20) + i * 8192, 8192)
        } else {
            ("R", i * 4096, 4096)
        };
        t.push_str(&format!("{},,{op},{off},{len}\n", i * 100_000_000));
    }
    let path = d.join("uneven.csv");
    std::fs::write(&path, t).unwrap();
    path
}

fn dry_run(d: &std::path::Path, extra: &[&str]) -> String {
    let o = vb([
        "run",
        "--hosts",
        "a,b",
        "--ssh-command",
        LOCAL_SSH,
        "--target",
        p(&d.join("{host}-t")),
        "--replay",
        p(&uneven(d)),
        "--buffered",
        "--dry-run",
    ])
    .args(extra)
    .expect(exit::OK);
    stdout(&o)
}

#[test]
fn dry_run_lists_each_host_s_part_of_a_replay() {
    let d = tempfile::tempdir().unwrap();
    let out = dry_run(d.path(), &[]);
    let line = |host: &str| {
        out.lines()
            .find(|l| l.contains(&format!("] {host} ")) && l.contains("requests"))
            .unwrap_or_else(|| panic!("no part for {host}: {out}"))
            .to_string()
    };
    let a = line("a");
    assert!(
        a.contains("30 requests: 30 reads (120KiB), 0 writes"),
        "{a}"
    );
    let b = line("b");
    assert!(b.contains("10 requests: 0 reads"), "{b}");
    assert!(b.contains("10 writes (80KiB)"), "{b}");
    assert!(b.contains("starts at +0"), "{b}");
    // `whole`: every host the whole trace, host 1 its offset later.
    let out = dry_run(
        d.path(),
        &["--replay-split", "whole", "--replay-offset", "1500ms"],
    );
    let parts: Vec<&str> = out.lines().filter(|l| l.contains("40 requests")).collect();
    assert_eq!(parts.len(), 2, "{out}");
    assert!(parts[1].contains("starts at +1.5s"), "{out}");
    assert!(!d.path().join("a-t").exists() && !d.path().join("b-t").exists());
}

/// Two hosts that replayed parts of `requests` each, scheduled over
/// `asked` s, taking `took` s, at the trace's times.
fn replayed(requests: [u64; 2], asked: [f64; 2], took: [f64; 2], iops: [f64; 2]) -> ResultDoc {
    let doc = fixtures::multi_host(&iops);
    let mut v = serde_json::to_value(&doc).unwrap();
    for (i, h) in v["cluster"]["hosts"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        for r in h["runs"].as_array_mut().unwrap() {
            r["replay"] = json!({
                "trace": "t.csv", "format": "volbench", "speed": 1.0, "wrap": false,
                "requests": requests[i], "issued": requests[i], "wrapped": 0,
                "trace_s": asked[i], "scheduled_s": asked[i], "ran_s": took[i],
                "late": 0, "late_mean_us": 0.0, "behind_max_us": 0.0
            });
        }
    }
    serde_json::from_value(v).unwrap()
}

fn slow_hosts(doc: &ResultDoc) -> Vec<String> {
    diagnose(doc)
        .into_iter()
        .filter(|f| f.kind == Kind::SlowHost)
        .map(|f| f.message)
        .collect()
}

#[test]
fn an_uneven_share_is_no_slow_host_but_a_host_behind_its_part_is() {
    // Host 2 was dealt a tenth of the requests: a tenth of the IOPS, on time.
    let doc = replayed([9000, 1000], [10.0, 9.8], [10.1, 9.9], [900.0, 100.0]);
    assert_eq!(slow_hosts(&doc), Vec::<String>::new());
    // The same IOPS without a replay is a slow host: the finder still fires.
    let plain = fixtures::multi_host(&[900.0, 100.0]);
    assert!(!slow_hosts(&plain).is_empty());
    // An even share, host 2 taking 25 s over its 10 s part: behind.
    let doc = replayed([5000, 5000], [10.0, 10.0], [10.2, 25.0], [490.0, 200.0]);
    let slow = slow_hosts(&doc);
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert!(slow[0].contains("client-2"), "{}", slow[0]);
    assert!(
        slow[0].contains("kept 40% of the trace's pace"),
        "{}",
        slow[0]
    );
}
