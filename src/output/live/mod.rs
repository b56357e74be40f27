//! Views made while a run goes, each an `events::Observer`: the terminal
//! (`terminal.rs`), `--live`/`--live-csv` (`lines.rs`) and
//! `--metrics-listen` (`metrics.rs`, served by `serve.rs`). `observers` builds the `Tee` a
//! command hands the runner, checking every flag and opening every file
//! and port before any I/O.

mod hosts;
pub(crate) mod lines;
pub(crate) mod metrics;
mod serve;
pub(crate) mod terminal;

use crate::error::Result;
use crate::events::Tee;
use crate::spec::live::LiveSpec;

/// The observers the spec asks for, the terminal first.
/// `protocol`: the job's targets are reached by a protocol client (the
/// CSV's protocol columns).
pub(crate) fn observers(a: &LiveSpec, protocol: bool) -> Result<Tee> {
    let mut tee = Tee::new();
    let mut said = Vec::new();
    let mut rest: Vec<Box<dyn crate::events::Observer>> = Vec::new();
    if let Some(addr) = a.metrics {
        let (exp, addr) = metrics::Exporter::listen(addr, a.quiet)?;
        said.push(format!(
            "metrics: http://{addr}/metrics{}",
            if addr.ip().is_loopback() {
                " (this host only: --metrics-listen 0.0.0.0:PORT serves the network)"
            } else {
                ""
            }
        ));
        rest.push(Box::new(exp));
    }
    if let Some(p) = &a.lines {
        let out = crate::output::file::create_stream(p, "--live")?;
        rest.push(Box::new(lines::Lines::new(
            out,
            lines::Format::Json,
            "--live",
            protocol,
        )));
    }
    if let Some(p) = &a.csv {
        let out = crate::output::file::create_stream(p, "--live-csv")?;
        rest.push(Box::new(lines::Lines::new(
            out,
            lines::Format::Csv,
            "--live-csv",
            protocol,
        )));
    }
    tee.push(Box::new(terminal::TerminalObserver::with(
        !a.quiet,
        a.verbose,
        Some(a.progress_every),
    )));
    for o in rest {
        tee.push(o);
    }
    if !a.quiet {
        for l in said {
            crate::console::errln!("{l}");
        }
    }
    Ok(tee)
}
