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
    imp.run_said[0]
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
        ("blockalign=512", "aligned"),
        ("fill_device=1", "full"),
        ("fill_fs=1", "full"),
        ("exit_what=all", "later group"),
        ("filename_format=f.$filenum", "shared between jobs"),
        ("latency_run=1", "adjusting the depth"),
        ("ss=bw_slope:0.1", "slope"),
        ("rw=read:-8k", "backwards"),
        ("rw=read:8k", "holes"),
        ("rw=randread:0", "1..100"),
        ("rw_sequencer=identical", "same offset"),
        ("startdelay=1-5", "start delay per thread"),
        ("verify_only", "volbench verify"),
        ("verify_pattern=0xff", "fixed buffer pattern"),
    ] {
        let e = buffered(opt).unwrap_err().to_string();
        assert!(
            e.contains(opt.split('=').next().unwrap()) && e.contains(why),
            "{opt}: {e}"
        );
    }
}

fn rendered(imp: &Imported) -> String {
    render::suite_toml(imp, "s.toml", "h.txt").unwrap()
}

#[test]
fn fio_random_map_is_kept_as_volbench_random_map() {
    // fio's default: every block once per pass (its random map).
    let j = job_of(&buffered("").unwrap());
    assert!(j.runs[0].shape.random_map, "fio's default random map");
    // norandommap: independent offsets, as volbench's own default.
    let j = job_of(&buffered("norandommap").unwrap());
    assert!(!j.runs[0].shape.random_map);
    // blockalign equal to the block size is exact and, as in fio, turns
    // the random map off.
    let j = job_of(&buffered("blockalign=4k").unwrap());
    assert!(!j.runs[0].shape.random_map);
    // A skew is drawn independently, with a note saying so.
    let imp = buffered("random_distribution=zipf:1.2").unwrap();
    assert!(!job_of(&imp).runs[0].shape.random_map);
    assert!(
        said(&imp).iter().any(|n| n.contains("random map")),
        "{:?}",
        said(&imp)
    );
    // Sequential jobs have no random map.
    let imp = fio_ok("[j]\nrw=read\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n");
    assert!(!job_of(&imp).runs[0].shape.random_map);
}

#[test]
fn fio_rw_modifier_on_a_random_pattern_seeks_every_nth_io() {
    let imp = buffered("rw=randread:8").unwrap();
    let j = job_of(&imp);
    assert_eq!(j.runs[0].shape.seek_pct, Some(13), "1 in 8, rounded");
    assert!(
        !j.runs[0].shape.random_map,
        "seeks and a random map exclude each other"
    );
    // A modifier of 1 is every I/O: plain random.
    let j = job_of(&buffered("rw=randread:1").unwrap());
    assert_eq!(j.runs[0].shape.seek_pct, None);
}

#[test]
fn fio_number_ios_stops_each_job_after_its_count() {
    let imp =
        fio_ok("[j]\nrw=randread\nbs=8k\nsize=1g\ndirectory=/d\nnumjobs=2\nnumber_ios=1000\n");
    let j = job_of(&imp);
    // 1000 I/Os of 8 KiB per job, two jobs: before the 1 GiB each.
    assert_eq!(j.runs[0].io_limit, Some(2 * 1000 * 8192));
    // The size still wins when it comes first.
    let imp = fio_ok("[j]\nrw=randread\nbs=4k\nsize=40k\ndirectory=/d\nnumber_ios=1000\n");
    assert_eq!(job_of(&imp).runs[0].io_limit, Some(40 * 1024));
    // A count over several block sizes has no byte count.
    let e = buffered("bssplit=4k/50:64k/50\nnumber_ios=10")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("number_ios=10") && e.contains("several block sizes"),
        "{e}"
    );
}

#[test]
fn fio_start_delay_exit_what_and_filename_format_are_noted() {
    let imp = buffered(
        "startdelay=5\nexitall\nexit_what=stonewall\nfilename_format=$jobname.$jobnum.$filenum",
    )
    .unwrap();
    let notes = said(&imp);
    for opt in [
        "startdelay=5",
        "exit_what=stonewall",
        "filename_format=$jobname.$jobnum.$filenum",
    ] {
        assert!(notes.iter().any(|n| n.starts_with(opt)), "{opt}: {notes:?}");
    }
    assert!(rendered(&imp).contains("random_map = true"));
}

#[test]
fn every_fio_option_row_is_named_once_and_in_the_import_guide() {
    use crate::input::import::fio::options::OPTIONS;
    let guide = include_str!("../../../../docs/guide/import.md");
    let fio = guide
        .split("## fio")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for row in OPTIONS {
        for name in std::iter::once(&row.name).chain(row.aliases) {
            assert!(seen.insert(*name), "{name} has two rows");
            assert!(
                fio.contains(&format!("`{name}")),
                "docs/guide/import.md's fio table does not name `{name}`"
            );
        }
    }
}

/// A sequential job on one shared file, with `extra` options.
fn shared(extra: &str) -> Result<Imported> {
    fio_with(
        &format!(
            "[global]\nfilename=/d/shared\nsize=64m\ntime_based\nruntime=5\n[s]\nbs=128k\n{extra}\n"
        ),
        &[],
        &no_env,
    )
}

#[test]
fn fio_jobs_on_one_file_each_make_their_own_pass_over_it() {
    let imp = shared("rw=read\nnumjobs=4").unwrap();
    let j = job_of(&imp);
    assert_eq!(
        j.runs[0].shape.streams,
        crate::spec::shape::Streams::Each { offset: 0, step: 0 }
    );
    assert_eq!(j.runs[0].threads, 4);
    assert_eq!(j.target.size, 64 << 20, "every job walks the same 64 MiB");
    assert!(said(&imp).iter().any(|n| n.contains("its own pass")));
    // offset and offset_increment place each clone's pass; the file
    // reaches as far as the last one's: 8M + 3 x 64M + 64M.
    let imp = shared("rw=rw\nnumjobs=4\noffset=8m\noffset_increment=64m").unwrap();
    let j = job_of(&imp);
    assert_eq!(
        j.runs[0].shape.streams,
        crate::spec::shape::Streams::Each {
            offset: 8 << 20,
            step: 64 << 20
        }
    );
    assert_eq!(j.target.size, (8 + 3 * 64 + 64) << 20);
    // One job from the start is one stream either way: nothing to say.
    let one = job_of(&shared("rw=read").unwrap());
    assert!(one.runs[0].shape.streams.is_split());
}

#[test]
fn fio_offsets_volbench_cannot_keep_are_refused_by_name() {
    for (extra, why) in [
        ("rw=randread\noffset=4m", "random offsets kept to a part"),
        ("rw=read\noffset=25%", "share of the file"),
        ("rw=read\noffset_increment=1x", "offset_increment=1x"),
    ] {
        let e = shared(extra).unwrap_err().to_string();
        assert!(e.contains(why), "{extra}: {e}");
    }
    let e = buffered("rw=read\noffset=4m").unwrap_err().to_string();
    assert!(e.contains("each job's own files"), "{e}");
    // Random clones roam the whole file in fio and in volbench alike.
    let r = job_of(&shared("rw=randread\nnumjobs=2\noffset=0").unwrap());
    assert!(r.runs[0].shape.streams.is_split());
    // Two job sections joined on one file with a step: fio counts each
    // section's clones from 0, volbench's threads over the run.
    let e = fio_err(
        "[global]\nfilename=/d/shared\nsize=64m\nrw=read\nbs=128k\noffset_increment=64m\n\
         time_based\nruntime=5\n[a]\nnumjobs=2\n[b]\nnumjobs=2\n",
    );
    assert!(e.contains("counts each job's clones from 0"), "{e}");
}
