//! diskspd command lines: the switches and targets of one invocation.
//! diskspd's defaults differ from volbench's (cached I/O, 64 KiB blocks,
//! 2 outstanding I/Os, 10 s, 5 s warm-up), so every value is written out.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::{Draft, DraftRun, How, Imported, Mapping, Notes, PathMap, parent_dir};
use crate::error::{Result, VbError};
use crate::spec::Pattern;
use crate::units::{bounds, format_size, parse_size};

fn count(v: &str, lo: u64, hi: u64) -> std::result::Result<u64, String> {
    v.parse::<u64>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| format!("'{v}' is not a whole number {lo}..{hi}"))
}

fn secs(v: &str) -> std::result::Result<f64, String> {
    count(v, 0, 30 * 86400).map(|s| s as f64)
}

/// diskspd sizes: a number with K, M, G, T (binary) or none for bytes.
fn size(v: &str) -> std::result::Result<u64, String> {
    sized(v, 0)
}

/// A size where diskspd also takes `B`, blocks of the `-b` size given so
/// far (diskspd reads its switches in order; 64 KiB before any `-b`).
fn sized(v: &str, bs: u64) -> std::result::Result<u64, String> {
    if let Some(n) = v
        .strip_suffix(['b', 'B'])
        .filter(|n| !n.is_empty() && bs > 0)
        && let Ok(n) = n.parse::<u64>()
    {
        return n
            .checked_mul(bs)
            .filter(|b| (1..=bounds::MAX_SIZE).contains(b))
            .ok_or_else(|| format!("'{v}' ({n} blocks of {}) is outside 1..8p", format_size(bs)));
    }
    parse_size(v).map_err(|e| e.message).and_then(|b| {
        if b == 0 || b > bounds::MAX_SIZE {
            Err(format!("'{v}' is outside 1..8p"))
        } else {
            Ok(b)
        }
    })
}

pub fn import_args(args: &[String], map: &PathMap) -> Result<Imported> {
    let mut notes = Notes::default();
    let mut m: Vec<Mapping> = Vec::new();
    let push = |m: &mut Vec<Mapping>, at: &str, opt: &str, how: How| {
        m.push(Mapping {
            at: at.into(),
            option: opt.into(),
            how,
        })
    };
    let mut bs = 64 * 1024u64;
    let mut create: Option<u64> = None;
    // Where -c was given: a file set refused for its directory names it.
    let mut create_at = (String::new(), String::new());
    let mut duration = 10.0;
    let mut warmup = 5.0;
    let mut random = false;
    let mut write_pct = 0u64;
    let mut per_target: Option<u64> = None;
    let mut total_threads: Option<u64> = None;
    let mut outstanding = 2u64;
    let mut direct = false;
    let mut write_sync = None;
    let mut throttle: Option<(f64, bool, String, String)> = None;
    let mut interval = None;
    let mut seed = None;
    let mut align: Option<(String, String, u64)> = None;
    let mut shape: Vec<(&'static str, String)> = Vec::new();
    let mut targets: Vec<(String, String)> = Vec::new();
    for (i, raw) in args.iter().enumerate() {
        let at = format!("argument {}", i + 1);
        let a = raw.as_str();
        let Some(sw) = a.strip_prefix('-').or_else(|| {
            a.strip_prefix('/').filter(|_| {
                // `/x` is a switch only when it is not a path.
                a.len() < 4 && !a.contains('/')
            })
        }) else {
            targets.push((at, a.to_string()));
            continue;
        };
        let mut chars = sw.chars();
        let Some(c) = chars.next() else {
            notes.refuse(&at, a, "an empty switch");
            continue;
        };
        let v = chars.as_str();
        let bad = |notes: &mut Notes, e: String| notes.refuse(&at, a, e);
        match c {
            'b' => match size(v) {
                Ok(b) if b <= bounds::MAX_BS => {
                    bs = b;
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact(format!("bs = {}", format_size(b))),
                    );
                }
                Ok(_) => bad(&mut notes, "block size above 1g".into()),
                Err(e) => bad(&mut notes, e),
            },
            'c' => match sized(v, bs) {
                Ok(b) => {
                    create = Some(b);
                    create_at = (at.clone(), a.to_string());
                    push(&mut m, &at, a, How::Exact("size of each file".into()));
                }
                Err(e) => bad(&mut notes, e),
            },
            'd' => match secs(v) {
                Ok(s) if s > 0.0 => {
                    duration = s;
                    push(&mut m, &at, a, How::Exact("duration".into()));
                }
                _ => bad(&mut notes, "a duration of 1..2592000 seconds".into()),
            },
            'W' => match secs(v) {
                Ok(s) => {
                    warmup = s;
                    push(&mut m, &at, a, How::Exact("warmup".into()));
                }
                Err(e) => bad(&mut notes, e),
            },
            'C' => match secs(v) {
                Ok(0.0) => push(&mut m, &at, a, How::Exact("no cool-down".into())),
                Ok(s) => {
                    shape.push(("cooldown", format!("\"{}\"", super::secs_text(s))));
                    let how = format!(
                        "cooldown = {}: I/O goes on, not counted",
                        super::secs_text(s)
                    );
                    push(&mut m, &at, a, How::Exact(how));
                }
                Err(e) => bad(&mut notes, e),
            },
            'r' if v.starts_with("dpct") => match hot_zones(v.get(4..).unwrap_or("")) {
                Ok(dist) => {
                    let how = format!(
                        "distribution = {dist}: the same IO%/target% zones, the rest of the I/O to the rest of the target"
                    );
                    shape.push(("distribution", format!("\"{dist}\"")));
                    push(&mut m, &at, a, How::Exact(how));
                }
                Err(e) => bad(&mut notes, e),
            },
            'r' if v.starts_with('d') => notes.unsupported(
                &at,
                a,
                "zones of absolute sizes; -rdpct (zones as percentages of the target) maps",
            ),
            'r' if v.starts_with('s') => {
                match v.strip_prefix('s').unwrap_or_default().parse::<u64>() {
                    Ok(p) if p <= 100 => {
                        random = true;
                        shape.push(("seek_pct", p.to_string()));
                        let how = format!(
                            "seek_pct = {p}: {p}% random, the rest sequential on from the last I/O"
                        );
                        push(&mut m, &at, a, How::Exact(how));
                    }
                    _ => bad(&mut notes, "a percentage of random I/O, 0..100".into()),
                }
            }
            'r' => {
                if !v.is_empty() && size(v).is_ok() {
                    // Checked against the final -b: `-r4k -b4k` is aligned too.
                    random = true;
                    align = Some((at.clone(), a.to_string(), size(v).unwrap_or(0)));
                } else if !v.is_empty() {
                    bad(
                        &mut notes,
                        "-r takes an alignment in bytes (K, M, G, T)".into(),
                    );
                } else {
                    random = true;
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact("random offsets, block aligned".into()),
                    );
                }
            }
            's' => {
                let (interlocked, stride) = match v.strip_prefix('i') {
                    Some(s) => (true, s),
                    None => (false, v),
                };
                if !stride.is_empty() && size(stride).ok() != Some(bs) {
                    notes.unsupported(&at, a, "a sequential stride other than the block size");
                } else if interlocked {
                    random = false;
                    push(&mut m, &at, a, How::Note(
                        "sequential; diskspd's threads share one offset, volbench's threads each stream through their own part".into(),
                    ));
                } else {
                    random = false;
                    push(&mut m, &at, a, How::Exact("sequential".into()));
                }
            }
            'w' => match count(v, 0, 100) {
                Ok(w) => {
                    write_pct = w;
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact(format!("read_pct = {}", 100 - w)),
                    );
                }
                Err(e) => bad(&mut notes, e),
            },
            't' => match count(v, 1, bounds::MAX_THREADS) {
                Ok(t) => {
                    per_target = Some(t);
                    push(&mut m, &at, a, How::Exact("threads per target".into()));
                }
                Err(e) => bad(&mut notes, e),
            },
            'F' => match count(v, 1, bounds::MAX_THREADS) {
                Ok(t) => {
                    total_threads = Some(t);
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact("threads, sharing every target".into()),
                    );
                }
                Err(e) => bad(&mut notes, e),
            },
            'o' => match count(v, 1, bounds::MAX_IODEPTH) {
                Ok(o) => {
                    outstanding = o;
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact("iodepth (outstanding I/Os per thread)".into()),
                    );
                }
                Err(e) => bad(&mut notes, e),
            },
            'T' => match size(v) {
                Err(_) if v == "0" => push(
                    &mut m,
                    &at,
                    a,
                    How::Exact("no offset between threads".into()),
                ),
                _ => notes.unsupported(&at, a, "a fixed offset between threads' I/O"),
            },
            'S' => match v {
                "" | "u" => {
                    direct = true;
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact("direct = true (O_DIRECT: no software cache)".into()),
                    );
                }
                "b" => {
                    direct = false;
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact("direct = false (the page cache)".into()),
                    );
                }
                "h" | "uw" | "wu" => {
                    direct = true;
                    write_sync = Some("dsync");
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact(
                            "direct = true, write_sync = \"dsync\" (no software cache, \
                             write-through: O_DIRECT + O_DSYNC)"
                                .into(),
                        ),
                    );
                }
                "w" => {
                    write_sync = Some("dsync");
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Exact("write_sync = \"dsync\" (write-through: O_DSYNC)".into()),
                    );
                }
                _ => notes.unsupported(&at, a, "this caching mode"),
            },
            'h' if v.is_empty() => {
                direct = true;
                write_sync = Some("dsync");
                push(
                    &mut m,
                    &at,
                    a,
                    How::Exact(
                        "direct = true, write_sync = \"dsync\" (-h is the old spelling of -Sh)"
                            .into(),
                    ),
                );
            }
            'L' if v.is_empty() => push(
                &mut m,
                &at,
                a,
                How::Exact("volbench always measures latency".into()),
            ),
            'Z' => {
                if v.is_empty() {
                    notes.unsupported(&at, a, "writing zeros");
                } else if v == "r" || size(v).is_ok() {
                    push(
                        &mut m,
                        &at,
                        a,
                        How::Note(
                            "volbench writes its own incompressible data, unique per block".into(),
                        ),
                    );
                } else {
                    notes.unsupported(&at, a, "a write source file");
                }
            }
            'g' => {
                let (num, iops) = match v.strip_suffix('i') {
                    Some(n) => (n, true),
                    None => (v, false),
                };
                match num.parse::<f64>() {
                    Ok(g) if g > 0.0 && g.is_finite() => {
                        throttle = Some((g, iops, at.clone(), a.to_string()))
                    }
                    _ => bad(&mut notes, "a positive throughput limit".into()),
                }
            }
            'D' => {
                let ms = if v.is_empty() {
                    Ok(1000)
                } else {
                    count(v, 50, 3_600_000)
                };
                match ms {
                    Ok(ms) => {
                        interval = Some(ms as f64 / 1000.0);
                        push(&mut m, &at, a, How::Exact("interval".into()));
                    }
                    Err(e) => bad(&mut notes, e),
                }
            }
            'B' => match size(v) {
                Err(_) if v == "0" => push(&mut m, &at, a, How::Exact("from the start".into())),
                _ => notes.unsupported(&at, a, "a base offset into the target"),
            },
            'z' => match v.parse::<u64>() {
                Ok(s) => {
                    seed = Some(s);
                    push(&mut m, &at, a, How::Exact("seed".into()));
                }
                Err(_) if v.is_empty() => {
                    push(&mut m, &at, a, How::Note("volbench's default seed".into()))
                }
                Err(_) => bad(&mut notes, "a whole-number seed".into()),
            },
            'a' | 'n' => push(
                &mut m,
                &at,
                a,
                How::Note("ignored: volbench does not pin its threads to CPUs".into()),
            ),
            'R' | 'v' | 'P' | 'x' | 'l' | 'e' => push(
                &mut m,
                &at,
                a,
                How::Note(
                    "diskspd's own output or timing detail; volbench reports its own way".into(),
                ),
            ),
            'i' | 'j' => notes.unsupported(&at, a, "bursts and think time"),
            'f' => notes.unsupported(
                &at,
                a,
                "a highest offset (-f<size>) or Windows file access hints (-f<rst>)",
            ),
            'p' => notes.unsupported(
                &at,
                a,
                "threads issuing sequential I/O at one shared offset",
            ),
            'O' => notes.unsupported(
                &at,
                a,
                "outstanding I/O per thread across its targets; -o (per target per thread) maps",
            ),
            '-' => notes.refuse(
                &at,
                a,
                "not a diskspd switch; volbench's own flags go before the diskspd arguments",
            ),
            _ => notes.refuse(
                &at,
                a,
                "not supported yet (no volbench equivalent of this diskspd switch)",
            ),
        }
    }
    if let Some((at, a, al)) = align {
        if al == bs {
            push(
                &mut m,
                &at,
                &a,
                How::Exact("random offsets, block aligned".into()),
            );
        } else {
            notes.unsupported(
                &at,
                &a,
                "random offsets aligned other than to the block size",
            );
        }
    }
    if targets.is_empty() {
        return Err(VbError::input(
            "diskspd: no target (a file path, or #N for a disk)",
        ));
    }
    let mut paths = Vec::new();
    for (at, t) in &targets {
        match map.resolve(t) {
            Ok((p, mapped)) => {
                if mapped {
                    push(&mut m, at, t, How::Exact(format!("{p} (--map)")));
                }
                paths.push(p);
            }
            Err(e) => notes.refuse(at, t, e),
        }
    }
    notes.check()?;
    let n = paths.len() as u64;
    // Several targets without -F run as a list of targets, each with its
    // own -t threads (volbench's --target '{a,b}'), as diskspd binds threads
    // to targets; with -F every thread reaches every file, which one file
    // set of n files does exactly.
    let listed = n > 1 && total_threads.is_none();
    let threads = match (total_threads, per_target) {
        (Some(f), _) => f,
        (None, t) => t.unwrap_or(1),
    };
    let all_threads = if listed { threads * n } else { threads };
    if all_threads > bounds::MAX_THREADS {
        return Err(VbError::input(format!(
            "diskspd: {all_threads} threads in all; at most {}",
            bounds::MAX_THREADS
        )));
    }
    let mut threads_total = false;
    let (target, size, files) = if listed {
        if create.is_some()
            && let Some(why) = paths.iter().find_map(|p| super::kernel_set_dir(p))
        {
            notes.refuse(&create_at.0, &create_at.1, why);
            notes.check()?;
        }
        super::target_list::list(&paths, create, threads, &mut m, &mut notes)?
    } else {
        match create {
            Some(c) => {
                let dirs: std::collections::BTreeSet<String> =
                    paths.iter().map(|p| parent_dir(p)).collect();
                if dirs.len() > 1 {
                    notes.unsupported(
                        "targets",
                        "files in several directories",
                        "one target directory per suite",
                    );
                    notes.check()?;
                }
                let dir = dirs.into_iter().next().unwrap_or_default();
                if let Some(why) = super::kernel_set_dir(&dir) {
                    notes.refuse(&create_at.0, &create_at.1, why);
                    notes.check()?;
                }
                push(
                    &mut m,
                    "targets",
                    &paths.join(" "),
                    How::Note(format!(
                        "volbench writes only files it creates: its own {n} file(s) volbench.N.dat in {dir}"
                    )),
                );
                (dir, Some(c.saturating_mul(n)), n)
            }
            None => match paths.as_slice() {
                [one] => {
                    push(
                        &mut m,
                        "targets",
                        one,
                        How::Exact(
                            "the existing file or device, whole (writing needs --allow-overwrite)"
                                .into(),
                        ),
                    );
                    (one.clone(), None, 1)
                }
                _ => {
                    // -F without -c: diskspd's threads each reach every
                    // existing file; volbench spreads the same threads over
                    // them, each file (or device) a target of its own, used
                    // whole under the rules of `run --target FILE`.
                    let named: Vec<(String, String)> = targets
                        .iter()
                        .map(|(at, _)| at.clone())
                        .zip(paths.iter().cloned())
                        .collect();
                    super::target_list::must_exist(
                        &named,
                        "without -c diskspd opens existing files; give -cSIZE to have volbench create its own",
                        &mut notes,
                    );
                    notes.check()?;
                    threads_total = true;
                    super::target_list::list_with(
                        &paths,
                        None,
                        threads,
                        super::target_list::Threads::Total,
                        &mut m,
                        &mut notes,
                    )?
                }
            },
        }
    };
    let rate = match throttle {
        Some((g, iops, at, a)) => {
            let per_thread = if iops { g } else { g * 1000.0 / bs as f64 };
            let total = per_thread * all_threads as f64;
            // Bounded like --rate, so the suite written is one a run takes
            // (-g1e308i wrote a 309-digit rate).
            match bounds::number("the rate", total, bounds::MIN_RATE, bounds::MAX_RATE) {
                Ok(rate) => {
                    push(
                        &mut m,
                        &at,
                        &a,
                        How::Exact(format!(
                            "rate = {} IOPS ({} per thread x {all_threads} threads)",
                            bounds::short(rate),
                            bounds::short(per_thread)
                        )),
                    );
                    Some(rate)
                }
                // The refusals were already checked: this one is returned.
                Err(e) => {
                    return Err(VbError::input(bounds::one_line(&format!(
                        "{at}: {a}: {}",
                        e.message
                    ))));
                }
            }
        }
        None => None,
    };
    if !direct {
        push(
            &mut m,
            "defaults",
            "(no -S)",
            How::Exact("direct = false: diskspd caches unless told -S or -Su".into()),
        );
    }
    let rw = match (random, write_pct) {
        (true, 0) => Pattern::Randread,
        (true, 100) => Pattern::Randwrite,
        (true, _) => Pattern::Randrw,
        (false, 0) => Pattern::Read,
        (false, 100) => Pattern::Write,
        (false, _) => Pattern::Rw,
    };
    let run = DraftRun {
        name: format!(
            "diskspd-{}-{}w-{}",
            if random { "rand" } else { "seq" },
            write_pct,
            format_size(bs).replace(' ', "")
        ),
        rw,
        read_pct: (100 - write_pct) as u8,
        bs: vec![(bs, 1)],
        threads,
        iodepth: outstanding,
        files: Some(files),
        rate,
        arrivals: None,
        duration_s: duration,
        warmup_s: warmup,
        io_limit: None,
        curve: None,
        shape,
        notes: m,
    };
    Ok(Imported {
        draft: Draft {
            name: "diskspd".into(),
            source: format!("diskspd {}", args.join(" ")),
            target,
            size,
            files: Some(files),
            fill_bs: None,
            threads_total,
            direct,
            write_sync,
            data: Vec::new(),
            // diskspd issues overlapped (asynchronous) I/O.
            engine: Some(crate::spec::EngineKind::IoUring.name()),
            interval_s: interval,
            seed,
            hosts: Vec::new(),
            global: Vec::new(),
            runs: vec![run],
            tree: None,
        },
        notes,
    })
}

/// diskspd's `-rdpct` zones (`90/10:0/10:5/20`) as volbench's hot zones:
/// the same IO%/space% pairs, and both leave the rest of the I/O to the rest
/// of the target.
fn hot_zones(arg: &str) -> std::result::Result<String, String> {
    let dist = format!("hot:{}", arg.replace(':', ","));
    crate::spec::shape::Distribution::parse(&dist)
        .map(|_| dist)
        .map_err(|e| e.message)
}
