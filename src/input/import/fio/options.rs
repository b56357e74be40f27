//! Every fio option the importer knows, one row each: its name, fio's
//! aliases, and its rule (a function that reads it into the job, a
//! judgement of its value, a note, or a refusal with the reason). An
//! option no row names is refused by name. A new option is one row here,
//! one small function beside its kind, and one test.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::Notes;
use super::parse::{Opt, Read, bool_opt};
use super::{data, rate, replay, shape, workload as w};
use crate::units::parse_size;

/// What a row does with its option.
pub(crate) enum Rule {
    /// Reads the option into the job being built (refusing a bad value).
    Map(fn(&Opt, &mut Read, &mut Notes)),
    /// Accepted or refused by its value, changing nothing volbench runs.
    Judge(fn(&Opt) -> Verdict),
    /// Accepted as it is, with this note; exact when volbench does the same.
    Noted(&'static str, bool),
    /// Refused: volbench cannot keep this meaning (the reason).
    Refused(&'static str),
}

/// A judgement of one option's value.
pub(crate) enum Verdict {
    Note(&'static str, bool),
    Refuse(&'static str),
}

pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) aliases: &'static [&'static str],
    pub(crate) rule: Rule,
}

const fn row(name: &'static str, aliases: &'static [&'static str], rule: Rule) -> Row {
    Row {
        name,
        aliases,
        rule,
    }
}

use Rule::{Judge, Map, Noted, Refused};

const CREATE: &str = "volbench creates, fills and keeps its own file set before measuring";
const TUNING: &str = "engine tuning volbench decides itself (the queue depth is kept)";
const PINNING: &str = "ignored: volbench does not pin or reprioritise its threads";
const LOGS: &str = "volbench records its own time series and merged-histogram percentiles";
const VERIFYING: &str = "volbench checks every read against the last write as it goes, per \
                         sector, and stops at the first mismatch (--max-data-errors raises that)";
const PATTERN: &str = "a fixed buffer pattern (volbench writes its own stamped data; --compress R \
                       makes it compressible)";
const LATENCY_WINDOW: &str = "each step of volbench's latency search is a whole run of the job's \
                              runtime, judged on its merged histogram, not a window";
const STEADY: &str = "volbench's steady rule looks at its last 5 intervals (steady = true)";
const MIN_RATE: &str = "a minimum rate";
const THINK: &str = "think time other than after every I/O";
const FILL: &str = "writing until the device or file system is full: volbench writes only files \
                    of a stated size that it created";

/// The table. Order is only for the reader: what a job does, its shape, its
/// data, then what volbench accepts as it is or refuses.
pub(crate) const OPTIONS: &[Row] = &[
    row("name", &[], Map(w::name)),
    row("description", &[], Map(w::description)),
    row("rw", &["readwrite"], Map(w::rw)),
    row("rw_sequencer", &[], Map(w::rw_sequencer)),
    row("rwmixread", &[], Map(w::rwmixread)),
    row("rwmixwrite", &[], Map(w::rwmixwrite)),
    row("bs", &["blocksize"], Map(w::bs)),
    row("bssplit", &[], Map(w::bssplit)),
    row("blocksize_range", &["bsrange"], Map(w::blocksize_range)),
    row("blockalign", &["ba"], Map(w::blockalign)),
    row("iodepth", &[], Map(w::iodepth)),
    row("numjobs", &[], Map(w::numjobs)),
    row("ioengine", &[], Map(w::ioengine)),
    row("direct", &[], Map(w::direct)),
    row("buffered", &[], Map(w::buffered)),
    row("time_based", &[], Map(w::time_based)),
    row("runtime", &["timeout"], Map(w::runtime)),
    row("ramp_time", &[], Map(w::ramp_time)),
    row("startdelay", &[], Map(w::startdelay)),
    row("rate_iops", &[], Map(rate::rate_iops)),
    row("rate", &[], Map(rate::rate)),
    row("rate_process", &[], Map(w::rate_process)),
    row("filename", &[], Map(w::filename)),
    row("directory", &[], Map(w::directory)),
    row("nrfiles", &["nr_files"], Map(w::nrfiles)),
    row("size", &[], Map(w::size)),
    row("filesize", &[], Map(w::filesize)),
    row("io_size", &["io_limit"], Map(w::io_size)),
    row("number_ios", &[], Map(w::number_ios)),
    row("randseed", &[], Map(w::randseed)),
    row("norandommap", &[], Map(w::norandommap)),
    row("stonewall", &["wait_for_previous"], Map(w::stonewall)),
    row("wait_for", &[], Map(w::wait_for)),
    // The run's shape.
    row("random_distribution", &[], Map(shape::random_distribution)),
    row("fsync", &[], Map(shape::fsync)),
    row("fdatasync", &[], Map(shape::fdatasync)),
    row("end_fsync", &[], Map(shape::end_fsync)),
    row("thinktime", &[], Map(shape::thinktime)),
    row("thinktime_blocks", &[], Map(shape::thinktime_blocks)),
    row("thinktime_spin", &[], Refused(THINK)),
    row("thinktime_blocks_type", &[], Refused(THINK)),
    row("thinktime_iotime", &[], Refused(THINK)),
    row("sync", &[], Map(shape::sync)),
    // The data.
    row("invalidate", &[], Map(data::invalidate)),
    row("verify", &[], Map(data::verify)),
    row("buffer_compress_percentage", &[], Map(data::compress)),
    row("dedupe_percentage", &[], Map(data::dedupe)),
    row("buffer_compress_chunk", &[], Noted(SECTORS, false)),
    row("scramble_buffers", &[], Noted(SECTORS, false)),
    row("do_verify", &[], Noted(VERIFYING, false)),
    row("verify_backlog", &[], Noted(VERIFYING, false)),
    row("verify_backlog_batch", &[], Noted(VERIFYING, false)),
    row("verify_fatal", &[], Noted(VERIFYING, false)),
    row("verify_async", &[], Noted(VERIFYING, false)),
    row("verify_interval", &[], Noted(VERIFYING, false)),
    row("verify_offset", &[], Noted(VERIFYING, false)),
    row(
        "verify_only",
        &[],
        Refused("a verify-only job (use `volbench verify --target DIR` on a set a run wrote)"),
    ),
    row("verify_pattern", &[], Refused(PATTERN)),
    row("buffer_pattern", &[], Refused(PATTERN)),
    row("zero_buffers", &[], Refused(PATTERN)),
    // Accepted as they are, by value.
    row("io_submit_mode", &[], Judge(io_submit_mode)),
    row("fadvise_hint", &[], Judge(fadvise_hint)),
    row("randrepeat", &["allrandrepeat"], Judge(randrepeat)),
    row("random_generator", &[], Judge(random_generator)),
    row("kb_base", &[], Judge(kb_base)),
    row("loops", &[], Judge(loops)),
    row("offset", &["fileoffset"], Judge(offset)),
    row("fsync_on_close", &[], Judge(fsync_on_close)),
    row("exit_what", &[], Judge(exit_what)),
    row("filename_format", &[], Judge(filename_format)),
    row(
        "group_reporting",
        &[],
        Noted("volbench always reports a run's threads together", true),
    ),
    row("new_group", &[], Noted("each run is reported apart", true)),
    row(
        "thread",
        &[],
        Noted("volbench always runs its I/O in threads", true),
    ),
    row("exitall", &[], Noted(TOGETHER, false)),
    row("exitall_on_error", &[], Noted(TOGETHER, false)),
    row("fallocate", &[], Noted(CREATE, false)),
    row("overwrite", &[], Noted(CREATE, false)),
    row("create_on_open", &[], Noted(CREATE, false)),
    row("allow_file_create", &[], Noted(CREATE, false)),
    row("unlink", &[], Noted(CREATE, false)),
    row("pre_read", &[], Noted(CREATE, false)),
    row("file_service_type", &[], Noted(CREATE, false)),
    row("create_serialize", &[], Noted(CREATE, false)),
    row(
        "iodepth_batch",
        &["iodepth_batch_submit"],
        Noted(TUNING, false),
    ),
    row("iodepth_batch_complete", &[], Noted(TUNING, false)),
    row("iodepth_batch_complete_min", &[], Noted(TUNING, false)),
    row("iodepth_batch_complete_max", &[], Noted(TUNING, false)),
    row("iodepth_low", &[], Noted(TUNING, false)),
    row("hipri", &[], Noted(TUNING, false)),
    row("fixedbufs", &[], Noted(TUNING, false)),
    row("registerfiles", &[], Noted(TUNING, false)),
    row("sqthread_poll", &[], Noted(TUNING, false)),
    row("refill_buffers", &[], Noted(TUNING, false)),
    row("cpus_allowed", &[], Noted(PINNING, false)),
    row("cpumask", &[], Noted(PINNING, false)),
    row("cpus_allowed_policy", &[], Noted(PINNING, false)),
    row("numa_cpu_nodes", &[], Noted(PINNING, false)),
    row("numa_mem_policy", &[], Noted(PINNING, false)),
    row("nice", &[], Noted(PINNING, false)),
    row("prio", &[], Noted(PINNING, false)),
    row("prioclass", &[], Noted(PINNING, false)),
    row("write_bw_log", &[], Noted(LOGS, false)),
    row("write_lat_log", &[], Noted(LOGS, false)),
    row("write_iops_log", &[], Noted(LOGS, false)),
    row("write_hist_log", &[], Noted(LOGS, false)),
    row("log_avg_msec", &[], Noted(LOGS, false)),
    row("log_hist_msec", &[], Noted(LOGS, false)),
    row("per_job_logs", &[], Noted(LOGS, false)),
    row("clat_percentiles", &[], Noted(LOGS, false)),
    row("lat_percentiles", &[], Noted(LOGS, false)),
    row("slat_percentiles", &[], Noted(LOGS, false)),
    row("percentile_list", &[], Noted(LOGS, false)),
    row("disable_lat", &[], Noted(LOGS, false)),
    row("disable_clat", &[], Noted(LOGS, false)),
    row("disable_slat", &[], Noted(LOGS, false)),
    row(
        "disable_bw_measurement",
        &["disable_bw"],
        Noted(LOGS, false),
    ),
    row("gtod_reduce", &[], Noted(LOGS, false)),
    row("unified_rw_reporting", &[], Noted(LOGS, false)),
    row("stats", &[], Noted(LOGS, false)),
    // Refused: volbench cannot keep the meaning (yet).
    row("fill_device", &["fill_fs"], Refused(FILL)),
    row(
        "o_dsync",
        &[],
        Refused("O_DSYNC on the job's own open (use sync=dsync)"),
    ),
    row("rate_min", &["ratemin"], Refused(MIN_RATE)),
    row("rate_iops_min", &[], Refused(MIN_RATE)),
    row("rate_cycle", &["ratecycle"], Refused(MIN_RATE)),
    row("rate_ignore_thinktime", &[], Refused(MIN_RATE)),
    row("latency_target", &[], Map(rate::latency_target)),
    row("latency_window", &[], Noted(LATENCY_WINDOW, false)),
    row("latency_percentile", &[], Map(rate::latency_percentile)),
    row("latency_run", &[], Map(rate::latency_run)),
    row("ss", &["steadystate"], Map(rate::steady)),
    row("ss_dur", &[], Noted(STEADY, false)),
    row("ss_ramp", &[], Noted(STEADY, false)),
    // A replayed log: the run's `replay` table (`replay.rs`).
    row("read_iolog", &[], Map(replay::read_iolog)),
    row("replay_no_stall", &[], Map(replay::replay_no_stall)),
    row("replay_time_scale", &[], Map(replay::replay_time_scale)),
    row("replay_redirect", &[], Map(replay::replay_redirect)),
    row("replay_align", &[], Map(replay::replay_align)),
    row("replay_scale", &[], Map(replay::replay_scale)),
    row("replay_skip", &[], Map(replay::replay_skip)),
    row(
        "read_iolog_chunked",
        &[],
        Noted("volbench streams every log, a line at a time", true),
    ),
    row("merge_blktrace_file", &[], Refused(MERGE)),
    row("merge_blktrace_scalars", &[], Refused(MERGE)),
    row("merge_blktrace_iters", &[], Refused(MERGE)),
];

const MERGE: &str = "merging several blktrace files into one replay: merge them with fio's \
     --merge-blktrace-only first and replay the file it writes";

const SECTORS: &str = "volbench lays out compressible data itself, per 512-byte sector";
const TOGETHER: &str = "a run's threads start and stop together in volbench";

/// The row naming `key` (by its name or an alias of fio's).
pub(crate) fn find(key: &str) -> Option<&'static Row> {
    OPTIONS
        .iter()
        .find(|r| r.name == key || r.aliases.contains(&key))
}

/// An option's own name for one of its aliases, so a later line given by
/// another name still replaces it, as in fio.
pub(crate) fn canonical(key: &str) -> &str {
    find(key).map_or(key, |r| r.name)
}

/// Reads one option by its row; an option with no row is refused by name.
pub(super) fn apply(opt: &Opt, r: &mut Read, notes: &mut Notes) {
    let Some(row) = find(&opt.key) else {
        return unknown(opt, notes);
    };
    match &row.rule {
        Map(f) => f(opt, r, notes),
        Judge(f) => match f(opt) {
            Verdict::Note(how, exact) => r.say(opt, how, exact),
            Verdict::Refuse(why) => notes.unsupported(&opt.at, &opt.text(), why),
        },
        Noted(how, exact) => r.say(opt, *how, *exact),
        Refused(why) => notes.unsupported(&opt.at, &opt.text(), why),
    }
}

/// The note an option that changes nothing gets, for the file engines'
/// jobs (`meta.rs`); None when the row maps, refuses, or is missing.
pub(super) fn note_only(opt: &Opt) -> Option<(&'static str, bool)> {
    match &find(&opt.key)?.rule {
        Noted(how, exact) => Some((how, *exact)),
        Judge(f) => match f(opt) {
            Verdict::Note(how, exact) => Some((how, exact)),
            Verdict::Refuse(_) => None,
        },
        Map(_) | Refused(_) => None,
    }
}

fn unknown(opt: &Opt, notes: &mut Notes) {
    // A line of a file that is not a job file at all (`include /etc/shadow`)
    // is not echoed: only a line whose name is one an option could have.
    if super::super::option_like(&opt.key) {
        notes.refuse(
            &opt.at,
            &opt.text(),
            "not supported yet (volbench has no equivalent of this fio option)",
        );
    } else {
        notes.refuse(
            &opt.at,
            "this line",
            "not a fio option (its text is not shown: is this a fio job file?)",
        );
    }
}

fn io_submit_mode(o: &Opt) -> Verdict {
    match o.val().trim() {
        "inline" => Verdict::Note("volbench submits inline", true),
        _ => Verdict::Note(
            "volbench submits inline, from each I/O thread; a rate still applies",
            false,
        ),
    }
}

fn fadvise_hint(o: &Opt) -> Verdict {
    match o.val().trim() {
        "1" | "" => Verdict::Note(
            "volbench's buffered runs advise random or sequential by the pattern",
            true,
        ),
        _ => Verdict::Note(
            "volbench's buffered runs always advise random or sequential by the pattern, \
             as fio's default fadvise_hint=1",
            false,
        ),
    }
}

fn randrepeat(o: &Opt) -> Verdict {
    Verdict::Note(
        "volbench's offsets repeat for the same seed",
        bool_opt(o) != Some(false),
    )
}

fn random_generator(_: &Opt) -> Verdict {
    Verdict::Note("volbench uses its own generator (uniform offsets)", false)
}

fn kb_base(o: &Opt) -> Verdict {
    match o.val().trim() {
        "1024" => Verdict::Note("binary units", true),
        _ => Verdict::Refuse("decimal units (volbench reads k as 1024)"),
    }
}

fn loops(o: &Opt) -> Verdict {
    match o.val().trim() {
        "1" => Verdict::Note("one pass", true),
        _ => Verdict::Refuse("several passes over the job (give time_based and runtime)"),
    }
}

fn offset(o: &Opt) -> Verdict {
    match parse_size(o.val()) {
        Ok(0) => Verdict::Note("from the start", true),
        _ => Verdict::Refuse("a job starting at an offset into its files"),
    }
}

fn fsync_on_close(o: &Opt) -> Verdict {
    match o.val().trim() {
        "0" => Verdict::Note("fio's default: none", true),
        _ => Verdict::Refuse("fsync on close"),
    }
}

/// `exit_what=`: which jobs `exitall` ends when one finishes; volbench's
/// runs end their threads together and go on with the next run.
fn exit_what(o: &Opt) -> Verdict {
    match o.val().trim() {
        "group" | "stonewall" => Verdict::Note(
            "a run's threads stop together and the next run follows, as fio's group and stonewall",
            false,
        ),
        _ => Verdict::Refuse("ending every later group when one job finishes"),
    }
}

/// `filename_format=`: fio's names for the files it creates. A name per
/// job (`$jobnum`) only names what volbench's own files also are; a name
/// without it shares files between jobs, a different working set.
fn filename_format(o: &Opt) -> Verdict {
    if o.val().contains("$jobnum") {
        Verdict::Note(
            "volbench names its own files (volbench.N.dat), one set per job as fio's $jobnum names",
            false,
        )
    } else {
        Verdict::Refuse(
            "file names shared between jobs (without $jobnum); volbench gives each job its own files",
        )
    }
}
