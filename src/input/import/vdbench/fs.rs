//! vdbench's file-system workloads (`fsd=`, `fwd=`, `rd=` with `fwd=`) as
//! volbench's metadata runs: the fsd's anchor, depth, width, files and size
//! are the tree; `format=yes` is a create phase; each rd a timed mix of its
//! fwds' operations.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{
    Draft, DraftTree, DraftTreeRun, How, Mapping, Notes, PathMap, run_name, size_text,
};
use super::parse::{Def, Param, seconds, with_defaults};
use crate::error::{Result, VbError};
use crate::units::parse_size;

fn exact(m: &mut Vec<Mapping>, p: &Param, how: &str) {
    m.push(Mapping {
        at: p.at.clone(),
        option: p.text(),
        how: How::Exact(how.into()),
    });
}

fn note(m: &mut Vec<Mapping>, p: &Param, how: &str) {
    m.push(Mapping {
        at: p.at.clone(),
        option: p.text(),
        how: How::Note(how.into()),
    });
}

/// vdbench's operation= as volbench's operation, with whether it is exact.
fn op(v: &str) -> Option<(&'static str, bool)> {
    Some(match v {
        "create" => ("create", true),
        "delete" => ("delete", true),
        "getattr" => ("stat", true),
        "setattr" => ("setattr", true),
        "read" => ("read", false),
        "write" => ("write", false),
        "open" | "close" => ("open", false),
        _ => return None,
    })
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

pub(super) fn translate(
    origin: &str,
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
) -> Result<Draft> {
    use crate::spec::meta::{MAX_DEPTH, MAX_FILE_SIZE, MAX_WIDTH};
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
    let (mut depth, mut width, mut files, mut size) = (1u64, 1u64, 1u64, 0u64);
    let mut shared = false;
    let mut target = String::new();
    for p in &fsd.params {
        match p.key.as_str() {
            "anchor" => match map.resolve(p.value.trim()) {
                Ok((t, _)) if let Some(why) = super::super::kernel_set_dir(&t) => {
                    notes.refuse(&p.at, &p.text(), why)
                }
                Ok((t, _)) => {
                    target = t;
                    exact(
                        &mut global,
                        p,
                        "the tree's target directory (volbench's names d0../f0..)",
                    );
                }
                Err(e) => notes.refuse(&p.at, &p.text(), e),
            },
            "depth" => {
                depth = number(p, 0, MAX_DEPTH.into(), notes).unwrap_or(1);
                exact(&mut global, p, "depth");
            }
            "width" => {
                width = number(p, 1, MAX_WIDTH.into(), notes).unwrap_or(1);
                exact(&mut global, p, "width");
            }
            "files" => {
                files = number(p, 1, u32::MAX.into(), notes).unwrap_or(1);
                exact(
                    &mut global,
                    p,
                    "files_per_dir (files in each lowest directory)",
                );
            }
            "size" => match parse_size(p.value.trim()) {
                Ok(b) if b <= MAX_FILE_SIZE => {
                    size = b;
                    exact(&mut global, p, "file_size");
                }
                Ok(_) => notes.refuse(
                    &p.at,
                    &p.text(),
                    format!(
                        "volbench's tree files are at most {}",
                        size_text(MAX_FILE_SIZE)
                    ),
                ),
                Err(_) => notes.unsupported(&p.at, &p.text(), "size distributions of an fsd"),
            },
            "shared" => {
                shared = p.value.trim() == "yes";
                exact(
                    &mut global,
                    p,
                    "shared_dirs: every thread works in every directory",
                );
            }
            _ => notes.unsupported(&p.at, &p.text(), "fsd parameter"),
        }
    }
    let mut runs = Vec::new();
    let mut interval = None;
    let mut formatted = false;
    for rd in &rds {
        let mut rd_interval = None;
        let Some(fp) = rd.get("fwd") else {
            notes.unsupported(&rd.at, &format!("rd={}", rd.name), "an rd without fwd=");
            continue;
        };
        let Some(chosen) = super::parse::named(&fwds, fp, "fwd", notes) else {
            continue;
        };
        let mut m = Vec::new();
        let mut mix: Vec<(&'static str, u64)> = Vec::new();
        let mut threads = 0u64;
        for w in &chosen {
            let mut wop = None;
            let mut wthreads = 1;
            let mut skew = None;
            for p in &w.params {
                match p.key.as_str() {
                    "fsd" => exact(&mut m, p, "the tree"),
                    "operation" => match op(p.value.trim()) {
                        Some((o, true)) => {
                            wop = Some(o);
                            exact(&mut m, p, o);
                        }
                        Some((o, false)) => {
                            wop = Some(o);
                            note(&mut m, p, &format!("{o}: volbench's {o} takes the whole file, open to close, as one operation"));
                        }
                        None => notes.unsupported(&p.at, &p.text(), "this operation in a timed mix (volbench has create, delete, getattr, setattr, read, write, open)"),
                    },
                    "threads" => {
                        wthreads = number(p, 1, crate::units::bounds::MAX_THREADS, notes).unwrap_or(1);
                        exact(&mut m, p, "threads (added over the rd's fwds)");
                    }
                    "skew" => {
                        skew = number(p, 1, 100, notes);
                        exact(&mut m, p, "the operation's weight in the mix");
                    }
                    "xfersize" | "fileio" | "fileselect" => note(&mut m, p, "volbench moves each file whole, in one pass, files picked at random"),
                    _ => notes.unsupported(&p.at, &p.text(), "fwd parameter"),
                }
            }
            threads += wthreads;
            if let Some(o) = wop {
                mix.push((o, skew.unwrap_or(0)));
            }
        }
        // Two fwds of one operation are one weight in volbench's mix.
        let mut merged: Vec<(&'static str, u64)> = Vec::new();
        for (o, w) in &mix {
            match merged.iter_mut().find(|(x, _)| x == o) {
                Some(e) if e.1 > 0 && *w > 0 => e.1 += w,
                Some(_) => notes.unsupported(
                    &rd.at,
                    &format!("rd={}", rd.name),
                    "two fwds of one operation, one without skew=",
                ),
                None => merged.push((o, *w)),
            }
        }
        let mut mix = merged;
        // fwds without skew= share what the others leave, evenly (as vdbench).
        let given: u64 = mix.iter().map(|(_, s)| s).sum();
        let free = mix.iter().filter(|(_, s)| *s == 0).count() as u64;
        for (_, s) in mix.iter_mut().filter(|(_, s)| *s == 0) {
            *s = (100u64.saturating_sub(given) / free.max(1)).max(1);
        }
        let (mut elapsed, mut warmup, mut format) = (30.0, None, false);
        for p in &rd.params {
            match p.key.as_str() {
                "fwd" => {}
                "interval" => match seconds(p) {
                    Ok(s) => {
                        interval = Some(s);
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
                "fwdrate" if p.value.trim() == "max" => exact(&mut m, p, "as fast as it goes"),
                // The suite loader does not pass a rate to metadata runs yet:
                // refused rather than dropped.
                "fwdrate" => {
                    notes.unsupported(&p.at, &p.text(), "a rate on a metadata run in a suite")
                }
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
        if format && formatted {
            notes.unsupported(
                &rd.at,
                &format!("rd={} format=yes", rd.name),
                "formatting the tree a second time (vdbench deletes and re-creates it)",
            );
        }
        formatted |= format;
        // vdbench leaves the first interval out of its totals.
        let warmup = warmup.or(rd_interval).unwrap_or(1.0);
        if format {
            runs.push(DraftTreeRun {
                name: format!("{name}-format"),
                ops: "create".into(),
                threads,
                duration_s: None,
                warmup_s: None,
                notes: Vec::new(),
            });
        }
        let ops: Vec<String> = mix.iter().map(|(o, w)| format!("{o}:{w}")).collect();
        runs.push(DraftTreeRun {
            name,
            ops: ops.join(","),
            threads,
            duration_s: Some(elapsed),
            warmup_s: Some(warmup),
            notes: super::super::dedup(m),
        });
    }
    notes.check()?;
    if runs.is_empty() {
        return Err(VbError::input(format!("{origin}: no rd with fwd=")));
    }
    Ok(Draft {
        name: run_name(origin.split(' ').next().unwrap_or("vdbench")),
        source: format!("vdbench parameters {origin}"),
        target,
        global,
        interval_s: interval,
        tree: Some(DraftTree {
            depth,
            width,
            files_per_dir: files,
            file_size: size_text(size),
            shared_dirs: shared,
            runs,
        }),
        ..Draft::default()
    })
}
