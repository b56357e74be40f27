//! Findings about many hosts or targets said once: the same finding on 812
//! of 1,000 hosts is one finding ("812 of 1,000 hosts: ...") whose figures
//! give the spread over them (median, `_min`, `_max`) and whose `subjects`
//! name every one (folded in the report, capped on the terminal), so a
//! thousand hosts give a screen of findings, not a thousand lines.

use super::{Confidence, Finding};

/// From this many subjects alike, a finding is said once for all of them;
/// fewer are said each on its own (two lines read better than a group).
pub(crate) const GROUP_FROM: usize = 3;

/// One subject's finding, and what makes it alike another's: the same kind
/// and the same class.
pub(super) struct Each {
    /// The host's name, or `HOST:PATH` for a target.
    pub(crate) subject: String,
    /// The variant of the finding ("busy with other work", "CPU-bound"):
    /// subjects are grouped only within one, since the advice differs.
    pub(crate) class: &'static str,
    pub(crate) finding: Finding,
}

/// The findings of `each`: those alike for `GROUP_FROM` subjects or more said
/// once, the rest as they are, in the order they first came. `of` is how
/// many subjects were judged, `noun` their plural ("hosts"), and
/// `say(class, members)` the group's sentence after "N of M hosts: ".
pub(super) fn fold(
    each: Vec<Each>,
    of: usize,
    noun: &str,
    say: impl Fn(&str, &[&Finding]) -> String,
) -> Vec<Finding> {
    let mut groups: Vec<(&'static str, Vec<Each>)> = Vec::new();
    for e in each {
        let same = groups
            .iter_mut()
            .find(|(class, m)| *class == e.class && m[0].finding.kind == e.finding.kind);
        match same {
            Some((_, members)) => members.push(e),
            None => groups.push((e.class, vec![e])),
        }
    }
    let mut out = Vec::new();
    for (class, members) in groups {
        if members.len() < GROUP_FROM {
            out.extend(members.into_iter().map(|e| e.finding));
            continue;
        }
        let found: Vec<&Finding> = members.iter().map(|e| &e.finding).collect();
        let message = format!(
            "{} of {} {noun}: {}",
            crate::units::thousands(members.len() as f64),
            crate::units::thousands(of.max(members.len()) as f64),
            say(class, &found)
        );
        let mut f = Finding::new(found[0].kind, confidence(&found), message);
        for key in found[0].figures.keys() {
            if let Some((lo, mid, hi)) = spread(&found, key) {
                f = f.figure(key, mid);
                f = f.figure(&format!("{key}_min"), lo);
                f = f.figure(&format!("{key}_max"), hi);
            }
        }
        f = f
            .figure("subjects", members.len() as f64)
            .figure("of", of.max(members.len()) as f64);
        for m in &found {
            for r in &m.runs {
                if !f.runs.contains(r) {
                    f.runs.push(r.clone());
                }
            }
        }
        f.subjects = members.into_iter().map(|e| e.subject).collect();
        out.push(f);
    }
    out
}

/// The confidence most members have; a tie goes to the less sure.
fn confidence(members: &[&Finding]) -> Confidence {
    let count = |c: Confidence| members.iter().filter(|f| f.confidence == c).count();
    [Confidence::Low, Confidence::Medium, Confidence::High]
        .into_iter()
        .rev()
        .max_by_key(|c| count(*c))
        .unwrap_or(Confidence::Low)
}

/// (least, median, most) of a figure over the members that have it; None
/// when one lacks it.
pub(super) fn spread(members: &[&Finding], key: &str) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = members
        .iter()
        .map(|f| f.figures.get(key).copied())
        .collect::<Option<Vec<f64>>>()?;
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let mid = match n {
        0 => return None,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    };
    Some((v[0], mid, v[n - 1]))
}

/// A figure's span over the members as a person reads it: "91-99" (or "97"
/// when they all agree once written), each end written by `show`.
pub(super) fn span(members: &[&Finding], key: &str, show: fn(f64) -> String) -> String {
    match spread(members, key) {
        Some((lo, _, hi)) if show(lo) == show(hi) => show(lo),
        Some((lo, _, hi)) => format!("{}-{}", show(lo), show(hi)),
        None => "?".into(),
    }
}

/// The median of every value but the i-th: what one host (or target) is
/// held against.
pub(crate) fn others_median(values: &[f64], i: usize) -> f64 {
    median(
        values
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, v)| *v)
            .collect(),
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A percentage without decimals, as the findings write one.
pub(super) fn pct(v: f64) -> String {
    format!("{v:.0}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::super::Kind;
    use super::*;

    fn each(subject: &str, class: &'static str, busy: f64, sure: Confidence) -> Each {
        Each {
            subject: subject.into(),
            class,
            finding: Finding::new(Kind::ClientCpu, sure, format!("{subject} busy {busy}"))
                .figure("busy_pct", busy),
        }
    }

    #[test]
    fn alike_subjects_are_said_once_with_their_spread_and_every_name() {
        let mut all: Vec<Each> = (0..5)
            .map(|i| each(&format!("h{i}"), "busy", 90.0 + i as f64, Confidence::Low))
            .collect();
        all.push(each("h9", "stolen", 99.0, Confidence::Medium));
        let f = fold(all, 1000, "hosts", |class, m| {
            format!("{class} at {}%", span(m, "busy_pct", pct))
        });
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(f[0].message, "5 of 1,000 hosts: busy at 90-94%");
        assert_eq!(f[0].subjects, vec!["h0", "h1", "h2", "h3", "h4"]);
        assert_eq!(f[0].figures["busy_pct"], 92.0);
        assert_eq!(f[0].figures["busy_pct_min"], 90.0);
        assert_eq!(f[0].figures["busy_pct_max"], 94.0);
        assert_eq!(f[0].figures["subjects"], 5.0);
        assert_eq!(f[0].figures["of"], 1000.0);
        assert_eq!(f[0].confidence, Confidence::Low);
        // One of its class: said as it was.
        assert_eq!(f[1].message, "h9 busy 99");
        assert!(f[1].subjects.is_empty());
    }

    #[test]
    fn two_alike_are_said_each_on_its_own() {
        let all = vec![
            each("a", "busy", 91.0, Confidence::Low),
            each("b", "busy", 92.0, Confidence::Low),
        ];
        let f = fold(all, 2, "hosts", |_, _| unreachable!());
        assert_eq!(f.len(), 2);
    }
}
