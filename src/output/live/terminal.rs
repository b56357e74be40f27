//! What a person sees while a run goes: a fill bar and one live status line
//! on a terminal; when stderr is not a terminal (a CI log), one plain line
//! every `--progress-interval`; every interval with `--verbose`, nothing
//! but the result with `--quiet`. No colour is ever written, so NO_COLOR
//! holds. A run on many hosts adds a row per host under the status line
//! (`hosts.rs`).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::events::{Event, IntervalEvent, Observer, Scope};
use crate::output::fmt;
use crate::plan::PlannedRun;
use crate::units::format_duration;

pub(crate) struct TerminalObserver {
    bar: Mutex<Option<ProgressBar>>,
    live: bool,
    /// Print notes and per-run lines (off with --quiet).
    chatty: bool,
    /// Every interval as a line (--verbose).
    verbose: bool,
    /// Off a terminal: a plain line this often, and when the last was.
    plain: Option<(Duration, Mutex<Option<Instant>>)>,
    /// Each host's own figures, in a run on many hosts.
    board: Mutex<super::hosts::Board>,
    /// Seconds into the run when its measured phase began (a steady-state
    /// warm-up ends early), so `measure 3/5s` counts measured time only.
    measure_from: Mutex<Option<f64>>,
}

impl TerminalObserver {
    /// `chatty` false: no bar, notes or lines at all; `plain_every` None:
    /// no plain lines off a terminal.
    pub(crate) fn with(chatty: bool, verbose: bool, plain_every: Option<Duration>) -> Self {
        Self {
            bar: Mutex::new(None),
            live: chatty && crate::console::stderr_is_terminal(),
            chatty,
            verbose: chatty && verbose,
            plain: plain_every
                .filter(|d| chatty && !d.is_zero())
                .map(|d| (d, Mutex::new(None))),
            board: Mutex::new(super::hosts::Board::default()),
            measure_from: Mutex::new(None),
        }
    }

    /// Whether a plain progress line is due: off a terminal, once per
    /// period (the first interval starts the clock).
    fn plain_due(&self) -> bool {
        if self.live || self.verbose {
            return false;
        }
        let Some((every, last)) = &self.plain else {
            return false;
        };
        let Ok(mut last) = last.lock() else {
            return false;
        };
        let now = Instant::now();
        match *last {
            Some(t) if now.duration_since(t) < *every => false,
            Some(_) => {
                *last = Some(now);
                true
            }
            None => {
                *last = Some(now);
                false
            }
        }
    }

    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        let guard = self.bar.lock();
        if let Some(bar) = guard.as_ref().ok().and_then(|g| g.as_ref()) {
            f(bar);
        }
    }

    fn set_bar(&self, bar: Option<ProgressBar>) {
        if let Ok(mut guard) = self.bar.lock() {
            if let Some(old) = guard.take() {
                old.finish_and_clear();
            }
            *guard = bar;
        }
    }

    fn new_bar(&self, len: u64, template: &str) -> ProgressBar {
        let target = if self.live {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(len), target);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    }

    /// The status line `msg` (its first line), then the hosts' frame when
    /// the run has several hosts.
    fn with_board(&self, msg: &str) -> String {
        let status = msg.lines().next().unwrap_or_default();
        let Ok(board) = self.board.lock() else {
            return status.to_string();
        };
        if !board.many() {
            return status.to_string();
        }
        // Host names come from the user's files.
        let frame = crate::output::fmt::terminal(&board.frame().join("\n")).into_owned();
        format!("{status}\n{frame}")
    }

    fn print(&self, line: &str) {
        if !self.chatty {
            return;
        }
        // Notes carry hosts' messages and names from files.
        let line = &*crate::output::fmt::terminal(line);
        let mut printed = false;
        self.with_bar(|b| {
            // A hidden bar (stderr not a terminal) prints nothing: a note
            // in the middle of a run would be lost.
            if self.live {
                b.println(line);
                printed = true;
            }
        });
        if !printed {
            crate::console::errln!("{line}");
        }
    }
}

impl Observer for TerminalObserver {
    fn on(&self, ev: &Event<'_>) {
        match ev {
            Event::Note(m) => self.print(&format!("note: {m}")),
            Event::FillStarted { total_bytes, what } => self.fill_started(*total_bytes, what),
            Event::FillAdvanced { bytes } => self.with_bar(|b| b.inc(*bytes)),
            Event::FillFinished | Event::RunFinished(_) => self.set_bar(None),
            Event::RunStarted { index, count, run } => self.run_started(*index, *count, run),
            // The bar runs from the run's start; the I/O's own start is
            // for the live exporters and the coordinator.
            Event::IoStarted { .. } => {}
            Event::Interval(iv) => self.interval(iv),
            Event::HostState { host, state } => {
                if let Ok(mut board) = self.board.lock() {
                    board.state(host, state);
                }
            }
        }
    }
}

impl TerminalObserver {
    fn fill_started(&self, total_bytes: u64, what: &str) {
        self.print(&format!(
            "{what} the file set: {}",
            crate::units::format_size(total_bytes)
        ));
        let bar = self.new_bar(
            total_bytes,
            "{msg:8} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        );
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        self.set_bar(Some(bar));
    }

    fn run_started(&self, index: usize, count: usize, run: &PlannedRun) {
        if let Ok(mut board) = self.board.lock() {
            board.new_run();
        }
        if let Ok(mut m) = self.measure_from.lock() {
            *m = None;
        }
        let s = &run.spec;
        if let Some(m) = s.meta.as_ref().filter(|m| m.whole_tree) {
            // A phase ends when it has covered the tree; its time is a cap.
            self.print(&format!(
                "[{}/{}] {}: {} over the whole tree ({} files of {}), {} threads{}",
                index + 1,
                count,
                s.name,
                m.ops_label(),
                crate::output::fmt::thousands(m.total_files() as f64),
                m.size_label(),
                s.threads,
                if m.shared_dirs {
                    " in shared directories"
                } else {
                    ""
                }
            ));
            self.set_bar(Some(self.new_bar(u64::MAX, "{msg}")));
            return;
        }
        self.print(&format!(
            "[{}/{}] {}: {} threads x iodepth {}, {} engine, warm-up {} + {}",
            index + 1,
            count,
            s.name,
            s.threads,
            s.iodepth,
            run.engine.name(),
            format_duration(Duration::from_secs_f64(s.warmup_s)),
            format_duration(Duration::from_secs_f64(s.duration_s)),
        ));
        let total_ms = ((s.warmup_s + s.duration_s) * 1000.0) as u64;
        let bar = self.new_bar(total_ms, "{msg}");
        self.set_bar(Some(bar));
    }

    fn interval(&self, ev: &IntervalEvent<'_>) {
        // The terminal shows the run as a whole; the parts are for the
        // live exporters, and for --verbose.
        if let Scope::Part { host, target } = ev.scope {
            if self.verbose {
                self.print(&format!("  {host} {target}{}", rates(ev.iv)));
            }
            // On a terminal, each host's row changes as its figures come:
            // a host that falls behind shows before any total would.
            if self.live {
                if let Ok(mut board) = self.board.lock() {
                    board.part(host, target, ev.iv);
                }
                self.with_bar(|b| b.set_message(self.with_board(&b.message())));
            }
            return;
        }
        let (run, elapsed_s, total_s, iv) = (ev.run, ev.elapsed_s, ev.total_s, ev.iv);
        let phase = self.phase_clock(run, elapsed_s, iv);
        if self.verbose || self.plain_due() {
            self.print(&format!(
                "{}: {}",
                run.spec.name,
                status_line(&phase, elapsed_s, total_s, iv)
            ));
        }
        if run.spec.meta.as_ref().is_some_and(|m| m.whole_tree) {
            // The bar's position counts the operations done so far, so a
            // tree of millions of files shows how far it has come.
            let iops = iv.read.iops + iv.write.iops;
            let done_now = (iops * iv.duration_s).round().max(0.0) as u64;
            self.with_bar(|b| {
                b.inc(done_now);
                b.set_message(format!(
                    "  {:<7} {:>5.0}s | {} ops/s | {} done |",
                    iv.phase,
                    elapsed_s,
                    crate::output::fmt::thousands(iops),
                    crate::output::fmt::thousands(b.position() as f64)
                ));
            });
            return;
        }
        let msg = status_line(&phase, elapsed_s, total_s, iv);
        self.with_bar(|b| {
            b.set_position((elapsed_s * 1000.0) as u64);
            b.set_message(self.with_board(&msg));
        });
    }
}

impl TerminalObserver {
    /// Where the run is within its phase: ("warmup", 2, 2) or ("measure",
    /// 3, 5), the measured seconds counted from the phase's first interval.
    fn phase_clock(&self, run: &PlannedRun, elapsed_s: f64, iv: &crate::result::Interval) -> Clock {
        let s = &run.spec;
        match iv.phase {
            crate::result::PhaseName::Warmup => Clock {
                phase: iv.phase.name(),
                done_s: elapsed_s,
                of_s: s.warmup_s,
            },
            crate::result::PhaseName::Measure => Clock {
                phase: iv.phase.name(),
                done_s: self.measure_from.lock().map_or(elapsed_s, |mut m| {
                    measured_s(&mut m, elapsed_s, iv.duration_s)
                }),
                of_s: s.duration_s,
            },
        }
    }
}

/// Seconds measured so far: from the start of the first measured
/// interval (`from`, set by it), not from the run's start.
fn measured_s(from: &mut Option<f64>, elapsed_s: f64, interval_s: f64) -> f64 {
    let start = *from.get_or_insert((elapsed_s - interval_s).max(0.0));
    (elapsed_s - start).max(0.0)
}

/// A phase's clock for the status line.
pub(crate) struct Clock {
    pub(crate) phase: &'static str,
    pub(crate) done_s: f64,
    pub(crate) of_s: f64,
}

/// The width a status line keeps within: an 80-column terminal, less one
/// for the cursor.
pub(crate) const STATUS_WIDTH: usize = 79;

/// The live status line: the phase and its seconds, the run's percentage
/// done, IOPS and MiB/s over every operation, the mean latency, and each
/// operation's p99 over the interval (its own histogram). Made to fit
/// `STATUS_WIDTH`: the mean goes first, then the per-operation p99s, when
/// the figures are wide.
pub(crate) fn status_line(
    clock: &Clock,
    elapsed_s: f64,
    total_s: f64,
    iv: &crate::result::Interval,
) -> String {
    let pct = if total_s > 0.0 {
        (elapsed_s / total_s * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    };
    let head = format!(
        "{} {:.0}% {:.0}/{:.0}s",
        clock.phase,
        pct.floor(),
        // An interval may end a moment past the phase's length.
        if clock.of_s > 0.0 {
            clock.done_s.min(clock.of_s)
        } else {
            clock.done_s
        },
        clock.of_s
    );
    let ops: Vec<(crate::result::Op, &crate::result::IntervalOp)> = crate::result::Op::ALL
        .into_iter()
        .map(|o| (o, iv.op(o)))
        .filter(|(_, op)| op.iops > 0.0)
        .collect();
    if ops.is_empty() {
        return head;
    }
    let iops: f64 = ops.iter().map(|(_, o)| o.iops).sum();
    let mib: f64 = ops.iter().map(|(_, o)| o.mib_s).sum();
    let mean = ops.iter().map(|(_, o)| o.iops * o.lat_us_mean).sum::<f64>() / iops;
    let rates = format!("{} IOPS {} MiB/s", fmt::thousands(iops), fmt::mib_s(mib));
    let p99s: Vec<String> = ops
        .iter()
        .filter_map(|(name, o)| {
            let ns = crate::stats::live_hist::sparse_percentile(&o.lat_hist, 99.0)?;
            let us = fmt::micros(ns / 1e3);
            let initial = match name {
                crate::result::Op::Read => "r",
                crate::result::Op::Write => "w",
            };
            Some(if ops.len() > 1 {
                format!("{initial} {us}")
            } else {
                us
            })
        })
        .collect();
    let p99 = (!p99s.is_empty()).then(|| format!("p99 {}", p99s.join(" ")));
    let mean = format!("mean {}", fmt::micros(mean));
    let candidates = [
        [Some(mean.clone()), p99.clone()],
        [None, p99],
        [Some(mean), None],
        [None, None],
    ];
    let mut line = String::new();
    for lat in candidates {
        let lat: Vec<String> = lat.into_iter().flatten().collect();
        line = if lat.is_empty() {
            format!("{head} | {rates}")
        } else {
            format!("{head} | {rates} | {}", lat.join(" "))
        };
        if line.chars().count() <= STATUS_WIDTH {
            break;
        }
    }
    line
}

/// " | read 1,234 IOPS 4.8 MiB/s 210 µs | write ..." for the ops that ran.
fn rates(iv: &crate::result::Interval) -> String {
    let mut msg = String::new();
    for name in crate::result::Op::ALL {
        let op = iv.op(name);
        if op.iops > 0.0 {
            msg.push_str(&format!(
                " | {name} {} IOPS {} MiB/s {}",
                fmt::thousands(op.iops),
                fmt::mib_s(op.mib_s),
                fmt::micros(op.lat_us_mean)
            ));
        }
    }
    msg
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::result::{Interval, IntervalOp, PhaseName};

    fn op(iops: f64, mib_s: f64, mean_us: f64, p99_us: u64) -> IntervalOp {
        IntervalOp {
            iops,
            mib_s,
            lat_us_mean: mean_us,
            service_us_mean: None,
            // 98 I/Os at the mean, 2 at the p99's bucket.
            lat_hist: vec![[(mean_us as u64) * 1000, 98], [p99_us * 1000, 2]],
        }
    }

    fn iv(read: IntervalOp, write: IntervalOp) -> Interval {
        Interval {
            t_s: 0.0,
            duration_s: 1.0,
            phase: PhaseName::Measure,
            read,
            write,
            meta_ops: Vec::new(),
        }
    }

    #[test]
    fn the_status_line_shows_percent_and_p99_within_80_columns() {
        let clock = Clock {
            phase: "measure",
            done_s: 3.0,
            of_s: 5.0,
        };
        let one = status_line(
            &clock,
            5.0,
            7.0,
            &iv(op(41_389.0, 323.4, 1030.0, 2730), IntervalOp::default()),
        );
        assert!(
            one.starts_with("measure 71% 3/5s | 41,389 IOPS 323.4 MiB/s"),
            "{one}"
        );
        assert!(
            one.contains("mean 1.03 ms") && one.contains("p99 2."),
            "{one}"
        );
        // The widest figures a run gives, both directions: still one line
        // of an 80-column terminal, the p99s kept before the mean.
        let wide = Clock {
            phase: "warmup",
            done_s: 3599.0,
            of_s: 3600.0,
        };
        let both = status_line(
            &wide,
            3599.0,
            7200.0,
            &iv(
                op(9_876_543.0, 38_580.2, 999_999.0, 9_000_000),
                op(9_876_543.0, 38_580.2, 999_999.0, 9_000_000),
            ),
        );
        assert!(
            both.chars().count() <= STATUS_WIDTH,
            "{} columns: {both}",
            both.chars().count()
        );
        assert!(both.contains("p99 r ") && both.contains(" w "), "{both}");
        assert!(both.contains("49%"), "{both}");
        // Nothing done yet: the phase and its clock alone.
        let idle = status_line(
            &clock,
            0.0,
            7.0,
            &iv(IntervalOp::default(), IntervalOp::default()),
        );
        assert_eq!(idle, "measure 0% 3/5s");
    }

    #[test]
    fn measured_seconds_start_when_the_measured_phase_does() {
        // A 2 s warm-up then 1 s intervals: the first measured interval
        // ends at 3 s and is the first measured second, not the third.
        let mut from = None;
        assert_eq!(measured_s(&mut from, 3.0, 1.0), 1.0);
        assert_eq!(measured_s(&mut from, 4.0, 1.0), 2.0);
        // A steady-state warm-up that ended early at 1.5 s.
        let mut from = None;
        assert_eq!(measured_s(&mut from, 2.5, 1.0), 1.0);
        assert_eq!(measured_s(&mut from, 6.5, 1.0), 5.0);
    }
}
