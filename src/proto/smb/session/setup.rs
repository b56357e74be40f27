//! The set-up exchanges of a channel: NEGOTIATE (with the 3.1.1 contexts
//! and the preauth hash), SESSION_SETUP rounds carrying SPNEGO/NTLMSSP
//! (a new session, or a binding of this connection to an existing one),
//! and the synchronous round trip they are all made of.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::super::auth::ntlm::{self, Identity, Nonces};
use super::super::auth::spnego;
use super::super::conn::channel::Channel;
use super::super::conn::slots::Sink;
use super::super::consts::{Cipher, Command, Dialect, caps, security_mode, session_flags, status};
use super::super::crypto::preauth::Preauth;
use super::super::crypto::sign::{self, Signer};
use super::super::error::{SmbError, SmbResult};
use super::super::header::{HEADER_LEN, decode_header};
use super::super::msg::negotiate::{self, NegotiateRequest, NegotiateResponse};
use super::super::msg::session as msg;
use super::{Auth, Options};

/// How a set-up request is sent.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Call {
    /// Unsigned and unencrypted whatever the session does.
    pub(crate) plain: bool,
    /// Keep the request's bytes (for the preauth hash).
    pub(crate) keep_request: bool,
    /// Signed with the session's key (a binding request).
    pub(crate) sign_with_session: bool,
}

/// Sends one request and waits for its reply (kept in the channel).
pub(crate) fn roundtrip(
    ch: &mut Channel,
    command: Command,
    tree: u32,
    call: Call,
    body: impl FnOnce(&mut Vec<u8>),
) -> SmbResult<u32> {
    ch.stage(command, 0, tree, Sink::Keep, 1, 0, body);
    if let Some(s) = ch.last_staged() {
        s.plain = call.plain;
        s.keep_request = call.keep_request;
        s.sign_override = call.sign_with_session;
    }
    let (_, st) = ch.call()?;
    Ok(st)
}

/// Copies of the last reply and request (set-up time: allocation is fine).
fn kept(ch: &Channel) -> (Vec<u8>, Vec<u8>) {
    let (a, b) = ch.kept();
    (a.to_vec(), b.to_vec())
}

/// Random bytes from the operating system.
pub(crate) fn random<const N: usize>() -> SmbResult<[u8; N]> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| {
        SmbError::Unsupported(format!("no random numbers from the operating system: {e}"))
    })?;
    Ok(b)
}

/// The capabilities this client announces.
pub(crate) const CLIENT_CAPS: u32 = caps::LARGE_MTU | caps::MULTI_CHANNEL | caps::ENCRYPTION;

/// The security mode this client announces.
pub(crate) fn client_security_mode(opts: &Options) -> u16 {
    match opts.signing {
        super::Signing::On => security_mode::SIGNING_ENABLED | security_mode::SIGNING_REQUIRED,
        _ => security_mode::SIGNING_ENABLED,
    }
}

/// NEGOTIATE on a fresh connection. Returns the server's answer and the
/// connection's preauth hash (3.1.1).
pub(crate) fn negotiate(
    ch: &mut Channel,
    opts: &Options,
    guid: [u8; 16],
    server: &str,
) -> SmbResult<(NegotiateResponse, Preauth)> {
    let salt = random::<32>()?;
    // Every cipher is offered, so a server that demands encryption can
    // have it; the session encrypts only when asked to or demanded.
    let ciphers = if opts.encryption.is_empty() {
        Cipher::ALL.to_vec()
    } else {
        opts.encryption.clone()
    };
    let req = NegotiateRequest {
        dialects: &opts.dialects,
        security_mode: client_security_mode(opts),
        capabilities: CLIENT_CAPS,
        client_guid: guid,
        salt,
        ciphers: &ciphers,
        signing: &opts.signing_algos,
        server_name: server,
    };
    let call = Call {
        plain: true,
        keep_request: true,
        ..Call::default()
    };
    let st = roundtrip(ch, Command::Negotiate, 0, call, |v| {
        let base = v.len() - HEADER_LEN;
        negotiate::encode_negotiate(&req, v, base)
    })?;
    if st != status::SUCCESS {
        return Err(SmbError::status(
            Command::Negotiate,
            st,
            format!("SMB server {}", ch.peer()),
        ));
    }
    let (reply, request) = kept(ch);
    let neg = negotiate::decode_negotiate(&reply)
        .map_err(|m| SmbError::protocol(&ch.peer().to_string(), m))?;
    if !opts.dialects.contains(&neg.dialect) {
        return Err(SmbError::Protocol(format!(
            "{}: the server chose dialect {}, which was not offered",
            ch.peer(),
            neg.dialect.name()
        )));
    }
    let mut pre = Preauth::default();
    if neg.dialect == Dialect::Smb311 {
        if neg.preauth_hash != Some(negotiate::SHA512) {
            return Err(SmbError::Protocol(format!(
                "{}: a preauth hash other than SHA-512",
                ch.peer()
            )));
        }
        pre.update(&request);
        pre.update(&reply);
    }
    Ok((neg, pre))
}

/// How SESSION_SETUP is to go.
pub(crate) enum Logon<'a> {
    /// A new session.
    New,
    /// Binds this connection to the session `id`, whose requests are
    /// signed with `signer` (the session's key).
    Bind { id: u64, signer: &'a Signer },
}

/// What a logon produced.
pub(crate) struct LoggedOn {
    /// NTLM's exported session key (none for an anonymous logon).
    pub(crate) session_key: Option<[u8; 16]>,
    pub(crate) flags: u16,
    /// The session's preauth hash (3.1.1), for its keys.
    pub(crate) preauth: Preauth,
    /// The final reply, whose signature the caller checks once it has
    /// derived the key.
    pub(crate) final_reply: Vec<u8>,
}

fn filetime_now() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    since.as_nanos() as u64 / 100 + 116_444_736_000_000_000
}

/// The NTLMSSP token inside a server's SESSION_SETUP blob (SPNEGO or raw).
fn server_ntlm(blob: &[u8], peer: &str) -> SmbResult<(Vec<u8>, bool)> {
    if ntlm::is_ntlmssp(blob) {
        return Ok((blob.to_vec(), true));
    }
    let t = spnego::decode_server_token(blob).map_err(|m| SmbError::protocol(peer, m))?;
    if t.state == Some(2) {
        return Err(SmbError::Protocol(format!(
            "{peer}: the server rejected NTLMSSP"
        )));
    }
    Ok((t.token, false))
}

/// SESSION_SETUP rounds with NTLMSSP in SPNEGO.
pub(crate) fn logon(
    ch: &mut Channel,
    neg: &NegotiateResponse,
    mut pre: Preauth,
    auth: &Auth,
    how: Logon<'_>,
    opts: &Options,
) -> SmbResult<LoggedOn> {
    let peer = ch.peer().to_string();
    if !spnego::offers_ntlmssp(&neg.security_blob) {
        return Err(SmbError::protocol(&peer, ntlm::no_ntlmssp()));
    }
    let (flags, signer) = match how {
        Logon::New => (0u8, None),
        Logon::Bind { id, signer } => {
            ch.session_id = id;
            // The binding requests are signed with the session's key.
            ch.keys.session_signer = Some(signer.clone());
            (msg::BINDING, Some(signer))
        }
    };
    let mode = client_security_mode(opts) as u8;
    let smb311 = neg.dialect == Dialect::Smb311;
    let call = Call {
        plain: signer.is_none(),
        keep_request: true,
        sign_with_session: signer.is_some(),
    };
    let first = spnego::init_token(&ntlm::negotiate_message());
    let st = roundtrip(ch, Command::SessionSetup, 0, call, |v| {
        msg::encode_session_setup(flags, mode, &first, v)
    })?;
    let (reply, request) = kept(ch);
    if smb311 {
        pre.update(&request);
    }
    if st != status::MORE_PROCESSING_REQUIRED {
        return Err(SmbError::status(
            Command::SessionSetup,
            st,
            format!("logging on to {peer}"),
        ));
    }
    if smb311 {
        pre.update(&reply);
    }
    let h = decode_header(&reply).map_err(|m| SmbError::protocol(&peer, m))?;
    ch.session_id = h.session_id;
    let r = msg::decode_session_setup(&reply).map_err(|m| SmbError::protocol(&peer, m))?;
    let (token, raw) = server_ntlm(&r.blob, &peer)?;
    let challenge = ntlm::decode_challenge(&token).map_err(|m| SmbError::protocol(&peer, m))?;
    let nonces = Nonces {
        client_challenge: random::<8>()?,
        exported_session_key: random::<16>()?,
        now: filetime_now(),
    };
    let who = match auth {
        Auth::Guest => Identity::Anonymous,
        Auth::Ntlm(c) => Identity::User {
            user: &c.user,
            domain: &c.domain,
            password: c.password.expose(),
        },
    };
    let a = ntlm::authenticate(&challenge, who, &nonces, "VOLBENCH");
    let second = if raw {
        a.message
    } else {
        spnego::response_token(&a.message)
    };
    let st = roundtrip(ch, Command::SessionSetup, 0, call, |v| {
        msg::encode_session_setup(flags, mode, &second, v)
    })?;
    let (reply, request) = kept(ch);
    if smb311 {
        pre.update(&request);
    }
    if st != status::SUCCESS {
        return Err(SmbError::status(
            Command::SessionSetup,
            st,
            format!("logging on to {peer}"),
        ));
    }
    let r = msg::decode_session_setup(&reply).map_err(|m| SmbError::protocol(&peer, m))?;
    let anonymous = r.session_flags & (session_flags::IS_NULL | session_flags::IS_GUEST) != 0;
    Ok(LoggedOn {
        session_key: if anonymous { None } else { a.session_key },
        flags: r.session_flags,
        preauth: pre,
        final_reply: reply,
    })
}

/// Checks the final SESSION_SETUP reply's signature with the new key: the
/// proof that the server knows the same session key (and, in 3.1.1, saw
/// the same negotiation).
pub(crate) fn check_final_signature(
    reply: &[u8],
    signer: &Signer,
    required: bool,
    peer: &str,
) -> SmbResult<()> {
    let h = decode_header(reply).map_err(|m| SmbError::protocol(peer, m))?;
    if !h.is_signed() {
        if required {
            return Err(SmbError::Protocol(format!(
                "{peer}: the logon's final reply is not signed"
            )));
        }
        return Ok(());
    }
    let mut hb = [0u8; HEADER_LEN];
    hb.copy_from_slice(&reply[..HEADER_LEN]);
    let mut run = signer.start(&hb, true, false);
    run.update(&reply[HEADER_LEN..]);
    if !sign::equal(&run.finish(), &h.signature) {
        return Err(SmbError::Protocol(format!(
            "{peer}: the logon's final reply has a bad signature (a wrong password on a server that maps it to guest, or tampering)"
        )));
    }
    Ok(())
}
