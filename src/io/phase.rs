//! What a worker shares with the collector and the executor: the phases,
//! the control, the setup handed in and the result handed back, and the
//! clock. Both workers (`io::worker`, `io::meta::worker`) use it, so neither
//! reaches into the other.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::time::Duration;

use crate::io::engine::EngineKind;
use crate::io::workload::IoGen;
use crate::spec::meta::MetaOp;
use crate::stats::{LiveCounters, OpStats};

pub(crate) const PHASE_WARMUP: u8 = 0;
pub(crate) const PHASE_MEASURE: u8 = 1;
/// After measuring, I/O goes on but counts nowhere (--cooldown).
pub(crate) const PHASE_COOLDOWN: u8 = 2;
pub(crate) const PHASE_STOP: u8 = 3;

/// Shared by the collector (writer) and the workers (readers).
#[derive(Default)]
pub(crate) struct Control {
    pub(crate) phase: AtomicU8,
    /// Set by a worker that hit an error, so the collector ends the run.
    pub(crate) failed: AtomicBool,
    /// Set (before `failed`) by a worker whose error was the loss of the
    /// target's server (`Engine::server_lost`): a list of targets may go
    /// on without this one (`--on-host-loss continue`).
    pub(crate) lost: AtomicBool,
    /// Shared by the targets of one run: set when one of them failed, so
    /// the others end theirs at once, keeping what they measured
    /// (`executor::run::Together`). A fresh flag for a lone target.
    pub(crate) halt: Arc<AtomicBool>,
    /// The job's stop (a signal, a closed stdout: `cmd::stop`), as the
    /// collector polls it: set, the run is being cut short and must write
    /// its result within the stop's grace, so an engine gives up what a
    /// reachable server has not answered yet (`Engine::abandon`). A fresh
    /// flag where nothing can stop the run.
    pub(crate) stop: Arc<AtomicBool>,
    /// Workers that have finished on their own (their --io-limit share done).
    pub(crate) finished: AtomicU32,
    /// When the last of them finished: the end of an --io-limit run is that
    /// moment, not the collector's next poll (which would add up to a poll
    /// interval to the measured time and understate IOPS on short runs).
    pub(crate) finished_at: std::sync::Mutex<Option<std::time::Instant>>,
}

impl Control {
    /// The run's stop as an engine watches it (`Engine::watch_stop`): true
    /// once the collector has moved the phase to its end.
    pub(crate) fn stopping(self: &Arc<Self>) -> crate::io::engine::Stopping {
        let me = Arc::clone(self);
        Arc::new(move || me.phase.load(Ordering::Relaxed) >= PHASE_STOP)
    }

    /// A worker's error ends the run; `lost` when it was the loss of the
    /// target's server (told first, so whoever sees `failed` sees it).
    pub(crate) fn fail(&self, lost: bool) {
        if lost {
            self.lost.store(true, Ordering::Relaxed);
        }
        self.failed.store(true, Ordering::Release);
    }

    pub(crate) fn mark_finished(&self) {
        let now = std::time::Instant::now();
        if let Ok(mut at) = self.finished_at.lock() {
            *at = Some(at.map_or(now, |t| t.max(now)));
        }
        self.finished.fetch_add(1, Ordering::Relaxed);
    }

    /// The moment every one of `workers` finished its share, if they all have.
    pub(crate) fn all_finished_at(&self, workers: usize) -> Option<std::time::Instant> {
        if (self.finished.load(Ordering::Relaxed) as usize) < workers {
            return None;
        }
        self.finished_at.lock().ok().and_then(|t| *t)
    }
}

/// Latency (from the intended start) per op type, and, for rate-limited
/// runs, service time (from the actual submission) beside it.
#[derive(Clone, Default)]
pub(crate) struct PhaseStats {
    pub(crate) read: OpStats,
    pub(crate) write: OpStats,
    pub(crate) read_service: OpStats,
    pub(crate) write_service: OpStats,
}

impl PhaseStats {
    pub(crate) fn merge(&mut self, other: &PhaseStats) {
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.read_service.merge(&other.read_service);
        self.write_service.merge(&other.write_service);
    }
}

/// When a rate-limited worker's I/Os are due. Intended start times follow
/// the schedule whatever the device does, so a stall shows up as latency of
/// every I/O that should have started during it (no coordinated omission).
pub(crate) struct Schedule {
    /// Mean gap between this worker's I/Os.
    pub(crate) gap: Duration,
    pub(crate) poisson: bool,
    /// Offset of this worker's first I/O, so workers do not fire in lockstep.
    pub(crate) offset: Duration,
    /// A bandwidth cap (--rate 100MiB/s): each I/O's gap is its length
    /// times this, so a block-size mix keeps the byte rate; 0 = IOPS.
    pub(crate) ns_per_byte: f64,
}

impl Schedule {
    #[inline]
    pub(crate) fn next_gap(&self, rng: &mut fastrand::Rng) -> Duration {
        if self.poisson {
            // Exponential gaps: -ln(U) x mean, with U in (0, 1].
            let u = 1.0 - rng.f64();
            self.gap.mul_f64(-u.ln())
        } else {
            self.gap
        }
    }
}

pub(crate) struct WorkerResult {
    pub(crate) warmup: PhaseStats,
    pub(crate) measure: PhaseStats,
    pub(crate) error: Option<String>,
    /// Per-operation statistics of a metadata run (empty otherwise).
    pub(crate) meta: Vec<MetaOpStats>,
    /// Reads that returned what was not written (--verify).
    pub(crate) data: crate::io::verify::DataReport,
    /// What a back end's own protocol client saw in the measured phase.
    pub(crate) protocol: Option<crate::result::protocol::ProtoSeen>,
}

pub(crate) struct WorkerSetup {
    pub(crate) index: u32,
    pub(crate) engine: EngineKind,
    pub(crate) depth: u32,
    /// The files its engine runs on, opened on the target's back end.
    pub(crate) files: crate::io::backend::Files,
    pub(crate) io_gen: IoGen,
    pub(crate) max_bs: usize,
    pub(crate) buf_align: usize,
    /// Bytes of the ring writes are issued from (`io::ring`); 0: they copy.
    pub(crate) ring: usize,
    pub(crate) seed: u64,
    /// Bytes this worker may issue over the whole run (--io-limit), if capped.
    pub(crate) budget: Option<u64>,
    /// Open-loop schedule for this worker, if the run is rate-limited.
    pub(crate) rate: Option<Schedule>,
    pub(crate) control: Arc<Control>,
    pub(crate) counters: Arc<LiveCounters>,
    /// The data to write and the checks of reads, unless the default.
    pub(crate) data: Option<Arc<crate::io::verify::DataPlan>>,
    /// Syncs and think time between I/Os, when the run asks for them.
    pub(crate) shaper: Option<crate::io::shaping::Shaper>,
}

/// One operation's statistics from one worker, warm-up and measured apart.
#[derive(Clone, Debug)]
pub(crate) struct MetaOpStats {
    pub(crate) op: MetaOp,
    pub(crate) warmup: OpStats,
    pub(crate) measure: OpStats,
    /// Files a create phase kept, already complete (`--keep-complete`).
    pub(crate) kept: u64,
}

/// Sleeping wakes up tens of microseconds late on a busy or virtual machine,
/// which would count as latency of every rate-limited I/O: sleep to this
/// much before the due time and spin the rest.
pub(crate) const SPIN: Duration = Duration::from_micros(60);
/// Longest single sleep, so a stop request is seen promptly.
const MAX_SLEEP: Duration = Duration::from_millis(20);

pub(crate) fn wait_until(due: u64) {
    loop {
        let left = Duration::from_nanos(due.saturating_sub(now_ns()));
        if left.is_zero() {
            return;
        }
        if left > SPIN {
            std::thread::sleep((left - SPIN).min(MAX_SLEEP));
            if left - SPIN > MAX_SLEEP {
                return;
            }
        } else {
            std::thread::yield_now();
        }
    }
}

/// Monotonic time in nanoseconds, from glibc's clock_gettime (the vDSO).
/// The loop reads the clock twice per batch; `Instant` would add checked
/// timespec subtraction and u128 `as_nanos` conversions to every latency
/// (about 60 of volbench's ~500 instructions per page-cache read, by
/// callgrind). rustix's clock_gettime would parse the vDSO itself, which
/// crashes under valgrind; glibc's does not. u64 ns since boot last 584 years.
#[cfg(unix)]
#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to fill; CLOCK_MONOTONIC always
    // exists on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Windows: nanoseconds since the first call, from `Instant`
/// (QueryPerformanceCounter), one origin shared by every thread.
#[cfg(windows)]
#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    ORIGIN
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}
