//! `--push-binary` through any launcher (the binary streams over the
//! launcher's stdin: no scp needed).

use std::path::Path;
use std::time::Duration;

use super::super::launch::quote::quote_remote_path;
use super::super::launch::{Launcher, RemoteCmd};
use crate::error::{Result, VbError};

/// A content hash naming a pushed binary: 128-bit FNV-1a, hex. Not a
/// security boundary (the launcher already authenticates the copy); it only tells
/// one build from another so a cached copy is reused exactly when it is
/// this binary.
pub(crate) fn content_hash(bytes: &[u8]) -> String {
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for &b in bytes {
        h ^= b as u128;
        h = h.wrapping_mul(PRIME);
    }
    format!("{h:032x}")
}

/// Makes sure `host` has this very binary in `cache_dir` (named by its
/// content hash), copying it when missing; returns the remote command word
/// that runs it. Only that content-named file is ever written.
pub(crate) fn push_binary(
    launcher: &Launcher,
    host: &str,
    cache_dir: &str,
    exe: &Path,
    bytes: &[u8],
) -> Result<String> {
    let name = format!("volbench-{}", &content_hash(bytes)[..24]);
    let dir = quote_remote_path(cache_dir);
    let file = format!("{dir}/{name}");
    let probe = format!("if [ -x {file} ]; then echo have; else echo need; fi; uname -s; uname -m");
    let out = launcher.run(
        host,
        &RemoteCmd::Script(probe),
        b"",
        Duration::from_secs(30),
    )?;
    let mut lines = out.lines().map(str::trim);
    let state = lines.next().unwrap_or("");
    let os = lines.next().unwrap_or("");
    let arch = lines.next().unwrap_or("");
    let (my_os, my_arch) = (local_uname_s(), std::env::consts::ARCH);
    if !os.eq_ignore_ascii_case(&my_os) || arch != my_arch {
        return Err(VbError::target(format!(
            "host {host} is {os} {arch}; this volbench ({}) is built for {my_os} {my_arch} and \
             cannot be pushed there: install a matching volbench on it instead",
            exe.display()
        )));
    }
    match state {
        "have" => Ok(file),
        "need" => {
            // Write under a temporary name and rename, so a half-copied
            // binary is never run and concurrent pushes cannot collide
            // (the node's name too: Slurm nodes share one home directory,
            // and two of them may well give the same pid).
            let script = format!(
                "umask 077 && mkdir -p {dir} && t={dir}/.{name}.$(uname -n).$$ && cat > \"$t\" && \
                 chmod 700 \"$t\" && mv -f \"$t\" {file}"
            );
            launcher
                .run(
                    host,
                    &RemoteCmd::Script(script),
                    bytes,
                    Duration::from_secs(600),
                )
                .map_err(|e| VbError::target(format!("copying volbench: {e}")))?;
            Ok(file)
        }
        _ => Err(VbError::target(format!(
            "host {host}: unexpected answer while checking for volbench: {}",
            crate::remote::protocol::sanitize(&out, 200)
        ))),
    }
}

#[cfg(unix)]
fn local_uname_s() -> String {
    rustix::system::uname()
        .sysname()
        .to_string_lossy()
        .into_owned()
}

/// A Windows coordinator pushes to no host: the probe and the copy are
/// POSIX shell, and `uname -s` never says "Windows", so the push is
/// refused by the check above with its one line.
#[cfg(windows)]
fn local_uname_s() -> String {
    "Windows".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_tells_contents_apart() {
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
        assert_eq!(content_hash(b"abc"), content_hash(b"abc"));
        assert_eq!(content_hash(b"").len(), 32);
    }
}
