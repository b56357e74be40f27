//! fio options that change nothing volbench measures: accepted as they are
//! (fio's reporting, tuning and file handling, which volbench does its own
//! way) or refused as unsupported by name.

use super::parse::Opt;
use super::parse::bool_opt;
use crate::units::parse_size;

/// What one such option becomes.
pub(super) enum Known {
    /// Mapped with this text; exact when volbench does the same.
    Note(&'static str, bool),
    /// Not supported yet, for this reason.
    Unsupported(&'static str),
}

/// `None` for an option this table does not know (refused by the caller).
pub(super) fn known(key: &str, v: &str, opt: &Opt) -> Option<Known> {
    use Known::{Note, Unsupported};
    Some(match key {
        "group_reporting" => Note("volbench always reports a run's threads together", true),
        "new_group" => Note("each run is reported apart", true),
        "thread" => Note("volbench always runs its I/O in threads", true),
        "io_submit_mode" if v.trim() == "inline" => Note("volbench submits inline", true),
        "io_submit_mode" => Note(
            "volbench submits inline, from each I/O thread; a rate still applies",
            false,
        ),
        "fadvise_hint" if matches!(v.trim(), "1" | "") => Note(
            "volbench's buffered runs advise random or sequential by the pattern",
            true,
        ),
        "fadvise_hint" => Note(
            "volbench's buffered runs always advise random or sequential by the pattern, \
             as fio's default fadvise_hint=1",
            false,
        ),
        "number_ios" => Unsupported("a count of I/Os per job (use size= or io_size= for bytes)"),
        "blockalign" | "ba" => Unsupported(
            "offsets aligned to other than the block size (volbench aligns to the block size)",
        ),
        "exit_what" => Unsupported("which jobs stop when one finishes"),
        "fill_device" | "fill_fs" => Unsupported(
            "writing until the device is full: volbench writes only files of a stated size",
        ),
        "filename_format" => Unsupported("fio's own file names: volbench names its files itself"),
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run" => {
            Unsupported("a search for the depth that meets a latency target")
        }
        "ss" | "steadystate" | "ss_dur" | "ss_ramp" => {
            Unsupported("fio's steady-state stop (volbench has its own: --steady)")
        }
        "randrepeat" => Note(
            "volbench's offsets repeat for the same seed",
            bool_opt(opt) != Some(false),
        ),
        "norandommap" => Note(
            "volbench picks random offsets independently, as fio with norandommap",
            true,
        ),
        "random_generator" => Note("volbench uses its own generator (uniform offsets)", false),
        "kb_base" if v.trim() == "1024" => Note("binary units", true),
        "loops" if v.trim() == "1" => Note("one pass", true),
        "offset" if parse_size(v).ok() == Some(0) => Note("from the start", true),
        "fsync_on_close" if v.trim() == "0" => Note("fio's default: none", true),
        "verify" if matches!(v.trim(), "0" | "none") => Note("no verification", true),
        "fsync_on_close" => Unsupported("fsync on close"),
        "o_dsync" => Unsupported("O_DSYNC on the job's own open (use sync=dsync)"),
        "rate_min" | "rate_iops_min" | "rate_cycle" | "rate_ignore_thinktime" => {
            Unsupported("a minimum rate")
        }
        "exitall" | "exitall_on_error" => {
            Note("a run's threads start and stop together in volbench", false)
        }
        "fallocate" | "overwrite" | "create_on_open" | "allow_file_create" | "unlink"
        | "pre_read" | "file_service_type" | "create_serialize" => Note(
            "volbench creates, fills and keeps its own file set before measuring",
            false,
        ),
        "iodepth_batch"
        | "iodepth_batch_submit"
        | "iodepth_batch_complete"
        | "iodepth_batch_complete_min"
        | "iodepth_batch_complete_max"
        | "iodepth_low"
        | "hipri"
        | "fixedbufs"
        | "registerfiles"
        | "sqthread_poll"
        | "refill_buffers" => Note(
            "engine tuning volbench decides itself (the queue depth is kept)",
            false,
        ),
        "cpus_allowed"
        | "cpumask"
        | "cpus_allowed_policy"
        | "numa_cpu_nodes"
        | "numa_mem_policy"
        | "nice"
        | "prio"
        | "prioclass" => Note(
            "ignored: volbench does not pin or reprioritise its threads",
            false,
        ),
        "write_bw_log"
        | "write_lat_log"
        | "write_iops_log"
        | "write_hist_log"
        | "log_avg_msec"
        | "log_hist_msec"
        | "per_job_logs"
        | "clat_percentiles"
        | "lat_percentiles"
        | "slat_percentiles"
        | "percentile_list"
        | "disable_lat"
        | "disable_clat"
        | "disable_slat"
        | "disable_bw_measurement"
        | "gtod_reduce"
        | "unified_rw_reporting"
        | "stats" => Note(
            "volbench records its own time series and merged-histogram percentiles",
            false,
        ),
        _ => return None,
    })
}
