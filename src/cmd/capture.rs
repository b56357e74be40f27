//! `volbench capture`: watch the host's counters while production runs and
//! write the profile; and `report PROFILE`, the profile's tables.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::error::{Result, VbError, exit};
use crate::input::args::capture::CaptureArgs;
use crate::input::args::{ReportArgs, ReportFormat};
use crate::io::capture::{Capture, Watch};
use crate::output::file::{check_new_file, write_new_file};
use crate::output::profile;
use crate::result::profile::Profile;
use crate::units::bounds::{
    MAX_CAPTURE_DURATION, MAX_CAPTURE_INTERVALS, MAX_INTERVAL, MAX_PROFILE_FILE, MAX_TRACE_PENDING,
    MIN_CAPTURE_DURATION, MIN_CAPTURE_INTERVAL,
};
use crate::units::parse_duration_in;

pub(crate) fn cmd_capture(a: &CaptureArgs) -> Result<i32> {
    // The capture reads /proc and /sys, the trace the kernel's block
    // tracepoints; Windows has neither (its ETW is another format).
    if cfg!(windows) {
        return Err(VbError::input(if a.trace {
            "capture --trace is Linux-only (it reads the kernel's block tracepoints through tracefs)"
        } else {
            "capture is Linux-only (it reads /proc and /sys); on Windows, Perfmon records the same counters"
        }));
    }
    if a.trace {
        return cmd_capture_trace(a);
    }
    let duration = parse_duration_in(
        "--duration",
        &a.duration,
        MIN_CAPTURE_DURATION,
        MAX_CAPTURE_DURATION,
    )?;
    let interval = parse_duration_in(
        "--interval",
        &a.interval,
        MIN_CAPTURE_INTERVAL,
        MAX_INTERVAL,
    )?;
    if interval > duration {
        return Err(VbError::input(format!(
            "--interval {} is longer than --duration {}",
            a.interval, a.duration
        )));
    }
    let count = duration.as_secs_f64() / interval.as_secs_f64();
    if count > MAX_CAPTURE_INTERVALS as f64 {
        return Err(VbError::input(format!(
            "--duration {} at --interval {} is {} intervals; at most {MAX_CAPTURE_INTERVALS} \
             (a longer --interval)",
            a.duration,
            a.interval,
            count.ceil()
        )));
    }
    check_new_file(&a.output)?;
    let watch = Watch::resolve(&a.devices, &a.mounts)?;
    // Caught from here on: a stop ends the capture and still writes it.
    let stop = super::stop_flag()?;
    let mut what = watch.devices.clone();
    what.extend(watch.mounts.iter().map(|m| format!("NFS {m}")));
    crate::console::errln!(
        "capture: watching {} for {}, every {}; no I/O is done. Ctrl-C ends it early and keeps what was seen.",
        what.join(", "),
        a.duration,
        a.interval
    );
    let total = duration.as_secs_f64();
    let cap = Capture {
        watch: &watch,
        duration,
        interval,
        stop: &stop as &AtomicBool,
    };
    let prof = cap.run(&mut |iv| crate::console::errln!("{}", profile::progress_line(iv, total)));
    let json = serde_json::to_string_pretty(&prof)
        .map_err(|e| VbError::run(format!("cannot encode the profile: {e}")))?;
    write_new_file(&a.output, format!("{json}\n").as_bytes())?;
    if !crate::output::file::is_stdout(&a.output) {
        for t in profile::tables(&prof) {
            crate::console::outln!("{}\n", t.to_terminal());
        }
        crate::console::errln!("capture: profile written to {}", a.output.display());
    }
    Ok(if prof.stopped.is_some() {
        exit::INTERRUPTED
    } else {
        exit::OK
    })
}

/// `capture --trace`: every request of one device from the block
/// tracepoints into a volbench trace. The input is checked and the output
/// created before tracefs is touched; the instance is removed however the
/// capture ends (the end, an error, a stop, a second signal).
fn cmd_capture_trace(a: &CaptureArgs) -> Result<i32> {
    use crate::io::capture::tracefs;
    let duration = parse_duration_in(
        "--duration",
        &a.duration,
        MIN_CAPTURE_DURATION,
        MAX_CAPTURE_DURATION,
    )?;
    let dev = match a.devices.as_slice() {
        [d] => tracefs::device(d)?,
        _ => {
            return Err(VbError::input(format!(
                "capture --trace records one device; {} --device given",
                a.devices.len()
            )));
        }
    };
    check_new_file(&a.output)?;
    tracefs::ensure_mounted()?;
    // What a capture killed mid-way left tracing is removed (or named).
    for line in tracefs::sweep_stale() {
        crate::console::errln!("{line}");
    }
    let stop = super::stop_flag()?;
    // The instance first: a kernel that refuses it leaves no empty file.
    let inst = tracefs::Instance::create(&dev)?;
    let out = crate::output::file::create_stream(&a.output, "-o")?;
    let path = inst.path.clone();
    super::stop::on_exit(Box::new(move || tracefs::remove(&path)));
    let recorded = inst.record(
        &dev.name,
        duration,
        &stop as &AtomicBool,
        std::io::BufWriter::new(out),
        MAX_TRACE_PENDING,
        || {
            crate::console::errln!(
                "capture: tracing every request of {} for {} (tracefs instance {}); no I/O is \
                 done. Ctrl-C ends it early and keeps what was seen.",
                dev.name,
                a.duration,
                inst.path.display()
            )
        },
    );
    drop(inst);
    super::stop::cleanup();
    let (t, stopped) = recorded?;
    let line = trace_summary(&dev.name, &t);
    if crate::output::file::is_stdout(&a.output) {
        crate::console::errln!("{line}");
    } else {
        crate::console::outln!("{line}");
        crate::console::errln!("capture: trace written to {}", a.output.display());
    }
    Ok(if stopped { exit::INTERRUPTED } else { exit::OK })
}

/// The line a trace ends with: requests by op, bytes, mean latency, and
/// whatever was not recorded whole.
fn trace_summary(device: &str, t: &crate::io::capture::trace::Totals) -> String {
    let [r, w, f, d] = t.requests;
    let mut s = format!(
        "capture: {device}: {} requests ({r} reads, {w} writes, {f} flushes, {d} discards), {} bytes \
         ({} read, {} written), mean latency {}",
        t.all(),
        t.bytes.iter().sum::<u64>(),
        t.bytes[0],
        t.bytes[1],
        t.mean_latency_ms()
            .map_or("-".to_string(), |m| format!("{m:.3} ms"))
    );
    let notes = [
        (t.uncompleted, "not completed by the end"),
        (
            t.evicted,
            "written without completion past the in-memory bound",
        ),
        (
            t.unmatched,
            "completions of requests issued before the start",
        ),
        (t.other, "requests with no data op (N) left out"),
        (t.lost, "events lost by the kernel's buffer"),
    ];
    for (n, what) in notes {
        if n > 0 {
            s.push_str(&format!("; {n} {what}"));
        }
    }
    s
}

/// The profile at `path`, if the file is one (its schema says so): read
/// capped, refused by name when it is a newer profile.
pub(crate) fn load_profile(path: &Path) -> Result<Option<Profile>> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = crate::input::file::read_text(path, "profile", MAX_PROFILE_FILE)?;
    let looks = text
        .get(..text.len().min(4096))
        .is_some_and(|head| head.contains("\"volbench.profile/"));
    if !looks {
        return Ok(None);
    }
    Profile::from_json(&text, &path.display().to_string())
        .map(Some)
        .map_err(VbError::input)
}

/// `report PROFILE`: the HTML page (beside the profile unless -o says
/// where), or its tables as Markdown or the profile itself as JSON.
pub(crate) fn report_profile(a: &ReportArgs, path: &Path, p: &Profile) -> Result<i32> {
    let text = match a.format {
        ReportFormat::Html => crate::report::profile::profile_html(p)?,
        ReportFormat::Md => profile::tables(p)
            .iter()
            .map(|t| t.to_markdown())
            .collect::<Vec<_>>()
            .join("\n"),
        ReportFormat::Json => {
            serde_json::to_string_pretty(p)
                .map_err(|e| VbError::run(format!("cannot encode the profile: {e}")))?
                + "\n"
        }
        ReportFormat::Csv
        | ReportFormat::FioJson
        | ReportFormat::IntervalsCsv
        | ReportFormat::LatencyBuckets => {
            return Err(VbError::input(format!(
                "{} is a profile: it reports as html, md or json (the other formats are views of results)",
                path.display()
            )));
        }
    };
    let out = match (&a.output, a.format) {
        (Some(o), _) => Some(o.clone()),
        (None, ReportFormat::Html) => Some(path.with_extension("html")),
        (None, _) => None,
    };
    match out {
        Some(o) => {
            crate::output::file::write_file(&o, text.as_bytes())?;
            if !crate::output::file::is_stdout(&o) {
                crate::console::errln!("report: {}", o.display());
            }
        }
        None => crate::console::out!("{text}"),
    }
    Ok(exit::OK)
}
