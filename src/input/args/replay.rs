//! The flags of `run --replay FILE`: a recorded trace issued onto the
//! target at its times, scaled, or as fast as the depth allows.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Replay")]
pub(crate) struct ReplayArgs {
    /// Replay a trace: volbench.trace/v1 (`capture --trace`), fio's iolog
    /// v2/v3 (write_iolog) or a blktrace binary (blkparse -d), told apart by
    /// its first bytes. Each request is issued at its recorded time with up
    /// to --iodepth in flight (a request that finds the depth full is
    /// counted late); offsets land on --target as recorded (a directory
    /// gets a file set the size of the trace's span). Flushes and
    /// discards are replayed and counted. A suite run's `replay` table
    /// says the same (with fio's scale, align and skip), and `volbench fio`
    /// maps read_iolog and replay_* onto it. See docs/reference/replay.md.
    #[arg(long, value_name = "FILE")]
    pub(crate) replay: Option<PathBuf>,

    /// Replay N times as fast as recorded (0.5 = half speed), 0.001..1000,
    /// or `max`: as fast as the depth allows [default: 1].
    #[arg(
        long,
        value_name = "N",
        requires = "replay",
        allow_negative_numbers = true
    )]
    pub(crate) replay_speed: Option<String>,

    /// Wrap offsets beyond the target around it (modulo its size) instead
    /// of refusing the trace.
    #[arg(long, requires = "replay")]
    pub(crate) replay_wrap: bool,

    /// With --hosts: `share` (default) deals each request to one host by
    /// its offset's 1 MiB stripe, so the hosts together issue the trace
    /// once at its times; `whole` replays the whole trace on every host,
    /// host i starting i x --replay-offset later. The coordinator sends
    /// each host its part (at most 512 MiB of trace text a host);
    /// --dry-run lists each host's part.
    #[arg(long, value_name = "RULE", requires = "replay", value_parser = ["share", "whole"])]
    pub(crate) replay_split: Option<String>,

    /// With --replay-split whole: how much later each host starts than the
    /// one before (0..1h) [default: 0].
    #[arg(long, value_name = "DURATION", requires = "replay_split")]
    pub(crate) replay_offset: Option<String>,
}
