//! The client of one share: a session, its tree connect and its channels.
//! `connect` makes the first channel (NEGOTIATE, logon, keys, TREE_CONNECT,
//! the 3.0/3.0.2 negotiation check); `add_channels` binds more connections
//! to the same session (multichannel), over the server's interfaces or the
//! addresses given. A lost connection is not replayed here: its requests
//! fail, and `reconnect_until` (counted per channel) makes a new session
//! when the caller decides; the caller reopens its files and sends again.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::super::conn::channel::{Channel, ChannelKeys, ChannelOptions};
use super::super::consts::{
    Cipher, Command, Dialect, SigningAlgo, caps, security_mode, session_flags, share_flags, status,
};
use super::super::crypto::kdf::{self, Keys};
use super::super::crypto::seal::Sealer;
use super::super::crypto::sign::Signer;
use super::super::error::{SmbError, SmbResult};
use super::super::msg::FileId;
use super::super::msg::ioctl::{self, NetInterface};
use super::super::msg::negotiate::NegotiateResponse;
use super::super::msg::session as msg;
use super::super::stats::ChannelStats;
use super::setup::{self, Call, Logon, roundtrip};
use super::{Auth, Negotiated, Options, Signing, Target};

pub struct Client {
    target: Target,
    opts: Options,
    auth: Auth,
    guid: [u8; 16],
    pub(super) channels: Vec<Channel>,
    pub(super) tree_id: u32,
    negotiated: Negotiated,
    session_key: Option<[u8; 16]>,
    keys: Option<Keys>,
    session_signer: Option<Signer>,
    reconnects: u32,
    /// Counters of channels that were replaced (kept for the totals).
    retired: ChannelStats,
}

/// The session's parts a channel copies.
struct Established {
    ch: Channel,
    negotiated: Negotiated,
    session_key: Option<[u8; 16]>,
    keys: Option<Keys>,
    session_signer: Option<Signer>,
    tree_id: u32,
}

fn channel_options(opts: &Options) -> ChannelOptions {
    ChannelOptions {
        request_timeout: opts.request_timeout,
        pending_timeout: opts.pending_timeout,
        credit_target: opts.credit_target.max(16),
        ..ChannelOptions::default()
    }
}

/// The negotiated READ/WRITE size and the largest frame to accept.
fn limits(neg: &NegotiateResponse, opts: &Options) -> (u32, usize) {
    let large = neg.capabilities & caps::LARGE_MTU != 0 && neg.dialect >= Dialect::Smb210;
    let server = neg.max_read.min(neg.max_write);
    let mut io = opts.max_io.min(server).max(4096);
    if !large {
        io = io.min(65536);
    }
    // Frames past the Direct TCP limit cannot exist.
    io = io.min(8 << 20);
    let frame = (io.max(65536) as usize) + 4096;
    (io, frame)
}

impl Client {
    /// Connects, logs on and connects the share. One line of error for a
    /// refused connection, a wrong password, a missing share.
    pub fn connect(target: Target, auth: Auth, opts: Options) -> SmbResult<Client> {
        if opts.dialects.is_empty() {
            return Err(SmbError::Unsupported("no SMB dialect to offer".into()));
        }
        let guid = setup::random::<16>()?;
        let e = establish(&target, &auth, &opts, guid)?;
        Ok(Client {
            target,
            opts,
            auth,
            guid,
            channels: vec![e.ch],
            tree_id: e.tree_id,
            negotiated: e.negotiated,
            session_key: e.session_key,
            keys: e.keys,
            session_signer: e.session_signer,
            reconnects: 0,
            retired: ChannelStats::default(),
        })
    }

    pub fn negotiated(&self) -> &Negotiated {
        &self.negotiated
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn tree_id(&self) -> u32 {
        self.tree_id
    }

    pub fn channels_mut(&mut self) -> &mut [Channel] {
        &mut self.channels
    }

    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    pub fn reconnects(&self) -> u32 {
        self.reconnects
    }

    /// The counters of the channels replaced since they last started over
    /// (the engine's live totals; the engine is Unix-only, as the client is).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) fn retired_stats(&self) -> &ChannelStats {
        &self.retired
    }

    /// Every channel's counters added up (with those of replaced channels).
    pub fn total_stats(&self) -> ChannelStats {
        let mut t = self.retired.clone();
        for c in &self.channels {
            t.merge(c.stats());
        }
        t
    }

    /// Starts every channel's counters over (a run's measured phase begins):
    /// what was sent before is left out, replaced channels' too.
    pub fn reset_stats(&mut self) {
        self.retired = ChannelStats::default();
        for c in &mut self.channels {
            c.reset_stats();
        }
    }

    /// The server's network interfaces (FSCTL_QUERY_NETWORK_INTERFACE_INFO).
    pub fn query_interfaces(&mut self) -> SmbResult<Vec<NetInterface>> {
        let tree = self.tree_id;
        let call = Call {
            sign_with_session: self.session_signer.is_some(),
            ..Call::default()
        };
        let ch = &mut self.channels[0];
        let st = roundtrip(ch, Command::Ioctl, tree, call, |v| {
            ioctl::encode_ioctl(
                ioctl::FSCTL_QUERY_NETWORK_INTERFACE_INFO,
                FileId::NONE,
                &[],
                65536,
                v,
            )
        })?;
        if st != status::SUCCESS {
            return Err(SmbError::status(
                Command::Ioctl,
                st,
                format!("asking {} for its interfaces", ch.peer()),
            ));
        }
        let (reply, _) = ch.kept();
        let peer = ch.peer().to_string();
        let out = ioctl::decode_ioctl(reply).map_err(|m| SmbError::protocol(&peer, m))?;
        ioctl::decode_interfaces(out).map_err(|m| SmbError::protocol(&peer, m))
    }

    /// Adds channels until there are `total`, bound to this session: over
    /// `addrs` in turn when given, else over the interfaces the server
    /// reports (fastest first). Returns the addresses the new channels use.
    pub fn add_channels(
        &mut self,
        total: usize,
        addrs: &[SocketAddr],
    ) -> SmbResult<Vec<SocketAddr>> {
        if total <= self.channels.len() {
            return Ok(Vec::new());
        }
        if !self.negotiated.multichannel {
            return Err(SmbError::Unsupported(format!(
                "SMB server {} does not offer multichannel (dialect {}, no MULTI_CHANNEL capability)",
                self.target.server,
                self.negotiated.dialect.name()
            )));
        }
        let list: Vec<SocketAddr> = if addrs.is_empty() {
            let ifaces = self.query_interfaces()?;
            let l = ioctl::channel_addresses(&ifaces, self.target.addr.port());
            if l.is_empty() {
                vec![self.target.addr]
            } else {
                l
            }
        } else {
            addrs.to_vec()
        };
        let mut used = Vec::new();
        let mut k = 0;
        while self.channels.len() < total {
            let addr = list[k % list.len()];
            k += 1;
            self.bind(addr)?;
            used.push(addr);
        }
        Ok(used)
    }

    /// Binds one more connection, to `addr`, to this session.
    pub(crate) fn bind(&mut self, addr: SocketAddr) -> SmbResult<()> {
        let (Some(signer), Some(_), Some(_)) =
            (self.session_signer.clone(), self.session_key, &self.keys)
        else {
            return Err(SmbError::Unsupported(
                "multichannel needs a logged-on user: a guest session has no key to bind a channel with".into(),
            ));
        };
        let index = self.channels.len() as u16;
        let mut ch = Channel::connect(
            addr,
            self.opts.connect_timeout,
            index,
            channel_options(&self.opts),
        )?;
        let (neg, pre) = setup::negotiate(&mut ch, &self.opts, self.guid, &self.target.server)?;
        if neg.dialect != self.negotiated.dialect || neg.capabilities & caps::MULTI_CHANNEL == 0 {
            return Err(SmbError::Protocol(format!(
                "{addr}: a channel negotiated {} without multichannel where the session has {}",
                neg.dialect.name(),
                self.negotiated.dialect.name()
            )));
        }
        let (_, frame) = limits(&neg, &self.opts);
        ch.set_limits(frame, true);
        let bind = Logon::Bind {
            id: self.channels[0].session_id,
            signer: &signer,
        };
        let lo = setup::logon(&mut ch, &neg, pre, &self.auth, bind, &self.opts)?;
        if lo.flags & session_flags::IS_GUEST != 0 {
            return Err(SmbError::Protocol(format!(
                "{addr}: a channel binding logged on as guest"
            )));
        }
        let Some(binding_key) = lo.session_key else {
            return Err(SmbError::Protocol(format!(
                "{addr}: a channel binding without a session key"
            )));
        };
        let key = kdf::channel_signing_key(self.negotiated.dialect, &binding_key, &lo.preauth.0);
        let algo = self.negotiated.signing_algo.unwrap_or(SigningAlgo::AesCmac);
        let ch_signer = Signer::new(algo, &key);
        setup::check_final_signature(&lo.final_reply, &ch_signer, true, &addr.to_string())?;
        let mut k = self.channels[0].keys.clone();
        k.signer = Some(ch_signer);
        ch.set_keys(k);
        self.channels.push(ch);
        Ok(())
    }

    /// Makes a new session after a lost connection, in one attempt.
    pub fn reconnect(&mut self) -> SmbResult<()> {
        self.reconnect_until(Instant::now(), &|| false)
    }

    /// Makes a new session after a lost connection, dialling again every
    /// 50 ms doubling to 1 s until `deadline` (one attempt at least, each
    /// bounded by the connect and request timeouts): a new TCP connection,
    /// NEGOTIATE, SESSION_SETUP with the credentials held since `connect`
    /// (never read again), TREE_CONNECT, then as many channels as before
    /// bound to the same addresses. Credits and message ids start over
    /// with the new connections. Open files do not survive (no durable
    /// handles): the caller reopens them. Each new channel takes in its
    /// predecessor's counters and counts the reconnect; until a session
    /// stands, the lost channels stay, counters and all. A failure a new
    /// attempt cannot mend (a refused logon, a missing share) ends the
    /// wait at once, and so does `give_up` turning true (the caller's run
    /// was stopped): the last attempt's error is returned.
    pub fn reconnect_until(
        &mut self,
        deadline: Instant,
        give_up: &dyn Fn() -> bool,
    ) -> SmbResult<()> {
        let addrs: Vec<SocketAddr> = self.channels.iter().skip(1).map(Channel::peer).collect();
        let mut pause = Duration::from_millis(50);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let keep = self.opts.connect_timeout;
            self.opts.connect_timeout = keep.min(left.max(Duration::from_millis(200)));
            let old = std::mem::take(&mut self.channels);
            let made = self.remake(&addrs);
            self.opts.connect_timeout = keep;
            match made {
                Ok(()) => {
                    for (i, o) in old.iter().enumerate() {
                        match self.channels.get_mut(i) {
                            Some(c) => c.replaces(o.stats()),
                            None => self.retired.merge(o.stats()),
                        }
                    }
                    self.reconnects += 1;
                    return Ok(());
                }
                Err(e) => {
                    // What the attempt made is dropped; the lost channels
                    // (and their counters) stand until one succeeds.
                    self.channels = old;
                    if !e.needs_reconnect() || Instant::now() + pause > deadline || give_up() {
                        return Err(e);
                    }
                    // In short naps, so a stop is seen within one.
                    let until = Instant::now() + pause;
                    while let Some(left) = until.checked_duration_since(Instant::now()) {
                        if left.is_zero() || give_up() {
                            break;
                        }
                        std::thread::sleep(left.min(Duration::from_millis(50)));
                    }
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    /// One attempt at a new session with a channel to each of `addrs`
    /// beside the first.
    fn remake(&mut self, addrs: &[SocketAddr]) -> SmbResult<()> {
        self.guid = setup::random::<16>()?;
        let e = establish(&self.target, &self.auth, &self.opts, self.guid)?;
        self.channels.push(e.ch);
        self.tree_id = e.tree_id;
        self.negotiated = e.negotiated;
        self.session_key = e.session_key;
        self.keys = e.keys;
        self.session_signer = e.session_signer;
        for &a in addrs {
            self.bind(a)?;
        }
        Ok(())
    }

    /// Disconnects the tree and logs off (best effort: the server may be
    /// gone); the connections close when the client drops.
    pub fn logoff(&mut self) {
        let tree = self.tree_id;
        let Some(ch) = self.channels.first_mut() else {
            return;
        };
        let _ = roundtrip(
            ch,
            Command::TreeDisconnect,
            tree,
            Call::default(),
            msg::encode_empty,
        );
        let _ = roundtrip(ch, Command::Logoff, 0, Call::default(), msg::encode_empty);
    }
}

/// Connects the first channel of a new session.
fn establish(
    target: &Target,
    auth: &Auth,
    opts: &Options,
    guid: [u8; 16],
) -> SmbResult<Established> {
    let peer = target.addr.to_string();
    let mut ch = Channel::connect(target.addr, opts.connect_timeout, 0, channel_options(opts))?;
    let (neg, pre) = setup::negotiate(&mut ch, opts, guid, &target.server)?;
    let (io, frame) = limits(&neg, opts);
    let large = neg.capabilities & caps::LARGE_MTU != 0;
    ch.set_limits(frame, large);
    let lo = setup::logon(&mut ch, &neg, pre, auth, Logon::New, opts)?;
    let guest = lo.flags & session_flags::IS_GUEST != 0;
    // Samba marks an anonymous logon neither null nor guest: what was
    // asked for says it.
    let anonymous = lo.flags & session_flags::IS_NULL != 0 || matches!(auth, Auth::Guest);
    if guest && matches!(auth, Auth::Ntlm(_)) {
        return Err(SmbError::Unsupported(format!(
            "SMB server {peer} logged the user on as guest (a wrong password on a server that maps it to guest): refused"
        )));
    }
    let server_signs = neg.security_mode & security_mode::SIGNING_REQUIRED != 0;
    let algo = match neg.dialect {
        Dialect::Smb210 => SigningAlgo::HmacSha256,
        Dialect::Smb300 | Dialect::Smb302 => SigningAlgo::AesCmac,
        Dialect::Smb311 => neg.signing.unwrap_or(SigningAlgo::AesCmac),
    };
    let cipher: Option<Cipher> = match neg.dialect {
        Dialect::Smb311 => neg.cipher,
        Dialect::Smb300 | Dialect::Smb302 if neg.capabilities & caps::ENCRYPTION != 0 => {
            Some(Cipher::Aes128Ccm)
        }
        _ => None,
    };
    let sign_io = match opts.signing {
        Signing::On => true,
        Signing::Off => server_signs,
        Signing::Auto => server_signs,
    };
    let mut keys = ChannelKeys::default();
    let mut derived = None;
    let mut signer = None;
    if let Some(sk) = lo.session_key {
        let klen = cipher.map_or(16, Cipher::key_len);
        let k = kdf::derive(neg.dialect, &sk, &lo.preauth.0, klen);
        let s = Signer::new(algo, &k.signing);
        setup::check_final_signature(&lo.final_reply, &s, neg.dialect.is_smb3(), &peer)?;
        keys.signer = Some(s.clone());
        keys.session_signer = Some(s.clone());
        keys.sign = sign_io;
        if let Some(c) = cipher {
            keys.seal_out = Some(Sealer::new(c, &k.encrypt));
            keys.seal_in = Some(Sealer::new(c, &k.decrypt));
        }
        derived = Some(k);
        signer = Some(s);
    } else if sign_io {
        return Err(SmbError::Unsupported(format!(
            "SMB server {peer} requires signing, which a guest session cannot do (it has no key)"
        )));
    }
    let want_encrypt = !opts.encryption.is_empty();
    let session_encrypts = lo.flags & session_flags::ENCRYPT_DATA != 0;
    if (want_encrypt || session_encrypts) && keys.seal_out.is_none() {
        return Err(SmbError::Unsupported(format!(
            "SMB server {peer} cannot encrypt this session (dialect {}, {}): none of the ciphers offered was chosen, or the session is a guest's",
            neg.dialect.name(),
            if anonymous || guest {
                "guest"
            } else {
                "no common cipher"
            }
        )));
    }
    keys.encrypt = want_encrypt || session_encrypts;
    ch.set_keys(keys);
    let tree_call = Call {
        sign_with_session: signer.is_some(),
        ..Call::default()
    };
    let unc = format!("\\\\{}\\{}", target.server, target.share);
    let st = roundtrip(&mut ch, Command::TreeConnect, 0, tree_call, |v| {
        msg::encode_tree_connect(&unc, v)
    })?;
    if st != status::SUCCESS {
        return Err(SmbError::status(
            Command::TreeConnect,
            st,
            format!("connecting {unc} at {peer}"),
        ));
    }
    let (reply, _) = ch.kept();
    let h = super::super::header::decode_header(reply).map_err(|m| SmbError::protocol(&peer, m))?;
    let tree = msg::decode_tree_connect(reply).map_err(|m| SmbError::protocol(&peer, m))?;
    if tree.share_type != 1 {
        return Err(SmbError::Unsupported(format!(
            "{unc} is not a disk share (type {})",
            tree.share_type
        )));
    }
    let share_encrypts = tree.share_flags & share_flags::ENCRYPT_DATA != 0;
    if share_encrypts && !ch.keys.encrypt {
        if ch.keys.seal_out.is_none() {
            return Err(SmbError::Unsupported(format!(
                "{unc} requires encryption, which this session cannot do"
            )));
        }
        ch.keys.encrypt = true;
    }
    if matches!(neg.dialect, Dialect::Smb300 | Dialect::Smb302) && signer.is_some() {
        validate_negotiate(&mut ch, h.tree_id, &neg, opts, guid)?;
    }
    let negotiated = Negotiated {
        dialect: neg.dialect,
        signing_algo: signer.as_ref().map(|_| algo),
        signing: ch.keys.sign,
        server_requires_signing: server_signs,
        cipher: if ch.keys.encrypt { cipher } else { None },
        server_requires_encryption: session_encrypts || share_encrypts,
        capabilities: neg.capabilities,
        multichannel: neg.capabilities & caps::MULTI_CHANNEL != 0 && neg.dialect.is_smb3(),
        max_read: neg.max_read,
        max_write: neg.max_write,
        max_transact: neg.max_transact,
        max_io: io,
        guest,
        anonymous,
        share_flags: tree.share_flags,
        server_guid: neg.server_guid,
    };
    Ok(Established {
        ch,
        negotiated,
        session_key: lo.session_key,
        keys: derived,
        session_signer: signer,
        tree_id: h.tree_id,
    })
}

/// 3.0/3.0.2's FSCTL_VALIDATE_NEGOTIATE_INFO: the server repeats, signed,
/// what it negotiated, so a downgrade by a man in the middle shows.
fn validate_negotiate(
    ch: &mut Channel,
    tree: u32,
    neg: &NegotiateResponse,
    opts: &Options,
    guid: [u8; 16],
) -> SmbResult<()> {
    let peer = ch.peer().to_string();
    let dialects: Vec<u16> = opts.dialects.iter().map(|d| d.code()).collect();
    let input = ioctl::encode_validate_negotiate(
        setup::CLIENT_CAPS,
        guid,
        setup::client_security_mode(opts),
        &dialects,
    );
    let call = Call {
        sign_with_session: true,
        ..Call::default()
    };
    let st = roundtrip(ch, Command::Ioctl, tree, call, |v| {
        ioctl::encode_ioctl(
            ioctl::FSCTL_VALIDATE_NEGOTIATE_INFO,
            FileId::NONE,
            &input,
            24,
            v,
        )
    })?;
    if st == status::NOT_SUPPORTED {
        return Ok(());
    }
    if st != status::SUCCESS {
        return Err(SmbError::status(
            Command::Ioctl,
            st,
            format!("validating the negotiation with {peer}"),
        ));
    }
    let (reply, _) = ch.kept();
    let h = super::super::header::decode_header(reply).map_err(|m| SmbError::protocol(&peer, m))?;
    let out = ioctl::decode_ioctl(reply).map_err(|m| SmbError::protocol(&peer, m))?;
    let v = ioctl::decode_validate_negotiate(out).map_err(|m| SmbError::protocol(&peer, m))?;
    // Signed, or sealed (a sealed reply was checked on receipt).
    if !(h.is_signed() || ch.keys.encrypt)
        || v.dialect != neg.dialect.code()
        || v.guid != neg.server_guid
        || v.security_mode != neg.security_mode
        || v.capabilities != neg.capabilities
    {
        return Err(SmbError::Protocol(format!(
            "{peer}: the negotiation does not validate (tampered with, or a broken server)"
        )));
    }
    Ok(())
}
