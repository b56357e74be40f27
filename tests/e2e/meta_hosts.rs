//! Metadata runs on many hosts (`run --ops --hosts`): one shared tree with
//! a part per host, merged per operation, cleaned as one.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use volbench::error::exit;

use crate::common::hosts::TestHosts;
use crate::common::{read_json, stderr, volbench};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

fn on_hosts(hosts: &str, ssh: &str, target: &Path, out: &Path, extra: &[&str]) -> Output {
    volbench()
        .args(["run", "--hosts", hosts, "--ssh-command", ssh])
        .args(["--remote-volbench", BIN, "--target"])
        .arg(target)
        .arg("--output")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// Regular files below `dir` (the trees' markers left out).
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != ".volbench-tree.json") {
                out.push(p);
            }
        }
    }
    out
}

/// (ops, histogram count) of the one operation of a phase's run.
fn op_counts(run: &Value, op: &str) -> (u64, u64) {
    let o = run["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == op)
        .unwrap_or_else(|| panic!("no {op} in {run}"));
    let counted = o["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[2].as_u64().unwrap())
        .sum();
    (o["totals"]["ops"].as_u64().unwrap(), counted)
}

/// Every host's count of `op`, and the merged count equals their sum.
fn assert_hosts_add_up(doc: &Value, op: &str, per_host: u64, hosts: u64) {
    let merged = op_counts(&doc["runs"][0], op);
    assert_eq!(merged, (per_host * hosts, per_host * hosts), "{op} merged");
    let cluster = doc["cluster"]["hosts"].as_array().unwrap();
    assert_eq!(cluster.len() as u64, hosts);
    for h in cluster {
        assert_eq!(h["status"], "ok", "{h}");
        assert_eq!(
            op_counts(&h["runs"][0], op).0,
            per_host,
            "{op} on {}",
            h["name"]
        );
    }
}

#[test]
fn hosts_share_one_tree_without_collisions_and_delete_empties_it() {
    let Some(h) = TestHosts::up("hosts_share_one_tree_without_collisions", 2) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    // 1 x 4 leaves x 50 files per host, 2 threads each in their own leaves.
    let shape = [
        "--depth",
        "1",
        "--width",
        "4",
        "--files-per-dir",
        "50",
        "--file-size",
        "1k",
        "--threads",
        "2",
    ];
    let phase = |op: &str, out: &Path| {
        let mut a = vec!["--ops", op];
        a.extend_from_slice(&shape);
        let o = on_hosts(&h.list(), &h.ssh_command(), &tree, out, &a);
        assert_eq!(o.status.code(), Some(exit::OK), "{op}: {}", stderr(&o));
        read_json(&out.join("result.json"))
    };
    let doc = phase("create", &tmp.path().join("create"));
    assert_hosts_add_up(&doc, "create", 200, 2);
    // Each host in its own part; every file created exactly once: as many
    // distinct files on disk as creates counted, 200 in each part.
    let mut entries: Vec<String> = std::fs::read_dir(&tree)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, ["host0", "host1"]);
    assert_eq!(files_below(&tree).len(), 400);
    for part in ["host0", "host1"] {
        assert_eq!(files_below(&tree.join(part)).len(), 200, "{part}");
    }
    assert_eq!(doc["spec"]["runs"][0]["meta"]["host_part"], true);

    let doc = phase("delete", &tmp.path().join("delete"));
    assert_hosts_add_up(&doc, "delete", 200, 2);
    assert!(files_below(&tree).is_empty(), "delete leaves no file");

    // `clean` on the shared root removes both parts' skeletons and parts.
    let o = volbench()
        .arg("clean")
        .arg("--target")
        .arg(&tree)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&tree).unwrap().count(), 0);
}

/// Runs the remote command on this machine, like ssh to it would.
const LOCAL_SSH: &str = r#"sh -c 'exec sh -c "$2"' fake"#;

#[test]
fn a_shared_tree_in_a_foreign_directory_or_with_shared_target_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("mine");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("thesis.tex"), b"precious").unwrap();
    let args = ["--ops", "create", "--width", "2", "--files-per-dir", "3"];
    let o = on_hosts("a,b", LOCAL_SSH, &root, &tmp.path().join("o1"), &args);
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(stderr(&o).contains("thesis.tex"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing made beside a foreign file");

    let mut shared = args.to_vec();
    shared.push("--shared-target");
    let o = on_hosts("a,b", LOCAL_SSH, &root, &tmp.path().join("o2"), &shared);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(stderr(&o).contains("--shared-target does not apply to --ops"));
}

#[test]
fn a_target_naming_the_host_gives_each_host_its_own_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "--ops",
        "create",
        "--depth",
        "0",
        "--files-per-dir",
        "7",
        "--threads",
        "1",
    ];
    let out = tmp.path().join("out");
    let o = on_hosts("a,b", LOCAL_SSH, &tmp.path().join("{host}"), &out, &args);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    for h in ["a", "b"] {
        let t = tmp.path().join(h);
        assert!(t.join(".volbench-tree.json").is_file(), "{h} is a tree");
        assert_eq!(files_below(&t).len(), 7, "{h}");
    }
    let doc = read_json(&out.join("result.json"));
    assert_eq!(op_counts(&doc["runs"][0], "create"), (14, 14));
    assert!(doc["spec"]["runs"][0]["meta"].get("host_part").is_none());
}

/// Eight simulated clients (the exec launcher, `VB_SIM_HOST`) on one tree:
/// each works in its own subtree, and every merged figure of every phase is
/// the sum of the hosts' (operations, histogram counts and rates).
#[test]
fn eight_simulated_clients_each_get_a_subtree_and_rates_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    let hosts: Vec<String> = (1..=8).map(|i| format!("sim{i}")).collect();
    let phases = |ops: &str, out: &Path| {
        let o = volbench()
            .args(["run", "--hosts", &hosts.join(",")])
            .args(["--launcher", "env VB_SIM_HOST={host}"])
            .args(["--remote-volbench", BIN, "--target"])
            .arg(&tree)
            .arg("--output")
            .arg(out)
            .args(["--ops", ops, "--depth", "1", "--width", "4"])
            .args([
                "--files-per-dir",
                "25",
                "--file-size",
                "0",
                "--threads",
                "1",
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(exit::OK), "{ops}: {}", stderr(&o));
        let doc = read_json(&out.join("result.json"));
        for (i, op) in ops.split(',').enumerate() {
            assert_rates_add_up(&doc["runs"][i], &doc, i, op);
        }
    };
    phases("create", &tmp.path().join("create"));
    let mut parts: Vec<String> = std::fs::read_dir(&tree)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    parts.sort();
    let want: Vec<String> = (0..8).map(|i| format!("host{i}")).collect();
    assert_eq!(parts, want, "one subtree per client");
    for part in &want {
        assert_eq!(files_below(&tree.join(part)).len(), 100, "{part}");
    }
    phases("stat,delete", &tmp.path().join("delete"));
    assert!(files_below(&tree).is_empty(), "delete leaves no file");
}

/// Run `i` (operation `op`) of `doc`: 8 clients x 100 files, each host's
/// count 100, and the merged rate the sum of the hosts' rates.
fn assert_rates_add_up(run: &Value, doc: &Value, i: usize, op: &str) {
    assert_eq!(
        op_counts(run, op),
        (800, 800),
        "{op}: 8 clients x 100 files"
    );
    let iops = |r: &Value| {
        let o = r["ops"].as_array().unwrap().iter().find(|o| o["op"] == op);
        o.unwrap()["totals"]["iops"].as_f64().unwrap()
    };
    let mut sum = 0.0;
    for h in doc["cluster"]["hosts"].as_array().unwrap() {
        assert_eq!(h["status"], "ok", "{h}");
        assert_eq!(op_counts(&h["runs"][i], op).0, 100, "{op} on {}", h["name"]);
        sum += iops(&h["runs"][i]);
    }
    let merged = iops(run);
    assert!(
        sum > 0.0 && (merged - sum).abs() <= sum * 1e-9,
        "{op}: {merged} merged, {sum} summed"
    );
}
