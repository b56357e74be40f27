//! `cargo xtask dist`: what users download, made in `target/dist/`.
//!
//! A static Linux binary (`+crt-static` with an explicit `--target`, so the
//! build scripts and derive macros stay dynamic, in the `dist` profile), its
//! man pages and shell completions, the README and the docs it links, the
//! licences and the third-party notices (from Cargo.lock), in
//! `volbench-VERSION-ARCH-linux.tar.gz`; with volbench.exe of the same
//! commit present (`scripts/windows-build --profile dist`, or `--release`),
//! `volbench-VERSION-x86_64-windows.zip` too; `SHA256SUMS` for them all.
//! `--debug` makes the same layout from the dev profile in
//! `target/dist/debug/`; `--debug --bin FILE` packs a static build made
//! already (CI checks the layout with the one test.sh links from its debug
//! build, instead of minutes of building).
//!
//! std and serde_json (already built for volbench), so it builds in seconds
//! and on the oldest supported toolchain.

mod notices;
mod pack;
mod sha256;
mod windows_zip;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// What is built for release: (target triple, the name's architecture).
///
/// aarch64 is not here: its standard library is not installed on the build
/// machine and no toolchain can be fetched there. With it installed (and a
/// cross linker), it is one more entry, packed with the x86_64 binary's
/// pages and completions since an arm binary cannot answer here.
const TARGETS: [(&str, &str); 1] = [("x86_64-unknown-linux-gnu", "x86_64")];

/// The Windows build `scripts/windows-build` makes (it cannot be made by
/// `cargo build` here: its std is compiled from Debian's rustc-web source).
const WINDOWS: &str = "x86_64-pc-windows-gnu";

const USAGE: &str = "usage: cargo xtask dist [--debug [--bin FILE]]

  dist      build the static binary (profile `dist`) and pack it with its
            man pages, completions, README, docs, licences and third-party
            notices in target/dist/volbench-VERSION-ARCH-linux.tar.gz; with
            volbench.exe of the same commit built (scripts/windows-build
            --profile dist), target/dist/volbench-VERSION-x86_64-windows.zip;
            target/dist/SHA256SUMS for them all
  --debug   from the dev profile, into target/dist/debug/ (a quick check of
            the layout; not for release)
  --bin FILE
            with --debug: pack FILE, a static build made already (test.sh
            links one from its debug build), instead of building one";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (debug, prebuilt) = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["dist"] => (false, None),
        ["dist", "--debug"] | ["--debug", "dist"] => (true, None),
        ["dist", "--debug", "--bin", bin] => (true, Some(PathBuf::from(bin))),
        ["-h"] | ["--help"] | ["help"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match dist(debug, prebuilt.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    // xtask/ sits at the top of the workspace.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

fn dist(debug: bool, prebuilt: Option<&Path>) -> Result<(), String> {
    let root = root();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let dist = if debug {
        target_dir.join("dist/debug")
    } else {
        target_dir.join("dist")
    };
    let epoch = source_date_epoch(&root);
    let mut made = Vec::new();
    let mut version_line = String::new();
    for (triple, arch) in TARGETS {
        let bin = match prebuilt {
            // The one target's binary, made already (`--bin`).
            Some(bin) => bin.to_path_buf(),
            None => {
                build(&root, triple, debug)?;
                let profile = if debug { "debug" } else { "dist" };
                target_dir.join(triple).join(profile).join("volbench")
            }
        };
        let shipped = pack::Shipped::from_checkout(&root, notices::text(&root, triple)?);
        let a = pack::assemble(&bin, &shipped, &dist, arch, epoch)?;
        println!(
            "{}  ({} man pages, completions for bash, zsh, fish; unpacked in {})",
            a.tarball.display(),
            a.man_pages.len(),
            a.dir.display()
        );
        if version_line.is_empty() {
            version_line = pack::version_line(&bin)?;
        }
        made.push(a);
    }
    if let Some(z) = windows(
        &root,
        &target_dir,
        debug,
        &version_line,
        &made[0],
        &dist,
        epoch,
    )? {
        println!(
            "{}  ({} man pages as text; unpacked in {})",
            z.tarball.display(),
            z.man_pages.len(),
            z.dir.display()
        );
        made.push(z);
    }
    let sums = pack::write_sums(&dist, &made.iter().collect::<Vec<_>>())?;
    println!("{}", sums.display());
    Ok(())
}

/// The Windows zip, when `scripts/windows-build` left a volbench.exe of
/// this commit (`dist` profile first, then release; debug for `--debug`);
/// without one, a line says why there is no zip.
fn windows(
    root: &Path,
    target_dir: &Path,
    debug: bool,
    version_line: &str,
    linux: &pack::Artifact,
    dist: &Path,
    epoch: u64,
) -> Result<Option<pack::Artifact>, String> {
    let profiles: &[&str] = if debug {
        &["debug"]
    } else {
        &["dist", "release"]
    };
    let want = windows_zip::build_text(version_line);
    let mut stale = None;
    for p in profiles {
        let exe = target_dir.join(WINDOWS).join(p).join("volbench.exe");
        let Ok(bytes) = std::fs::read(&exe) else {
            continue;
        };
        if let Some(why) = windows_zip::not_this_exe(&bytes, &want) {
            stale = Some(format!("{}: {why}", exe.display()));
            continue;
        }
        let shipped = pack::Shipped::from_checkout(root, notices::text(root, WINDOWS)?);
        return windows_zip::assemble(&exe, version_line, linux, &shipped, dist, epoch).map(Some);
    }
    eprintln!(
        "xtask: no Windows zip: {}",
        stale.unwrap_or_else(|| format!(
            "no volbench.exe in {} ({})",
            target_dir.join(WINDOWS).display(),
            if debug {
                "scripts/windows-build"
            } else {
                "scripts/windows-build --profile dist"
            }
        ))
    );
    Ok(None)
}

/// `cargo build` of the static binary for one target.
fn build(root: &Path, triple: &str, debug: bool) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if !flags.contains("crt-static") {
        flags = format!("{flags} -C target-feature=+crt-static")
            .trim()
            .to_string();
    }
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args([
            "build",
            "--package",
            "volbench",
            "--bin",
            "volbench",
            "--target",
            triple,
        ])
        .env("RUSTFLAGS", &flags)
        // Cargo's own encoding would override RUSTFLAGS if it leaked in.
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    if !debug {
        cmd.args(["--profile", "dist"]);
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build --target {triple} failed ({status})"));
    }
    Ok(())
}

/// The tarball's file times: `SOURCE_DATE_EPOCH` when set, else the
/// commit's time, so a rebuild of one commit gives the same bytes.
fn source_date_epoch(root: &Path) -> u64 {
    if let Some(v) = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return v;
    }
    Command::new("git")
        .current_dir(root)
        .args(["log", "-1", "--format=%ct"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(0)
}
