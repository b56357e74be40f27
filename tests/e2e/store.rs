//! The results store on SQLite, as users rely on it: every run kept whole
//! and its figures queryable, history and trend figures exactly the result
//! files', a baseline that gates CI, eight writers at once losing nothing,
//! a writer killed mid-write leaving no half-run, a store copied elsewhere
//! reading the same, and stores that are not ours, newer or damaged
//! refused with one line and left untouched.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::*;
use volbench::error::exit;
use volbench::report::fixtures::{self, RunFixture};
use volbench::result::ResultDoc;
use volbench::spec::Pattern;

/// A result of one 8 KiB random-read workload on `target`, started at
/// `started`, with `iops` and `threads`.
fn result(target: &str, started: &str, iops: f64, threads: u32) -> ResultDoc {
    let mut d = fixtures::doc(
        "client-1",
        &[
            RunFixture::new("8k-random-read", Pattern::Randread, 100, 8 << 10)
                .perf(iops, 32.0e6 / iops)
                .conc(threads, 8),
        ],
    );
    d.started = started.into();
    d.spec.target.path = target.into();
    d
}

fn put(dir: &Path, name: &str, doc: &ResultDoc) -> PathBuf {
    write_result(&dir.join(name), doc)
}

fn import(db: &Path, dirs: &[&Path]) -> std::process::Output {
    vb(["store", "import", "--store"])
        .arg(db)
        .args(dirs)
        .expect(exit::OK)
}

/// A stored run's result.json text, read from the file with SQLite itself.
fn stored_text(db: &Path, id: i64) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    let (codec, bytes): (String, Vec<u8>) = c
        .query_row(
            "SELECT result_codec, result FROM runs WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(codec, "zstd");
    String::from_utf8(zstd::bulk::decompress(&bytes, 1 << 28).unwrap()).unwrap()
}

fn count(db: &Path, table: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

fn integrity(db: &Path) -> String {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

fn history_json(db: &Path, extra: &[&str]) -> serde_json::Value {
    let o = vb(["history", "--json", "--store"])
        .arg(db)
        .args(extra)
        .expect(exit::OK);
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[test]
fn history_lists_stored_runs_with_the_result_files_exact_figures() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.db");
    let a = put(
        d.path(),
        "a",
        &result("/mnt/a", "2026-03-01T10:00:00.000Z", 12_000.0, 4),
    );
    let b = put(
        d.path(),
        "b",
        &result("/mnt/a", "2026-03-02T10:00:00.000Z", 11_000.0, 4),
    );
    let mut six = fixtures::six_patterns();
    six.started = "2026-03-03T10:00:00.000Z".into();
    six.spec.target.path = "/mnt/b".into();
    six.spec.suite = Some(volbench::spec::SuiteMeta {
        name: "six-patterns".into(),
        table: volbench::spec::TableKind::Patterns,
    });
    let c = put(d.path(), "c", &six);
    let o = import(&db, &[&a, &b, &c]);
    assert!(stdout(&o).contains("store:3\timport"), "{}", stdout(&o));

    let h = history_json(&db, &[]);
    assert_eq!(h["schema"], "volbench.history/v1");
    let runs = h["runs"].as_array().unwrap();
    let ids: Vec<i64> = runs.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [3, 2, 1], "newest first");
    // The figures are the result files' own: the first run's totals, and
    // p99 from its merged histogram, as every view of the result takes it.
    for (row, file) in runs.iter().zip([&c, &b, &a]) {
        let doc = volbench::output::read_result(file).unwrap();
        let first = &doc.runs[0];
        assert_eq!(row["iops"].as_f64().unwrap(), first.total_iops());
        assert_eq!(row["mib_s"].as_f64().unwrap(), first.total_mib_s());
        assert_eq!(row["p99_us"].as_f64().unwrap(), first.latency().p99);
        assert_eq!(row["headline"], first.name.as_str());
    }
    assert_eq!(runs[0]["workloads"], 6);
    assert_eq!(runs[0]["suite"], "six-patterns");

    let only = |args: &[&str]| -> Vec<i64> {
        history_json(&db, args)["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(only(&["--target", "/mnt/a"]), [2, 1]);
    assert_eq!(only(&["--target", "/mnt/*"]), [3, 2, 1]);
    assert_eq!(only(&["--suite", "six-patterns"]), [3]);
    assert_eq!(only(&["--since", "2026-03-02"]), [3, 2]);
    assert_eq!(only(&["--limit", "1"]), [3]);

    // The same result again is the run already there, not a second one.
    let o = import(&db, &[&a]);
    assert!(
        stdout(&o).contains("store:1\talready stored"),
        "{}",
        stdout(&o)
    );
    assert_eq!(count(&db, "runs"), 3);
    // Kept whole: the stored text is the file's, byte for byte.
    assert_eq!(
        stored_text(&db, 1),
        std::fs::read_to_string(a.join("result.json")).unwrap()
    );
    // Rows: six workloads' per-op totals, each interval of each.
    let six_ops: i64 = six.runs.iter().map(|r| r.ops().len() as i64).sum();
    let c2 = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c2
        .query_row("SELECT count(*) FROM op_totals WHERE run_id = 3", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, six_ops);
    let iv: i64 = c2
        .query_row("SELECT count(*) FROM intervals WHERE run_id = 3", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(
        iv,
        six.runs
            .iter()
            .map(|r| r.intervals.len() as i64)
            .sum::<i64>()
    );

    let o = vb(["history", "--store"]).arg(&db).expect(exit::OK);
    assert!(stdout(&o).contains("six-patterns"), "{}", stdout(&o));
    let bad = vb(["history", "--limit", "0", "--store"])
        .arg(&db)
        .expect(exit::BAD_INPUT);
    assert!(stderr(&bad).contains("--limit"), "{}", stderr(&bad));
}

#[test]
fn a_real_run_is_kept_whole_and_read_back_as_a_store_reference() {
    let d = tempfile::tempdir().unwrap();
    let (db, out, target) = (
        d.path().join("s.db"),
        d.path().join("out"),
        d.path().join("t"),
    );
    let o = vb(["run", "--target"])
        .arg(&target)
        .args([
            "--size",
            "4m",
            "--duration",
            "300ms",
            "--warmup",
            "0",
            "--interval",
            "100ms",
        ])
        .arg("--output")
        .arg(&out)
        .arg("--store")
        .arg(&db)
        .expect(exit::OK);
    assert!(stderr(&o).contains("stored: store:1 in"), "{}", stderr(&o));
    assert_eq!(
        stored_text(&db, 1),
        std::fs::read_to_string(out.join("result.json")).unwrap()
    );
    // A report of the stored run is the report of its file.
    let html = d.path().join("r.html");
    vb(["report", "store:latest", "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&html)
        .expect(exit::OK);
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    let o = vb(["report", "store:1", "--format", "csv", "--store"])
        .arg(&db)
        .expect(exit::OK);
    let direct = vb(["report", "--format", "csv"]).arg(&out).expect(exit::OK);
    let strip = |o: &std::process::Output| {
        stdout(o)
            .lines()
            .map(|l| l.rsplit_once(',').map_or(l, |x| x.0).to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&o), strip(&direct), "the same figures, sources aside");
    // Storing the output directory again finds the same run.
    let o = import(&db, &[&out]);
    assert!(
        stdout(&o).contains("store:1\talready stored"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_store_that_cannot_be_used_is_refused_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("t");
    let o = vb(["run", "--target"])
        .arg(&target)
        .args([
            "--size",
            "1m",
            "--duration",
            "100ms",
            "--store",
            "/dev/null",
        ])
        .expect(exit::REFUSED);
    assert!(
        stderr(&o).contains("/dev/null: not a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(!target.exists(), "no I/O before the store was checked");
    let o = vb(["run", "--target"])
        .arg(&target)
        .args([
            "--size",
            "1m",
            "--duration",
            "100ms",
            "--store",
            "mysql://h/db",
        ])
        .expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("'mysql://' is not a store"),
        "{}",
        stderr(&o)
    );
    assert!(!target.exists());
}

#[test]
fn eight_processes_writing_at_once_lose_no_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("busy.db");
    // Each a many-host result, so the writes take long enough to overlap.
    let dirs: Vec<PathBuf> = (0..8)
        .map(|i| {
            let iops: Vec<f64> = (0..64).map(|h| 1000.0 + (i * 64 + h) as f64).collect();
            let mut doc = fixtures::multi_host(&iops);
            doc.started = format!("2026-04-0{}T00:00:00.000Z", i + 1);
            put(d.path(), &format!("r{i}"), &doc)
        })
        .collect();
    let children: Vec<_> = dirs
        .iter()
        .map(|dir| {
            volbench()
                .args(["store", "import", "--store"])
                .arg(&db)
                .arg(dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    }
    assert_eq!(count(&db, "runs"), 8);
    assert_eq!(count(&db, "hosts"), 8 * 64);
    assert_eq!(integrity(&db), "ok");
    let h = history_json(&db, &[]);
    assert_eq!(h["runs"].as_array().unwrap().len(), 8);
}

#[test]
fn a_writer_killed_mid_write_leaves_no_half_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("k.db");
    let first = put(
        d.path(),
        "first",
        &result("/mnt/a", "2026-05-01T00:00:00.000Z", 9000.0, 4),
    );
    import(&db, &[&first]);
    let big = put(d.path(), "big", &fixtures::multi_host(&vec![2000.0; 200]));
    // The debug build's hook holds the write open, rows inserted and not
    // committed, until its stdin closes: it is killed there.
    let mut child = volbench()
        .args(["store", "import", "--store"])
        .arg(&db)
        .arg(&big)
        .env("VOLBENCH_STORE_TEST_HOLD", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "volbench: store: holding the write open");
    child.kill().unwrap();
    child.wait().unwrap();
    // The killed writer's rows are gone; the run before it is whole.
    assert_eq!(integrity(&db), "ok");
    for (table, n) in [
        ("runs", 1),
        ("workloads", 1),
        ("hosts", 0),
        ("host_totals", 0),
    ] {
        assert_eq!(count(&db, table), n, "{table}");
    }
    let h = history_json(&db, &[]);
    assert_eq!(h["runs"].as_array().unwrap().len(), 1);
    // And the store takes the same result afterwards.
    let o = import(&db, &[&big]);
    assert!(stdout(&o).contains("store:2\timport"), "{}", stdout(&o));
}

#[test]
fn a_store_copied_elsewhere_reads_the_same() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("orig.db");
    let a = put(
        d.path(),
        "a",
        &result("/mnt/a", "2026-06-01T00:00:00.000Z", 7000.0, 4),
    );
    let b = put(
        d.path(),
        "b",
        &result("/mnt/a", "2026-06-02T00:00:00.000Z", 7100.0, 4),
    );
    import(&db, &[&a, &b]);
    vb(["baseline", "set", "1", "--store"])
        .arg(&db)
        .expect(exit::OK);
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("copied.db");
    // A plain copy of the one file, as scp would make it.
    std::fs::copy(&db, &copy).unwrap();
    assert!(!Path::new(&format!("{}-wal", db.display())).exists());
    let strip = |v: serde_json::Value| v["runs"].clone();
    assert_eq!(
        strip(history_json(&db, &[])),
        strip(history_json(&copy, &[]))
    );
    let o = vb(["baseline", "list", "--store"])
        .arg(&copy)
        .expect(exit::OK);
    assert!(
        stdout(&o).starts_with("store:1\ttarget /mnt/a, no suite"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        stored_text(&copy, 2),
        std::fs::read_to_string(b.join("result.json")).unwrap()
    );
    // The copy takes new runs too.
    let c = put(
        d.path(),
        "c",
        &result("/mnt/a", "2026-06-03T00:00:00.000Z", 7200.0, 4),
    );
    import(&copy, &[&c]);
    assert_eq!(count(&copy, "runs"), 3);
    assert_eq!(count(&db, "runs"), 2);
}

#[test]
fn stores_that_are_not_ours_newer_or_damaged_are_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    let a = put(
        d.path(),
        "a",
        &result("/mnt/a", "2026-07-01T00:00:00.000Z", 5000.0, 4),
    );
    let refused = |db: &Path, code: i32, says: &str| {
        let before = std::fs::read(db).ok();
        let o = vb(["history", "--store"]).arg(db).expect(code);
        let e = stderr(&o);
        assert!(e.contains(says), "{says:?} not in {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert_eq!(
            std::fs::read(db).ok(),
            before,
            "{} was changed",
            db.display()
        );
    };
    // Not a database at all.
    let junk = d.path().join("junk.db");
    std::fs::write(&junk, vec![0x5a; 8192]).unwrap();
    refused(&junk, exit::BAD_INPUT, "not a volbench store");
    let o = vb(["store", "import", "--store"])
        .arg(&junk)
        .arg(&a)
        .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("not a volbench store"));
    // Someone else's SQLite database.
    let foreign = d.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE customers (id INTEGER)")
        .unwrap();
    refused(&foreign, exit::REFUSED, "not a volbench store");
    // A store of a newer schema.
    let newer = d.path().join("newer.db");
    import(&newer, &[&a]);
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch("UPDATE volbench_store SET value = '99' WHERE key = 'schema'")
        .unwrap();
    refused(
        &newer,
        exit::BAD_INPUT,
        "a store of schema 99, written by a newer volbench",
    );
    // A store damaged past its first page.
    let damaged = d.path().join("damaged.db");
    import(&damaged, &[&a]);
    let mut bytes = std::fs::read(&damaged).unwrap();
    let page = 4096;
    assert!(bytes.len() > 2 * page);
    for b in &mut bytes[page..] {
        *b = 0xa5;
    }
    std::fs::write(&damaged, &bytes).unwrap();
    refused(&damaged, exit::BAD_INPUT, "damaged");
    // Links: the store, and the names SQLite makes beside it.
    let real = d.path().join("real.db");
    import(&real, &[&a]);
    let link = d.path().join("link.db");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = vb(["history", "--store"]).arg(&link).expect(exit::REFUSED);
    assert!(stderr(&o).contains("a symbolic link"), "{}", stderr(&o));
    let hard = d.path().join("hard.db");
    std::fs::hard_link(&real, &hard).unwrap();
    let o = vb(["history", "--store"]).arg(&hard).expect(exit::REFUSED);
    assert!(stderr(&o).contains("2 hard links"), "{}", stderr(&o));
    std::fs::remove_file(&hard).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "not yours").unwrap();
    let wal = PathBuf::from(format!("{}-wal", real.display()));
    std::os::unix::fs::symlink(&victim, &wal).unwrap();
    let o = vb(["store", "import", "--store"])
        .arg(&real)
        .arg(&a)
        .expect(exit::REFUSED);
    assert!(
        stderr(&o).contains("-wal: a symbolic link"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "not yours");
    // A store owned by another user is not written into.
    if is_root() {
        let other = d.path().join("other.db");
        import(&other, &[&a]);
        std::os::unix::fs::chown(&other, Some(65534), None).unwrap();
        let o = vb(["history", "--store"]).arg(&other).expect(exit::REFUSED);
        assert!(stderr(&o).contains("owned by uid 65534"), "{}", stderr(&o));
    }
    // Absent: said, and not made by a reader.
    let none = d.path().join("none.db");
    let o = vb(["history", "--store"])
        .arg(&none)
        .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("no store there"), "{}", stderr(&o));
    assert!(!none.exists());
}

#[test]
fn a_baseline_gates_a_ci_job() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("ci.db");
    let base = put(
        d.path(),
        "base",
        &result("/mnt/ci", "2026-08-01T00:00:00.000Z", 10_000.0, 4),
    );
    import(&db, &[&base]);
    let o = vb(["baseline", "set", "store:1", "--store"])
        .arg(&db)
        .expect(exit::OK);
    assert_eq!(
        stdout(&o).trim(),
        "baseline of target /mnt/ci, no suite: store:1"
    );
    // Tonight's run, 20% slower: the gate trips with exit 6.
    let slow = put(
        d.path(),
        "slow",
        &result("/mnt/ci", "2026-08-02T00:00:00.000Z", 8_000.0, 4),
    );
    let o = vb([
        "compare",
        "--against",
        "baseline",
        "--fail-below",
        "0.9",
        "-o",
        "-",
    ])
    .arg(&slow)
    .arg("--store")
    .arg(&db)
    .expect(exit::REGRESSION);
    assert!(stdout(&o).contains("store:1"), "{}", stdout(&o));
    // Within 10%: passes. The stored run compares as well as its directory.
    let ok = put(
        d.path(),
        "ok",
        &result("/mnt/ci", "2026-08-03T00:00:00.000Z", 9_500.0, 4),
    );
    import(&db, &[&ok]);
    vb([
        "compare",
        "--against",
        "baseline",
        "--fail-below",
        "0.9",
        "-o",
        "-",
        "store:latest",
    ])
    .arg("--store")
    .arg(&db)
    .expect(exit::OK);
    // Another target has no baseline: said by name.
    let other = put(
        d.path(),
        "other",
        &result("/mnt/x", "2026-08-04T00:00:00.000Z", 1.0e4, 4),
    );
    let o = vb(["compare", "--against", "baseline", "-o", "-"])
        .arg(&other)
        .arg("--store")
        .arg(&db)
        .expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("no baseline for target /mnt/x"),
        "{}",
        stderr(&o)
    );
    vb(["baseline", "set", "9", "--store"])
        .arg(&db)
        .expect(exit::BAD_INPUT);
}

#[test]
fn the_trend_draws_each_stored_run_and_marks_changed_conditions() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("t.db");
    let runs = [
        ("2026-09-01T00:00:00.000Z", 10_000.0, 4),
        ("2026-09-02T00:00:00.000Z", 10_400.0, 4),
        ("2026-09-03T00:00:00.000Z", 15_000.0, 8),
    ];
    let dirs: Vec<PathBuf> = runs
        .iter()
        .enumerate()
        .map(|(i, (at, iops, threads))| {
            put(
                d.path(),
                &format!("r{i}"),
                &result("/mnt/t", at, *iops, *threads),
            )
        })
        .collect();
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    import(&db, &refs);
    let html = d.path().join("trend.html");
    vb(["report", "--trend", "--target", "/mnt/t", "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&html)
        .expect(exit::OK);
    let page = std::fs::read_to_string(&html).unwrap();
    // (The page escapes '/' as HTML allows.)
    assert!(
        page.contains("Trend: 8k-random-read on "),
        "no trend section"
    );
    // Each stored run's IOPS and p99, exactly as its result file has them.
    for (i, dir) in dirs.iter().enumerate() {
        let doc = volbench::output::read_result(dir).unwrap();
        let r = &doc.runs[0].totals.read;
        let row = format!(
            "<td>store:{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">-</td>\
             <td class=\"num\">{}</td>",
            i + 1,
            doc.started,
            volbench::output::fmt::number(r.iops),
            volbench::output::fmt::micros(r.lat_us.p99),
        );
        assert!(page.contains(&row), "no row {row}");
    }
    // The first two ran 4 threads, the newest 8: marked, and said why.
    assert!(
        page.matches("threads: 4 (newest 8)").count() >= 2,
        "no mark"
    );
    assert!(page.contains("conditions differ"));
    // --since keeps the later runs only.
    vb([
        "report",
        "--trend",
        "--target",
        "/mnt/t",
        "--since",
        "2026-09-02",
        "--store",
    ])
    .arg(&db)
    .arg("-o")
    .arg(&html)
    .expect(exit::OK);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<td>store:1</td>") && page.contains("<td>store:2</td>"));
    let o = vb(["report", "--trend", "--target", "/mnt/none", "--store"])
        .arg(&db)
        .arg("-o")
        .arg(&html)
        .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("no run in"), "{}", stderr(&o));
}

#[test]
fn fio_json_output_is_imported_with_fios_own_counts() {
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip("fio_json_output_is_imported", "fio is not installed");
    }
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("data");
    let json = d.path().join("fio.json");
    let o = std::process::Command::new("fio")
        .args([
            "--name=fio-randrw",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
        ])
        .arg(format!("--filename={}", file.display()))
        .args([
            "--size=4m",
            "--io_size=8m",
            "--ioengine=psync",
            "--numjobs=1",
        ])
        .args(["--output-format=json"])
        .arg(format!("--output={}", json.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let db = d.path().join("fio.db");
    let o = import(&db, &[&json]);
    assert!(stdout(&o).contains("store:1\tfio"), "{}", stdout(&o));
    let fio = read_json(&json);
    let stored: serde_json::Value = serde_json::from_str(&stored_text(&db, 1)).unwrap();
    let run = &stored["runs"][0];
    assert_eq!(run["name"], "fio-randrw");
    assert_eq!(run["workload"]["read_pct"], 70);
    for dir in ["read", "write"] {
        let f = &fio["jobs"][0][dir];
        assert_eq!(run["totals"][dir]["ops"], f["total_ios"], "{dir} ops");
        assert_eq!(run["totals"][dir]["bytes"], f["io_bytes"], "{dir} bytes");
        assert_eq!(histogram_count(run, dir), f["total_ios"].as_u64().unwrap());
        let p99 = f["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap() / 1000.0;
        assert_eq!(run["totals"][dir]["lat_us"]["p99"].as_f64().unwrap(), p99);
    }
    // A file that is neither is refused by name; the rest still go in.
    let junk = d.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let o = vb(["store", "import", "--store"])
        .arg(&db)
        .arg(&junk)
        .arg(&json)
        .expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("junk.json: neither a volbench result"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("store:1\talready stored"),
        "{}",
        stdout(&o)
    );
}

/// Not a test: writes bench/store.sh's inputs into $VOLBENCH_BENCH_OUT
/// (a 1,000-host result of 600 intervals per run, and 10,000 one-run
/// results), run by the script with --ignored.
#[test]
#[ignore]
fn store_bench_inputs() {
    let Some(out) = std::env::var_os("VOLBENCH_BENCH_OUT") else {
        return;
    };
    let out = PathBuf::from(out);
    let iops: Vec<f64> = (0..1000).map(|h| 2000.0 + h as f64).collect();
    // As a run would write it: held to what report and store read back.
    let mut big = fixtures::multi_host_intervals(&iops, 600);
    volbench::result::thin::fit(&mut big, volbench::output::MAX_RESULT_BYTES - (64 << 10));
    write_result(&out.join("big"), &big);
    for i in 0..10_000u32 {
        let mut d = fixtures::doc(
            "client-1",
            &[{
                let mut f = RunFixture::new("8k-random-read", Pattern::Randread, 100, 8 << 10)
                    .perf(10_000.0 + i as f64, 200.0);
                f.intervals = 2;
                f
            }],
        );
        d.started = format!(
            "2026-{:02}-{:02}T{:02}:{:02}:00.000Z",
            1 + i / 1000,
            1 + (i / 40) % 25,
            (i / 2) % 20,
            i % 60
        );
        d.spec.target.path = format!("/mnt/vol{}", i % 10).into();
        write_result(&out.join("many").join(format!("r{i:05}")), &d);
    }
}
