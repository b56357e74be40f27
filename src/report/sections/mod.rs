//! The report's sections beside the charts: hosts, targets, host scaling,
//! an SMB client's channels, the diagnosis, and what `compare` must say before any ratio.

pub(crate) mod conditions;
pub(crate) mod diagnosis;
pub(crate) mod host_scaling;
pub(crate) mod hosts;
pub(crate) mod search;
pub(crate) mod smb;
pub(crate) mod targets;
pub(crate) mod trend;
