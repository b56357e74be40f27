//! What `compare` must say before any ratio: the conditions the compared
//! results ran under, where they differ. A 2x between two results means
//! little when one ran nconnect=8 on a newer kernel with buffered I/O; the
//! papers name such changes, so the comparison lists them first.

use super::super::Source;
use crate::output::table::Table;
use crate::result::conditions::conditions;

/// The conditions that differ between the results, one row each with the
/// value in every result; None when they all ran alike.
pub(crate) fn differing(sources: &[Source]) -> Option<Table> {
    if sources.len() < 2 {
        return None;
    }
    let all: Vec<Vec<(String, String)>> = sources.iter().map(|s| conditions(&s.doc)).collect();
    let mut head = vec!["condition"];
    head.extend(sources.iter().map(|s| s.label.as_str()));
    let mut t = Table::new("Conditions differ", &head, head.len());
    for (i, (name, first)) in all[0].iter().enumerate() {
        let values: Vec<&str> = all.iter().map(|c| c[i].1.as_str()).collect();
        if values.iter().all(|v| *v == first) {
            continue;
        }
        let mut row = vec![name.clone()];
        row.extend(values.iter().map(|v| v.to_string()));
        t.rows.push(row);
    }
    if t.rows.is_empty() {
        return None;
    }
    t.notes.push(
        "The ratios below compare results run under these different conditions; read them \
         with that in mind."
            .into(),
    );
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{fixtures, label_sources};
    use crate::result::ResultDoc;

    fn two(a: ResultDoc, b: ResultDoc) -> Vec<Source> {
        let mut s = vec![
            Source {
                label: String::new(),
                path: "/r/a".into(),
                doc: a,
            },
            Source {
                label: String::new(),
                path: "/r/b".into(),
                doc: b,
            },
        ];
        label_sources(&mut s);
        s
    }

    fn rows(t: &Table) -> Vec<Vec<String>> {
        t.rows.clone()
    }

    #[test]
    fn identical_conditions_say_nothing() {
        let s = two(fixtures::six_patterns(), fixtures::six_patterns());
        assert!(differing(&s).is_none());
    }

    #[test]
    fn each_differing_condition_is_a_row_with_both_values() {
        let a = fixtures::six_patterns();
        let mut b = fixtures::six_patterns();
        b.tool.version = "9.9.9".into();
        b.host.kernel = "6.8.0-azure".into();
        b.host.cpus = 16;
        b.host.cpu_model = "Other CPU".into();
        b.spec.target.direct = false;
        for r in &mut b.runs {
            r.engine = vec![crate::spec::EngineKind::Psync];
        }
        if let Some(m) = b.target.as_mut().and_then(|t| t.mount.as_mut()) {
            m.options = "rw,vers=4.1,rsize=1048576,wsize=65536,nconnect=8,proto=tcp".into();
        }
        let t = differing(&two(a, b)).unwrap();
        let r = rows(&t);
        let row = |name: &str| {
            r.iter()
                .find(|x| x[0] == name)
                .unwrap_or_else(|| panic!("no row {name}: {r:?}"))
                .clone()
        };
        assert_eq!(row("volbench version")[1..], ["0.0.0-test", "9.9.9"]);
        assert_eq!(row("kernel")[1..], ["6.1.0-test", "6.8.0-azure"]);
        assert_eq!(row("CPUs")[1..], ["32", "16"]);
        assert_eq!(row("CPU model")[1..], ["Test CPU 3000", "Other CPU"]);
        assert_eq!(row("engine")[1..], ["io_uring", "psync"]);
        assert_eq!(row("I/O")[1..], ["direct", "buffered"]);
        assert_eq!(row("mount vers")[1..], ["3", "4.1"]);
        assert_eq!(row("mount nconnect")[1..], ["16", "8"]);
        assert_eq!(row("mount rsize")[1..], ["65536", "1048576"]);
        // Same on both sides: not listed.
        assert!(r.iter().all(|x| x[0] != "mount wsize" && x[0] != "hosts"));
        assert!(t.to_terminal().contains("Conditions differ"));
    }

    #[test]
    fn a_result_without_mount_records_shows_a_dash() {
        let a = fixtures::six_patterns();
        let mut b = fixtures::six_patterns();
        if let Some(t) = b.target.as_mut() {
            t.mount = None;
        }
        let t = differing(&two(a, b)).unwrap();
        let fs = t.rows.iter().find(|x| x[0] == "file system").unwrap();
        assert_eq!(fs[1..], ["nfs", "-"]);
    }

    #[test]
    fn socket_buffers_block_sizes_and_region_that_differ_are_named() {
        let a = fixtures::six_patterns();
        let mut b = fixtures::six_patterns();
        b.host.net.rmem_max = Some(16 << 20);
        b.host.net.tcp_rmem = Some([4096, 87_380, 16 << 20]);
        b.host.platform.region = Some("westeurope".into());
        if let Some(t) = b.target.as_mut() {
            t.blocks.fs_block = Some(1 << 20);
            t.blocks.fs_fragment = Some(1 << 20);
        }
        let t = differing(&two(a, b)).unwrap();
        let row = |name: &str| {
            t.rows
                .iter()
                .find(|x| x[0] == name)
                .unwrap_or_else(|| panic!("no row {name}: {:?}", t.rows))
                .clone()
        };
        assert_eq!(row("net.core.rmem_max")[1..], ["212992", "16777216"]);
        assert_eq!(
            row("net.ipv4.tcp_rmem")[1..],
            ["4096 131072 6291456", "4096 87380 16777216"]
        );
        assert_eq!(row("region")[1..], ["-", "westeurope"]);
        assert_eq!(
            row("block sizes")[1..],
            ["block 65536 bytes", "block 1048576 bytes"]
        );
        // Alike on both sides: not listed.
        assert!(t.rows.iter().all(|x| x[0] != "net.core.wmem_max"));
    }
}
