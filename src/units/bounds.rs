//! The stated limits of every number and text a user can give. A value
//! outside them is refused before any I/O, with the limit in the message,
//! so no later arithmetic, allocation or `Duration` conversion can overflow
//! or panic. `docs/reference/bounds.md` lists the same numbers.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::Duration;

use crate::error::{Result, VbError};
use crate::units::{format_duration, format_size};

const DAY: u64 = 86_400;

/// --duration: long enough for any soak test, short enough that adding
/// warm-ups and runs can never overflow a clock.
pub const MIN_DURATION: Duration = Duration::from_millis(1);
pub const MAX_DURATION: Duration = Duration::from_secs(30 * DAY);
/// --warmup (0 = none).
pub const MAX_WARMUP: Duration = Duration::from_secs(30 * DAY);
/// --interval: the collector's tick; below 50ms it measures itself.
pub const MIN_INTERVAL: Duration = Duration::from_millis(50);
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);
/// --progress-interval (0 = no plain progress lines): a day between lines
/// is as good as none.
pub const MAX_PROGRESS_INTERVAL: Duration = Duration::from_secs(86_400);
/// --metrics-listen's port: the unprivileged ones. A benchmark run as root
/// must not take a system service's port without being noticed.
pub const MIN_METRICS_PORT: u16 = 1024;
/// `/metrics`: connections served at once (one thread each); past it a
/// client gets 503 at once, so a crowd of idle clients costs at most this
/// many threads and never blinds the endpoint for longer than a deadline.
pub const METRICS_MAX_CONNECTIONS: usize = 16;
/// `/metrics`: a request's line and headers arrive within this, or 408.
pub const METRICS_REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// `/metrics`: the answer is taken within this, or the connection closes.
pub const METRICS_RESPONSE_DEADLINE: Duration = Duration::from_secs(10);
/// `/metrics`: a request's head (line and headers) at most this many bytes
/// and header lines, or 431.
pub const METRICS_MAX_HEAD_BYTES: usize = 16 << 10;
pub const METRICS_MAX_HEADERS: usize = 64;
/// `/metrics` after the run: up until one more scrape has read the final
/// figures, for at most one scrape interval as seen during the run plus a
/// second, this long when fewer than two scrapes came, never longer than
/// `METRICS_MAX_LINGER`.
pub const METRICS_LINGER: Duration = Duration::from_secs(5);
pub const METRICS_MAX_LINGER: Duration = Duration::from_secs(30);
/// --host-timeout.
pub const MIN_HOST_TIMEOUT: Duration = Duration::from_secs(1);
pub const MAX_HOST_TIMEOUT: Duration = Duration::from_secs(3600);
/// A latency a user states (plan --latency, a suite's curve_stop_latency).
pub const MIN_LATENCY: Duration = Duration::from_nanos(100);
pub const MAX_LATENCY: Duration = Duration::from_secs(3600);

/// --size and --io-limit: 8 PiB, far beyond any volume, and exact in f64.
pub const MAX_SIZE: u64 = 1 << 53;
/// One block (--bs): each in-flight I/O owns a buffer this large.
pub const MAX_BS: u64 = 1 << 30;
/// Entries in one weighted block-size mix, and each weight.
pub const MAX_BS_MIX: usize = 64;
pub const MAX_BS_WEIGHT: u64 = 1_000_000;
/// --threads and --iodepth each.
pub const MAX_THREADS: u64 = 4096;
pub const MAX_IODEPTH: u64 = 4096;
/// --nfs-connections (an nfs:// URL's nconnect=): TCP connections one
/// I/O thread's client opens (Linux's nconnect stops at 16).
pub const MAX_NFS_CONNECTIONS: u64 = 64;
/// An nfs:// URL's reconnect=SECONDS: how long a lost server is dialled
/// again (every 50 ms, doubling to 1 s) before its calls fail and the run
/// ends; 60 s when not given (a restarted server answers well within it).
pub const MAX_NFS_RECONNECT_SECS: u64 = 3600;
pub const DEFAULT_NFS_RECONNECT_SECS: u64 = 60;
/// Connections a run's result lists one by one (`runs[].protocol.
/// per_connection`): 64 threads of 16; the sums count every one.
pub const MAX_PROTOCOL_CONNS_LISTED: usize = 1024;
/// --smb-channels (an smb:// URL's channels=): channels bound to one I/O
/// thread's SMB session (Windows' MaxChannelPerSession is 32).
pub const MAX_SMB_CHANNELS: u64 = 32;
// A live line's channels and connections are bounded by the larger.
const _: () = assert!(crate::stats::live_links::MAX_LINKS as u64 >= MAX_SMB_CHANNELS);
const _: () = assert!(crate::stats::live_links::MAX_LINKS as u64 >= MAX_NFS_CONNECTIONS);
/// An smb:// URL's reconnect=SECONDS: how long a lost server is dialled
/// again (every 50 ms, doubling to 1 s: a new session, its channels, the
/// share, each file reopened and proven) before the run ends; NFS's bound
/// and default.
pub const MAX_SMB_RECONNECT_SECS: u64 = MAX_NFS_RECONNECT_SECS;
pub const DEFAULT_SMB_RECONNECT_SECS: u64 = DEFAULT_NFS_RECONNECT_SECS;
/// threads x iodepth: I/Os in flight on one host.
pub const MAX_IN_FLIGHT: u64 = 65_536;
/// OS threads one host may start: a synchronous engine needs one per I/O
/// in flight (threads x iodepth).
pub const MAX_IO_THREADS: u64 = 4096;
/// Per-thread rows a run keeps in result.json (`runs[].threads[]`), across
/// its targets and hosts; past it the first are kept and the rest counted.
pub const MAX_KEPT_THREADS: usize = 1024;
/// threads x iodepth x largest block: the I/O buffers held at once.
pub const MAX_BUFFER_BYTES: u64 = 4 << 30;
/// --vm-size and a hosts file's vm_size=: a name shown in tables; a
/// host's OS name is cut to it.
pub const MAX_VM_SIZE_LEN: usize = 64;
/// --files: each I/O thread opens every file of the set.
pub const MAX_FILES: u64 = 65_536;
/// A metadata run's tree (`--depth`, `--width`, `--files-per-dir`, a
/// suite's or an imported fsd's): its index arithmetic stays in u64, and
/// its files on one host stay within what a share's inodes and a day of
/// creates hold (ten million; vdbench allows 32 million per fsd). Many
/// hosts each make a tree of their own.
pub const MAX_TREE_DEPTH: u32 = 16;
pub const MAX_TREE_WIDTH: u32 = 100_000;
pub const MAX_TREE_FILES: u64 = 10_000_000;
/// The largest file of a tree's size mix: each worker holds one buffer
/// this size.
pub const MAX_TREE_FILE_SIZE: u64 = 1 << 30;
/// --rate, IOPS across all threads.
pub const MIN_RATE: f64 = 0.01;
pub const MAX_RATE: f64 = 1e9;
/// A curve's rate as a percentage of the measured maximum.
pub const MIN_RATE_PCT: f64 = 0.1;
pub const MAX_RATE_PCT: f64 = 1000.0;
/// A latency percentile (`--latency-target p99.9=2ms`): above 0, at most
/// 100 (the slowest I/O).
pub const MAX_PERCENTILE: f64 = 100.0;
/// Limits in one `--latency-target` (or a curve's stop), all of which hold.
pub const MAX_LATENCY_LIMITS: usize = 16;
/// --search-steps: runs one latency search may make (closed loop and
/// confirmation included); 3 is the least that bisects at all.
pub const MIN_SEARCH_STEPS: u64 = 3;
pub const MAX_SEARCH_STEPS: u64 = 40;
/// --search-precision: how close, in % of the closed-loop maximum, the
/// passing and failing rates must come before the search confirms.
pub const MIN_SEARCH_PRECISION_PCT: f64 = 0.1;
pub const MAX_SEARCH_PRECISION_PCT: f64 = 50.0;
/// A suite's until_gain_below, percent.
pub const MIN_GAIN_PCT: f64 = 0.01;
pub const MAX_GAIN_PCT: f64 = 1000.0;
/// Points of one swept value, and runs in one job after crossing them.
pub const MAX_SWEEP_POINTS: usize = 10_000;
pub const MAX_RUNS: usize = 10_000;
/// Targets of one host after brace expansion (`--target '/mnt/x{0..9}'`),
/// locally and on each host of a multi-host run.
pub const MAX_TARGETS: usize = 256;
/// Hosts in one multi-host run (and plan --hosts).
pub const MAX_HOSTS: usize = 1024;
/// A host name, in bytes: a DNS name is at most 253, and OpenSSH's own
/// buffer for one (NI_MAXHOST) 1025 with its NUL; room for `user@` and an
/// ssh_config alias, and a refusal that never quotes kilobytes of input.
pub const MAX_HOST_NAME_BYTES: usize = 1024;
/// plan --iops and --concurrency.
pub const MIN_PLAN_IOPS: f64 = 0.001;
pub const MAX_PLAN_IOPS: f64 = 1e12;
pub const MIN_PLAN_CONCURRENCY: f64 = 0.001;
pub const MAX_PLAN_CONCURRENCY: f64 = 1e9;
/// A run name (--name, a suite's run name), in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// `--store`'s path or URL, in bytes.
pub const MAX_PATH_TEXT: usize = 4096;
/// `history --limit`: runs one listing shows.
pub const MAX_HISTORY_LIMIT: u64 = 1_000_000;
/// A fio JSON output file `store import` reads (fio's own output of a
/// long job with per-job clat percentiles is a few MiB).
pub const MAX_FIO_JSON: u64 = 64 << 20;
/// A suite or hosts file: these are hand-written text, never large.
pub const MAX_INPUT_FILE: u64 = 1 << 20;
/// Files an include chain nests below the file given (a suite's
/// `[[include]]`, a fio or vdbench `include`), each read whole and at most
/// MAX_INPUT_FILE: deeper than any hand-built composition, and where a
/// cycle that renames itself stops.
pub const MAX_INCLUDE_DEPTH: usize = 8;
/// `--launch-parallel`: launches in flight at once (at most one a host).
pub const MAX_LAUNCH_PARALLEL: usize = MAX_HOSTS;
pub const DEFAULT_LAUNCH_PARALLEL: usize = 32;
/// `--k8s-job N`: the Job's pods, one agent each (as many as `--hosts`).
pub const MAX_K8S_PODS: usize = MAX_HOSTS;
/// Added to the runs' own time in a Job's `activeDeadlineSeconds`: the
/// pods' start, the targets' fill and the results' gathering, which have no
/// bound of their own. Past it Kubernetes ends the pods even when the
/// coordinator was killed before it could delete the Job.
pub const K8S_DEADLINE_MARGIN: Duration = Duration::from_secs(3600);
/// The least time a Job's pods get to be made and Ready (an image pull
/// takes longer than the 5 s `--host-timeout` a host's agent gets).
pub const K8S_MIN_START: Duration = Duration::from_secs(120);
/// The least time one kubectl call to the API server (apply, get, delete)
/// gets; it gets `--host-timeout` when that is longer. A credential plugin
/// may fetch a token first.
pub const K8S_MIN_API: Duration = Duration::from_secs(10);
/// `--k8s-requests` / `--k8s-limits`, in bytes: a few `NAME=QUANTITY` pairs.
pub const MAX_K8S_RESOURCES: usize = 256;
/// A Kubernetes name (namespace, Job): an RFC 1123 label.
pub const MAX_K8S_NAME: usize = 63;
/// `--k8s-image`, in bytes: a registry path and a tag or digest.
pub const MAX_K8S_IMAGE: usize = 1024;
/// A `--launcher` template, in bytes: a command line, not a script.
pub const MAX_LAUNCHER_BYTES: usize = 4096;
/// How long `--hosts-from`'s command may take: listing pods or nodes is
/// quick, and one that waits (a prompt, a lock) must not hang the run.
pub const HOSTS_FROM_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// --compress: a 512-byte sector keeps a 32-byte header, so 16:1 is the
/// most one sector can compress while every write stays distinguishable.
pub const MIN_COMPRESS: f64 = 1.0;
pub const MAX_COMPRESS: f64 = 16.0;
/// --dedup: copies of each distinct block.
pub const MAX_DEDUP: u64 = 1_000_000;
/// --dedup-unit: whole sectors, at most one --bs.
pub const MIN_DEDUP_UNIT: u64 = 512;
pub const MAX_DEDUP_UNIT: u64 = 1 << 20;
/// --verify keeps 4 bytes per block of the data set: at most 1 GiB of them.
pub const MAX_VERIFY_MAP_BYTES: u64 = 1 << 30;
/// --max-data-errors.
pub const MAX_DATA_ERRORS: u64 = 1_000_000;
/// --distribution zipf:THETA (fio takes any theta above 0; past 10 the
/// hottest block takes essentially all I/O) and pareto:H (strictly inside 0..1).
pub const MIN_ZIPF_THETA: f64 = 0.01;
pub const MAX_ZIPF_THETA: f64 = 10.0;
pub const MIN_PARETO_H: f64 = 0.01;
pub const MAX_PARETO_H: f64 = 0.99;
/// Zones of --distribution hot:IO/SPACE,... (fio's zoned takes a handful).
pub const MAX_HOT_ZONES: usize = 64;
/// --fsync-every N writes.
pub const MAX_FSYNC_EVERY: u64 = 1_000_000_000;
/// --think-time between I/Os of one thread.
pub const MAX_THINK_TIME: Duration = Duration::from_secs(3600);
/// --cooldown after measuring.
pub const MAX_COOLDOWN: Duration = Duration::from_secs(DAY);
/// --rate as a bandwidth, bytes/s across all threads (1 KiB/s..1 PiB/s).
pub const MIN_RATE_BYTES: f64 = 1024.0;
pub const MAX_RATE_BYTES: f64 = (1u64 << 50) as f64;
/// --expect iops= and mib_s= (and what a catalogue entry works out to):
/// below these, a measured figure over the limit (up to 10^10 IOPS) as a
/// percentage would overflow to infinity, which result.json cannot hold.
pub const MIN_EXPECT_IOPS: f64 = 0.01;
pub const MAX_EXPECT_IOPS: f64 = 1e9;
pub const MIN_EXPECT_MIB_S: f64 = 0.001;
pub const MAX_EXPECT_MIB_S: f64 = 1e9;
/// --fill-bs: one sector up to 64 MiB (each of up to 4 fill threads holds
/// one buffer of it).
pub const MIN_FILL_BS: u64 = 512;
pub const MAX_FILL_BS: u64 = 64 << 20;
/// Threads of the fill (`--fill-threads`, vdbench's `forthreads` on its
/// FillWrite): each writes one file at a time, so more than the files
/// never run.
pub const MAX_FILL_THREADS: u32 = 64;
/// --replay: the trace file is streamed (read twice, never held), so
/// memory stays flat; these cap what one replay may ask for. A trace of
/// more requests or bytes than this is refused before any I/O.
pub const MAX_TRACE_BYTES: u64 = 256 << 30;
pub const MAX_TRACE_REQUESTS: u64 = 1_000_000_000;
/// One line of a text trace: a longer one is refused, never buffered.
pub const MAX_TRACE_LINE: usize = 4096;
/// A timed replay's depth when none is given: the trace's most requests
/// within 1 ms, at most this (each slot owns a buffer of the largest
/// request; --iodepth goes to MAX_IODEPTH).
pub const MAX_REPLAY_AUTO_DEPTH: u64 = 256;
/// One request of a trace: each in-flight request owns a buffer this large.
pub const MAX_TRACE_REQUEST_BYTES: u64 = 64 << 20;
/// --replay-speed: 1000 times slower to 1000 times faster than recorded.
pub const MIN_REPLAY_SPEED: f64 = 0.001;
pub const MAX_REPLAY_SPEED: f64 = 1000.0;
/// --replay across --hosts: the part each host replays is sent to it over
/// the protocol and held in the agent's memory as volbench.trace/v1 text
/// (about 30 bytes a request, so some 17 million requests a host); a part
/// larger is refused before any host is reached.
pub const MAX_REMOTE_TRACE_BYTES: u64 = 512 << 20;
/// A suite's replay `scale` (fio replay_scale): offsets divided by 1..this;
/// beyond it a trace of any volume folds onto its first bytes.
pub const MAX_REPLAY_SCALE: u64 = 1 << 20;
/// A suite's replay `align` (fio replay_align): a power of two up to this.
pub const MAX_REPLAY_ALIGN: u64 = 1 << 30;
/// --replay-offset: host i starts i x this later; an hour apart is already
/// no longer one replay.
pub const MAX_REPLAY_OFFSET: Duration = Duration::from_secs(3600);
/// compare --fail-below: above 0 (0 would pass anything), at most 10 (a
/// gate that demands ten times the base is a typo more often than a plan).
pub const MIN_FAIL_BELOW: f64 = 1e-6;
pub const MAX_FAIL_BELOW: f64 = 10.0;

/// capture --duration and --interval, and the intervals one capture may
/// hold (a day at 1 s fits): the profile stays a file a report can read.
pub const MIN_CAPTURE_DURATION: Duration = Duration::from_secs(1);
pub const MAX_CAPTURE_DURATION: Duration = Duration::from_secs(30 * DAY);
pub const MIN_CAPTURE_INTERVAL: Duration = Duration::from_millis(100);
pub const MAX_CAPTURE_INTERVALS: u64 = 100_000;
/// A profile read back (report, run --like): 100,000 intervals of a few
/// devices fit well inside it.
pub const MAX_PROFILE_FILE: u64 = 512 << 20;

/// `capture --duration`'s help, from the bounds it is checked against.
pub fn capture_duration_help() -> String {
    format!(
        "How long to watch, {}..{}",
        format_duration(MIN_CAPTURE_DURATION),
        format_duration(MAX_CAPTURE_DURATION)
    )
}

/// `capture --interval`'s help, from the bounds it is checked against.
pub fn capture_interval_help() -> String {
    format!(
        "One line of figures per interval, {}..{}; at most {} intervals in one capture",
        format_duration(MIN_CAPTURE_INTERVAL),
        format_duration(MAX_INTERVAL),
        crate::units::thousands(MAX_CAPTURE_INTERVALS as f64)
    )
}

/// `v` within `lo..=hi`, or an error naming the flag and the bounds.
pub fn count(flag: &str, v: u64, lo: u64, hi: u64) -> Result<u64> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(VbError::input(format!("{flag} {v} is outside {lo}..{hi}")))
    }
}

/// A bound or a value as people write it: `50ms`, `1h`, `30d`, `1m30s`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    if d.is_zero() {
        "0s".into()
    } else if d.subsec_nanos() == 0 && s % DAY == 0 {
        format!("{}d", s / DAY)
    } else if d.subsec_nanos() == 0 && s % 3600 == 0 {
        format!("{}h", s / 3600)
    } else if d.subsec_nanos() == 0 && s % 60 == 0 {
        format!("{}m", s / 60)
    } else if s == 0 && d.subsec_nanos() % 1_000_000 == 0 {
        format!("{}ms", d.subsec_millis())
    } else {
        format_duration(d)
    }
}

/// A number as people write it, in exponent form when plain digits would
/// run to hundreds of characters (1e-300).
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || (1e-4..1e13).contains(&a) || !v.is_finite() {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A finite `v` within `lo..=hi`.
pub fn number(flag: &str, v: f64, lo: f64, hi: f64) -> Result<f64> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(v)
    } else {
        Err(VbError::input(format!(
            "{flag} {} is outside {}..{}",
            short(v),
            short(lo),
            short(hi)
        )))
    }
}

/// A byte count within `lo..=hi`.
pub fn size(flag: &str, v: u64, lo: u64, hi: u64) -> Result<u64> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(VbError::input(format!(
            "{flag} {} is outside {}..{}",
            format_size(v),
            format_size(lo),
            format_size(hi)
        )))
    }
}

/// A duration within `lo..=hi`.
pub fn duration(flag: &str, d: Duration, lo: Duration, hi: Duration) -> Result<Duration> {
    if d >= lo && d <= hi {
        Ok(d)
    } else {
        Err(VbError::input(format!(
            "{flag} {} is outside {}..{}",
            human(d),
            human(lo),
            human(hi)
        )))
    }
}

/// Seconds as stored in a spec (which may come from a file or another
/// host), within `lo..=hi`.
pub fn seconds(flag: &str, s: f64, lo: Duration, hi: Duration) -> Result<f64> {
    if s.is_finite() && s >= lo.as_secs_f64() && s <= hi.as_secs_f64() {
        Ok(s)
    } else {
        Err(VbError::input(format!(
            "{flag} {}s is outside {}..{}",
            short(s),
            human(lo),
            human(hi)
        )))
    }
}

/// A name that ends up in tables, file contents and terminals: printable
/// text on one line, at most `MAX_NAME_CHARS`.
pub fn name(flag: &str, text: &str) -> Result<()> {
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(VbError::input(format!(
            "{flag} '{}' contains the control character {c:?}; a name is printable text on one line",
            text.escape_debug()
        )));
    }
    let n = text.chars().count();
    if n > MAX_NAME_CHARS {
        return Err(VbError::input(format!(
            "{flag} is {n} characters long; at most {MAX_NAME_CHARS}"
        )));
    }
    Ok(())
}

/// `text` with every control character (newline, escape...) written as
/// its escape sequence, for an error printed as one terminal line.
pub fn one_line(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// capture --trace: the requests kept in memory until they can be written
/// in issue order (issued and not yet completed, or completed behind one
/// that has not). A device's queue holds a few thousand at most; past this
/// bound the oldest is written without its completion and counted, so a
/// request that never completes cannot grow the capture without end
/// (~100 bytes each: about 25 MiB at the bound).
pub const MAX_TRACE_PENDING: usize = 262_144;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn errors_state_the_bounds() {
        let e = count("--threads", 5000, 1, MAX_THREADS).unwrap_err();
        assert_eq!(e.to_string(), "--threads 5000 is outside 1..4096");
        let e = duration(
            "--duration",
            Duration::from_secs(31 * DAY),
            MIN_DURATION,
            MAX_DURATION,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("--duration 31d is outside 1ms..30d"),
            "{e}"
        );
        assert!(number("--rate", f64::NAN, MIN_RATE, MAX_RATE).is_err());
        let e = number("--rate", 1e-300, MIN_RATE, MAX_RATE).unwrap_err();
        assert_eq!(e.to_string(), "--rate 1e-300 is outside 0.01..1000000000");
        assert!(
            size("--size", MAX_SIZE + 1, 1, MAX_SIZE)
                .unwrap_err()
                .to_string()
                .contains("8PiB")
        );
    }

    #[test]
    fn names_are_one_printable_line() {
        assert!(name("--name", "db-test 1").is_ok());
        let e = name("--name", "a\nb").unwrap_err().to_string();
        assert!(e.contains("a\\nb") && !e.contains('\n'), "{e}");
        assert!(name("--name", "\u{1b}[31mred").is_err());
        assert!(name("--name", &"x".repeat(MAX_NAME_CHARS + 1)).is_err());
    }
}
