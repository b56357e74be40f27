//! A device's request sizes by direction, as a weighted mix a run can draw
//! from. The block layer gives one mean size per direction per interval,
//! not each request's size, so the mix is of interval means: intervals
//! whose means lie close together make one size (their bytes over their
//! requests, so the bytes moved are production's), each weighted by its
//! requests. Production that did 8 KiB reads all day gives one size; one
//! that did 4 KiB by day and 1 MiB backups by night gives both, in the
//! proportion it did them.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::Profile;

/// Interval means at most this much above a group's smallest join it:
/// diskstats means of one workload wander a few percent from interval to
/// interval, while distinct workloads differ by powers of two.
pub(crate) const SIZE_GROUP_RATIO: f64 = 1.25;

/// At most this many sizes per direction: more says little that fewer do
/// not, and the run's label names each.
pub(crate) const MAX_MIX_SIZES: usize = 8;

/// Weights are shares of the requests in parts per thousand (at least 1).
const WEIGHT_SCALE: f64 = 1000.0;

/// One size of the mix: bytes (whole 512-byte sectors, as diskstats
/// counts) and its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MixSize {
    pub(crate) bytes: u64,
    pub(crate) weight: u32,
}

/// A group of intervals: their requests and KiB moved.
#[derive(Debug, Clone, Copy)]
struct Group {
    first_kib: f64,
    requests: f64,
    kib: f64,
}

impl Group {
    fn mean_kib(&self) -> f64 {
        self.kib / self.requests
    }
}

/// A mean in KiB as whole sectors, at least one.
pub(crate) fn sectors(kib: f64) -> u64 {
    ((kib * 2.0).round().max(1.0) as u64) * 512
}

impl Profile {
    /// The request sizes `device` saw in one direction over the capture,
    /// smallest first; empty when it made no requests that way.
    pub(crate) fn size_mix(&self, device: &str, writes: bool) -> Vec<MixSize> {
        let mut seen: Vec<(f64, f64)> = self
            .intervals
            .iter()
            .filter_map(|i| {
                let d = i.devices.iter().find(|d| d.name == device)?;
                let (iops, kib) = if writes {
                    (d.write_iops, d.write_kib)
                } else {
                    (d.read_iops, d.read_kib)
                };
                let requests = iops * i.duration_s;
                (requests > 0.0 && kib > 0.0 && kib.is_finite() && requests.is_finite())
                    .then_some((kib, requests))
            })
            .collect();
        seen.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut groups: Vec<Group> = Vec::new();
        for (kib, requests) in seen {
            match groups.last_mut() {
                Some(g) if kib <= g.first_kib * SIZE_GROUP_RATIO => {
                    g.requests += requests;
                    g.kib += kib * requests;
                }
                _ => groups.push(Group {
                    first_kib: kib,
                    requests,
                    kib: kib * requests,
                }),
            }
        }
        // Too many: the lightest group joins its nearer neighbour, until
        // few enough are left.
        while groups.len() > MAX_MIX_SIZES {
            let Some((i, _)) = groups
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.requests.total_cmp(&b.1.requests))
            else {
                break;
            };
            let mine = groups.get(i).map_or(0.0, Group::mean_kib);
            let near = |j: Option<usize>| {
                j.and_then(|j| groups.get(j))
                    .map_or(f64::INFINITY, |g| (g.mean_kib() - mine).abs())
            };
            let into = if near(i.checked_sub(1)) <= near(Some(i + 1)) {
                i.saturating_sub(1)
            } else {
                i + 1
            };
            let g = groups.remove(i);
            let at = if into > i { into - 1 } else { into };
            if let Some(t) = groups.get_mut(at) {
                t.requests += g.requests;
                t.kib += g.kib;
                t.first_kib = t.first_kib.min(g.first_kib);
            }
        }
        let total: f64 = groups.iter().map(|g| g.requests).sum();
        let mut mix: Vec<MixSize> = Vec::new();
        for g in &groups {
            let bytes = sectors(g.mean_kib());
            let weight = (g.requests / total * WEIGHT_SCALE).round().max(1.0) as u32;
            match mix.last_mut() {
                // Two groups that round to one size are one size.
                Some(m) if m.bytes == bytes => m.weight += weight,
                _ => mix.push(MixSize { bytes, weight }),
            }
        }
        mix
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::super::{DeviceSample, ProfileInterval};
    use super::*;

    fn profile(samples: &[(f64, f64, f64, f64)]) -> Profile {
        Profile {
            intervals: samples
                .iter()
                .map(
                    |&(read_iops, read_kib, write_iops, write_kib)| ProfileInterval {
                        duration_s: 1.0,
                        devices: vec![DeviceSample {
                            name: "vdb".into(),
                            read_iops,
                            read_kib,
                            write_iops,
                            write_kib,
                            ..Default::default()
                        }],
                        ..Default::default()
                    },
                )
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn one_workload_is_one_size_per_direction() {
        let p = profile(&[
            (700.0, 8.0, 300.0, 128.0),
            (650.0, 8.2, 310.0, 124.0),
            (0.0, 0.0, 0.0, 0.0),
            (720.0, 7.9, 290.0, 130.0),
        ]);
        assert_eq!(
            p.size_mix("vdb", false),
            [MixSize {
                bytes: 8192,
                weight: 1000
            }]
        );
        let w = p.size_mix("vdb", true);
        assert_eq!(w.len(), 1);
        // The bytes over the requests: (300x128 + 310x124 + 290x130) / 900.
        assert_eq!(w[0].bytes, sectors(114_540.0 / 900.0));
        assert!(p.size_mix("vdc", false).is_empty());
    }

    #[test]
    fn distinct_workloads_keep_their_sizes_in_proportion() {
        // 4 KiB by day at 3,000 IOPS, 1 MiB backups by night at 100.
        let p = profile(&[
            (3000.0, 4.0, 0.0, 0.0),
            (3000.0, 4.0, 0.0, 0.0),
            (100.0, 1024.0, 0.0, 0.0),
        ]);
        let m = p.size_mix("vdb", false);
        assert_eq!(
            m,
            [
                MixSize {
                    bytes: 4096,
                    weight: 984
                },
                MixSize {
                    bytes: 1 << 20,
                    weight: 16
                }
            ]
        );
        assert!(p.size_mix("vdb", true).is_empty());
    }

    #[test]
    fn many_sizes_fold_into_their_neighbours_keeping_the_bytes() {
        // Twenty sizes a power of 1.3 apart: each its own group at first.
        let samples: Vec<_> = (0..20)
            .map(|k| (100.0 + k as f64, 4.0 * 1.3f64.powi(k), 0.0, 0.0))
            .collect();
        let p = profile(&samples);
        let m = p.size_mix("vdb", false);
        assert_eq!(m.len(), MAX_MIX_SIZES);
        let requests: f64 = samples.iter().map(|s| s.0).sum();
        let kib: f64 = samples.iter().map(|s| s.0 * s.1).sum();
        let total_w: u32 = m.iter().map(|s| s.weight).sum();
        let mean = m
            .iter()
            .map(|s| s.bytes as f64 * s.weight as f64)
            .sum::<f64>()
            / total_w as f64;
        // The mix moves production's bytes per request, within the
        // rounding of sizes to sectors and weights to thousandths.
        let want = kib / requests * 1024.0;
        assert!((mean - want).abs() / want < 0.01, "{mean} vs {want}");
        assert!(m.windows(2).all(|w| w[0].bytes < w[1].bytes), "{m:?}");
    }
}
