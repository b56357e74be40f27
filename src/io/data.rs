//! Buffers and the data written into them. Data must be incompressible and
//! unique per block, or storage that compresses or deduplicates (most
//! enterprise NAS does) reports speeds no real data would see.

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// A heap buffer aligned for direct I/O.
pub(crate) struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// The buffer is plain memory owned by one worker at a time.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes aligned to `align` (a power of two).
    pub(crate) fn new(len: usize, align: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), align.max(8))
            .expect("buffer alignment is a power of two and the size fits");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Self { ptr, layout }
    }

    /// Like `new`, but a size or alignment that cannot be laid out, or
    /// memory the system will not give, is an error instead of an abort.
    pub(crate) fn try_new(len: usize, align: usize) -> crate::error::Result<Self> {
        let layout = Layout::from_size_align(len.max(1), align.max(8)).map_err(|_| {
            crate::error::VbError::input(format!(
                "cannot lay out a {len}-byte buffer aligned to {align} bytes"
            ))
        })?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(crate::error::VbError::run(format!(
                "out of memory allocating a {len}-byte I/O buffer"
            )));
        }
        Ok(Self { ptr, layout })
    }

    pub(crate) fn len(&self) -> usize {
        self.layout.size()
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() bytes for the buffer's life.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this exact layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Fills a buffer with pseudo-random bytes (incompressible).
pub(crate) fn fill_random(buf: &mut [u8], rng: &mut fastrand::Rng) {
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&rng.u64(..).to_le_bytes());
    }
    for b in chunks.into_remainder() {
        *b = rng.u8(..);
    }
}

/// A stamp key for one worker of one run, drawn at random rather than
/// from --seed: with keys from the seed alone, every run of a job (a sweep's
/// points, a warm-up run) and every job with the same seed stamped the same
/// bytes at the same offsets, which deduplicating storage recognizes.
pub(crate) fn fresh_key() -> u64 {
    fastrand::u64(..)
}

/// Makes each 512-byte sector of a random buffer unique before it is
/// written: the sector's first 16 bytes take a mix of a per-worker key, the
/// offset and a write counter. Costs a few stores per sector instead of
/// regenerating the buffer, and defeats block-level deduplication.
#[inline]
pub(crate) fn stamp(buf: &mut [u8], key: u64, offset: u64, seq: u64) {
    for (sector, chunk) in buf.chunks_mut(512).enumerate() {
        let sector = sector as u64;
        if chunk.len() < 16 {
            break;
        }
        let a = key ^ offset.wrapping_add(sector << 9);
        let b = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ sector;
        chunk[..8].copy_from_slice(&a.to_le_bytes());
        chunk[8..16].copy_from_slice(&b.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_buffers_are_errors_not_aborts() {
        assert!(AlignedBuf::try_new(4096, 3000).is_err());
        assert!(AlignedBuf::try_new(usize::MAX - 100, 4096).is_err());
        assert_eq!(
            AlignedBuf::try_new(8192, 4096).map(|b| b.len()).ok(),
            Some(8192)
        );
    }

    #[test]
    fn buffers_are_aligned() {
        for align in [512, 4096, 65536] {
            let mut b = AlignedBuf::new(8192, align);
            assert_eq!(b.as_mut_ptr() as usize % align, 0);
            assert_eq!(b.len(), 8192);
        }
    }

    #[test]
    fn stamped_sectors_differ_between_writes_and_offsets() {
        let mut rng = fastrand::Rng::with_seed(1);
        let mut a = vec![0u8; 4096];
        fill_random(&mut a, &mut rng);
        let mut b = a.clone();
        stamp(&mut a, 7, 0, 1);
        stamp(&mut b, 7, 0, 2);
        assert_ne!(a[..512], b[..512]);
        let mut c = a.clone();
        stamp(&mut c, 7, 4096, 1);
        assert_ne!(a[..512], c[..512]);
        // Sectors within one block differ from each other too.
        assert_ne!(a[..16], a[512..528]);
    }

    #[test]
    fn random_data_does_not_compress() {
        // A crude entropy check: every byte value appears, none dominates.
        let mut rng = fastrand::Rng::with_seed(2);
        let mut buf = vec![0u8; 1 << 16];
        fill_random(&mut buf, &mut rng);
        let mut counts = [0u32; 256];
        for &b in &buf {
            counts[b as usize] += 1;
        }
        let max = *counts.iter().max().unwrap();
        let min = *counts.iter().min().unwrap();
        assert!(min > 150 && max < 380, "min {min} max {max}");
    }
}
