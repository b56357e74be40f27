//! NFS per-mount statistics from /proc/self/mountstats: per operation the
//! count, transmissions, and the cumulative round-trip and execution
//! times; per transport the requests sent and the backlog they met.
//!
//! RTT is request sent to reply received (network plus server); execution
//! is queued on the client to done. Execution well above RTT means the
//! requests waited on the client for a slot on the connection, which more
//! connections (nconnect) relieve.

use std::collections::BTreeMap;

use crate::result::counters::{NfsOpRates, NfsRates};

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct OpStat {
    pub(crate) ops: u64,
    pub(crate) trans: u64,
    pub(crate) rtt_ms: u64,
    pub(crate) exe_ms: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NfsStat {
    pub(crate) ops: BTreeMap<String, OpStat>,
    /// Summed over the mount's transports (one per nconnect connection).
    pub(crate) sends: u64,
    pub(crate) backlog_sum: u64,
}

/// The statistics of the NFS mount at `mount_point`, if mountstats lists one.
pub(crate) fn parse(text: &str, mount_point: &str) -> Option<NfsStat> {
    let mut stat: Option<NfsStat> = None;
    let mut in_ops = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("device ") {
            if stat.is_some() {
                break;
            }
            in_ops = false;
            // "SOURCE mounted on POINT with fstype TYPE [statvers=...]"
            let Some((_, after)) = rest.split_once(" mounted on ") else {
                continue;
            };
            let Some((point, fstype)) = after.rsplit_once(" with fstype ") else {
                continue;
            };
            let fstype = fstype.split_whitespace().next().unwrap_or("");
            if point.replace("\\040", " ") == mount_point && fstype.starts_with("nfs") {
                stat = Some(NfsStat::default());
            }
            continue;
        }
        let Some(s) = stat.as_mut() else { continue };
        let t = line.trim();
        if let Some(x) = t.strip_prefix("xprt:") {
            let f: Vec<&str> = x.split_whitespace().collect();
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // Column positions differ by transport (see the kernel's
            // xs_tcp_print_stats / xs_udp_print_stats).
            let (sends, backlog) = match f.first() {
                Some(&"tcp") => (n(6), n(10)),
                Some(&"udp") => (n(3), n(7)),
                _ => (0, 0),
            };
            s.sends += sends;
            s.backlog_sum += backlog;
        } else if t == "per-op statistics" {
            in_ops = true;
        } else if in_ops {
            if let Some((op, rest)) = t.split_once(':') {
                let v: Vec<u64> = rest
                    .split_whitespace()
                    .map(|x| x.parse().unwrap_or(0))
                    .collect();
                // ops trans timeouts bytes_sent bytes_recv queue rtt execute [errors]
                if v.len() >= 8 {
                    s.ops.insert(
                        op.to_string(),
                        OpStat {
                            ops: v[0],
                            trans: v[1],
                            rtt_ms: v[6],
                            exe_ms: v[7],
                        },
                    );
                }
            }
        }
    }
    stat
}

/// Every NFS mount point in /proc/self/mountstats, in its order (what
/// `volbench capture` watches when no --mount is given).
pub(crate) fn mount_points(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let (_, after) = line.strip_prefix("device ")?.split_once(" mounted on ")?;
            let (point, fstype) = after.rsplit_once(" with fstype ")?;
            let fstype = fstype.split_whitespace().next().unwrap_or("");
            fstype
                .starts_with("nfs")
                .then(|| point.replace("\\040", " "))
        })
        .collect()
}

/// Rates between two samples; only operations that happened are listed,
/// busiest first.
pub(crate) fn rates(a: &NfsStat, b: &NfsStat, secs: f64) -> NfsRates {
    let mut ops: Vec<NfsOpRates> = b
        .ops
        .iter()
        .filter_map(|(name, y)| {
            let x = a.ops.get(name).copied().unwrap_or_default();
            let n = y.ops.saturating_sub(x.ops);
            if n == 0 {
                return None;
            }
            let per = |p: u64, q: u64| q.saturating_sub(p) as f64 / n as f64;
            Some(NfsOpRates {
                op: name.clone(),
                ops_s: n as f64 / secs,
                avg_rtt_ms: per(x.rtt_ms, y.rtt_ms),
                avg_exe_ms: per(x.exe_ms, y.exe_ms),
                retrans_s: (y.trans.saturating_sub(x.trans)).saturating_sub(n) as f64 / secs,
            })
        })
        .collect();
    ops.sort_by(|p, q| q.ops_s.total_cmp(&p.ops_s));
    let sends = b.sends.saturating_sub(a.sends);
    NfsRates {
        ops,
        sends_s: sends as f64 / secs,
        avg_backlog: if sends > 0 {
            b.backlog_sum.saturating_sub(a.backlog_sum) as f64 / sends as f64
        } else {
            0.0
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// As Linux 6.x prints it for an NFSv3 mount with nconnect=2.
    pub(crate) fn fixture(reads: u64, trans: u64, rtt: u64, exe: u64, sends: u64) -> String {
        format!(
            "device sysfs mounted on /sys with fstype sysfs
device proc mounted on /proc with fstype proc
device 10.0.0.4:/vol1 mounted on /mnt/anf\\040vol with fstype nfs statvers=1.1
\topts:\trw,vers=3,rsize=262144,wsize=262144,namlen=255,hard,nconnect=2,proto=tcp,timeo=600,retrans=2,sec=sys
\tage:\t3600
\tcaps:\tcaps=0x3fef,wtmult=4096,dtsize=262144,bsize=0,namlen=255
\tsec:\tflavor=1,pseudoflavor=1
\tevents:\t0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
\tbytes:\t0 0 0 0 0 0 0 0
\tRPC iostats version: 1.1  p/v: 100003/3 (nfs)
\txprt:\ttcp 875 1 1 0 0 {s} {s} 0 1500 {b} 2 0 3
\txprt:\ttcp 876 1 1 0 0 {s} {s} 0 1500 {b} 2 0 3
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t     GETATTR: 10 10 0 1200 1120 0 5 6 0
\t        READ: {reads} {trans} 0 240000 524544000 400 {rtt} {exe} 0
\t       WRITE: 0 0 0 0 0 0 0 0 0

device tmpfs mounted on /mnt/other with fstype tmpfs
device 10.0.0.5:/vol2 mounted on /mnt/b with fstype nfs4 statvers=1.1
\txprt:\ttcp 877 1 1 0 0 99 99 0 0 0 2 0 3
\tper-op statistics
\t        READ: 7 7 0 1 1 1 1 1 0
",
            s = sends,
            b = sends * 3,
        )
    }

    #[test]
    fn the_targets_mount_only_with_rtt_and_execution() {
        let a = parse(&fixture(2000, 2002, 3000, 12000, 1000), "/mnt/anf vol").unwrap();
        let b = parse(&fixture(4000, 4010, 5000, 30000, 2000), "/mnt/anf vol").unwrap();
        assert_eq!(a.ops["READ"].ops, 2000);
        assert_eq!(a.sends, 2000, "both nconnect transports add");
        let r = rates(&a, &b, 2.0);
        assert_eq!(r.ops.len(), 1, "only operations that happened");
        let read = &r.ops[0];
        assert_eq!(read.op, "READ");
        assert_eq!(read.ops_s, 1000.0);
        assert_eq!(read.avg_rtt_ms, 1.0);
        assert_eq!(read.avg_exe_ms, 9.0);
        assert_eq!(
            read.retrans_s, 4.0,
            "8 transmissions beyond one each, in 2 s"
        );
        assert_eq!(r.sends_s, 1000.0);
        assert_eq!(r.avg_backlog, 3.0);
    }

    #[test]
    fn every_nfs_mount_point_and_nothing_else() {
        let text = fixture(1, 1, 1, 1, 1);
        assert_eq!(mount_points(&text), ["/mnt/anf vol", "/mnt/b"]);
    }

    #[test]
    fn other_mounts_are_not_taken() {
        let text = fixture(1, 1, 1, 1, 1);
        assert!(parse(&text, "/mnt/other").is_none(), "tmpfs is no NFS");
        assert!(parse(&text, "/mnt/anf").is_none());
        let b = parse(&text, "/mnt/b").unwrap();
        assert_eq!(b.ops["READ"].ops, 7);
        assert_eq!(b.sends, 99);
    }
}
