//! Throw-away "client hosts" for multi-host tests: each a network namespace
//! on a private bridge (10.77.X.0/24, X claimed per fixture so tests can run
//! in parallel), with its own sshd, reachable by a key the test generates
//! through an ssh_config the test writes. Everything is removed on drop.
//! Needs root, iproute2, openssh-server and openssh-client.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::skip;

pub struct TestHosts {
    pub dir: tempfile::TempDir,
    pub n: usize,
    octet: u8,
    sshd: Vec<Child>,
    lock: PathBuf,
}

/// Runs a command, returning whether it succeeded (output discarded).
fn sh(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

fn must(cmd: &str, args: &[&str]) {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Claims a /24 no other live fixture uses: a lock file per octet, created
/// exclusively, holding the owner's pid. A lock whose owner is gone is taken
/// over; one without a pid yet is being written and is left alone.
fn claim_octet() -> (u8, PathBuf) {
    let start = (std::process::id() % 150) as u8;
    for k in 0..150u8 {
        let octet = 100 + (start.wrapping_add(k)) % 150;
        let lock = PathBuf::from(format!("/tmp/volbench-testnet-{octet}.lock"));
        for _ in 0..2 {
            let tmp = PathBuf::from(format!(
                "/tmp/.volbench-testnet-{octet}.{}.{}",
                std::process::id(),
                process_counter()
            ));
            // Written whole first, then linked in place: the lock never
            // exists without its pid.
            if fs::write(&tmp, std::process::id().to_string()).is_err() {
                continue;
            }
            let claimed = fs::hard_link(&tmp, &lock).is_ok();
            let _ = fs::remove_file(&tmp);
            if claimed {
                return (octet, lock);
            }
            let owner: Option<u32> = fs::read_to_string(&lock)
                .ok()
                .and_then(|s| s.trim().parse().ok());
            match owner {
                Some(pid) if !pid_alive(pid) => {
                    let _ = fs::remove_file(&lock);
                }
                _ => break,
            }
        }
    }
    panic!("no free 10.77.X.0/24 for a test network");
}

fn process_counter() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

impl TestHosts {
    /// Creates `n` hosts h1..hN, or prints why it cannot (and returns None).
    pub fn up(test: &str, n: usize) -> Option<Self> {
        if !super::is_root() {
            skip(test, "needs root for network namespaces");
            return None;
        }
        for (bin, pkg) in [
            ("/usr/sbin/sshd", "openssh-server"),
            ("ssh", "openssh-client"),
            ("ssh-keygen", "openssh-client"),
            ("ip", "iproute2"),
        ] {
            let found = if bin.starts_with('/') {
                Path::new(bin).exists()
            } else {
                sh("sh", &["-c", &format!("command -v {bin}")])
            };
            if !found {
                skip(test, &format!("{bin} is missing (install {pkg})"));
                return None;
            }
        }
        let (octet, lock) = claim_octet();
        let dir = tempfile::Builder::new()
            .prefix("volbench-hosts-")
            .tempdir()
            .expect("temp dir");
        let mut me = TestHosts {
            dir,
            n,
            octet,
            sshd: Vec::new(),
            lock,
        };
        me.build();
        Some(me)
    }

    fn bridge(&self) -> String {
        format!("vbt{}br", self.octet)
    }

    pub fn ns(&self, i: usize) -> String {
        format!("vbt{}h{i}", self.octet)
    }

    pub fn addr(&self, i: usize) -> String {
        format!("10.77.{}.{}", self.octet, 10 + i)
    }

    pub fn host(&self, i: usize) -> String {
        format!("h{i}")
    }

    /// "h1,h2,...".
    pub fn list(&self) -> String {
        (1..=self.n)
            .map(|i| self.host(i))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// The value for --ssh-command.
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.ssh_config().display())
    }

    fn build(&mut self) {
        let d = self.dir.path().to_path_buf();
        fs::create_dir_all("/run/sshd").expect("/run/sshd");
        for key in ["client_key", "host_key"] {
            must(
                "ssh-keygen",
                &[
                    "-q",
                    "-t",
                    "ed25519",
                    "-N",
                    "",
                    "-f",
                    d.join(key).to_str().unwrap(),
                ],
            );
        }
        fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).expect("authorized_keys");
        let br = self.bridge();
        // Leftovers of a crashed earlier run with the same octet are ours.
        sh("ip", &["link", "del", &br]);
        must("ip", &["link", "add", &br, "type", "bridge"]);
        must(
            "ip",
            &[
                "addr",
                "add",
                &format!("10.77.{}.1/24", self.octet),
                "dev",
                &br,
            ],
        );
        must("ip", &["link", "set", &br, "up"]);
        let mut config = String::new();
        for i in 1..=self.n {
            let ns = self.ns(i);
            sh("ip", &["netns", "del", &ns]);
            sh("ip", &["link", "del", &ns]);
            must("ip", &["netns", "add", &ns]);
            must(
                "ip",
                &[
                    "link", "add", &ns, "type", "veth", "peer", "name", "eth0", "netns", &ns,
                ],
            );
            must("ip", &["link", "set", &ns, "master", &br, "up"]);
            must(
                "ip",
                &[
                    "-n",
                    &ns,
                    "addr",
                    "add",
                    &format!("{}/24", self.addr(i)),
                    "dev",
                    "eth0",
                ],
            );
            must("ip", &["-n", &ns, "link", "set", "lo", "up"]);
            must("ip", &["-n", &ns, "link", "set", "eth0", "up"]);
            let cfg = d.join(format!("sshd_h{i}"));
            fs::write(
                &cfg,
                format!(
                    "ListenAddress {addr}\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
                     PidFile none\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                     KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nMaxSessions 64\n\
                     MaxStartups 100\n",
                    addr = self.addr(i),
                    d = d.display()
                ),
            )
            .expect("sshd config");
            let log = fs::File::create(d.join(format!("sshd_h{i}.log"))).expect("log");
            let child = Command::new("ip")
                .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(&cfg)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("start sshd");
            self.sshd.push(child);
            config.push_str(&format!(
                "Host h{i}\n  HostName {addr}\n  User root\n  IdentityFile {d}/client_key\n  \
                 IdentitiesOnly yes\n  BatchMode yes\n  StrictHostKeyChecking no\n  \
                 UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 5\n",
                addr = self.addr(i),
                d = d.display()
            ));
        }
        fs::write(self.ssh_config(), config).expect("ssh_config");
        // Ready when every sshd answers (each try is a real connection).
        for i in 1..=self.n {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                if sh(
                    "ssh",
                    &[
                        "-F",
                        self.ssh_config().to_str().unwrap(),
                        &self.host(i),
                        "true",
                    ],
                ) {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "sshd on h{i} did not come up: {}",
                    fs::read_to_string(d.join(format!("sshd_h{i}.log"))).unwrap_or_default()
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// Takes host i's link down: packets just stop, nothing closes.
    pub fn cut(&self, i: usize) {
        must("ip", &["-n", &self.ns(i), "link", "set", "eth0", "down"]);
    }

    /// Processes running in host i's namespace.
    pub fn pids_in(&self, i: usize) -> Vec<u32> {
        let out = Command::new("ip")
            .args(["netns", "pids", &self.ns(i)])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        out.split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        // Everything in the namespaces was started by this fixture: the
        // sshds and their sessions (an agent, if a test left one).
        for i in 1..=self.n {
            for pid in self.pids_in(i) {
                let _ = rustix::process::kill_process(
                    rustix::process::Pid::from_raw(pid as i32).expect("pid"),
                    rustix::process::Signal::KILL,
                );
            }
        }
        for c in &mut self.sshd {
            let _ = c.kill();
            let _ = c.wait();
        }
        for i in 1..=self.n {
            // The bridge-side veth (named like the namespace) goes at once
            // with its peer; the namespace itself may linger until its last
            // process is reaped, and must not hold names a next fixture uses.
            sh("ip", &["link", "del", &self.ns(i)]);
            sh("ip", &["netns", "del", &self.ns(i)]);
        }
        sh("ip", &["link", "del", &self.bridge()]);
        let _ = fs::remove_file(&self.lock);
    }
}

/// Processes (other than `except`) whose command line contains `tag`.
pub fn processes_with(tag: &str, except: Option<u32>) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let me = std::process::id();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me || Some(pid) == except {
            continue;
        }
        let Ok(raw) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmd.contains(tag) {
            found.push((pid, cmd));
        }
    }
    found
}

/// Waits until `cond` holds, checking every 50 ms; false on timeout.
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` has an I/O thread (`vb-io-0`) that has used CPU:
/// released from the start barrier and doing I/O, not just set up.
pub fn io_running(pid: u32) -> bool {
    fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|t| {
            let named = fs::read_to_string(t.path().join("comm"))
                .map(|c| c.trim() == "vb-io-0")
                .unwrap_or(false);
            // utime and stime are fields 14 and 15, after the ")" of comm.
            let busy = fs::read_to_string(t.path().join("stat"))
                .ok()
                .and_then(|st| {
                    let rest = st.rsplit_once(')')?.1.to_string();
                    let f: Vec<u64> = rest
                        .split_whitespace()
                        .skip(11)
                        .take(2)
                        .filter_map(|x| x.parse().ok())
                        .collect();
                    Some(f.iter().sum::<u64>() > 0)
                })
                .unwrap_or(false);
            named && busy
        })
}
