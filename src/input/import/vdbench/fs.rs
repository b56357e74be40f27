//! vdbench's file-system workloads (`fsd=`, `fwd=`, `rd=` with `fwd=`) as
//! volbench's metadata runs: the fsd's anchor, depth, width, files and
//! sizes (one, or a distribution) are the tree; `format=yes` is a create
//! phase; each rd a timed mix of its fwds' operations at `fwdrate=` (a list:
//! one run per rate), or, for `mkdir`/`rmdir`, a phase over the tree.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{Draft, DraftTree, DraftTreeRun, Mapping, Notes, PathMap, run_name, size_text};
use super::parse::{Def, Param, items, seconds, with_defaults};
use crate::error::{Result, VbError};
use crate::units::{bounds, parse_size};

fn exact(m: &mut Vec<Mapping>, p: &Param, how: &str) {
    super::parse::exact(m, p, how)
}

fn note(m: &mut Vec<Mapping>, p: &Param, how: &str) {
    super::parse::noted(m, p, how)
}

/// vdbench's operation= as volbench's operation, with whether it is exact.
fn op(v: &str) -> Option<(&'static str, bool)> {
    Some(match v {
        "create" => ("create", true),
        "delete" => ("delete", true),
        "getattr" => ("stat", true),
        "setattr" => ("setattr", true),
        "mkdir" => ("mkdir", true),
        "rmdir" => ("rmdir", true),
        "read" => ("read", false),
        "write" => ("write", false),
        "open" | "close" => ("open", false),
        _ => return None,
    })
}

/// Operations on the tree's shape: volbench runs them as a phase.
fn on_shape(op: &str) -> bool {
    matches!(op, "mkdir" | "rmdir")
}

fn number(p: &Param, lo: u64, hi: u64, notes: &mut Notes) -> Option<u64> {
    match p.value.trim().parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Some(n),
        _ => {
            notes.refuse(&p.at, &p.text(), format!("must be {lo}..{hi}"));
            None
        }
    }
}

/// True when the parameters describe a file-system workload.
pub(super) fn is_fs(defs: &[Def]) -> bool {
    defs.iter().any(|d| d.kind == "fsd" || d.kind == "fwd")
}

/// The fsd's tree (runs still empty) and its directory.
struct Fsd {
    tree: DraftTree,
    target: String,
}

pub(super) fn translate(
    origin: &str,
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
) -> Result<Draft> {
    let mut global = Vec::new();
    let mut fsd: Option<Def> = None;
    let mut fwds: Vec<Def> = Vec::new();
    let mut rds: Vec<Def> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        if d.name == "default" {
            continue;
        }
        let full = with_defaults(defs, i);
        match d.kind.as_str() {
            "fsd" if fsd.is_some() => notes.refuse(
                &d.at,
                &format!("fsd={}", d.name),
                "a second fsd; volbench's runs share one tree (import them apart)",
            ),
            "fsd" => fsd = Some(full),
            "fwd" => fwds.push(full),
            "rd" => rds.push(full),
            k => notes.refuse(
                &d.at,
                &format!("{k}={}", d.name),
                "beside fsd/fwd: volbench's suite is a tree or block I/O, not both (import them apart)",
            ),
        }
    }
    let Some(fsd) = fsd else {
        return Err(VbError::input(format!("{origin}: fwd without an fsd")));
    };
    let Fsd { mut tree, target } = read_fsd(&fsd, map, &mut global, notes);
    let mut interval = None;
    let mut formatted = false;
    for rd in &rds {
        one_rd(
            rd,
            &fwds,
            &mut tree.runs,
            &mut interval,
            &mut formatted,
            notes,
        );
    }
    notes.check()?;
    if tree.runs.is_empty() {
        return Err(VbError::input(format!("{origin}: no rd with fwd=")));
    }
    Ok(Draft {
        name: run_name(origin.split(' ').next().unwrap_or("vdbench")),
        source: format!("vdbench parameters {origin}"),
        target,
        global,
        interval_s: interval,
        tree: Some(tree),
        ..Draft::default()
    })
}

/// The fsd's parameters: the tree's shape, sizes and directory.
fn read_fsd(fsd: &Def, map: &PathMap, global: &mut Vec<Mapping>, notes: &mut Notes) -> Fsd {
    use crate::spec::meta::{MAX_DEPTH, MAX_WIDTH};
    let mut f = Fsd {
        tree: DraftTree {
            depth: 1,
            width: 1,
            files_per_dir: 1,
            file_size: "0".into(),
            shared_dirs: false,
            runs: Vec::new(),
        },
        target: String::new(),
    };
    for p in &fsd.params {
        match p.key.as_str() {
            "anchor" => match map.resolve(p.value.trim()) {
                Ok((t, _)) => match super::super::kernel_set_dir(&t) {
                    Some(why) => notes.refuse(&p.at, &p.text(), why),
                    None => {
                        f.target = t;
                        exact(
                            global,
                            p,
                            "the tree's target directory (volbench's names d0../f0..)",
                        );
                    }
                },
                Err(e) => notes.refuse(&p.at, &p.text(), e),
            },
            "depth" => {
                f.tree.depth = number(p, 0, MAX_DEPTH.into(), notes).unwrap_or(1);
                exact(global, p, "depth");
            }
            "width" => {
                f.tree.width = number(p, 1, MAX_WIDTH.into(), notes).unwrap_or(1);
                exact(global, p, "width");
            }
            "files" => {
                f.tree.files_per_dir = number(p, 1, u32::MAX.into(), notes).unwrap_or(1);
                exact(global, p, "files_per_dir (files in each lowest directory)");
            }
            "size" => match file_sizes(&p.value) {
                Ok((text, mix)) => {
                    let how = if mix {
                        format!(
                            "file_size = \"{text}\": each file's size drawn from the same weights"
                        )
                    } else {
                        "file_size".into()
                    };
                    f.tree.file_size = text;
                    exact(global, p, &how);
                }
                Err(e) => notes.refuse(&p.at, &p.text(), e),
            },
            "shared" => {
                f.tree.shared_dirs = p.value.trim() == "yes";
                exact(
                    global,
                    p,
                    "shared_dirs: every thread works in every directory",
                );
            }
            _ => super::keys::judge("fsd", p, global, notes),
        }
    }
    f
}

/// vdbench's fsd `size=`: one size, or `(size,pct,size,pct...)` with the
/// percentages adding up to 100, as volbench's `file_size` text (and
/// whether it is a mix).
fn file_sizes(v: &str) -> std::result::Result<(String, bool), String> {
    use crate::spec::meta::MAX_FILE_SIZE;
    let one = |s: &str| -> std::result::Result<u64, String> {
        let b = parse_size(s.trim()).map_err(|e| e.message)?;
        if b > MAX_FILE_SIZE {
            return Err(format!(
                "volbench's tree files are at most {}",
                size_text(MAX_FILE_SIZE)
            ));
        }
        Ok(b)
    };
    let it = items(v);
    if let [s] = it.as_slice() {
        return one(s).map(|b| (size_text(b), false));
    }
    if it.is_empty() || it.len() % 2 != 0 || it.len() > 2 * bounds::MAX_BS_MIX {
        return Err(format!(
            "a size, or up to {} (size,percent) pairs",
            bounds::MAX_BS_MIX
        ));
    }
    let mut parts = Vec::new();
    let mut total = 0u64;
    for pair in it.chunks(2) {
        let (size, pct) = match pair {
            [s, p] => (s, p),
            _ => continue,
        };
        let pct = pct
            .parse::<u64>()
            .ok()
            .filter(|p| (1..=100).contains(p))
            .ok_or_else(|| {
                format!("'{pct}' is not a percentage 1..100 (vdbench's (size,0) average form is not supported yet)")
            })?;
        total += pct;
        parts.push(format!("{}:{pct}", size_text(one(size)?)));
    }
    if total != 100 {
        return Err(format!("the percentages add up to {total}, not 100"));
    }
    Ok((parts.join(","), true))
}

/// One fwd's operation, threads and weight.
struct Fwd {
    op: Option<&'static str>,
    threads: u64,
    skew: Option<u64>,
}

fn read_fwd(w: &Def, m: &mut Vec<Mapping>, notes: &mut Notes) -> Fwd {
    let mut f = Fwd {
        op: None,
        threads: 1,
        skew: None,
    };
    for p in &w.params {
        match p.key.as_str() {
            "fsd" => exact(m, p, "the tree"),
            "operation" => match op(p.value.trim()) {
                Some((o, true)) if on_shape(o) => {
                    f.op = Some(o);
                    note(m, p, &format!("{o}: a phase over the tree's leaf directories, each once, then the run ends (capped at elapsed=)"));
                }
                Some((o, true)) => {
                    f.op = Some(o);
                    exact(m, p, o);
                }
                Some((o, false)) => {
                    f.op = Some(o);
                    note(m, p, &format!("{o}: volbench's {o} takes the whole file, open to close, as one operation"));
                }
                None => notes.unsupported(&p.at, &p.text(), "this operation (volbench has create, delete, getattr, setattr, read, write, open, mkdir, rmdir)"),
            },
            "threads" => {
                f.threads = number(p, 1, bounds::MAX_THREADS, notes).unwrap_or(1);
                exact(m, p, "threads (added over the rd's fwds)");
            }
            "skew" => {
                f.skew = number(p, 1, 100, notes);
                exact(m, p, "the operation's weight in the mix");
            }
            _ => super::keys::judge("fwd", p, m, notes),
        }
    }
    f
}

/// The weighted mix of the fwds' operations: two fwds of one operation
/// are one weight; fwds without skew= share what the others leave, evenly
/// (as vdbench).
fn mix(fwds: &[Fwd], rd: &Def, notes: &mut Notes) -> Vec<(&'static str, u64)> {
    let mut merged: Vec<(&'static str, u64)> = Vec::new();
    for f in fwds {
        let Some(o) = f.op else { continue };
        let w = f.skew.unwrap_or(0);
        match merged.iter_mut().find(|(x, _)| *x == o) {
            Some(e) if e.1 > 0 && w > 0 => e.1 += w,
            Some(_) => notes.unsupported(
                &rd.at,
                &format!("rd={}", rd.name),
                "two fwds of one operation, one without skew=",
            ),
            None => merged.push((o, w)),
        }
    }
    let given: u64 = merged.iter().map(|(_, s)| s).sum();
    let free = merged.iter().filter(|(_, s)| *s == 0).count() as u64;
    for (_, s) in merged.iter_mut().filter(|(_, s)| *s == 0) {
        *s = (100u64.saturating_sub(given) / free.max(1)).max(1);
    }
    merged
}

/// `fwdrate=`: max, one rate or a list (one run per rate), in operations
/// per second over the rd's threads.
fn fwdrate(p: &Param, m: &mut Vec<Mapping>, notes: &mut Notes) -> Vec<Option<f64>> {
    let v = p.value.trim().to_ascii_lowercase();
    if v == "max" {
        exact(m, p, "as fast as it goes");
        return vec![None];
    }
    if v == "curve" {
        notes.unsupported(
            &p.at,
            &p.text(),
            "a curve over a tree (a run with ops takes one rate; give fwdrate=(r1,r2,...))",
        );
        return vec![None];
    }
    let list = items(&v);
    let mut rates = Vec::new();
    for x in &list {
        let r = x
            .parse::<f64>()
            .map_err(|_| format!("'{x}' is not a rate (operations per second) nor max"))
            .and_then(|r| {
                bounds::number("the rate", r, bounds::MIN_RATE, bounds::MAX_RATE)
                    .map_err(|e| e.message)
            });
        match r {
            Ok(r) => rates.push(Some(r)),
            Err(e) => {
                notes.refuse(&p.at, &p.text(), e);
                return vec![None];
            }
        }
    }
    if rates.is_empty() || rates.len() > bounds::MAX_SWEEP_POINTS {
        notes.refuse(
            &p.at,
            &p.text(),
            format!("max, or 1..{} rates", bounds::MAX_SWEEP_POINTS),
        );
        return vec![None];
    }
    exact(
        m,
        p,
        if rates.len() > 1 {
            "rate: operations per second over all threads, one run per rate in order"
        } else {
            "rate: operations per second over all threads"
        },
    );
    rates
}

/// One rd with fwd=: its format phase, then its mix (or shape phase) at
/// each of its rates.
fn one_rd(
    rd: &Def,
    fwds: &[Def],
    runs: &mut Vec<DraftTreeRun>,
    interval: &mut Option<f64>,
    formatted: &mut bool,
    notes: &mut Notes,
) {
    let Some(fp) = rd.get("fwd") else {
        notes.unsupported(&rd.at, &format!("rd={}", rd.name), "an rd without fwd=");
        return;
    };
    let Some(chosen) = super::parse::named(fwds, fp, "fwd", notes) else {
        return;
    };
    let mut m = Vec::new();
    let read: Vec<Fwd> = chosen.iter().map(|w| read_fwd(w, &mut m, notes)).collect();
    let threads: u64 = read.iter().map(|f| f.threads).sum();
    let mix = mix(&read, rd, notes);
    let (mut elapsed, mut warmup, mut format) = (30.0, None, false);
    let mut rates = vec![None];
    let mut rd_interval = None;
    for p in &rd.params {
        match p.key.as_str() {
            "fwd" => {}
            "interval" => match seconds(p) {
                Ok(s) => {
                    *interval = Some(s);
                    rd_interval = Some(s);
                    exact(&mut m, p, "interval");
                }
                Err(e) => notes.refuse(&p.at, &p.text(), e),
            },
            "elapsed" | "warmup" => match seconds(p) {
                Ok(s) if p.key == "elapsed" => {
                    elapsed = s;
                    exact(&mut m, p, "duration");
                }
                Ok(s) => {
                    warmup = Some(s);
                    exact(&mut m, p, "warmup");
                }
                Err(e) => notes.refuse(&p.at, &p.text(), e),
            },
            "fwdrate" => rates = fwdrate(p, &mut m, notes),
            "format" => match p.value.trim() {
                "yes" => {
                    format = true;
                    note(
                        &mut m,
                        p,
                        "a create phase over the tree before the run (vdbench's format is untimed; reported apart here)",
                    );
                }
                "no" => exact(&mut m, p, "the tree is used as it is"),
                _ => notes.unsupported(&p.at, &p.text(), "format= other than yes or no"),
            },
            _ => notes.unsupported(&p.at, &p.text(), "rd parameter with fwd="),
        }
    }
    let name = run_name(&rd.name);
    if format && *formatted {
        notes.unsupported(
            &rd.at,
            &format!("rd={} format=yes", rd.name),
            "formatting the tree a second time (vdbench deletes and re-creates it)",
        );
    }
    *formatted |= format;
    if format {
        runs.push(DraftTreeRun {
            name: format!("{name}-format"),
            ops: "create".into(),
            threads,
            duration_s: None,
            warmup_s: None,
            rate: None,
            notes: Vec::new(),
        });
    }
    let shape_op = mix.iter().find(|(o, _)| on_shape(o)).map(|(o, _)| *o);
    if let Some(o) = shape_op.filter(|_| mix.len() > 1) {
        notes.unsupported(
            &rd.at,
            &format!("rd={}", rd.name),
            &format!("{o} beside other operations (volbench runs {o} as a phase over the tree, on its own)"),
        );
        return;
    }
    // vdbench leaves the first interval out of its totals.
    let warmup = warmup.or(rd_interval).unwrap_or(1.0);
    let ops = match shape_op {
        Some(o) => o.to_string(),
        None => mix
            .iter()
            .map(|(o, w)| format!("{o}:{w}"))
            .collect::<Vec<_>>()
            .join(","),
    };
    for r in &rates {
        let mut run_name = name.clone();
        if rates.len() > 1 {
            match r {
                Some(r) => run_name.push_str(&format!("-{}ops", bounds::short(*r))),
                None => run_name.push_str("-max"),
            }
        }
        runs.push(DraftTreeRun {
            name: run_name,
            ops: ops.clone(),
            threads,
            duration_s: Some(elapsed),
            // A phase covers the tree once; only a timed mix warms up.
            warmup_s: shape_op.is_none().then_some(warmup),
            rate: *r,
            notes: super::super::dedup(m.clone()),
        });
    }
}
