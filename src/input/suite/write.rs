//! A suite written out: the model `parse` reads (`SuiteFile`) serialised,
//! section by section so that a caller's comments stand above the file and
//! above each run (an import says there how each source option was
//! mapped), and the pieces to build a suite in code (a run entry by name,
//! values from numbers and text). Writing and parsing again gives the same
//! value back (the tests hold it).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::fmt::Write as _;

use serde::Serialize;
use toml::Spanned;

use super::replay::ReplayEntry;
use super::{Defaults, P, Param, RunEntry, SuiteFile};
use crate::error::{Result, VbError};
use crate::spec::TableKind;
use crate::units::bounds;

impl From<u64> for Param {
    /// A TOML integer is an i64: a larger count (a seed) is written as the
    /// text every suite key's parser also reads.
    fn from(v: u64) -> Self {
        i64::try_from(v).map_or_else(|_| Param::Str(v.to_string()), Param::Int)
    }
}

impl From<f64> for Param {
    /// A whole number is written as one (`rate = 100`, not `100.0`).
    fn from(v: f64) -> Self {
        if v.fract() == 0.0 && v.abs() < 1e15 {
            Param::Int(v as i64)
        } else {
            Param::Float(v)
        }
    }
}

impl From<bool> for Param {
    fn from(v: bool) -> Self {
        Param::Bool(v)
    }
}

impl From<&str> for Param {
    fn from(v: &str) -> Self {
        Param::Str(v.to_string())
    }
}

impl From<String> for Param {
    fn from(v: String) -> Self {
        Param::Str(v)
    }
}

impl From<Vec<Param>> for Param {
    fn from(v: Vec<Param>) -> Self {
        Param::List(v)
    }
}

/// A key's value, set in code (no place in any file).
pub(crate) fn value(v: impl Into<Param>) -> P {
    Some(Spanned::new(0..0, v.into()))
}

/// A key's value as the text its parser reads (`"4k"`, `8`), if set.
pub(crate) fn text_of(p: &P) -> Option<String> {
    p.as_ref().map(|v| v.get_ref().text())
}

/// A whole-number key's value, if set as one.
pub(crate) fn count_of(p: &P) -> Option<u64> {
    match p.as_ref().map(|v| v.get_ref()) {
        Some(Param::Int(n)) => u64::try_from(*n).ok(),
        _ => None,
    }
}

impl SuiteFile {
    /// A suite with no runs yet, nothing left to volbench's defaults that a
    /// reader would need to know: the warm-up run is said, on or off.
    pub(crate) fn new(name: &str, source: &str, table: TableKind, warmup_run: bool) -> Self {
        Self {
            name: name.to_string(),
            description: String::new(),
            source: source.to_string(),
            table,
            warmup_run,
            threads_total: false,
            defaults: Defaults::default(),
            runs: Vec::new(),
            includes: Vec::new(),
            published: None,
            host_counts: None,
        }
    }
}

impl Defaults {
    /// No key set: the `[defaults]` table is left out.
    pub(crate) fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl RunEntry {
    /// A run with its name and no other key: each unset key is the
    /// suite's `[defaults]` or volbench's.
    pub(crate) fn named(name: &str) -> Self {
        Self {
            name: Spanned::new(0..0, name.to_string()),
            rw: None,
            read_pct: None,
            bs: None,
            write_bs: None,
            threads: None,
            iodepth: None,
            files: None,
            size: None,
            rate: None,
            rate_iops: None,
            rate_bw: None,
            latency_target: None,
            search_steps: None,
            search_precision: None,
            duration: None,
            warmup: None,
            io_limit: None,
            arrivals: None,
            steady: None,
            curve: None,
            curve_stop_latency: None,
            until_gain_below: None,
            ops: None,
            depth: None,
            width: None,
            files_per_dir: None,
            file_size: None,
            shared_dirs: None,
            drop_caches: None,
            keep_complete: None,
            direct: None,
            distribution: None,
            seek_pct: None,
            streams: None,
            random_map: None,
            fsync_every: None,
            fdatasync: None,
            end_fsync: None,
            think_time: None,
            cooldown: None,
            replay: None,
        }
    }

    /// The run's name.
    pub(crate) fn name(&self) -> &str {
        self.name.get_ref()
    }

    pub(crate) fn set_name(&mut self, name: &str) {
        self.name = Spanned::new(0..0, name.to_string());
    }

    /// The trace the run replays, from a table built in code.
    pub(crate) fn replay_of(r: ReplayEntry) -> Option<Spanned<ReplayEntry>> {
        Some(Spanned::new(0..0, r))
    }
}

/// One `[[run]]` entry as a document of its own.
#[derive(Serialize)]
struct OneRun<'a> {
    run: [&'a RunEntry; 1],
}

fn toml_text<T: Serialize>(v: &T) -> Result<String> {
    toml::to_string(v).map_err(|e| VbError::input(format!("the suite cannot be written: {e}")))
}

/// One comment line per entry of `lines`, each kept to one line.
fn comments(out: &mut String, lines: &[String]) {
    for l in lines {
        let _ = writeln!(out, "# {}", bounds::one_line(l));
    }
}

/// The suite as TOML: `head` as comments above everything, then the
/// suite's own keys and `[defaults]`, then each run with `above_run(i)`'s
/// comments over it. A run's `replay` table is written inline, on the line
/// of its own key.
pub(crate) fn write(
    suite: &SuiteFile,
    head: &[String],
    above_run: &dyn Fn(usize) -> Vec<String>,
) -> Result<String> {
    let mut out = String::new();
    comments(&mut out, head);
    let top = SuiteFile {
        runs: Vec::new(),
        ..suite.clone()
    };
    out.push_str(&toml_text(&top)?);
    for (i, run) in suite.runs.iter().enumerate() {
        out.push('\n');
        comments(&mut out, &above_run(i));
        let mut flat = run.get_ref().clone();
        let replay = flat.replay.take();
        out.push_str(&toml_text(&OneRun { run: [&flat] })?);
        if let Some(r) = replay {
            let mut inline = String::new();
            r.get_ref()
                .serialize(toml::ser::ValueSerializer::new(&mut inline))
                .map_err(|e| VbError::input(format!("the suite cannot be written: {e}")))?;
            let _ = writeln!(out, "replay = {inline}");
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// Every key of a run and of `[defaults]` set, so that a key the
    /// parser does not take (or takes as another type) fails here.
    fn every_key() -> SuiteFile {
        let mut s = SuiteFile::new("all", "built in code", TableKind::Patterns, false);
        s.threads_total = true;
        s.description = "every key".into();
        let d = &mut s.defaults;
        (d.size, d.files, d.threads, d.iodepth) =
            (value("1g"), value(4u64), value(2u64), value(8u64));
        (d.duration, d.warmup, d.engine, d.direct) =
            (value("10s"), value("1s"), value("psync"), value(true));
        (d.write_sync, d.interval, d.seed, d.arrivals) = (
            value("dsync"),
            value("500ms"),
            value(u64::MAX),
            value("poisson"),
        );
        (d.fill_bs, d.invalidate, d.compress, d.dedup) =
            (value("256k"), value(false), value(2.5), value(3u64));
        (d.dedup_unit, d.verify, d.fill_threads) = (value("4k"), value(false), value(1u64));
        let mut r = RunEntry::named("one");
        (r.rw, r.read_pct, r.bs, r.threads) = (
            value("randrw"),
            value(70u64),
            value("4k:30,8k:70"),
            value("1:4:*2"),
        );
        (r.iodepth, r.files, r.size, r.rate) =
            (value(4u64), value(2u64), value("2g"), value(100.0));
        (r.duration, r.warmup, r.io_limit, r.arrivals) =
            (value("30s"), value("5s"), value("1g"), value("uniform"));
        (r.distribution, r.seek_pct, r.random_map) = (value("zipf:1.2"), value(30u64), value(true));
        (r.fsync_every, r.fdatasync, r.end_fsync) = (value(8u64), value(true), value(true));
        (r.think_time, r.cooldown, r.direct, r.drop_caches) =
            (value("50us"), value("1s"), value(true), value(false));
        r.curve = value(vec![Param::from(10.0), Param::from(50.5)]);
        (r.steady, r.until_gain_below, r.curve_stop_latency) =
            (value(true), value(5.0), value("p99=20ms"));
        let mut lat = RunEntry::named("latency");
        (
            lat.latency_target,
            lat.search_steps,
            lat.search_precision,
            lat.rate_iops,
        ) = (value("p99=2ms"), value(10u64), value(2.5), value("700,100"));
        let mut tree = RunEntry::named("tree");
        (tree.ops, tree.depth, tree.width, tree.files_per_dir) = (
            value("stat:70,read:30"),
            value(2u64),
            value(3u64),
            value(10u64),
        );
        (tree.file_size, tree.shared_dirs) = (value("4k:50,64k:50"), value(true));
        let mut replay = RunEntry::named("replay");
        replay.replay = RunEntry::replay_of(ReplayEntry {
            file: "/t/fio.iolog".into(),
            speed: value("max"),
            wrap: Some(true),
            split: value("whole"),
            offset: value("1s"),
            scale: value(2u64),
            align: value("4k"),
            skip: value("write"),
        });
        for e in [r, lat, tree, replay] {
            s.runs.push(Spanned::new(0..0, e));
        }
        s
    }

    #[test]
    fn a_suite_written_out_parses_back_to_the_same_value() {
        let s = every_key();
        let above = |i: usize| vec![format!("run {i}"), "two\nlines".to_string()];
        let text = write(&s, &["a head".into()], &above).unwrap();
        let back =
            crate::input::suite::parse("s.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, s, "{text}");
        // The comments stand where they were put, each on one line.
        assert!(text.starts_with("# a head\nname = \"all\"\n"), "{text}");
        assert!(
            text.contains("\n# run 1\n# two\\nlines\n[[run]]\nname = \"latency\"\n"),
            "{text}"
        );
        assert!(
            text.contains("replay = { file = \"/t/fio.iolog\""),
            "{text}"
        );
        // Whole numbers as people write them; a seed past i64 as text.
        assert!(
            text.contains("rate = 100\n") && text.contains("seed = \"18446744073709551615\""),
            "{text}"
        );
    }

    #[test]
    fn empty_defaults_and_the_usual_values_are_left_out() {
        let mut s = SuiteFile::new("x", "", TableKind::Ops, true);
        s.runs.push(Spanned::new(0..0, RunEntry::named("r")));
        let text = write(&s, &[], &|_| Vec::new()).unwrap();
        assert_eq!(
            text,
            "name = \"x\"\ntable = \"ops\"\nwarmup_run = true\n\n[[run]]\nname = \"r\"\n"
        );
    }
}
