//! Shared helpers for the end-to-end tests: run the real binary, probe for
//! privileges, and skip loudly (with the reason) when a fixture is impossible.
#![allow(dead_code)]

pub mod hosts;
pub mod volume;

use std::path::Path;
use std::process::{Command, Output};

pub fn volbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_volbench"))
}

pub fn run(args: &[&str]) -> Output {
    volbench()
        .args(args)
        .output()
        .expect("the volbench binary runs")
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
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}
