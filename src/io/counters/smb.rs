//! SMB client statistics: per share the SMB requests and the bytes moved.
//! On Linux from /proc/fs/cifs/Stats (present when the cifs module is
//! loaded); on Windows from the "SMB Client Shares" performance counters
//! (`windows_smb.rs`), for a target on a share (a UNC path or a drive
//! letter mapped to one).

use crate::result::counters::SmbRates;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ShareStat {
    pub(crate) smbs: u64,
    pub(crate) bytes_read: u64,
    pub(crate) bytes_written: u64,
}

/// Each share's block: "N) \\server\share", then "SMBs: N" and
/// "Bytes read: N  Bytes written: N" among its lines.
pub(crate) fn parse(text: &str) -> Vec<(String, ShareStat)> {
    let mut out: Vec<(String, ShareStat)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some((n, share)) = t.split_once(") ") {
            if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() && share.starts_with("\\\\") {
                // Newer kernels add the share's state after the name.
                let name = share.split_whitespace().next().unwrap_or(share);
                out.push((name.to_string(), ShareStat::default()));
                continue;
            }
        }
        let Some((_, s)) = out.last_mut() else {
            continue;
        };
        let num = |key: &str| -> Option<u64> {
            let at = t.find(key)? + key.len();
            t[at..].split_whitespace().next()?.parse().ok()
        };
        if let Some(v) = t.strip_prefix("SMBs:") {
            s.smbs = v
                .split_whitespace()
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
        } else if t.starts_with("Bytes read:") {
            s.bytes_read = num("Bytes read:").unwrap_or(0);
            s.bytes_written = num("Bytes written:").unwrap_or(0);
        }
    }
    out
}

pub(crate) fn rates(share: &str, a: &ShareStat, b: &ShareStat, secs: f64) -> SmbRates {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64 / secs;
    SmbRates {
        share: share.to_string(),
        smbs_s: d(a.smbs, b.smbs),
        read_mib_s: d(a.bytes_read, b.bytes_read) / 1048576.0,
        write_mib_s: d(a.bytes_written, b.bytes_written) / 1048576.0,
    }
}

/// "//server/share" (a cifs mount's source) as the Stats file names it.
pub(crate) fn share_name(mount_source: &str) -> String {
    mount_source.replace('/', "\\")
}

/// The share `path` lies on, as `\\server\share`, when it is a UNC path
/// (`\\server\share\...`, `\\?\UNC\server\share\...`, or with forward
/// slashes); None for anything else (a drive letter, a local path).
/// Windows' (`windows_smb.rs`): Linux finds the share from the mount.
#[cfg(any(windows, test))]
pub(crate) fn unc_share(path: &str) -> Option<String> {
    let p = path.replace('/', "\\");
    let rest = p.strip_prefix("\\\\?\\UNC\\").or_else(|| {
        p.strip_prefix("\\\\")
            .filter(|r| !r.starts_with(['?', '.']))
    })?;
    let mut parts = rest.split('\\').filter(|x| !x.is_empty());
    let (server, share) = (parts.next()?, parts.next()?);
    Some(format!("\\\\{server}\\{share}"))
}

/// Whether a counter instance (Windows names them `\\server\share` or
/// `\server\share`, in the case the client connected with) is `share`.
#[cfg(any(windows, test))]
pub(crate) fn same_share(instance: &str, share: &str) -> bool {
    instance
        .trim_start_matches('\\')
        .eq_ignore_ascii_case(share.trim_start_matches('\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(smbs: u64, read: u64, written: u64) -> String {
        format!(
            "Resources in use
CIFS Session: 1
Share (unique mount targets): 2
SMB Request/Response Buffer: 1 Pool size: 5
SMB Small Req/Resp Buffer: 1 Pool size: 30
Total Large 10 Small 286 Allocations
Operations (MIDs): 0

0 session 0 share reconnects
Total vfs operations: 90 maximum at one time: 2

Max requests in flight: 3
1) \\\\files.example\\IPC$
SMBs: 4
Bytes read: 0  Bytes written: 0
2) \\\\files.example\\bench
SMBs: {smbs}
Bytes read: {read}  Bytes written: {written}
Open files: 1 total (local), 1 open on server
TreeConnects: 1 total 0 failed
Reads: 10 total 0 failed
Writes: 0 total 0 failed
"
        )
    }

    #[test]
    fn per_share_requests_and_bytes() {
        let a = parse(&fixture(100, 1 << 20, 0));
        let b = parse(&fixture(300, 5 << 20, 2 << 20));
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].0, "\\\\files.example\\bench");
        assert_eq!(a[1].0, share_name("//files.example/bench"));
        let r = rates(&a[1].0, &a[1].1, &b[1].1, 2.0);
        assert_eq!(r.smbs_s, 100.0);
        assert_eq!(r.read_mib_s, 2.0);
        assert_eq!(r.write_mib_s, 1.0);
        assert!(parse("Resources in use\nCIFS Session: 0\n").is_empty());
    }

    #[test]
    fn the_share_of_a_unc_path() {
        let want = Some("\\\\files\\bench".to_string());
        assert_eq!(unc_share("\\\\files\\bench\\dir\\f.dat"), want);
        assert_eq!(unc_share("\\\\files\\bench"), want);
        assert_eq!(unc_share("\\\\?\\UNC\\files\\bench\\d"), want);
        assert_eq!(unc_share("//files/bench/d"), want);
        for not in [
            "C:\\data",
            "\\\\?\\C:\\data",
            "\\\\.\\PhysicalDrive0",
            "\\\\files",
            "/mnt/x",
            "",
        ] {
            assert_eq!(unc_share(not), None, "{not}");
        }
        assert!(same_share("\\files\\Bench", "\\\\FILES\\bench"));
        assert!(same_share("\\\\files\\bench", "\\\\files\\bench"));
        assert!(!same_share("\\files\\bench2", "\\\\files\\bench"));
    }
}
