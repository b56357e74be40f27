//! Store references where a result directory may be named (`report`,
//! `compare`): `store:ID`, `store:latest` (the newest run), and
//! `store:baseline` (the baseline of the target and suite of the other
//! results named; alone, the one baseline the store has). Each is read
//! back and checked whole like a result file.

use std::path::{Path, PathBuf};

use super::{Location, Store};
use crate::error::{Result, VbError};
use crate::output::source::{Source, label_sources, read_result};

pub(crate) const PREFIX: &str = "store:";

/// What a `store:` reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ref {
    Id(i64),
    Latest,
    Baseline,
}

/// The reference `p` spells, None for a path.
pub(crate) fn parse(p: &Path) -> Option<Result<Ref>> {
    let text = p.to_str()?;
    let what = text.strip_prefix(PREFIX)?;
    Some(match what {
        "latest" => Ok(Ref::Latest),
        "baseline" => Ok(Ref::Baseline),
        n => n
            .parse::<i64>()
            .ok()
            .filter(|&i| i > 0)
            .map(Ref::Id)
            .ok_or_else(|| {
                VbError::input(format!(
                    "{}: a store reference is store:ID (a number `volbench history` lists), \
                     store:latest or store:baseline",
                    crate::units::bounds::one_line(text)
                ))
            }),
    })
}

/// Loads every path or reference, in order, and labels them; the store
/// (`--store`, `$VOLBENCH_STORE` or the default) is opened only when a
/// reference is among them.
pub(crate) fn load(paths: &[PathBuf], store: Option<&str>) -> Result<Vec<Source>> {
    let refs: Vec<Option<Ref>> = paths
        .iter()
        .map(|p| parse(p).transpose())
        .collect::<Result<_>>()?;
    let mut docs = Vec::with_capacity(paths.len());
    for (p, r) in paths.iter().zip(&refs) {
        docs.push(match r {
            None => Some(read_result(p)?),
            Some(_) => None,
        });
    }
    // References to runs first, the baseline after them, so it can be
    // that of the target of a run named by reference too.
    let mut opened: Option<Store> = None;
    let mut loaded: Vec<Option<Source>> = vec![None; paths.len()];
    for pass in [false, true] {
        for (i, (p, r)) in paths.iter().zip(&refs).enumerate() {
            let doc = match (r, docs[i].take()) {
                (None, Some(doc)) => (p.clone(), doc),
                (Some(r), _) if (*r == Ref::Baseline) == pass => {
                    let s = match &mut opened {
                        Some(s) => s,
                        None => opened.insert(Store::open(&Location::for_reading(store)?, false)?),
                    };
                    let known: Vec<&crate::result::ResultDoc> =
                        loaded.iter().flatten().map(|l| &l.doc).collect();
                    let id = resolve(s, r, &known)?;
                    (PathBuf::from(format!("{PREFIX}{id}")), s.result(id)?)
                }
                _ => continue,
            };
            loaded[i] = Some(Source {
                label: String::new(),
                path: doc.0,
                doc: doc.1,
            });
        }
    }
    let mut out: Vec<Source> = loaded.into_iter().flatten().collect();
    label_sources(&mut out);
    Ok(out)
}

/// The run a reference names; the baseline is that of the first result
/// already loaded (`known`: every one named but the baselines).
fn resolve(s: &mut Store, r: &Ref, known: &[&crate::result::ResultDoc]) -> Result<i64> {
    match r {
        Ref::Id(id) => {
            s.filed_under(*id)?;
            Ok(*id)
        }
        Ref::Latest => s.latest(None, None),
        Ref::Baseline => match known.first() {
            Some(d) => {
                let (t, su) = (super::rows::target_of(d), super::rows::suite_of(d));
                s.baseline(&t, &su)?.ok_or_else(|| no_baseline(s, &t, &su))
            }
            None => match s.baselines()?.as_slice() {
                [one] => Ok(one.2),
                [] => Err(VbError::input(format!(
                    "store:baseline: {} has no baseline (volbench baseline set ID)",
                    s.shown()
                ))),
                many => Err(VbError::input(format!(
                    "store:baseline: {} has {} baselines; name a result beside it, or \
                         the run (store:ID) itself: {}",
                    s.shown(),
                    many.len(),
                    many.iter()
                        .map(|b| format!("store:{} ({})", b.2, shown_key(&b.0, &b.1)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            },
        },
    }
}

/// "target /mnt/a, suite six-patterns" as messages name a baseline's key.
pub(crate) fn shown_key(target: &str, suite: &str) -> String {
    if suite.is_empty() {
        format!("target {target}, no suite")
    } else {
        format!("target {target}, suite {suite}")
    }
}

fn no_baseline(s: &Store, target: &str, suite: &str) -> VbError {
    VbError::input(format!(
        "store:baseline: {} has no baseline for {} (volbench baseline set ID)",
        s.shown(),
        shown_key(target, suite)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_read_and_bad_ones_refused() {
        assert!(parse(Path::new("/tmp/run1")).is_none());
        assert_eq!(parse(Path::new("store:12")).unwrap().unwrap(), Ref::Id(12));
        assert_eq!(
            parse(Path::new("store:latest")).unwrap().unwrap(),
            Ref::Latest
        );
        assert_eq!(
            parse(Path::new("store:baseline")).unwrap().unwrap(),
            Ref::Baseline
        );
        let e = parse(Path::new("store:-1")).unwrap().unwrap_err();
        assert!(e.to_string().contains("store:ID"), "{e}");
        assert!(parse(Path::new("store:x\ny")).unwrap().is_err());
    }
}
