//! The vocabulary every part of the vdbench importer shares: a parameter,
//! a definition, and how their values are read (lists, wildcards, seconds,
//! transfer sizes) and recorded (`exact`, `noted`). A leaf: it uses none of
//! its siblings.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{Mapping, Notes};
use crate::units::{bounds, parse_duration, parse_size};

/// One `key=value` of a definition, its key widened to the full keyword.
pub(crate) use super::super::table::Opt;

#[derive(Debug, Clone)]
pub(crate) struct Def {
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) at: String,
    pub(crate) params: Vec<Opt>,
}

impl Def {
    pub(crate) fn get(&self, key: &str) -> Option<&Opt> {
        self.params.iter().rev().find(|p| p.key == key)
    }
}

/// `(a,b)`, `("sd*")`, `a`: the list of items, quotes and parentheses off.
pub(crate) fn items(value: &str) -> Vec<String> {
    let v = value.trim();
    let v = v
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(v);
    v.split(',')
        .map(|s| s.trim().trim_matches('"').trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A parameter mapped exactly.
pub(crate) fn exact(g: &mut Vec<Mapping>, p: &Opt, how: &str) {
    g.push(p.mapping(how, true))
}

/// A parameter mapped with a printed note.
pub(crate) fn noted(g: &mut Vec<Mapping>, p: &Opt, how: &str) {
    g.push(p.mapping(how, false))
}

/// vdbench's wildcards: `*` matches any run of characters.
/// The definitions a parameter names (`wd=(a,b)`, `fwd=fwd*`), or None
/// with its refusal when it names none defined before.
pub(crate) fn named<'a>(
    defs: &'a [Def],
    p: &Opt,
    kind: &str,
    notes: &mut Notes,
) -> Option<Vec<&'a Def>> {
    let chosen: Vec<&Def> = defs
        .iter()
        .filter(|d| items(p.val()).iter().any(|x| wildcard(x, &d.name)))
        .collect();
    if chosen.is_empty() {
        notes.refuse(&p.at, &p.text(), format!("names no {kind} defined before"));
        return None;
    }
    Some(chosen)
}

pub(crate) fn wildcard(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let mut rest = name;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(pos) => rest = rest.get(pos + part.len()..).unwrap_or(""),
                None => return false,
            }
        }
    }
    true
}

/// A definition with its kind's `default` entries before it applied.
pub(crate) fn with_defaults(defs: &[Def], idx: usize) -> Def {
    let Some(d) = defs.get(idx) else {
        return Def {
            kind: String::new(),
            name: String::new(),
            at: String::new(),
            params: Vec::new(),
        };
    };
    let mut params: Vec<Opt> = defs
        .iter()
        .take(idx)
        .filter(|x| x.kind == d.kind && x.name == "default")
        .flat_map(|x| x.params.iter().cloned())
        .collect();
    params.extend(d.params.iter().cloned());
    Def {
        params,
        ..d.clone()
    }
}

pub(crate) fn seconds(p: &Opt) -> std::result::Result<f64, String> {
    parse_duration(p.val())
        .map(|d| d.as_secs_f64())
        .map_err(|e| e.message)
}

/// forthreads style lists: `(1,2,4)`, `(1-8,1)` steps, `(1-64,d)` doubling.
pub(crate) fn for_list(p: &Opt) -> std::result::Result<Vec<String>, String> {
    let it = items(p.val());
    if let [range, step] = it.as_slice() {
        if let Some((a, b)) = range.split_once('-') {
            let (a, b) = match (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
                (Ok(a), Ok(b)) if a >= 1 && a <= b => (a, b),
                _ => return Err(format!("'{range}' is not a range of whole numbers")),
            };
            let mut out = Vec::new();
            let mut v = a;
            while v <= b {
                // Cut short silently, (1-100000,1) was still a 10,000-run suite.
                if out.len() == bounds::MAX_SWEEP_POINTS {
                    return Err(format!(
                        "'{range}' expands to more than {} values, the most a sweep takes",
                        bounds::MAX_SWEEP_POINTS
                    ));
                }
                out.push(v.to_string());
                v = if step == "d" {
                    v.saturating_mul(2)
                } else {
                    match step.parse::<u64>() {
                        Ok(s) if s >= 1 => v.saturating_add(s),
                        _ => return Err(format!("'{step}' is not a step (a number or d)")),
                    }
                };
            }
            return Ok(out);
        }
    }
    if it.is_empty() || it.len() > bounds::MAX_SWEEP_POINTS {
        return Err(format!("1..{} values", bounds::MAX_SWEEP_POINTS));
    }
    Ok(it)
}

/// xfersize: `64k`, or `(4k,30,64k,70)` size/percent pairs.
pub(crate) fn xfersize(v: &str) -> std::result::Result<Vec<(u64, u32)>, String> {
    let it = items(v);
    let size = |s: &str| -> std::result::Result<u64, String> {
        let b = parse_size(s).map_err(|e| e.message)?;
        if b == 0 || b > bounds::MAX_BS {
            return Err(format!("{s} is outside 1..1g"));
        }
        Ok(b)
    };
    match it.as_slice() {
        [one] => Ok(vec![(size(one)?, 1)]),
        pairs if pairs.len() % 2 == 0 && pairs.len() <= 2 * bounds::MAX_BS_MIX => {
            let mut out = Vec::new();
            let mut total = 0u64;
            for pair in pairs.chunks(2) {
                if let [s, p] = pair {
                    let pct = p
                        .parse::<u64>()
                        .ok()
                        .filter(|p| *p <= 100)
                        .ok_or_else(|| format!("'{p}' is not a percentage"))?;
                    total += pct;
                    if pct > 0 {
                        out.push((size(s)?, pct as u32));
                    }
                }
            }
            if total != 100 {
                return Err(format!("the percentages add up to {total}, not 100"));
            }
            Ok(out)
        }
        _ => Err("a (min,max,align) range is not supported yet".into()),
    }
}
