//! What a suite runs, in a line or a list, for a user to see before
//! taking its figures for a paper's: each variant's runs, threads, data and
//! time (`suite list`, a scaled-down run's first line), and each published
//! run with its file set (`suite show --published`). Includes are read.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;

use super::published::select;
use crate::error::Result;

/// What `suite show --published` adds below the table, as TOML comments:
/// each run as it expands, with the file set it works on and what its fill
/// writes, so sizes a run sets itself read as the paper gives them.
pub(crate) fn runs_summary(origin: &str, text: &str, path: Option<&Path>) -> Result<String> {
    let job = job_of(origin, text, path, true)?;
    let mut out = String::from("\n# As published, each run and the file set it works on:\n");
    let mut filled = Vec::new();
    for r in &job.runs {
        if r.meta.is_some() {
            out.push_str(&format!(
                "#   {}: {} threads, a metadata run\n",
                r.name, r.threads
            ));
            continue;
        }
        let l = job.layout_of(r);
        // A set is filled once, before the first run; later runs reuse it.
        let fill = if filled.contains(&l) {
            String::new()
        } else {
            filled.push(l);
            format!(" (fill {})", crate::units::format_size(l.fill_bytes()))
        };
        out.push_str(&format!(
            "#   {}: {} {}, {} threads x iodepth {}, {} file{} x {}{fill}\n",
            r.name,
            r.rw.name(),
            r.bs_label(),
            r.threads,
            r.iodepth,
            l.files,
            if l.files == 1 { "" } else { "s" },
            crate::units::format_size(l.file_size()),
        ));
    }
    Ok(out)
}

/// What a suite's two variants run, one line each, for `suite list` and
/// the first line of a scaled-down run: the defaults are scaled to one
/// small machine, so a user must see that before taking its figures for
/// the paper's. The second line is None for a suite without a paper's
/// values.
pub(crate) fn variants(
    origin: &str,
    text: &str,
    path: Option<&Path>,
) -> Result<(String, Option<String>)> {
    let has_published = super::parse(origin, text)?.published.is_some();
    let scaled = footprint(&job_of(origin, text, path, false)?);
    let published = if has_published {
        Some(footprint(&job_of(origin, text, path, true)?))
    } else {
        None
    };
    Ok((scaled, published))
}

/// The suite's job, its includes read (relative to `path`), as published
/// or scaled down.
fn job_of(
    origin: &str,
    text: &str,
    path: Option<&Path>,
    published: bool,
) -> Result<crate::spec::JobSpec> {
    let mut suite = super::parse(origin, text)?;
    if published {
        suite = select(suite, origin)?.0;
    }
    let mut files = super::include::Files;
    let r = super::resolve(origin, text, path, suite, &mut files, published)?;
    // Expanding touches nothing: the path only has to be a path.
    super::expand(&r, &super::Overrides::new("TARGET".into()))
}

/// Runs, threads x iodepth (a range when runs differ), the data its file
/// sets hold, and the time its runs take (warm-ups included, fills not).
fn footprint(job: &crate::spec::JobSpec) -> String {
    let range = |v: Vec<u32>| {
        let lo = v.iter().min().copied().unwrap_or(0);
        let hi = v.iter().max().copied().unwrap_or(0);
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}..{hi}")
        }
    };
    let runs: Vec<_> = job.runs.iter().filter(|r| !r.discard).collect();
    let threads = range(runs.iter().map(|r| r.threads).collect());
    let depth = range(
        runs.iter()
            .filter(|r| r.meta.is_none())
            .map(|r| r.iodepth)
            .collect(),
    );
    let bytes: u64 = job.layouts().iter().map(|l| l.fill_bytes()).sum();
    // A metadata phase or a run with an I/O limit ends when its work is
    // done; its duration is only a cap, so it is counted, not timed.
    let (open, timed): (Vec<_>, Vec<_>) = job
        .runs
        .iter()
        .partition(|r| r.meta.is_some() || r.io_limit.is_some());
    let seconds: f64 = timed.iter().map(|r| r.warmup_s + r.duration_s).sum();
    let mut time =
        crate::units::format_duration(std::time::Duration::from_secs(seconds.ceil() as u64))
            + " of timed runs";
    if !open.is_empty() {
        time.push_str(&format!(" + {} run to completion", open.len()));
    }
    let shape = if depth == "0" {
        format!("{threads} threads")
    } else {
        format!("{threads} threads x iodepth {depth}")
    };
    let data = if bytes > 0 {
        format!(", {} of data", crate::units::format_size(bytes))
    } else {
        String::new()
    };
    format!(
        "{} run{}, {shape}{data}, {time}",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::super::published::{section, select};
    use super::super::{BUILTIN, Overrides, load, parse, to_job};
    use super::*;
    use crate::spec::JobSpec;

    fn published(name: &str) -> Result<JobSpec> {
        let (origin, text) = load(name)?;
        let (suite, _) = select(parse(&origin, &text)?, &origin)?;
        let o = Overrides::new("/tmp/x".into());
        to_job(&origin, &text, &suite, &o)
    }

    #[test]
    fn the_published_tables_expand_into_valid_jobs_or_are_absent() {
        let with = [
            "six-patterns",
            "disk-check",
            "files-threads",
            "mix-table",
            "mix-sweep",
        ];
        for (name, text) in BUILTIN {
            match published(name) {
                Ok(j) => {
                    assert!(with.contains(&name), "{name} has a published table");
                    // The table is printed from its header to the end.
                    let s = section(name, text).unwrap();
                    assert!(s.starts_with("[published]") && text.ends_with(s));
                    assert!(
                        !s.contains("\n[[run]]") && !s.contains("\n[defaults]"),
                        "{name}"
                    );
                    assert!(!j.runs.is_empty());
                }
                Err(e) => {
                    assert!(!with.contains(&name), "{name}: {e}");
                    assert!(e.message.contains("has no published variant"), "{e}");
                    assert!(section(name, text).is_err());
                }
            }
        }
    }

    #[test]
    fn disk_check_variants_say_threads_size_and_time() {
        let (origin, text) = load("disk-check").unwrap();
        let (scaled, published) = variants(&origin, &text, None).unwrap();
        // 3 runs of 10 s warm-up + 60 s, and the warm-up run's copy.
        assert!(
            scaled == "3 runs, 4 threads x iodepth 4, 4GiB of data, 4m40s of timed runs",
            "{scaled}"
        );
        assert_eq!(
            published.as_deref(),
            Some("3 runs, 16 threads x iodepth 4, 50GiB of data, 15m15s of timed runs")
        );
        let (origin, text) = load("latency-curve").unwrap();
        assert_eq!(variants(&origin, &text, None).unwrap().1, None);
    }

    #[test]
    fn six_patterns_as_published() {
        let j = published("six-patterns").unwrap();
        let t: Vec<(String, u32)> = j.runs.iter().map(|r| (r.name.clone(), r.threads)).collect();
        let want = [25, 20, 25, 20, 26, 32, 40, 6, 7];
        assert_eq!(t.iter().map(|x| x.1).collect::<Vec<_>>(), want, "{t:?}");
        assert!(
            j.runs
                .iter()
                .all(|r| r.warmup_s == 60.0 && r.duration_s == 600.0 && !r.discard)
        );
        assert_eq!((j.target.size, j.target.fill.bs), (693 << 30, 64 << 10));
        // The scaled-down suite is untouched by the table.
        let (origin, text) = load("six-patterns").unwrap();
        let plain = parse(&origin, &text).unwrap();
        assert_eq!(plain.runs.len(), 6);
    }

    #[test]
    fn files_threads_as_published_is_ten_2g_files_then_one_128g_file() {
        let j = published("files-threads").unwrap();
        let sets: Vec<(String, u32, u64)> = j
            .runs
            .iter()
            .map(|r| {
                let l = j.layout_of(r);
                (r.name.clone(), l.files, l.file_size())
            })
            .collect();
        assert_eq!(
            sets,
            [
                ("10-files".to_string(), 10, 2 << 30),
                ("1-file".to_string(), 1, 128 << 30)
            ]
        );
        assert_eq!(j.layouts().len(), 2);
        let (origin, text) = load("files-threads").unwrap();
        let shown = runs_summary(&origin, &text, None).unwrap();
        assert!(
            shown.contains(
                "#   1-file: randwrite 4KiB, 8 threads x iodepth 8, 1 file x 128GiB (fill 128GiB)"
            ),
            "{shown}"
        );
        assert!(shown.contains("10 files x 2GiB (fill 20GiB)"), "{shown}");
    }
}
