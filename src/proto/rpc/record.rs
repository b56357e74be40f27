//! Record marking (RFC 5531 section 11): over TCP each RPC message is a
//! record of one or more fragments, each behind a 4-byte mark whose top
//! bit says "last fragment" and whose low 31 bits are its length. The
//! length comes from the far side, so it is held to a bound before a byte
//! of room is found for it.

use super::xdr::XdrError;

pub(crate) const LAST: u32 = 0x8000_0000;

/// One fragment's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    pub(crate) last: bool,
    pub(crate) len: u32,
}

/// The mark in `b` (its first 4 bytes), held to `max` bytes. A fragment
/// too short to hold an RPC reply's xid, type and status is refused too.
pub(crate) fn parse_mark(b: &[u8], max: u32) -> Result<Mark, XdrError> {
    let Some(w) = b.get(..4) else {
        return Err(XdrError::Short);
    };
    let w = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
    let mark = Mark {
        last: w & LAST != 0,
        len: w & !LAST,
    };
    if mark.len > max {
        return Err(XdrError::Bad(
            "a record-marking fragment longer than any reply this client asked for",
        ));
    }
    Ok(mark)
}

/// The mark of a one-fragment record of `len` bytes.
pub(crate) fn mark(len: usize) -> u32 {
    LAST | len as u32
}

#[cfg(any(test, feature = "fuzzing"))] // the fuzz target's framing of a byte stream; the client reads records off its socket itself
/// A whole record read out of a byte stream that may hold several
/// fragments: the bytes of every fragment joined, each mark checked, the
/// total held to `max`. Returns the record and the bytes of `stream` it
/// took, or `Short` when the stream ends first. A pure function over the
/// stream for the tests and the fuzz harness; the transport does the same
/// work in place without copying.
pub(crate) fn reassemble(stream: &[u8], max: u32, out: &mut Vec<u8>) -> Result<usize, XdrError> {
    out.clear();
    let mut at = 0;
    loop {
        let m = parse_mark(&stream[at..], max)?;
        let start = at + 4;
        let end = start + m.len as usize;
        if end > stream.len() {
            return Err(XdrError::Short);
        }
        if out.len() + m.len as usize > max as usize {
            return Err(XdrError::Bad(
                "a record longer than any reply this client asked for",
            ));
        }
        out.extend_from_slice(&stream[start..end]);
        at = end;
        if m.last {
            return Ok(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_four_gib_fragment_is_refused_at_its_mark() {
        let b = [0xff, 0xff, 0xff, 0xff];
        let m = parse_mark(&b, 1 << 20);
        assert!(matches!(m, Err(XdrError::Bad(_))), "{m:?}");
        // Without the last bit, the same length is refused the same way.
        assert!(matches!(
            parse_mark(&[0x7f, 0xff, 0xff, 0xff], 1 << 20),
            Err(XdrError::Bad(_))
        ));
    }

    #[test]
    fn fragments_join_into_one_record() {
        let mut s = Vec::new();
        s.extend_from_slice(&3u32.to_be_bytes());
        s.extend_from_slice(b"abc");
        s.extend_from_slice(&mark(2).to_be_bytes());
        s.extend_from_slice(b"de");
        s.extend_from_slice(b"next");
        let mut out = Vec::new();
        assert_eq!(reassemble(&s, 64, &mut out), Ok(13));
        assert_eq!(out, b"abcde");
        assert_eq!(reassemble(&s[..9], 64, &mut out), Err(XdrError::Short));
        // Many small fragments may not add up past the bound.
        let mut many = Vec::new();
        for _ in 0..10 {
            many.extend_from_slice(&8u32.to_be_bytes());
            many.extend_from_slice(&[0; 8]);
        }
        assert!(matches!(
            reassemble(&many, 40, &mut out),
            Err(XdrError::Bad(_))
        ));
    }

    proptest! {
        #[test]
        fn reassembly_of_any_stream_is_bounded(bytes in proptest::collection::vec(any::<u8>(), 0..256), max in 0u32..128) {
            let mut out = Vec::new();
            if let Ok(n) = reassemble(&bytes, max, &mut out) {
                prop_assert!(n <= bytes.len());
                prop_assert!(out.len() <= max as usize);
            }
        }
    }
}
