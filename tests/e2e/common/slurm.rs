//! A Slurm cluster on this machine for the tests: two nodes (vb1, vb2)
//! run by slurmctld and two slurmd on ports and a config of their own,
//! with munge; one cluster at a time per test process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::hosts::wait_until;
use super::{is_root, skip};

fn ok(c: &mut Command) -> bool {
    c.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Slurm cluster of two nodes (vb1, vb2) on this machine: munge (reused
/// when already running), slurmctld and two slurmd, on ports and a config
/// of its own (`SLURM_CONF`), stopped on drop.
pub struct Slurm {
    pub dir: tempfile::TempDir,
    daemons: Vec<Child>,
    // One cluster at a time: its ports come from this process's id.
    _one: std::sync::MutexGuard<'static, ()>,
}

static ONE_SLURM: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Slurm {
    pub fn up(test: &str) -> Option<Self> {
        if !is_root() {
            skip(test, "needs root to run slurmd");
            return None;
        }
        for bin in ["slurmctld", "slurmd", "srun", "salloc", "munged"] {
            if !ok(Command::new("sh").args(["-c", &format!("command -v {bin}")])) {
                skip(test, &format!("{bin} is missing (install slurm-wlm munge)"));
                return None;
            }
        }
        let dir = tempfile::Builder::new()
            .prefix("volbench-slurm-")
            .tempdir()
            .unwrap();
        let d = dir.path().display().to_string();
        let mut me = Slurm {
            dir,
            daemons: Vec::new(),
            _one: ONE_SLURM.lock().unwrap_or_else(|e| e.into_inner()),
        };
        if !ok(Command::new("munge").arg("-n")) {
            for p in ["/run/munge", "/var/log/munge", "/var/lib/munge"] {
                std::fs::create_dir_all(p).unwrap();
            }
            if !Path::new("/etc/munge/munge.key").exists() {
                assert!(ok(Command::new("mungekey").arg("-c")), "mungekey");
            }
            assert!(ok(Command::new("chown").args([
                "-R",
                "munge:munge",
                "/etc/munge",
                "/run/munge",
                "/var/log/munge",
                "/var/lib/munge"
            ])));
            // munged itself is the child (as user munge), so drop ends it.
            let id = |flag: &str| -> u32 {
                let o = Command::new("id").args([flag, "munge"]).output().unwrap();
                String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
            };
            let mut munged = Command::new("munged");
            munged.arg("-F");
            std::os::unix::process::CommandExt::uid(&mut munged, id("-u"));
            std::os::unix::process::CommandExt::gid(&mut munged, id("-g"));
            me.spawn(&mut munged);
            assert!(
                wait_until(Duration::from_secs(10), || ok(
                    Command::new("munge").arg("-n")
                )),
                "munged did not come up"
            );
        }
        // Ports of our own, so a cluster of another test run cannot answer.
        let base = 20000 + (std::process::id() % 20000) as u16;
        let host =
            String::from_utf8_lossy(&Command::new("hostname").arg("-s").output().unwrap().stdout)
                .trim()
                .to_string();
        let conf = format!(
            "ClusterName=vbtest\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={c}\n\
             AuthType=auth/munge\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd-%n.pid\n\
             SlurmdSpoolDir={d}/spool-%n\nStateSaveLocation={d}/state\n\
             SlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd-%n.log\n\
             SlurmUser=root\nSlurmdUser=root\nReturnToService=2\n\
             NodeName=vb1 NodeHostname={host} NodeAddr=127.0.0.1 Port={p1} CPUs=2 State=UNKNOWN\n\
             NodeName=vb2 NodeHostname={host} NodeAddr=127.0.0.1 Port={p2} CPUs=2 State=UNKNOWN\n\
             PartitionName=vbtest Nodes=vb1,vb2 Default=YES MaxTime=INFINITE State=UP \
             OverSubscribe=FORCE:64\n",
            c = base,
            p1 = base + 1,
            p2 = base + 2,
        );
        for sub in ["state", "spool-vb1", "spool-vb2"] {
            std::fs::create_dir_all(me.dir.path().join(sub)).unwrap();
        }
        std::fs::write(me.conf(), conf).unwrap();
        let conf = me.conf();
        me.spawn(
            Command::new("slurmctld")
                .args(["-D", "-i"])
                .env("SLURM_CONF", &conf),
        );
        for n in ["vb1", "vb2"] {
            me.spawn(
                Command::new("slurmd")
                    .args(["-D", "-N", n])
                    .env("SLURM_CONF", &conf),
            );
        }
        let idle = wait_until(Duration::from_secs(30), || {
            let o = Command::new("sinfo")
                .args(["-h", "-N", "-o", "%t"])
                .env("SLURM_CONF", &conf)
                .output();
            o.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).matches("idle").count() == 2)
        });
        assert!(
            idle,
            "the Slurm nodes never became idle: {}",
            std::fs::read_to_string(me.dir.path().join("slurmctld.log")).unwrap_or_default()
        );
        Some(me)
    }

    pub fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn spawn(&mut self, c: &mut Command) {
        let child = c
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.daemons.push(child);
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        // slurmd first, the controller, then munged if it was ours.
        for c in self.daemons.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
