//! Names the commit a binary is built from, for `volbench --version`.
//! Outside a git checkout (a source tarball, `cargo install` from a
//! registry) it says so instead of failing the build.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(hash) => {
            // Uncommitted changes to tracked files make the hash a lie.
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!("commit {hash}{}", if dirty { "-dirty" } else { "" })
        }
        None => "commit unknown: not built from a git checkout".to_string(),
    };
    println!("cargo:rustc-env=VOLBENCH_COMMIT={commit}");
    // A new commit moves HEAD or the branch it points to; an edit to a
    // source file changes "-dirty". Only files that exist are named: cargo
    // reruns the script on every build for a missing one.
    let mut watch = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watch.push(format!("{dir}/HEAD"));
        let common = git(&["rev-parse", "--git-common-dir"]).unwrap_or(dir.clone());
        watch.push(format!("{common}/packed-refs"));
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(format!("{dir}/{head}"));
            watch.push(format!("{common}/{head}"));
        }
    }
    for path in watch {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=build.rs");
}
