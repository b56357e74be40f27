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
    // 70% reads capped at 700/s and writes at 100/s, two jobs: the writes'
    // cap (2 x 100 at 30%) sets the pace of the whole mix.
    let imp = job("rw=randrw\nrwmixread=70\nrate_iops=700,100\nnumjobs=2").unwrap();
    assert!(rendered_has(&imp, "rate_iops = \"1400,200\""));
    let r = &job_of(&imp).runs[0];
    assert_eq!(r.read_pct, 70);
    let total = r.rate_iops.unwrap();
    assert!((total - 200.0 / 0.3).abs() < 0.01, "{total}");
    // Reads only: `500,` leaves writes uncapped.
    let imp = job("rw=randrw\nrwmixread=50\nrate_iops=500,").unwrap();
    assert!(rendered_has(&imp, "rate_iops = \"500,\""));
    assert_eq!(job_of(&imp).runs[0].rate_iops, Some(1000.0));
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
fn fio_rate_per_direction_in_bytes_is_iops_over_the_block_size() {
    // 8 KiB blocks: 8m/s of reads is 1024 IOPS, 800k/s of writes 100.
    let imp = job("rw=randrw\nrwmixread=90\nrate=8m,800k").unwrap();
    assert!(rendered_has(&imp, "rate_iops = \"1024,100\""));
    // Several block sizes: no IOPS equal, refused by name.
    let e = job("rw=randrw\nbssplit=4k/50:64k/50\nrate=8m,800k")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rate=8m,800k") && e.contains("several block sizes"),
        "{e}"
    );
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

fn rendered_has(imp: &Imported, line: &str) -> bool {
    let text = render::suite_toml(imp, "s.toml", "h.txt").unwrap();
    text.lines().any(|l| l.trim() == line) || panic!("no `{line}` in\n{text}")
}
