//! A PostgreSQL server of the tests' own: a cluster made by Debian's
//! `initdb` in a temporary directory, started on 127.0.0.1 at a free port
//! with password (SCRAM) authentication, stopped and removed on drop. The
//! server refuses to run as root, so under root it runs as the `postgres`
//! user the package made. None (with the reason) where it cannot start.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const USER: &str = "volbench";
/// The password the tests check never appears anywhere.
pub const PASSWORD: &str = "Sekr1t-pw-9f3k";

pub struct Cluster {
    dir: tempfile::TempDir,
    server: Child,
    pub port: u16,
}

fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").is_file() && b.join("postgres").is_file())
        .collect();
    found.sort();
    found.pop()
}

/// Runs `program` as the server's user (postgres under root).
fn as_server_user(program: &Path) -> Command {
    if crate::common::is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

impl Cluster {
    pub fn start() -> Result<Cluster, String> {
        let bin = bin_dir().ok_or("no PostgreSQL server binaries under /usr/lib/postgresql")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
        if crate::common::is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err("no postgres user to run the server as".into());
            }
        }
        let out = as_server_user(&bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                USER,
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .args(["-E", "UTF8", "--no-instructions"])
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let port = free_port();
        let server = as_server_user(&bin.join("postgres"))
            .arg("-D")
            .arg(&data)
            .args(["-c", "listen_addresses=127.0.0.1", "-p", &port.to_string()])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", dir.path().display()))
            .args(["-c", "fsync=off", "-c", "max_connections=50"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("postgres: {e}"))?;
        let mut c = Cluster { dir, server, port };
        // Ready when it accepts a login: asked until then, for at most 60 s.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = Command::new(bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-t", "5"])
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(c);
            }
            if let Ok(Some(s)) = c.server.try_wait() {
                return Err(format!("the server exited: {s}"));
            }
            if Instant::now() > deadline {
                return Err("the server did not accept connections in 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The store URL, with the password in it.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs SQL through psql as the cluster's user; its stdout.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let bin = bin_dir().expect("server binaries");
        let out = Command::new(bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .args(["-d", db, "-At", "-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // SIGQUIT to the postmaster (runuser, its parent under root, does
        // not pass signals on): PostgreSQL's immediate shutdown.
        let pid = std::fs::read_to_string(self.data_dir().join("postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
            .unwrap_or_else(|| self.server.id().to_string());
        let _ = Command::new("kill").args(["-QUIT", &pid]).status();
        let _ = self.server.wait();
    }
}
