//! A real NFS server for the tests: nfs-ganesha in user space (Debian's
//! `nfs-ganesha` and `nfs-ganesha-vfs`; no kernel nfsd, no NFS client
//! module), exporting a directory under a temporary folder on loopback
//! only, over NFSv3 and NFSv4.1 on ports of its own. Each server gets its
//! own ports, so tests run side by side; ganesha registers with rpcbind
//! (started here when none runs), where the last server started wins, so
//! the tests name the ports in their URLs (`nfsport=`, `mountport=`).
//! Stopped (and its folder removed) when dropped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

/// One start at a time: ganesha's registration with rpcbind is not safe
/// to race.
static STARTING: Mutex<()> = Mutex::new(());

pub struct NfsServer {
    root: tempfile::TempDir,
    /// The exported directory (the same path over NFSv3 and NFSv4.1).
    pub export: PathBuf,
    pub port: u16,
    pub mount_port: u16,
    pid: Option<i32>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on loopback")
}

fn have(cmd: &str) -> bool {
    ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
        .iter()
        .any(|d| Path::new(d).join(cmd).exists())
}

impl NfsServer {
    /// A running server, or None (the reason printed by `skip`) where one
    /// cannot run: not root, or ganesha or rpcbind not installed.
    pub fn start(test: &str) -> Option<NfsServer> {
        if !super::is_root() {
            super::skip(test, "nfs-ganesha needs root");
            return None;
        }
        for cmd in ["ganesha.nfsd", "rpcbind", "rpcinfo"] {
            if !have(cmd) {
                super::skip(
                    test,
                    &format!("{cmd} is not installed (nfs-ganesha, nfs-ganesha-vfs, rpcbind)"),
                );
                return None;
            }
        }
        let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
        ensure_rpcbind();
        let root = tempfile::Builder::new()
            .prefix("vb-nfs-")
            .tempdir()
            .expect("a temporary folder");
        let export = root.path().join("export");
        std::fs::create_dir(&export).expect("the export folder");
        let mut s = NfsServer {
            export,
            port: free_port(),
            mount_port: free_port(),
            pid: None,
            root,
        };
        s.write_config();
        s.launch();
        Some(s)
    }

    fn state(&self) -> PathBuf {
        self.root.path().join("state")
    }

    fn write_config(&self) {
        let st = self.state();
        std::fs::create_dir_all(st.join("recovery")).expect("the state folder");
        let conf = format!(
            "NFS_CORE_PARAM {{ Protocols = 3, 4; NFS_Port = {port}; MNT_Port = {mnt}; Bind_addr = 127.0.0.1;\n\
             Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false; }}\n\
             NFSV4 {{ Graceless = true; RecoveryBackend = fs; RecoveryRoot = {rec}; Minor_Versions = 1; }}\n\
             EXPORT {{ Export_Id = 1; Path = {exp}; Pseudo = {exp}; Access_Type = RW; Squash = No_Root_Squash;\n\
             Protocols = 3, 4; Transports = TCP; SecType = sys; FSAL {{ Name = VFS; }} }}\n\
             LOG {{ Default_Log_Level = EVENT; }}\n",
            port = self.port,
            mnt = self.mount_port,
            rec = st.join("recovery").display(),
            exp = self.export.display(),
        );
        std::fs::write(st.join("ganesha.conf"), conf).expect("the configuration");
    }

    fn launch(&mut self) {
        let st = self.state();
        let log = st.join("ganesha.log");
        let _ = std::fs::remove_file(&log);
        let pidf = st.join("ganesha.pid");
        let status = Command::new("ganesha.nfsd")
            .arg("-f")
            .arg(st.join("ganesha.conf"))
            .arg("-L")
            .arg(&log)
            .arg("-p")
            .arg(&pidf)
            .args(["-N", "NIV_EVENT"])
            .status()
            .expect("ganesha.nfsd runs");
        assert!(status.success(), "ganesha.nfsd failed to start");
        // Ready when its log says so, the NFS port takes connections and
        // the MOUNT port answers the MOUNT program (seen once on a loaded
        // machine: a first MNT refused as a program not served, right
        // after the log's line).
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("NFS SERVER INITIALIZED")
                && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && mount_answers(self.mount_port)
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "ganesha did not start within 60 s:\n{}",
                text.lines().rev().take(5).collect::<Vec<_>>().join("\n")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        self.pid = std::fs::read_to_string(&pidf)
            .ok()
            .and_then(|p| p.trim().parse().ok());
    }

    /// The URL of `dir` under the export, with this server's ports.
    pub fn url(&self, dir: &str, version: &str) -> String {
        let path = if dir.is_empty() {
            self.export.display().to_string()
        } else {
            format!("{}/{dir}", self.export.display())
        };
        format!(
            "nfs://127.0.0.1{path}?version={version}&nfsport={}&mountport={}",
            self.port, self.mount_port
        )
    }

    /// Stops the server (SIGTERM, then SIGKILL), waiting until it is gone.
    pub fn stop(&mut self) {
        let Some(pid) = self.pid.take() else { return };
        let gone = |pid: i32| !Path::new(&format!("/proc/{pid}")).exists();
        signal(pid, Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !gone(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if !gone(pid) {
            signal(pid, Signal::KILL);
            while !gone(pid) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// Kills the server at once (a crash), waiting until it is gone.
    pub fn kill(&mut self) {
        if let Some(pid) = self.pid {
            signal(pid, Signal::KILL);
        }
        self.stop();
    }

    /// Starts it again on the same ports and export.
    pub fn restart(&mut self) {
        self.stop();
        let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
        self.launch();
    }

    /// TCP connections established to the NFS port, as `ss` counts them.
    pub fn connections(&self) -> usize {
        let o = Command::new("ss")
            .args(["-Htn", "state", "established"])
            .arg(format!("( dport = :{} )", self.port))
            .output()
            .expect("ss runs");
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count()
    }
}

/// Signals the server this fixture started (by the pid it recorded).
fn signal(pid: i32, sig: Signal) {
    if let Some(p) = Pid::from_raw(pid) {
        let _ = kill_process(p, sig);
    }
}

impl Drop for NfsServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether the MOUNT program (100005, version 3) answers its NULL
/// procedure at `port`: an ONC RPC call over TCP (RFC 5531: one record,
/// AUTH_NONE) accepted with SUCCESS.
fn mount_answers(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    // Record mark (last fragment, 40 bytes), xid, CALL, RPC 2, MOUNT 3,
    // NULL, then credential and verifier both AUTH_NONE with no body.
    let words: [u32; 11] = [0x8000_0028, 0x766f_6c62, 0, 2, 100_005, 3, 0, 0, 0, 0, 0];
    let call: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    if s.write_all(&call).is_err() {
        return false;
    }
    // Mark, xid, REPLY, MSG_ACCEPTED, verifier (flavor, length 0), then
    // the accept status.
    let mut reply = [0u8; 28];
    if s.read_exact(&mut reply).is_err() {
        return false;
    }
    let word = |i: usize| u32::from_be_bytes([reply[i], reply[i + 1], reply[i + 2], reply[i + 3]]);
    word(8) == 1 && word(12) == 0 && word(24) == 0
}

fn ensure_rpcbind() {
    let up = || {
        Command::new("rpcinfo")
            .arg("-p")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if up() {
        return;
    }
    let _ = Command::new("rpcbind").arg("-w").status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !up() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
}
