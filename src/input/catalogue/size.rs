//! `volbench size` and `--expect`: what a quota of a service gives, the
//! quota a need takes, each with the formula written out.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{GIB, Limit, Service, TIB, family, find};
use crate::error::{Result, VbError};
use crate::result::diagnosis::num;
use crate::result::expect::Expectation;

/// Bounds of a need or an expected figure.
pub(crate) const MAX_IOPS: f64 = 1e9;
pub(crate) const MAX_MIB_S: f64 = 1e9;

/// A size with binary units and decimals allowed: 4TiB, 70.31TiB, 500GiB, 1.5T.
pub(crate) fn parse_quota(text: &str) -> Result<u64> {
    let t = text.trim();
    // Catalogue files and flags alike: the text goes back in one line.
    let text = &crate::units::bounds::one_line(text);
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    let v: f64 = digits.parse().map_err(|_| {
        VbError::input(format!(
            "size '{text}' does not start with a number (examples: 500GiB, 4TiB, 70.31TiB)"
        ))
    })?;
    let Some(shift) = crate::units::unit_shift(unit) else {
        return Err(VbError::input(format!(
            "size '{text}' has an unknown unit '{}' (use GiB, TiB...: binary, 1 TiB = 1024 GiB)",
            crate::units::bounds::one_line(unit.trim())
        )));
    };
    let bytes = (v * (1u64 << shift) as f64).round();
    let max = crate::units::bounds::MAX_SIZE;
    if !(1.0..=max as f64).contains(&bytes) {
        return Err(VbError::input(format!(
            "size '{text}' is outside 1 byte..8 PiB"
        )));
    }
    Ok(bytes as u64)
}

/// What a `--need` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Need {
    Iops(f64),
    MibS(f64),
}

/// 4500MiB/s, 4.5GiB/s, 20000iops, 20k iops. Binary units, as everywhere
/// in volbench (MB/s reads as MiB/s).
pub(crate) fn parse_need(text: &str) -> Result<Need> {
    let t = text
        .trim()
        .to_ascii_lowercase()
        .replace([' ', '_', ','], "");
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let bad = || {
        VbError::input(format!(
            "need '{text}' is not a rate (examples: 4500MiB/s, 2GiB/s, 20000iops, 20kiops)"
        ))
    };
    let mut v: f64 = digits.parse().map_err(|_| bad())?;
    let mut unit = unit;
    if let Some(rest) = unit.strip_prefix('k').filter(|r| r.starts_with("iops")) {
        v *= 1e3;
        unit = rest;
    }
    let need = match unit {
        "iops" => Need::Iops(v),
        "kib/s" | "kb/s" | "k/s" => Need::MibS(v / 1024.0),
        "mib/s" | "mb/s" | "m/s" | "mibps" | "mbps" => Need::MibS(v),
        "gib/s" | "gb/s" | "g/s" | "gibps" | "gbps" => Need::MibS(v * 1024.0),
        "tib/s" | "tb/s" => Need::MibS(v * 1024.0 * 1024.0),
        _ => return Err(bad()),
    };
    match need {
        Need::Iops(x) if !(x > 0.0 && x <= MAX_IOPS) => Err(VbError::input(format!(
            "need '{text}' is outside 0..1e9 IOPS"
        ))),
        Need::MibS(x) if !(x > 0.0 && x <= MAX_MIB_S) => Err(VbError::input(format!(
            "need '{text}' is outside 0..1e9 MiB/s"
        ))),
        n => Ok(n),
    }
}

/// 72000 GiB -> "70.31 TiB (72,000 GiB)"; 600 GiB -> "600 GiB".
pub(crate) fn quota_text(bytes: u64) -> String {
    let b = bytes as f64;
    let gib = b / GIB;
    let gib_text = if (gib - gib.round()).abs() < 1e-9 {
        num(gib)
    } else {
        format!("{gib:.2}")
    };
    if b >= TIB {
        format!("{:.2} TiB ({gib_text} GiB)", b / TIB)
    } else {
        format!("{gib_text} GiB")
    }
}

fn size_text(gib: f64) -> String {
    quota_text((gib * GIB).round() as u64)
}

/// Rates below 1 per GiB that are whole per TiB read as the vendors write
/// them: "64 MiB/s per TiB".
fn per_tib(l: &Limit) -> bool {
    let t = l.per_gib * 1024.0;
    l.per_gib < 1.0 && t >= 1.0 && t.fract() == 0.0
}

/// The formula of one limit at a quota, written out.
fn explain(l: &Limit, unit: &str, gib: Option<f64>) -> Option<String> {
    if let Some(f) = l.fixed {
        let mut s = format!("{} {unit}", num(f));
        if let Some(p) = l.provisionable(gib) {
            s.push_str(&format!(
                " included; up to {} {unit} can be provisioned{}",
                num(p),
                match (l.per_gib_max, gib) {
                    (Some(r), Some(_)) => format!(" (at most {} per GiB)", num(r)),
                    _ => String::new(),
                }
            ));
        }
        return Some(s);
    }
    if l.scales() {
        let g = gib?;
        let v = l.at(g)?;
        let per = if per_tib(l) {
            format!(
                "{} {unit} per TiB x {:.2} TiB",
                num(l.per_gib * 1024.0),
                g / 1024.0
            )
        } else {
            format!("{} {unit} per GiB x {} GiB", l.per_gib, num(g))
        };
        let base = if l.base > 0.0 {
            format!("{} + ", num(l.base))
        } else {
            String::new()
        };
        let raw = l.base + l.per_gib * g;
        let capped = match (l.max, l.min) {
            (Some(hi), _) if raw > hi => format!(", capped at {}", num(hi)),
            (_, Some(lo)) if raw < lo => format!(", at least {}", num(lo)),
            _ => String::new(),
        };
        return Some(format!(
            "{base}{per}{} = {} {unit}{capped}",
            if l.round_up { " (rounded up)" } else { "" },
            num(v)
        ));
    }
    l.provisionable(gib).map(|p| {
        format!(
            "provisioned, up to {} {unit}{}",
            num(p),
            match (l.per_gib_max, gib) {
                (Some(r), Some(_)) => format!(" at this size ({} per GiB)", num(r)),
                _ => String::new(),
            }
        )
    })
}

/// The quota a service is answered for: the one given, or its fixed size.
fn check_quota(s: &Service, quota: Option<u64>) -> Result<Option<u64>> {
    match (quota, s.quota) {
        (Some(q), Some(b)) if q < b.min || q > b.max => Err(VbError::input(format!(
            "quota {} is outside {}'s {}..{}",
            quota_text(q),
            s.name,
            quota_text(b.min),
            quota_text(b.max)
        ))),
        (Some(_), None) if s.size.is_some() => Err(VbError::input(format!(
            "{} has a fixed size of {}; leave out --quota, or ask its family{}",
            s.name,
            quota_text(s.size.unwrap_or(0)),
            s.family
                .as_ref()
                .map(|f| format!(" ({f})"))
                .unwrap_or_default()
        ))),
        (None, Some(_)) if s.iops.scales() || s.mib_s.scales() => Err(VbError::input(format!(
            "{}'s limits depend on its quota: give --quota SIZE (e.g. 4TiB)",
            s.name
        ))),
        _ => Ok(quota.or(s.size)),
    }
}

fn header(s: &Service) -> String {
    format!("{}: {}", s.name, s.title)
}

fn footer(s: &Service) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(f) = &s.formula {
        v.push(format!("  published formula: {f}"));
    }
    if let Some(n) = &s.note {
        v.push(format!("  note: {n}"));
    }
    v.push(format!("  source: {}", s.source));
    v.push(format!("  {}", s.url));
    v
}

/// Resolves NAME to an entry, or for a family to the tier that fits `pick`.
fn resolve<'a>(
    all: &'a [Service],
    name: &str,
    pick: impl Fn(&Service) -> bool,
) -> Result<&'a Service> {
    if let Ok(s) = find(all, name) {
        return Ok(s);
    }
    let tiers = family(all, name);
    if tiers.is_empty() {
        return find(all, name);
    }
    tiers.iter().copied().find(|s| pick(s)).ok_or_else(|| {
        VbError::input(format!(
            "no tier of {name} is large enough (largest: {})",
            tiers.last().map(|s| s.name.as_str()).unwrap_or("")
        ))
    })
}

/// What a quota of a service gives.
pub(crate) fn capacity(all: &[Service], name: &str, quota: Option<u64>) -> Result<String> {
    // A family answers with the tier at or above the quota, as it is billed.
    let s = resolve(all, name, |s| {
        s.size.zip(quota).is_some_and(|(z, q)| z >= q)
    })?;
    let at_family = s.name != name;
    let q = check_quota(s, if at_family { None } else { quota })?;
    let gib = q.map(|b| b as f64 / GIB);
    let mut out = vec![header(s)];
    match q {
        Some(b) if at_family => out.push(format!(
            "  {} -> tier {} ({})",
            quota_text(quota.unwrap_or(b)),
            s.name,
            quota_text(b)
        )),
        Some(b) => out.push(format!("  size: {}", quota_text(b))),
        None => {}
    }
    let line = |l: &Limit, unit: &str, what: &str| match explain(l, unit, gib) {
        Some(e) => format!("  {what}: {e}"),
        None => format!("  {what}: not published for this service"),
    };
    out.push(line(&s.iops, "IOPS", "IOPS"));
    out.push(line(&s.mib_s, "MiB/s", "throughput"));
    if let (Some(r), Some(_)) = (s.mib_s.per_iops_max, s.mib_s.provisioned_max) {
        out.push(format!(
            "  throughput can be provisioned at most {r} MiB/s per provisioned IOPS"
        ));
    }
    out.extend(footer(s));
    Ok(out.join("\n"))
}

/// The quota (or provisioning) a need takes.
pub(crate) fn quota_for(all: &[Service], name: &str, need: Need) -> Result<String> {
    let (v, unit) = match need {
        Need::Iops(v) => (v, "IOPS"),
        Need::MibS(v) => (v, "MiB/s"),
    };
    let limit_of = |s: &Service| match need {
        Need::Iops(_) => s.iops.clone(),
        Need::MibS(_) => s.mib_s.clone(),
    };
    let s = resolve(all, name, |s| limit_of(s).fixed.is_some_and(|f| f >= v))?;
    let l = limit_of(s);
    let want = format!("{} {unit}", num(v));
    let mut out = vec![header(s)];
    let round = |gib: f64| -> Result<u64> {
        let b = s.quota.map_or(crate::units::bounds::MAX_SIZE, |q| q.max);
        let (min, step) = s.quota.map_or((1, 1 << 30), |q| (q.min, q.step));
        // A hair of tolerance: 4500 / 64 TiB is 72,000 GiB exactly, and a
        // floating-point 72,000.0000001 must not become 72,001.
        let bytes = gib * GIB;
        let steps = (bytes / step as f64 - 1e-9).ceil().max(0.0);
        let q = ((steps * step as f64) as u64).max(min);
        if q > b {
            return Err(VbError::input(format!(
                "{}: {want} needs {}, above its largest quota of {}",
                s.name,
                quota_text(q),
                quota_text(b)
            )));
        }
        Ok(q)
    };
    if let Some(f) = l.fixed.filter(|f| *f >= v) {
        out.push(format!(
            "  {want}: {} gives {} {unit}{}",
            s.name,
            num(f),
            s.size
                .map(|z| format!(" at {}", quota_text(z)))
                .unwrap_or_default()
        ));
    } else if l.scales() && l.max.is_none_or(|m| v <= m) {
        let gib = if l.per_gib > 0.0 {
            ((v - l.base) / l.per_gib).max(0.0)
        } else {
            0.0
        };
        let q = round(gib)?;
        let per = if per_tib(&l) {
            format!("{} {unit} per TiB", num(l.per_gib * 1024.0))
        } else {
            format!("{} {unit} per GiB", l.per_gib)
        };
        let minus = if l.base > 0.0 {
            format!("({want} - {}) / {per}", num(l.base))
        } else {
            format!("{want} / {per}")
        };
        out.push(format!("  {want} needs a quota of {}", quota_text(q)));
        out.push(format!("  {minus} = {}", size_text(gib)));
        if let Some(s2) = s.quota.filter(|b| b.step > 1) {
            out.push(format!(
                "  rounded up to the next {} and at least {}",
                quota_text(s2.step),
                quota_text(s2.min)
            ));
        }
    } else if let Some(pmax) = l.provisioned_max.filter(|p| v <= *p) {
        let gib = l.per_gib_max.map_or(0.0, |r| v / r);
        let q = round(gib)?;
        out.push(format!(
            "  {want}: provision {want} (up to {} {unit}); needs a quota of at least {}{}",
            num(pmax),
            quota_text(q),
            l.per_gib_max
                .map(|r| format!(" ({want} / {} {unit} per GiB)", num(r)))
                .unwrap_or_default()
        ));
    } else {
        let most = [l.fixed, l.max, l.provisioned_max]
            .into_iter()
            .flatten()
            .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
        return Err(VbError::input(match most {
            Some(m) => format!(
                "{}: {want} is more than it can give (at most {} {unit}); use several, or a higher level",
                s.name,
                num(m)
            ),
            None => format!("{}: no {unit} limit is published for it", s.name),
        }));
    }
    out.extend(footer(s));
    Ok(out.join("\n"))
}

/// `--expect`: `NAME[:QUOTA]`, `iops=N`, `mib_s=N`, and per direction
/// `read_iops=N`, `write_iops=N`, `read_mib_s=N`, `write_mib_s=N`,
/// comma-separated; a figure given explicitly wins over the service's.
pub fn expectation(all: &[Service], text: &str) -> Result<Expectation> {
    let mut e = Expectation {
        given: text.trim().to_string(),
        ..Expectation::default()
    };
    let bad = |why: String| {
        VbError::input(format!(
            "--expect '{}': {why}",
            crate::units::bounds::one_line(text)
        ))
    };
    let mut explicit = (None, None);
    let mut apart: [Option<f64>; 4] = [None; 4];
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if let Some((k, v)) = item.split_once('=') {
            let x: f64 = v
                .trim()
                .parse()
                .map_err(|_| bad(format!("'{v}' is not a number")))?;
            let [ri, wi, rm, wm] = &mut apart;
            let (slot, key) = match k.trim().to_ascii_lowercase().as_str() {
                "iops" => (&mut explicit.0, "iops"),
                "mib_s" | "mibs" | "mib/s" => (&mut explicit.1, "mib_s"),
                "read_iops" => (ri, "read_iops"),
                "write_iops" => (wi, "write_iops"),
                "read_mib_s" => (rm, "read_mib_s"),
                "write_mib_s" => (wm, "write_mib_s"),
                other => {
                    return Err(bad(format!(
                        "unknown key '{other}' (use iops=N, mib_s=N, read_iops=N, write_iops=N, \
                         read_mib_s=N, write_mib_s=N or SERVICE[:QUOTA])"
                    )));
                }
            };
            // Last-wins would silently drop one of the two figures.
            if slot.is_some() {
                return Err(bad(format!("gives {key} twice")));
            }
            *slot = Some(expect_bound(key, x).map_err(|x| bad(x.to_string()))?);
            continue;
        }
        if e.service.is_some() {
            return Err(bad("names two services".into()));
        }
        let (name, quota) = match item.split_once(':') {
            Some((n, q)) => (
                n.trim(),
                Some(parse_quota(q).map_err(|x| bad(x.to_string()))?),
            ),
            None => (item, None),
        };
        let s = resolve(all, name, |s| {
            s.size.zip(quota).is_some_and(|(z, q)| z >= q)
        })
        .map_err(|x| bad(x.to_string()))?;
        let q = check_quota(s, if s.name != name { None } else { quota })
            .map_err(|x| bad(x.to_string()))?;
        let gib = q.map(|b| b as f64 / GIB);
        let (iops, mib_s) = s.at(q);
        e.service = Some(s.name.clone());
        e.quota_bytes = q;
        e.iops = iops;
        e.mib_s = mib_s;
        for (l, unit, what) in [(&s.iops, "IOPS", "IOPS"), (&s.mib_s, "MiB/s", "throughput")] {
            if let Some(x) = explain(l, unit, gib).filter(|_| l.at(gib.unwrap_or(0.0)).is_some()) {
                e.basis.push(format!("{}: {what} {x}", s.name));
            }
        }
        e.basis.push(format!("source: {} ({})", s.source, s.url));
    }
    if let Some(i) = explicit.0 {
        e.iops = Some(i);
        e.basis.push(format!("iops={} as given", num(i)));
    }
    if let Some(m) = explicit.1 {
        e.mib_s = Some(m);
        e.basis.push(format!("mib_s={} as given", num(m)));
    }
    let [ri, wi, rm, wm] = apart;
    for (v, slot, key) in [
        (ri, &mut e.read_iops, "read_iops"),
        (wi, &mut e.write_iops, "write_iops"),
        (rm, &mut e.read_mib_s, "read_mib_s"),
        (wm, &mut e.write_mib_s, "write_mib_s"),
    ] {
        if let Some(v) = v {
            *slot = Some(v);
            e.basis.push(format!("{key}={} as given", num(v)));
        }
    }
    // A catalogue entry at a tiny quota may work out below the bound too.
    for (key, v) in [("iops", e.iops), ("mib_s", e.mib_s)] {
        if let Some(v) = v {
            expect_bound(key, v).map_err(|x| bad(x.to_string()))?;
        }
    }
    if e.iops.is_none() && e.mib_s.is_none() && apart.iter().all(Option::is_none) {
        return Err(bad(
            "gives no IOPS or MiB/s limit to compare with (try iops=N,mib_s=N)".into(),
        ));
    }
    Ok(e)
}

/// An expected figure within its bounds (`units::bounds`), so every ratio
/// the diagnosis takes to it stays finite.
fn expect_bound(key: &str, v: f64) -> Result<f64> {
    use crate::units::bounds::{
        MAX_EXPECT_IOPS, MAX_EXPECT_MIB_S, MIN_EXPECT_IOPS, MIN_EXPECT_MIB_S, number,
    };
    match key {
        "iops" | "read_iops" | "write_iops" => number(key, v, MIN_EXPECT_IOPS, MAX_EXPECT_IOPS),
        _ => number(key, v, MIN_EXPECT_MIB_S, MAX_EXPECT_MIB_S),
    }
}

/// One limit's rule in a few words: "64 MiB/s per TiB (max 4,500)".
fn rule(l: &Limit, unit: &str) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(f) = l.fixed {
        parts.push(format!("{} {unit}", num(f)));
    } else if l.scales() {
        let per = if per_tib(l) {
            format!("{} {unit} per TiB", num(l.per_gib * 1024.0))
        } else {
            format!("{} {unit} per GiB", l.per_gib)
        };
        parts.push(if l.base > 0.0 {
            format!("{} + {per}", num(l.base))
        } else {
            per
        });
    }
    if let Some(m) = l.max.filter(|_| l.scales()) {
        parts.push(format!("max {}", num(m)));
    }
    if let Some(p) = l.provisioned_max {
        parts.push(format!("provisioned up to {}", num(p)));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The line `service list` prints for an entry.
pub fn brief(s: &Service) -> String {
    let limits: Vec<String> = [rule(&s.iops, "IOPS"), rule(&s.mib_s, "MiB/s")]
        .into_iter()
        .flatten()
        .collect();
    let size = s
        .size
        .map(|z| format!(" at {}", quota_text(z)))
        .unwrap_or_default();
    format!("{:<24} {:<8} {}{size}", s.name, s.kind, limits.join("; "))
}

/// `service show NAME`: the entry in full.
pub fn show(s: &Service) -> String {
    let mut out = vec![header(s), format!("  kind: {}", s.kind)];
    if let Some(f) = &s.family {
        out.push(format!("  family: {f}"));
    }
    if let Some(z) = s.size {
        out.push(format!("  size: {}", quota_text(z)));
    }
    if let Some(q) = s.quota {
        out.push(format!(
            "  quota: {} .. {}, in steps of {}",
            quota_text(q.min),
            quota_text(q.max),
            quota_text(q.step)
        ));
    }
    for (l, unit, what) in [(&s.iops, "IOPS", "IOPS"), (&s.mib_s, "MiB/s", "throughput")] {
        out.push(format!(
            "  {what}: {}",
            rule(l, unit).unwrap_or_else(|| "not published".into())
        ));
    }
    out.extend(footer(s));
    out.push(format!("  from: {}", s.origin));
    out.join("\n")
}
