//! Unit tests of the spec: validation and its bounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;

pub(crate) fn sample() -> JobSpec {
    JobSpec {
        target: TargetSpec {
            write_sync: WriteSync::None,
            data: Default::default(),
            fill: Default::default(),
            path: "/tmp/x".into(),
            size: 1 << 30,
            files: 4,
            direct: true,
            allow_overwrite: false,
            open_files: None,
        },
        engine: EngineChoice::Auto,
        interval_s: 1.0,
        seed: 1,
        suite: None,
        targets: None,
        reading: Default::default(),
        runs: vec![RunSpec {
            name: "r".into(),
            rw: Pattern::Randrw,
            read_pct: 70,
            bs: vec![BlockSize {
                bytes: 8192,
                weight: 1,
            }],
            threads: 8,
            iodepth: 16,
            warmup_s: 1.0,
            duration_s: 5.0,
            ..RunSpec::default()
        }],
    }
}

#[test]
fn a_sound_spec_validates() {
    sample().validate().unwrap();
}

#[test]
fn read_pct_must_fit_the_pattern() {
    let mut s = sample();
    s.runs[0].read_pct = 120;
    assert!(
        s.validate()
            .unwrap_err()
            .to_string()
            .contains("--read-pct 120")
    );
    let mut s = sample();
    s.runs[0].rw = Pattern::Randread;
    s.runs[0].read_pct = 70;
    assert!(
        s.validate()
            .unwrap_err()
            .to_string()
            .contains("conflicts with --rw randread")
    );
}

#[test]
fn direct_io_needs_whole_sectors() {
    let mut s = sample();
    s.runs[0].bs = vec![BlockSize {
        bytes: 1000,
        weight: 1,
    }];
    let e = s.validate().unwrap_err().to_string();
    assert!(e.contains("--bs 1000") && e.contains("--buffered"), "{e}");
    s.target.direct = false;
    s.validate().unwrap();
}

#[test]
fn block_larger_than_a_file_is_refused() {
    let mut s = sample();
    s.target.size = 64 << 10;
    s.target.files = 4;
    s.runs[0].bs = vec![BlockSize {
        bytes: 32 << 10,
        weight: 1,
    }];
    assert!(
        s.validate()
            .unwrap_err()
            .to_string()
            .contains("larger than each file")
    );
}

#[test]
fn zero_threads_or_depth_is_refused() {
    let mut s = sample();
    s.runs[0].threads = 0;
    assert!(s.validate().is_err());
    let mut s = sample();
    s.runs[0].iodepth = 0;
    assert!(s.validate().is_err());
}

#[test]
fn every_number_has_a_bound() {
    let check = |f: &dyn Fn(&mut JobSpec), want: &str| {
        let mut s = sample();
        f(&mut s);
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains(want), "{want}: {e}");
    };
    check(&|s| s.runs[0].duration_s = 1e30, "--duration");
    check(&|s| s.runs[0].duration_s = f64::NAN, "--duration");
    check(&|s| s.runs[0].warmup_s = 1e30, "--warmup");
    check(&|s| s.interval_s = 1e30, "--interval");
    check(&|s| s.runs[0].rate_iops = Some(1e-300), "--rate");
    check(
        &|s| s.target.files = u32::MAX,
        "--files 4294967295 is outside 1..65536",
    );
    check(&|s| s.target.size = u64::MAX, "--size");
    check(
        &|s| {
            s.runs[0].threads = 32;
            s.runs[0].iodepth = 4096;
        },
        "I/Os in flight; at most 65536",
    );
    check(
        &|s| {
            s.runs[0].threads = 16;
            s.runs[0].iodepth = 4096;
            s.runs[0].bs[0].bytes = 256 << 20;
        },
        "of I/O buffers; at most 4GiB",
    );
    check(
        &|s| {
            s.runs[0].rate_pct = Some(RatePct {
                percent: 1e-300,
                of: "x".into(),
            })
        },
        "rate %",
    );
    check(&|s| s.runs[0].name = "a\nb".into(), "control character");
}

#[test]
fn names_say_what_runs() {
    assert_eq!(sample().runs[0].auto_name(), "randrw-70r-8KiB-8t-qd16");
}
