//! Imported jobs measure what fio measures: the page cache dropped at job
//! start (fio's invalidate), buffered libaio at one request in flight, and
//! options fio accepts without changing the workload (thread,
//! io_submit_mode) accepted, while those volbench cannot keep are refused by
//! name with the reason.

use super::*;

fn buffered(opts: &str) -> Result<Imported> {
    fio_with(
        &format!(
            "[global]\nsize=256m\ndirectory=/d\ntime_based\nruntime=5\n[rr]\nrw=randread\nbs=4k\n{opts}\n"
        ),
        &[],
        &no_env,
    )
}

/// Every mapping of the first run, as option and how, to look for words in.
fn said(imp: &Imported) -> Vec<String> {
    imp.draft.runs[0]
        .notes
        .iter()
        .map(|m| format!("{} {:?}", m.option, m.how))
        .collect()
}

#[test]
fn fio_invalidate_is_on_by_default_and_invalidate_0_keeps_the_cache() {
    let on = job_of(&buffered("direct=0").unwrap());
    assert!(on.target.fill.invalidate, "fio drops the cache by default");
    let on = job_of(&buffered("direct=0\ninvalidate=1").unwrap());
    assert!(on.target.fill.invalidate);
    let off = job_of(&buffered("direct=0\ninvalidate=0").unwrap());
    assert!(
        !off.target.fill.invalidate,
        "invalidate=0 keeps cached pages"
    );
    let e = buffered("invalidate=maybe").unwrap_err().to_string();
    assert!(
        e.contains("invalidate=maybe") && e.contains("0 or 1"),
        "{e}"
    );
}

#[test]
fn fio_buffered_libaio_runs_one_request_in_flight_per_job() {
    let imp = buffered("ioengine=libaio\niodepth=16\nnumjobs=2").unwrap();
    let j = job_of(&imp);
    assert_eq!(
        j.runs[0].iodepth, 1,
        "buffered libaio completes in io_submit"
    );
    assert_eq!(j.runs[0].threads, 2);
    assert!(
        said(&imp)
            .iter()
            .any(|n| n.contains("iodepth=16") && n.contains("one request at a time")),
        "the change is said out loud"
    );
    // With O_DIRECT, libaio really keeps the queue full: the depth stays.
    let direct = job_of(&buffered("ioengine=libaio\niodepth=16\ndirect=1").unwrap());
    assert_eq!(direct.runs[0].iodepth, 16);
}

#[test]
fn fio_options_that_keep_the_workload_are_accepted_with_a_note() {
    let imp =
        buffered("thread=1\nio_submit_mode=offload\nrate_iops=500\nfadvise_hint=random").unwrap();
    let j = job_of(&imp);
    assert_eq!(j.runs[0].rate_iops, Some(500.0), "the rate still applies");
    let notes = said(&imp);
    assert!(
        notes.iter().any(|n| n.contains("io_submit_mode=offload")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("fadvise_hint=random")),
        "{notes:?}"
    );
}

#[test]
fn fio_options_volbench_cannot_keep_are_refused_with_the_reason() {
    for (opt, why) in [
        ("number_ios=1000", "count of I/Os"),
        ("blockalign=512", "aligned"),
        ("fill_device=1", "full"),
        ("exit_what=all", "stop"),
        ("filename_format=f.x", "names its files"),
        ("latency_target=10ms", "latency target"),
        ("ss=iops:0.2%", "steady-state"),
        ("rw=read:-8k", "skips"),
    ] {
        let e = buffered(opt).unwrap_err().to_string();
        assert!(
            e.contains(opt.split('=').next().unwrap()) && e.contains(why),
            "{opt}: {e}"
        );
    }
}
