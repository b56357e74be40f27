//! What each pod of `--k8s-job` asks of its node (`--k8s-requests`,
//! `--k8s-limits`) and where the pods may go (`--k8s-one-per-node`: a
//! required pod anti-affinity on the node's host name, so N pods are N
//! clients, not N processes sharing one node's network and CPU).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde_json::json;

use crate::error::{Result, VbError};
use crate::units::bounds::MAX_K8S_RESOURCES;

/// What each pod asks of its node, and where the pods may go.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placement {
    pub(crate) requests: Vec<(String, String)>,
    pub(crate) limits: Vec<(String, String)>,
    /// One pod per node (a required pod anti-affinity on the node's host
    /// name), so N pods are N clients.
    pub(crate) one_per_node: bool,
}

/// `--k8s-requests` unless given: enough to be scheduled on any node, a
/// whole CPU so the agent's collector and its I/O threads are not starved.
pub(crate) const DEFAULT_REQUESTS: &str = "cpu=1,memory=512Mi";
/// `--k8s-limits` unless given: a memory bound well above what an agent's
/// buffers take (threads x depth x block size), so the node is safe from a
/// runaway agent and a normal job is never killed; no CPU limit, whose
/// throttling (CFS quota periods of 100 ms) would read as storage latency.
pub(crate) const DEFAULT_LIMITS: &str = "memory=8Gi";

impl Placement {
    /// From `--k8s-requests`, `--k8s-limits` (None: the defaults) and
    /// `--k8s-one-per-node`; a limit below its request is refused here,
    /// before the API server refuses the Job.
    pub(crate) fn parse(
        requests: Option<&str>,
        limits: Option<&str>,
        one_per_node: bool,
    ) -> Result<Self> {
        let requests = resources("--k8s-requests", requests.unwrap_or(DEFAULT_REQUESTS))?;
        let limits = resources("--k8s-limits", limits.unwrap_or(DEFAULT_LIMITS))?;
        for (name, limit) in &limits {
            let Some((_, request)) = requests.iter().find(|(n, _)| n == name) else {
                continue;
            };
            if quantity(limit) < quantity(request) {
                return Err(VbError::input(format!(
                    "--k8s-limits {name}={limit} is below --k8s-requests {name}={request}"
                )));
            }
        }
        Ok(Placement {
            requests,
            limits,
            one_per_node,
        })
    }

    /// The container's `resources`.
    pub(super) fn resources(&self) -> serde_json::Value {
        let map = |v: &[(String, String)]| {
            v.iter()
                .map(|(k, q)| (k.clone(), json!(q)))
                .collect::<serde_json::Map<_, _>>()
        };
        let mut r = serde_json::Map::new();
        if !self.requests.is_empty() {
            r.insert("requests".into(), map(&self.requests).into());
        }
        if !self.limits.is_empty() {
            r.insert("limits".into(), map(&self.limits).into());
        }
        r.into()
    }
}

/// `NAME=QUANTITY,...` (or `none`) into pairs, each name one of those a
/// container takes and each quantity one Kubernetes reads.
fn resources(flag: &str, text: &str) -> Result<Vec<(String, String)>> {
    let shown = crate::units::bounds::one_line(text);
    let bad = |why: String| VbError::input(format!("{flag} '{shown}': {why}"));
    if text.len() > MAX_K8S_RESOURCES {
        return Err(bad(format!("at most {MAX_K8S_RESOURCES} bytes")));
    }
    let text = text.trim();
    if text == "none" {
        return Ok(Vec::new());
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for pair in text.split(',') {
        let (name, q) = pair
            .split_once('=')
            .ok_or_else(|| bad(format!("'{pair}' is not NAME=QUANTITY")))?;
        let (name, q) = (name.trim(), q.trim());
        if !["cpu", "memory", "ephemeral-storage"].contains(&name) {
            return Err(bad(format!(
                "'{name}' is not cpu, memory or ephemeral-storage"
            )));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(bad(format!("{name} is given twice")));
        }
        match quantity(q) {
            Some(v) if v > 0.0 => out.push((name.to_string(), q.to_string())),
            _ => {
                return Err(bad(format!(
                    "'{q}' is not a quantity above zero (500m, 2, 512Mi, 4Gi, 1G)"
                )));
            }
        }
    }
    Ok(out)
}

/// A Kubernetes quantity's value (`500m` = 0.5, `4Gi` = 4 * 2^30), or None
/// when Kubernetes would not read it: a plain decimal number and one of
/// its suffixes.
fn quantity(q: &str) -> Option<f64> {
    let digits = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(digits);
    if number.is_empty() || number.matches('.').count() > 1 || number == "." {
        return None;
    }
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    number.parse::<f64>().ok().map(|v| v * scale)
}

impl Placement {
    /// The pod's `affinity`: no two of this Job's pods on one node; None
    /// when pods may share one.
    pub(super) fn affinity(&self, job: &str) -> Option<serde_json::Value> {
        self.one_per_node.then(|| {
            json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"volbench/job": job}},
                "topologyKey": "kubernetes.io/hostname",
            }]}})
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn defaults_ask_a_cpu_and_bound_memory_with_no_cpu_limit() {
        let p = Placement::parse(None, None, true).unwrap();
        let r = p.resources();
        assert_eq!(r["requests"]["cpu"], "1");
        assert_eq!(r["requests"]["memory"], "512Mi");
        assert_eq!(r["limits"]["memory"], "8Gi");
        assert!(
            r["limits"].get("cpu").is_none(),
            "no CPU throttling by default"
        );
        let a = p.affinity("vb-1").unwrap();
        let term = &a["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
        assert_eq!(term["topologyKey"], "kubernetes.io/hostname");
        assert_eq!(term["labelSelector"]["matchLabels"]["volbench/job"], "vb-1");
        assert!(
            Placement::parse(None, None, false)
                .unwrap()
                .affinity("x")
                .is_none()
        );
    }

    #[test]
    fn a_user_sets_requests_and_limits_or_none() {
        let p =
            Placement::parse(Some("cpu=500m, memory=2Gi"), Some("cpu=2,memory=4G"), true).unwrap();
        assert_eq!(p.resources()["requests"]["cpu"], "500m");
        assert_eq!(p.resources()["limits"]["memory"], "4G");
        let bare = Placement::parse(Some("none"), Some("none"), true).unwrap();
        assert_eq!(bare.resources(), json!({}));
        for (req, lim, why) in [
            (Some("gpu=1"), None, "not cpu, memory"),
            (Some("cpu"), None, "NAME=QUANTITY"),
            (Some("cpu=1,cpu=2"), None, "twice"),
            (Some("memory=1Gb"), None, "not a quantity"),
            (Some("cpu=-1"), None, "not a quantity"),
            (Some("cpu=0"), None, "above zero"),
            (Some("cpu=1..5"), None, "not a quantity"),
            (
                Some("memory=4Gi"),
                Some("memory=1Gi"),
                "below --k8s-requests",
            ),
            (Some("cpu=2"), Some("cpu=1500m"), "below"),
        ] {
            let e = Placement::parse(req, lim, true).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Input);
            assert!(e.to_string().contains(why), "{req:?} {lim:?}: {e}");
        }
        let long = "cpu=1,".repeat(60);
        assert!(Placement::parse(Some(&long), None, true).is_err());
        assert_eq!(quantity("1.5Gi"), Some(1.5 * 1024f64.powi(3)));
        assert_eq!(quantity("250m"), Some(0.25));
    }
}
