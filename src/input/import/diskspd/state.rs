//! What the diskspd switches read so far say, and how a switch's value is
//! read (counts, seconds, sizes with diskspd's `B` blocks); a leaf the
//! switch table and the target planning share.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::Said;
use super::super::{How, Mapping};
use crate::input::suite::RunEntry;
use crate::units::{bounds, format_size, parse_size};

/// One argument of the command line: its switch letter is the key, the
/// rest its value (`-b4k`: "b", "4k").
pub(crate) use super::super::table::Opt;

/// A value given with the argument that gave it, for a later judgement
/// (diskspd reads its switches in any order: `-r4k -b4k` is aligned).
#[derive(Clone)]
pub(crate) struct Given<T> {
    pub(crate) value: T,
    pub(crate) at: String,
    pub(crate) text: String,
}

impl<T> Given<T> {
    pub(crate) fn of(value: T, a: &Opt) -> Self {
        Self {
            value,
            at: a.at.clone(),
            text: a.text(),
        }
    }
}

/// The command line read so far; starts at diskspd's own defaults (cached
/// I/O, 64 KiB blocks, 2 outstanding I/Os, 10 s, 5 s warm-up).
pub(crate) struct State {
    /// How each switch was mapped.
    pub(crate) m: Vec<Mapping>,
    pub(crate) bs: u64,
    /// `-c`: the size of each file diskspd would create.
    pub(crate) create: Option<Given<u64>>,
    pub(crate) duration: f64,
    pub(crate) warmup: f64,
    pub(crate) random: bool,
    /// `-si`: the threads of a target share one sequential offset.
    pub(crate) interlocked: bool,
    pub(crate) write_pct: u64,
    pub(crate) per_target: Option<u64>,
    pub(crate) total_threads: Option<u64>,
    /// `-o`: outstanding I/Os per thread per target.
    pub(crate) outstanding: u64,
    /// `-O`: outstanding I/Os per thread over all its targets.
    pub(crate) per_thread: Option<Given<u64>>,
    pub(crate) direct: bool,
    pub(crate) write_sync: Option<&'static str>,
    /// `-g`: (value, in IOPS rather than bytes per ms).
    pub(crate) throttle: Option<Given<(f64, bool)>>,
    pub(crate) interval: Option<f64>,
    pub(crate) seed: Option<u64>,
    pub(crate) align: Option<Given<u64>>,
    /// `-B`: the base offset (and the length, `-B<base>:<length>`).
    pub(crate) base: Option<Given<(u64, Option<u64>)>>,
    /// `-f<size>`: the highest offset.
    pub(crate) max_offset: Option<Given<u64>>,
    /// The run's shape keys the switches set (cooldown, distribution, seek_pct).
    pub(crate) run: RunEntry,
    pub(crate) targets: Vec<(String, String)>,
}

impl Default for State {
    fn default() -> Self {
        Self {
            m: Vec::new(),
            bs: 64 * 1024,
            create: None,
            duration: 10.0,
            warmup: 5.0,
            random: false,
            interlocked: false,
            write_pct: 0,
            per_target: None,
            total_threads: None,
            outstanding: 2,
            per_thread: None,
            direct: false,
            write_sync: None,
            throttle: None,
            interval: None,
            seed: None,
            align: None,
            base: None,
            max_offset: None,
            run: RunEntry::named(""),
            targets: Vec::new(),
        }
    }
}

impl Said for State {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.m
    }
}

impl State {
    pub(crate) fn exact(&mut self, a: &Opt, how: impl Into<String>) {
        self.push(&a.at, &a.text(), How::Exact(how.into()));
    }

    pub(crate) fn note(&mut self, a: &Opt, how: impl Into<String>) {
        self.push(&a.at, &a.text(), How::Note(how.into()));
    }

    pub(crate) fn push(&mut self, at: &str, option: &str, how: How) {
        self.m.push(Mapping {
            at: at.into(),
            option: option.into(),
            how,
        });
    }
}

pub(crate) fn count(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    v.parse::<u64>()
        .ok()
        .filter(|n| (lo..=hi).contains(n))
        .ok_or_else(|| format!("'{v}' is not a whole number {lo}..{hi}"))
}

pub(crate) fn secs(v: &str) -> Result<f64, String> {
    count(v, 0, 30 * 86400).map(|s| s as f64)
}

/// diskspd sizes: a number with K, M, G, T (binary) or none for bytes.
pub(crate) fn size(v: &str) -> Result<u64, String> {
    sized(v, 0)
}

/// A size where diskspd also takes `B`, blocks of the `-b` size given so
/// far (diskspd reads its switches in order; 64 KiB before any `-b`).
pub(crate) fn sized(v: &str, bs: u64) -> Result<u64, String> {
    let blocks = v
        .strip_suffix(['b', 'B'])
        .filter(|n| !n.is_empty() && bs > 0)
        .and_then(|n| n.parse::<u64>().ok());
    if let Some(n) = blocks {
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
