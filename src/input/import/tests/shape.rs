//! The options that once were refused and now map onto volbench's run
//! shape: skew, syncs, think time, O_SYNC, partial seeks, cool-down, and a
//! bandwidth cap with a block-size mix; each lands in the suite as the key
//! that runs it.

use super::*;
use crate::spec::WriteSync;
use crate::spec::shape::{Distribution, HotZone, SyncCall};

fn fio_run(opts: &str) -> JobSpec {
    job_of(&fio_ok(&format!(
        "[global]\nsize=1g\ndirectory=/d\ntime_based\nruntime=10\n[j]\nrw=randwrite\nbs=4k\n{opts}\n"
    )))
}

#[test]
fn fio_skew_syncs_and_think_time_become_run_keys() {
    let j = fio_run(
        "random_distribution=zoned:60/10:30/20:8/30:2/40\nfsync=32\nend_fsync=1\nthinktime=250",
    );
    let s = &j.runs[0].shape;
    assert_eq!(
        s.distribution,
        Distribution::Hot {
            zones: vec![
                HotZone {
                    io_pct: 60.0,
                    space_pct: 10.0
                },
                HotZone {
                    io_pct: 30.0,
                    space_pct: 20.0
                },
                HotZone {
                    io_pct: 8.0,
                    space_pct: 30.0
                },
                HotZone {
                    io_pct: 2.0,
                    space_pct: 40.0
                },
            ]
        }
    );
    assert_eq!(
        (s.fsync_every, s.sync_call, s.end_fsync),
        (Some(32), SyncCall::Fsync, true)
    );
    // fio's bare thinktime numbers are microseconds.
    assert_eq!(s.think_time_s, Some(250e-6));
    let j = fio_run("random_distribution=zipf:1.2\nfdatasync=8");
    let s = &j.runs[0].shape;
    assert_eq!(s.distribution, Distribution::Zipf { theta: 1.2 });
    assert_eq!((s.fsync_every, s.sync_call), (Some(8), SyncCall::Fdatasync));
}

#[test]
fn fio_sync_maps_to_write_sync_and_a_mixed_size_bandwidth_to_bytes() {
    assert_eq!(fio_run("sync=1").target.write_sync, WriteSync::Sync);
    assert_eq!(fio_run("sync=dsync").target.write_sync, WriteSync::Dsync);
    let j = fio_run("bssplit=4k/50:64k/50\nrate=10m\nnumjobs=2");
    assert_eq!(j.runs[0].shape.rate_bytes, Some(20.0 * 1048576.0));
    assert_eq!(j.runs[0].rate_iops, None);
}

#[test]
fn vdbench_partial_seeks_and_o_sync_map() {
    let read = files(BTreeMap::new());
    let src = vdbench::Sources { read: &read };
    let imp = vdbench::import_text(
        "p.txt",
        "sd=sd1,lun=/dev/sdb,openflags=(o_direct,o_dsync)\nwd=w,sd=sd1,rdpct=70,seekpct=30,xfersize=4k\nrd=r,wd=w,iorate=max,elapsed=10\n",
        &PathMap::default(),
        &src,
    )
    .unwrap();
    let j = job_of(&imp);
    assert_eq!(j.runs[0].rw, crate::spec::Pattern::Randrw);
    assert_eq!(j.runs[0].shape.seek_pct, Some(30));
    assert!(j.target.direct);
    assert_eq!(j.target.write_sync, WriteSync::Dsync);
}

#[test]
fn diskspd_partial_random_maps_to_seek_pct() {
    let imp = diskspd::import_args(
        &args("-c1G -d10 -rs40 -b8k /mnt/x.dat"),
        &PathMap::default(),
    )
    .unwrap();
    let j = job_of(&imp);
    assert!(j.runs[0].rw.is_random());
    assert_eq!(j.runs[0].shape.seek_pct, Some(40));
}
