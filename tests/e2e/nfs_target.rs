//! `volbench run --target nfs://...` against a real server (nfs-ganesha,
//! `common::nfs`), NFSv3 and NFSv4.1: the file set made through the
//! protocol lands in the exported directory with exact sizes, a run's
//! counts are the ones its configuration fixes, N connections per I/O
//! thread are N TCP connections (`ss`), a foreign file is refused and left
//! untouched, `clean` removes only volbench's files, and a bad URL, an
//! unreachable server or a missing export is one line and a non-zero exit
//! before any I/O.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use volbench::error::exit;

use crate::common::nfs::NfsServer;
use crate::common::{stderr, vb};

const VERSIONS: [&str; 2] = ["3", "4.1"];

fn json_of(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("the result as JSON on stdout")
}

/// The files of the set in `dir` on the server's side, by name.
fn set_files(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| {
                    let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                    (e.file_name().to_string_lossy().into_owned(), len)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn ops_bytes(run: &serde_json::Value, dir: &str) -> (u64, u64) {
    let t = &run["totals"][dir];
    (
        t["ops"].as_u64().unwrap_or(0),
        t["bytes"].as_u64().unwrap_or(0),
    )
}

/// Calls and bytes of one operation type in `runs[].protocol`.
fn calls(run: &serde_json::Value, op: &str) -> (u64, u64) {
    run["protocol"]["ops"]
        .as_array()
        .and_then(|o| o.iter().find(|x| x["op"] == op))
        .map_or((0, 0), |x| {
            (
                x["calls"].as_u64().unwrap_or(0),
                x["bytes"].as_u64().unwrap_or(0),
            )
        })
}

#[test]
fn a_write_and_a_randread_run_land_exactly_in_the_exported_directory() {
    let test = "a_write_and_a_randread_run_land_exactly_in_the_exported_directory";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    for v in VERSIONS {
        let name = format!("set-v{v}");
        let url = srv.url(&name, v);
        // Sequential writes of exactly 8 MiB over two 4 MiB files.
        let o = vb(["run", "--target", &url])
            .args([
                "--size", "8m", "--files", "2", "--rw", "write", "--bs", "64k",
            ])
            .args(["--iodepth", "4", "--io-limit", "8m", "--warmup", "0"])
            .args(["--duration", "60s", "--json"])
            .expect(exit::OK);
        let doc = json_of(&o);
        let run = &doc["runs"][0];
        assert_eq!(run["engine"], "nfs", "v{v}");
        assert_eq!(ops_bytes(run, "write"), (128, 8 << 20), "v{v}: writes");
        assert_eq!(ops_bytes(run, "read"), (0, 0), "v{v}");
        // What the client saw: one 64 KiB WRITE call per write.
        assert_eq!(
            calls(run, "WRITE"),
            (128, 8 << 20),
            "v{v}: {}",
            run["protocol"]
        );
        assert_eq!(run["protocol"]["version"], v);
        assert_eq!(run["protocol"]["connections"], 1);
        let dir = srv.export.join(&name);
        let files = set_files(&dir);
        let data: Vec<_> = files
            .iter()
            .filter(|(n, _)| n.ends_with(".dat"))
            .cloned()
            .collect();
        assert_eq!(
            data,
            [
                ("volbench.0.dat".to_string(), 4 << 20),
                ("volbench.1.dat".to_string(), 4 << 20)
            ],
            "v{v}: the set on the server: {files:?}"
        );
        assert!(
            files.iter().any(|(n, _)| n == ".volbench-fileset.json"),
            "v{v}: the marker on the server: {files:?}"
        );
        assert!(
            !files
                .iter()
                .any(|(n, _)| n.contains("lock") || n.ends_with(".tmp")),
            "v{v}: the run's lock and temporaries are gone: {files:?}"
        );
        // Random 4 KiB reads of the same set, reused: 1024 of them, 16 in
        // flight.
        let o = vb(["run", "--target", &url])
            .args([
                "--size", "8m", "--files", "2", "--rw", "randread", "--bs", "4k",
            ])
            .args(["--iodepth", "16", "--io-limit", "4m", "--warmup", "0"])
            .args(["--duration", "60s", "--json"])
            .expect(exit::OK);
        let doc = json_of(&o);
        let run = &doc["runs"][0];
        assert_eq!(ops_bytes(run, "read"), (1024, 4 << 20), "v{v}: reads");
        assert_eq!(
            calls(run, "READ"),
            (1024, 4 << 20),
            "v{v}: {}",
            run["protocol"]
        );
        let read = run["protocol"]["ops"]
            .as_array()
            .and_then(|o| o.iter().find(|x| x["op"] == "READ"))
            .expect("READ");
        let (rtt, exec) = (
            read["rtt_us"]["mean"].as_f64().unwrap_or(0.0),
            read["exec_us"]["mean"].as_f64().unwrap_or(0.0),
        );
        // Execute time holds the round trip: queued no later than sent,
        // completed no earlier than the reply was read.
        assert!(rtt > 0.0 && exec >= rtt, "v{v}: rtt {rtt} exec {exec}");
        assert_eq!(ops_bytes(run, "write"), (0, 0), "v{v}");
        assert_eq!(run["interrupted"], false, "v{v}");
        assert_eq!(run["depth_per_thread"], 16, "v{v}: the queue depth is real");
        assert_eq!(
            doc["fill"]
                .as_array()
                .map(|f| f.iter().all(|x| x["skipped_reused"] == true)),
            Some(true),
            "v{v}: the filled set was reused: {}",
            doc["fill"]
        );
        assert!(
            doc["target"]["path"]
                .as_str()
                .is_some_and(|p| p.starts_with("nfs://")),
            "v{v}: {}",
            doc["target"]
        );
    }
}

#[test]
fn nfs_connections_are_that_many_tcp_connections_per_io_thread() {
    let test = "nfs_connections_are_that_many_tcp_connections_per_io_thread";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let url = srv.url("conns", "4.1");
    let out = tempfile::tempdir().expect("a temporary folder");
    let mut child = vb(["run", "--target", &url])
        .args(["--size", "4m", "--rw", "randread", "--bs", "4k"])
        .args(["--threads", "2", "--iodepth", "4", "--nfs-connections", "3"])
        .args(["--warmup", "0", "--duration", "3s", "--output"])
        .arg(out.path())
        .into_command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("volbench starts");
    // Sampled while it runs: the set-up client's one connection and each
    // I/O thread's three.
    let mut most = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() && Instant::now() < deadline {
        most = most.max(srv.connections());
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = child.wait().expect("volbench ends");
    assert!(status.success(), "{status:?}");
    assert_eq!(most, 1 + 2 * 3, "connections seen by ss at most");
    let doc = crate::common::read_json(&out.path().join("result.json"));
    assert!(
        doc["target"]["path"]
            .as_str()
            .is_some_and(|p| p.contains("nconnect=3")),
        "the result records the connections: {}",
        doc["target"]
    );
}

#[test]
fn a_foreign_file_is_refused_untouched_and_clean_removes_only_ours() {
    let test = "a_foreign_file_is_refused_untouched_and_clean_removes_only_ours";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    for v in VERSIONS {
        // A file of the set's name that volbench did not make.
        let planted = srv.export.join(format!("planted-v{v}"));
        std::fs::create_dir(&planted).unwrap();
        std::fs::write(planted.join("volbench.0.dat"), b"the user's data").unwrap();
        let o = vb(["run", "--target", &srv.url(&format!("planted-v{v}"), v)])
            .args(["--size", "1m", "--rw", "write", "--duration", "1s"])
            .output();
        assert_eq!(o.status.code(), Some(exit::REFUSED), "v{v}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("volbench did not create it"),
            "v{v}: {}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read(planted.join("volbench.0.dat")).unwrap(),
            b"the user's data"
        );
        // A set of ours beside a file of the user's: clean takes ours only.
        let name = format!("mine-v{v}");
        let url = srv.url(&name, v);
        vb(["run", "--target", &url])
            .args([
                "--size",
                "1m",
                "--files",
                "2",
                "--rw",
                "read",
                "--io-limit",
                "64k",
            ])
            .args(["--warmup", "0", "--duration", "10s"])
            .expect(exit::OK);
        let dir = srv.export.join(&name);
        std::fs::write(dir.join("notes.txt"), b"keep me").unwrap();
        let o = vb(["clean", "--target", &url]).expect(exit::OK);
        assert!(
            crate::common::stdout(&o).contains("removed 2 files"),
            "v{v}: {}",
            crate::common::stdout(&o)
        );
        assert_eq!(
            set_files(&dir),
            [("notes.txt".to_string(), 7)],
            "v{v}: only the user's file is left"
        );
    }
}

#[test]
fn quick_on_an_nfs_directory_runs_and_leaves_nothing_behind() {
    let test = "quick_on_an_nfs_directory_runs_and_leaves_nothing_behind";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    std::fs::create_dir(srv.export.join("q")).unwrap();
    let o = vb(["quick", "--dir", &srv.url("q", "3")])
        .args(["--size", "4m", "--duration", "1s"])
        .expect(exit::OK);
    assert!(
        stderr(&o).contains("nfs://") || crate::common::stdout(&o).contains("IOPS"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        set_files(&srv.export.join("q")),
        [],
        "the scratch set is gone"
    );
}

/// A free port on loopback that nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a port")
}

fn one_line_error(o: &std::process::Output) -> String {
    let e = stderr(o);
    let lines: Vec<&str> = e.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {e}");
    lines[0].to_string()
}

#[test]
fn a_bad_url_an_unreachable_server_and_a_wrong_engine_are_one_line_before_io() {
    for (url, why) in [
        ("nfs://127.0.0.1/export/dir?vers=3", "unknown key 'vers'"),
        ("nfs://127.0.0.1", "no export"),
        ("nfs://127.0.0.1/e/../x", "'..'"),
        ("cifs://server/share", "not cifs://"),
    ] {
        let o = vb(["run", "--target", url, "--duration", "1s"]).output();
        assert_eq!(
            o.status.code(),
            Some(exit::BAD_INPUT),
            "{url}: {}",
            stderr(&o)
        );
        let line = one_line_error(&o);
        assert!(line.contains(why), "{url}: {line}");
    }
    // Nothing listens: refused in bounded time, before any I/O.
    let port = closed_port();
    for v in VERSIONS {
        let url = format!("nfs://127.0.0.1/export/dir?version={v}&nfsport={port}&mountport={port}");
        let t0 = Instant::now();
        let o = vb(["run", "--target", &url, "--duration", "1s"]).output();
        assert_eq!(o.status.code(), Some(exit::TARGET), "v{v}: {}", stderr(&o));
        let line = one_line_error(&o);
        assert!(line.contains("cannot reach the NFS target"), "v{v}: {line}");
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "v{v}: {:?}",
            t0.elapsed()
        );
    }
    let url = "nfs://127.0.0.1/export/dir?version=3";
    for (args, why) in [
        (&["--engine", "psync"][..], "nfs engine"),
        // No client cache to drop: a metadata run that asks is refused.
        (&["--ops", "create", "--drop-caches"][..], "--drop-caches"),
    ] {
        let o = vb(["run", "--target", url, "--duration", "1s"])
            .args(args)
            .output();
        assert_eq!(
            o.status.code(),
            Some(exit::BAD_INPUT),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(one_line_error(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
    let o = vb(["run", "--target", "/tmp", "--nfs-connections", "2"]).output();
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(one_line_error(&o).contains("nfs:// target"));
    let o = vb(["run", "--target", url, "--nfs-connections", "65"]).output();
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(one_line_error(&o).contains("1..64"), "{}", stderr(&o));
}

#[test]
fn a_missing_export_is_one_line_before_io() {
    let test = "a_missing_export_is_one_line_before_io";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    for v in VERSIONS {
        let url = format!(
            "nfs://127.0.0.1/no/such/export?version={v}&nfsport={}&mountport={}",
            srv.port, srv.mount_port
        );
        let o = vb(["run", "--target", &url, "--duration", "1s"]).output();
        assert_eq!(o.status.code(), Some(exit::TARGET), "v{v}: {}", stderr(&o));
        let line = one_line_error(&o);
        assert!(line.contains("cannot reach the NFS target"), "v{v}: {line}");
        assert!(line.contains("/no/such/export"), "v{v}: {line}");
    }
}

/// The set's lock over NFS is a file made exclusively: a second run finds
/// it and is refused with its holder named, the user's set untouched; the
/// lock of a run of this host whose process is gone is taken over.
#[test]
fn a_held_lock_refuses_a_second_run_and_a_dead_run_s_is_taken_over() {
    let test = "a_held_lock_refuses_a_second_run_and_a_dead_run_s_is_taken_over";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    // A process that has ended: its pid names no run.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    for v in VERSIONS {
        let name = format!("locked-v{v}");
        let url = srv.url(&name, v);
        let args = ["--size", "1m", "--rw", "write", "--warmup", "0"];
        vb(["run", "--target", &url])
            .args(args)
            .args(["--io-limit", "64k", "--duration", "10s"])
            .expect(exit::OK);
        let dir = srv.export.join(&name);
        let lock = dir.join(".volbench-nfs-lock");
        // Held by a live process of this host (this test).
        std::fs::write(&lock, format!("{} {}\n", host.trim(), std::process::id())).unwrap();
        let o = vb(["run", "--target", &url])
            .args(args)
            .args(["--duration", "1s"])
            .output();
        assert_eq!(o.status.code(), Some(exit::REFUSED), "v{v}: {}", stderr(&o));
        let line = one_line_error(&o);
        assert!(
            line.contains("in use by another run")
                && line.contains(&std::process::id().to_string()),
            "v{v}: {line}"
        );
        assert!(lock.exists(), "v{v}: the holder's lock is left");
        // Left by a run whose process is gone: taken over, and removed at
        // the end.
        std::fs::write(&lock, format!("{} {gone_pid}\n", host.trim())).unwrap();
        vb(["run", "--target", &url])
            .args(args)
            .args(["--io-limit", "64k", "--duration", "10s"])
            .expect(exit::OK);
        assert!(
            !lock.exists(),
            "v{v}: the stale lock was taken over and removed"
        );
    }
}

/// `--live-csv` of a run on an `nfs://` target carries the client's
/// figures in its `protocol_*` columns, after the columns a local run has:
/// the parts' bytes add up to every byte the run moved (a fixed
/// `--io-limit`), each interval with calls has its round-trip and execute
/// means, and a total row leaves them empty.
#[test]
fn the_live_csv_of_an_nfs_run_has_the_clients_columns() {
    let test = "the_live_csv_of_an_nfs_run_has_the_clients_columns";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let local_csv = tmp.path().join("local.csv");
    let o = vb(["run", "--target"])
        .arg(tmp.path().join("set"))
        .args([
            "--size",
            "1m",
            "--engine",
            "null",
            "--duration",
            "1s",
            "--warmup",
            "0",
        ])
        .arg("--live-csv")
        .arg(&local_csv)
        .args(["--json"])
        .output();
    assert!(o.status.success(), "{}", stderr(&o));
    let local_head = std::fs::read_to_string(&local_csv)
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(!local_head.contains("protocol"), "{local_head}");
    let url = srv.url("csv", "3");
    let csv_path = tmp.path().join("live.csv");
    let o = vb(["run", "--target", &url])
        .args([
            "--size",
            "8m",
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--iodepth",
            "4",
        ])
        .args(["--io-limit", "4m", "--warmup", "0", "--duration", "120s"])
        .args(["--interval", "200ms", "--json"])
        .arg("--live-csv")
        .arg(&csv_path)
        .output();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = &json_of(&o)["runs"][0];
    let moved = ops_bytes(run, "read").1 + ops_bytes(run, "write").1;
    assert_eq!(moved, 4 << 20);
    let mut r = csv::Reader::from_path(&csv_path).expect("the CSV");
    let names: Vec<String> = r
        .headers()
        .expect("a header")
        .iter()
        .map(str::to_string)
        .collect();
    assert_eq!(
        names.join(",").strip_suffix(
            ",protocol_calls,protocol_bytes,protocol_rtt_us_mean,protocol_exec_us_mean,\
             protocol_errors,protocol_retrans,protocol_timeouts,protocol_reconnects"
        ),
        Some(local_head.as_str()),
        "the local columns, then the protocol's"
    );
    let col = |n: &str| names.iter().position(|x| x == n).expect(n);
    let (scope, calls, bytes) = (col("scope"), col("protocol_calls"), col("protocol_bytes"));
    let (rtt, exec) = (col("protocol_rtt_us_mean"), col("protocol_exec_us_mean"));
    let mut sum = 0u64;
    let mut with_calls = 0;
    for rec in r.records() {
        let rec = rec.expect("a row");
        assert_eq!(rec.len(), names.len());
        if &rec[scope] == "total" {
            assert_eq!(&rec[calls], "", "a total row has no client: {rec:?}");
            continue;
        }
        sum += rec[bytes].parse::<u64>().expect("bytes");
        if rec[calls].parse::<u64>().expect("calls") > 0 {
            with_calls += 1;
            let (t, e): (f64, f64) = (
                rec[rtt].parse().expect("rtt"),
                rec[exec].parse().expect("exec"),
            );
            assert!(t > 0.0 && e >= t, "rtt {t} µs, exec {e} µs: {rec:?}");
        }
    }
    assert_eq!(sum, moved, "every byte moved is in the CSV's intervals");
    assert!(with_calls >= 1);
}

/// The diagnosis reads the client's figures (`runs[].protocol`) for
/// client queueing, server time and an idle connection: a healthy run
/// against a real server, its calls spread over two connections per
/// thread, gets none of them (each of them fires on its own shape in the
/// unit tests of `result::diagnosis::protocol`).
#[test]
fn a_healthy_nfs_run_gets_no_protocol_finding() {
    let test = "a_healthy_nfs_run_gets_no_protocol_finding";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    for v in VERSIONS {
        let url = srv.url(&format!("healthy-v{v}"), v);
        let o = vb(["run", "--target", &url])
            .args(["--size", "8m", "--rw", "randread", "--bs", "4k"])
            .args(["--threads", "2", "--iodepth", "4", "--nfs-connections", "2"])
            .args([
                "--io-limit",
                "32m",
                "--warmup",
                "0",
                "--duration",
                "120s",
                "--json",
            ])
            .output();
        assert!(o.status.success(), "v{v}: {}", stderr(&o));
        let doc = json_of(&o);
        let run = &doc["runs"][0];
        // Enough for every rule to judge: 4 connections, thousands of calls.
        let conns = run["protocol"]["per_connection"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(conns, 4, "v{v}: {}", run["protocol"]);
        assert_eq!(calls(run, "READ").0, 8192, "v{v}");
        let found: Vec<&serde_json::Value> = doc["diagnosis"]
            .as_array()
            .map(|d| d.iter().collect())
            .unwrap_or_default();
        for f in &found {
            assert!(
                !["nfs_queueing", "server_time", "idle_connection"]
                    .contains(&f["kind"].as_str().unwrap_or("")),
                "v{v}: a false finding on a healthy run: {f}"
            );
        }
    }
}
