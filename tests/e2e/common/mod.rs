//! Shared helpers for the end-to-end tests: run the real binary, probe for
//! privileges, and skip loudly (with the reason) when a fixture is impossible.
#![allow(dead_code)]

pub mod far_tree;
pub mod hosts;
pub mod live_run;
pub mod nfs;
pub mod postgres;
pub mod slow_link;
pub mod slurm;
pub mod smb;
pub mod volume;

use std::path::Path;
use std::process::{Command, Output};

pub fn volbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_volbench"))
}

pub fn run(args: &[&str]) -> Output {
    vb(args).output()
}

/// One volbench invocation, built up and then run:
/// `vb(["run", "--target", dir]).arg("--dry-run").expect(exit::OK)`.
pub struct Vb(Command);

pub fn vb<I, S>(args: I) -> Vb
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut c = volbench();
    c.args(args);
    Vb(c)
}

impl Vb {
    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Self {
        self.0.arg(a);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.0.args(args);
        self
    }

    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Self {
        self.0.env(k, v);
        self
    }

    /// The command, to be spawned rather than run to its end.
    pub fn into_command(self) -> Command {
        self.0
    }

    pub fn output(mut self) -> Output {
        self.0.output().expect("the volbench binary runs")
    }

    /// Runs it and checks the exit code (one of `exit::*`), showing stderr
    /// when it differs.
    pub fn expect(self, code: i32) -> Output {
        let o = self.output();
        assert_eq!(
            o.status.code(),
            Some(code),
            "volbench exited {:?}, expected {code}; stderr:\n{}",
            o.status.code(),
            stderr(&o)
        );
        o
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Prints why a test did not run. On CI (CI=true) a skip is a failure: the
/// CI machine is expected to have every fixture.
pub fn skip(test: &str, why: &str) {
    if std::env::var("CI").as_deref() == Ok("true") && std::env::var("VOLBENCH_ALLOW_SKIP").is_err()
    {
        panic!("{test}: cannot run on CI: {why}");
    }
    eprintln!("SKIP {test}: {why}");
    // test.sh lists the skips at the end: libtest keeps a passing test's
    // stderr to itself, so the line above alone is never seen.
    if let Some(log) = std::env::var_os("VOLBENCH_SKIP_LOG") {
        use std::io::Write;
        let line = format!("{test}: {}\n", why.replace('\n', " "));
        // One write of one short line in append mode: tests skipping at
        // once do not interleave.
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
}

/// How many I/Os a run's merged histogram of `dir` ("read", "write") holds.
pub fn histogram_count(run: &serde_json::Value, dir: &str) -> u64 {
    run["histograms"][dir]["buckets"]
        .as_array()
        .unwrap_or_else(|| panic!("no {dir} histogram in {run}"))
        .iter()
        .map(|b| b[2].as_u64().unwrap())
        .sum()
}

/// Whether a result's diagnosis has a finding of `kind` whose message
/// says `words` (empty: any).
pub fn diagnosis_says(doc: &serde_json::Value, kind: &str, words: &str) -> bool {
    doc["diagnosis"].as_array().is_some_and(|f| {
        f.iter()
            .any(|x| x["kind"] == kind && x["message"].as_str().is_some_and(|m| m.contains(words)))
    })
}

/// Whether the result says the client's CPUs were busy with other
/// processes (`client_cpu`): what excuses a figure that only a quiet
/// machine keeps (a rate, a latency), and nothing else does.
pub fn client_busy_with_other_work(doc: &serde_json::Value) -> bool {
    diagnosis_says(doc, "client_cpu", "busy with other work")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// Waits until a spawned run (stderr piped) prints the line that starts
/// with `mark` (e.g. "[1/1]", printed as its I/O is about to start), then
/// keeps draining its stderr so it never blocks on a full pipe.
pub fn wait_for_stderr_line(child: &mut std::process::Child, mark: &str) {
    use std::io::{BufRead, BufReader};
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        if line.expect("stderr is text").starts_with(mark) {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
}

/// Tests that measure a throttled device take this first, so at most one
/// of them does I/O at a time: on 2 cores a concurrent run starves the
/// capped one and blurs the figures they check (the other test thread keeps
/// running everything else).
pub fn heavy_io() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes `doc` as DIR/result.json (DIR created) and returns DIR, for the
/// report, compare and diagnosis tests that start from a fixture result.
pub fn write_result(dir: &Path, doc: &volbench::result::ResultDoc) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("result.json"),
        serde_json::to_string_pretty(doc).unwrap(),
    )
    .unwrap();
    dir.to_path_buf()
}
