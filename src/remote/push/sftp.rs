//! A client for SFTP version 3 (draft-ietf-secsh-filexfer-02) over a
//! launcher's pipes: `--push-binary` copies volbench.exe to a Windows host
//! with it. A Windows host's OpenSSH ships an SFTP server (`ssh -s HOST
//! sftp`), while its cmd.exe has no command that writes stdin to a file.
//!
//! Written by hand: the Rust SFTP clients either speak SSH themselves
//! (ssh2, over libssh2: no ssh config, no `--launcher` template) or need an
//! async runtime (russh-sftp on tokio); a copy needs a dozen messages.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

const INIT: u8 = 1;
const VERSION: u8 = 2;
const OPEN: u8 = 3;
const CLOSE: u8 = 4;
const WRITE: u8 = 6;
const LSTAT: u8 = 7;
const OPENDIR: u8 = 11;
const READDIR: u8 = 12;
const REMOVE: u8 = 13;
const MKDIR: u8 = 14;
const REALPATH: u8 = 16;
const RENAME: u8 = 18;
const STATUS: u8 = 101;
const HANDLE: u8 = 102;
const NAME: u8 = 104;
const ATTRS: u8 = 105;

const FX_OK: u32 = 0;
const FX_EOF: u32 = 1;
pub(crate) const FX_NO_SUCH_FILE: u32 = 2;

const ATTR_SIZE: u32 = 0x1;
const ATTR_UIDGID: u32 = 0x2;
const ATTR_PERMISSIONS: u32 = 0x4;
const ATTR_ACMODTIME: u32 = 0x8;
const ATTR_EXTENDED: u32 = 0x8000_0000;

const OPEN_WRITE: u32 = 0x2;
const OPEN_CREAT: u32 = 0x8;
const OPEN_EXCL: u32 = 0x20;

/// A reply longer than this is no SFTP server's (OpenSSH caps its packets
/// at 256 KiB): the session ends rather than allocate what a broken or
/// hostile far side asks for.
const MAX_PACKET: usize = 1 << 20;
/// Bytes per WRITE: OpenSSH's own client's default, which every server takes.
const CHUNK: usize = 32 * 1024;
/// WRITEs in flight: 2 MiB, enough to keep a WAN link busy.
const WINDOW: usize = 64;
/// What is kept of the far side's stderr for an error message.
const MAX_STDERR: usize = 16 * 1024;

/// What a failed request says: SFTP's status code and message, or a
/// broken session (code None).
#[derive(Debug)]
pub(crate) struct SftpError {
    pub(crate) code: Option<u32>,
    pub(crate) message: String,
}

impl std::fmt::Display for SftpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

type Res<T> = std::result::Result<T, SftpError>;

fn broken(message: impl Into<String>) -> SftpError {
    SftpError {
        code: None,
        message: message.into(),
    }
}

/// What LSTAT says of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Dir,
    File,
    /// A symbolic link (or, on Windows' server, a reparse point it shows as one).
    Link,
    Other,
    /// The server sent no permissions.
    Unknown,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Attrs {
    pub(crate) kind: Kind,
    pub(crate) size: Option<u64>,
    /// Seconds since the epoch by the host's clock, when the server says.
    pub(crate) mtime: Option<u32>,
}

/// One SFTP session on a started launcher (its stdin and stdout piped).
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    replies: Receiver<Res<Vec<u8>>>,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
    next_id: u32,
    /// How long any one reply may take (`--host-timeout`).
    silence: Duration,
}

impl Session {
    /// Takes over `child`'s pipes: every reply must come within `silence`
    /// of the last (a copy that moves is never cut, a server that stalls is
    /// given up), else the session is killed and says so. `init` next.
    pub(crate) fn new(mut child: Child, silence: Duration) -> Res<Self> {
        let (Some(stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(broken("the launcher's pipes are missing"));
        };
        let stderr = child.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = e.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let room = MAX_STDERR.saturating_sub(kept.len());
                    kept.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
                }
                kept
            })
        });
        let (tx, replies) = channel();
        std::thread::spawn(move || {
            loop {
                let r = read_packet(&mut stdout);
                let end = r.is_err();
                if tx.send(r).is_err() || end {
                    break;
                }
            }
        });
        Ok(Session {
            child,
            stdin: Some(stdin),
            replies,
            stderr,
            next_id: 1,
            silence,
        })
    }

    /// The protocol's handshake: version 3 asked, at least 3 answered.
    pub(crate) fn init(&mut self) -> Res<()> {
        let mut init = vec![INIT];
        put_u32(&mut init, 3);
        self.send(&init)?;
        let reply = self.recv()?;
        match reply.first() {
            Some(&VERSION) => {
                let version = Reader::new(reply.get(1..).unwrap_or_default()).u32()?;
                if version < 3 {
                    return Err(broken(format!(
                        "the SFTP server speaks version {version}; volbench needs 3"
                    )));
                }
                Ok(())
            }
            _ => Err(broken("the far side did not answer as an SFTP server")),
        }
    }

    /// The server's absolute name of `path`.
    pub(crate) fn realpath(&mut self, path: &str) -> Res<String> {
        let (kind, body) = self.request(REALPATH, |b| put_str(b, path.as_bytes()))?;
        if kind != NAME {
            return Err(unexpected(kind));
        }
        let mut r = Reader::new(&body);
        if r.u32()? == 0 {
            return Err(broken("REALPATH gave no name"));
        }
        Ok(String::from_utf8_lossy(r.string()?).into_owned())
    }

    /// What sits at `path`, links not followed; None when nothing does.
    pub(crate) fn lstat(&mut self, path: &str) -> Res<Option<Attrs>> {
        match self.request(LSTAT, |b| put_str(b, path.as_bytes())) {
            Ok((ATTRS, body)) => Ok(Some(read_attrs(&mut Reader::new(&body))?)),
            Ok((kind, _)) => Err(unexpected(kind)),
            Err(e) if e.code == Some(FX_NO_SUCH_FILE) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn mkdir(&mut self, path: &str, perms: u32) -> Res<()> {
        self.expect_ok(MKDIR, |b| {
            put_str(b, path.as_bytes());
            put_perms(b, perms);
        })
    }

    /// Creates `path`, which must not exist (CREAT|EXCL), for writing.
    pub(crate) fn create_new(&mut self, path: &str, perms: u32) -> Res<Vec<u8>> {
        let (kind, body) = self.request(OPEN, |b| {
            put_str(b, path.as_bytes());
            put_u32(b, OPEN_WRITE | OPEN_CREAT | OPEN_EXCL);
            put_perms(b, perms);
        })?;
        if kind != HANDLE {
            return Err(unexpected(kind));
        }
        Ok(Reader::new(&body).string()?.to_vec())
    }

    /// Writes `data` from offset 0 through `handle`, WINDOW requests in flight.
    pub(crate) fn write_all(&mut self, handle: &[u8], data: &[u8]) -> Res<()> {
        let mut chunks = data.chunks(CHUNK).enumerate();
        let mut in_flight = 0usize;
        // The first refusal; the replies still owed are read before it is
        // returned, so the next request (removing the temporary) gets its own.
        let mut failed: Option<SftpError> = None;
        loop {
            while in_flight < WINDOW && failed.is_none() {
                let Some((i, chunk)) = chunks.next() else {
                    break;
                };
                let mut p = vec![WRITE];
                put_u32(&mut p, self.take_id());
                put_str(&mut p, handle);
                put_u64(&mut p, (i * CHUNK) as u64);
                put_str(&mut p, chunk);
                self.send(&p)?;
                in_flight += 1;
            }
            if in_flight == 0 {
                return failed.map_or(Ok(()), Err);
            }
            let reply = self.recv()?;
            in_flight -= 1;
            let (kind, _, body) = split_reply(&reply)?;
            if let Err(e) = status_ok(kind, &body) {
                failed.get_or_insert(e);
            }
        }
    }

    pub(crate) fn close(&mut self, handle: &[u8]) -> Res<()> {
        self.expect_ok(CLOSE, |b| put_str(b, handle))
    }

    /// SFTP v3's RENAME, which fails when `to` exists (OpenSSH links, then
    /// unlinks; where it cannot link it checks first): never a replace.
    pub(crate) fn rename(&mut self, from: &str, to: &str) -> Res<()> {
        self.expect_ok(RENAME, |b| {
            put_str(b, from.as_bytes());
            put_str(b, to.as_bytes());
        })
    }

    pub(crate) fn remove(&mut self, path: &str) -> Res<()> {
        self.expect_ok(REMOVE, |b| put_str(b, path.as_bytes()))
    }

    /// The entries of directory `path` whose names `keep` wants, with what
    /// the server says of each (links not followed); at most `max` are
    /// looked at, so a huge directory costs a bounded time.
    pub(crate) fn read_dir(
        &mut self,
        path: &str,
        max: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Res<Vec<(String, Attrs)>> {
        let (kind, body) = self.request(OPENDIR, |b| put_str(b, path.as_bytes()))?;
        if kind != HANDLE {
            return Err(unexpected(kind));
        }
        let handle = Reader::new(&body).string()?.to_vec();
        let listed = self.read_entries(&handle, max, keep);
        let closed = self.close(&handle);
        let listed = listed?;
        closed?;
        Ok(listed)
    }

    fn read_entries(
        &mut self,
        handle: &[u8],
        max: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Res<Vec<(String, Attrs)>> {
        let mut out = Vec::new();
        let mut seen = 0usize;
        while seen < max {
            let body = match self.request(READDIR, |b| put_str(b, handle)) {
                Ok((NAME, body)) => body,
                Ok((kind, _)) => return Err(unexpected(kind)),
                Err(e) if e.code == Some(FX_EOF) => break,
                Err(e) => return Err(e),
            };
            let mut r = Reader::new(&body);
            for _ in 0..r.u32()? {
                let name = String::from_utf8_lossy(r.string()?).into_owned();
                r.string()?; // the `ls -l` line, for people
                let attrs = read_attrs(&mut r)?;
                seen += 1;
                if keep(&name) {
                    out.push((name, attrs));
                }
            }
        }
        Ok(out)
    }

    /// Ends the session: the server sees its stdin close and exits.
    pub(crate) fn finish(mut self) {
        self.stdin = None;
        let _ = crate::io::child::wait_briefly(
            &mut self.child,
            self.silence.min(Duration::from_secs(10)),
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The far side's stderr so far, for an error message (the session is
    /// over: the child is killed first so the reader ends).
    pub(crate) fn stderr_tail(&mut self) -> String {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        let kept = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        crate::remote::protocol::sanitize(String::from_utf8_lossy(&kept).trim(), 500)
    }

    fn take_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    fn expect_ok(&mut self, kind: u8, body: impl FnOnce(&mut Vec<u8>)) -> Res<()> {
        let (kind, body) = self.request(kind, body)?;
        status_ok(kind, &body)
    }

    /// Sends one request and waits for its reply: (type, body after the id).
    /// A STATUS other than OK becomes the error.
    fn request(&mut self, kind: u8, body: impl FnOnce(&mut Vec<u8>)) -> Res<(u8, Vec<u8>)> {
        let id = self.take_id();
        let mut p = vec![kind];
        put_u32(&mut p, id);
        body(&mut p);
        self.send(&p)?;
        let reply = self.recv()?;
        let (kind, got, body) = split_reply(&reply)?;
        if got != id {
            return Err(broken(format!("a reply to request {got} came for {id}")));
        }
        if kind == STATUS {
            status_ok(kind, &body)?;
        }
        Ok((kind, body))
    }

    fn send(&mut self, payload: &[u8]) -> Res<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| broken("the session is closed"))?;
        let len = u32::try_from(payload.len()).map_err(|_| broken("request too long"))?;
        let mut frame = Vec::with_capacity(payload.len() + 4);
        put_u32(&mut frame, len);
        frame.extend_from_slice(payload);
        stdin
            .write_all(&frame)
            .map_err(|e| broken(format!("the SFTP server went away ({e})")))
    }

    fn recv(&mut self) -> Res<Vec<u8>> {
        match self.replies.recv_timeout(self.silence) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(broken(format!(
                    "the SFTP server gave no answer for {}s (--host-timeout)",
                    self.silence.as_secs()
                )))
            }
            Err(RecvTimeoutError::Disconnected) => Err(broken("the SFTP server went away")),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_packet(r: &mut impl Read) -> Res<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)
        .map_err(|_| broken("the SFTP server's output ended"))?;
    let len = u32::from_be_bytes(len) as usize;
    if len == 0 || len > MAX_PACKET {
        return Err(broken(format!(
            "the far side sent a {len}-byte packet: not an SFTP server's"
        )));
    }
    let mut p = vec![0u8; len];
    r.read_exact(&mut p)
        .map_err(|_| broken("the SFTP server's output ended inside a packet"))?;
    Ok(p)
}

/// (type, request id, the rest).
fn split_reply(reply: &[u8]) -> Res<(u8, u32, Vec<u8>)> {
    let mut r = Reader::new(reply);
    let kind = r.u8()?;
    let id = r.u32()?;
    Ok((kind, id, r.rest().to_vec()))
}

fn status_ok(kind: u8, body: &[u8]) -> Res<()> {
    if kind != STATUS {
        return Err(unexpected(kind));
    }
    let mut r = Reader::new(body);
    let code = r.u32()?;
    if code == FX_OK {
        return Ok(());
    }
    // The message is optional in servers older than the draft's text.
    let msg = r
        .string()
        .map(|m| String::from_utf8_lossy(m).into_owned())
        .unwrap_or_default();
    let msg = crate::remote::protocol::sanitize(msg.trim(), 200);
    Err(SftpError {
        code: Some(code),
        message: if msg.is_empty() {
            format!("SFTP status {code}")
        } else {
            msg
        },
    })
}

fn unexpected(kind: u8) -> SftpError {
    broken(format!(
        "an SFTP reply of type {kind} where none such was asked"
    ))
}

fn read_attrs(r: &mut Reader<'_>) -> Res<Attrs> {
    let flags = r.u32()?;
    let size = if flags & ATTR_SIZE != 0 {
        Some(r.u64()?)
    } else {
        None
    };
    if flags & ATTR_UIDGID != 0 {
        r.u32()?;
        r.u32()?;
    }
    let kind = if flags & ATTR_PERMISSIONS != 0 {
        match r.u32()? & 0o170000 {
            0o040000 => Kind::Dir,
            0o100000 => Kind::File,
            0o120000 => Kind::Link,
            _ => Kind::Other,
        }
    } else {
        Kind::Unknown
    };
    let mtime = if flags & ATTR_ACMODTIME != 0 {
        r.u32()?;
        Some(r.u32()?)
    } else {
        None
    };
    if flags & ATTR_EXTENDED != 0 {
        // Name-value pairs; read past them, a NAME reply's next entry follows.
        for _ in 0..r.u32()? {
            r.string()?;
            r.string()?;
        }
    }
    Ok(Attrs { kind, size, mtime })
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_str(b: &mut Vec<u8>, s: &[u8]) {
    // Paths and chunks are far below 4 GiB (CHUNK, MAX_PATH_BYTES).
    put_u32(b, u32::try_from(s.len()).unwrap_or(u32::MAX));
    b.extend_from_slice(s);
}

fn put_perms(b: &mut Vec<u8>, perms: u32) {
    put_u32(b, ATTR_PERMISSIONS);
    put_u32(b, perms);
}

/// Every reply a server could send, read from a byte stream as the session
/// reads them (framing, then each kind's body the way its request reads
/// it); the fuzz target of the SFTP replies (`crate::fuzz`). Returns the
/// replies read and the error that ended the stream.
#[cfg(feature = "fuzzing")]
pub(crate) fn read_replies(mut bytes: &[u8]) -> (usize, SftpError) {
    let mut n = 0;
    loop {
        let reply = match read_packet(&mut bytes) {
            Ok(r) => r,
            Err(e) => return (n, e),
        };
        n += 1;
        if reply.first() == Some(&VERSION) {
            let _ = Reader::new(reply.get(1..).unwrap_or_default()).u32();
            continue;
        }
        let (kind, _, body) = match split_reply(&reply) {
            Ok(r) => r,
            Err(e) => return (n, e),
        };
        let mut r = Reader::new(&body);
        let _ = match kind {
            STATUS => status_ok(kind, &body).map(|_| ()),
            ATTRS => read_attrs(&mut r).map(|_| ()),
            HANDLE => r.string().map(|_| ()),
            NAME => r.u32().and_then(|_| r.string()).map(|_| ()),
            other => Err(unexpected(other)),
        };
    }
}

/// Big-endian fields out of a reply, each read checked against its end.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b }
    }

    fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        if self.b.len() < n {
            return Err(broken("a short SFTP reply"));
        }
        let (head, tail) = self.b.split_at(n);
        self.b = tail;
        Ok(head)
    }

    fn u8(&mut self) -> Res<u8> {
        Ok(self.take(1)?.first().copied().unwrap_or_default())
    }

    fn u32(&mut self) -> Res<u32> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(a))
    }

    fn u64(&mut self) -> Res<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }

    fn string(&mut self) -> Res<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    fn rest(&self) -> &'a [u8] {
        self.b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_read_within_its_bounds() {
        let mut r = Reader::new(&[0, 0, 0, 9, b'a']);
        assert!(r.string().is_err(), "a string longer than the reply");
        let mut attrs = Vec::new();
        put_u32(&mut attrs, ATTR_SIZE | ATTR_PERMISSIONS);
        put_u64(&mut attrs, 42);
        put_u32(&mut attrs, 0o100644);
        let a = read_attrs(&mut Reader::new(&attrs)).unwrap();
        assert_eq!((a.kind, a.size), (Kind::File, Some(42)));
        let mut link = Vec::new();
        put_u32(&mut link, ATTR_PERMISSIONS);
        put_u32(&mut link, 0o120777);
        assert_eq!(
            read_attrs(&mut Reader::new(&link)).unwrap().kind,
            Kind::Link
        );
    }

    #[test]
    fn a_packet_of_no_sftp_server_ends_the_session() {
        let mut huge: &[u8] = &[0x7f, 0, 0, 0, 1];
        assert!(read_packet(&mut huge).is_err());
        let mut cut: &[u8] = &[0, 0, 0, 5, 101];
        assert!(read_packet(&mut cut).is_err());
        // A login banner where the server should speak.
        let mut banner: &[u8] = b"Welcome to host\n";
        assert!(read_packet(&mut banner).is_err());
    }

    #[test]
    fn a_failed_status_carries_its_code_and_message() {
        let mut body = Vec::new();
        put_u32(&mut body, FX_NO_SUCH_FILE);
        put_str(&mut body, b"No such file");
        let e = status_ok(STATUS, &body).unwrap_err();
        assert_eq!(e.code, Some(FX_NO_SUCH_FILE));
        assert_eq!(e.message, "No such file");
        let mut ok = Vec::new();
        put_u32(&mut ok, FX_OK);
        assert!(status_ok(STATUS, &ok).is_ok());
    }
}
