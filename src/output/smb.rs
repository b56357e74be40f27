//! What volbench's SMB client saw (`runs[].protocol.smb`) as tables, the
//! way Windows' "SMB Client Shares" counters are read: the session's
//! negotiation, then per channel its requests, data, mean latency and the
//! requests that waited for credits, then per channel per command. Built
//! from the result alone, so the HTML report and the exports agree.

use super::fmt::{micros, number, thousands};
use super::table::Table;
use crate::result::smb::{SmbChannel, SmbStats};
use crate::result::{ResultDoc, RunResult};

/// Channels the terminal lists under a run; the rest are in the report.
const MAX_CHANNELS_SHOWN: usize = 8;

/// The SMB figures of `run`, if its client was SMB's.
pub(crate) fn of(run: &RunResult) -> Option<&SmbStats> {
    run.protocol.as_ref()?.smb.as_ref()
}

/// Requests of every command on a channel.
pub(crate) fn requests(c: &SmbChannel) -> u64 {
    c.commands.iter().map(|x| x.requests).sum()
}

fn bytes(c: &SmbChannel) -> u64 {
    c.commands.iter().map(|x| x.bytes).sum()
}

/// The channel's mean latency over every command, weighted by requests.
fn mean_us(c: &SmbChannel) -> f64 {
    let n = requests(c);
    if n == 0 {
        return 0.0;
    }
    c.commands
        .iter()
        .map(|x| x.latency_us.mean * x.requests as f64)
        .sum::<f64>()
        / n as f64
}

/// The share of a channel's requests that waited for credits, in percent.
pub(crate) fn waited_pct(c: &SmbChannel) -> f64 {
    c.credit_waits as f64 * 100.0 / requests(c).max(1) as f64
}

fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / f64::from(1u32 << 20))
}

/// Every SMB run's two tables, for tables.md and the table CSVs.
pub(crate) fn tables(doc: &ResultDoc) -> Vec<Table> {
    doc.runs
        .iter()
        .filter(|r| !r.workload.discard)
        .filter_map(|r| Some((r, of(r)?)))
        .flat_map(|(r, s)| [channels(&r.name, s), commands(&r.name, s)])
        .collect()
}

/// The terminal's lines under a run's protocol lines: what was negotiated,
/// then each channel's requests and credit waits.
pub(crate) fn lines(s: &SmbStats) -> Vec<String> {
    let mut out = vec![format!("  {}", negotiated(s))];
    for c in s.channels.iter().take(MAX_CHANNELS_SHOWN) {
        out.push(format!(
            "  channel {} ({}): {} requests {} MiB, mean {}, {} waited for credits ({}%)",
            c.channel,
            c.server,
            thousands(requests(c) as f64),
            mib(bytes(c)),
            micros(mean_us(c)),
            thousands(c.credit_waits as f64),
            number(waited_pct(c)),
        ));
        if c.reconnects > 0 {
            if let Some(l) = out.last_mut() {
                l.push_str(&format!(
                    ", {} {} after the server was lost",
                    thousands(c.reconnects as f64),
                    if c.reconnects == 1 {
                        "reconnect"
                    } else {
                        "reconnects"
                    }
                ));
            }
        }
    }
    out
}

/// One line: dialect, signing, encryption, channels, the largest I/O.
pub(crate) fn negotiated(s: &SmbStats) -> String {
    let signing = match (s.signing, &s.signing_algorithm) {
        (true, Some(a)) => format!("signed ({a})"),
        (true, None) => "signed".to_string(),
        (false, _) => "not signed".to_string(),
    };
    let sealed = s.encryption.as_ref().map_or_else(
        || "not encrypted".to_string(),
        |c| format!("encrypted ({c})"),
    );
    format!(
        "SMB {}, {signing}, {sealed}, {} channel(s) per session, I/O up to {}",
        s.dialect,
        s.channels_per_session,
        super::fmt::size(u64::from(s.max_io)),
    )
}

/// Per channel: requests, MiB, mean latency, credits and their waits.
pub(crate) fn channels(name: &str, s: &SmbStats) -> Table {
    let mut t = Table::new(
        format!("SMB channels: {name}"),
        &[
            "Channel",
            "Server",
            "Sessions",
            "Requests",
            "MiB",
            "Mean latency",
            "Credits granted",
            "Credit waits",
            "Waited",
            "Mean credit wait",
            "Most in flight",
            "Reconnects",
        ],
        2,
    );
    t.about = negotiated(s);
    for c in &s.channels {
        let wait = if c.credit_waits == 0 {
            "-".to_string()
        } else {
            micros(c.credit_wait_ms * 1000.0 / c.credit_waits as f64)
        };
        t.rows.push(vec![
            c.channel.to_string(),
            c.server.clone(),
            c.sessions.to_string(),
            thousands(requests(c) as f64),
            mib(bytes(c)),
            micros(mean_us(c)),
            thousands(c.credits_granted as f64),
            thousands(c.credit_waits as f64),
            format!("{}%", number(waited_pct(c))),
            wait,
            c.max_in_flight.to_string(),
            thousands(c.reconnects as f64),
        ]);
    }
    t
}

/// Per channel per command: requests, MiB, errors, latency.
pub(crate) fn commands(name: &str, s: &SmbStats) -> Table {
    let mut t = Table::new(
        format!("SMB commands: {name}"),
        &[
            "Channel",
            "Command",
            "Requests",
            "MiB",
            "Errors",
            "Mean latency",
            "p99 latency",
        ],
        2,
    );
    for c in &s.channels {
        for x in &c.commands {
            t.rows.push(vec![
                c.channel.to_string(),
                x.command.clone(),
                thousands(x.requests as f64),
                mib(x.bytes),
                thousands(x.errors as f64),
                micros(x.latency_us.mean),
                micros(x.latency_us.p99),
            ]);
        }
    }
    t
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::result::LatSummary;
    use crate::result::smb::SmbCommand;

    fn stats() -> SmbStats {
        let cmd = |command: &str, requests: u64, mean: f64| SmbCommand {
            command: command.into(),
            requests,
            bytes: requests * 65536,
            errors: 0,
            latency_us: LatSummary {
                mean,
                p99: mean * 2.0,
                ..LatSummary::default()
            },
        };
        SmbStats {
            dialect: "3.1.1".into(),
            signing: true,
            signing_algorithm: Some("AES-GMAC".into()),
            encryption: None,
            channels_per_session: 2,
            max_io: 1 << 20,
            channels: vec![
                SmbChannel {
                    channel: 0,
                    server: "10.0.0.1:445".into(),
                    sessions: 4,
                    credits_granted: 9000,
                    credit_waits: 250,
                    credit_wait_ms: 50.0,
                    max_in_flight: 16,
                    reconnects: 1,
                    commands: vec![cmd("read", 800, 300.0), cmd("write", 200, 800.0)],
                },
                SmbChannel {
                    channel: 1,
                    server: "10.0.0.2:445".into(),
                    sessions: 4,
                    credits_granted: 8000,
                    commands: vec![cmd("read", 1000, 250.0)],
                    ..SmbChannel::default()
                },
            ],
        }
    }

    #[test]
    fn channels_show_traffic_latency_and_credit_waits() {
        let t = channels("randread", &stats());
        assert_eq!(
            t.about,
            "SMB 3.1.1, signed (AES-GMAC), not encrypted, 2 channel(s) per session, I/O up to 1MiB"
        );
        assert_eq!(
            t.rows[0],
            [
                "0",
                "10.0.0.1:445",
                "4",
                "1,000",
                "62.5",
                "400 µs",
                "9,000",
                "250",
                "25%",
                "200 µs",
                "16",
                "1"
            ]
        );
        assert_eq!(t.rows[1][7..10], ["0", "0%", "-"]);
        assert_eq!(t.rows[1][11], "0");
    }

    #[test]
    fn the_terminal_names_each_channel_s_share_of_credit_waits() {
        let l = lines(&stats());
        assert_eq!(l.len(), 3, "{l:?}");
        assert_eq!(
            l[1],
            "  channel 0 (10.0.0.1:445): 1,000 requests 62.5 MiB, mean 400 µs, 250 waited for \
             credits (25%), 1 reconnect after the server was lost"
        );
        assert!(!l[2].contains("reconnect"), "{}", l[2]);
    }

    #[test]
    fn commands_are_listed_per_channel() {
        let t = commands("randread", &stats());
        let got: Vec<(&str, &str, &str)> = t
            .rows
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("0", "read", "800"),
                ("0", "write", "200"),
                ("1", "read", "1,000")
            ]
        );
        assert_eq!(t.rows[1][5..], ["800 µs", "1.6 ms"]);
    }
}
