//! vdbench's `skew=` and `hotband=`. An rd may run several wds at once,
//! each taking its skew (a percentage) of the run's I/O; a wd with
//! `hotband=(lo,hi)` keeps its I/O within lo%..hi% of the lun. volbench
//! runs one workload per run, and draws each I/O's direction, size and
//! offset from it, so wds become one workload when what they differ in is
//! drawn per I/O: their skew and hotband (offsets follow hot zones,
//! `distribution = "hot:..."`: each band gets its wd's share, and what the
//! wds without a band do is spread over every zone by its width, so each
//! part of the lun gets exactly the share vdbench gives it), or, without
//! hotbands, their read percentage and transfer sizes (each I/O a read
//! with the skews' weighted read share, its size from the skews' weighted
//! size mix), as long as reads and writes then draw their sizes alike.
//! Anything else is refused by name.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{How, Mapping, Notes};
use super::parse::{Def, Opt, items, xfersize};

/// What several wds make together besides their hot zones: the read share
/// and the size mix their skews weigh, and how that was mapped.
pub(super) struct Mix {
    pub(super) read_pct: u64,
    pub(super) bs: Vec<(u64, u32)>,
    pub(super) said: Mapping,
}

/// The wds' keys a mix may differ in (no hotband among them).
const MIXED: [&str; 3] = ["xfersize", "rdpct", "wrpct"];

/// One workload for the wds an rd runs together, without their `skew=`
/// and `hotband=`, the hot zones those make (`distribution = "hot:..."`)
/// and the mix their reads and sizes make (`Mix`, to apply over the
/// workload read from the returned wd); None when they cannot be one
/// (refused in `notes`).
pub(super) fn combine(
    chosen: &[&Def],
    notes: &mut Notes,
    at: &str,
    option: &str,
) -> Option<(Def, Option<String>, Option<Mix>)> {
    let first = *chosen.first()?;
    let banded = chosen.iter().any(|d| d.get("hotband").is_some());
    let sds = |d: &Def| d.get("sd").map(|p| items(p.val())).unwrap_or_default();
    let other_sds = chosen.iter().any(|d| sds(d) != sds(first));
    // Each wd on its own sds keeps its own sizes and reads there: no mix.
    let mixing = !banded && !other_sds;
    let mixable = |k: &str| mixing && MIXED.contains(&k);
    let plain = |d: &Def| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = d
            .params
            .iter()
            .filter(|p| p.key != "skew" && p.key != "hotband" && p.key != "sd")
            .filter(|p| !mixable(&p.key))
            .map(|p| (p.key.clone(), p.val().to_string()))
            .collect();
        v.sort();
        v
    };
    // Like workloads on different sds run each on its own sds at once: one
    // workload over all of them, each sd a target with its own threads.
    // A skew would shift I/O between the sds, which volbench cannot.
    if other_sds
        && chosen
            .iter()
            .any(|d| d.get("skew").is_some() || d.get("hotband").is_some())
    {
        notes.unsupported(
            at,
            option,
            "workloads on different sds with skew= or hotband= (volbench gives every target the same workload)",
        );
        return None;
    }
    if chosen.iter().any(|d| plain(d) != plain(first)) {
        let what = if banded {
            "several workloads at once, one with a hotband, that differ in more than skew= and \
             hotband= (volbench runs one workload per run)"
        } else if other_sds {
            "several workloads at once on different sds that differ in more than their sd= \
             (volbench gives every target the same workload)"
        } else {
            "several workloads at once that differ in more than skew=, rdpct= and xfersize= \
             (volbench runs one workload per run)"
        };
        notes.unsupported(at, option, what);
        return None;
    }
    // Skews given, and the rest shared evenly by the wds without one.
    let mut skews: Vec<Option<f64>> = Vec::new();
    for d in chosen {
        match d.get("skew") {
            None => skews.push(None),
            Some(p) => match p.val().parse::<f64>() {
                Ok(s) if (0.0..=100.0).contains(&s) => {
                    skews.push(if s == 0.0 { None } else { Some(s) })
                }
                _ => {
                    notes.refuse(&p.at, &p.text(), "skew is a percentage, 0..100");
                    return None;
                }
            },
        }
    }
    let given: f64 = skews.iter().flatten().sum();
    let open = skews.iter().filter(|s| s.is_none()).count();
    if given > 100.0 + 1e-9 || (open == 0 && (given - 100.0).abs() > 1e-9 && chosen.len() > 1) {
        notes.refuse(
            at,
            option,
            format!("the workloads' skews add up to {given}%, not 100%"),
        );
        return None;
    }
    let share_open = if open > 0 {
        (100.0 - given) / open as f64
    } else {
        0.0
    };
    let shares: Vec<f64> = skews
        .iter()
        .map(|s| match chosen.len() {
            1 => 100.0,
            _ => s.unwrap_or(share_open),
        })
        .collect();
    let mix = if !mixing || chosen.len() < 2 {
        None
    } else {
        mix(chosen, &shares, notes, at, option)?
    };
    // Bands with their share; the share of the wds without one is `spread`.
    let mut bands: Vec<(f64, f64, f64)> = Vec::new();
    let mut spread = 0.0;
    for (d, &share) in chosen.iter().zip(&shares) {
        match d.get("hotband") {
            None => spread += share,
            Some(p) => match band(p, notes) {
                Some(parts) => {
                    let width: f64 = parts.iter().map(|(lo, hi)| hi - lo).sum();
                    for (lo, hi) in parts {
                        bands.push((lo, hi, share * (hi - lo) / width));
                    }
                }
                None => return None,
            },
        }
    }
    let mut merged = first.clone();
    merged.name = chosen
        .iter()
        .map(|d| d.name.as_str())
        .collect::<Vec<_>>()
        .join("+");
    merged.params.retain(|p| {
        p.key != "skew" && p.key != "hotband" && !(mix.is_some() && MIXED.contains(&p.key.as_str()))
    });
    if other_sds {
        let mut all: Vec<String> = chosen.iter().flat_map(|d| sds(d)).collect();
        all.sort();
        all.dedup();
        if let Some(p) = merged.params.iter_mut().rev().find(|p| p.key == "sd") {
            *p = Opt::new(&p.at.clone(), "sd", Some(&format!("({})", all.join(","))));
        }
    }
    if bands.is_empty() {
        return Some((merged, None, mix));
    }
    bands.sort_by(|a, b| a.0.total_cmp(&b.0));
    if bands.windows(2).any(|w| matches!(w, [a, b] if b.0 < a.1)) {
        notes.unsupported(at, option, "overlapping hotbands");
        return None;
    }
    Some((merged, Some(zones(&bands, spread)), mix))
}

/// The read share and size mix of wds that differ in them, each wd weighed
/// by its share of the I/O; Ok(None) when they do not differ. Refused
/// when reads and writes would draw their sizes differently (a read-only
/// 4k wd beside a write-only 64k one), which one size mix cannot give.
fn mix(
    chosen: &[&Def],
    shares: &[f64],
    notes: &mut Notes,
    at: &str,
    option: &str,
) -> Option<Option<Mix>> {
    // Each wd's (share of the I/O, read percentage, size mix).
    let mut parts: Vec<Part> = Vec::new();
    for (d, share) in chosen.iter().zip(shares) {
        let bs = match d.get("xfersize") {
            None => vec![(4096, 1)],
            Some(p) => match xfersize(p.val()) {
                Ok(v) => v,
                Err(e) => {
                    p.refuse(notes, e);
                    return None;
                }
            },
        };
        let read = match (d.get("rdpct"), d.get("wrpct")) {
            (Some(p), _) => pct(p, notes)?,
            (None, Some(p)) => 100.0 - pct(p, notes)?,
            (None, None) => 100.0,
        };
        parts.push((*share, read, bs));
    }
    let same = parts
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.1 == b.1 && a.2 == b.2));
    if same {
        return Some(None);
    }
    // Each size's share of the reads and of the writes, in I/Os.
    let mut sizes: Vec<(u64, f64, f64)> = Vec::new();
    for (share, read, bs) in &parts {
        let total: f64 = bs.iter().map(|(_, w)| f64::from(*w)).sum();
        for (b, w) in bs {
            let p = share * f64::from(*w) / total;
            let (r, wr) = (p * read / 100.0, p * (100.0 - read) / 100.0);
            match sizes.iter_mut().find(|s| s.0 == *b) {
                Some(s) => {
                    s.1 += r;
                    s.2 += wr;
                }
                None => sizes.push((*b, r, wr)),
            }
        }
    }
    let reads: f64 = sizes.iter().map(|s| s.1).sum();
    let writes: f64 = sizes.iter().map(|s| s.2).sum();
    if reads > 0.0
        && writes > 0.0
        && sizes
            .iter()
            .any(|s| (s.1 / reads - s.2 / writes).abs() > 1e-9)
    {
        notes.unsupported(
            at,
            option,
            "workloads at once whose reads and writes have different transfer sizes (volbench \
             draws every I/O's size from one mix)",
        );
        return None;
    }
    sizes.sort_by_key(|s| s.0);
    // Weights in hundredths of a percent of the I/O: whole numbers within
    // the mix's bound (at most 10000 each).
    let mut bs: Vec<(u64, u32)> = sizes
        .iter()
        .map(|s| (s.0, ((s.1 + s.2) * 100.0).round() as u32))
        .filter(|s| s.1 > 0)
        .collect();
    let g = bs.iter().fold(0u32, |g, s| gcd(g, s.1)).max(1);
    for s in &mut bs {
        s.1 /= g;
    }
    let exact_read = reads / (reads + writes) * 100.0;
    let read_pct = exact_read.round() as u64;
    let wds = chosen
        .iter()
        .zip(shares)
        .map(|(d, s)| format!("{} {}%", d.name, crate::units::trim(*s, 2)))
        .collect::<Vec<_>>()
        .join(", ");
    let mut how = format!(
        "one workload, each I/O drawn from the wds by their skews ({wds}): read_pct = {read_pct}, \
         bs = \"{}\" (vdbench's per-wd figures are not reported apart)",
        super::super::bs_text(&bs)
    );
    if (exact_read - read_pct as f64).abs() > 1e-9 {
        how.push_str(&format!(
            "; the read share {}% rounded to a whole percent",
            crate::units::trim(exact_read, 3)
        ));
    }
    Some(Some(Mix {
        read_pct,
        bs,
        said: Mapping {
            at: at.to_string(),
            option: format!("skew= of {option}"),
            how: How::Note(how),
        },
    }))
}

type Part = (f64, f64, Vec<(u64, u32)>);

fn pct(p: &Opt, notes: &mut Notes) -> Option<f64> {
    match p.val().trim().parse::<u64>() {
        Ok(v) if v <= 100 => Some(v as f64),
        _ => {
            p.refuse(notes, "must be 0..100");
            None
        }
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `hotband=(lo,hi)` in percent of the lun; hi past 100 (below 200) wraps
/// round to the start, as vdbench reads it.
fn band(p: &Opt, notes: &mut Notes) -> Option<Vec<(f64, f64)>> {
    let v: Vec<f64> = items(p.val())
        .iter()
        .filter_map(|x| x.parse::<f64>().ok())
        .collect();
    match v.as_slice() {
        [lo, hi] if (0.0..100.0).contains(lo) && lo < hi && *hi <= 100.0 => Some(vec![(*lo, *hi)]),
        [lo, hi] if (0.0..100.0).contains(lo) && *hi > 100.0 && *hi - 100.0 < *lo => {
            Some(vec![(0.0, hi - 100.0), (*lo, 100.0)])
        }
        [_, hi] if *hi >= 200.0 => {
            notes.unsupported(
                &p.at,
                &p.text(),
                "a hotband in bytes (give it in percent of the lun)",
            );
            None
        }
        _ => {
            notes.refuse(
                &p.at,
                &p.text(),
                "hotband is (low%,high%) with low < high, high below 200",
            );
            None
        }
    }
}

/// Hot zones from the start of the space: each gap before a band and each
/// band, with the band's share plus the evenly spread share by width. The
/// space after the last band is left to the distribution's remainder,
/// which is exactly the spread share of its width.
fn zones(bands: &[(f64, f64, f64)], spread: f64) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut at = 0.0;
    for &(lo, hi, share) in bands {
        if lo > at {
            out.push(format!("{}/{}", spread * (lo - at) / 100.0, lo - at));
        }
        out.push(format!(
            "{}/{}",
            share + spread * (hi - lo) / 100.0,
            hi - lo
        ));
        at = hi;
    }
    format!("hot:{}", out.join(","))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn wd(name: &str, extra: &[(&str, &str)]) -> Def {
        let mut params = vec![
            Opt::new("f line 1", "sd", Some("sd1")),
            Opt::new("f line 1", "xfersize", Some("4k")),
        ];
        for (k, v) in extra {
            params.push(Opt::new(&format!("f line {name}"), k, Some(v)));
        }
        Def {
            kind: "wd".into(),
            name: name.into(),
            at: "f".into(),
            params,
        }
    }

    fn zones_of(d: &(Def, Option<String>, Option<Mix>)) -> Option<String> {
        d.1.clone()
    }

    #[test]
    fn one_hotband_keeps_all_the_io_in_its_band() {
        let mut n = Notes::default();
        let w = wd("hot", &[("hotband", "(10,20)")]);
        let d = combine(&[&w], &mut n, "rd", "rd=r").unwrap();
        assert_eq!(zones_of(&d).as_deref(), Some("hot:0/10,100/10"));
        let dist = crate::spec::shape::Distribution::parse(&zones_of(&d).unwrap()).unwrap();
        assert!(matches!(dist, crate::spec::shape::Distribution::Hot { .. }));
        assert!(n.check().is_ok());
    }

    #[test]
    fn skewed_hotbands_and_a_rest_become_exact_zones() {
        // 20% to 10..12, 30% to 50..60, the rest (50%) over the whole lun.
        let a = wd("a", &[("skew", "20"), ("hotband", "(10,12)")]);
        let b = wd("b", &[("skew", "30"), ("hotband", "(50,60)")]);
        let rest = wd("rest", &[]);
        let mut n = Notes::default();
        let d = combine(&[&a, &b, &rest], &mut n, "rd", "rd=r").unwrap();
        let z = zones_of(&d).unwrap();
        assert_eq!(z, "hot:5/10,21/2,19/38,35/10");
        // The last 40% gets the remainder: 100 - 80 = 20 = 50% x 40%.
        let dist = crate::spec::shape::Distribution::parse(&z).unwrap();
        let crate::spec::shape::Distribution::Hot { zones } = dist else {
            panic!()
        };
        let io: f64 = zones.iter().map(|z| z.io_pct).sum();
        assert!((100.0 - io - 50.0 * 0.4).abs() < 1e-9);
        assert_eq!(d.0.name, "a+b+rest");
        assert!(d.0.get("skew").is_none() && d.0.get("hotband").is_none());
    }

    #[test]
    fn skews_weigh_the_wds_reads_and_sizes_into_one_mix() {
        // 60% of the I/O all reads of 8k, 40% half reads of 8k or 16k.
        let a = wd("a", &[("skew", "60"), ("rdpct", "50"), ("xfersize", "8k")]);
        let b = wd(
            "b",
            &[
                ("skew", "40"),
                ("rdpct", "50"),
                ("xfersize", "(8k,50,16k,50)"),
            ],
        );
        let mut n = Notes::default();
        let (merged, zones, mix) = combine(&[&a, &b], &mut n, "rd", "rd=r").unwrap();
        let mix = mix.unwrap();
        assert_eq!(
            (mix.read_pct, mix.bs.clone()),
            (50, vec![(8192, 4), (16384, 1)])
        );
        assert!(zones.is_none() && merged.get("xfersize").is_none());
        assert!(n.check().is_ok());
        // Alike but for skew: no mix, the wd as it is.
        let c = wd("c", &[("skew", "40"), ("rdpct", "50"), ("xfersize", "8k")]);
        let (merged, _, mix) = combine(&[&a, &c], &mut n, "rd", "rd=r").unwrap();
        assert!(mix.is_none() && merged.get("xfersize").is_some());
        // Reads 8k and writes 64k: refused, reads and writes would share sizes.
        let w = wd("w", &[("skew", "40"), ("rdpct", "0"), ("xfersize", "64k")]);
        let r = wd("r", &[("skew", "60"), ("rdpct", "100"), ("xfersize", "8k")]);
        let mut n = Notes::default();
        assert!(combine(&[&r, &w], &mut n, "f line 3", "rd=r").is_none());
        assert!(
            n.check()
                .unwrap_err()
                .to_string()
                .contains("different transfer sizes")
        );
    }

    #[test]
    fn a_wrapping_band_and_refusals() {
        let w = wd("w", &[("hotband", "(90,110)")]);
        let mut n = Notes::default();
        let d = combine(&[&w], &mut n, "rd", "rd=r").unwrap();
        assert_eq!(zones_of(&d).as_deref(), Some("hot:50/10,0/80,50/10"));
        // Workloads with a hotband that differ in more than skew and hotband.
        let a = wd(
            "a",
            &[("skew", "50"), ("rdpct", "100"), ("hotband", "(0,10)")],
        );
        let b = wd("b", &[("skew", "50"), ("rdpct", "0")]);
        let mut n = Notes::default();
        assert!(combine(&[&a, &b], &mut n, "f line 9", "rd=r").is_none());
        let e = n.check().unwrap_err().to_string();
        assert!(e.contains("f line 9") && e.contains("skew"), "{e}");
        // Skews over 100%, bytes, overlaps.
        for (x, y) in [
            ([("skew", "70")], [("skew", "50")]),
            ([("hotband", "(1g,2g)")], [("skew", "10")]),
        ] {
            let (a, b) = (wd("a", &x), wd("b", &y));
            let mut n = Notes::default();
            assert!(combine(&[&a, &b], &mut n, "rd", "rd=r").is_none());
            assert!(n.check().is_err());
        }
        let a = wd("a", &[("skew", "50"), ("hotband", "(10,30)")]);
        let b = wd("b", &[("skew", "50"), ("hotband", "(20,40)")]);
        let mut n = Notes::default();
        assert!(combine(&[&a, &b], &mut n, "rd", "rd=r").is_none());
        assert!(n.check().unwrap_err().to_string().contains("overlapping"));
    }
}
