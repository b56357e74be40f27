//! Many hosts at once: a hundred agents on this machine through the exec
//! launcher (`env VB_SIM_HOST={host}`, the null engine), as
//! `bench/scale.sh` runs a thousand. The merge must be exact, the start
//! together, and a few agents killed mid-run must not cost the others'
//! results under `--on-host-loss continue`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::hosts::{processes_with, wait_until};
use crate::common::{read_json, stderr, volbench, wait_for_stderr_line};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_volbench");
const AGENTS: usize = 100;

/// `volbench run` on `AGENTS` simulated hosts, each a `volbench agent`
/// started here, at 100 IOPS each.
fn many(tmp: &Path, session: &str, duration: &str, extra: &[&str]) -> Command {
    agents(AGENTS, tmp, session, duration, extra)
}

/// Like `many`, with `n` agents.
fn agents(n: usize, tmp: &Path, session: &str, duration: &str, extra: &[&str]) -> Command {
    agents_via("env VB_SIM_HOST={host}", n, tmp, session, duration, extra)
}

/// Like `agents`, started through `launcher`.
fn agents_via(
    launcher: &str,
    n: usize,
    tmp: &Path,
    session: &str,
    duration: &str,
    extra: &[&str],
) -> Command {
    let hosts: Vec<String> = (1..=n).map(|i| format!("sim{i}")).collect();
    let mut c = volbench();
    c.args(["run", "--hosts", &hosts.join(",")])
        .args(["--launcher", launcher, "--remote-volbench", BIN])
        .args(["--session", session, "--target"])
        .arg(tmp.join("{host}"))
        .arg("--output")
        .arg(tmp.join("out"))
        .args(["--engine", "null", "--rw", "randread", "--rate", "100"])
        .args(["--duration", duration, "--warmup", "0", "--interval", "1s"])
        .args(extra);
    c
}

fn ops(run: &Value) -> u64 {
    run["totals"]["read"]["ops"].as_u64().unwrap()
}

/// The merged run holds exactly the surviving hosts' operations, in its
/// totals and its histogram alike.
fn assert_exact(doc: &Value) -> usize {
    let ok: Vec<&Value> = doc["cluster"]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["status"] == "ok")
        .collect();
    let sum: u64 = ok.iter().map(|h| ops(&h["runs"][0])).sum();
    let run = &doc["runs"][0];
    let counted = crate::common::histogram_count(run, "read");
    assert!(sum > 0);
    assert_eq!((ops(run), counted), (sum, sum));
    ok.len()
}

#[test]
fn a_hundred_agents_merge_exactly_and_start_together() {
    let tmp = tempfile::tempdir().unwrap();
    let session = format!("vbscale-exact-{}", std::process::id());
    let o = many(tmp.path(), &session, "2s", &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_eq!(assert_exact(&doc), AGENTS);
    let cr = &doc["cluster"]["runs"][0];
    assert_eq!(cr["hosts_merged"], AGENTS);
    // A hundred agents on one loaded 2-core machine all wake for one
    // instant: each wakes at a real-time priority, so they begin within
    // the issue's 20 ms (measured 0.2 ms; 15.6 ms before, 148 ms in debug).
    let skew = cr["start_skew_ms"].as_f64().unwrap();
    assert!(skew < 20.0, "start skew {skew} ms");
    // The null engine touched no file: nothing was created for any host.
    assert!(!tmp.path().join("sim1").exists());
    assert!(doc["cluster"]["coordinator"]["launch_s"].as_f64().unwrap() > 0.0);
    assert!(processes_with(&session, None).is_empty());
}

/// The agent of simulated host `name`, found by its environment.
fn agent_of(session: &str, name: &str) -> Option<u32> {
    let want = format!("VB_SIM_HOST={name}\0");
    processes_with(session, None)
        .into_iter()
        .find_map(|(pid, _)| {
            let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            String::from_utf8_lossy(&env).contains(&want).then_some(pid)
        })
}

/// Whether process `pid` has set up its I/O thread (it is in the run).
fn in_run(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "vb-io-0")
        })
}

#[test]
fn on_host_loss_continue_finishes_without_five_killed_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let session = format!("vbscale-loss-{}", std::process::id());
    let mut child = many(tmp.path(), &session, "4s", &["--on-host-loss", "continue"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "[1/1]");
    let victims = ["sim3", "sim20", "sim41", "sim66", "sim99"];
    for name in victims {
        let mut pid = None;
        assert!(
            wait_until(Duration::from_secs(30), || {
                pid = agent_of(&session, name).filter(|&p| in_run(p));
                pid.is_some()
            }),
            "{name}'s agent never started its run"
        );
        let pid = pid.unwrap();
        // SAFETY: a signal to a process this test started.
        assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_eq!(assert_exact(&doc), AGENTS - victims.len());
    let cr = &doc["cluster"]["runs"][0];
    assert_eq!(cr["partial"], true);
    assert_eq!(cr["hosts_merged"], AGENTS - victims.len());
    assert_eq!(doc["runs"][0]["interrupted"], false);
    for h in doc["cluster"]["hosts"].as_array().unwrap() {
        let lost = victims.contains(&h["name"].as_str().unwrap());
        assert_eq!(h["status"] == "failed", lost, "{}", h["name"]);
    }
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("the totals are partial, 95 of 100")),
        "{notes:?}"
    );
    assert!(processes_with(&session, None).is_empty());
}

#[test]
fn a_launcher_that_starts_no_agent_is_named_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let o = volbench()
        .args(["run", "--hosts", "a,b", "--launcher", "true {host}"])
        .args(["--remote-volbench", BIN, "--host-timeout", "5s", "--target"])
        .arg(tmp.path().join("{host}"))
        .args(["--engine", "null", "--rw", "randread", "--duration", "1s"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("a, b: cannot start the agent")
            && err.contains("the launcher 'true {host}' ended without starting an agent"),
        "{err}"
    );
    // It ended when the launcher did, not at the host timeout.
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

#[test]
fn a_host_that_never_answers_is_given_up_after_host_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    // The launcher runs but never starts the agent, nor ends.
    let o = volbench()
        .args(["run", "--hosts", "quiet", "--launcher"])
        .arg("sh -c 'exec sleep 1000' {host}")
        .args(["--remote-volbench", BIN, "--host-timeout", "2s", "--target"])
        .arg(tmp.path().join("{host}"))
        .args(["--engine", "null", "--rw", "randread", "--duration", "1s"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("quiet: no hello from the agent within 2s (--host-timeout)"),
        "{err}"
    );
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(6),
        "{took:?}"
    );
}

#[test]
fn a_coordinator_killed_mid_run_leaves_no_agent_running() {
    let tmp = tempfile::tempdir().unwrap();
    let session = format!("vbscale-orphan-{}", std::process::id());
    let n = 10;
    let mut child = agents(n, tmp.path(), &session, "60s", &[])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "[1/1]");
    assert!(
        wait_until(Duration::from_secs(30), || {
            let running = processes_with(&session, Some(child.id()));
            running.len() == n && running.iter().all(|(pid, _)| in_run(*pid))
        }),
        "the agents never all started their run"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // Each agent sees its input close and stops: well before the run's
    // 60 s, and before its own silence timeout would have fired.
    assert!(
        wait_until(Duration::from_secs(10), || processes_with(&session, None)
            .is_empty()),
        "agents left running: {:?}",
        processes_with(&session, None)
    );
}

/// `run` on sim1..sim3 where sim2's agent stops hearing the coordinator
/// the moment its run starts: the launcher passes its input through
/// `sed`, which ends at the start message while the pipe to the agent
/// stays open (the `cat` behind it swallows the rest; a subshell, as braces
/// would be a placeholder). The agent is not
/// killed; after `--host-timeout` of silence it gives up, stops its I/O
/// and sends what it measured, a run cut short that must not merge as if
/// it were whole.
fn one_gives_up(tmp: &Path, session: &str, loss: &str) -> std::process::Output {
    let launcher = r#"env VB_SIM_HOST={host} sh -c 'if [ "$0" = sim2 ]; then (sed -u "/\"type\":\"start\"/q"; cat >/dev/null) | "$@"; else exec "$@"; fi' {host}"#;
    let extra = ["--on-host-loss", loss, "--host-timeout", "2s"];
    agents_via(launcher, 3, tmp, session, "6s", &extra)
        .output()
        .unwrap()
}

/// The host that ended early, by name, failed for that reason.
fn assert_sim2_ended_early(doc: &Value) {
    for h in doc["cluster"]["hosts"].as_array().unwrap() {
        let name = h["name"].as_str().unwrap();
        assert_eq!(h["status"] == "failed", name == "sim2", "{h}");
    }
    let sim2 = &doc["cluster"]["hosts"][1];
    assert!(
        sim2["error"]
            .as_str()
            .is_some_and(|e| e.contains("ended run 0 early on its own")),
        "{sim2}"
    );
}

#[test]
fn a_host_that_gives_up_early_fails_the_run_and_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let session = format!("vbscale-early-fail-{}", std::process::id());
    let o = one_gives_up(tmp.path(), &session, "fail");
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(volbench::error::exit::RUN_FAILED),
        "{err}"
    );
    assert!(
        err.contains("host sim2 failed: ended run 0 early on its own"),
        "{err}"
    );
    // The survivors were stopped, and what they measured until then is kept.
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_sim2_ended_early(&doc);
    assert_eq!(assert_exact(&doc), 2);
    assert_eq!(doc["cluster"]["runs"][0]["hosts_merged"], 2);
    assert!(processes_with(&session, None).is_empty());
}

#[test]
fn a_host_that_gives_up_early_is_left_out_under_continue() {
    let tmp = tempfile::tempdir().unwrap();
    let session = format!("vbscale-early-go-{}", std::process::id());
    let o = one_gives_up(tmp.path(), &session, "continue");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_sim2_ended_early(&doc);
    assert_eq!(assert_exact(&doc), 2);
    let cr = &doc["cluster"]["runs"][0];
    assert_eq!(
        (&cr["partial"], &cr["hosts_merged"]),
        (&Value::Bool(true), &2.into())
    );
    // The two others ran the whole run: nobody stopped them.
    assert_eq!(doc["runs"][0]["interrupted"], false);
    for h in [0, 2] {
        let run = &doc["cluster"]["hosts"][h]["runs"][0];
        assert_eq!(run["interrupted"], false, "{run}");
    }
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("the totals are partial, 2 of 3")),
        "{notes:?}"
    );
    assert!(processes_with(&session, None).is_empty());
}

/// A kB figure of `/proc/PID/status` (`VmRSS`, `RssAnon`).
fn status_kb(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A thousand agents on one machine fit because each holds little of its
/// own: its private memory during a null-engine run (measured 0.6 MB in
/// the release build, 0.85 MB in this debug one) stays under 1.5 MB. It
/// catches growth of the order of a megabyte (an agent once held 8.6 MB
/// private), not the quarter megabyte of histogram pages that the agent's
/// mmap threshold saves (bench/scale.sh shows that one).
#[test]
fn an_agent_holds_little_private_memory_during_a_null_run() {
    let tmp = tempfile::tempdir().unwrap();
    let session = format!("vbscale-rss-{}", std::process::id());
    let mut child = agents(2, tmp.path(), &session, "5s", &[])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "[1/1]");
    let mut pids = Vec::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            pids = processes_with(&session, Some(child.id()));
            pids.len() == 2 && pids.iter().all(|(pid, _)| in_run(*pid))
        }),
        "the agents never started their run"
    );
    for (pid, _) in &pids {
        let private = status_kb(*pid, "RssAnon:").expect("the agent's status");
        assert!(private < 1536, "agent {pid} holds {private} kB private");
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
