#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::blktrace::{Order, encode};
use super::*;

fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut f, bytes).expect("write");
    f
}

fn all(bytes: &[u8]) -> Result<Vec<Request>> {
    let f = file(bytes);
    let (_, s) = scan(f.path())?;
    let mut t = Trace::open(f.path(), s.blk_event)?;
    let mut v = Vec::new();
    while let Some(r) = t.next_request()? {
        v.push(r);
    }
    Ok(v)
}

fn err(bytes: &[u8]) -> String {
    let f = file(bytes);
    match scan(f.path()) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => e.to_string(),
    }
}

const HEAD: &str = "# volbench.trace/v1 device=sda sector=512 start_unix_ns=1\nissue_ns,complete_ns,op,offset,bytes\n";

#[test]
fn a_volbench_trace_reads_every_op() {
    let t = format!("{HEAD}0,100,R,4096,4096\n10,,W,0,8192\n20,30,F,0,0\n30,40,D,8192,65536\n");
    let f = file(t.as_bytes());
    let (format, s) = scan(f.path()).expect("scan");
    assert_eq!(format, TraceFormat::Volbench);
    assert_eq!((s.reads, s.writes, s.flushes, s.discards), (1, 1, 1, 1));
    assert_eq!((s.read_bytes, s.write_bytes), (4096, 8192));
    assert_eq!(s.span_bytes, 8192 + 65536);
    assert_eq!(s.max_bytes, 8192);
    assert_eq!(s.align, 4096);
    let v = all(t.as_bytes()).expect("read");
    assert_eq!(
        v[1],
        Request {
            at_ns: 10,
            op: ReqOp::Write,
            offset: 0,
            len: 8192
        }
    );
}

#[test]
fn fio_iologs_v2_and_v3_read_as_fio_writes_them() {
    let v3 = "fio version 3 iolog\n22 /f add\n128 /f open\n132 /f read 61440 4096\n6637 /f sync 368640 0\n9000 /f write 0 512\n9100 /f trim 0 4096\n9200 /f close\n";
    let v = all(v3.as_bytes()).expect("v3");
    assert_eq!(v.len(), 4);
    assert_eq!(
        v[0],
        Request {
            at_ns: 132_000,
            op: ReqOp::Read,
            offset: 61440,
            len: 4096
        }
    );
    assert_eq!(v[1].op, ReqOp::Flush);
    assert_eq!(v[2].at_ns, 9_000_000);
    assert_eq!(v[3].op, ReqOp::Discard);
    let v2 = "fio version 2 iolog\n/f add\n/f open\n/f read 0 4096\n/f wait 1500 0\n/f write 4096 4096\n/f close\n";
    let v = all(v2.as_bytes()).expect("v2");
    assert_eq!(v.len(), 2);
    assert_eq!((v[0].at_ns, v[1].at_ns), (0, 1_500_000));
}

#[test]
fn blktrace_events_in_either_byte_order_become_requests() {
    // Category bits << 16 | action code: Q = 1, C = 8; write = 1 << 1,
    // flush = 1 << 2, queue = 1 << 4, discard = 1 << 13.
    let q_read = (1 << 4 | 1) << 16 | 1;
    let q_write = ((1 << 4) | (1 << 1)) << 16 | 1;
    let q_flush = ((1 << 4) | (1 << 2)) << 16 | 1;
    let q_discard = ((1 << 4) | (1 << 13)) << 16 | 1;
    let complete = (1 << 7) << 16 | 8;
    for order in [Order::Little, Order::Big] {
        let mut b = Vec::new();
        b.extend(encode(order, 1_000, 8, 4096, q_read));
        b.extend(encode(order, 2_000, 8, 4096, complete));
        b.extend(encode(order, 3_000, 16, 8192, q_write));
        b.extend(encode(order, 4_000, 0, 0, q_flush));
        b.extend(encode(order, 5_000, 64, 1 << 20, q_discard));
        let v = all(&b).expect("blktrace");
        assert_eq!(
            v,
            vec![
                Request {
                    at_ns: 0,
                    op: ReqOp::Read,
                    offset: 4096,
                    len: 4096
                },
                Request {
                    at_ns: 2_000,
                    op: ReqOp::Write,
                    offset: 8192,
                    len: 8192
                },
                Request {
                    at_ns: 3_000,
                    op: ReqOp::Flush,
                    offset: 0,
                    len: 0
                },
                Request {
                    at_ns: 4_000,
                    op: ReqOp::Discard,
                    offset: 32768,
                    len: 1 << 20
                },
            ],
            "{order:?}"
        );
    }
    let mut cut = encode(Order::Little, 1, 0, 4096, q_read);
    cut.truncate(30);
    let f = file(&cut);
    assert!(Trace::open(f.path(), None).is_ok());
    assert!(err(&cut).contains("truncated"), "{}", err(&cut));
}

#[test]
fn hostile_traces_are_one_line_each() {
    let cases: Vec<(String, &str)> = vec![
        (format!("{HEAD}0,,R,0,4096"), "truncated"),
        (format!("{HEAD}0,,X,0,4096\n"), "op 'X'"),
        (
            format!("{HEAD}10,,R,0,4096\n5,,R,0,4096\n"),
            "before the one before",
        ),
        (format!("{HEAD}-1,,R,0,4096\n"), "not a whole number"),
        (
            format!("{HEAD}0,,R,9223372036854775807,4096\n"),
            "beyond any volume",
        ),
        (format!("{HEAD}0,,R,0,0\n"), "0 bytes"),
        (format!("{HEAD}0,,R,0,1073741824\n"), "a request is 1 byte"),
        (format!("{HEAD}0,,R,0,4096,9\n"), "6 columns"),
        (
            format!("{}\n", "# volbench.trace/v1 requests=1000000000000"),
            "claims more than",
        ),
        (
            format!("{}0,,R,0,4096\n", HEAD.replace("sector=512", "requests=5")),
            "claims 5 requests",
        ),
        (format!("{HEAD}{}\n", "9".repeat(5000)), "longer than 4096"),
        (HEAD.to_string(), "no requests"),
        (
            "fio version 3 iolog\n1 /f read 0 4096\n2 /g read 0 4096\n".into(),
            "a second file",
        ),
        (
            "fio version 3 iolog\n1 /f frobnicate 0 4096\n".into(),
            "action 'frobnicate'",
        ),
        ("fio version 2 iolog\n/f read 0\n".into(), "needs an offset"),
        ("hello\n".into(), "not a trace"),
        (
            format!("{HEAD}{}0,,R,0,4096\n", "0,,R,0,4096\n".repeat(2)).replace("issue_ns", "when"),
            "is not the header",
        ),
    ];
    for (text, want) in cases {
        let e = err(text.as_bytes());
        assert!(e.contains(want), "{want:?} not in {e:?}");
        assert!(!e.contains('\n'), "{e:?}");
        assert!(e.starts_with("--replay "), "{e}");
    }
}

/// A fio iolog dealt to hosts: each part is volbench text that reads
/// back as that host's requests, and the parts add up to the trace.
#[test]
fn a_split_trace_reads_back_as_its_parts() {
    use crate::spec::replay::{ReplaySpec, ReplaySplit};
    let mut t = String::from("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n");
    for i in 0..50u64 {
        let op = ["read", "write", "sync"][(i % 3) as usize];
        t.push_str(&format!("{} /dev/x {op} {} 4096\n", i * 10, i * (1 << 19)));
    }
    let f = file(t.as_bytes());
    let (format, summary) = scan(f.path()).unwrap();
    let mut spec = ReplaySpec {
        path: f.path().to_path_buf(),
        format,
        speed: Some(1.0),
        wrap: false,
        summary: summary.clone(),
        split: Some(ReplaySplit::Share),
        part: None,
        text: None,
        map: Default::default(),
        depth_from_trace: false,
    };
    let parts = split::split(&spec, 2).unwrap();
    assert_eq!(parts.len(), 2);
    let mut total = 0;
    for (h, part) in parts.iter().enumerate() {
        let mut one = spec.clone();
        one.text = Some(part.text.clone());
        let mut tr = Trace::of(&one).unwrap();
        let mut n = 0;
        while let Some(r) = tr.next_request().unwrap() {
            if r.op != ReqOp::Flush {
                assert_eq!(r.offset / split::STRIPE % 2, h as u64, "{r:?}");
            }
            n += 1;
        }
        assert_eq!(n, part.summary.requests);
        total += n;
    }
    assert_eq!(total, summary.requests);
    assert_eq!(
        parts[0].summary.reads + parts[1].summary.reads,
        summary.reads
    );
    // `whole`: one part, the whole trace.
    spec.split = Some(ReplaySplit::Whole { offset_ns: 5 });
    let whole = split::split(&spec, 3).unwrap();
    assert_eq!(whole.len(), 1);
    assert_eq!(whole[0].summary.requests, summary.requests);
    // A part that never arrived is named, not replayed as nothing.
    spec.part = Some(crate::spec::replay::HostPart {
        host: 1,
        hosts: 2,
        bytes: 10,
        delay_ns: 0,
    });
    let e = Trace::of(&spec)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("never arrived"), "{e}");
}

#[test]
fn the_scan_finds_the_most_requests_within_one_millisecond() {
    // 3 at 0, 2 at 0.5 ms, 1 at 1.2 ms (which sees the 2 at 0.5 ms), a
    // flush among them that takes no slot, then 300 at once (the bound).
    let mut t = String::from("# volbench.trace/v1\nissue_ns,complete_ns,op,offset,bytes\n");
    for (at, n) in [(0u64, 3u64), (500_000, 2), (1_200_000, 1)] {
        for i in 0..n {
            t.push_str(&format!("{at},,R,{},4096\n", i * 4096));
        }
    }
    t.push_str("1200000,,F,0,0\n");
    let f = file(t.as_bytes());
    let (_, s) = scan(f.path()).unwrap();
    assert_eq!(s.peak_1ms, 5, "{s:?}");
    assert_eq!(s.depth_for(Some(1.0)), 5);
    assert_eq!(s.depth_for(Some(2.0)), 10, "twice the pace");
    assert_eq!(s.depth_for(Some(0.5)), 5);
    for i in 0..300u64 {
        t.push_str(&format!("9000000,,W,{},4096\n", i * 4096));
    }
    let f = file(t.as_bytes());
    let (_, s) = scan(f.path()).unwrap();
    assert_eq!(s.peak_1ms, crate::units::bounds::MAX_REPLAY_AUTO_DEPTH);
    assert_eq!(s.recorded_in_flight, 0, "no completion times");
}

#[test]
fn a_trace_with_completions_replays_at_the_depth_it_was_recorded_at() {
    // Two requests always in flight: each completes 300 us after its issue,
    // the next issued 150 us after the one before.
    let mut t = String::from("# volbench.trace/v1\nissue_ns,complete_ns,op,offset,bytes\n");
    for i in 0..100u64 {
        let at = i * 150_000;
        t.push_str(&format!("{at},{},R,{},4096\n", at + 300_000, i * 4096));
    }
    let f = file(t.as_bytes());
    let (_, s) = scan(f.path()).unwrap();
    assert_eq!(s.recorded_in_flight, 2, "{s:?}");
    assert_eq!(s.peak_1ms, 7, "{s:?}");
    // The recorded depth wins over the timing's, at any pace.
    assert_eq!(s.depth_for(Some(1.0)), 2);
    assert_eq!(s.depth_for(None), 2);
}
