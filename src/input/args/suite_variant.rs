//! The `suite run` / `suite show` switch for a suite's published variant.

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct PublishedArg {
    /// Use the suite's published variant: its paper's thread counts, sizes
    /// and durations (the `[published]` table; `suite show NAME
    /// --published` prints it) instead of the scaled-down defaults. Flags
    /// still replace its [published.defaults]; a value one of its runs sets
    /// itself is kept. A suite without one is refused.
    #[arg(long)]
    pub(crate) published: bool,
}
