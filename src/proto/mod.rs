//! Protocol clients spoken in user space: the bottom layer the I/O back ends
//! stand on. Each client is pure protocol (encoders, decoders, sockets,
//! cryptography) and knows nothing of jobs, workers or results, so the
//! engines above can drive it and a fuzz harness can call its decoders.

pub mod smb;
