//! The limits drawn across IOPS and MiB/s charts: the ones given with
//! --expect, and caps the diagnosis inferred (IOPS or MiB/s flat across
//! block sizes). Both are totals over reads and writes.

use super::super::svg::RefLine;
use crate::output::fmt::number;
use crate::result::ResultDoc;
use crate::result::diagnosis::Kind;

/// Which figure a chart plots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dim {
    Iops,
    MibS,
}

/// The reference lines for charts of `dim` drawn from this result.
pub(crate) fn limits(doc: &ResultDoc, dim: Dim) -> Vec<RefLine> {
    let unit = match dim {
        Dim::Iops => "IOPS",
        Dim::MibS => "MiB/s",
    };
    let mut out = Vec::new();
    if let Some(e) = &doc.expect {
        let v = match dim {
            Dim::Iops => e.iops,
            Dim::MibS => e.mib_s,
        };
        if let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) {
            let what = e.service.as_deref().unwrap_or("--expect");
            out.push(RefLine {
                value: v,
                label: format!("limit {} {unit} ({what})", number(v)),
            });
        }
    }
    let (kind, key) = match dim {
        Dim::Iops => (Kind::InferredIopsCap, "cap_iops"),
        Dim::MibS => (Kind::InferredBandwidthCap, "cap_mib_s"),
    };
    for f in doc.diagnosis.iter().filter(|f| f.kind == kind) {
        let Some(&v) = f.figures.get(key) else {
            continue;
        };
        // One line per distinct value: two series capped alike draw one.
        if v.is_finite() && v > 0.0 && !out.iter().any(|r: &RefLine| (r.value - v).abs() < 1e-9) {
            out.push(RefLine {
                value: v,
                label: format!("inferred cap ~{} {unit}", number(v)),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;
    use crate::result::diagnosis::{Confidence, Finding};
    use crate::result::expect::Expectation;

    #[test]
    fn expected_and_inferred_limits_become_lines() {
        let mut d = fixtures::six_patterns();
        assert!(limits(&d, Dim::Iops).is_empty());
        d.expect = Some(Expectation {
            given: "premium-p30:1TiB".into(),
            service: Some("premium-p30".into()),
            iops: Some(5000.0),
            mib_s: Some(200.0),
            ..Expectation::default()
        });
        let mut f = Finding::new(Kind::InferredIopsCap, Confidence::Medium, "cap".into());
        f.figures.insert("cap_iops".into(), 4980.5);
        d.diagnosis.push(f);
        let iops = limits(&d, Dim::Iops);
        assert_eq!(iops.len(), 2);
        assert_eq!(iops[0].value, 5000.0);
        assert_eq!(iops[0].label, "limit 5,000 IOPS (premium-p30)");
        assert!(
            iops[1].label.starts_with("inferred cap ~4,98"),
            "{:?}",
            iops[1]
        );
        let mib = limits(&d, Dim::MibS);
        assert_eq!(mib.len(), 1);
        assert_eq!(mib[0].value, 200.0);
    }
}
