//! Authentication for SESSION_SETUP: NTLMv2 through NTLMSSP (`ntlm`),
//! wrapped in SPNEGO (`spnego`), and where the password comes from
//! (`creds`). Kerberos is not offered: no Kerberos crate builds within
//! rust-version 1.85 without an async runtime (sspi needs 1.93).

pub mod creds;
pub(crate) mod ntlm;
pub(crate) mod spnego;
