//! One job across many client hosts. The coordinator (`volbench run
//! --hosts ...`) starts `volbench agent` on each host through a launcher
//! (the system ssh client by default; srun, kubectl exec, any exec-style
//! command); agents run the same executor as a local run and stream
//! intervals and final results (with histograms) back over a versioned
//! line protocol; the coordinator merges them exactly.

pub(crate) mod agent;
pub(crate) mod coordinator;
pub(crate) mod launch;
pub mod protocol;
pub mod push;
