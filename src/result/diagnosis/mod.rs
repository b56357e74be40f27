//! Diagnosis: short findings drawn from a result, each with its evidence
//! and how sure it is, the way the papers read their numbers ("a flat 500
//! IOPS at 4, 8 and 64 KiB is the disk's cap").
//!
//! A finder is a plain function over the result (`Finder`); `FINDERS` lists
//! them, and adding one (client CPU saturated, device busy, network at link
//! speed, NFS queueing, a slow host) is a new function, a new `Kind`, and
//! a line in that list. Finders read only the result, so a result written
//! long ago can be diagnosed again. None may fire on a healthy run: each
//! has a unit test against the report fixtures.

mod cache;
mod clients;
mod concurrency;
mod counted;
mod cpu;
pub(crate) mod group;
pub(crate) mod hosts;
mod limits;
mod memory;
mod protocol;
mod rates;
mod saturation;
pub(crate) mod scaling;
mod series;
mod smb;
mod targets;
mod time;
pub(crate) mod verdict;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{PhaseName, ResultDoc, RunResult};

/// What a finding is about. The JSON spelling is snake_case and stable; a
/// kind this version does not know (from a newer volbench) reads as `Other`
/// so old readers still load new files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Measured within a few percent of the limit given with --expect.
    AtExpectedLimit,
    /// Measured clearly above the limit given with --expect.
    AboveExpectedLimit,
    /// No run came near the limit given with --expect.
    BelowExpectedLimit,
    /// IOPS flat across runs that differ only in block size.
    InferredIopsCap,
    /// MiB/s flat across runs that differ only in block size.
    InferredBandwidthCap,
    /// IOPS x latency well below the I/Os kept in flight.
    LittlesLawGap,
    /// The first of two identical runs clearly slower than its repeat.
    WarmUp,
    /// The client's CPUs saturated, or its I/O threads each on a full core.
    ClientCpu,
    /// The device under the target busy all the time, holding the I/Os.
    DeviceBusy,
    /// An interface near its link speed, an expected cap, or flat across block sizes.
    NetworkLimit,
    /// NFS execution time well above the round trip: queueing on the client.
    NfsQueueing,
    /// A run at a ceiling whose latency is almost all its protocol calls'
    /// round trip: the server (or the network to it) sets the level.
    ServerTime,
    /// One connection of a protocol client idle while another of the same
    /// thread carried its calls (for SMB: one channel of the sessions while
    /// the others carried theirs).
    IdleConnection,
    /// A notable share of an SMB channel's requests waited for the server
    /// to grant credits.
    CreditStarvation,
    /// One I/O in flight, and the concurrency a target needs at its latency.
    SingleThreadLatency,
    /// One host of a multi-host run well below the others.
    SlowHost,
    /// One target well below the other targets of its host.
    SlowTarget,
    /// The aggregate flat while the hosts at least doubled: a shared limit.
    FlatWithHosts,
    /// The target is the host's memory (tmpfs, ramfs, zram), not storage.
    MemoryTarget,
    /// A run held to a rate did not keep it; says what held it (`verdict`).
    RateNotReached,
    /// A host's or target's reads came from a cache, not the storage.
    CachedReads,
    #[serde(other)]
    Other,
}

impl Kind {
    pub(crate) fn title(self) -> &'static str {
        match self {
            Kind::AtExpectedLimit => "at the provisioned limit",
            Kind::AboveExpectedLimit => "above the expected limit",
            Kind::BelowExpectedLimit => "below the expected limit",
            Kind::InferredIopsCap => "IOPS cap",
            Kind::InferredBandwidthCap => "bandwidth cap",
            Kind::LittlesLawGap => "Little's-law gap",
            Kind::WarmUp => "warm-up effect",
            Kind::ClientCpu => "client CPU",
            Kind::DeviceBusy => "device busy",
            Kind::NetworkLimit => "network limit",
            Kind::NfsQueueing => "NFS queueing",
            Kind::ServerTime => "server time",
            Kind::IdleConnection => "idle connection",
            Kind::CreditStarvation => "SMB credit starvation",
            Kind::SingleThreadLatency => "concurrency needed",
            Kind::SlowHost => "slow host",
            Kind::SlowTarget => "slow target",
            Kind::FlatWithHosts => "flat as hosts are added",
            Kind::MemoryTarget => "memory, not storage",
            Kind::RateNotReached => "rate not reached",
            Kind::CachedReads => "served from a cache",
            Kind::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: Kind,
    /// One or two sentences a person reads: what, the evidence, what to do.
    pub message: String,
    /// The numbers behind it, by name ("limit_iops", "percent", ...).
    #[serde(default)]
    pub figures: BTreeMap<String, f64>,
    pub confidence: Confidence,
    /// The runs it is about (names as in `runs[]`); empty for the whole result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// A finding that holds for many hosts or targets alike, said once
    /// (`group`): every one of them (a host's name, or `HOST:PATH` for a
    /// target), in the order they were judged; the message says how many
    /// of how many. Empty for a finding about one or about the whole result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<String>,
}

impl Finding {
    pub(crate) fn new(kind: Kind, confidence: Confidence, message: String) -> Self {
        Self {
            kind,
            message,
            figures: BTreeMap::new(),
            confidence,
            runs: Vec::new(),
            subjects: Vec::new(),
        }
    }

    pub(crate) fn figure(mut self, name: &str, v: f64) -> Self {
        // Past 1.8e305 the rounding itself overflows to infinity, which JSON
        // writes as null and no reader takes back; such a figure has no
        // thousandths to round anyway.
        let rounded = (v * 1000.0).round() / 1000.0;
        if v.is_finite() {
            let kept = if rounded.is_finite() { rounded } else { v };
            self.figures.insert(name.into(), kept);
        }
        self
    }

    pub(crate) fn runs<'a>(mut self, runs: impl IntoIterator<Item = &'a RunResult>) -> Self {
        self.runs = runs.into_iter().map(|r| r.name.clone()).collect();
        self
    }
}

/// A finder: the findings of one kind of reading, over the whole result.
pub(crate) type Finder = fn(&ResultDoc) -> Vec<Finding>;

/// Every finder, in the order their findings are shown.
pub(crate) const FINDERS: &[Finder] = &[
    memory::memory_target,
    limits::expected,
    limits::inferred_iops_cap,
    limits::inferred_bandwidth_cap,
    time::littles_law_gap,
    rates::rate_not_reached,
    time::warm_up,
    cpu::client_cpu,
    clients::device_busy,
    clients::network,
    clients::nfs_queueing,
    protocol::client_queueing,
    protocol::server_time,
    protocol::idle_connection,
    smb::idle_channel,
    smb::credit_starvation,
    concurrency::single_thread_concurrency,
    cache::cached_reads,
    hosts::slow_host,
    hosts::behind_part,
    targets::slow_target,
    scaling::flat_with_hosts,
];

/// All findings about a result, surest first (stable within a confidence).
pub fn diagnose(doc: &ResultDoc) -> Vec<Finding> {
    let mut all: Vec<Finding> = FINDERS.iter().flat_map(|f| f(doc)).collect();
    all.sort_by_key(|f| f.confidence);
    all
}

/// Runs whose figures a finder may read: measured, finished, with I/O done.
/// Discarded warm-up runs are left out (the warm-up finder asks for them).
pub fn measured(doc: &ResultDoc) -> impl Iterator<Item = &RunResult> {
    doc.runs.iter().filter(|r| !r.workload.discard && usable(r))
}

pub(crate) fn usable(r: &RunResult) -> bool {
    !r.interrupted && measured_secs(r) > 0.0 && r.totals.read.ops + r.totals.write.ops > 0
}

/// Seconds the run was measured for (its warm-up left out).
pub(crate) fn measured_secs(r: &RunResult) -> f64 {
    r.phases
        .iter()
        .filter(|p| p.name == PhaseName::Measure)
        .map(|p| p.duration_s)
        .sum()
}

/// A run held to a rate (--rate in IOPS or in MiB/s, or a share of the
/// maximum as latency-curve does) stays below capacity on purpose: its
/// IOPS and MiB/s are the rate asked for, not where the storage stops, and
/// its I/Os wait for their turn outside the storage. A bandwidth rate is
/// recorded in the shape, not in `rate`, so each place is asked.
pub(crate) fn paced(r: &RunResult) -> bool {
    r.rate.is_some()
        || r.workload.rate_iops.is_some()
        || r.workload.rate_pct.is_some()
        || r.workload.shape.rate_bytes.is_some()
}

/// A run as each host that ran it did it: every finished host's run of the
/// same name in a multi-host result, else the run itself on this host.
pub(crate) fn merge_hosts<'a>(
    doc: &'a ResultDoc,
    r: &'a RunResult,
) -> Vec<(String, &'a RunResult)> {
    use crate::result::merge::HostStatus;
    let hosts: Vec<(String, &RunResult)> = doc
        .cluster
        .iter()
        .flat_map(|c| &c.hosts)
        .filter(|h| h.status == HostStatus::Ok)
        .filter_map(|h| {
            let own = h.runs.iter().find(|o| o.name == r.name)?;
            Some((h.name.clone(), own))
        })
        .collect();
    if !hosts.is_empty() {
        return hosts;
    }
    let name = r
        .counters
        .as_ref()
        .map(|c| c.host.clone())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| doc.host.hostname.clone());
    vec![(name, r)]
}

/// The workload with the given parts blanked, as a comparable key: two runs
/// with the same key differ only in those parts.
pub(crate) fn shape_key(r: &RunResult, blank_bs: bool) -> String {
    let mut w = r.workload.clone();
    w.name.clear();
    w.discard = false;
    if blank_bs {
        w.bs.clear();
    }
    serde_json::to_string(&w).unwrap_or_default()
}

/// 1234.5 -> "1,235"; below 100 with one decimal.
pub(crate) fn num(v: f64) -> String {
    if v.abs() < 100.0 {
        return crate::units::trim((v * 10.0).round() / 10.0, 2);
    }
    crate::units::thousands(v)
}

/// 4096 -> "4 KiB".
pub(crate) fn bs_text(bytes: u64) -> String {
    crate::units::format_size(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod figure_tests {
    use super::*;

    #[test]
    fn every_figure_kept_is_finite_so_result_json_reads_back() {
        let f = Finding::new(Kind::LittlesLawGap, Confidence::Low, String::new())
            .figure("huge", 1.36e305)
            .figure("inf", f64::INFINITY)
            .figure("nan", f64::NAN)
            .figure("plain", 1.23456);
        assert_eq!(f.figures["huge"], 1.36e305);
        assert_eq!(f.figures["plain"], 1.235);
        assert!(!f.figures.contains_key("inf") && !f.figures.contains_key("nan"));
        let back: Finding = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }
}
