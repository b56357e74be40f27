//! The flag of a job over several local targets (`--target` with a brace
//! list), shared by `run` and `suite run` through `CommonArgs`.

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct TargetListArgs {
    /// With several targets (`--target '/mnt/x{0..9}.dat'`): --threads is
    /// the total over all of them, spread evenly (diskspd -F). By default
    /// each target gets --threads of its own (diskspd -t).
    #[arg(long)]
    pub(crate) threads_total: bool,
}
