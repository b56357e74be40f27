//! Launchers other than ssh (`--launcher`), host lists from Slurm and from
//! commands, `--push-binary` through them, the static build, and the
//! installing commands (`completions`, `man`, `--version`). Engines are real:
//! `ip netns exec` into namespaces the test makes (no sshd), and a Slurm
//! cluster of two nodes on this machine started by the test.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use volbench::error::exit;

use crate::common::hosts::wait_until;
use crate::common::slurm::Slurm;
use crate::common::{is_root, read_json, skip, stderr, stdout, vb};

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

fn ops(run: &Value, op: &str) -> u64 {
    run["totals"][op]["ops"].as_u64().unwrap()
}

/// Every host finished, and the merged totals are the hosts' added up.
fn assert_hosts_ok_and_summed(doc: &Value, n: usize) {
    let hosts = doc["cluster"]["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), n);
    for h in hosts {
        assert_eq!(h["status"], "ok", "{h}");
    }
    for (k, run) in doc["runs"].as_array().unwrap().iter().enumerate() {
        assert_eq!(run["hosts_merged"].as_u64().unwrap_or(n as u64), n as u64);
        for op in ["read", "write"] {
            let sum: u64 = hosts.iter().map(|h| ops(&h["runs"][k], op)).sum();
            assert_eq!(ops(run, op), sum, "{op} ops");
            let bytes: u64 = hosts
                .iter()
                .map(|h| h["runs"][k]["totals"][op]["bytes"].as_u64().unwrap())
                .sum();
            assert_eq!(run["totals"][op]["bytes"].as_u64().unwrap(), bytes);
        }
        assert!(ops(run, "read") + ops(run, "write") > 0);
    }
}

/// Network namespaces without anything in them: `ip netns exec NAME`
/// is the launcher. Removed on drop.
struct Namespaces(Vec<String>);

impl Namespaces {
    fn up(test: &str, tag: &str, n: usize) -> Option<Self> {
        if !is_root() {
            skip(test, "needs root for network namespaces");
            return None;
        }
        if !ok(Command::new("ip").arg("-V")) {
            skip(test, "ip is missing (install iproute2)");
            return None;
        }
        let names: Vec<String> = (1..=n)
            .map(|i| format!("vbl{tag}{}-{i}", std::process::id()))
            .collect();
        let me = Namespaces(names);
        for ns in &me.0 {
            let _ = ok(Command::new("ip").args(["netns", "del", ns]));
            assert!(ok(Command::new("ip").args(["netns", "add", ns])), "{ns}");
        }
        Some(me)
    }

    fn list(&self) -> String {
        self.0.join(",")
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = ok(Command::new("ip").args(["netns", "del", ns]));
        }
    }
}

fn ok(c: &mut Command) -> bool {
    c.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn job(hosts: &str, launcher: &str, tmp: &Path) -> crate::common::Vb {
    vb(["run", "--hosts", hosts, "--launcher", launcher])
        .arg("--target")
        .arg(tmp.join("{host}"))
        .arg("--output")
        .arg(tmp.join("out"))
        .args(["--size", "4m", "--buffered", "--interval", "250ms"])
        .args(["--engine", "psync", "--rw", "randrw", "--duration", "1s"])
}

#[test]
fn an_exec_launcher_runs_four_hosts_as_argument_vectors() {
    let Some(ns) = Namespaces::up("an_exec_launcher_runs_four_hosts", "e", 4) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    job(&ns.list(), "ip netns exec {host}", tmp.path())
        .args(["--remote-volbench", BIN])
        .expect(exit::OK);
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_hosts_ok_and_summed(&doc, 4);
    assert_eq!(
        doc["cluster"]["ssh_command"], "ip netns exec {host}",
        "the result records how the hosts were reached"
    );
    for n in &ns.0 {
        assert!(tmp.path().join(n).join("volbench.0.dat").exists(), "{n}");
    }
}

/// A fake `docker` first on PATH: `docker exec -i NAME CMD...` runs CMD
/// here, each call a line in `calls` (no daemon runs on this machine).
const FAKE_DOCKER: &str = r#"#!/bin/sh
echo "$*" >> "$(dirname "$0")/calls"
[ "$1" = exec ] && [ "$2" = -i ] || { echo "fake docker: $*" >&2; exit 125; }
shift 3
exec "$@"
"#;

#[test]
fn the_docker_launcher_reaches_containers_by_name() {
    // A launcher added as one file (`remote/launch/docker.rs`) and its
    // line in BUILTIN: nothing else in the coordinator knows it.
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("docker"), FAKE_DOCKER).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("docker"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut path = bin.clone().into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    job("c1,c2", "docker", tmp.path())
        .args(["--remote-volbench", BIN])
        .env("PATH", &path)
        .expect(exit::OK);
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_hosts_ok_and_summed(&doc, 2);
    assert_eq!(
        doc["cluster"]["ssh_command"], "docker (docker exec -i {host})",
        "the result says the launcher and what it stands for"
    );
    let calls = std::fs::read_to_string(bin.join("calls")).unwrap();
    for c in ["c1", "c2"] {
        assert!(
            calls
                .lines()
                .any(|l| l.starts_with(&format!("exec -i {c} {BIN} agent --session "))),
            "{calls}"
        );
    }
}

#[test]
fn push_binary_streams_through_an_exec_launcher() {
    let Some(ns) = Namespaces::up("push_binary_streams_through_an_exec_launcher", "p", 2) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache dir");
    job(&ns.list(), "ip netns exec {host}", tmp.path())
        .arg("--push-binary")
        .arg("--push-dir")
        .arg(&cache)
        .expect(exit::OK);
    assert_hosts_ok_and_summed(&read_json(&tmp.path().join("out/result.json")), 2);
    let pushed: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(pushed.len(), 1, "one content-named copy: {pushed:?}");
    let name = pushed[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("volbench-"), "{name}");
    let copy = std::fs::read(&pushed[0]).unwrap();
    // This binary, or the static build of the same commit beside it.
    assert!(
        copy == std::fs::read(BIN).unwrap()
            || volbench::remote::push::binary::needs_loader(&copy) == Some(false),
        "the pushed file is a volbench"
    );
}

fn error_lines(err: &str) -> usize {
    err.lines().filter(|l| l.contains("error")).count()
}

#[test]
fn a_launcher_that_fails_names_the_host_and_its_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = job(
        "vb-missing-1",
        "/nonexistent/launcher -x {host}",
        tmp.path(),
    )
    .args(["--remote-volbench", BIN])
    .expect(exit::TARGET);
    let err = stderr(&o);
    assert!(
        err.contains("host vb-missing-1: cannot start the launcher '/nonexistent/launcher'")
            && err.contains("No such file"),
        "{err}"
    );
    assert_eq!(error_lines(&err), 1, "{err}");
    if !is_root() {
        skip("a_launcher_that_fails (ip netns)", "needs root");
        return;
    }
    // The launcher starts, then fails: its own words are in the message.
    let o = job("vbl-no-such-ns", "ip netns exec {host}", tmp.path())
        .args(["--remote-volbench", BIN])
        .expect(exit::TARGET);
    let err = stderr(&o);
    assert!(
        err.contains("vbl-no-such-ns") && err.contains("Cannot open network namespace"),
        "{err}"
    );
    assert_eq!(error_lines(&err), 1, "{err}");
    assert!(
        !tmp.path().join("vbl-no-such-ns").exists(),
        "no I/O started"
    );
}

#[test]
fn bad_launchers_and_host_sources_are_refused_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    for (launcher, want) in [
        ("kubectl exec -i {pod} --", "unknown placeholder {pod}"),
        ("", "--launcher is empty"),
        ("docker exec -i {host", "without its '}'"),
    ] {
        let o = job("a,b", launcher, tmp.path()).expect(exit::BAD_INPUT);
        assert!(stderr(&o).contains(want), "{launcher}: {}", stderr(&o));
    }
    let o = vb(["run", "--hosts-from", "sh -c 'echo forbidden >&2; exit 1'"])
        .args(["--launcher", "ip netns exec {host}", "--target"])
        .arg(tmp.path().join("{host}"))
        .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("forbidden"), "{}", stderr(&o));
    let o = job("n[1-2000]", "slurm", tmp.path()).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("at most 1024"), "{}", stderr(&o));
    let o = job("a", "slurm", tmp.path())
        .args(["--ssh-command", "ssh"])
        .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("--ssh-command"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn slurm_lists_and_pod_names_become_hosts() {
    let tmp = tempfile::tempdir().unwrap();
    let o = job("node[01-03],m5", "slurm", tmp.path())
        .arg("--dry-run")
        .expect(exit::OK);
    let out = stdout(&o);
    for h in ["node01", "node02", "node03", "m5"] {
        assert!(out.contains(h), "{h}: {out}");
    }
    assert!(out.contains("srun"), "{out}");
    let o = vb(["run", "--launcher", "kubectl", "--dry-run", "--target"])
        .arg(tmp.path().join("{host}"))
        .args(["--hosts-from", "printf 'pod/vb-0\\npod/vb-1\\n'"])
        .expect(exit::OK);
    let out = stdout(&o);
    assert!(out.contains("vb-0") && out.contains("vb-1"), "{out}");
    assert!(!out.contains("pod/"), "{out}");
    assert!(out.contains("kubectl exec -i {host} --"), "{out}");
}

#[test]
fn version_completions_and_man_page_come_from_the_binary() {
    let v = stdout(&vb(["--version"]).expect(exit::OK));
    assert!(v.starts_with("volbench 0.") && v.contains("commit "), "{v}");
    let bash = stdout(&vb(["completions", "bash"]).expect(exit::OK));
    assert!(
        bash.contains("complete") && bash.contains("--launcher"),
        "bash completion lists the flags"
    );
    for shell in ["zsh", "fish"] {
        let s = stdout(&vb(["completions", shell]).expect(exit::OK));
        assert!(s.contains("hosts-from"), "{shell}");
    }
    vb(["completions", "tcsh"]).expect(exit::BAD_INPUT);
    let man = stdout(&vb(["man"]).expect(exit::OK));
    assert!(man.contains(".TH volbench 1"), "a section 1 roff page");
    assert!(man.contains("completions") && man.contains("Storage benchmark"));
}

/// The static build: from $VOLBENCH_STATIC_BIN (test.sh builds it) or
/// where `cargo build --release --target x86_64-unknown-linux-gnu` puts it.
fn static_binary() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("VOLBENCH_STATIC_BIN") {
        return Some(PathBuf::from(p));
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/x86_64-unknown-linux-gnu/release/volbench");
    p.exists().then_some(p)
}

#[test]
fn the_static_binary_runs_a_job_in_a_root_without_libc() {
    let test = "the_static_binary_runs_a_job_in_a_root_without_libc";
    let Some(bin) = static_binary() else {
        skip(
            test,
            "no static build (test.sh makes one; or set VOLBENCH_STATIC_BIN)",
        );
        return;
    };
    let bytes = std::fs::read(&bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    assert_eq!(
        volbench::remote::push::binary::needs_loader(&bytes),
        Some(false),
        "{} names an ELF interpreter: not static",
        bin.display()
    );
    if !is_root() {
        skip(test, "needs root for chroot");
        return;
    }
    // The root holds the binary, /proc and the target: no libc, no shell.
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(&bin, root.path().join("volbench")).unwrap();
    for d in ["proc", "data"] {
        std::fs::create_dir(root.path().join(d)).unwrap();
    }
    let o = Command::new("unshare")
        .args(["--mount", "--pid", "--fork"])
        .arg(format!(
            "--mount-proc={}",
            root.path().join("proc").display()
        ))
        .arg("chroot")
        .arg(root.path())
        .args(["/volbench", "run", "--target", "/data", "--size", "4m"])
        .args([
            "--duration",
            "500ms",
            "--rw",
            "randrw",
            "--buffered",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("result JSON on stdout");
    assert!(ops(&doc["runs"][0], "read") > 0, "{doc}");
    let v = Command::new(&bin).arg("--version").output().unwrap();
    assert!(stdout(&v).contains("static"), "{}", stdout(&v));
}

#[test]
fn the_slurm_launcher_runs_two_hosts_in_an_allocation() {
    let Some(slurm) = Slurm::up("the_slurm_launcher_runs_two_hosts_in_an_allocation") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // salloc makes the allocation and runs volbench inside it, as a batch
    // script's srun steps would.
    let o = Command::new("salloc")
        .args(["-N2", "-w", "vb1,vb2", "--time=5"])
        .arg(BIN)
        .args(["run", "--launcher", "slurm", "--hosts", "vb[1-2]"])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .arg("--output")
        .arg(tmp.path().join("out"))
        .args(["--size", "4m", "--buffered", "--interval", "250ms"])
        .args(["--engine", "psync", "--rw", "randrw", "--duration", "1s"])
        .args(["--remote-volbench", BIN])
        .env("SLURM_CONF", slurm.conf())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&tmp.path().join("out/result.json"));
    assert_hosts_ok_and_summed(&doc, 2);
    let reached = doc["cluster"]["ssh_command"].as_str().unwrap();
    assert!(
        reached.starts_with("slurm (one srun step: srun"),
        "{reached}"
    );
    assert!(
        stderr(&o).contains("2 agents started in") && stderr(&o).contains("(one srun step)"),
        "{}",
        stderr(&o)
    );
    assert!(doc["cluster"]["coordinator"]["launch_s"].as_f64().unwrap() > 0.0);
    for n in ["vb1", "vb2"] {
        assert!(tmp.path().join(n).join("volbench.0.dat").exists(), "{n}");
    }
}

/// A coordinator a failed assertion must not leave running.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The agents of this test binary's srun step: (pid, task, node) from each
/// agent's environment, as slurmd set it.
fn step_agents() -> Vec<(u32, u32, String)> {
    let mut found = Vec::new();
    for (pid, cmd) in crate::common::hosts::processes_with("--task-env SLURM_PROCID", None) {
        if !cmd.starts_with(BIN) {
            continue;
        }
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let env = String::from_utf8_lossy(&env).into_owned();
        let var = |k: &str| {
            env.split('\0')
                .find_map(|kv| kv.strip_prefix(&format!("{k}=")).map(str::to_string))
        };
        if let (Some(t), Some(node)) = (var("SLURM_PROCID"), var("SLURMD_NODENAME")) {
            found.push((pid, t.parse().unwrap(), node));
        }
    }
    found.sort_by_key(|a| a.1);
    found
}

#[test]
fn one_srun_step_carries_every_agent_and_a_killed_task_is_a_lost_host() {
    let test = "one_srun_step_carries_every_agent_and_a_killed_task_is_a_lost_host";
    let Some(slurm) = Slurm::up(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // vb2 first: task 0 must land on vb2, whatever order Slurm keeps nodes in.
    let coord = Command::new("salloc")
        .args(["-N2", "-w", "vb1,vb2", "--time=5"])
        .arg(BIN)
        .args(["run", "--launcher", "slurm", "--hosts", "vb2,vb1"])
        .arg("--target")
        .arg(tmp.path().join("{host}"))
        .arg("--output")
        .arg(tmp.path().join("out"))
        .args(["--size", "4m", "--buffered", "--interval", "250ms"])
        .args(["--engine", "psync", "--rw", "randrw", "--duration", "10s"])
        .args(["--warmup", "0", "--on-host-loss", "continue"])
        .args(["--remote-volbench", BIN])
        .env("SLURM_CONF", slurm.conf())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut coord = KillOnDrop(coord);
    let err = coord.0.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut { err }, &mut s).unwrap();
        s
    });
    let mut agents = Vec::new();
    let running = wait_until(Duration::from_secs(60), || {
        agents = step_agents();
        agents.len() == 2 && agents.iter().all(|a| crate::common::hosts::io_running(a.0))
    });
    assert!(running, "the two agents never ran: {agents:?}");
    // Host i is task i, on its own node.
    let tasks: Vec<(u32, &str)> = agents.iter().map(|a| (a.1, a.2.as_str())).collect();
    assert_eq!(tasks, [(0, "vb2"), (1, "vb1")]);
    // ONE srun carries both agents.
    let sruns: Vec<_> = crate::common::hosts::processes_with("--distribution=arbitrary", None)
        .into_iter()
        .filter(|(_, c)| c.starts_with("srun ") && c.contains(BIN))
        .collect();
    // srun forks a helper of its own; the coordinator (salloc's child)
    // started one srun.
    let parent = |pid: u32| -> u32 {
        let st = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let rest = st.rsplit_once(')').map_or("", |r| r.1);
        rest.split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0)
    };
    let started: Vec<_> = sruns
        .iter()
        .filter(|(p, _)| !sruns.iter().any(|(q, _)| *q == parent(*p)))
        .collect();
    assert_eq!(started.len(), 1, "{sruns:?}");
    assert!(sruns[0].1.contains("--nodelist=vb2,vb1"), "{sruns:?}");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(agents[1].0 as i32).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    // The lost host is noticed at once (srun names its task), inside the
    // 10 s run; the run then goes on with the other to its end.
    let status = coord.0.wait().unwrap();
    let log = log.join().unwrap();
    assert!(status.success(), "{log}");
    assert!(log.contains("host vb1 failed: its task ended"), "{log}");
    let doc = read_json(&tmp.path().join("out/result.json"));
    let hosts = doc["cluster"]["hosts"].as_array().unwrap();
    assert_eq!(hosts[0]["status"], "ok", "{}", hosts[0]);
    assert_eq!(hosts[1]["status"], "failed", "{}", hosts[1]);
    assert!(
        hosts[1]["error"].as_str().unwrap().contains("task 1"),
        "{}",
        hosts[1]
    );
    let run = &doc["cluster"]["runs"][0];
    assert_eq!(run["partial"], true, "{run}");
    assert_eq!(run["hosts_merged"], 1, "{run}");
    // The survivor's totals are the merged ones, exactly.
    for op in ["read", "write"] {
        assert_eq!(
            ops(&doc["runs"][0], op),
            ops(&hosts[0]["runs"][0], op),
            "{op}"
        );
    }
    assert!(step_agents().is_empty(), "no agent outlives the run");
}

#[test]
fn dry_run_shows_the_one_srun_step_and_an_agent_without_its_task_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let o = job("node[01-03]", "slurm", tmp.path())
        .arg("--dry-run")
        .expect(exit::OK);
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("launch:"))
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(line.matches("srun --").count(), 1, "{line}");
    for w in [
        "--ntasks=3",
        "--nodelist=node01,node02,node03",
        "--distribution=arbitrary",
        "--label",
        "--task-env SLURM_PROCID",
    ] {
        assert!(line.contains(w), "{w}: {line}");
    }
    // An agent told to read its task from a variable nobody set stops
    // with one line, never reading as task 0 another agent's input.
    let o =
        vb(["agent", "--session", "s", "--task-env", "VB_NO_SUCH_TASK"]).expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("--task-env VB_NO_SUCH_TASK"),
        "{}",
        stderr(&o)
    );
}
