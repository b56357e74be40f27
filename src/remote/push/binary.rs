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
pub(crate) fn to_push() -> Result<(PathBuf, Vec<u8>)> {
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
/// the static `dist` and release builds, then the artifact `cargo xtask dist`
/// unpacks (`target/dist/volbench-VERSION-ARCH-linux/volbench`).
fn static_siblings(exe: &Path) -> Vec<PathBuf> {
    let arch = std::env::consts::ARCH;
    let mut v = Vec::new();
    for target in target_dirs(exe) {
        // `dist` is the profile `cargo xtask dist` builds the artifact with.
        for libc in ["gnu", "musl"] {
            for profile in ["dist", "release"] {
                v.push(
                    target
                        .join(format!("{arch}-unknown-linux-{libc}"))
                        .join(profile)
                        .join("volbench"),
                );
            }
        }
        v.push(
            target
                .join("dist")
                .join(format!(
                    "volbench-{}-{arch}-linux",
                    env!("CARGO_PKG_VERSION")
                ))
                .join("volbench"),
        );
    }
    v
}

/// The cargo target directory `exe` was built in: the parent of its
/// profile directory (`target/PROFILE/volbench`), and, for a build for an
/// explicit target (`target/TRIPLE/PROFILE/volbench`), the one above that
/// too, where the other targets' builds sit.
fn target_dirs(exe: &Path) -> Vec<PathBuf> {
    let Some(target) = exe.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    let mut v = vec![target.to_path_buf()];
    let triple = target
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.split('-').count() >= 3 && n.contains("-linux-"));
    if let Some(up) = target.parent().filter(|_| triple) {
        v.push(up.to_path_buf());
    }
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
            theirs.replace(", static", "") == crate::input::version::long().replace(", static", "")
        })
}

/// The volbench.exe `--push-binary` sends to Windows hosts, and its bytes:
/// `given` (`--windows-exe`), else this binary on Windows, else the
/// volbench.exe of this very build beside it: `scripts/windows-build` puts
/// it in `target/x86_64-pc-windows-gnu/{release,debug}/`, an install keeps
/// it next to `volbench`.
pub(crate) fn windows_exe(given: Option<&Path>) -> Result<(PathBuf, Vec<u8>)> {
    if let Some(p) = given {
        let bytes = std::fs::read(p).map_err(|e| {
            VbError::input(format!(
                "--windows-exe {}: cannot read it: {e}",
                p.display()
            ))
        })?;
        if let Some(why) = not_this_windows_build(&bytes) {
            return Err(VbError::input(format!(
                "--windows-exe {}: {why}",
                p.display()
            )));
        }
        return Ok((p.to_path_buf(), bytes));
    }
    let exe = std::env::current_exe()
        .map_err(|e| VbError::run(format!("cannot find this volbench binary: {e}")))?;
    if cfg!(windows) {
        let bytes = std::fs::read(&exe)
            .map_err(|e| VbError::run(format!("cannot read this binary {}: {e}", exe.display())))?;
        return Ok((exe, bytes));
    }
    for candidate in windows_siblings(&exe) {
        if let Ok(b) = std::fs::read(&candidate) {
            if not_this_windows_build(&b).is_none() {
                return Ok((candidate, b));
            }
        }
    }
    Err(VbError::input(format!(
        "--push-binary: an os=windows host needs volbench.exe of this build ({}), and none \
         is beside this binary: build it with scripts/windows-build --release, or name it \
         with --windows-exe PATH",
        crate::input::version::long()
    )))
}

/// Where this checkout's volbench.exe would be: beside the binary, then
/// the release and debug builds of `scripts/windows-build`.
fn windows_siblings(exe: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(dir) = exe.parent() {
        v.push(dir.join("volbench.exe"));
    }
    for target in target_dirs(exe) {
        for profile in ["release", "debug"] {
            v.push(
                target
                    .join("x86_64-pc-windows-gnu")
                    .join(profile)
                    .join("volbench.exe"),
            );
        }
    }
    v
}

/// Why `bytes` are not volbench.exe of this build (an x86-64 PE image
/// whose version text names this version and commit), or None.
///
/// The PE header read by hand, as the ELF one above: two offsets and a
/// machine field. The version is found as text because the file cannot be
/// run here to ask it: `--version`'s text is in every build.
pub(crate) fn not_this_windows_build(bytes: &[u8]) -> Option<String> {
    const AMD64: u16 = 0x8664;
    let pe = || -> Option<u16> {
        if bytes.get(..2)? != b"MZ" {
            return None;
        }
        let at =
            usize::try_from(u32::from_le_bytes(bytes.get(0x3c..0x40)?.try_into().ok()?)).ok()?;
        if bytes.get(at..at.checked_add(4)?)? != b"PE\0\0" {
            return None;
        }
        Some(u16::from_le_bytes(
            bytes.get(at + 4..at + 6)?.try_into().ok()?,
        ))
    };
    match pe() {
        None => return Some("not a Windows executable".into()),
        Some(m) if m != AMD64 => {
            return Some(format!(
                "a Windows executable for machine {m:#06x}, not x86-64"
            ));
        }
        Some(_) => {}
    }
    let mine = this_build();
    let found = memchr::memmem::find_iter(bytes, mine.as_bytes())
        .any(|at| matches!(bytes.get(at + mine.len()), Some(b')' | b',' | b'-')));
    if found {
        None
    } else {
        Some(format!(
            "not volbench {}: build this checkout's with scripts/windows-build",
            crate::input::version::long()
        ))
    }
}

/// `0.1.0 (commit 1a2b3c4d5e6f`: the version text up to the linkage and
/// without `-dirty`, which says only that the tree had changes when one of
/// the two was built (a build on CI may touch Cargo.lock): the commit is
/// what tells two builds' protocols apart.
fn this_build() -> String {
    let long = crate::input::version::long();
    let head = long.split([')', ',']).next().unwrap_or(long);
    head.strip_suffix("-dirty").unwrap_or(head).to_string()
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

    /// A minimal PE image: the DOS stub's pointer, the signature, the machine.
    fn pe(machine: u16, text: &str) -> Vec<u8> {
        let mut b = vec![0u8; 0x80];
        b[..2].copy_from_slice(b"MZ");
        b[0x3c..0x40].copy_from_slice(&0x40u32.to_le_bytes());
        b[0x40..0x44].copy_from_slice(b"PE\0\0");
        b[0x44..0x46].copy_from_slice(&machine.to_le_bytes());
        b.extend_from_slice(text.as_bytes());
        b
    }

    #[test]
    fn only_an_x86_64_exe_of_this_build_is_pushed_to_windows() {
        let long = crate::input::version::long();
        assert_eq!(not_this_windows_build(&pe(0x8664, long)), None);
        let stat = format!("{}, static)", this_build());
        assert_eq!(not_this_windows_build(&pe(0x8664, &stat)), None);
        let dirty = format!("{}-dirty)", this_build());
        assert_eq!(not_this_windows_build(&pe(0x8664, &dirty)), None);
        let other = not_this_windows_build(&pe(0x8664, "0.0.1 (commit 000000000000)"));
        assert!(other.unwrap().contains("not volbench"));
        // This commit's text followed by more of a longer commit name.
        let longer = format!("{}9)", this_build());
        assert!(not_this_windows_build(&pe(0x8664, &longer)).is_some());
        let arm = not_this_windows_build(&pe(0xaa64, long)).unwrap();
        assert!(arm.contains("0xaa64"), "{arm}");
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(
            not_this_windows_build(&me).as_deref(),
            Some("not a Windows executable")
        );
        assert!(not_this_windows_build(&pe(0x8664, long)[..0x42]).is_some());
    }

    #[test]
    fn the_windows_build_is_looked_for_beside_this_one() {
        let s = windows_siblings(Path::new("/src/vb/target/debug/volbench"));
        assert_eq!(
            s,
            [
                PathBuf::from("/src/vb/target/debug/volbench.exe"),
                PathBuf::from("/src/vb/target/x86_64-pc-windows-gnu/release/volbench.exe"),
                PathBuf::from("/src/vb/target/x86_64-pc-windows-gnu/debug/volbench.exe"),
            ]
        );
    }

    #[test]
    fn a_build_for_an_explicit_target_looks_beside_its_target_dir_too() {
        let s = windows_siblings(Path::new(
            "/src/vb/target/x86_64-unknown-linux-gnu/debug/volbench",
        ));
        assert!(s.contains(&PathBuf::from(
            "/src/vb/target/x86_64-pc-windows-gnu/debug/volbench.exe"
        )));
        let arch = std::env::consts::ARCH;
        let s = static_siblings(Path::new(&format!(
            "/src/vb/target/{arch}-unknown-linux-gnu/debug/volbench"
        )));
        assert!(s.contains(&PathBuf::from(format!(
            "/src/vb/target/{arch}-unknown-linux-gnu/release/volbench"
        ))));
        // A profile directory's parent that is no target triple is not
        // climbed out of.
        assert_eq!(
            target_dirs(Path::new("/a/b/target/debug/volbench")).len(),
            1
        );
    }

    #[test]
    fn the_static_build_is_looked_for_beside_the_profile_dirs() {
        let s = static_siblings(Path::new("/src/vb/target/debug/volbench"));
        let arch = std::env::consts::ARCH;
        assert!(s.contains(&PathBuf::from(format!(
            "/src/vb/target/{arch}-unknown-linux-gnu/release/volbench"
        ))));
        assert!(s.contains(&PathBuf::from(format!(
            "/src/vb/target/{arch}-unknown-linux-gnu/dist/volbench"
        ))));
        // The artifact `cargo xtask dist` unpacks.
        assert!(s.contains(&PathBuf::from(format!(
            "/src/vb/target/dist/volbench-{}-{arch}-linux/volbench",
            env!("CARGO_PKG_VERSION")
        ))));
        assert!(static_siblings(Path::new("volbench")).is_empty());
    }
}
