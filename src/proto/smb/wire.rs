//! Little-endian reading and writing over byte slices, every read bounded:
//! the one place a decoder touches raw bytes, so a short or hostile reply is
//! an error value, never a panic or an out-of-range index.

use std::fmt;

/// A decoder's complaint: what was wrong, at which offset of which structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed {
    pub(crate) what: &'static str,
    pub(crate) at: usize,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed {} (at byte {})", self.what, self.at)
    }
}

impl std::error::Error for Malformed {}

pub(crate) type Decoded<T> = Result<T, Malformed>;

/// A cursor over a received structure.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Self { buf, pos: 0, what }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn bad(&self) -> Malformed {
        Malformed {
            what: self.what,
            at: self.pos,
        }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.bad())?;
        let s = self.buf.get(self.pos..end).ok_or_else(|| self.bad())?;
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn skip(&mut self, n: usize) -> Decoded<()> {
        self.bytes(n).map(|_| ())
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Decoded<[u8; N]> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn u8(&mut self) -> Decoded<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u16(&mut self) -> Decoded<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// Fails with this reader's name when `cond` is false (a field out of
    /// its allowed range).
    pub(crate) fn check(&self, cond: bool) -> Decoded<()> {
        if cond { Ok(()) } else { Err(self.bad()) }
    }
}

/// `len` bytes at `off` of `buf`, or the complaint (an offset and length
/// pair from a reply, as SMB2 responses carry their variable parts).
pub(crate) fn slice_at<'a>(
    buf: &'a [u8],
    off: usize,
    len: usize,
    what: &'static str,
) -> Decoded<&'a [u8]> {
    off.checked_add(len)
        .and_then(|end| buf.get(off..end))
        .ok_or(Malformed { what, at: off })
}

/// A cursor writing a request into a caller's buffer, which is sized for
/// the largest request before any is written (no growth on the I/O path).
pub(crate) struct Writer<'a> {
    buf: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut Vec<u8>) -> Self {
        Self { buf }
    }

    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }

    pub(crate) fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }

    pub(crate) fn zeros(&mut self, n: usize) -> &mut Self {
        self.buf.resize(self.buf.len() + n, 0);
        self
    }

    /// Pads with zeros to a multiple of `align` counted from `base`.
    pub(crate) fn align(&mut self, base: usize, align: usize) -> &mut Self {
        let rel = self.buf.len() - base;
        let pad = (align - rel % align) % align;
        self.zeros(pad)
    }

    pub(crate) fn utf16(&mut self, s: &str) -> &mut Self {
        for u in s.encode_utf16() {
            self.u16(u);
        }
        self
    }

    /// Overwrites a u16 written earlier (an offset or length known later).
    pub(crate) fn patch_u16(&mut self, at: usize, v: u16) {
        self.buf[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn patch_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// UTF-16LE bytes as a string; an unpaired surrogate becomes U+FFFD (names
/// are shown and compared, never used to reach a file on this machine).
pub(crate) fn utf16_string(b: &[u8]) -> String {
    let units = b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]));
    char::decode_utf16(units)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// UTF-16LE encoding of `s`.
pub(crate) fn utf16_bytes(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}
