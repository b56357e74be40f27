//! How a run's I/O is shaped beyond pattern, size and depth: where random
//! offsets land (skew), how often a random stream seeks, syncs between
//! writes, think time, cool-down and a bandwidth cap. These are what fio,
//! vdbench and diskspd job files ask for (random_distribution, seekpct,
//! fsync=N, thinktime, -C, rate=); all default to "none", and a run that
//! uses none of them takes the engine's plain path.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};

use crate::error::{Result, VbError};
pub(crate) use crate::spec::streams::Streams;
use crate::units::bounds;
use crate::units::{format_size, parse_size};

/// Where random offsets land over the working set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Distribution {
    /// Every aligned block equally likely.
    #[default]
    Uniform,
    /// Block k (1-based, hottest first) drawn with weight 1/k^theta.
    Zipf { theta: f64 },
    /// fio's pareto:H: a share H of the I/O goes to the hottest 1-H of the space.
    Pareto { h: f64 },
    /// Zones from the start of the space: `io_pct` of the I/O to the next
    /// `space_pct` of the space; what is left goes evenly to the rest.
    Hot { zones: Vec<HotZone> },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HotZone {
    pub(crate) io_pct: f64,
    pub(crate) space_pct: f64,
}

impl Distribution {
    /// `uniform`, `zipf:1.2`, `pareto:0.8`, `hot:80/20` or `hot:60/10,30/20`.
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim().to_ascii_lowercase();
        let (kind, arg) = t.split_once(':').unwrap_or((t.as_str(), ""));
        let num = |what: &str, s: &str| -> Result<f64> {
            s.trim().parse::<f64>().map_err(|_| {
                VbError::input(format!(
                    "--distribution {text}: {what} '{s}' is not a number"
                ))
            })
        };
        let d = match (kind, arg.is_empty()) {
            ("uniform", true) => Self::Uniform,
            ("zipf", false) => Self::Zipf {
                theta: num("theta", arg)?,
            },
            ("pareto", false) => Self::Pareto { h: num("h", arg)? },
            ("hot", false) => {
                let mut zones = Vec::new();
                for z in arg.split(',') {
                    let Some((io, space)) = z.split_once('/') else {
                        return Err(VbError::input(format!(
                            "--distribution {text}: zone '{z}' is not IO%/SPACE% (80/20: 80% of the I/O to 20% of the space)"
                        )));
                    };
                    zones.push(HotZone {
                        io_pct: num("I/O share", io.trim_end_matches('%'))?,
                        space_pct: num("space share", space.trim_end_matches('%'))?,
                    });
                }
                Self::Hot { zones }
            }
            _ => {
                return Err(VbError::input(format!(
                    "--distribution '{text}' is not uniform, zipf:THETA, pareto:H or hot:IO%/SPACE%[,...]"
                )));
            }
        };
        d.validate()?;
        Ok(d)
    }

    pub fn validate(&self) -> Result<()> {
        match self {
            Self::Uniform => {}
            Self::Zipf { theta } => {
                bounds::number(
                    "--distribution zipf theta",
                    *theta,
                    bounds::MIN_ZIPF_THETA,
                    bounds::MAX_ZIPF_THETA,
                )?;
            }
            Self::Pareto { h } => {
                bounds::number(
                    "--distribution pareto h",
                    *h,
                    bounds::MIN_PARETO_H,
                    bounds::MAX_PARETO_H,
                )?;
            }
            Self::Hot { zones } => {
                if zones.is_empty() || zones.len() > bounds::MAX_HOT_ZONES {
                    return Err(VbError::input(format!(
                        "--distribution hot: {} zones; 1..{}",
                        zones.len(),
                        bounds::MAX_HOT_ZONES
                    )));
                }
                let (mut io, mut space) = (0.0, 0.0);
                for z in zones {
                    bounds::number("--distribution hot I/O %", z.io_pct, 0.0, 100.0)?;
                    bounds::number("--distribution hot space %", z.space_pct, 0.01, 100.0)?;
                    io += z.io_pct;
                    space += z.space_pct;
                }
                // The rest of the I/O needs the rest of the space to go to.
                if io > 100.0 + 1e-9 || space > 100.0 + 1e-9 {
                    return Err(VbError::input(format!(
                        "--distribution hot: zones add up to {}% of the I/O and {}% of the space; at most 100 each",
                        bounds::short(io),
                        bounds::short(space)
                    )));
                }
                if space >= 100.0 - 1e-9 && (io - 100.0).abs() > 1e-9 {
                    return Err(VbError::input(format!(
                        "--distribution hot: zones cover the whole space but only {}% of the I/O",
                        bounds::short(io)
                    )));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn is_uniform(&self) -> bool {
        *self == Self::Uniform
    }

    pub(crate) fn label(&self) -> String {
        match self {
            Self::Uniform => "uniform".into(),
            Self::Zipf { theta } => format!("zipf:{theta}"),
            Self::Pareto { h } => format!("pareto:{h}"),
            Self::Hot { zones } => format!(
                "hot:{}",
                zones
                    .iter()
                    .map(|z| format!("{}/{}", z.io_pct, z.space_pct))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }
}

/// The sync call `fsync_every` makes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SyncCall {
    #[default]
    Fsync,
    Fdatasync,
}

/// Everything in this module, per run; `Shape::default()` is plain I/O.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Shape {
    #[serde(skip_serializing_if = "Distribution::is_uniform")]
    pub(crate) distribution: Distribution,
    /// Random patterns: the share of I/Os that seek to a random offset; the
    /// others continue sequentially from the last one (vdbench seekpct).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) seek_pct: Option<u8>,
    /// Random patterns: each thread visits every block once per pass, in a
    /// shuffled order, as fio's random map (its default); a buffered run
    /// drops the set's cached pages when a pass ends, as fio does, so a
    /// pass never re-reads what it cached. Off: independent offsets.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) random_map: bool,
    /// Sequential patterns: each thread a share of the set, or each its
    /// own pass over it as fio's jobs on a shared file (`spec::streams`).
    #[serde(skip_serializing_if = "Streams::is_split")]
    pub(crate) streams: Streams,
    /// Each thread syncs the file after every N writes it completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fsync_every: Option<u32>,
    #[serde(skip_serializing_if = "is_fsync")]
    pub(crate) sync_call: SyncCall,
    /// Sync every file a thread wrote once its run ends (fio end_fsync).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) end_fsync: bool,
    /// Pause after each completion before a thread issues again, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think_time_s: Option<f64>,
    /// Keep the I/O going this long after measuring, not counted (diskspd -C).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cooldown_s: Option<f64>,
    /// Bandwidth cap across all threads, bytes per second (fio rate=).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_bytes: Option<f64>,
}

fn is_fsync(c: &SyncCall) -> bool {
    *c == SyncCall::Fsync
}

impl Shape {
    pub(crate) fn is_plain(&self) -> bool {
        *self == Self::default()
    }

    /// Checks every value against its bound; `random` says whether the
    /// run's pattern is a random one (skew and seek_pct need one).
    pub(crate) fn validate(&self, random: bool, has_writes: bool, rate_iops: bool) -> Result<()> {
        self.distribution.validate()?;
        if !self.distribution.is_uniform() && !random {
            return Err(VbError::input(format!(
                "--distribution {} shapes random offsets; use a random pattern (randread, randwrite, randrw)",
                self.distribution.label()
            )));
        }
        if let Some(p) = self.seek_pct {
            bounds::count("--seek-pct", p.into(), 0, 100)?;
            if !random {
                return Err(VbError::input(format!(
                    "--seek-pct {p} mixes random seeks into a random pattern; use randread, randwrite or randrw \
                     (a sequential pattern is --seek-pct 0)"
                )));
            }
        }
        self.streams.validate()?;
        if random && self.streams.confines() {
            return Err(VbError::input(format!(
                "--streams {} starts each thread's sequential stream at its own offset; \
                 random offsets roam the whole set (use a sequential pattern, or --streams each)",
                self.streams.label()
            )));
        }
        if self.random_map {
            // The shuffled pass covers the blocks evenly; a skew or
            // sequential stretches would each contradict "once per pass".
            if !random || !self.distribution.is_uniform() || self.seek_pct.is_some() {
                return Err(VbError::input(
                    "--random-map visits every block once per pass in a random order; it needs a \
                     random pattern with uniform offsets (no --distribution, no --seek-pct)",
                ));
            }
        }
        if let Some(n) = self.fsync_every {
            bounds::count("--fsync-every", n.into(), 1, bounds::MAX_FSYNC_EVERY)?;
            if !has_writes {
                return Err(VbError::input(format!(
                    "--fsync-every {n} needs writes; this run only reads"
                )));
            }
        }
        if self.sync_call == SyncCall::Fdatasync && self.fsync_every.is_none() && !self.end_fsync {
            return Err(VbError::input(
                "--fdatasync says which sync --fsync-every and --end-fsync make; give one of them",
            ));
        }
        if let Some(t) = self.think_time_s {
            bounds::seconds(
                "--think-time",
                t,
                std::time::Duration::ZERO,
                bounds::MAX_THINK_TIME,
            )?;
        }
        if let Some(c) = self.cooldown_s {
            bounds::seconds(
                "--cooldown",
                c,
                std::time::Duration::ZERO,
                bounds::MAX_COOLDOWN,
            )?;
        }
        if let Some(r) = self.rate_bytes {
            bounds::number(
                "--rate (bytes/s)",
                r,
                bounds::MIN_RATE_BYTES,
                bounds::MAX_RATE_BYTES,
            )?;
            if rate_iops {
                return Err(VbError::input(
                    "--rate takes IOPS or a bandwidth, not both".to_string(),
                ));
            }
        }
        Ok(())
    }

    /// What `--dry-run` says about the shape: `  [zipf:1.2] [fsync every 4 writes]`.
    pub(crate) fn plan_label(&self) -> String {
        let mut s = String::new();
        if !self.distribution.is_uniform() {
            s.push_str(&format!("  [offsets {}]", self.distribution.label()));
        }
        if let Some(p) = self.seek_pct {
            s.push_str(&format!("  [seek {p}%, else sequential]"));
        }
        if !self.streams.is_split() {
            s.push_str(&format!(
                "  [streams {}: each thread its own pass]",
                self.streams.label()
            ));
        }
        if self.random_map {
            s.push_str("  [each block once per pass]");
        }
        if let Some(n) = self.fsync_every {
            let call = match self.sync_call {
                SyncCall::Fsync => "fsync",
                SyncCall::Fdatasync => "fdatasync",
            };
            s.push_str(&format!("  [{call} every {n} writes]"));
        }
        if self.end_fsync {
            s.push_str("  [fsync at the end]");
        }
        if let Some(t) = self.think_time_s {
            s.push_str(&format!(
                "  [think {}]",
                crate::units::format_duration(std::time::Duration::from_secs_f64(t))
            ));
        }
        if let Some(c) = self.cooldown_s {
            s.push_str(&format!(
                "  [cool-down {}]",
                crate::units::format_duration(std::time::Duration::from_secs_f64(c))
            ));
        }
        if let Some(r) = self.rate_bytes {
            s.push_str(&format!("  [rate {}/s]", format_size(r as u64)));
        }
        s
    }

    /// Short words for a run name (`-zipf1.2-seek30`), empty when plain.
    pub(crate) fn name_suffix(&self) -> String {
        let mut s = String::new();
        if !self.distribution.is_uniform() {
            s.push('-');
            s.push_str(&self.distribution.label().replace([':', '/'], ""));
        }
        if let Some(p) = self.seek_pct {
            s.push_str(&format!("-seek{p}"));
        }
        if let Some(n) = self.fsync_every {
            s.push_str(&format!("-fsync{n}"));
        }
        if let Some(r) = self.rate_bytes {
            s.push_str(&format!("-{}ps", format_size(r as u64).replace(' ', "")));
        }
        s
    }
}

/// The size part of a bandwidth: `100MiB/s`, `100MiBps`, or a size with
/// its byte unit and no "/s" (`50MiB`, `2GB`: a rate in bytes can only be
/// bytes a second, as diskspd's -g and vdbench's MB/s iorate write it).
/// None for a plain figure (IOPS: `5000`, `5k`), which never ends in B.
pub(crate) fn bandwidth_size(text: &str) -> Option<&str> {
    let t = text.trim();
    t.strip_suffix("/s")
        .or_else(|| t.strip_suffix("/S"))
        .or_else(|| t.strip_suffix("ps"))
        .or_else(|| {
            let bytes = t.ends_with(['B', 'b']) && t.starts_with(|c: char| c.is_ascii_digit());
            bytes.then_some(t)
        })
}

/// A bandwidth such as `100MiB/s`, `1g/s`, `500KB/s` or `50MiB` (binary
/// units, as everywhere), or None when `text` is not one (a plain IOPS
/// figure).
pub(crate) fn parse_bandwidth(flag: &str, text: &str) -> Result<Option<f64>> {
    let Some(size) = bandwidth_size(text) else {
        return Ok(None);
    };
    let bytes =
        parse_size(size).map_err(|e| VbError::input(format!("{flag} '{text}': {}", e.message)))?;
    let v = bounds::number(
        flag,
        bytes as f64,
        bounds::MIN_RATE_BYTES,
        bounds::MAX_RATE_BYTES,
    )
    .map_err(|_| {
        VbError::input(format!(
            "{flag} {text} is outside {}/s..{}/s",
            format_size(bounds::MIN_RATE_BYTES as u64),
            format_size(bounds::MAX_RATE_BYTES as u64)
        ))
    })?;
    Ok(Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_parse_and_refuse_with_the_bound() {
        assert_eq!(
            Distribution::parse("zipf:1.2").ok(),
            Some(Distribution::Zipf { theta: 1.2 })
        );
        assert_eq!(
            Distribution::parse("hot:80/20").ok(),
            Some(Distribution::Hot {
                zones: vec![HotZone {
                    io_pct: 80.0,
                    space_pct: 20.0
                }]
            })
        );
        let err = |t: &str| Distribution::parse(t).err().map(|e| e.message);
        assert!(
            err("zipf:0").is_some_and(|m| m.contains("outside")),
            "{:?}",
            err("zipf:0")
        );
        assert!(err("pareto:1").is_some_and(|m| m.contains("outside")));
        assert!(err("hot:90/20,20/30").is_some_and(|m| m.contains("110")));
        assert!(err("hot:80").is_some_and(|m| m.contains("IO%/SPACE%")));
        assert!(err("normal:5").is_some_and(|m| m.contains("not uniform")));
    }

    #[test]
    fn bandwidths_are_recognised_and_iops_are_left_alone() {
        assert_eq!(
            parse_bandwidth("--rate", "100MiB/s").ok().flatten(),
            Some(100.0 * 1048576.0)
        );
        assert_eq!(parse_bandwidth("--rate", "5000").ok().flatten(), None);
        // A size in bytes without "/s" is bytes a second: 50MiB is 50MiB/s.
        for t in ["50MiB", "50MiB/s", "50MiBps", " 50mib "] {
            assert_eq!(
                parse_bandwidth("--rate", t).ok().flatten(),
                Some(50.0 * 1048576.0),
                "{t}"
            );
        }
        // Plain figures stay IOPS, with or without a multiplier.
        assert_eq!(parse_bandwidth("--rate", "5k").ok().flatten(), None);
        assert!(parse_bandwidth("--rate", "0MiB").is_err());
        assert!(parse_bandwidth("--rate", "0KiB/s").is_err());
    }

    #[test]
    fn seek_pct_and_skew_need_a_random_pattern() {
        let s = Shape {
            seek_pct: Some(30),
            ..Shape::default()
        };
        assert!(s.validate(true, false, false).is_ok());
        assert!(s.validate(false, false, false).is_err());
        let f = Shape {
            fsync_every: Some(4),
            ..Shape::default()
        };
        assert!(f.validate(true, false, false).is_err());
        assert!(f.validate(true, true, false).is_ok());
    }
}
