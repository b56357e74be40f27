//! What a protocol client saw (`runs[].protocol`), in a few lines under
//! the run's table: the connections and any reconnects first (a server
//! that restarted mid-run is said, not hidden in a file), then one line
//! per operation type with its calls, data, round-trip time against
//! execute time (the gap is time queued in the client), and what was sent
//! again; the busiest and idlest connection when they differ a lot; an
//! SMB client's negotiation and channels (`smb`).

use super::fmt::{micros, size, thousands};
use crate::result::RunResult;
use crate::result::protocol::ProtocolStats;

/// Operation types shown, the busiest first; the rest are in result.json.
const MAX_OPS_SHOWN: usize = 4;

/// The lines for `run`, none for a run without a protocol client.
pub(crate) fn lines(run: &RunResult) -> Vec<String> {
    run.protocol
        .as_ref()
        .map_or_else(Vec::new, |p| of(&run.name, p))
}

fn of(name: &str, p: &ProtocolStats) -> Vec<String> {
    let mut out = vec![head(name, p)];
    let mut ops: Vec<_> = p.ops.iter().filter(|o| o.calls + o.errors > 0).collect();
    ops.sort_by_key(|o| std::cmp::Reverse(o.calls));
    for o in ops.iter().take(MAX_OPS_SHOWN) {
        let mut l = format!(
            "  {:<6} {} calls {}, rtt {} exec {} (mean)",
            o.op,
            thousands(o.calls as f64),
            size(o.bytes),
            micros(o.rtt_us.mean),
            micros(o.exec_us.mean),
        );
        for (n, what) in [
            (o.retrans, "resent"),
            (o.timeouts, "timed out"),
            (o.errors, "failed"),
        ] {
            if n > 0 {
                l.push_str(&format!(", {} {what}", thousands(n as f64)));
            }
        }
        out.push(l);
    }
    if let Some(l) = spread(p) {
        out.push(l);
    }
    if let Some(s) = &p.smb {
        out.extend(super::smb::lines(s));
    }
    out
}

fn head(name: &str, p: &ProtocolStats) -> String {
    let conns = format!(
        "{} {}",
        p.connections,
        if p.connections == 1 {
            "connection"
        } else {
            "connections"
        }
    );
    let lost = match p.reconnects {
        0 => "no reconnects".to_string(),
        n => {
            // An SMB client lists its channels in `smb`, not per connection.
            let on = match &p.smb {
                Some(s) => s.channels.iter().filter(|c| c.reconnects > 0).count(),
                None => p.per_connection.iter().filter(|c| c.reconnects > 0).count(),
            };
            format!(
                "{n} {} after the server was lost ({on} of {} connections; calls in flight sent again)",
                if n == 1 { "reconnect" } else { "reconnects" },
                p.connections,
            )
        }
    };
    format!(
        "{name}: {} {} client: {conns}, {lost}",
        p.protocol.to_uppercase(),
        p.version
    )
}

/// The busiest and idlest connection's calls, when the busiest carried
/// over twice the idlest's: nconnect spreads calls round robin, so a
/// wide gap is a connection that was down or slow.
fn spread(p: &ProtocolStats) -> Option<String> {
    let busiest = p.per_connection.iter().max_by_key(|c| c.calls)?;
    let idlest = p.per_connection.iter().min_by_key(|c| c.calls)?;
    if p.per_connection.len() < 2 || busiest.calls <= 2 * idlest.calls.max(1) {
        return None;
    }
    Some(format!(
        "  connections uneven: thread {} connection {} carried {} calls, thread {} connection {} {}",
        busiest.thread,
        busiest.conn,
        thousands(busiest.calls as f64),
        idlest.thread,
        idlest.conn,
        thousands(idlest.calls as f64)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::LatSummary;
    use crate::result::protocol::{ProtocolConn, ProtocolOp};

    fn stats(reconnects: u64, calls: [u64; 2]) -> ProtocolStats {
        let lat = |mean| LatSummary {
            mean,
            ..LatSummary::default()
        };
        ProtocolStats {
            protocol: "nfs".into(),
            version: "4.1".into(),
            connections: 2,
            smb: None,
            reconnects,
            ops: vec![ProtocolOp {
                op: "READ".into(),
                calls: calls[0] + calls[1],
                bytes: (calls[0] + calls[1]) * 4096,
                rtt_us: lat(120.0),
                exec_us: lat(180.0),
                retrans: reconnects * 4,
                ..ProtocolOp::default()
            }],
            per_connection: vec![
                ProtocolConn {
                    conn: 0,
                    calls: calls[0],
                    reconnects,
                    ..ProtocolConn::default()
                },
                ProtocolConn {
                    conn: 1,
                    calls: calls[1],
                    ..ProtocolConn::default()
                },
            ],
        }
    }

    fn run_with(p: ProtocolStats) -> Vec<String> {
        of("randread", &p)
    }

    #[test]
    fn a_restart_is_said_with_the_calls_sent_again() {
        let l = run_with(stats(2, [500, 500]));
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(
            l[0],
            "randread: NFS 4.1 client: 2 connections, 2 reconnects after the server was lost \
             (1 of 2 connections; calls in flight sent again)"
        );
        assert_eq!(
            l[1],
            "  READ   1,000 calls 3.91MiB, rtt 120 µs exec 180 µs (mean), 8 resent"
        );
        let quiet = run_with(stats(0, [500, 500]));
        assert!(
            quiet[0].ends_with("2 connections, no reconnects"),
            "{quiet:?}"
        );
        assert!(!quiet[1].contains("resent"), "{quiet:?}");
    }

    #[test]
    fn an_idle_connection_is_named() {
        let l = run_with(stats(0, [900, 100]));
        assert_eq!(
            l.last().map(String::as_str),
            Some(
                "  connections uneven: thread 0 connection 0 carried 900 calls, thread 0 connection 1 100"
            )
        );
        assert_eq!(
            run_with(stats(0, [200, 100])).len(),
            2,
            "no line when even enough"
        );
    }
}
