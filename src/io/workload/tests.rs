use super::*;

fn bs(list: &[(u64, u32)]) -> Vec<BlockSize> {
    list.iter()
        .map(|&(bytes, weight)| BlockSize { bytes, weight })
        .collect()
}

const L: Layout = Layout {
    nfiles: 4,
    file_size: 1 << 20,
};

#[test]
fn same_seed_same_offsets_other_seed_other_offsets() {
    let draw = |seed| {
        let mut g = IoGen::new(Pattern::Randrw, 70, &bs(&[(4096, 1)]), L, seed, 3, 8);
        (0..1000).map(|_| g.next_op()).collect::<Vec<_>>()
    };
    assert_eq!(draw(42), draw(42));
    assert_ne!(draw(42), draw(43));
}

#[test]
fn workers_draw_different_streams() {
    let mut a = IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), L, 1, 0, 2);
    let mut b = IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), L, 1, 1, 2);
    let va: Vec<_> = (0..100).map(|_| a.next_op()).collect();
    let vb: Vec<_> = (0..100).map(|_| b.next_op()).collect();
    assert_ne!(va, vb);
}

#[test]
fn writes_draw_their_own_sizes() {
    let mut g = IoGen::new(Pattern::Randrw, 70, &bs(&[(8192, 1)]), L, 3, 0, 1)
        .sized_writes(&bs(&[(65536, 3), (131072, 1)]));
    let (mut reads, mut big, mut writes) = (0, 0, 0);
    for _ in 0..20_000 {
        let op = g.next_op();
        assert!(op.offset % 8192 == 0 && op.offset + op.len as u64 <= L.file_size);
        if op.write {
            assert!(op.len == 65536 || op.len == 131072, "{op:?}");
            writes += 1;
            big += usize::from(op.len == 131072);
        } else {
            assert_eq!(op.len, 8192);
            reads += 1;
        }
    }
    // 70% reads, and a quarter of the writes at 128 KiB (binomial
    // spread of 20,000 draws is well under 1%).
    assert!((reads as f64 / 20_000.0 - 0.7).abs() < 0.02, "{reads}");
    assert!(
        (big as f64 / writes as f64 - 0.25).abs() < 0.03,
        "{big}/{writes}"
    );
    // Without sizes of their own, writes draw from the reads' list.
    let mut g = IoGen::new(Pattern::Randrw, 50, &bs(&[(4096, 1)]), L, 3, 0, 1).sized_writes(&[]);
    assert!((0..1000).all(|_| g.next_op().len == 4096));
}

#[test]
fn read_share_follows_read_pct() {
    let mut g = IoGen::new(Pattern::Randrw, 70, &bs(&[(4096, 1)]), L, 9, 0, 1);
    let n = 20_000;
    let reads = (0..n).filter(|_| !g.next_op().write).count();
    let share = reads as f64 * 100.0 / n as f64;
    assert!((share - 70.0).abs() < 2.0, "read share {share}");
}

#[test]
fn random_offsets_are_aligned_and_in_bounds() {
    let mut g = IoGen::new(
        Pattern::Randrw,
        50,
        &bs(&[(4096, 30), (65536, 70)]),
        L,
        5,
        0,
        1,
    );
    let mut big = 0;
    for _ in 0..50_000 {
        let op = g.next_op();
        assert_eq!(op.offset % 4096, 0);
        assert!(op.offset + op.len as u64 <= L.file_size);
        assert!(op.file < L.nfiles);
        if op.len == 65536 {
            big += 1;
        }
    }
    let share = big as f64 / 50_000.0 * 100.0;
    assert!((share - 70.0).abs() < 2.0, "64k share {share}");
}

#[test]
fn sequential_streams_walk_their_region_and_wrap() {
    // Two workers over 4 files of 1 MiB: worker 1 owns the second half.
    let mut g = IoGen::new(Pattern::Read, 100, &bs(&[(65536, 1)]), L, 1, 1, 2);
    let first = g.next_op();
    assert_eq!((first.file, first.offset), (2, 0));
    let mut last = first;
    for _ in 1..32 {
        last = g.next_op();
    }
    assert_eq!((last.file, last.offset), (3, (1 << 20) - 65536));
    let wrapped = g.next_op();
    assert_eq!((wrapped.file, wrapped.offset), (2, 0));
}

#[test]
fn each_thread_makes_its_own_pass_from_its_start_as_fio_s_jobs_do() {
    use crate::spec::shape::{Shape, Streams};
    // 4 MiB as one set; threads from 1 MiB + t x 1 MiB, passes of 2 MiB.
    let layout = Layout {
        nfiles: 1,
        file_size: 4 << 20,
    };
    let shape = Shape {
        streams: Streams::Each {
            offset: 1 << 20,
            step: 1 << 20,
        },
        ..Shape::default()
    };
    for t in 0..2u32 {
        let mut g =
            IoGen::new(Pattern::Read, 100, &bs(&[(65536, 1)]), layout, 1, t, 2).shaped(&shape);
        let start = (1 + t as u64) << 20;
        let offs: Vec<u64> = (0..33).map(|_| g.next_op().offset).collect();
        assert_eq!(offs[0], start);
        assert_eq!(offs[31], start + (2 << 20) - 65536, "a pass is 2 MiB");
        assert_eq!(offs[32], start, "and wraps to the thread's own start");
    }
    // Without a step every thread walks the whole set from 0.
    let shape = Shape {
        streams: Streams::Each { offset: 0, step: 0 },
        ..Shape::default()
    };
    let mut g = IoGen::new(Pattern::Read, 100, &bs(&[(65536, 1)]), L, 1, 1, 2).shaped(&shape);
    let first = g.next_op();
    assert_eq!(
        (first.file, first.offset),
        (0, 0),
        "thread 1 starts at the set's start"
    );
}

#[test]
fn a_mixed_each_stream_keeps_reads_and_writes_on_their_own_positions() {
    use crate::spec::shape::{Shape, Streams};
    let shape = Shape {
        streams: Streams::Each { offset: 0, step: 0 },
        ..Shape::default()
    };
    let mut g = IoGen::new(Pattern::Rw, 60, &bs(&[(4096, 1)]), L, 7, 0, 1).shaped(&shape);
    let (mut next_read, mut next_write) = (0u64, 0u64);
    for _ in 0..1000 {
        let op = g.next_op();
        let at = op.file as u64 * L.file_size + op.offset;
        let next = if op.write {
            &mut next_write
        } else {
            &mut next_read
        };
        assert_eq!(at, *next, "each direction continues where it left off");
        *next += 4096;
    }
    assert!(next_read > 0 && next_write > 0);
}

#[test]
fn seek_pct_30_seeks_on_30_percent_and_runs_on_otherwise() {
    use crate::spec::shape::Shape;
    let shape = Shape {
        seek_pct: Some(30),
        ..Shape::default()
    };
    let mut g = IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), L, 3, 0, 2).shaped(&shape);
    let mut prev = g.next_op();
    let n = 20_000;
    let mut continued = 0;
    for _ in 0..n {
        let op = g.next_op();
        let next = |o: &IoOp| o.file as u64 * L.file_size + o.offset + o.len as u64;
        if op.file as u64 * L.file_size + op.offset == next(&prev) {
            continued += 1;
        }
        assert!(op.offset + op.len as u64 <= L.file_size);
        prev = op;
    }
    // 70% continue; a seek lands right after the last I/O 1 in 1024 times.
    let share = continued as f64 * 100.0 / n as f64;
    assert!((share - 70.0).abs() < 2.0, "sequential share {share}");
}

#[test]
fn skewed_offsets_span_files_aligned_and_hot_first() {
    use crate::spec::shape::{Distribution, HotZone, Shape};
    let shape = Shape {
        distribution: Distribution::Hot {
            zones: vec![HotZone {
                io_pct: 90.0,
                space_pct: 25.0,
            }],
        },
        ..Shape::default()
    };
    let mut g = IoGen::new(
        Pattern::Randread,
        100,
        &bs(&[(4096, 1), (65536, 1)]),
        L,
        3,
        0,
        1,
    )
    .shaped(&shape);
    let n = 50_000;
    let mut first_file = 0;
    for _ in 0..n {
        let op = g.next_op();
        assert_eq!(op.offset % 4096, 0);
        assert!(op.offset + op.len as u64 <= L.file_size, "{op:?}");
        if op.file == 0 {
            first_file += 1;
        }
    }
    // The hot quarter of 4 equal files is the first file.
    let share = first_file as f64 * 100.0 / n as f64;
    assert!((share - 90.0).abs() < 2.0, "first-file share {share}");
}

#[test]
fn sequential_io_never_straddles_files() {
    let layout = Layout {
        nfiles: 3,
        file_size: 100_000,
    };
    let mut g = IoGen::new(Pattern::Write, 0, &bs(&[(4096, 1)]), layout, 1, 0, 1);
    for _ in 0..1000 {
        let op = g.next_op();
        assert!(op.write);
        assert!(op.offset + op.len as u64 <= layout.file_size, "{op:?}");
    }
}

#[test]
fn random_map_visits_every_block_once_per_pass_in_a_new_order() {
    // 3 files of 25 blocks: 75 slots, not a power of two.
    let layout = Layout {
        nfiles: 3,
        file_size: 25 * 4096,
    };
    let mut g =
        IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), layout, 7, 0, 1).visit_once(7, 0);
    let pass = |g: &mut IoGen| {
        let mut seen = Vec::new();
        for _ in 0..75 {
            let op = g.next_op();
            assert!(op.offset + op.len as u64 <= layout.file_size, "{op:?}");
            seen.push(op.file as u64 * 25 + op.offset / 4096);
        }
        seen
    };
    let first = pass(&mut g);
    let mut sorted = first.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..75).collect::<Vec<_>>(), "each slot once");
    assert_eq!(g.passes(), 0, "the pass ends on the next draw");
    let second = pass(&mut g);
    assert_eq!(g.passes(), 1);
    let mut s2 = second.clone();
    s2.sort_unstable();
    assert_eq!(s2, sorted, "the second pass covers every slot once too");
    assert_ne!(first, second, "a new pass draws a new order");
    // Not the identity: a shuffled order, not a sweep.
    assert_ne!(first, sorted);
}

#[test]
fn random_map_with_writes_of_their_own_size_covers_the_smallest_size_s_slots() {
    // 64 KiB reads, 4 KiB writes (listed second): the map's slots are
    // the 4 KiB positions, 16 per 64 KiB file, each once a pass; a read
    // starts at its slot clipped to the only place 64 KiB fits.
    let layout = Layout {
        nfiles: 2,
        file_size: 65536,
    };
    let mut g = IoGen::new(Pattern::Randrw, 50, &bs(&[(65536, 1)]), layout, 3, 0, 1)
        .sized_writes(&bs(&[(4096, 1)]))
        .visit_once(3, 0);
    let mut writes = Vec::new();
    for _ in 0..32 {
        let op = g.next_op();
        assert!(op.offset + op.len as u64 <= layout.file_size, "{op:?}");
        if op.write {
            assert_eq!(op.len, 4096);
            writes.push(op.file as u64 * 16 + op.offset / 4096);
        } else {
            assert_eq!((op.len, op.offset), (65536, 0));
        }
    }
    let mut sorted = writes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), writes.len(), "no slot twice in a pass");
    assert!(
        writes.iter().any(|&s| s % 16 != 0),
        "writes reach past the first 4 KiB of a file: {writes:?}"
    );
}

#[test]
fn random_map_is_refused_with_a_skew_or_seeks() {
    use crate::spec::shape::Shape;
    let skew = Shape {
        random_map: true,
        distribution: crate::spec::shape::Distribution::parse("zipf:1.2").unwrap(),
        ..Shape::default()
    };
    assert!(skew.validate(true, false, false).is_err());
    let seq = Shape {
        random_map: true,
        ..Shape::default()
    };
    assert!(seq.validate(false, false, false).is_err());
    assert!(seq.validate(true, false, false).is_ok());
}
