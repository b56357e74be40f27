//! A real SMB server for the tests: Samba's smbd started in the foreground
//! under a temp dir (its own configuration, state, password database and
//! share), on a free port of 127.0.0.1 or on addresses inside a network
//! namespace the test made; stopped (its whole process group) on drop.
//! Logs on as root with a password only this fixture knows, or as guest.
//! Needs root and Debian's samba.

use std::fs;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::skip;

pub const USER: &str = "root";
pub const PASSWORD: &str = "vb-Test-pw-7f3a9c";

/// How the server is set up.
#[derive(Clone)]
pub struct SambaConfig {
    /// Addresses to listen on ("127.0.0.1", or a namespace's addresses).
    pub addrs: Vec<String>,
    /// A network namespace to run smbd in.
    pub netns: Option<String>,
    pub min_protocol: &'static str,
    /// "default" or "mandatory".
    pub signing: &'static str,
    /// A second share, `[sealed]`, that requires encryption.
    pub sealed_share: bool,
}

impl Default for SambaConfig {
    fn default() -> Self {
        SambaConfig {
            addrs: vec!["127.0.0.1".into()],
            netns: None,
            min_protocol: "SMB2_10",
            signing: "default",
            sealed_share: false,
        }
    }
}

pub struct Samba {
    pub dir: tempfile::TempDir,
    pub port: u16,
    cfg: SambaConfig,
    child: Option<Child>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Samba {
    /// Starts smbd, or says why it cannot (and returns None).
    pub fn up(test: &str, cfg: SambaConfig) -> Option<Samba> {
        if !super::is_root() {
            skip(test, "needs root to run smbd");
            return None;
        }
        if !Path::new("/usr/sbin/smbd").exists() {
            skip(test, "smbd is missing (install samba)");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("volbench-smb-")
            .tempdir()
            .expect("temp dir");
        let port = if cfg.netns.is_some() {
            445
        } else {
            free_port()
        };
        let mut s = Samba {
            dir,
            port,
            cfg,
            child: None,
        };
        s.configure();
        s.start();
        Some(s)
    }

    pub fn share(&self) -> PathBuf {
        self.dir.path().join("share")
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn conf(&self) -> PathBuf {
        self.state().join("smb.conf")
    }

    pub fn addr(&self) -> SocketAddr {
        format!("{}:{}", self.cfg.addrs[0], self.port)
            .parse()
            .expect("address")
    }

    fn configure(&self) {
        let st = self.state();
        fs::create_dir_all(&st).expect("state dir");
        fs::create_dir_all(self.share()).expect("share dir");
        let sealed = if self.cfg.sealed_share {
            format!(
                "[sealed]\n  path = {share}\n  read only = no\n  force user = root\n  smb encrypt = required\n",
                share = self.share().display()
            )
        } else {
            String::new()
        };
        let conf = format!(
            "[global]\n  server role = standalone server\n  smb ports = {port}\n  interfaces = {ifs}\n  \
             bind interfaces only = yes\n  server min protocol = {min}\n  server max protocol = SMB3_11\n  \
             server multi channel support = yes\n  server signing = {signing}\n  disable netbios = yes\n  \
             pid directory = {st}\n  lock directory = {st}\n  state directory = {st}\n  cache directory = {st}\n  \
             private dir = {st}\n  ncalrpc dir = {st}/ncalrpc\n  log file = {st}/log.%m\n  log level = 1\n  \
             passdb backend = tdbsam:{st}/passdb.tdb\n  map to guest = Bad User\n  load printers = no\n  \
             printing = bsd\n  printcap name = /dev/null\n  disable spoolss = yes\n\
             [bench]\n  path = {share}\n  read only = no\n  guest ok = yes\n  force user = root\n{sealed}",
            port = self.port,
            ifs = self.cfg.addrs.join(" "),
            min = self.cfg.min_protocol,
            signing = self.cfg.signing,
            st = st.display(),
            share = self.share().display(),
        );
        fs::write(self.conf(), conf).expect("smb.conf");
        let mut p = Command::new("smbpasswd")
            .args([
                "-c",
                self.conf().to_str().expect("utf-8 path"),
                "-s",
                "-a",
                USER,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("smbpasswd runs");
        p.stdin
            .take()
            .expect("stdin")
            .write_all(format!("{PASSWORD}\n{PASSWORD}\n").as_bytes())
            .expect("password");
        assert!(p.wait().expect("smbpasswd").success(), "smbpasswd failed");
    }

    /// Starts smbd in its own process group and waits until it accepts.
    pub fn start(&mut self) {
        let log = fs::File::create(self.state().join("smbd.out")).expect("log");
        let mut cmd = match &self.cfg.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "/usr/sbin/smbd"]);
                c
            }
            None => Command::new("/usr/sbin/smbd"),
        };
        cmd.args(["--foreground", "--no-process-group", "--debug-stdout", "-s"])
            .arg(self.conf())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .process_group(0);
        self.child = Some(cmd.spawn().expect("smbd starts"));
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = self.addr();
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < deadline,
                "smbd did not start: {}",
                fs::read_to_string(self.state().join("smbd.out")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops smbd and every child it forked (the process group it leads).
    pub fn stop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        let pid = c.id() as i32;
        // SAFETY: kill(2) on the process group this fixture started.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = c.wait();
    }

    pub fn log(&self) -> String {
        let mut out = String::new();
        for e in fs::read_dir(self.state()).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with("log.") || name == "smbd.out" {
                out.push_str(&fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        out
    }
}

impl Drop for Samba {
    fn drop(&mut self) {
        self.stop();
    }
}
