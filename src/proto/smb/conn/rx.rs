//! The receiving side of a channel: frames read in batches into one
//! buffer, sealed frames opened in place, replies matched to requests by
//! message id and turned into completions. A large READ reply's data is
//! received straight into the caller's buffer (and its signature checked
//! there); small replies are read many per system call and their data
//! copied out, which costs less than a system call each.

use std::time::Instant;

use super::super::consts::{Command, status};
use super::super::crypto::sign;
use super::super::error::{SmbError, SmbResult};
use super::super::header::{
    HEADER_LEN, Header, TRANSFORM_ID, TRANSFORM_LEN, decode_frame_len, decode_header,
    decode_transform,
};
use super::super::msg::{file, info};
use super::super::wire::Malformed;
use super::channel::Channel;
use super::rxbuf::{Direct, State};
use super::slots::{InFlight, Sink};
use super::{Completion, Outcome};

/// A READ reply whose data still to come is at least this long is received
/// into the caller's buffer directly.
const DIRECT_MIN: usize = 16 * 1024;

fn malformed(ch: &mut Channel, m: Malformed) -> SmbError {
    let e = SmbError::protocol(&ch.peer().to_string(), m);
    ch.fail(e)
}

fn violation(ch: &mut Channel, what: String) -> SmbError {
    let e = SmbError::Protocol(format!("{}: {what}", ch.peer()));
    ch.fail(e)
}

impl Channel {
    /// Reads and handles every reply the socket has now. Never blocks.
    pub(super) fn pump(&mut self, out: &mut Vec<Completion>) -> SmbResult<()> {
        loop {
            while self.step(out)? {}
            let read = match &mut self.rx.state {
                State::Direct(d) if d.got < d.data_len => {
                    // SAFETY: the READ's buffer is the caller's, valid for
                    // `data_len` bytes until its completion (queue_read).
                    let dst = unsafe {
                        std::slice::from_raw_parts_mut(d.dst.add(d.got), d.data_len - d.got)
                    };
                    let r = self.sock.read(dst);
                    if let (Ok(n), State::Direct(d)) = (&r, &mut self.rx.state) {
                        d.got += n;
                    }
                    r
                }
                _ => {
                    let rx = &mut self.rx;
                    if rx.start == rx.end {
                        rx.start = 0;
                        rx.end = 0;
                    } else if rx.end == rx.buf.len() {
                        rx.buf.copy_within(rx.start..rx.end, 0);
                        rx.end -= rx.start;
                        rx.start = 0;
                    }
                    let r = self.sock.read(&mut rx.buf[rx.end..]);
                    if let Ok(n) = r {
                        rx.end += n;
                    }
                    r
                }
            };
            match read {
                Ok(0) => {
                    let e = std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    );
                    return Err(self.fail_io("receiving", e));
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(self.fail_io("receiving", e)),
            }
        }
    }

    /// Handles what is buffered; false when more bytes are needed.
    fn step(&mut self, out: &mut Vec<Completion>) -> SmbResult<bool> {
        if let State::Direct(d) = &self.rx.state {
            if d.got < d.data_len {
                return Ok(false);
            }
            if self.rx.end - self.rx.start < d.trailing {
                return Ok(false);
            }
            return self.finish_direct(out).map(|_| true);
        }
        let avail = self.rx.end - self.rx.start;
        if avail < 4 {
            return Ok(false);
        }
        let s = self.rx.start;
        let prefix = [
            self.rx.buf[s],
            self.rx.buf[s + 1],
            self.rx.buf[s + 2],
            self.rx.buf[s + 3],
        ];
        let flen = decode_frame_len(prefix).map_err(|m| malformed(self, m))?;
        if flen > self.opts.max_frame + TRANSFORM_LEN || flen < HEADER_LEN {
            let what = format!(
                "a frame of {flen} bytes (this channel accepts {} to {})",
                HEADER_LEN,
                self.opts.max_frame + TRANSFORM_LEN
            );
            return Err(violation(self, what));
        }
        if avail >= 4 + flen {
            let mut buf = std::mem::take(&mut self.rx.buf);
            let r = self.frame(&mut buf[s + 4..s + 4 + flen], 4 + flen, out);
            self.rx.buf = buf;
            self.rx.start += 4 + flen;
            r?;
            return Ok(true);
        }
        if self.try_direct(flen)? {
            return Ok(true);
        }
        if 4 + flen > self.rx.buf.len() {
            let what = format!(
                "a reply of {flen} bytes, larger than this channel's {}-byte buffer",
                self.rx.buf.len() - 4
            );
            return Err(violation(self, what));
        }
        if s + 4 + flen > self.rx.buf.len() {
            self.rx.buf.copy_within(s..self.rx.end, 0);
            self.rx.end -= s;
            self.rx.start = 0;
        }
        Ok(false)
    }

    /// Starts receiving a large, plain READ reply into the caller's buffer
    /// once its header and fixed part are here.
    fn try_direct(&mut self, flen: usize) -> SmbResult<bool> {
        let s = self.rx.start + 4;
        let avail = self.rx.end - s;
        if avail < HEADER_LEN + 16 || self.rx.buf[s..s + 4] == TRANSFORM_ID {
            return Ok(false);
        }
        let msg = &self.rx.buf[s..self.rx.end];
        let Ok(h) = decode_header(msg) else {
            return Ok(false);
        };
        if h.command != Command::Read as u16 || h.status != status::SUCCESS || !h.is_response() {
            return Ok(false);
        }
        let Some(f) = self.slots.get_mut(h.message_id).copied() else {
            return Ok(false);
        };
        let Sink::Buffer { ptr, cap } = f.sink else {
            return Ok(false);
        };
        let Ok(rr) = file::decode_read_fixed(&msg[HEADER_LEN..HEADER_LEN + 16]) else {
            return Ok(false);
        };
        if rr.data_offset + rr.data_len > flen || rr.data_len > cap || avail < rr.data_offset {
            return Ok(false);
        }
        let have = (avail - rr.data_offset).min(rr.data_len);
        if rr.data_len - have < DIRECT_MIN {
            return Ok(false);
        }
        let mut run = None;
        if let Some(signer) = self.reply_signer(&h) {
            let mut hb = [0u8; HEADER_LEN];
            hb.copy_from_slice(&msg[..HEADER_LEN]);
            let mut r = signer.start(&hb, true, false);
            r.update(&msg[HEADER_LEN..rr.data_offset]);
            run = Some(r);
        }
        // SAFETY: `ptr` is the READ's buffer of `cap` >= data_len bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(msg[rr.data_offset..].as_ptr(), ptr, have);
        }
        self.slots.grant(h.credits);
        self.stats.credits_granted += u64::from(h.credits);
        self.rx.state = State::Direct(Direct {
            header: h,
            dst: ptr,
            got: have,
            data_len: rr.data_len,
            trailing: flen - rr.data_offset - rr.data_len,
            run,
            wire: 4 + flen,
        });
        self.rx.start = 0;
        self.rx.end = 0;
        Ok(true)
    }

    fn finish_direct(&mut self, out: &mut Vec<Completion>) -> SmbResult<()> {
        let State::Direct(d) = std::mem::replace(&mut self.rx.state, State::Frame) else {
            return Ok(());
        };
        let Direct {
            header,
            dst,
            data_len,
            trailing,
            run,
            wire,
            ..
        } = d;
        let tail = self.rx.start..self.rx.start + trailing;
        if let Some(mut run) = run {
            // SAFETY: the data was just received into this buffer.
            run.update(unsafe { std::slice::from_raw_parts(dst, data_len) });
            run.update(&self.rx.buf[tail.clone()]);
            if !sign::equal(&run.finish(), &header.signature) {
                return Err(violation(self, "a READ reply with a bad signature".into()));
            }
        }
        self.rx.start = tail.end;
        let Some(f) = self.slots.remove(header.message_id) else {
            return Err(violation(
                self,
                "a READ reply whose request vanished".into(),
            ));
        };
        self.complete(
            f,
            &header,
            Outcome::Bytes(data_len as u32),
            data_len as u64,
            wire,
            out,
        );
        Ok(())
    }

    /// The signer a reply must be checked with, if it must be.
    fn reply_signer(&self, h: &Header) -> Option<&super::super::crypto::sign::Signer> {
        if !h.is_signed() || h.command == Command::SessionSetup as u16 {
            return None;
        }
        self.keys.signer.as_ref()
    }

    /// Handles one whole frame (opened in place first when sealed).
    fn frame(&mut self, frame: &mut [u8], wire: usize, out: &mut Vec<Completion>) -> SmbResult<()> {
        let sealed = frame.starts_with(&TRANSFORM_ID);
        let msg: &mut [u8] = if sealed {
            let t = decode_transform(frame).map_err(|m| malformed(self, m))?;
            if t.session_id != self.session_id
                || t.original_size as usize != frame.len() - TRANSFORM_LEN
            {
                return Err(violation(
                    self,
                    "an encrypted reply for another session or of a wrong size".into(),
                ));
            }
            let (head, body) = frame.split_at_mut(TRANSFORM_LEN);
            let opened = self
                .keys
                .seal_in
                .as_ref()
                .map(|s| s.open(&t.nonce, &head[20..], body, &t.signature).is_ok());
            match opened {
                None => {
                    return Err(violation(
                        self,
                        "an encrypted reply on a session without encryption".into(),
                    ));
                }
                Some(false) => {
                    return Err(violation(
                        self,
                        "an encrypted reply that fails its authentication tag".into(),
                    ));
                }
                Some(true) => {}
            }
            body
        } else {
            frame
        };
        let h = decode_header(msg).map_err(|m| malformed(self, m))?;
        if !h.is_response() || h.next_command != 0 {
            return Err(violation(
                self,
                "a request or a compound reply where a single reply was due".into(),
            ));
        }
        if h.message_id == u64::MAX {
            // An oplock or lease break notification: none is asked for.
            return Ok(());
        }
        let Some(f) = self.slots.get_mut(h.message_id).copied() else {
            let what = format!(
                "a reply to message id {}, which is not in flight",
                h.message_id
            );
            return Err(violation(self, what));
        };
        if f.command as u16 != h.command {
            return Err(violation(
                self,
                format!("a {} reply to a {} request", h.command, f.command.name()),
            ));
        }
        self.slots.grant(h.credits);
        self.stats.credits_granted += u64::from(h.credits);
        if h.status == status::PENDING && h.is_async() {
            if let Some(p) = self.slots.get_mut(h.message_id) {
                p.async_id = h.async_id;
                p.interim_at.get_or_insert(Instant::now());
            }
            self.stats.command_mut(f.command).pending += 1;
            return Ok(());
        }
        self.check_reply_protection(&h, msg, sealed)?;
        let Some(f) = self.slots.remove(h.message_id) else {
            return Ok(());
        };
        let (outcome, bytes) = match self.outcome(&f, &h, msg) {
            Ok(x) => x,
            Err(m) => return Err(malformed(self, m)),
        };
        self.complete(f, &h, outcome, bytes, wire, out);
        Ok(())
    }

    /// Replies on a signed session must be signed correctly, on a sealed
    /// one sealed (interim replies and set-up aside).
    fn check_reply_protection(&mut self, h: &Header, msg: &[u8], sealed: bool) -> SmbResult<()> {
        let setup =
            h.command == Command::SessionSetup as u16 || h.command == Command::Negotiate as u16;
        if setup || sealed {
            return Ok(());
        }
        if self.keys.encrypt && self.keys.seal_in.is_some() {
            return Err(violation(
                self,
                "an unencrypted reply on an encrypted session".into(),
            ));
        }
        if let Some(signer) = self.reply_signer(h) {
            let mut hb = [0u8; HEADER_LEN];
            hb.copy_from_slice(&msg[..HEADER_LEN]);
            let mut run = signer.start(&hb, true, false);
            run.update(&msg[HEADER_LEN..]);
            if !sign::equal(&run.finish(), &h.signature) {
                return Err(violation(
                    self,
                    format!("a {} reply with a bad signature", h.command),
                ));
            }
        } else if self.keys.sign && !h.is_signed() && h.status != status::USER_SESSION_DELETED {
            return Err(violation(
                self,
                "an unsigned reply on a signed session".into(),
            ));
        }
        Ok(())
    }

    /// The typed result of a final reply, and its payload bytes.
    fn outcome(
        &mut self,
        f: &InFlight,
        h: &Header,
        msg: &[u8],
    ) -> Result<(Outcome, u64), Malformed> {
        if let Sink::Keep = f.sink {
            self.kept.clear();
            self.kept.extend_from_slice(msg);
            return Ok((Outcome::Kept, 0));
        }
        if status::is_error(h.status) {
            return Ok((Outcome::Done, 0));
        }
        Ok(match f.command {
            Command::Read => {
                let rr = file::decode_read_fixed(msg.get(HEADER_LEN..).unwrap_or(&[]))?;
                let data =
                    super::super::wire::slice_at(msg, rr.data_offset, rr.data_len, "READ data")?;
                match f.sink {
                    Sink::Buffer { ptr, cap } if data.len() <= cap => {
                        // SAFETY: the READ's buffer holds `cap` bytes.
                        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr, data.len()) };
                    }
                    _ => {
                        return Err(Malformed {
                            what: "READ reply longer than asked",
                            at: rr.data_offset,
                        });
                    }
                }
                (Outcome::Bytes(data.len() as u32), data.len() as u64)
            }
            Command::Write => (Outcome::Bytes(file::decode_write(msg)?), 0),
            Command::Create => (Outcome::Created(file::decode_create(msg)?), 0),
            Command::Close => (Outcome::Closed(file::decode_close(msg)?), 0),
            Command::QueryInfo => {
                let buf = info::decode_query_info(msg)?;
                if f.class == info::FS_FULL_SIZE_INFORMATION {
                    (Outcome::FsSize(info::decode_fs_full_size(buf)?), 0)
                } else {
                    (Outcome::Info(info::decode_file_all(buf)?), 0)
                }
            }
            _ => (Outcome::Done, 0),
        })
    }

    fn complete(
        &mut self,
        f: InFlight,
        h: &Header,
        outcome: Outcome,
        bytes: u64,
        wire: usize,
        out: &mut Vec<Completion>,
    ) {
        let lat = f.sent_at.elapsed().as_nanos() as u64;
        let st = self.stats.command_mut(f.command);
        st.wire_received += wire as u64;
        if f.command != Command::Write {
            st.bytes += bytes;
        }
        if status::is_error(h.status) {
            st.errors += 1;
        }
        st.latency
            .get_or_insert_with(|| Box::new(crate::stats::OpStats::new()))
            .record(
                lat,
                bytes.max(if f.command == Command::Write {
                    u64::from(f.payload)
                } else {
                    0
                }),
            );
        self.stats.credits_now = self.slots.credits as u32;
        if f.tag == super::channel::TOPUP_TAG {
            return;
        }
        out.push(Completion {
            tag: f.tag,
            command: f.command,
            status: h.status,
            outcome,
            latency_ns: lat,
        });
    }
}
