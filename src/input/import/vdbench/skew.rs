//! vdbench's `skew=` and `hotband=`. An rd may run several wds at once,
//! each taking its skew (a percentage) of the run's I/O; a wd with
//! `hotband=(lo,hi)` keeps its I/O within lo%..hi% of the lun. volbench
//! runs one workload per run, so wds that differ in nothing but skew and
//! hotband become one workload whose offsets follow hot zones
//! (`distribution = "hot:..."`): each band gets its wd's share, and what
//! the wds without a band do (spread over the whole lun) is spread over
//! every zone by its width, so each part of the lun gets exactly the share
//! vdbench gives it. Anything else is refused by name.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::Notes;
use super::parse::{Def, Opt, items};

/// One workload for the wds an rd runs together, without their `skew=`
/// and `hotband=`, and the hot zones those make (`distribution = "hot:..."`);
/// None when they cannot be one (refused in `notes`).
pub(super) fn combine(
    chosen: &[&Def],
    notes: &mut Notes,
    at: &str,
    option: &str,
) -> Option<(Def, Option<String>)> {
    let first = *chosen.first()?;
    let plain = |d: &Def| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = d
            .params
            .iter()
            .filter(|p| p.key != "skew" && p.key != "hotband" && p.key != "sd")
            .map(|p| (p.key.clone(), p.val().to_string()))
            .collect();
        v.sort();
        v
    };
    let sds = |d: &Def| d.get("sd").map(|p| items(p.val())).unwrap_or_default();
    let other_sds = chosen.iter().any(|d| sds(d) != sds(first));
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
        notes.unsupported(
            at,
            option,
            "several workloads at once that differ in more than skew= and hotband= (volbench runs one workload per run)",
        );
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
    // Bands with their share; the share of the wds without one is `spread`.
    let mut bands: Vec<(f64, f64, f64)> = Vec::new();
    let mut spread = 0.0;
    for (d, s) in chosen.iter().zip(&skews) {
        let share = s.unwrap_or(share_open);
        let share = if chosen.len() == 1 { 100.0 } else { share };
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
    merged
        .params
        .retain(|p| p.key != "skew" && p.key != "hotband");
    if other_sds {
        let mut all: Vec<String> = chosen.iter().flat_map(|d| sds(d)).collect();
        all.sort();
        all.dedup();
        if let Some(p) = merged.params.iter_mut().rev().find(|p| p.key == "sd") {
            *p = Opt::new(&p.at.clone(), "sd", Some(&format!("({})", all.join(","))));
        }
    }
    if bands.is_empty() {
        return Some((merged, None));
    }
    bands.sort_by(|a, b| a.0.total_cmp(&b.0));
    if bands.windows(2).any(|w| matches!(w, [a, b] if b.0 < a.1)) {
        notes.unsupported(at, option, "overlapping hotbands");
        return None;
    }
    Some((merged, Some(zones(&bands, spread))))
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

    fn zones_of(d: &(Def, Option<String>)) -> Option<String> {
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
    fn a_wrapping_band_and_refusals() {
        let w = wd("w", &[("hotband", "(90,110)")]);
        let mut n = Notes::default();
        let d = combine(&[&w], &mut n, "rd", "rd=r").unwrap();
        assert_eq!(zones_of(&d).as_deref(), Some("hot:50/10,0/80,50/10"));
        // Workloads that differ in more than skew and hotband.
        let a = wd("a", &[("skew", "50"), ("rdpct", "100")]);
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
