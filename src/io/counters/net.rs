//! Network interfaces: bytes and packets each way from /proc/net/dev, the
//! link speed from /sys/class/net/NAME/speed.

use std::path::Path;

use crate::result::counters::{InterfaceInfo, NetRates};

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct NetStat {
    pub(crate) rx_bytes: u64,
    pub(crate) rx_packets: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) tx_packets: u64,
}

/// Every interface in /proc/net/dev, loopback included (the caller picks).
pub(crate) fn parse(text: &str) -> Vec<(String, NetStat)> {
    text.lines()
        .filter_map(|line| {
            let (name, rest) = line.split_once(':')?;
            let v: Vec<u64> = rest
                .split_whitespace()
                .map(|x| x.parse().unwrap_or(0))
                .collect();
            // 8 receive columns, then 8 transmit columns.
            if v.len() < 10 {
                return None;
            }
            Some((
                name.trim().to_string(),
                NetStat {
                    rx_bytes: v[0],
                    rx_packets: v[1],
                    tx_bytes: v[8],
                    tx_packets: v[9],
                },
            ))
        })
        .collect()
}

pub(crate) fn rates(name: &str, a: &NetStat, b: &NetStat, secs: f64) -> NetRates {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64 / secs;
    NetRates {
        name: name.to_string(),
        rx_mib_s: d(a.rx_bytes, b.rx_bytes) / 1048576.0,
        tx_mib_s: d(a.tx_bytes, b.tx_bytes) / 1048576.0,
        rx_packets_s: d(a.rx_packets, b.rx_packets),
        tx_packets_s: d(a.tx_packets, b.tx_packets),
    }
}

/// The interfaces worth watching: not loopback, and up (or "unknown", as
/// tunnels and some virtual links report), with their speed when known.
pub(crate) fn interfaces(proc_net_dev: &str, sys: &Path) -> Vec<InterfaceInfo> {
    parse(proc_net_dev)
        .into_iter()
        .filter(|(name, _)| name != "lo")
        .filter_map(|(name, _)| {
            let dir = sys.join("class/net").join(&name);
            let state = std::fs::read_to_string(dir.join("operstate")).unwrap_or_default();
            if !matches!(state.trim(), "up" | "unknown") {
                return None;
            }
            let speed = std::fs::read_to_string(dir.join("speed")).ok();
            Some(InterfaceInfo {
                speed_mbit: speed.as_deref().and_then(speed_mbit),
                name,
            })
        })
        .collect()
}

/// The speed file's text: Mbit/s, or -1 / an error when the driver does not say.
fn speed_mbit(text: &str) -> Option<f64> {
    let v: i64 = text.trim().parse().ok()?;
    (v > 0).then_some(v as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
  eth0: 1048576 1000 0 0 0 0 0 0 2097152 2000 0 0 0 0 0 0
veth-a1:0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
";
    const T1: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
  eth0: 3145728 1500 0 0 0 0 0 0 6291456 6000 0 0 0 0 0 0
";

    #[test]
    fn proc_net_dev_both_ways() {
        let (a, b) = (parse(T0), parse(T1));
        assert_eq!(a.len(), 3, "headers are not interfaces");
        assert_eq!(a[2].0, "veth-a1", "a long name runs into its colon");
        let r = rates("eth0", &a[1].1, &b[1].1, 2.0);
        assert_eq!(r.rx_mib_s, 1.0);
        assert_eq!(r.tx_mib_s, 2.0);
        assert_eq!(r.rx_packets_s, 250.0);
        assert_eq!(r.tx_packets_s, 2000.0);
    }

    #[test]
    fn link_speed_only_when_the_driver_knows_it() {
        assert_eq!(speed_mbit("25000\n"), Some(25000.0));
        assert_eq!(speed_mbit("-1\n"), None);
        assert_eq!(speed_mbit(""), None);
    }
}
