//! The results store on PostgreSQL, a team's: a real server (Debian's
//! `postgresql`, started by `common::postgres` on loopback), eight writers
//! at once, a writer killed mid-write, the same history and baselines as
//! SQLite, and the URL's password in no output, result or log.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::postgres::{Cluster, PASSWORD};
use crate::common::*;
use volbench::error::exit;
use volbench::report::fixtures::{self, RunFixture};
use volbench::spec::Pattern;

fn cluster(test: &str) -> Option<Cluster> {
    match Cluster::start() {
        Ok(c) => Some(c),
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

fn result_dir(dir: &Path, name: &str, started: &str, iops: f64) -> PathBuf {
    let mut d = fixtures::doc(
        "client-1",
        &[
            RunFixture::new("8k-random-read", Pattern::Randread, 100, 8 << 10)
                .perf(iops, 32.0e6 / iops),
        ],
    );
    d.started = started.into();
    d.spec.target.path = "/mnt/team".into();
    write_result(&dir.join(name), &d)
}

/// Every byte a command printed, and no password in it.
fn clean(o: &std::process::Output) -> String {
    let all = format!("{}{}", stdout(o), stderr(o));
    assert!(!all.contains(PASSWORD), "the password was printed:\n{all}");
    assert!(
        !all.contains("Sekr1t"),
        "part of the password was printed:\n{all}"
    );
    all
}

#[test]
fn a_team_store_on_postgres_keeps_every_writers_run() {
    let Some(pg) = cluster("a_team_store_on_postgres") else {
        return;
    };
    let url = pg.url("postgres");
    let d = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..8)
        .map(|i| {
            result_dir(
                d.path(),
                &format!("r{i}"),
                &format!("2026-10-0{}T00:00:00.000Z", i + 1),
                10_000.0 + i as f64 * 100.0,
            )
        })
        .collect();
    let children: Vec<_> = dirs
        .iter()
        .map(|dir| {
            volbench()
                .args(["store", "import", "--store", &url])
                .arg(dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        clean(&o);
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    }
    assert_eq!(pg.psql("postgres", "SELECT count(*) FROM runs"), "8");
    assert_eq!(
        pg.psql(
            "postgres",
            "SELECT value FROM volbench_store WHERE key = 'schema'"
        ),
        "1"
    );
    let o = vb(["history", "--json", "--store", &url]).expect(exit::OK);
    clean(&o);
    let h: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        h["store"],
        format!("postgres://volbench@127.0.0.1:{}/postgres", pg.port)
    );
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    // Newest first, each with its result file's figures.
    for (row, dir) in runs.iter().zip(dirs.iter().rev()) {
        let doc = volbench::output::read_result(dir).unwrap();
        assert_eq!(row["iops"].as_f64().unwrap(), doc.runs[0].total_iops());
        assert_eq!(row["p99_us"].as_f64().unwrap(), doc.runs[0].latency().p99);
    }
    // A baseline and the gate, as on SQLite.
    clean(&vb(["baseline", "set", "1", "--store", &url]).expect(exit::OK));
    let slow = result_dir(d.path(), "slow", "2026-10-20T00:00:00.000Z", 5_000.0);
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
    .args(["--store", &url])
    .expect(exit::REGRESSION);
    clean(&o);
    // A real run kept there: its result names the store nowhere.
    let out = d.path().join("out");
    let o = vb(["run", "--target"])
        .arg(d.path().join("t"))
        .args([
            "--size",
            "1m",
            "--duration",
            "200ms",
            "--warmup",
            "0",
            "--store",
            &url,
        ])
        .arg("--output")
        .arg(&out)
        .expect(exit::OK);
    assert!(clean(&o).contains("stored: store:9 in postgres://volbench@127.0.0.1"));
    for f in std::fs::read_dir(&out).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap_or_default();
        assert!(!text.contains(PASSWORD));
    }
}

#[test]
fn postgres_credentials_never_appear_in_output_results_or_logs() {
    let Some(pg) = cluster("postgres_credentials_never_appear") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let r = result_dir(d.path(), "r", "2026-10-01T00:00:00.000Z", 1000.0);
    // The wrong password, a database that is not there, a port no one
    // listens on: each fails with one line that names the store without
    // the password the URL carried.
    let wrong = format!(
        "postgres://volbench:{PASSWORD}x@127.0.0.1:{}/postgres",
        pg.port
    );
    let o = vb(["history", "--store", &wrong]).expect(exit::RUN_FAILED);
    let all = clean(&o);
    assert!(all.contains("postgres://volbench@127.0.0.1"), "{all}");
    assert!(all.contains("password authentication failed"), "{all}");
    let o = vb(["store", "import", "--store", &pg.url("nosuchdb")])
        .arg(&r)
        .output();
    assert_ne!(o.status.code(), Some(exit::OK));
    clean(&o);
    let o = vb([
        "history",
        "--store",
        &format!("postgres://volbench:{PASSWORD}@127.0.0.1:1/x"),
    ])
    .expect(exit::RUN_FAILED);
    clean(&o);
    // PGPASSWORD instead of the URL's.
    let bare = format!("postgres://volbench@127.0.0.1:{}/postgres", pg.port);
    let o = vb(["store", "import", "--store", &bare])
        .arg(&r)
        .env("PGPASSWORD", PASSWORD)
        .expect(exit::OK);
    clean(&o);
    // The server's own log holds no password either.
    let mut logged = String::new();
    for e in walk(&pg.data_dir()) {
        if e.to_string_lossy().contains("log") {
            logged.push_str(&String::from_utf8_lossy(
                &std::fs::read(&e).unwrap_or_default(),
            ));
        }
    }
    assert!(!logged.contains(PASSWORD));
    // A database with tables of its own is not written into.
    pg.psql(
        "postgres",
        "CREATE SCHEMA other; CREATE TABLE other.customers (id int)",
    );
    let o = vb(["history", "--store"])
        .arg(format!(
            "{}?options=-csearch_path%3Dother",
            pg.url("postgres")
        ))
        .expect(exit::REFUSED);
    assert!(clean(&o).contains("not a volbench store"), "{}", stderr(&o));
}

#[test]
fn a_postgres_writer_killed_mid_write_leaves_no_half_run() {
    let Some(pg) = cluster("a_postgres_writer_killed_mid_write") else {
        return;
    };
    let url = pg.url("postgres");
    let d = tempfile::tempdir().unwrap();
    let first = result_dir(d.path(), "first", "2026-10-01T00:00:00.000Z", 3000.0);
    vb(["store", "import", "--store", &url])
        .arg(&first)
        .expect(exit::OK);
    let big = write_result(&d.path().join("big"), &fixtures::multi_host(&[2000.0; 50]));
    let mut child = volbench()
        .args(["store", "import", "--store", &url])
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
    // The server rolls the dropped connection's transaction back; a
    // reader never saw it.
    assert_eq!(pg.psql("postgres", "SELECT count(*) FROM runs"), "1");
    assert_eq!(pg.psql("postgres", "SELECT count(*) FROM hosts"), "0");
    let o = vb(["store", "import", "--store", &url])
        .arg(&big)
        .expect(exit::OK);
    assert!(stdout(&o).contains("\timport\t"), "{}", stdout(&o));
    assert_eq!(pg.psql("postgres", "SELECT count(*) FROM hosts"), "50");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
