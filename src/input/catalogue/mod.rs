//! The catalogue of service levels and published limits: Azure NetApp
//! Files and Google Cloud NetApp Volumes levels, Azure Files premium,
//! Azure managed disks and storage accounts, Amazon EBS, VM network limits.
//! It is data (`services/*.toml`, built in), each entry citing its source;
//! users add or replace entries with `--catalogue FILE` or
//! `$XDG_CONFIG_HOME/volbench/services.toml` (~/.config/volbench/services.toml).
//!
//! One model covers them all. A limit (IOPS or MiB/s) is a fixed figure
//! (a disk tier), or `base + per_gib x quota` clamped to `min..max` (a
//! volume whose throughput is service level x quota), and may be raised by
//! provisioning up to `provisioned_max`, at most `per_gib_max` x quota
//! (gp3, io2, Flex custom performance). Quotas have bounds and an increment.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub mod size;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Result, VbError};

/// The built-in catalogue files, in the order `service list` shows them.
pub(crate) const BUILTIN: &[(&str, &str)] = &[
    (
        "azure-netapp-files.toml",
        include_str!("../../../services/azure-netapp-files.toml"),
    ),
    (
        "google-netapp-volumes.toml",
        include_str!("../../../services/google-netapp-volumes.toml"),
    ),
    (
        "azure-files.toml",
        include_str!("../../../services/azure-files.toml"),
    ),
    (
        "azure-disks.toml",
        include_str!("../../../services/azure-disks.toml"),
    ),
    (
        "aws-ebs.toml",
        include_str!("../../../services/aws-ebs.toml"),
    ),
    (
        "vm-network.toml",
        include_str!("../../../services/vm-network.toml"),
    ),
];

pub(crate) const GIB: f64 = (1u64 << 30) as f64;
pub(crate) const TIB: f64 = (1u64 << 40) as f64;
const MIB: f64 = (1u64 << 20) as f64;
/// At most this many entries in a catalogue file (a typo'd generator must
/// not make `service list` scroll forever).
const MAX_ENTRIES: usize = 10_000;
/// Bound on every figure in a catalogue entry.
const MAX_FIGURE: f64 = 1e12;

/// One entry as its TOML spells it. Unknown keys are refused by name.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    title: String,
    kind: String,
    #[serde(default)]
    family: Option<String>,
    source: String,
    url: String,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    formula: Option<String>,
    #[serde(default)]
    size: Option<String>,
    #[serde(default)]
    quota_min: Option<String>,
    #[serde(default)]
    quota_max: Option<String>,
    #[serde(default)]
    quota_step: Option<String>,
    #[serde(default)]
    iops: Option<f64>,
    #[serde(default)]
    iops_base: Option<f64>,
    #[serde(default)]
    iops_per_gib: Option<f64>,
    #[serde(default)]
    iops_min: Option<f64>,
    #[serde(default)]
    iops_max: Option<f64>,
    #[serde(default)]
    iops_provisioned_max: Option<f64>,
    #[serde(default)]
    iops_per_gib_max: Option<f64>,
    #[serde(default)]
    mib_s: Option<f64>,
    #[serde(default)]
    mbit_s: Option<f64>,
    #[serde(default)]
    mib_s_base: Option<f64>,
    #[serde(default)]
    mib_s_per_gib: Option<f64>,
    #[serde(default)]
    mib_s_per_tib: Option<f64>,
    #[serde(default)]
    mib_s_min: Option<f64>,
    #[serde(default)]
    mib_s_max: Option<f64>,
    #[serde(default)]
    mib_s_provisioned_max: Option<f64>,
    #[serde(default)]
    mib_s_per_iops_max: Option<f64>,
    #[serde(default)]
    round_up: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    service: Vec<Raw>,
}

/// One limit (IOPS or MiB/s) of a service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limit {
    /// A figure that does not depend on the quota (a disk tier, a baseline).
    pub(crate) fixed: Option<f64>,
    pub(crate) base: f64,
    pub(crate) per_gib: f64,
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
    /// Round the per-capacity part up to a whole unit (Azure Files' CEILING).
    pub(crate) round_up: bool,
    /// Can be bought up to this, apart from capacity.
    pub(crate) provisioned_max: Option<f64>,
    /// ...at most this much per GiB of quota.
    pub(crate) per_gib_max: Option<f64>,
    /// ...(MiB/s) at most this much per provisioned IOPS.
    pub(crate) per_iops_max: Option<f64>,
}

impl Limit {
    /// Whether the limit follows the quota.
    pub(crate) fn scales(&self) -> bool {
        self.fixed.is_none() && (self.per_gib > 0.0 || self.base > 0.0)
    }

    /// What comes with a quota of `gib` GiB without buying performance.
    pub fn at(&self, gib: f64) -> Option<f64> {
        if let Some(f) = self.fixed {
            return Some(f);
        }
        if !self.scales() {
            return None;
        }
        let mut part = self.per_gib * gib;
        if self.round_up {
            part = (part - 1e-9).ceil();
        }
        let mut v = self.base + part;
        if let Some(lo) = self.min {
            v = v.max(lo);
        }
        if let Some(hi) = self.max {
            v = v.min(hi);
        }
        Some(v)
    }

    /// The most that can be provisioned at a quota of `gib` GiB.
    pub(crate) fn provisionable(&self, gib: Option<f64>) -> Option<f64> {
        let max = self.provisioned_max?;
        Some(match (self.per_gib_max, gib) {
            (Some(r), Some(g)) => max.min(r * g),
            _ => max,
        })
    }
}

/// Quota bounds and increment, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Quota {
    pub(crate) min: u64,
    pub(crate) max: u64,
    pub(crate) step: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    pub name: String,
    pub(crate) title: String,
    /// volume, pool, share, disk, account, vm.
    pub(crate) kind: String,
    /// Tiers of one product (azure-premium-ssd: P10 ... P80).
    pub(crate) family: Option<String>,
    pub(crate) source: String,
    pub(crate) url: String,
    pub(crate) note: Option<String>,
    /// The vendor's own formula, as published.
    pub(crate) formula: Option<String>,
    /// A fixed size (disk tiers), in bytes.
    pub(crate) size: Option<u64>,
    pub(crate) quota: Option<Quota>,
    pub iops: Limit,
    pub mib_s: Limit,
    /// Where the entry came from: "built-in azure-disks.toml" or a path.
    pub(crate) origin: String,
}

impl Service {
    /// Figures of the limits at a quota (or the fixed size, or none).
    pub(crate) fn at(&self, quota: Option<u64>) -> (Option<f64>, Option<f64>) {
        let gib = quota.or(self.size).map(|b| b as f64 / GIB).unwrap_or(0.0);
        (self.iops.at(gib), self.mib_s.at(gib))
    }
}

fn figure(file: &str, name: &str, key: &str, v: Option<f64>) -> Result<Option<f64>> {
    match v {
        Some(x) if !(x.is_finite() && (0.0..=MAX_FIGURE).contains(&x)) => Err(VbError::input(
            format!("{file}: service '{name}': {key} = {x} is outside 0..1e12"),
        )),
        _ => Ok(v),
    }
}

fn quota_size(file: &str, name: &str, key: &str, v: &Option<String>) -> Result<Option<u64>> {
    v.as_deref()
        .map(|t| {
            size::parse_quota(t)
                .map_err(|e| VbError::input(format!("{file}: service '{name}': {key}: {e}")))
        })
        .transpose()
}

fn build(file: &str, r: Raw) -> Result<Service> {
    let name = r.name.trim().to_string();
    let ok_name = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
    if !ok_name {
        return Err(VbError::input(format!(
            "{file}: service name '{}' must be 1..64 letters, digits, '-', '_' or '.'",
            crate::units::bounds::one_line(&name)
        )));
    }
    if r.source.trim().is_empty() || r.url.trim().is_empty() {
        return Err(VbError::input(format!(
            "{file}: service '{name}' needs a source and a url (where its figures are published)"
        )));
    }
    let f = |key: &str, v: Option<f64>| figure(file, &name, key, v);
    let per_tib = f("mib_s_per_tib", r.mib_s_per_tib)?;
    let per_gib = f("mib_s_per_gib", r.mib_s_per_gib)?;
    if per_tib.is_some() && per_gib.is_some() {
        return Err(VbError::input(format!(
            "{file}: service '{name}': give mib_s_per_tib or mib_s_per_gib, not both"
        )));
    }
    let mbit = f("mbit_s", r.mbit_s)?;
    if r.mib_s.is_some() && mbit.is_some() {
        return Err(VbError::input(format!(
            "{file}: service '{name}': give mib_s or mbit_s, not both"
        )));
    }
    let iops = Limit {
        fixed: f("iops", r.iops)?,
        base: f("iops_base", r.iops_base)?.unwrap_or(0.0),
        per_gib: f("iops_per_gib", r.iops_per_gib)?.unwrap_or(0.0),
        min: f("iops_min", r.iops_min)?,
        max: f("iops_max", r.iops_max)?,
        round_up: r.round_up,
        provisioned_max: f("iops_provisioned_max", r.iops_provisioned_max)?,
        per_gib_max: f("iops_per_gib_max", r.iops_per_gib_max)?,
        per_iops_max: None,
    };
    let mib_s = Limit {
        // Network limits are published in megabits per second (10^6 bits).
        fixed: f("mib_s", r.mib_s)?.or(mbit.map(|m| m * 1e6 / 8.0 / MIB)),
        base: f("mib_s_base", r.mib_s_base)?.unwrap_or(0.0),
        per_gib: per_gib.or(per_tib.map(|t| t / 1024.0)).unwrap_or(0.0),
        min: f("mib_s_min", r.mib_s_min)?,
        max: f("mib_s_max", r.mib_s_max)?,
        round_up: r.round_up,
        provisioned_max: f("mib_s_provisioned_max", r.mib_s_provisioned_max)?,
        per_gib_max: None,
        per_iops_max: f("mib_s_per_iops_max", r.mib_s_per_iops_max)?,
    };
    let quota = match (
        quota_size(file, &name, "quota_min", &r.quota_min)?,
        quota_size(file, &name, "quota_max", &r.quota_max)?,
        quota_size(file, &name, "quota_step", &r.quota_step)?,
    ) {
        (None, None, None) => None,
        (lo, hi, step) => {
            let q = Quota {
                min: lo.unwrap_or(1 << 30),
                max: hi.unwrap_or(crate::units::bounds::MAX_SIZE),
                step: step.unwrap_or(1 << 30).max(1),
            };
            if q.min > q.max {
                return Err(VbError::input(format!(
                    "{file}: service '{name}': quota_min is above quota_max"
                )));
            }
            Some(q)
        }
    };
    Ok(Service {
        size: quota_size(file, &name, "size", &r.size)?,
        name,
        title: r.title,
        kind: r.kind,
        family: r.family,
        source: r.source,
        url: r.url,
        note: r.note,
        formula: r.formula,
        quota,
        iops,
        mib_s,
        origin: file.to_string(),
    })
}

/// Parses one catalogue file; `origin` names it in errors and listings.
pub fn parse(origin: &str, text: &str) -> Result<Vec<Service>> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        VbError::input(format!(
            "{origin}: {}",
            crate::units::bounds::one_line(e.message())
        ))
    })?;
    if raw.service.len() > MAX_ENTRIES {
        return Err(VbError::input(format!(
            "{origin}: {} services; at most {MAX_ENTRIES} per file",
            raw.service.len()
        )));
    }
    raw.service.into_iter().map(|r| build(origin, r)).collect()
}

/// The user's own catalogue, when there is one.
fn user_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    let p = base.join("volbench").join("services.toml");
    p.is_file().then_some(p)
}

/// The built-in catalogue, then the user's file, then `extra` (--catalogue):
/// a later entry with the same name replaces an earlier one.
pub(crate) fn load(extra: Option<&Path>) -> Result<Vec<Service>> {
    let mut all: Vec<Service> = Vec::new();
    let mut add = |list: Vec<Service>| {
        for s in list {
            match all.iter_mut().find(|o| o.name == s.name) {
                Some(o) => *o = s,
                None => all.push(s),
            }
        }
    };
    for (file, text) in BUILTIN {
        add(parse(&format!("built-in {file}"), text)?);
    }
    for p in user_file().iter().map(PathBuf::as_path).chain(extra) {
        let text = super::file::read_text(p, "catalogue", crate::units::bounds::MAX_INPUT_FILE)?;
        add(parse(&p.display().to_string(), &text)?);
    }
    Ok(all)
}

/// Looks an entry up by name, or says which names exist.
pub(crate) fn find<'a>(all: &'a [Service], name: &str) -> Result<&'a Service> {
    all.iter().find(|s| s.name == name).ok_or_else(|| {
        VbError::input(format!(
            "no service '{}' in the catalogue (see `volbench service list`)",
            crate::units::bounds::one_line(name)
        ))
    })
}

/// The tiers of a family, smallest first.
pub(crate) fn family<'a>(all: &'a [Service], name: &str) -> Vec<&'a Service> {
    let mut v: Vec<&Service> = all
        .iter()
        .filter(|s| s.family.as_deref() == Some(name) && s.size.is_some())
        .collect();
    v.sort_by_key(|s| s.size);
    v
}

#[cfg(test)]
mod tests;
