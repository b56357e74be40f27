//! Which binary `--push-binary` copies: this one when it is statically
//! linked (it then starts on any x86_64 Linux, whatever its C library),
//! else a static build of this very version next to it when there is one
//! (`cargo build --release --target x86_64-unknown-linux-gnu` with
//! `+crt-static` puts it there, `cargo xtask dist` too and unpacked in
//! `target/dist/`), else this one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Result, VbError};

/// The binary to push and its bytes.
pub fn to_push() -> Result<(PathBuf, Vec<u8>)> {
    let exe = std::env::current_exe()
        .map_err(|e| VbError::run(format!("cannot find this volbench binary: {e}")))?;
    let bytes = std::fs::read(&exe)
        .map_err(|e| VbError::run(format!("cannot read this binary {}: {e}", exe.display())))?;
    if needs_loader(&bytes) == Some(false) {
        return Ok((exe, bytes));
    }
    for candidate in static_siblings(&exe) {
        if let Ok(b) = std::fs::read(&candidate) {
            if needs_loader(&b) == Some(false) && same_version(&candidate) {
                return Ok((candidate, b));
            }
        }
    }
    Ok((exe, bytes))
}

/// Whether an ELF file names a program interpreter (the dynamic loader,
/// `PT_INTERP`): `Some(false)` for a static executable, `None` when the
/// bytes are not a 64-bit little-endian ELF file.
///
/// Read by hand: a dozen bytes of the ELF header and the program header
/// table's type fields are all it takes, not worth an ELF crate.
pub fn needs_loader(bytes: &[u8]) -> Option<bool> {
    const PT_INTERP: u32 = 3;
    if bytes.get(..4)? != b"\x7fELF" || *bytes.get(4)? != 2 || *bytes.get(5)? != 1 {
        return None;
    }
    let u16_at = |o: usize| -> Option<u16> {
        Some(u16::from_le_bytes(bytes.get(o..o + 2)?.try_into().ok()?))
    };
    let u32_at = |o: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(o..o + 4)?.try_into().ok()?))
    };
    let phoff =
        usize::try_from(u64::from_le_bytes(bytes.get(0x20..0x28)?.try_into().ok()?)).ok()?;
    let phentsize = usize::from(u16_at(0x36)?);
    let phnum = usize::from(u16_at(0x38)?);
    for i in 0..phnum {
        let at = phoff.checked_add(i.checked_mul(phentsize)?)?;
        if u32_at(at)? == PT_INTERP {
            return Some(true);
        }
    }
    Some(false)
}

/// Where a static build of this checkout would be, beside `target/PROFILE/volbench`:
/// the static release builds, then the release artifact `cargo xtask dist`
/// unpacks (`target/dist/volbench-VERSION-ARCH-linux/volbench`).
fn static_siblings(exe: &Path) -> Vec<PathBuf> {
    let Some(target) = exe.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    let arch = std::env::consts::ARCH;
    let mut v: Vec<PathBuf> = ["gnu", "musl"]
        .iter()
        .map(|libc| {
            target
                .join(format!("{arch}-unknown-linux-{libc}"))
                .join("release")
                .join("volbench")
        })
        .collect();
    v.push(
        target
            .join("dist")
            .join(format!(
                "volbench-{}-{arch}-linux",
                env!("CARGO_PKG_VERSION")
            ))
            .join("volbench"),
    );
    v
}

/// A candidate is used only when it says it is this very build (same
/// version and commit), so the agents speak the coordinator's protocol.
fn same_version(candidate: &Path) -> bool {
    Command::new(candidate)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| {
            let theirs = String::from_utf8_lossy(&o.stdout);
            let theirs = theirs.trim().trim_start_matches("volbench ");
            // Ours without the linkage: a static build says "static".
            theirs.replace(", static", "") == crate::input::version::LONG.replace(", static", "")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loader_is_found_in_a_dynamic_binary_only() {
        // The test binary itself is linked like every debug build.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(
            needs_loader(&me),
            Some(!cfg!(target_feature = "crt-static"))
        );
        assert_eq!(needs_loader(b"#!/bin/sh\n"), None);
        assert_eq!(needs_loader(&me[..0x30]), None, "a cut header");
    }

    #[test]
    fn the_static_build_is_looked_for_beside_the_profile_dirs() {
        let s = static_siblings(Path::new("/src/vb/target/debug/volbench"));
        let arch = std::env::consts::ARCH;
        assert!(s.contains(&PathBuf::from(format!(
            "/src/vb/target/{arch}-unknown-linux-gnu/release/volbench"
        ))));
        // The artifact `cargo xtask dist` unpacks.
        assert!(s.contains(&PathBuf::from(format!(
            "/src/vb/target/dist/volbench-{}-{arch}-linux/volbench",
            env!("CARGO_PKG_VERSION")
        ))));
        assert!(static_siblings(Path::new("volbench")).is_empty());
    }
}
