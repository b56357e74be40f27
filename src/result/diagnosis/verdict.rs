//! The one judgement behind every "not reached" and "at a limit" verdict:
//! what held a run below a figure it was asked for (its rate, the
//! `--expect` limit, a search step's rate), or what sets its level. The
//! client is asked first: a run without storage (the null engine), a
//! client short of CPU, or I/Os not kept in flight (Little's law) is never
//! called a saturated storage. Then Little's law sizes the asked figure:
//! a run that kept fewer I/Os in flight than the figure needs at the
//! latency it measured was held by its concurrency, unless another run of
//! the same workload shows the level is a ceiling; only then is the
//! storage named. The table notes, the rate and expectation findings, the
//! latency search and the storage-limit finders all ask here.

use super::concurrency::shape_without_concurrency;
use super::cpu::{CpuShort, cpu_short};
use super::merge_hosts;
use super::{measured, num, paced, saturation, time};
use crate::result::{ResultDoc, RunResult};

/// IOPS x latency below this share of the I/Os kept in flight: they were
/// not in flight all the time (`time::littles_law_gap` draws the same line).
const GAP: f64 = 0.75;
/// Another run counts as having done more only above this factor (a
/// throttle lets a few percent wander, `saturation::GAINED` alike).
const GAINED: f64 = 1.20;

/// What held a run below a figure, or sets its level.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Limit {
    /// The engine does no I/O (null): no storage took part; volbench's own
    /// cost per I/O on the client's CPU is all the figures show.
    NoStorage,
    /// Clients short of CPU in this run: the host's CPUs saturated, or
    /// volbench's I/O threads each on a full core.
    ClientCpu {
        /// The busiest one ("client-7", or this host's name).
        host: String,
        /// How many of the hosts judged were short, of how many.
        hosts: usize,
        of: usize,
        busy_pct: f64,
        host_wide: bool,
    },
    /// The I/Os were not in flight all the time: IOPS x latency well below
    /// the concurrency, or slots enough for the figure left unfilled. The
    /// time went outside the I/O (the client's CPU, scheduling, the engine).
    OutsideIo { concurrency: u32, in_flight: f64 },
    /// Fewer I/Os in flight than the asked figure needs at the latency
    /// measured (Little's law: in flight = IOPS x latency).
    TooFewInFlight {
        concurrency: u32,
        needed: f64,
        latency_us: f64,
        /// What another run of the same workload showed, when one did.
        evidence: Option<String>,
    },
    /// The storage: the client ruled out and the level shown to be a
    /// ceiling (more in flight gave no more, flat across block sizes, at
    /// the expected limit).
    Storage { evidence: String },
}

impl Limit {
    /// Its name in result.json's figures and in `why` fields.
    pub(crate) fn key(&self) -> &'static str {
        match self {
            Limit::NoStorage => "no_storage",
            Limit::ClientCpu { .. } => "client_cpu",
            Limit::OutsideIo { .. } => "outside_io",
            Limit::TooFewInFlight { .. } => "too_few_in_flight",
            Limit::Storage { .. } => "storage",
        }
    }

    /// The limit as one clause, for a table note or a search step ("too
    /// few I/Os in flight: 1 kept, 4.6 needed at 2.0 ms").
    pub(crate) fn short(&self) -> String {
        match self {
            Limit::NoStorage => {
                "no storage: the engine does no I/O, so the client's CPU is the limit".into()
            }
            Limit::ClientCpu {
                host,
                hosts,
                of,
                busy_pct,
                host_wide,
            } => {
                let who = if *of > 1 {
                    format!("{hosts} of {of} hosts short of CPU, {host} ")
                } else {
                    format!("{host} ")
                };
                if *host_wide {
                    format!("the client's CPU: {who}{busy_pct:.0}% busy")
                } else {
                    format!("the client's CPU: {who}with each I/O thread {busy_pct:.0}% of a core")
                }
            }
            Limit::OutsideIo {
                concurrency,
                in_flight,
            } => format!(
                "the client: IOPS x latency = {} of the {concurrency} I/Os kept in flight, the \
                 rest of the time went outside the I/O",
                num(*in_flight)
            ),
            Limit::TooFewInFlight {
                concurrency,
                needed,
                latency_us,
                ..
            } => format!(
                "too few I/Os in flight: {concurrency} kept, {} needed at {} (Little's law)",
                num(*needed),
                latency(*latency_us)
            ),
            Limit::Storage { evidence } => format!("the storage: {evidence}"),
        }
    }

    /// The limit with its evidence and what to do, for a finding.
    pub(crate) fn sentence(&self) -> String {
        match self {
            Limit::NoStorage => "no storage took part: the engine does no I/O, so the figures \
                                 are volbench's own cost per I/O on the client's CPU, whatever \
                                 the storage would do."
                .into(),
            Limit::ClientCpu { .. } => format!(
                "{}; the storage may do more than measured: add clients or CPUs, or use fewer \
                 threads with more iodepth (io_uring).",
                self.short()
            ),
            Limit::OutsideIo { .. } => format!(
                "{} (the client's CPU, scheduling, the engine): fewer threads with more \
                 iodepth, or more clients.",
                self.short()
            ),
            Limit::TooFewInFlight {
                needed, evidence, ..
            } => {
                let need = needed.ceil().max(1.0);
                match evidence {
                    Some(e) => format!(
                        "{}; {e}. Keep at least {} in flight (threads x iodepth, over every \
                         client).",
                        self.short(),
                        num(need)
                    ),
                    None => format!(
                        "{}. Keep at least {} in flight (threads x iodepth, over every \
                         client); if latency then climbs while IOPS stay, the storage is the \
                         limit.",
                        self.short(),
                        num(need)
                    ),
                }
            }
            Limit::Storage { .. } => format!(
                "{}: more threads or clients will not raise it.",
                self.short()
            ),
        }
    }
}

/// 850 -> "850 µs", 2049 -> "2 ms".
fn latency(us: f64) -> String {
    if us >= 1000.0 {
        format!("{} ms", num(us / 1000.0))
    } else {
        format!("{} µs", num(us))
    }
}

/// Whether the client sets this run's level, asked before anything is
/// said of the storage: no storage at all, a client short of CPU, or I/Os
/// not in flight all the time. None: the client is ruled out.
pub(crate) fn client(doc: &ResultDoc, r: &RunResult) -> Option<Limit> {
    client_of(r, &merge_hosts(doc, r))
}

/// [`client`] for a run whose hosts' own runs are at hand (`parts`: each
/// host's name and run; the run itself on one host).
pub(crate) fn client_of(r: &RunResult, parts: &[(String, &RunResult)]) -> Option<Limit> {
    if !r.engine.is_empty() && r.engine.iter().all(|e| e.caps().diskless) {
        return Some(Limit::NoStorage);
    }
    if let Some(l) = cpu(parts) {
        return Some(l);
    }
    let conc = r.littles_law.concurrency;
    let in_flight = in_flight(r);
    // A paced run that kept its rate has its slots idle by design; one
    // that did not should have them all busy.
    let judged = conc > 0 && !time::pauses(r) && r.meta_ops.is_empty();
    let behind = !paced(r) || r.rate.as_ref().is_some_and(|x| !x.reached);
    (judged && behind && in_flight < GAP * f64::from(conc)).then_some(Limit::OutsideIo {
        concurrency: conc,
        in_flight,
    })
}

/// The clients of a run short of CPU, from each one's own counters.
fn cpu(parts: &[(String, &RunResult)]) -> Option<Limit> {
    let of = parts.len();
    let short: Vec<(&str, CpuShort)> = parts
        .iter()
        .filter_map(|(host, p)| cpu_short(p).map(|s| (host.as_str(), s)))
        // Other processes' load on a host is said by `client_cpu`; it is
        // no evidence the client set this run's level (a busy build machine
        // beside a 500-IOPS volume still shows the volume's cap).
        .filter(|(_, s)| !s.others)
        .collect();
    let &(host, worst) = short.iter().max_by(|a, b| a.1.busy.total_cmp(&b.1.busy))?;
    Some(Limit::ClientCpu {
        host: host.to_string(),
        hosts: short.len(),
        of,
        busy_pct: worst.busy,
        host_wide: worst.host_wide,
    })
}

/// The latency a run's I/Os spent in flight, µs: from submission for a
/// paced run (its latency counts the wait for its turn too), else the mean.
fn latency_us(r: &RunResult) -> f64 {
    if paced(r) {
        if let Some(s) = r.service_mean_us().filter(|s| *s > 0.0) {
            return s;
        }
    }
    r.mean_latency_us()
}

/// I/Os in flight on average, by Little's law over the time they were in flight.
fn in_flight(r: &RunResult) -> f64 {
    if paced(r) {
        r.total_iops() * latency_us(r) / 1e6
    } else {
        r.littles_law.iops_x_latency
    }
}

/// The workload without its name, concurrency or rate: runs with the same
/// key differ only in how many I/Os they kept in flight and how fast they
/// were asked to go.
fn workload(r: &RunResult) -> String {
    let mut o = r.clone();
    o.workload.rate_iops = None;
    o.workload.rate_pct = None;
    o.workload.arrivals = Default::default();
    o.workload.latency_target = None;
    shape_without_concurrency(&o)
}

/// What held `r` below `asked` IOPS (its rate, or the IOPS the expected
/// limit comes to at its size).
pub(crate) fn judge(doc: &ResultDoc, r: &RunResult, asked: f64) -> Limit {
    if let Some(l) = client(doc, r) {
        return l;
    }
    if let Some(l) = unfilled(r, asked) {
        return l;
    }
    let conc = r.littles_law.concurrency.max(1);
    let lat = latency_us(r);
    let needed = asked * lat / 1e6;
    let achieved = r.total_iops();
    let key = workload(r);
    let peers: Vec<&RunResult> = measured(doc)
        .filter(|o| !std::ptr::eq(*o, r) && !paced(o) && o.name != r.name)
        .filter(|o| workload(o) == key)
        .collect();
    let best = |f: &dyn Fn(u32) -> bool| {
        peers
            .iter()
            .copied()
            .filter(|o| f(o.littles_law.concurrency))
            .max_by(|a, b| a.total_iops().total_cmp(&b.total_iops()))
    };
    let too_few = |evidence: Option<String>| Limit::TooFewInFlight {
        concurrency: conc,
        needed,
        latency_us: lat,
        evidence,
    };
    if let Some(b) = best(&|c| c > conc).filter(|b| b.total_iops() >= GAINED * achieved) {
        return too_few(Some(format!(
            "run {} with {} in flight did {} IOPS",
            b.name,
            b.littles_law.concurrency,
            num(b.total_iops())
        )));
    }
    if let Some(b) = best(&|c| c >= conc.saturating_mul(2)) {
        return Limit::Storage {
            evidence: format!(
                "run {} with {} in flight did {} IOPS, no more than {} did",
                b.name,
                b.littles_law.concurrency,
                num(b.total_iops()),
                conc
            ),
        };
    }
    if !paced(r) {
        if let Some(why) = saturation::ceiling(doc, r) {
            return Limit::Storage { evidence: why };
        }
    }
    let same = best(&|c| c == conc).map(|b| {
        format!(
            "closed loop, the same {} in flight did {} IOPS (run {})",
            conc,
            num(b.total_iops()),
            b.name
        )
    });
    too_few(same)
}

/// Slots enough for `asked` IOPS at the latency measured, left unfilled:
/// the time went outside the I/O.
fn unfilled(r: &RunResult, asked: f64) -> Option<Limit> {
    let conc = r.littles_law.concurrency.max(1);
    let needed = asked * latency_us(r) / 1e6;
    (needed <= f64::from(conc) && r.meta_ops.is_empty() && !time::pauses(r)).then(|| {
        Limit::OutsideIo {
            concurrency: conc,
            in_flight: in_flight(r),
        }
    })
}

/// [`judge`] from the run alone, where no other run is at hand (a table's
/// note): the client first, then Little's law; the storage is never named
/// without another run to show a ceiling.
pub(crate) fn alone(r: &RunResult, asked: f64) -> Limit {
    let host = r
        .counters
        .as_ref()
        .map(|c| c.host.clone())
        .unwrap_or_default();
    if let Some(l) = client_of(r, &[(host, r)]) {
        return l;
    }
    if let Some(l) = unfilled(r, asked) {
        return l;
    }
    let lat = latency_us(r);
    Limit::TooFewInFlight {
        concurrency: r.littles_law.concurrency.max(1),
        needed: asked * lat / 1e6,
        latency_us: lat,
        evidence: None,
    }
}
