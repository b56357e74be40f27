//! Each catalogue entry against its published figures, and the answers
//! `size` and `--expect` give.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::type_complexity)]

use super::size::{self, Need, parse_need, parse_quota, quota_for};
use super::*;

fn builtin() -> Vec<Service> {
    let mut all = Vec::new();
    for (file, text) in BUILTIN {
        all.extend(parse(file, text).unwrap());
    }
    all
}

const D32_MIB_S: f64 = 16_000.0 * 1e6 / 8.0 / 1048576.0;
const N2_MIB_S: f64 = 32_000.0 * 1e6 / 8.0 / 1048576.0;

/// Every built-in entry's formula at one quota (or its fixed size), worked
/// out by hand from its source: (name, quota, IOPS, MiB/s).
const EXPECTED: &[(&str, Option<&str>, Option<f64>, Option<f64>)] = &[
    // Service level x quota: 16 / 64 / 128 MiB/s per TiB.
    ("anf-standard", Some("4TiB"), None, Some(64.0)),
    ("anf-premium", Some("4TiB"), None, Some(256.0)),
    ("anf-ultra", Some("4TiB"), None, Some(512.0)),
    ("gcnv-standard", Some("10TiB"), None, Some(160.0)),
    ("gcnv-premium", Some("10TiB"), None, Some(640.0)),
    ("gcnv-extreme", Some("75TiB"), None, Some(9600.0)),
    ("gcnv-flex-custom", Some("10TiB"), Some(1024.0), Some(64.0)),
    // 3,000 + 1 x 1,024 GiB; 100 + ceil(0.1 x 1,024).
    (
        "azure-files-premium",
        Some("1TiB"),
        Some(4024.0),
        Some(203.0),
    ),
    ("aws-gp3", Some("100GiB"), Some(3000.0), Some(125.0)),
    ("aws-io2", Some("100GiB"), None, None),
    ("azure-p10", None, Some(500.0), Some(100.0)),
    ("azure-p15", None, Some(1100.0), Some(125.0)),
    ("azure-p20", None, Some(2300.0), Some(150.0)),
    ("azure-p30", None, Some(5000.0), Some(200.0)),
    ("azure-p40", None, Some(7500.0), Some(250.0)),
    ("azure-p50", None, Some(7500.0), Some(250.0)),
    ("azure-p60", None, Some(16000.0), Some(500.0)),
    ("azure-p70", None, Some(18000.0), Some(750.0)),
    ("azure-p80", None, Some(20000.0), Some(900.0)),
    ("azure-s4", None, Some(500.0), Some(60.0)),
    ("azure-s10", None, Some(500.0), Some(60.0)),
    ("azure-s20", None, Some(500.0), Some(60.0)),
    ("azure-s30", None, Some(500.0), Some(60.0)),
    ("azure-s40", None, Some(500.0), Some(60.0)),
    ("azure-s50", None, Some(500.0), Some(60.0)),
    ("azure-s60", None, Some(1300.0), Some(300.0)),
    ("azure-s70", None, Some(2000.0), Some(500.0)),
    ("azure-s80", None, Some(2000.0), Some(500.0)),
    ("azure-standard-disk", None, Some(500.0), Some(60.0)),
    ("azure-standard-account", None, Some(20000.0), None),
    // 16,000 Mbit/s = 2,000 MB/s = 1,907 MiB/s.
    ("azure-d32s-v3", None, None, Some(D32_MIB_S)),
    ("azure-d32s-v4", None, None, Some(D32_MIB_S)),
    ("gcp-n2-standard-32", None, None, Some(N2_MIB_S)),
];

#[test]
fn every_entry_has_a_source_and_its_formula_gives_the_published_figures() {
    let all = builtin();
    for s in &all {
        assert!(
            !s.source.is_empty() && s.url.starts_with("https://"),
            "{}",
            s.name
        );
        let Some((_, q, iops, mib_s)) = EXPECTED.iter().find(|e| e.0 == s.name) else {
            panic!("{}: no test of its formula in EXPECTED", s.name);
        };
        let quota = q.map(|q| parse_quota(q).unwrap());
        let (i, m) = s.at(quota);
        let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-6,
            (a, b) => a == b,
        };
        assert!(close(i, *iops), "{}: IOPS {i:?}, want {iops:?}", s.name);
        assert!(close(m, *mib_s), "{}: MiB/s {m:?}, want {mib_s:?}", s.name);
    }
    assert_eq!(all.len(), EXPECTED.len(), "an EXPECTED row names no entry");
}

#[test]
fn the_papers_sizing_4500_mib_s_at_premium_needs_70_31_tib() {
    let all = builtin();
    let text = quota_for(&all, "anf-premium", Need::MibS(4500.0)).unwrap();
    assert!(
        text.contains("needs a quota of 70.31 TiB (72,000 GiB)"),
        "{text}"
    );
    assert!(
        text.contains("4,500 MiB/s / 64 MiB/s per TiB = 70.31 TiB"),
        "{text}"
    );
    // Above the regular volume's cap no quota will do.
    let e = quota_for(&all, "anf-premium", Need::MibS(5000.0)).unwrap_err();
    assert!(e.to_string().contains("at most 4,500 MiB/s"), "{e}");
    // Ultra needs half the quota; the minimum quota applies to small needs.
    let text = quota_for(&all, "anf-ultra", Need::MibS(4500.0)).unwrap();
    assert!(text.contains("35.16 TiB (36,000 GiB)"), "{text}");
    let text = quota_for(&all, "anf-standard", Need::MibS(1.0)).unwrap();
    assert!(text.contains("needs a quota of 100 GiB"), "{text}");
}

#[test]
fn capacity_explains_the_formula() {
    let all = builtin();
    let text = size::capacity(&all, "anf-premium", Some(4 << 40)).unwrap();
    assert!(
        text.contains("64 MiB/s per TiB x 4.00 TiB = 256 MiB/s"),
        "{text}"
    );
    assert!(text.contains("IOPS: not published"), "{text}");
    let text = size::capacity(&all, "anf-premium", Some(100 << 40)).unwrap();
    assert!(text.contains("capped at 4,500"), "{text}");
    // A quota outside the service's bounds, or none where one is needed.
    assert!(size::capacity(&all, "anf-premium", Some(200 << 40)).is_err());
    assert!(size::capacity(&all, "anf-premium", None).is_err());
    // A family answers with the tier a size is billed at.
    let text = size::capacity(&all, "azure-premium-ssd", Some(600 << 30)).unwrap();
    assert!(text.contains("tier azure-p30"), "{text}");
    assert!(text.contains("IOPS: 5,000 IOPS"), "{text}");
}

#[test]
fn provisioned_services_say_what_to_buy() {
    let all = builtin();
    let text = quota_for(&all, "aws-gp3", Need::Iops(2000.0)).unwrap();
    assert!(text.contains("gives 3,000 IOPS"), "{text}");
    let text = quota_for(&all, "aws-gp3", Need::Iops(10_000.0)).unwrap();
    assert!(text.contains("provision 10,000 IOPS"), "{text}");
    assert!(text.contains("at least 20 GiB"), "{text}");
    assert!(quota_for(&all, "aws-gp3", Need::Iops(20_000.0)).is_err());
    let text = quota_for(&all, "aws-io2", Need::Iops(64_000.0)).unwrap();
    assert!(text.contains("at least 64 GiB"), "{text}");
    // Azure Files: (20,000 - 3,000) / 1 per GiB.
    let text = quota_for(&all, "azure-files-premium", Need::Iops(20_000.0)).unwrap();
    assert!(text.contains("16.60 TiB (17,000 GiB)"), "{text}");
    // A family picks the smallest tier that is enough.
    let text = quota_for(&all, "azure-premium-ssd", Need::Iops(6000.0)).unwrap();
    assert!(text.starts_with("azure-p40"), "{text}");
    assert!(quota_for(&all, "azure-standard-hdd", Need::Iops(5000.0)).is_err());
}

#[test]
fn needs_and_quotas_parse_with_their_bounds() {
    assert_eq!(parse_need("4500MiB/s").unwrap(), Need::MibS(4500.0));
    assert_eq!(parse_need("4.5GiB/s").unwrap(), Need::MibS(4608.0));
    assert_eq!(parse_need("20000iops").unwrap(), Need::Iops(20000.0));
    assert_eq!(parse_need("20k IOPS").unwrap(), Need::Iops(20000.0));
    for bad in [
        "",
        "fast",
        "-5iops",
        "0MiB/s",
        "5e20iops",
        "10 furlongs/s",
        "NaNiops",
    ] {
        assert!(parse_need(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_quota("4TiB").unwrap(), 4 << 40);
    assert_eq!(parse_quota("0.5T").unwrap(), 1 << 39);
    for bad in ["", "x", "4XB", "0", "99999P", "-1T"] {
        assert!(parse_quota(bad).is_err(), "{bad}");
    }
}

#[test]
fn expectations_come_from_a_service_or_figures() {
    let all = builtin();
    let e = size::expectation(&all, "anf-premium:4TiB").unwrap();
    assert_eq!((e.iops, e.mib_s), (None, Some(256.0)));
    assert_eq!(e.service.as_deref(), Some("anf-premium"));
    assert_eq!(e.quota_bytes, Some(4 << 40));
    assert!(e.basis.iter().any(|b| b.contains("source:")));
    let e = size::expectation(&all, "iops=500,mib_s=60").unwrap();
    assert_eq!(
        (e.iops, e.mib_s, e.service),
        (Some(500.0), Some(60.0), None)
    );
    // An explicit figure wins over the service's.
    let e = size::expectation(&all, "azure-p30,iops=4000").unwrap();
    assert_eq!((e.iops, e.mib_s), (Some(4000.0), Some(200.0)));
    for bad in [
        "",
        "nosuch:1TiB",
        "anf-premium",
        "anf-premium:1PiB",
        "iops=0",
        "iops=abc",
        "speed=5",
        "azure-p30,azure-p40",
        "aws-io2:100GiB",
        "iops=1e-300",
        "mib_s=1e-300",
        "iops=1e10",
    ] {
        assert!(size::expectation(&all, bad).is_err(), "{bad}");
    }
}

#[test]
fn expect_figures_are_bounded_and_given_once() {
    let all = builtin();
    let e = size::expectation(&all, "iops=1e-300")
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "--expect 'iops=1e-300': iops 1e-300 is outside 0.01..1000000000"
    );
    // Last-wins dropped the first figure without a word.
    for twice in ["iops=5,iops=6", "mib_s=1,mibs=2", "azure-p30,iops=1,IOPS=2"] {
        let e = size::expectation(&all, twice).unwrap_err().to_string();
        assert!(e.ends_with("twice"), "{twice}: {e}");
    }
    let e = size::expectation(&all, "iops=0.01,mib_s=0.001").unwrap();
    assert_eq!((e.iops, e.mib_s), (Some(0.01), Some(0.001)));
}

#[test]
fn user_entries_are_checked_and_replace_built_in_ones() {
    let mine = r#"
[[service]]
name = "anf-premium"
title = "ours"
kind = "volume"
source = "our contract"
url = "https://example.invalid/contract"
quota_min = "1TiB"
mib_s_per_tib = 50
"#;
    let parsed = parse("mine.toml", mine).unwrap();
    assert_eq!(parsed[0].mib_s.at(1024.0), Some(50.0));
    for (bad, why) in [
        (mine.replace("kind", "kinds"), "unknown field"),
        (mine.replace("our contract", ""), "needs a source"),
        (mine.replace("= 50", "= -5"), "outside 0..1e12"),
        (
            mine.replace("\"anf-premium\"", "\"a b\""),
            "letters, digits",
        ),
        (mine.replace("\"1TiB\"", "\"lots\""), "quota_min"),
    ] {
        let e = parse("mine.toml", &bad).unwrap_err().to_string();
        assert!(e.contains(why), "{e}");
    }
}
