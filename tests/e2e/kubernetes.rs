//! `--k8s-job`: the hosts as the pods of an Indexed Job. There is no
//! cluster here: a fake `kubectl` first on PATH answers exactly the calls
//! volbench makes (apply from stdin, get pods with their completion index,
//! wait, exec -i POD -- CMD run locally, delete job) and records them, so
//! what a real cluster would be asked is checked; a real cluster is not.

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;
use volbench::error::exit;

use crate::common::{read_json, stderr, vb, volbench, wait_for_stderr_line};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

/// The fake kubectl: every call a line in `calls`, the manifest kept,
/// pods listed out of index order (volbench must sort them), `exec` runs
/// the command here. FAKE_APPLY_FAILS makes the apply fail as an API
/// server refusing the Job would; FAKE_APPLY_HANGS makes it never return,
/// a child of its own holding its output (a credential plugin waiting for
/// a login does that).
const FAKE: &str = r#"#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/calls"
if [ "$1" = "-n" ]; then shift 2; fi
case "$1" in
apply)
  cat > "$dir/manifest.json"
  if [ -n "$FAKE_APPLY_HANGS" ]; then
    sleep 600 & echo $! > "$dir/sleeper"; wait
  fi
  if [ -n "$FAKE_APPLY_FAILS" ]; then
    echo 'error: jobs.batch is forbidden: User "me" cannot create resource "jobs"' >&2
    exit 1
  fi
  sed -n 's/.*"completions":\([0-9]*\).*/\1/p' "$dir/manifest.json" > "$dir/n" ;;
get)
  for a in "$@"; do case "$a" in job-name=*) name=${a#job-name=} ;; esac; done
  i=$(cat "$dir/n")
  while [ "$i" -gt 0 ]; do i=$((i - 1)); echo "$name-$i-fk$i $i"; done ;;
wait) ;;
exec)
  while [ "$1" != "--" ]; do shift; done
  shift
  exec "$@" ;;
delete) ;;
*) echo "fake kubectl: unexpected call: $*" >&2; exit 1 ;;
esac
"#;

/// A directory holding the fake kubectl, and the PATH that finds it first.
fn fake_kubectl(dir: &Path) -> std::ffi::OsString {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let k = bin.join("kubectl");
    std::fs::write(&k, FAKE).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut path = bin.into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

fn calls(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("bin/calls"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

fn ops(run: &Value, op: &str) -> u64 {
    run["totals"][op]["ops"].as_u64().unwrap()
}

#[test]
fn a_k8s_job_runs_one_agent_per_pod_and_is_deleted_at_the_end() {
    let tmp = tempfile::tempdir().unwrap();
    let path = fake_kubectl(tmp.path());
    let o = vb(["run", "--k8s-job", "3", "--k8s-image", "reg.example/vb:1"])
        .args(["--k8s-namespace", "bench", "--remote-volbench", BIN])
        .args(["--k8s-volume", "scratch-rwx:/data"])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .arg("--output")
        .arg(tmp.path().join("out"))
        .args(["--size", "4m", "--buffered", "--interval", "250ms"])
        .args(["--engine", "psync", "--rw", "randrw", "--duration", "1s"])
        .env("PATH", &path)
        .expect(exit::OK);
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("bin/manifest.json")).unwrap(),
    )
    .unwrap();
    let name = m["metadata"]["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("volbench-"), "{name}");
    assert_eq!(m["kind"], "Job");
    assert_eq!(m["metadata"]["namespace"], "bench");
    assert_eq!(m["spec"]["completionMode"], "Indexed");
    assert_eq!(m["spec"]["completions"], 3);
    assert_eq!(m["spec"]["parallelism"], 3);
    assert_eq!(m["spec"]["backoffLimit"], 0);
    assert_eq!(m["spec"]["template"]["spec"]["restartPolicy"], "Never");
    let deadline = m["spec"]["activeDeadlineSeconds"].as_u64().unwrap();
    assert!(deadline > 3600 && deadline < 2 * 3600, "{deadline}");
    assert_eq!(
        m["spec"]["template"]["spec"]["containers"][0]["image"],
        "reg.example/vb:1"
    );
    let pod = &m["spec"]["template"]["spec"];
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        "scratch-rwx"
    );
    // The defaults: a CPU and 512 MiB asked, memory bounded, no CPU
    // limit; one pod per node, so 3 pods are 3 clients.
    let res = &pod["containers"][0]["resources"];
    assert_eq!(res["requests"]["cpu"], "1");
    assert_eq!(res["requests"]["memory"], "512Mi");
    assert_eq!(res["limits"]["memory"], "8Gi");
    assert!(res["limits"].get("cpu").is_none(), "{res}");
    let anti =
        &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(anti["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(
        anti["labelSelector"]["matchLabels"]["volbench/job"],
        name.as_str()
    );
    assert_eq!(
        m["spec"]["template"]["metadata"]["labels"]["volbench/job"],
        name.as_str(),
        "the pods carry the label their anti-affinity selects"
    );
    assert_eq!(
        pod["containers"][0]["volumeMounts"][0]["mountPath"],
        "/data"
    );

    // Per-host results named by pod, in completion-index order; the merge
    // is exactly their sum.
    let doc = read_json(&tmp.path().join("out/result.json"));
    let hosts = doc["cluster"]["hosts"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["name"].as_str().unwrap()).collect();
    let want: Vec<String> = (0..3).map(|i| format!("{name}-{i}-fk{i}")).collect();
    assert_eq!(names, want, "{}", stderr(&o));
    for h in hosts {
        assert_eq!(h["status"], "ok", "{h}");
    }
    for (k, run) in doc["runs"].as_array().unwrap().iter().enumerate() {
        for op in ["read", "write"] {
            let sum: u64 = hosts.iter().map(|h| ops(&h["runs"][k], op)).sum();
            assert_eq!(ops(run, op), sum, "{op}");
        }
        assert!(ops(run, "read") + ops(run, "write") > 0);
    }
    assert!(
        doc["cluster"]["coordinator"]["launch_s"].as_f64().unwrap() > 0.0,
        "the launch time (apply to every agent) is in the result"
    );
    // A target's {host} is the pod's hostname (NAME-INDEX).
    assert!(tmp.path().join(format!("{name}-1/volbench.0.dat")).exists());

    let c = calls(tmp.path());
    assert_eq!(c.first().unwrap(), "-n bench apply -f -", "{c:?}");
    let execs = c
        .iter()
        .filter(|l| l.starts_with("exec -i -n bench "))
        .count();
    assert_eq!(execs, 3, "one kubectl exec per pod: {c:?}");
    assert!(
        c.iter()
            .any(|l| l.starts_with("-n bench wait --for=condition=Ready pod"))
    );
    assert_eq!(
        c.last().unwrap(),
        &format!("-n bench delete job {name} --cascade=background --wait=false --ignore-not-found"),
        "the Job is deleted last: {c:?}"
    );
    assert!(stderr(&o).contains(&format!("Kubernetes Job {name} deleted")));
}

#[test]
fn a_refused_apply_is_one_line_and_nothing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let path = fake_kubectl(tmp.path());
    let o = vb(["run", "--k8s-job", "2", "--k8s-image", "vb:1"])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .args(["--size", "4m", "--duration", "1s"])
        .env("PATH", &path)
        .env("FAKE_APPLY_FAILS", "1")
        .output();
    assert_ne!(o.status.code(), Some(0));
    let err = stderr(&o);
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("kubectl apply") && errors[0].contains("forbidden"),
        "{err}"
    );
    let c = calls(tmp.path());
    assert!(
        !c.iter().any(|l| l.starts_with("exec")),
        "nothing ran: {c:?}"
    );
    assert!(c.last().unwrap().contains("delete job volbench-"), "{c:?}");
    let made: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(made.len(), 1, "no target was made: only bin/");
}

#[test]
fn bad_k8s_options_are_refused_before_any_kubectl_call() {
    let tmp = tempfile::tempdir().unwrap();
    let path = fake_kubectl(tmp.path());
    for (args, want) in [
        (vec!["--k8s-job", "0", "--k8s-image", "i"], "1 to 1024 pods"),
        (
            vec!["--k8s-job", "2000", "--k8s-image", "i"],
            "1 to 1024 pods",
        ),
        (vec!["--k8s-job", "2"], "--k8s-image"),
        (
            vec![
                "--k8s-job",
                "2",
                "--k8s-image",
                "i",
                "--k8s-namespace",
                "Big_NS",
            ],
            "not a Kubernetes name",
        ),
        (
            vec!["--k8s-job", "2", "--k8s-image", "i", "--hosts", "a,b"],
            "cannot be used",
        ),
        (
            vec![
                "--k8s-job",
                "2",
                "--k8s-image",
                "i",
                "--k8s-requests",
                "gpu=1",
            ],
            "not cpu, memory or ephemeral-storage",
        ),
        (
            vec![
                "--k8s-job",
                "2",
                "--k8s-image",
                "i",
                "--k8s-limits",
                "memory=256Mi",
            ],
            "below --k8s-requests memory=512Mi",
        ),
        (vec!["--k8s-requests", "cpu=1"], "--k8s-job"),
    ] {
        let o = vb(["run", "--target", "/tmp/{host}", "--duration", "1s"])
            .args(&args)
            .env("PATH", &path)
            .output();
        assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    assert!(calls(tmp.path()).is_empty(), "{:?}", calls(tmp.path()));
}

#[test]
fn dry_run_prints_the_manifest_and_the_kubectl_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let path = fake_kubectl(tmp.path());
    let o = vb(["run", "--k8s-job", "4", "--k8s-image", "vb:1", "--dry-run"])
        .args(["--target", "/data/{host}", "--duration", "1s"])
        .args(["--k8s-requests", "cpu=2,memory=4Gi", "--k8s-limits", "none"])
        .args(["--k8s-one-per-node", "off"])
        .env("PATH", &path)
        .expect(exit::OK);
    let out = String::from_utf8_lossy(&o.stdout);
    // What the user set, as set: no limits, pods free to share a node.
    assert!(out.contains("\"cpu\": \"2\""), "{out}");
    assert!(out.contains("\"memory\": \"4Gi\""), "{out}");
    assert!(
        !out.contains("\"limits\"") && !out.contains("podAntiAffinity"),
        "{out}"
    );
    assert!(out.contains("\"completionMode\": \"Indexed\""), "{out}");
    assert!(out.contains("\"completions\": 4"), "{out}");
    assert!(out.contains("kubectl apply -f -"), "{out}");
    assert!(out.contains("kubectl wait --for=condition=Ready pod -l job-name=volbench-"));
    assert!(out.contains("--cascade=background --wait=false"), "{out}");
    assert!(calls(tmp.path()).is_empty(), "a dry run calls no kubectl");
}

#[test]
fn a_run_stopped_by_sigint_keeps_its_result_and_deletes_the_job() {
    let tmp = tempfile::tempdir().unwrap();
    let path = fake_kubectl(tmp.path());
    let mut child = volbench()
        .args([
            "run",
            "--k8s-job",
            "2",
            "--k8s-image",
            "vb:1",
            "--remote-volbench",
            BIN,
        ])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .arg("--output")
        .arg(tmp.path().join("out"))
        .args([
            "--size",
            "4m",
            "--buffered",
            "--duration",
            "60s",
            "--warmup",
            "0s",
        ])
        .env("PATH", &path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "[1/1]");
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(exit::INTERRUPTED));
    assert!(tmp.path().join("out/result.json").exists());
    let c = calls(tmp.path());
    assert!(c.last().unwrap().contains("delete job volbench-"), "{c:?}");
}

#[test]
fn a_kubectl_apply_that_never_returns_is_given_up_with_its_children() {
    // Bounded by --host-timeout, at least K8S_MIN_API (10 s), not waited
    // for as long as its credential plugin (here, its sleeper) lives.
    let tmp = tempfile::tempdir().unwrap();
    let path = fake_kubectl(tmp.path());
    let t = std::time::Instant::now();
    let o = vb(["run", "--k8s-job", "2", "--k8s-image", "vb:1"])
        .args(["--host-timeout", "1s"])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .args(["--size", "4m", "--duration", "1s"])
        .env("PATH", &path)
        .env("FAKE_APPLY_HANGS", "1")
        .output();
    assert_eq!(o.status.code(), Some(exit::TARGET), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("kubectl apply: no answer within 10s"),
        "{}",
        stderr(&o)
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(120),
        "{:?}",
        t.elapsed()
    );
    let sleeper = std::fs::read_to_string(tmp.path().join("bin/sleeper")).unwrap();
    let gone = crate::common::hosts::wait_until(std::time::Duration::from_secs(20), || {
        std::fs::read_to_string(format!("/proc/{}/stat", sleeper.trim())).map_or(true, |s| {
            s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'))
        })
    });
    assert!(gone, "the apply's child {} outlived it", sleeper.trim());
    let c = calls(tmp.path());
    assert!(c.last().unwrap().contains("delete job volbench-"), "{c:?}");
}
