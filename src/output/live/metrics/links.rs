//! The exporter's series per channel of an SMB session and per connection
//! of an NFS client: what each carried, labelled by its place in the
//! client (`channel`, `connection`) and the server address it reaches.
//! Bounded as the live figures are (`stats::live_links::MAX_LINKS` per
//! target and phase).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::{Label, PhasePartLabels};
use crate::result::protocol::{LinkInterval, ProtocolInterval};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChannelLabels {
    run: Label,
    host: Label,
    target: Label,
    phase: Label,
    channel: Label,
    server: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ConnectionLabels {
    run: Label,
    host: Label,
    target: Label,
    phase: Label,
    connection: Label,
    server: Label,
}

/// Four counters a channel or a connection adds to, in the order of
/// `LinkInterval`'s requests (calls), bytes, errors and waits (retrans).
type Four<L> = [Family<L, Counter>; 4];

#[derive(Clone)]
pub(super) struct LinkMetrics {
    channels: Four<ChannelLabels>,
    connections: Four<ConnectionLabels>,
}

impl LinkMetrics {
    pub(super) fn register(reg: &mut Registry) -> Self {
        let m = LinkMetrics {
            channels: Default::default(),
            connections: Default::default(),
        };
        let channel = [
            ("requests", "Requests an SMB session's channel sent"),
            ("bytes", "Bytes an SMB session's channel read or wrote"),
            ("errors", "Requests an SMB session's channel had refused"),
            (
                "credit_waits",
                "Requests an SMB session's channel held back for want of credits",
            ),
        ];
        for ((name, help), fam) in channel.into_iter().zip(&m.channels) {
            reg.register(
                format!("volbench_protocol_channel_{name}"),
                help,
                fam.clone(),
            );
        }
        let connection = [
            ("calls", "Calls an NFS client's connection had answered"),
            ("bytes", "Bytes an NFS client's connection read or wrote"),
            ("errors", "Calls an NFS client's connection had refused"),
            (
                "retransmissions",
                "Calls an NFS client's connection sent again",
            ),
        ];
        for ((name, help), fam) in connection.into_iter().zip(&m.connections) {
            reg.register(
                format!("volbench_protocol_connection_{name}"),
                help,
                fam.clone(),
            );
        }
        m
    }

    /// One target's interval: each channel's and connection's figures.
    pub(super) fn add(&self, l: &PhasePartLabels, p: &ProtocolInterval) {
        let four = |x: &LinkInterval| [x.requests(), x.bytes(), x.errors(), x.waits()];
        for c in &p.channels {
            let labels = ChannelLabels {
                run: l.run.clone(),
                host: l.host.clone(),
                target: l.target.clone(),
                phase: l.phase.clone(),
                channel: c.index.to_string().into(),
                server: c.server.as_str().into(),
            };
            for (fam, v) in self.channels.iter().zip(four(c)) {
                fam.get_or_create(&labels).inc_by(v);
            }
        }
        for c in &p.connections {
            let labels = ConnectionLabels {
                run: l.run.clone(),
                host: l.host.clone(),
                target: l.target.clone(),
                phase: l.phase.clone(),
                connection: c.index.to_string().into(),
                server: c.server.as_str().into(),
            };
            for (fam, v) in self.connections.iter().zip(four(c)) {
                fam.get_or_create(&labels).inc_by(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::live_links::LinkKind;

    #[test]
    fn each_channel_and_connection_has_its_series_by_place_and_server() {
        let mut reg = Registry::default();
        let m = LinkMetrics::register(&mut reg);
        let l = PhasePartLabels {
            run: "r".into(),
            host: "h".into(),
            target: "smb://s/share/d".into(),
            phase: "measure".into(),
        };
        let link = |kind, index, vals| LinkInterval {
            kind,
            index,
            server: format!("10.0.0.{index}:445"),
            vals,
        };
        let p = ProtocolInterval {
            channels: vec![
                link(LinkKind::Channel, 0, [10, 40960, 0, 2]),
                link(LinkKind::Channel, 1, [12, 49152, 1, 0]),
            ],
            ..ProtocolInterval::default()
        };
        m.add(&l, &p);
        m.add(&l, &p);
        m.add(
            &l,
            &ProtocolInterval {
                connections: vec![link(LinkKind::Connection, 3, [5, 5, 0, 1])],
                ..ProtocolInterval::default()
            },
        );
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &reg).unwrap();
        let line = |start: &str, has: &str| {
            text.lines()
                .find(|x| x.starts_with(start) && x.contains(has))
                .and_then(|x| x.rsplit(' ').next())
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {start} with {has}:\n{text}"))
        };
        let ch1 = r#"channel="1",server="10.0.0.1:445""#;
        assert_eq!(line("volbench_protocol_channel_bytes_total{", ch1), 98304);
        assert_eq!(line("volbench_protocol_channel_requests_total{", ch1), 24);
        assert_eq!(line("volbench_protocol_channel_errors_total{", ch1), 2);
        let ch0 = r#"channel="0""#;
        assert_eq!(
            line("volbench_protocol_channel_credit_waits_total{", ch0),
            4
        );
        let conn = r#"connection="3",server="10.0.0.3:445""#;
        assert_eq!(line("volbench_protocol_connection_calls_total{", conn), 5);
        assert_eq!(
            line("volbench_protocol_connection_retransmissions_total{", conn),
            1
        );
    }
}
