//! Every fio option the importer knows, one row each: its name, fio's
//! aliases, and its rule (a function that reads it into the job, a
//! judgement of its value, a note, or a refusal with the reason). An
//! option no row names is refused by name. A new option is one row here,
//! one small function beside its kind, and one test.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{Row, Rule, Verdict, alias, row};
use super::parse::{Opt, Read, bool_opt};
use super::{data, nfs, rate, replay, shape, workload as w};

use Rule::{Always, Judge, Map};
use Verdict::{Exact, Note, Refuse};

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
pub(crate) const OPTIONS: &[Row<Read>] = &[
    row("name", Map(w::name)),
    row("description", Map(w::description)),
    alias("rw", &["readwrite"], Map(w::rw)),
    row("rw_sequencer", Map(w::rw_sequencer)),
    row("rwmixread", Map(w::rwmixread)),
    row("rwmixwrite", Map(w::rwmixwrite)),
    alias("bs", &["blocksize"], Map(w::bs)),
    row("bssplit", Map(w::bssplit)),
    alias("blocksize_range", &["bsrange"], Map(w::blocksize_range)),
    alias("blockalign", &["ba"], Map(w::blockalign)),
    row("iodepth", Map(w::iodepth)),
    row("numjobs", Map(w::numjobs)),
    row("ioengine", Map(w::ioengine)),
    row("direct", Map(w::direct)),
    row("buffered", Map(w::buffered)),
    row("time_based", Map(w::time_based)),
    alias("runtime", &["timeout"], Map(w::runtime)),
    row("ramp_time", Map(w::ramp_time)),
    row("startdelay", Map(w::startdelay)),
    row("rate_iops", Map(rate::rate_iops)),
    row("rate", Map(rate::rate)),
    row("rate_process", Map(w::rate_process)),
    row("filename", Map(w::filename)),
    row("directory", Map(w::directory)),
    row("nfs_url", Map(nfs::nfs_url)),
    alias("nrfiles", &["nr_files"], Map(w::nrfiles)),
    row("openfiles", Map(data::openfiles)),
    row("size", Map(w::size)),
    row("filesize", Map(w::filesize)),
    alias("io_size", &["io_limit"], Map(w::io_size)),
    row("number_ios", Map(w::number_ios)),
    row("randseed", Map(w::randseed)),
    row("norandommap", Map(w::norandommap)),
    alias("stonewall", &["wait_for_previous"], Map(w::stonewall)),
    row("wait_for", Map(w::wait_for)),
    // The run's shape.
    row("random_distribution", Map(shape::random_distribution)),
    row("fsync", Map(shape::fsync)),
    row("fdatasync", Map(shape::fdatasync)),
    row("end_fsync", Map(shape::end_fsync)),
    row("thinktime", Map(shape::thinktime)),
    row("thinktime_blocks", Map(shape::thinktime_blocks)),
    row("thinktime_spin", Always(Refuse(THINK))),
    row("thinktime_blocks_type", Always(Refuse(THINK))),
    row("thinktime_iotime", Always(Refuse(THINK))),
    row("sync", Map(shape::sync)),
    // The data.
    row("invalidate", Map(data::invalidate)),
    row("verify", Map(data::verify)),
    row("buffer_compress_percentage", Map(data::compress)),
    row("dedupe_percentage", Map(data::dedupe)),
    row("buffer_compress_chunk", Always(Note(SECTORS))),
    row("scramble_buffers", Always(Note(SECTORS))),
    row("do_verify", Always(Note(VERIFYING))),
    row("verify_backlog", Always(Note(VERIFYING))),
    row("verify_backlog_batch", Always(Note(VERIFYING))),
    row("verify_fatal", Always(Note(VERIFYING))),
    row("verify_async", Always(Note(VERIFYING))),
    row("verify_interval", Always(Note(VERIFYING))),
    row("verify_offset", Always(Note(VERIFYING))),
    row(
        "verify_only",
        Always(Refuse(
            "a verify-only job (use `volbench verify --target DIR` on a set a run wrote)",
        )),
    ),
    row("verify_pattern", Always(Refuse(PATTERN))),
    row("buffer_pattern", Always(Refuse(PATTERN))),
    row("zero_buffers", Always(Refuse(PATTERN))),
    // Accepted as they are, by value.
    row("io_submit_mode", Judge(io_submit_mode)),
    row("fadvise_hint", Judge(fadvise_hint)),
    alias("randrepeat", &["allrandrepeat"], Judge(randrepeat)),
    row("random_generator", Judge(random_generator)),
    row("kb_base", Judge(kb_base)),
    row("loops", Judge(loops)),
    alias("offset", &["fileoffset"], Map(w::offset)),
    row("offset_increment", Map(w::offset_increment)),
    row("fsync_on_close", Judge(fsync_on_close)),
    row("exit_what", Judge(exit_what)),
    row("filename_format", Judge(filename_format)),
    row(
        "group_reporting",
        Always(Exact("volbench always reports a run's threads together")),
    ),
    row("new_group", Always(Exact("each run is reported apart"))),
    row(
        "thread",
        Always(Exact("volbench always runs its I/O in threads")),
    ),
    row("exitall", Always(Note(TOGETHER))),
    row("exitall_on_error", Always(Note(TOGETHER))),
    row("fallocate", Always(Note(CREATE))),
    row("overwrite", Always(Note(CREATE))),
    row("create_on_open", Always(Note(CREATE))),
    row("allow_file_create", Always(Note(CREATE))),
    row("unlink", Always(Note(CREATE))),
    row("pre_read", Always(Note(CREATE))),
    row("file_service_type", Always(Note(CREATE))),
    row("create_serialize", Always(Note(CREATE))),
    alias(
        "iodepth_batch",
        &["iodepth_batch_submit"],
        Always(Note(TUNING)),
    ),
    row("iodepth_batch_complete", Always(Note(TUNING))),
    row("iodepth_batch_complete_min", Always(Note(TUNING))),
    row("iodepth_batch_complete_max", Always(Note(TUNING))),
    row("iodepth_low", Always(Note(TUNING))),
    row("hipri", Always(Note(TUNING))),
    row("fixedbufs", Always(Note(TUNING))),
    row("registerfiles", Always(Note(TUNING))),
    row("sqthread_poll", Always(Note(TUNING))),
    row("refill_buffers", Always(Note(TUNING))),
    row("cpus_allowed", Always(Note(PINNING))),
    row("cpumask", Always(Note(PINNING))),
    row("cpus_allowed_policy", Always(Note(PINNING))),
    row("numa_cpu_nodes", Always(Note(PINNING))),
    row("numa_mem_policy", Always(Note(PINNING))),
    row("nice", Always(Note(PINNING))),
    row("prio", Always(Note(PINNING))),
    row("prioclass", Always(Note(PINNING))),
    row("write_bw_log", Always(Note(LOGS))),
    row("write_lat_log", Always(Note(LOGS))),
    row("write_iops_log", Always(Note(LOGS))),
    row("write_hist_log", Always(Note(LOGS))),
    row("log_avg_msec", Always(Note(LOGS))),
    row("log_hist_msec", Always(Note(LOGS))),
    row("per_job_logs", Always(Note(LOGS))),
    row("clat_percentiles", Always(Note(LOGS))),
    row("lat_percentiles", Always(Note(LOGS))),
    row("slat_percentiles", Always(Note(LOGS))),
    row("percentile_list", Always(Note(LOGS))),
    row("disable_lat", Always(Note(LOGS))),
    row("disable_clat", Always(Note(LOGS))),
    row("disable_slat", Always(Note(LOGS))),
    alias(
        "disable_bw_measurement",
        &["disable_bw"],
        Always(Note(LOGS)),
    ),
    row("gtod_reduce", Always(Note(LOGS))),
    row("unified_rw_reporting", Always(Note(LOGS))),
    row("stats", Always(Note(LOGS))),
    // Refused: volbench cannot keep the meaning (yet).
    alias("fill_device", &["fill_fs"], Always(Refuse(FILL))),
    row(
        "o_dsync",
        Always(Refuse("O_DSYNC on the job's own open (use sync=dsync)")),
    ),
    alias("rate_min", &["ratemin"], Always(Refuse(MIN_RATE))),
    row("rate_iops_min", Always(Refuse(MIN_RATE))),
    alias("rate_cycle", &["ratecycle"], Always(Refuse(MIN_RATE))),
    row("rate_ignore_thinktime", Always(Refuse(MIN_RATE))),
    row("latency_target", Map(rate::latency_target)),
    row("latency_window", Always(Note(LATENCY_WINDOW))),
    row("latency_percentile", Map(rate::latency_percentile)),
    row("latency_run", Map(rate::latency_run)),
    alias("ss", &["steadystate"], Map(rate::steady)),
    row("ss_dur", Always(Note(STEADY))),
    row("ss_ramp", Always(Note(STEADY))),
    // A replayed log: the run's `replay` table (`replay.rs`).
    row("read_iolog", Map(replay::read_iolog)),
    row("replay_no_stall", Map(replay::replay_no_stall)),
    row("replay_time_scale", Map(replay::replay_time_scale)),
    row("replay_redirect", Map(replay::replay_redirect)),
    row("replay_align", Map(replay::replay_align)),
    row("replay_scale", Map(replay::replay_scale)),
    row("replay_skip", Map(replay::replay_skip)),
    row(
        "read_iolog_chunked",
        Always(Exact("volbench streams every log, a line at a time")),
    ),
    row("merge_blktrace_file", Always(Refuse(MERGE))),
    row("merge_blktrace_scalars", Always(Refuse(MERGE))),
    row("merge_blktrace_iters", Always(Refuse(MERGE))),
];

const MERGE: &str = "merging several blktrace files into one replay: merge them with fio's \
     --merge-blktrace-only first and replay the file it writes";

const SECTORS: &str = "volbench lays out compressible data itself, per 512-byte sector";
const TOGETHER: &str = "a run's threads start and stop together in volbench";

/// The row naming `key` (by its name or an alias of fio's).
pub(crate) fn find(key: &str) -> Option<&'static Row<Read>> {
    super::super::table::find(OPTIONS, key)
}

/// An option's own name for one of its aliases, so a later line given by
/// another name still replaces it, as in fio.
pub(crate) fn canonical(key: &str) -> &str {
    find(key).map_or(key, |r| r.name)
}

/// The verdict of an option that changes nothing volbench runs, for the
/// file engines' jobs (`meta.rs`); None when its row maps, refuses, or is
/// missing.
pub(super) fn note_only(opt: &Opt) -> Option<Verdict> {
    let v = match &find(&opt.key)?.rule {
        Always(v) => *v,
        Judge(f) => f(opt),
        Map(_) => return None,
    };
    (!matches!(v, Refuse(_))).then_some(v)
}

fn io_submit_mode(o: &Opt) -> Verdict {
    match o.val().trim() {
        "inline" => Exact("volbench submits inline"),
        _ => Note("volbench submits inline, from each I/O thread; a rate still applies"),
    }
}

fn fadvise_hint(o: &Opt) -> Verdict {
    match o.val().trim() {
        "1" | "" => Exact("volbench's buffered runs advise random or sequential by the pattern"),
        _ => Note(
            "volbench's buffered runs always advise random or sequential by the pattern, \
             as fio's default fadvise_hint=1",
        ),
    }
}

fn randrepeat(o: &Opt) -> Verdict {
    let how = "volbench's offsets repeat for the same seed";
    if bool_opt(o) == Some(false) {
        Note(how)
    } else {
        Exact(how)
    }
}

fn random_generator(_: &Opt) -> Verdict {
    Note("volbench uses its own generator (uniform offsets)")
}

fn kb_base(o: &Opt) -> Verdict {
    match o.val().trim() {
        "1024" => Exact("binary units"),
        _ => Refuse("decimal units (volbench reads k as 1024)"),
    }
}

fn loops(o: &Opt) -> Verdict {
    match o.val().trim() {
        "1" => Exact("one pass"),
        _ => Refuse("several passes over the job (give time_based and runtime)"),
    }
}

fn fsync_on_close(o: &Opt) -> Verdict {
    match o.val().trim() {
        "0" => Exact("fio's default: none"),
        _ => Refuse("fsync on close"),
    }
}

/// `exit_what=`: which jobs `exitall` ends when one finishes; volbench's
/// runs end their threads together and go on with the next run.
fn exit_what(o: &Opt) -> Verdict {
    match o.val().trim() {
        "group" | "stonewall" => Note(
            "a run's threads stop together and the next run follows, as fio's group and stonewall",
        ),
        _ => Refuse("ending every later group when one job finishes"),
    }
}

/// `filename_format=`: fio's names for the files it creates. A name per
/// job (`$jobnum`) only names what volbench's own files also are; a name
/// without it shares files between jobs, a different working set.
fn filename_format(o: &Opt) -> Verdict {
    if o.val().contains("$jobnum") {
        Note(
            "volbench names its own files (volbench.N.dat), one set per job as fio's $jobnum names",
        )
    } else {
        Refuse(
            "file names shared between jobs (without $jobnum); volbench gives each job its own files",
        )
    }
}
