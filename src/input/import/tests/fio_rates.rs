//! fio's per-direction rates, latency target and steady state land on
//! volbench's `rate_iops = "R,W"`, `latency_target` and `steady`; what has
//! no equal is refused by name.

use super::*;

fn job(opts: &str) -> Result<Imported> {
    fio_with(
        &format!("[global]\nsize=256m\ndirectory=/d\ntime_based\nruntime=5\n[j]\nbs=8k\n{opts}\n"),
        &[],
        &no_env,
    )
}

#[test]
fn fio_rate_iops_per_direction_caps_reads_and_writes_apart() {
    // fio holds each direction of a mixed job at its own cap (it issues the
    // other direction while one is ahead of its schedule), whatever
    // rwmixread says: two jobs of 700 reads and 100 writes a second make
    // 1400 and 200, the mix the caps' (87.5% reads, a whole percent).
    let imp = job("rw=randrw\nrwmixread=70\nrate_iops=700,100\nnumjobs=2").unwrap();
    assert!(rendered_has(&imp, "rate_iops = \"1400,200\""));
    let r = &job_of(&imp).runs[0];
    assert_eq!(r.read_pct, 88);
    let total = r.rate_iops.unwrap();
    let (reads, writes) = (total * 0.88, total * 0.12);
    assert!(
        reads <= 1400.0 + 1e-9 && writes <= 200.0 + 1e-9,
        "{reads} {writes}"
    );
    assert!(
        (reads - 1400.0).abs() < 1e-6,
        "the tighter cap is met: {reads}"
    );
    // rwmixread is said to yield to the caps.
    assert!(
        imp.printed()
            .iter()
            .any(|n| n.contains("rwmixread=70: the caps make the mix")),
        "{:?}",
        imp.printed()
    );
    // One rate on a mixed job caps each direction at it: 50/50.
    let imp = job("rw=randrw\nrwmixread=70\nrate_iops=300").unwrap();
    let r = &job_of(&imp).runs[0];
    assert_eq!((r.read_pct, r.rate_iops), (50, Some(600.0)));
    // One direction capped: fio runs the other uncapped beside it, which one
    // paced run cannot; refused by name.
    for one in ["rate_iops=500,", "rate_iops=,500", "rate=1m,"] {
        let e = job(&format!("rw=randrw\nrwmixread=50\n{one}"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(one) && e.contains("a cap on one direction of a mixed job"),
            "{one}: {e}"
        );
    }
    // A read job takes the read rate and ignores the write one, as fio does.
    let imp = job("rw=randread\nrate_iops=300,50").unwrap();
    assert_eq!(job_of(&imp).runs[0].rate_iops, Some(300.0));
    let imp = job("rw=randread\nrate_iops=,50").unwrap();
    assert_eq!(job_of(&imp).runs[0].rate_iops, None);
    for bad in [
        "rate_iops=1,2,3",
        "rate_iops=fast,1",
        "rate_iops=-5,1",
        "rate_iops=,",
    ] {
        let e = job(&format!("rw=randrw\n{bad}")).unwrap_err().to_string();
        assert!(e.contains(bad), "{bad}: {e}");
    }
}

#[test]
fn fio_rate_per_direction_in_bytes_is_iops_over_one_block_size() {
    // 8 KiB blocks: 8m/s of reads is 1024 IOPS, 800k/s of writes 100.
    let imp = job("rw=randrw\nrwmixread=90\nrate=8m,800k").unwrap();
    assert!(rendered_has(&imp, "rate_iops = \"1024,100\""));
    // With rate_iops= too, fio takes rate= in each direction it caps
    // (init.c's setup_rate), rate_iops= in the others.
    let imp = job("rw=randrw\nrate=8m,\nrate_iops=500,500").unwrap();
    assert!(rendered_has(&imp, "rate_iops = \"1024,500\""));
}

#[test]
fn fio_rate_per_direction_with_bssplit_is_the_bandwidth_caps() {
    // Sizes from a mix: the caps in bytes, as fio keeps them, across both
    // jobs; the mix follows them (reads and writes draw from one size mix,
    // so the byte share is the I/O share).
    let imp = job("rw=randrw\nrwmixread=30\nbssplit=4k/50:64k/50\nrate=8m,2m\nnumjobs=2").unwrap();
    assert!(rendered_has(&imp, "rate_bw = \"16m/s,4m/s\""));
    let r = &job_of(&imp).runs[0];
    assert_eq!(r.read_pct, 80);
    let bytes = r.shape.rate_bytes.unwrap();
    assert!((bytes * 0.8 - 16.0 * 1048576.0).abs() < 1.0, "{bytes}");
    assert!(bytes * 0.2 <= 4.0 * 1048576.0 + 1.0, "{bytes}");
    assert!(
        r.rate_iops.is_none(),
        "bytes, not IOPS over the mix's mean size"
    );
    // One rate on a mixed job: each direction at it.
    let imp = job("rw=randrw\nbssplit=4k/50:64k/50\nrate=3m").unwrap();
    assert!(rendered_has(&imp, "rate_bw = \"3m/s,3m/s\""));
    assert_eq!(job_of(&imp).runs[0].read_pct, 50);
    // A one-direction job takes its own cap as a bandwidth.
    let imp = job("rw=randwrite\nbssplit=4k/50:64k/50\nrate=8m,2m").unwrap();
    assert!(rendered_has(&imp, "rate = \"2m/s\""));
    // rate_iops= over a size mix is bytes in fio: the IOPS times the
    // smallest size (300 x 4k), however large the I/Os drawn.
    let imp = job("rw=randrw\nbssplit=4k/50:64k/50\nrate_iops=300,100").unwrap();
    assert!(rendered_has(&imp, "rate_bw = \"1200k/s,400k/s\""));
    assert_eq!(job_of(&imp).runs[0].read_pct, 75);
    assert!(
        imp.printed().is_empty()
            || !imp
                .printed()
                .iter()
                .any(|n| n.contains("rate_iops=300,100")),
        "an exact mapping, said in the suite"
    );
    let text = render::suite_toml(&imp, "s", "h").unwrap();
    assert!(
        text.contains("rate_iops x its smallest (4k) in bytes"),
        "{text}"
    );
    let imp = job("rw=randread\nbssplit=4k/50:64k/50\nrate_iops=300").unwrap();
    assert!(rendered_has(&imp, "rate = \"1200k/s\""));
    // Both given with a mix: rate= wins in its direction, as in fio.
    let imp = job("rw=randrw\nbssplit=4k/50:64k/50\nrate=8m,800k\nrate_iops=100,100").unwrap();
    assert!(rendered_has(&imp, "rate_bw = \"8m/s,800k/s\""));
}

#[test]
fn fio_latency_target_becomes_the_latency_search() {
    let imp = job("rw=randread\niodepth=8\nioengine=io_uring\nlatency_target=2ms\nlatency_percentile=99\nlatency_window=1s").unwrap();
    assert!(rendered_has(&imp, "latency_target = \"p99=2000us\""));
    let s = job_of(&imp).runs[0].latency_target.clone().unwrap();
    assert_eq!(s.limits.len(), 1);
    assert_eq!(
        (s.limits[0].percentile, s.limits[0].limit_us),
        (99.0, 2000.0)
    );
    // fio's plain numbers are microseconds; its percentile defaults to 100.
    let imp = job("rw=randread\nlatency_target=500").unwrap();
    assert!(rendered_has(&imp, "latency_target = \"p100=500us\""));
    // Each mapping is said, the search's difference from fio's noted.
    let notes: Vec<String> = imp.run_said[0]
        .iter()
        .map(|m| format!("{} {:?}", m.option, m.how))
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("latency_target=500") && n.contains("queue depth")),
        "{notes:?}"
    );
    for (bad, why) in [
        ("latency_target=0", "0.1us"),
        ("latency_target=2h", "us"),
        ("latency_percentile=101", "at most 100"),
        ("latency_run=1", "adjusting the depth"),
    ] {
        let e = job(&format!("rw=randread\nlatency_target=2ms\n{bad}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(bad) && e.contains(why), "{bad}: {e}");
    }
}

#[test]
fn fio_steady_state_on_iops_is_the_steady_warmup() {
    let imp = job("rw=randread\nramp_time=30\nss=iops:10%\nss_dur=60\nss_ramp=5").unwrap();
    assert!(rendered_has(&imp, "steady = true"));
    assert!(job_of(&imp).runs[0].steady);
    let e = job("rw=randread\nss=bw:5%").unwrap_err().to_string();
    assert!(e.contains("ss=bw:5%") && e.contains("bandwidth"), "{e}");
}

pub(super) fn rendered_has(imp: &Imported, line: &str) -> bool {
    let text = render::suite_toml(imp, "s.toml", "h.txt").unwrap();
    text.lines().any(|l| l.trim() == line) || panic!("no `{line}` in\n{text}")
}
