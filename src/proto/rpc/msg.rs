//! ONC RPC messages (RFC 5531): the call header this client sends, with
//! its AUTH_SYS credential (section 9.2 / appendix A), and the reply
//! header it reads back, every refusal a server can give named.

use super::xdr::{Dec, Enc, Xdr, XdrError};

const CALL: u32 = 0;
const REPLY: u32 = 1;
const RPC_VERSION: u32 = 2;
const MSG_ACCEPTED: u32 = 0;
const MSG_DENIED: u32 = 1;
pub(crate) const AUTH_NONE: u32 = 0;
pub(crate) const AUTH_SYS: u32 = 1;
/// RFC 5531: a credential or verifier body is at most 400 bytes.
const MAX_AUTH_BODY: usize = 400;
/// AUTH_SYS: a machine name of at most 255 bytes, at most 16 groups.
pub(crate) const MAX_MACHINE_NAME: usize = 255;
pub(crate) const MAX_GIDS: usize = 16;

/// A credential and verifier, encoded once and copied into every call.
#[derive(Clone)]
pub(crate) struct Auth {
    bytes: [u8; 2 * (8 + MAX_AUTH_BODY)],
    len: usize,
}

impl Auth {
    pub(crate) fn none() -> Auth {
        let mut a = Auth {
            bytes: [0; 2 * (8 + MAX_AUTH_BODY)],
            len: 0,
        };
        let mut e = Enc::new(&mut a.bytes);
        e.u32(AUTH_NONE);
        e.u32(0);
        e.u32(AUTH_NONE);
        e.u32(0);
        a.len = e.pos();
        a
    }

    /// AUTH_SYS with these ids (the machine name cut to 255 bytes and the
    /// groups to 16, the protocol's limits), and an AUTH_NONE verifier.
    pub(crate) fn sys(stamp: u32, machine: &str, uid: u32, gid: u32, gids: &[u32]) -> Auth {
        let mut a = Auth::none();
        let name = &machine.as_bytes()[..machine.len().min(MAX_MACHINE_NAME)];
        let gids = &gids[..gids.len().min(MAX_GIDS)];
        let mut body = [0u8; MAX_AUTH_BODY];
        let mut e = Enc::new(&mut body);
        e.u32(stamp);
        e.opaque(name);
        e.u32(uid);
        e.u32(gid);
        e.u32(gids.len() as u32);
        for g in gids {
            e.u32(*g);
        }
        // 4 + 4+256 + 4 + 4 + 4 + 64 = 340 bytes at most: it always fits.
        let n = e.pos();
        let mut e = Enc::new(&mut a.bytes);
        e.u32(AUTH_SYS);
        e.opaque(&body[..n]);
        e.u32(AUTH_NONE);
        e.u32(0);
        a.len = e.pos();
        a
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Writes a record mark placeholder (4 bytes, patched once the length is
/// known) and the call header. The arguments follow.
pub(crate) fn call_header(e: &mut Enc, xid: u32, prog: u32, vers: u32, proc_: u32, auth: &Auth) {
    e.u32(0);
    e.u32(xid);
    e.u32(CALL);
    e.u32(RPC_VERSION);
    e.u32(prog);
    e.u32(vers);
    e.u32(proc_);
    e.fixed(auth.bytes());
}

/// A server's refusal of a call, as the reply header says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    ProgUnavail,
    ProgMismatch {
        low: u32,
        high: u32,
    },
    ProcUnavail,
    GarbageArgs,
    SystemErr,
    RpcMismatch {
        low: u32,
        high: u32,
    },
    /// AUTH_ERROR with its auth_stat (RFC 5531 section 9).
    Auth(u32),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::ProgUnavail => f.write_str("the server does not serve this RPC program"),
            Refusal::ProgMismatch { low, high } => {
                write!(
                    f,
                    "the server serves versions {low} to {high} of this program only"
                )
            }
            Refusal::ProcUnavail => f.write_str("the server does not know this procedure"),
            Refusal::GarbageArgs => {
                f.write_str("the server could not decode the call (GARBAGE_ARGS)")
            }
            Refusal::SystemErr => f.write_str("the server failed the call (SYSTEM_ERR)"),
            Refusal::RpcMismatch { low, high } => {
                write!(f, "the server speaks RPC versions {low} to {high} only")
            }
            Refusal::Auth(stat) => {
                let why = match stat {
                    1 => "bad credential (AUTH_BADCRED)",
                    2 => "credential rejected (AUTH_REJECTEDCRED): the server wants a new session",
                    3 => "bad verifier (AUTH_BADVERF)",
                    4 => "verifier rejected (AUTH_REJECTEDVERF)",
                    5 => {
                        "authentication too weak (AUTH_TOOWEAK): the export may need Kerberos or a privileged source port"
                    }
                    _ => "authentication refused",
                };
                write!(f, "the server refused the credential: {why}")
            }
        }
    }
}

/// A reply's header: its xid, and where its results start in the record,
/// or what the server refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplyHead {
    pub(crate) xid: u32,
    pub(crate) outcome: Result<usize, Refusal>,
}

/// The xid of a record, from its first 4 bytes.
pub(crate) fn xid_of(record: &[u8]) -> Option<u32> {
    record
        .get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Decodes a reply header. `record` may be a prefix of the record (a READ's
/// data still arriving): `Short` means the header itself is incomplete.
pub(crate) fn parse_reply(record: &[u8]) -> Xdr<ReplyHead> {
    let mut d = Dec::new(record);
    let xid = d.u32()?;
    if d.u32()? != REPLY {
        return Err(XdrError::Bad("a message that is not an RPC reply"));
    }
    let outcome = match d.u32()? {
        MSG_ACCEPTED => {
            let _flavor = d.u32()?;
            d.opaque(MAX_AUTH_BODY)?;
            match d.u32()? {
                0 => Ok(d.pos()),
                1 => Err(Refusal::ProgUnavail),
                2 => Err(Refusal::ProgMismatch {
                    low: d.u32()?,
                    high: d.u32()?,
                }),
                3 => Err(Refusal::ProcUnavail),
                4 => Err(Refusal::GarbageArgs),
                5 => Err(Refusal::SystemErr),
                _ => return Err(XdrError::Bad("an unknown accept_stat in an RPC reply")),
            }
        }
        MSG_DENIED => match d.u32()? {
            0 => Err(Refusal::RpcMismatch {
                low: d.u32()?,
                high: d.u32()?,
            }),
            1 => Err(Refusal::Auth(d.u32()?)),
            _ => return Err(XdrError::Bad("an unknown reject_stat in an RPC reply")),
        },
        _ => return Err(XdrError::Bad("an unknown reply_stat in an RPC reply")),
    };
    Ok(ReplyHead { xid, outcome })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An accepted reply header with `results` after it (for fake servers).
    pub(crate) fn accepted(xid: u32, results: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [xid, REPLY, MSG_ACCEPTED, AUTH_NONE, 0, 0] {
            v.extend_from_slice(&w.to_be_bytes());
        }
        v.extend_from_slice(results);
        v
    }

    #[test]
    fn a_call_header_carries_the_credential() {
        let auth = Auth::sys(1, "host", 1000, 100, &[100, 200]);
        let mut buf = [0u8; 512];
        let mut e = Enc::new(&mut buf);
        call_header(&mut e, 0x1234, 100003, 3, 6, &auth);
        let n = e.finish().unwrap();
        let mut d = Dec::new(&buf[4..n]);
        assert_eq!(d.u32(), Ok(0x1234));
        assert_eq!(d.u32(), Ok(CALL));
        assert_eq!(d.u32(), Ok(2));
        assert_eq!((d.u32(), d.u32(), d.u32()), (Ok(100003), Ok(3), Ok(6)));
        assert_eq!(d.u32(), Ok(AUTH_SYS));
        let body = d.opaque(400).unwrap();
        let mut b = Dec::new(body);
        assert_eq!(b.u32(), Ok(1));
        assert_eq!(b.opaque(255), Ok(&b"host"[..]));
        assert_eq!((b.u32(), b.u32(), b.u32()), (Ok(1000), Ok(100), Ok(2)));
    }

    #[test]
    fn replies_name_what_the_server_refused() {
        let ok = accepted(9, &[0, 0, 0, 0]);
        assert_eq!(
            parse_reply(&ok),
            Ok(ReplyHead {
                xid: 9,
                outcome: Ok(24)
            })
        );
        let mut denied = Vec::new();
        for w in [9u32, REPLY, MSG_DENIED, 1, 5] {
            denied.extend_from_slice(&w.to_be_bytes());
        }
        let h = parse_reply(&denied).unwrap();
        assert_eq!(h.outcome, Err(Refusal::Auth(5)));
        assert!(Refusal::Auth(5).to_string().contains("privileged"));
        assert_eq!(parse_reply(&denied[..12]), Err(XdrError::Short));
    }

    proptest! {
        #[test]
        fn any_bytes_decode_to_a_header_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(h) = parse_reply(&bytes) {
                if let Ok(at) = h.outcome { prop_assert!(at <= bytes.len()); }
            }
        }
    }
}
