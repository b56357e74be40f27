//! The sector format of checkable and compressible data, and the body pool
//! it is cut from.
//!
//! Every 512-byte sector starts with a 32-byte header: its byte offset in
//! the file (8), the block's write counter (4), the file's index (4), a
//! magic (4), the pool sector its body came from (4) and an xxh3 checksum
//! of the whole sector with the checksum field zeroed (8). The pool index
//! lets a check rebuild the sector that was written and name the exact
//! byte that differs. The rest is the body: 512/R - 32 random bytes then
//! zeros, so a block compresses about R:1 (zeros cost a compressor a few
//! bits per run, random bytes a byte each; the header counts as random).
//! Bodies are copied from a pool made once from a fixed seed, at a position
//! that changes per write: consecutive blocks differ (a compressor working
//! on chunks larger than one block sees no repeats) and nothing is
//! generated per I/O.

use xxhash_rust::xxh3::xxh3_64;

pub(crate) const SECTOR: usize = 512;
pub(crate) const HEADER: usize = 32;
const MAGIC: [u8; 4] = *b"vbs1";
/// Pool of pre-shaped sectors: 8 MiB, so blocks taken from it rarely share
/// bodies within a compressor's window (gzip: 32 KiB; zstd up to level 18:
/// 4 MiB). Each worker writes from a copy of it (`io::ring`), walked in
/// order, so a file written sequentially repeats a body only 8 MiB later.
/// Made sector by sector from one seed, so its first 1 MiB is the whole
/// pool of the volbench versions whose pool was 1 MiB: the pool index in
/// their headers still names the same bytes.
pub(crate) const POOL_BYTES: usize = 8 << 20;
/// The pool the --dedup contents are cut from, as before the pool grew, so
/// a set filled with --dedup by an older volbench keeps its groups' bytes.
const DEDUP_POOL_SECTORS: u64 = (1 << 20) / SECTOR as u64;
const POOL_SEED: u64 = 0x766f_6c62_656e_6368;

/// Pre-shaped sector bodies for one compress ratio.
pub(crate) struct Pool {
    bytes: Vec<u8>,
}

impl Pool {
    pub(crate) fn new(compress: f64) -> Self {
        let mut bytes = vec![0u8; POOL_BYTES];
        let random = random_bytes_per_sector(compress);
        let mut rng = fastrand::Rng::with_seed(POOL_SEED);
        for sector in bytes.chunks_exact_mut(SECTOR) {
            crate::io::data::fill_random(&mut sector[..random], &mut rng);
        }
        Self { bytes }
    }

    /// Sectors in the pool: positions to copy from.
    pub(crate) fn sectors(&self) -> u64 {
        (self.bytes.len() / SECTOR) as u64
    }

    /// Copies pool sectors from sector `pos` (wrapping) over `dst`.
    #[inline]
    pub(crate) fn copy_into(&self, dst: &mut [u8], pos: u64) {
        self.copy_within_first(dst, pos, self.sectors());
    }

    /// Like `copy_into`, over the pool's first `span` sectors only.
    #[inline]
    fn copy_within_first(&self, dst: &mut [u8], pos: u64, span: u64) {
        let end = span.min(self.sectors()) as usize * SECTOR;
        let mut at = (pos % span.min(self.sectors())) as usize * SECTOR;
        let mut done = 0;
        while done < dst.len() {
            let n = (dst.len() - done).min(end - at);
            dst[done..done + n].copy_from_slice(&self.bytes[at..at + n]);
            done += n;
            at = 0;
        }
    }
}

/// Bytes of a sector that are random (header included): 512/R, at least
/// the header.
pub(crate) fn random_bytes_per_sector(compress: f64) -> usize {
    ((SECTOR as f64 / compress.max(1.0)).round() as usize).clamp(HEADER, SECTOR)
}

/// Writes the header of every sector of `buf`, which starts at `offset` of
/// file `file` and whose bodies were copied from pool sector `pos` on;
/// `counter_at(i)` is the write counter of the block holding sector `i`.
#[inline]
pub(crate) fn stamp_headers(
    buf: &mut [u8],
    pool: &Pool,
    file: u32,
    offset: u64,
    pos: u64,
    counter_at: impl Fn(usize) -> u32,
) {
    let sectors = pool.sectors();
    for (i, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
        let off = offset + (i * SECTOR) as u64;
        let from = ((pos + i as u64) % sectors) as u32;
        header(s, file, off, counter_at(i), from);
    }
}

#[inline]
fn header(s: &mut [u8], file: u32, off: u64, counter: u32, from: u32) {
    s[0..8].copy_from_slice(&off.to_le_bytes());
    s[8..12].copy_from_slice(&counter.to_le_bytes());
    s[12..16].copy_from_slice(&file.to_le_bytes());
    s[16..20].copy_from_slice(&MAGIC);
    s[20..24].copy_from_slice(&from.to_le_bytes());
    s[24..32].fill(0);
    let sum = xxh3_64(s);
    s[24..32].copy_from_slice(&sum.to_le_bytes());
}

/// For a damaged sector read at `offset` of `file`: rebuilds what was
/// written there (from the pool sector its header names, with `counter`,
/// or the counter it carries) and returns the first byte that differs:
/// its index in the sector, the byte written and the byte found.
pub(crate) fn locate(
    s: &[u8],
    pool: &Pool,
    file: u32,
    offset: u64,
    counter: Option<u32>,
) -> Option<(usize, u8, u8)> {
    if s.len() < SECTOR {
        return None;
    }
    let from = u32::from_le_bytes([s[20], s[21], s[22], s[23]]);
    if u64::from(from) >= pool.sectors() {
        return None;
    }
    let counter = counter.unwrap_or(u32::from_le_bytes([s[8], s[9], s[10], s[11]]));
    let mut want = [0u8; SECTOR];
    pool.copy_into(&mut want, from.into());
    header(&mut want, file, offset, counter, from);
    want.iter()
        .zip(s)
        .position(|(a, b)| a != b)
        .map(|i| (i, want[i], s[i]))
}

/// What a sector read back says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// A well-formed sector of this file and offset, with this counter.
    Counter(u32),
    /// Not a volbench sector (no magic), or its checksum fails (torn or corrupt).
    Damaged(&'static str),
    /// A well-formed sector of another place: a misdirected write or read.
    Elsewhere { file: u32, offset: u64 },
}

/// Checks one sector read from `offset` of file `file`. The checksum field
/// is put back as it was, so the buffer keeps what the device returned.
#[inline]
pub(crate) fn check_sector(s: &mut [u8], file: u32, offset: u64) -> Found {
    fn word(s: &[u8], r: std::ops::Range<usize>) -> u64 {
        let mut b = [0u8; 8];
        b[..r.len()].copy_from_slice(&s[r]);
        u64::from_le_bytes(b)
    }
    if s.len() < SECTOR || s[16..20] != MAGIC {
        return Found::Damaged("no volbench sector header");
    }
    let stored = word(s, 24..32);
    s[24..32].fill(0);
    let sum = xxh3_64(&s[..SECTOR]);
    s[24..32].copy_from_slice(&stored.to_le_bytes());
    if sum != stored {
        return Found::Damaged("checksum mismatch");
    }
    let (off, f) = (word(s, 0..8), word(s, 12..16) as u32);
    if off != offset || f != file {
        return Found::Elsewhere {
            file: f,
            offset: off,
        };
    }
    Found::Counter(word(s, 8..12) as u32)
}

/// The first bytes of a sector, for an error message.
pub(crate) fn first_bytes(s: &[u8]) -> String {
    s.iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join("")
}

/// Content of the dedup copies: unit `u` of a set of `units` units holds
/// the same bytes as every other unit of its group.
pub(crate) struct Dedup {
    pub(crate) unit: u64,
    pub(crate) groups: u64,
    /// Units per file (a partial last unit counts).
    pub(crate) per_file: u64,
}

const DEDUP_KEY: u64 = 0x6465_6475_705f_6b65;

impl Dedup {
    pub(crate) fn new(ratio: u64, unit: u64, nfiles: u32, file_size: u64) -> Self {
        let per_file = file_size.div_ceil(unit.max(1));
        let units = per_file * nfiles as u64;
        Self {
            unit,
            groups: (units / ratio.max(1)).max(1),
            per_file,
        }
    }

    /// Fills `buf`, which starts at `offset` (a multiple of the unit) of
    /// file `file`, with its units' group contents.
    #[inline]
    pub(crate) fn write(&self, pool: &Pool, buf: &mut [u8], file: u32, offset: u64) {
        let first = file as u64 * self.per_file + offset / self.unit;
        for (i, chunk) in buf.chunks_mut(self.unit as usize).enumerate() {
            let group = (first + i as u64) % self.groups;
            let mix = crate::io::workload::worker_seed(DEDUP_KEY, group as u32)
                ^ (group >> 32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            pool.copy_within_first(chunk, mix, DEDUP_POOL_SECTORS);
            crate::io::data::stamp(chunk, DEDUP_KEY, group * self.unit, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_sector_checks_and_a_changed_byte_does_not() {
        let pool = Pool::new(1.0);
        let mut buf = vec![0u8; 4096];
        pool.copy_into(&mut buf, 7);
        stamp_headers(&mut buf, &pool, 3, 8192, 7, |_| 42);
        for i in 0..8 {
            let at = 8192 + i as u64 * 512;
            assert_eq!(
                check_sector(&mut buf[i * 512..(i + 1) * 512], 3, at),
                Found::Counter(42)
            );
        }
        let s = &mut buf[..512];
        assert_eq!(
            check_sector(s, 3, 0),
            Found::Elsewhere {
                file: 3,
                offset: 8192
            }
        );
        let was = s[300];
        s[300] ^= 1;
        assert_eq!(
            check_sector(s, 3, 8192),
            Found::Damaged("checksum mismatch")
        );
        assert_eq!(
            locate(s, &pool, 3, 8192, Some(42)),
            Some((300, was, was ^ 1))
        );
        s[300] ^= 1;
        s[9] ^= 4;
        assert_eq!(locate(s, &pool, 3, 8192, Some(42)), Some((9, 0, 4)));
        assert_eq!(
            check_sector(&mut [0u8; 512], 0, 0),
            Found::Damaged("no volbench sector header")
        );
    }

    #[test]
    fn pool_copies_wrap_around() {
        let pool = Pool::new(2.0);
        let mut a = vec![0u8; 4096];
        pool.copy_into(&mut a, pool.sectors() - 2);
        assert_eq!(a[1024..1536], pool.bytes[..512]);
        assert_eq!(a[..512], pool.bytes[pool.bytes.len() - 1024..][..512]);
    }

    #[test]
    fn body_shape_follows_the_ratio() {
        assert_eq!(random_bytes_per_sector(1.0), 512);
        assert_eq!(random_bytes_per_sector(2.0), 256);
        assert_eq!(random_bytes_per_sector(16.0), 32);
        let pool = Pool::new(4.0);
        assert!(pool.bytes[128..512].iter().all(|&b| b == 0));
    }

    #[test]
    fn dedup_units_repeat_by_group() {
        // 2 files x 12 units of 4 KiB, 3 copies each: 8 groups.
        let d = Dedup::new(3, 4096, 2, 12 * 4096);
        assert_eq!(d.groups, 8);
        let pool = Pool::new(1.0);
        let mut all = Vec::new();
        for f in 0..2u32 {
            let mut buf = vec![0u8; 12 * 4096];
            d.write(&pool, &mut buf, f, 0);
            all.extend(buf.chunks(4096).map(|c| c.to_vec()));
        }
        let distinct: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), 8);
    }
}
