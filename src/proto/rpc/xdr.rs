//! XDR (RFC 4506), the byte order of every ONC RPC message: big-endian
//! 4-byte units, variable-length data padded to 4. The encoder writes into a
//! fixed slice (a call's own header room, reused call after call) and says
//! when it overflowed instead of growing; the decoder is a cursor over a
//! byte slice that never reads past it and never allocates, so a hostile
//! reply can only make it stop with an error.

/// Why a decode stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum XdrError {
    /// The bytes ended before the value did: more may come (a reply still
    /// arriving), or the reply was cut short, which the caller tells apart.
    Short,
    /// A value no well-formed message holds (a length past its bound, a
    /// bool that is neither 0 nor 1, an unknown union arm).
    Bad(&'static str),
}

impl std::fmt::Display for XdrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            XdrError::Short => f.write_str("the reply ends in the middle of a value"),
            XdrError::Bad(what) => f.write_str(what),
        }
    }
}

pub(crate) type Xdr<T> = Result<T, XdrError>;

/// Padding to the next multiple of 4.
#[inline]
pub(crate) const fn pad(len: usize) -> usize {
    (4 - (len & 3)) & 3
}

/// A cursor over received bytes.
#[derive(Clone, Copy)]
pub(crate) struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Dec<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Dec { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline]
    pub(crate) fn u32(&mut self) -> Xdr<u32> {
        let b = self.fixed(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    pub(crate) fn u64(&mut self) -> Xdr<u64> {
        let hi = self.u32()? as u64;
        let lo = self.u32()? as u64;
        Ok(hi << 32 | lo)
    }

    #[inline]
    pub(crate) fn i64(&mut self) -> Xdr<i64> {
        Ok(self.u64()? as i64)
    }

    pub(crate) fn bool(&mut self) -> Xdr<bool> {
        match self.u32()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(XdrError::Bad("a boolean that is neither 0 nor 1")),
        }
    }

    /// `len` bytes of fixed-length opaque data (padded to 4).
    #[inline]
    pub(crate) fn fixed(&mut self, len: usize) -> Xdr<&'a [u8]> {
        let padded = len + pad(len);
        if self.remaining() < padded {
            return Err(XdrError::Short);
        }
        let out = &self.buf[self.pos..self.pos + len];
        self.pos += padded;
        Ok(out)
    }

    /// Variable-length opaque data of at most `max` bytes.
    pub(crate) fn opaque(&mut self, max: usize) -> Xdr<&'a [u8]> {
        let len = self.u32()? as usize;
        if len > max {
            return Err(XdrError::Bad("a length past the protocol's bound"));
        }
        self.fixed(len)
    }

    /// The length word of variable-length data whose bytes the caller takes
    /// elsewhere (a READ's data, placed straight into the caller's buffer).
    pub(crate) fn opaque_len(&mut self, max: usize) -> Xdr<usize> {
        let len = self.u32()? as usize;
        if len > max {
            return Err(XdrError::Bad("a length past the protocol's bound"));
        }
        Ok(len)
    }

    /// An array's element count, bounded twice: by `max`, and by what the
    /// bytes left could hold at `min_size` bytes an element, so a count of
    /// four billion in a 100-byte reply stops here, not in a loop.
    pub(crate) fn count(&mut self, max: usize, min_size: usize) -> Xdr<usize> {
        let n = self.u32()? as usize;
        if n > max {
            return Err(XdrError::Bad("an array longer than the protocol allows"));
        }
        if n.saturating_mul(min_size.max(1)) > self.remaining() {
            return Err(XdrError::Short);
        }
        Ok(n)
    }

    pub(crate) fn skip(&mut self, len: usize) -> Xdr<()> {
        self.fixed(len).map(|_| ())
    }
}

/// An encoder over a fixed slice. A write past its end sets `overflow` and
/// is dropped: the caller checks once at the end (`finish`), not per value.
pub(crate) struct Enc<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflow: bool,
}

impl<'a> Enc<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Enc {
            buf,
            pos: 0,
            overflow: false,
        }
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The bytes written, or None when they did not fit.
    pub(crate) fn finish(self) -> Option<usize> {
        (!self.overflow).then_some(self.pos)
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        if end > self.buf.len() {
            self.overflow = true;
            return;
        }
        self.buf[self.pos..end].copy_from_slice(bytes);
        self.pos = end;
    }

    #[inline]
    pub(crate) fn u32(&mut self, v: u32) {
        self.put(&v.to_be_bytes());
    }

    #[inline]
    pub(crate) fn u64(&mut self, v: u64) {
        self.put(&v.to_be_bytes());
    }

    pub(crate) fn bool(&mut self, v: bool) {
        self.u32(v as u32);
    }

    /// Fixed-length opaque data, padded.
    pub(crate) fn fixed(&mut self, bytes: &[u8]) {
        self.put(bytes);
        self.put(&[0u8; 3][..pad(bytes.len())]);
    }

    /// Variable-length opaque data: length, bytes, padding.
    pub(crate) fn opaque(&mut self, bytes: &[u8]) {
        self.u32(bytes.len() as u32);
        self.fixed(bytes);
    }
}

/// Overwrites a 4-byte unit of an encoded message in place.
pub(crate) fn patch_u32(buf: &mut [u8], at: usize, v: u32) {
    if let Some(b) = buf.get_mut(at..at + 4) {
        b.copy_from_slice(&v.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn values_round_trip_with_padding() {
        let mut buf = [0u8; 64];
        let mut e = Enc::new(&mut buf);
        e.u32(7);
        e.u64(1 << 40 | 5);
        e.opaque(b"abcde");
        e.bool(true);
        let n = e.finish().unwrap();
        assert_eq!(n, 4 + 8 + 4 + 8 + 4);
        let mut d = Dec::new(&buf[..n]);
        assert_eq!(d.u32(), Ok(7));
        assert_eq!(d.u64(), Ok(1 << 40 | 5));
        assert_eq!(d.opaque(16), Ok(&b"abcde"[..]));
        assert_eq!(d.bool(), Ok(true));
        assert_eq!(d.remaining(), 0);
        assert_eq!(d.u32(), Err(XdrError::Short));
    }

    #[test]
    fn an_encoder_that_runs_out_of_room_says_so() {
        let mut buf = [0u8; 6];
        let mut e = Enc::new(&mut buf);
        e.u32(1);
        e.u32(2);
        assert_eq!(e.finish(), None);
    }

    #[test]
    fn lengths_and_counts_past_their_bounds_stop_the_decoder() {
        let huge = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        assert!(matches!(
            Dec::new(&huge).opaque(1024),
            Err(XdrError::Bad(_))
        ));
        assert!(matches!(
            Dec::new(&huge).count(usize::MAX, 4),
            Err(XdrError::Short)
        ));
        assert!(matches!(
            Dec::new(&[0, 0, 0, 2]).bool(),
            Err(XdrError::Bad(_))
        ));
    }

    proptest! {
        #[test]
        fn the_decoder_never_reads_past_its_slice(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut d = Dec::new(&bytes);
            // Any sequence of reads ends in a value or an error, never a panic.
            for _ in 0..32 {
                let _ = d.opaque(16);
                let _ = d.count(8, 4);
                if d.u64().is_err() { break; }
            }
            prop_assert!(d.pos() <= bytes.len());
        }
    }
}
