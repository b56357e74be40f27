//! The SMB section: for each run whose client was volbench's own SMB
//! client, what the session negotiated and the per-channel and per-command
//! counters (`output::smb`), so a run's spread over its channels and its
//! waits for credits are read beside its totals. Absent for a result with
//! no SMB run.

use super::super::Source;
use super::super::page::Section;
use crate::output::smb;

pub(crate) fn section(sources: &[Source]) -> Option<Section> {
    let mut tables = Vec::new();
    for s in sources {
        for r in s.doc.runs.iter().filter(|r| !r.workload.discard) {
            let Some(st) = smb::of(r) else { continue };
            let name = if sources.len() > 1 {
                format!("{}: {}", s.label, r.name)
            } else {
                r.name.clone()
            };
            tables.push(smb::channels(&name, st));
            tables.push(smb::commands(&name, st));
        }
    }
    if tables.is_empty() {
        return None;
    }
    let mut sec = Section::new(
        "smb-client",
        "SMB client",
        "What volbench's SMB client negotiated and saw in each run's measured phase, as \
         Windows shows it under SMB Client Shares: per channel (channel K of every I/O thread's \
         session added together) its requests, data and mean latency, the credits the server \
         granted and the requests that waited for one; then per channel each command. Requests \
         spread evenly over the channels in turn, so a channel far below the others' requests \
         was down or slow; many credit waits mean the server's credits, not the storage, held \
         the requests back.",
    );
    sec.tables = tables;
    Some(sec)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::report::fixtures::{self, RunFixture};
    use crate::result::protocol::ProtocolStats;
    use crate::result::smb::{SmbChannel, SmbStats};
    use crate::spec::Pattern;

    fn source(smb: bool) -> Source {
        let mut doc = fixtures::doc(
            "client-1",
            &[RunFixture::new("randread", Pattern::Randread, 100, 4096).perf(5000.0, 400.0)],
        );
        if smb {
            doc.runs[0].protocol = Some(ProtocolStats {
                protocol: "smb".into(),
                version: "3.1.1".into(),
                connections: 1,
                smb: Some(SmbStats {
                    dialect: "3.1.1".into(),
                    channels_per_session: 1,
                    channels: vec![SmbChannel::default()],
                    ..SmbStats::default()
                }),
                ..ProtocolStats::default()
            });
        }
        Source {
            label: "a".into(),
            path: std::path::PathBuf::from("a"),
            doc,
        }
    }

    #[test]
    fn only_a_result_with_smb_runs_has_the_section() {
        let sec = section(&[source(true)]).unwrap();
        assert_eq!(sec.id, "smb-client");
        let titles: Vec<&str> = sec.tables.iter().map(|t| t.title.as_str()).collect();
        assert_eq!(titles, ["SMB channels: randread", "SMB commands: randread"]);
        assert!(section(&[source(false)]).is_none());
    }
}
