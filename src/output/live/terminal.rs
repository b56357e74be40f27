//! What a person sees while a run goes: a fill bar and one live status line
//! on a terminal; when stderr is not a terminal (a CI log), one plain line
//! every `--progress-interval`; every interval with `--verbose`, nothing
//! but the result with `--quiet`. No colour is ever written, so NO_COLOR
//! holds. A run on many hosts adds a row per host under the status line
//! (`hosts.rs`).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::events::{IntervalEvent, Observer, Progress, Scope};
use crate::output::fmt;
use crate::plan::PlannedRun;
use crate::result::RunResult;
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

impl Progress for TerminalObserver {
    fn start(&self, total_bytes: u64, what: &str) {
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

    fn advance(&self, bytes: u64) {
        self.with_bar(|b| b.inc(bytes));
    }

    fn finish(&self) {
        self.set_bar(None);
    }
}

impl Observer for TerminalObserver {
    fn note(&self, message: &str) {
        self.print(&format!("note: {message}"));
    }

    fn run_started(&self, index: usize, count: usize, run: &PlannedRun) {
        if let Ok(mut board) = self.board.lock() {
            board.new_run();
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
        if self.verbose || self.plain_due() {
            self.print(&format!(
                "{} {} {:.0}/{:.0}s{}",
                run.spec.name,
                iv.phase,
                elapsed_s,
                total_s,
                rates(iv)
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
        let left = (total_s - elapsed_s).max(0.0);
        let mut msg = format!("  {:<7} {:>5.0}s left |", iv.phase, left);
        for name in crate::result::Op::ALL {
            let op = iv.op(name);
            if op.iops > 0.0 {
                msg.push_str(&format!(
                    " {name} {} IOPS {} MiB/s {} |",
                    fmt::thousands(op.iops),
                    fmt::mib_s(op.mib_s),
                    fmt::micros(op.lat_us_mean)
                ));
            }
        }
        self.with_bar(|b| {
            b.set_position((elapsed_s * 1000.0) as u64);
            b.set_message(self.with_board(&msg));
        });
    }

    fn host_state(&self, host: &str, state: &str) {
        if let Ok(mut board) = self.board.lock() {
            board.state(host, state);
        }
    }

    fn run_finished(&self, _run: &RunResult) {
        self.set_bar(None);
    }
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
