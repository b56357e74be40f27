//! A suite's published variant: the values its paper ran with (thread
//! counts, sizes, durations), kept as data in a `[published]` table beside
//! the scaled-down defaults and chosen with `--published`. The table is
//! whole: its `[published.defaults]` replace `[defaults]`, its
//! `[[published.run]]` entries (when it has any) replace the `[[run]]`
//! list, so what a paper ran is read in one place.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::{Defaults, RunEntry, SuiteFile};
use crate::error::{Result, VbError};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Published {
    /// Where the numbers come from: the paper and its command line.
    pub(crate) source: String,
    /// What volbench runs differently from the paper, said on every run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) note: String,
    pub(crate) warmup_run: Option<bool>,
    #[serde(default)]
    pub(crate) defaults: Defaults,
    #[serde(rename = "run", default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) runs: Vec<Spanned<RunEntry>>,
}

/// The suite as published, and the lines that say where it comes from.
pub(crate) fn select(mut suite: SuiteFile, origin: &str) -> Result<(SuiteFile, Vec<String>)> {
    let Some(p) = suite.published.take() else {
        return Err(VbError::input(format!(
            "{origin} has no published variant (no paper gives its parameters); run it without --published"
        )));
    };
    suite.defaults = p.defaults;
    if !p.runs.is_empty() {
        suite.runs = p.runs;
    }
    if let Some(w) = p.warmup_run {
        suite.warmup_run = w;
    }
    let mut lines = vec![format!("published variant of {}: {}", suite.name, p.source)];
    if !p.note.is_empty() {
        lines.push(format!("published variant: {}", p.note));
    }
    Ok((suite, lines))
}

/// The `[published]` part of a suite's text, as written, for `suite show
/// --published`; the built-in suites keep it last.
pub(crate) fn section<'t>(origin: &str, text: &'t str) -> Result<&'t str> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("[published") {
            return Ok(text.get(at..).unwrap_or(text));
        }
        at += line.len();
    }
    Err(VbError::input(format!(
        "{origin} has no published variant (no paper gives its parameters)"
    )))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::super::footprint::{runs_summary, variants};
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
