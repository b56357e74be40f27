//! What is asked of a store: the history of runs (filtered by target,
//! suite and time), the newest run, the baselines per target and suite,
//! and one workload's figures over time for the trend. Plain SQL both
//! databases run; the figures are the rows `rows.rs` wrote, unchanged.

use std::collections::BTreeMap;

use super::Store;
use super::db::{Cell, Val};
use crate::error::{Result, VbError};

/// `history`'s filter; empty fields match everything.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    /// A target path, `*` matching any run of characters.
    pub(crate) target: String,
    pub(crate) suite: Option<String>,
    /// Runs started at or after this time (seconds since 1970).
    pub(crate) since_s: Option<f64>,
    pub(crate) limit: u64,
}

/// One line of `history`.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct HistoryRow {
    pub(crate) id: i64,
    pub(crate) started: String,
    pub(crate) target: String,
    pub(crate) suite: String,
    pub(crate) hosts: i64,
    pub(crate) workloads: i64,
    /// The first measured workload, whose figures follow.
    pub(crate) headline: String,
    pub(crate) iops: Option<f64>,
    pub(crate) mib_s: Option<f64>,
    pub(crate) p99_us: Option<f64>,
    pub(crate) interrupted: bool,
    pub(crate) error: Option<String>,
    pub(crate) findings: i64,
    pub(crate) source: String,
    pub(crate) tool_version: String,
    /// The baseline of its target and suite.
    pub(crate) baseline: bool,
}

/// `*` as SQL's `%`, the text's own `%`, `_` and `\` escaped.
fn like(pattern: &str) -> String {
    let mut out = String::new();
    for c in pattern.chars() {
        match c {
            '\\' | '%' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '*' => out.push('%'),
            c => out.push(c),
        }
    }
    out
}

impl Store {
    pub(crate) fn history(&mut self, f: &Filter) -> Result<Vec<HistoryRow>> {
        let rows = self.db().query(
            "SELECT r.id, r.started, r.target, r.suite, r.hosts, r.workloads, r.headline, \
             r.iops, r.mib_s, r.p99_us, r.interrupted, r.error, r.findings, r.source, \
             r.tool_version, (SELECT count(*) FROM baselines b WHERE b.run_id = r.id) \
             FROM runs r \
             WHERE (CAST($1 AS TEXT) = '' OR r.target LIKE $2 ESCAPE '\\') \
             AND (CAST($3 AS BIGINT) = 0 OR r.suite = $4) \
             AND r.started_s >= CAST($5 AS DOUBLE PRECISION) \
             ORDER BY r.started_s DESC, r.id DESC LIMIT $6",
            &[
                Val::text(&f.target),
                Val::text(like(&f.target)),
                Val::flag(f.suite.is_some()),
                Val::text(f.suite.clone().unwrap_or_default()),
                Val::Real(f.since_s.unwrap_or(f64::MIN)),
                Val::count(f.limit),
            ],
        )?;
        Ok(rows.iter().map(|r| history_row(r)).collect())
    }

    /// The newest run (by its start), of a target and suite when given.
    pub(crate) fn latest(&mut self, target: Option<&str>, suite: Option<&str>) -> Result<i64> {
        let f = Filter {
            target: target.unwrap_or_default().to_string(),
            suite: suite.map(str::to_string),
            since_s: None,
            limit: 1,
        };
        self.history(&f)?.first().map(|r| r.id).ok_or_else(|| {
            VbError::input(format!("store:latest: no run in {} matches", self.shown()))
        })
    }

    /// The target and suite run `id` is filed under.
    pub(crate) fn filed_under(&mut self, id: i64) -> Result<(String, String)> {
        let rows = self.db().query(
            "SELECT target, suite FROM runs WHERE id = $1",
            &[Val::Int(id)],
        )?;
        match rows.first().map(|r| r.as_slice()) {
            Some([t, s]) => Ok((t.text(), s.text())),
            _ => Err(VbError::input(format!(
                "store:{id}: no such run in {} (volbench history lists them)",
                self.shown()
            ))),
        }
    }

    /// Makes run `id` the baseline of its target and suite, in place of
    /// the one before; returns them and the run it replaced.
    pub(crate) fn set_baseline(&mut self, id: i64) -> Result<(String, String, Option<i64>)> {
        let (target, suite) = self.filed_under(id)?;
        self.db().begin_write(false)?;
        let done = (|| {
            let before = self.baseline(&target, &suite)?;
            self.db().exec(
                "DELETE FROM baselines WHERE target = $1 AND suite = $2",
                &[Val::text(&target), Val::text(&suite)],
            )?;
            self.db().exec(
                "INSERT INTO baselines (target, suite, run_id, set_at) VALUES ($1, $2, $3, $4)",
                &[
                    Val::text(&target),
                    Val::text(&suite),
                    Val::Int(id),
                    Val::text(crate::result::now_rfc3339()),
                ],
            )?;
            Ok(before)
        })();
        match done {
            Ok(before) => {
                self.db().commit()?;
                Ok((target, suite, before))
            }
            Err(e) => {
                self.db().rollback();
                Err(e)
            }
        }
    }

    pub(crate) fn baseline(&mut self, target: &str, suite: &str) -> Result<Option<i64>> {
        let rows = self.db().query(
            "SELECT run_id FROM baselines WHERE target = $1 AND suite = $2",
            &[Val::text(target), Val::text(suite)],
        )?;
        Ok(rows.first().and_then(|r| r.first()).and_then(Cell::int))
    }

    /// Every baseline: (target, suite, run, set at).
    pub(crate) fn baselines(&mut self) -> Result<Vec<(String, String, i64, String)>> {
        let rows = self.db().query(
            "SELECT target, suite, run_id, set_at FROM baselines ORDER BY target, suite",
            &[],
        )?;
        Ok(rows
            .iter()
            .filter_map(|r| match r.as_slice() {
                [t, s, id, at] => Some((t.text(), s.text(), id.int()?, at.text())),
                _ => None,
            })
            .collect())
    }

    /// One workload of one target over time, oldest first: each stored
    /// run's figures and the conditions they were measured under.
    pub(crate) fn trend(&mut self, target: &str, workload: &str) -> Result<Vec<TrendPoint>> {
        let rows = self.db().query(
            "SELECT r.id, r.started, r.started_s, w.conditions, r.environment, \
             w.interrupted, o.op, o.iops, o.p99_us \
             FROM workloads w JOIN runs r ON r.id = w.run_id \
             LEFT JOIN op_totals o ON o.run_id = w.run_id AND o.workload = w.idx \
             AND o.op IN ('read', 'write') \
             WHERE r.target = $1 AND w.name = $2 AND w.discarded = 0 \
             ORDER BY r.started_s, r.id, w.idx, o.op",
            &[Val::text(target), Val::text(workload)],
        )?;
        let mut out: Vec<TrendPoint> = Vec::new();
        for r in &rows {
            let [id, started, t, cond, env, intr, op, op_iops, p99] = r.as_slice() else {
                continue;
            };
            let id = id.int().unwrap_or(0);
            if out.last().is_none_or(|p| p.id != id) {
                out.push(TrendPoint {
                    id,
                    started: started.text(),
                    t_s: t.real().unwrap_or(0.0),
                    conditions: serde_json::from_str(&cond.text()).unwrap_or_default(),
                    environment: serde_json::from_str(&env.text()).unwrap_or_default(),
                    interrupted: intr.int().unwrap_or(0) != 0,
                    ops: Vec::new(),
                });
            }
            if let (Some(p), Some(op)) = (out.last_mut(), op.opt_text()) {
                // One row per op of the run's first workload of that name.
                if !p.ops.iter().any(|o| o.0 == op) {
                    p.ops
                        .push((op, op_iops.real().unwrap_or(0.0), p99.real().unwrap_or(0.0)));
                }
            }
        }
        Ok(out)
    }
}

/// One stored run of a workload, for the trend.
#[derive(Debug, Clone)]
pub(crate) struct TrendPoint {
    pub(crate) id: i64,
    pub(crate) started: String,
    pub(crate) t_s: f64,
    pub(crate) conditions: BTreeMap<String, String>,
    pub(crate) environment: Vec<(String, String)>,
    /// Stopped before its planned end: its figures cover what ran.
    pub(crate) interrupted: bool,
    /// (op, IOPS, p99 µs) per operation type it did.
    pub(crate) ops: Vec<(String, f64, f64)>,
}

impl TrendPoint {
    /// The conditions that differ from `newest`'s, as "threads: 4 (newest 8)".
    pub(crate) fn differs_from(&self, newest: &TrendPoint) -> Vec<String> {
        let other = newest;
        let mut out = Vec::new();
        for (k, v) in &self.conditions {
            let o = other.conditions.get(k).map_or("-", String::as_str);
            if o != v {
                out.push(format!("{k}: {v} (newest {o})"));
            }
        }
        let theirs: BTreeMap<&str, &str> = other
            .environment
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        for (k, v) in &self.environment {
            let o = theirs.get(k.as_str()).copied().unwrap_or("-");
            if o != v {
                out.push(format!("{k}: {v} (newest {o})"));
            }
        }
        out
    }
}

fn history_row(r: &[Cell]) -> HistoryRow {
    let g = |i: usize| r.get(i).cloned().unwrap_or(Cell::Null);
    HistoryRow {
        id: g(0).int().unwrap_or(0),
        started: g(1).text(),
        target: g(2).text(),
        suite: g(3).text(),
        hosts: g(4).int().unwrap_or(0),
        workloads: g(5).int().unwrap_or(0),
        headline: g(6).text(),
        iops: g(7).real(),
        mib_s: g(8).real(),
        p99_us: g(9).real(),
        interrupted: g(10).int().unwrap_or(0) != 0,
        error: g(11).opt_text(),
        findings: g(12).int().unwrap_or(0),
        source: g(13).text(),
        tool_version: g(14).text(),
        baseline: g(15).int().unwrap_or(0) > 0,
    }
}

/// `--since`: a date (2026-11-01), a time (RFC 3339), or how long ago
/// (7d, 36h); seconds since 1970.
pub(crate) fn since(text: &str) -> Result<f64> {
    let t = text.trim();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    if let Ok(d) = humantime::parse_duration(t) {
        return Ok(now - d.as_secs_f64().min(now));
    }
    let full = if t.len() == 10 {
        format!("{t}T00:00:00")
    } else {
        t.trim_end_matches('Z').to_string()
    };
    humantime::parse_rfc3339_weak(&full)
        .ok()
        .and_then(|s| s.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64())
        .ok_or_else(|| {
            VbError::input(format!(
                "--since '{}': not a date (2026-11-01), a time (2026-11-01T08:00:00Z) or a \
                 time ago (7d, 36h)",
                crate::units::bounds::one_line(t)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_patterns_escape_sqls_own_wildcards() {
        assert_eq!(like("/mnt/a_b*"), "/mnt/a\\_b%");
        assert_eq!(like("50%"), "50\\%");
    }

    #[test]
    fn since_takes_dates_times_and_ages() {
        assert_eq!(since("1970-01-02").unwrap(), 86_400.0);
        assert_eq!(since("1970-01-01T00:01:00Z").unwrap(), 60.0);
        assert!(since("7d").unwrap() > 1e9);
        assert!(since("last tuesday").is_err());
    }
}
