//! The flags that shape a run's I/O (`spec::shape`), shared by `run` and
//! `suite run` through `CommonArgs`. Values arrive as text, parsed by
//! `input::shape` for flags and suite keys alike.

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ShapeArgs {
    /// Where random offsets land: uniform, zipf:THETA (0.01..10; block k
    /// gets weight 1/k^THETA), pareto:H (0.01..0.99; H of the I/O to the
    /// first 1-H of the space) or hot:IO%/SPACE%[,...] (up to 64 zones from
    /// the start: hot:80/20 sends 80% of the I/O to the first 20%)
    /// [default: uniform]. Random patterns only.
    #[arg(long, value_name = "DIST")]
    pub(crate) distribution: Option<String>,

    /// Random patterns: the percentage of I/Os (0..100) that seek to a
    /// random offset; the others continue sequentially from the last one
    /// (vdbench seekpct) [default: 100].
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub(crate) seek_pct: Option<String>,

    /// Sequential patterns: where each thread streams. split: each thread
    /// walks its own share of the set, together once over it (the default).
    /// each, each:OFFSET or each:OFFSET,STEP: each thread makes its own pass,
    /// thread t from OFFSET + t x STEP, all as long as the last thread's fits in the set
    /// (fio's jobs on a shared file: offset, offset_increment, size).
    #[arg(long, value_name = "HOW")]
    pub(crate) streams: Option<String>,

    /// Each thread syncs the files it wrote after every N writes it
    /// completed (1..1000000000; fio fsync=N); its I/O drains first.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) fsync_every: Option<String>,

    /// Make the syncs of --fsync-every and --end-fsync fdatasync (data
    /// only), as fio's fdatasync=N.
    #[arg(long)]
    pub(crate) fdatasync: bool,

    /// Sync every file a thread wrote when the run ends (fio end_fsync);
    /// not counted in the figures.
    #[arg(long)]
    pub(crate) end_fsync: bool,

    /// Random patterns: each thread reads or writes every block once per
    /// pass in a shuffled order, as fio's random map (its default; fio's
    /// norandommap is volbench's default); buffered runs drop the set's
    /// cached pages at each pass's end, as fio does.
    #[arg(long)]
    pub(crate) random_map: bool,

    /// Pause each thread this long after a completion before it issues
    /// again (0..1h; fio thinktime).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub(crate) think_time: Option<String>,

    /// Keep the I/O going this long after measuring, counted nowhere
    /// (0..1d; diskspd -C).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    pub(crate) cooldown: Option<String>,
}
