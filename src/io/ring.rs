//! Writes issued straight from a ring of data instead of a copy per write.
//!
//! Why: copying 64 KiB of fresh bytes into a slot buffer for every write
//! cost about 1.6 us per I/O, more than the rest of the loop. Each worker
//! instead owns a ring holding the data plan's pool (made once, aligned for
//! direct I/O, registered as one io_uring fixed buffer) and writes each
//! block from a different window of it, stamping only the per-sector
//! headers in place (16 or 32 bytes of every 512). The body a write
//! carries is the ring's bytes there, which are the pool's, so a check can
//! still rebuild a sector from the pool index in its header.
//!
//! Window choice (`Windows`): a cursor walks the ring by a stride of the
//! write's length rounded up to the alignment plus at least one alignment
//! unit, always an odd number of units. The ring is a power of two of
//! units, so the cursor visits every aligned position before it repeats
//! one: a worker writing one size never reuses a window within
//! ring/alignment writes, consecutive writes never overlap, and the same
//! block written again a lap later gets other bytes. A window may run past
//! the ring's end into a tail that repeats the ring's start, so the cursor
//! never has to jump back to 0 (which would repeat every lap's windows).
//!
//! In-flight windows are never stamped: windows are taken in cursor order,
//! so a new window [c, c + len) can only collide with an in-flight window
//! starting at v if c + len > v + ring; the oldest in-flight start is kept
//! as a lower bound, refreshed by a scan of the slots only when the cursor
//! catches up with it (about once a lap). If the oldest write is still in
//! flight a whole lap later (one straggler overtaken by hundreds of
//! others), `take` says no and that write is copied into its slot's own
//! buffer, as before the ring; the worker never waits for the ring.

use crate::io::data::AlignedBuf;
use crate::io::verify::DataPlan;
use crate::io::workload::IoOp;

/// Below this a ring would repeat within what a compressor sees at once;
/// the data plan's pool is this large, so a ring holds it exactly once.
pub(crate) const MIN_RING: usize = crate::io::verify::sectors::POOL_BYTES;
/// One worker's ring at most: a deeper queue of larger blocks copies instead.
pub(crate) const MAX_RING: usize = 64 << 20;
/// Rings of all the workers of a run at most (each worker also keeps its
/// slot buffers, bounded by `MAX_BUFFER_BYTES`); past it, writes copy.
pub(crate) const RING_BUDGET: u64 = 1 << 30;

const IDLE: u64 = u64::MAX;

/// Where each write's window starts, and which windows are in flight.
/// Positions are virtual (they only grow); a window's place in memory is
/// its position modulo the ring.
#[derive(Debug)]
pub(crate) struct Windows {
    ring: u64,
    align: u64,
    cursor: u64,
    /// At most the start of the oldest in-flight window (or the cursor).
    floor: u64,
    /// Per slot: the start of its in-flight window, or IDLE.
    starts: Vec<u64>,
}

impl Windows {
    /// `ring`: a power of two, a multiple of `align` (itself a power of
    /// two); the first window starts at `first` rounded down to `align`.
    pub(crate) fn new(ring: u64, align: u64, slots: u32, first: u64) -> Self {
        debug_assert!(ring.is_power_of_two() && align.is_power_of_two() && ring >= align);
        let first = first % ring / align * align;
        Self {
            ring,
            align,
            cursor: first,
            floor: first,
            starts: vec![IDLE; slots as usize],
        }
    }

    /// How far the cursor moves past a window of `len` bytes: an odd
    /// number of alignment units, at least one more than the window needs.
    #[inline]
    pub(crate) fn stride(&self, len: u64) -> u64 {
        stride(len, self.align)
    }

    /// The offset in the ring of the next window of `len` bytes for `slot`
    /// (which has nothing in flight), or None while it would overlap an
    /// in-flight window. The window is `slot`'s until `done(slot)`.
    #[inline]
    pub(crate) fn take(&mut self, slot: u32, len: u64) -> Option<u64> {
        let c = self.cursor;
        if c + len > self.floor + self.ring {
            self.floor = self.oldest();
            if c + len > self.floor + self.ring {
                return None;
            }
        }
        let start = self.starts.get_mut(slot as usize)?;
        debug_assert_eq!(*start, IDLE, "slot {slot} taken twice");
        *start = c;
        self.cursor = c + self.stride(len);
        Some(c & (self.ring - 1))
    }

    /// `slot`'s I/O has completed: its window may be stamped again.
    #[inline]
    pub(crate) fn done(&mut self, slot: u32) {
        if let Some(s) = self.starts.get_mut(slot as usize) {
            *s = IDLE;
        }
    }

    /// Where the next window will start, if nothing holds it back.
    #[inline]
    pub(crate) fn next(&self) -> u64 {
        self.cursor & (self.ring - 1)
    }

    fn oldest(&self) -> u64 {
        self.starts.iter().copied().fold(self.cursor, u64::min)
    }
}

/// Ring bytes for each of `workers` workers with `depth` I/Os in flight of
/// at most `max_bs` bytes aligned to `align`, or 0 when writes should copy
/// (the ring would exceed `MAX_RING` or the run's `RING_BUDGET`).
pub(crate) fn ring_bytes(workers: u32, depth: u32, max_bs: usize, align: usize) -> usize {
    let align = align.max(512) as u64;
    // Room for every slot's window twice over: in-order completions never
    // make `take` refuse, and out-of-order ones rarely do.
    let want = 2 * (depth as u64 + 1) * stride(max_bs as u64, align);
    let ring = want.max(MIN_RING as u64).next_power_of_two();
    let each = ring + tail(max_bs, align as usize) as u64;
    if ring > MAX_RING as u64 || each.saturating_mul(workers as u64) > RING_BUDGET {
        return 0;
    }
    ring as usize
}

#[inline]
fn stride(len: u64, align: u64) -> u64 {
    ((len.div_ceil(align) + 1) | 1) * align
}

fn tail(max_bs: usize, align: usize) -> usize {
    max_bs.div_ceil(align) * align
}

/// One worker's ring: the pool's bytes, then a tail repeating its start.
pub(crate) struct Ring {
    buf: AlignedBuf,
    windows: Windows,
}

impl Ring {
    /// A ring of `ring` bytes (from `ring_bytes`; 0: none) for writes of at
    /// most `max_bs`, or None when writes copy (no plan, --dedup, no ring,
    /// no memory).
    pub(crate) fn new(
        data: Option<&DataPlan>,
        ring: usize,
        max_bs: usize,
        align: usize,
        slots: u32,
    ) -> Option<Self> {
        let data = data.filter(|d| d.ring_ok())?;
        let align = align.max(512);
        if ring == 0 || !ring.is_power_of_two() || ring % align != 0 {
            return None;
        }
        let mut buf = AlignedBuf::try_new(ring + tail(max_bs, align), align).ok()?;
        data.fill_ring(buf.as_mut_slice());
        // A random first window (not from --seed): another run, or another
        // job, writing the same offsets in the same order writes other bytes.
        let first = fastrand::u64(..);
        Some(Self {
            buf,
            windows: Windows::new(ring as u64, align as u64, slots, first),
        })
    }

    /// The whole ring, to register with the engine.
    pub(crate) fn region(&mut self) -> (*mut u8, usize) {
        (self.buf.as_mut_ptr(), self.buf.len())
    }

    /// Makes write `op`'s data for `slot` in the next free window, stamped
    /// in place, and returns where it starts; None when no window is free
    /// (the caller copies instead).
    #[inline]
    pub(crate) fn write(
        &mut self,
        data: &DataPlan,
        slot: u32,
        op: &IoOp,
        key: u64,
        seq: u64,
    ) -> Option<*mut u8> {
        let len = op.len as usize;
        let at = self.windows.take(slot, len as u64)? as usize;
        if at + len > self.buf.len() {
            self.windows.done(slot);
            return None;
        }
        // SAFETY: [at, at + len) lies inside the buffer (checked above) and
        // `take` gave it to this slot only: no in-flight I/O covers any of
        // its bytes (see the module comment), and none will until `done`.
        let win = unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().add(at), len) };
        data.stamp_window(
            win,
            op,
            key,
            seq,
            (at / crate::io::verify::sectors::SECTOR) as u64,
        );
        let ptr = win.as_mut_ptr();
        self.prefetch(self.windows.next() as usize, len);
        Some(ptr)
    }

    /// Asks for the lines the next window's stamps go to (guessing it is as
    /// long as this one), so they arrive while this write is submitted:
    /// an 8 MiB ring is mostly out of cache by the time the cursor comes
    /// back, and the stamps' stores into it were most of `write`'s time
    /// (perf annotate: 78% on one store, waiting for its line).
    #[inline]
    fn prefetch(&self, at: usize, len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
            let base = self.buf.as_slice().as_ptr();
            let end = (at + len).min(self.buf.len());
            for off in (at..end).step_by(crate::io::verify::sectors::SECTOR) {
                // SAFETY: a prefetch is only a hint and `off` is inside the
                // buffer; it reads or writes nothing an I/O could see.
                unsafe { _mm_prefetch::<_MM_HINT_ET0>(base.add(off).cast()) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (at, len);
    }

    /// `slot`'s I/O has completed.
    #[inline]
    pub(crate) fn done(&mut self, slot: u32) {
        self.windows.done(slot);
    }
}

/// Where a worker's writes go from, and their stamps' key and counter.
pub(crate) struct WriteSource {
    ring: Option<Ring>,
    key: u64,
    seq: u64,
}

impl WriteSource {
    /// With a ring when `Ring::new` makes one (see there), else copies.
    pub(crate) fn new(
        data: Option<&DataPlan>,
        ring: usize,
        max_bs: usize,
        align: usize,
        slots: u32,
    ) -> Self {
        Self {
            ring: Ring::new(data, ring, max_bs, align, slots),
            key: crate::io::data::fresh_key(),
            seq: 0,
        }
    }

    /// The ring, to register with the engine after the slots' buffers.
    pub(crate) fn region(&mut self) -> Option<(*mut u8, usize)> {
        self.ring.as_mut().map(|r| r.region())
    }

    /// Where write `op` in `slot` goes from, its data made: a window of
    /// the ring stamped in place, or else `slot_buf` (the slot's own
    /// buffer) filled as without a ring: a copy from the pool, or with no
    /// data plan, stamps over the random bytes it holds.
    ///
    /// # Safety
    ///
    /// `slot` has nothing in flight, and `slot_buf` is its buffer, at least
    /// `op.len` bytes long, used by no one else until the slot's completion.
    #[inline]
    pub(crate) unsafe fn buf(
        &mut self,
        data: Option<&DataPlan>,
        slot: u32,
        slot_buf: *mut u8,
        op: &IoOp,
        rng: &mut fastrand::Rng,
    ) -> *mut u8 {
        self.seq += 1;
        let (key, seq) = (self.key, self.seq);
        if let (Some(r), Some(d)) = (self.ring.as_mut(), data) {
            if let Some(window) = r.write(d, slot, op, key, seq) {
                return window;
            }
        }
        // SAFETY: the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts_mut(slot_buf, op.len as usize) };
        match data {
            Some(d) => d.write(bytes, op, key, seq, rng),
            None => crate::io::data::stamp(bytes, key, op.offset, seq),
        }
        slot_buf
    }

    /// `slot`'s I/O (a read or a write) has completed.
    #[inline]
    pub(crate) fn done(&mut self, slot: u32) {
        if let Some(r) = &mut self.ring {
            r.done(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    const K: u64 = 1024;

    #[test]
    fn windows_are_aligned_and_do_not_repeat_within_a_lap_of_positions() {
        for (len, align) in [(4 * K, 4 * K), (64 * K, 4 * K), (6 * K, 4 * K), (512, 512)] {
            let ring = 8 << 20;
            let mut w = Windows::new(ring, align, 1, 12345);
            let n = ring / align;
            let mut seen = HashSet::new();
            for _ in 0..n {
                let at = w.take(0, len).expect("nothing in flight");
                w.done(0);
                assert_eq!(at % align, 0, "window at {at} not aligned to {align}");
                assert!(at < ring);
                assert!(
                    seen.insert(at),
                    "len {len}: window {at} repeated within {n} writes"
                );
            }
            // Consecutive windows never share a byte.
            let a = w.take(0, len).expect("free");
            w.done(0);
            let b = w.take(0, len).expect("free");
            assert!((b + ring - a) % ring >= len, "{a} then {b} overlap");
        }
    }

    #[test]
    fn stride_is_an_odd_number_of_units_past_the_window() {
        let w = Windows::new(1 << 23, 4096, 0, 0);
        assert_eq!(w.stride(4096), 3 * 4096);
        assert_eq!(w.stride(64 * K), 17 * 4096);
        assert_eq!(w.stride(1), 3 * 4096);
        assert_eq!(w.stride(8192 + 1), 5 * 4096);
    }

    /// Physical bytes [at, at + len) of a window, as a range in a ring of
    /// `ring` bytes with its tail: two windows share memory iff these meet.
    fn meet(a: (u64, u64), b: (u64, u64)) -> bool {
        a.0 < b.0 + b.1 && b.0 < a.0 + a.1
    }

    #[test]
    fn an_in_flight_window_is_never_handed_out_again() {
        // A small ring and a deep queue completing out of order: whatever
        // completes, no window taken overlaps one still in flight.
        let (ring, align, depth) = (1024 * K, 4 * K, 8u32);
        let mut w = Windows::new(ring, align, depth, 0);
        let mut rng = fastrand::Rng::with_seed(7);
        let mut flying: Vec<Option<(u64, u64)>> = vec![None; depth as usize];
        let (mut taken, mut refused) = (0, 0);
        for _ in 0..50_000 {
            let slot = rng.u32(..depth);
            if flying[slot as usize].is_some() {
                // Slot 0 is a straggler: it completes only rarely.
                if slot == 0 && rng.u32(..50) != 0 {
                    continue;
                }
                flying[slot as usize] = None;
                w.done(slot);
                continue;
            }
            let len = [4 * K, 16 * K, 64 * K][rng.usize(..3)];
            match w.take(slot, len) {
                Some(at) => {
                    taken += 1;
                    for (other, f) in flying.iter().enumerate() {
                        if let Some(f) = f {
                            assert!(
                                !meet((at, len), *f),
                                "slot {slot} got {at}+{len} over slot {other}'s {f:?}"
                            );
                        }
                    }
                    flying[slot as usize] = Some((at, len));
                }
                None => refused += 1,
            }
        }
        assert!(taken > 2000, "{taken} windows taken");
        assert!(
            refused > 0,
            "the straggler never held the cursor back: the test proves nothing"
        );
    }

    #[test]
    fn in_order_completions_at_the_ring_size_chosen_never_copy() {
        let (depth, bs, align) = (32u32, 64 * K as usize, 4096);
        let ring = ring_bytes(1, depth, bs, align) as u64;
        assert!(ring >= MIN_RING as u64 && ring.is_power_of_two());
        let mut w = Windows::new(ring, align as u64, depth, ring - 4096);
        let mut queue = std::collections::VecDeque::new();
        for i in 0..100_000u32 {
            let slot = i % depth;
            if queue.len() == depth as usize {
                w.done(queue.pop_front().expect("full"));
            }
            assert!(w.take(slot, bs as u64).is_some(), "write {i} refused");
            queue.push_back(slot);
        }
    }

    fn plan(spec: crate::spec::data::DataSpec) -> DataPlan {
        let layout = crate::io::workload::Layout {
            nfiles: 1,
            file_size: 1 << 20,
        };
        let map = spec.verify.then(|| {
            crate::io::verify::map::BlockMap::new(layout, 4096, 0, Vec::new(), 1).expect("map")
        });
        DataPlan::new(&spec, layout, map)
    }

    fn write_op(i: u64) -> IoOp {
        IoOp {
            write: true,
            file: 0,
            offset: (i % 16) << 16,
            len: 64 << 10,
        }
    }

    #[test]
    fn verify_windows_check_and_name_their_pool_bytes_lap_after_lap() {
        let plan = plan(crate::spec::data::DataSpec {
            verify: true,
            ..Default::default()
        });
        let mut ring = Ring::new(Some(&plan), MIN_RING, 64 << 10, 4096, 1).expect("a ring");
        // 300 windows of 68 KiB: over two laps, through the tail past the
        // ring's end, where the ring sector is no longer the pool sector.
        for i in 0..300 {
            let op = write_op(i);
            assert!(plan.acquire(&op));
            let p = ring
                .write(&plan, 0, &op, 1, i)
                .expect("nothing else in flight");
            // SAFETY: the window is 64 KiB of the ring, which outlives it,
            // and nothing else uses it until `done`.
            let mut copy = unsafe { std::slice::from_raw_parts(p, 64 << 10) }.to_vec();
            plan.release(&op, true);
            ring.done(0);
            assert_eq!(plan.check(&mut copy, &op), None, "write {i}");
            copy[700] ^= 0x10;
            let what = plan.check(&mut copy, &op).expect("a changed byte is found");
            let at = format!("offset {}: expected byte", op.offset + 700);
            assert!(what.contains(&at), "write {i}: {what}");
        }
    }

    #[test]
    fn a_window_in_flight_keeps_its_bytes_while_others_lap_the_ring() {
        let plan = plan(Default::default());
        let mut ring = Ring::new(Some(&plan), MIN_RING, 64 << 10, 4096, 2).expect("a ring");
        let op = write_op(0);
        let p = ring.write(&plan, 0, &op, 1, 1).expect("free");
        // SAFETY: as above; slot 0 stays in flight for the whole test.
        let flying = || unsafe { std::slice::from_raw_parts(p, 64 << 10) }.to_vec();
        let before = flying();
        let (mut taken, mut refused) = (0, 0);
        for i in 1..1000 {
            match ring.write(&plan, 1, &write_op(i), 1, i + 1) {
                Some(_) => {
                    taken += 1;
                    ring.done(1);
                }
                None => refused += 1,
            }
        }
        assert!(before == flying(), "an in-flight window was stamped");
        assert!(
            taken > 100 && refused > 0,
            "{taken} taken, {refused} refused"
        );
        ring.done(0);
        assert!(ring.write(&plan, 1, &write_op(0), 1, 2000).is_some());
    }

    #[test]
    fn consecutive_default_writes_carry_different_bodies() {
        let plan = plan(Default::default());
        let mut ring = Ring::new(Some(&plan), MIN_RING, 4096, 4096, 1).expect("a ring");
        let mut seen = HashSet::new();
        for i in 0..2048 {
            let op = IoOp {
                len: 4096,
                ..write_op(0)
            };
            let p = ring.write(&plan, 0, &op, 1, 1).expect("free");
            // SAFETY: as above.
            let block = unsafe { std::slice::from_raw_parts(p, 4096) }.to_vec();
            ring.done(0);
            // Same offset, key and counter every time: only the body differs.
            assert!(seen.insert(block), "write {i} repeated an earlier block");
        }
    }

    #[test]
    fn dedup_writes_copy_their_group_bytes_instead() {
        let plan = plan(crate::spec::data::DataSpec {
            dedup: 2,
            ..Default::default()
        });
        assert!(Ring::new(Some(&plan), MIN_RING, 4096, 4096, 1).is_none());
        assert!(Ring::new(None, MIN_RING, 4096, 4096, 1).is_none());
    }

    #[test]
    fn rings_stay_within_their_bounds() {
        assert_eq!(ring_bytes(1, 1, 4096, 4096), MIN_RING);
        assert_eq!(ring_bytes(4, 32, 64 << 10, 4096), MIN_RING);
        assert_eq!(ring_bytes(1, 128, 128 << 10, 4096), 64 << 20);
        // Too deep a queue of too large blocks, or too many workers: copy.
        assert_eq!(ring_bytes(1, 256, 1 << 20, 4096), 0);
        assert_eq!(ring_bytes(1, 1, 1 << 30, 4096), 0);
        assert_eq!(ring_bytes(200, 1, 4096, 4096), 0);
        assert_eq!(ring_bytes(100, 1, 4096, 4096), MIN_RING);
    }
}
