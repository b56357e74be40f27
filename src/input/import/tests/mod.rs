//! Imports of fio job files in the style of fio's examples, the seed
//! paper's generated vdbench files and the papers' diskspd lines: each
//! becomes the runs the source tool would do, and anything volbench cannot
//! express is refused by name and place.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::input::suite::write::{count_of, text_of};
use crate::input::suite::{self, P};
use crate::spec::{Arrivals, JobSpec, Pattern};
use crate::units::parse_size;

fn files(map: BTreeMap<PathBuf, String>) -> impl Fn(&Path) -> Result<String> {
    move |p: &Path| {
        map.get(p)
            .cloned()
            .ok_or_else(|| VbError::input(format!("no file {}", p.display())))
    }
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn fio_with(
    text: &str,
    extra: &[(&str, &str)],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Imported> {
    let mut m = BTreeMap::new();
    m.insert(PathBuf::from("/jobs/job.fio"), text.to_string());
    for (p, t) in extra {
        m.insert(PathBuf::from(p), t.to_string());
    }
    let read = files(m);
    let src = fio::Sources {
        env,
        read: &read,
        cwd: PathBuf::from("/work/here"),
    };
    fio::import_file(Path::new("/jobs/job.fio"), &PathMap::default(), &src)
}

fn fio_ok(text: &str) -> Imported {
    fio_with(text, &[], &no_env).unwrap()
}

fn fio_err(text: &str) -> String {
    fio_with(text, &[], &no_env).unwrap_err().to_string()
}

/// Run `i` of the imported suite.
fn run(imp: &Imported, i: usize) -> &RunEntry {
    imp.suite.runs[i].get_ref()
}

/// A key's value as a size in bytes.
fn bytes(p: &P) -> Option<u64> {
    text_of(p).map(|t| parse_size(&t).unwrap())
}

/// A key's value as a number.
fn number(p: &P) -> Option<f64> {
    text_of(p).map(|t| t.parse().unwrap())
}

/// The suite text parses back to the value the import built, and expands
/// like any suite file.
fn job_of(imp: &Imported) -> JobSpec {
    let text = render::suite_toml(imp, "s.toml", "h.txt").unwrap();
    let s = suite::parse("s.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(s, imp.suite, "the suite read back differs:\n{text}");
    suite::to_job(
        "s.toml",
        &text,
        &s,
        &suite::Overrides::new(imp.target.clone().into()),
    )
    .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn fio_sequential_read_maps_every_value() {
    let imp = fio_ok(
        "; sequential read\n[global]\nioengine=libaio\ndirect=1\nbs=128k\nsize=1g\ndirectory=/mnt/t\n\
         time_based\nruntime=30\nramp_time=5\n\n[seq-read]\nrw=read\niodepth=16\n",
    );
    let j = job_of(&imp);
    assert_eq!(
        j.runs.len(),
        1,
        "no discarded warm-up run of volbench's own"
    );
    let r = &j.runs[0];
    assert_eq!(r.name, "seq-read");
    assert_eq!(r.rw, Pattern::Read);
    assert_eq!(r.bs[0].bytes, 128 << 10);
    assert_eq!((r.threads, r.iodepth), (1, 16));
    assert_eq!((r.duration_s, r.warmup_s), (30.0, 5.0));
    assert!(j.target.direct);
    assert_eq!(
        j.engine,
        crate::spec::EngineChoice::Only(crate::spec::EngineKind::IoUring)
    );
    assert_eq!(j.target.size, 1 << 30);
    assert_eq!(j.target.path, PathBuf::from("/mnt/t"));
    // libaio is close, not the same: the user is told.
    assert!(
        imp.printed().iter().any(|n| n.contains("ioengine=libaio")),
        "{:?}",
        imp.printed()
    );
    // Every source option has its comment in the suite.
    let text = render::suite_toml(&imp, "s.toml", "h.txt").unwrap();
    for opt in [
        "rw=read",
        "iodepth=16",
        "bs=128k",
        "runtime=30",
        "ramp_time=5",
        "direct=1",
    ] {
        assert!(text.contains(opt), "{opt} not commented:\n{text}");
    }
}

#[test]
fn fio_random_mixed_takes_rwmixread() {
    let imp = fio_ok(
        "[mix]\nrw=randrw\nrwmixread=70\nbs=8k\nsize=4g\nfilename=/mnt/x/data\nioengine=io_uring\n\
         iodepth=32\ndirect=1\ntime_based=1\nruntime=1m\n",
    );
    let r = &job_of(&imp).runs[0];
    assert_eq!((r.rw, r.read_pct), (Pattern::Randrw, 70));
    assert_eq!(r.duration_s, 60.0);
    // A named file: volbench's own file in its directory, said so.
    assert_eq!(imp.target, "/mnt/x");
    assert!(
        imp.printed()
            .iter()
            .any(|n| n.contains("filename=/mnt/x/data"))
    );
    let rel = fio_ok("[r]\nrw=read\nsize=1g\ndirectory=data\ntime_based\nruntime=5\n");
    assert_eq!(rel.target, "/work/here/data", "relative to fio's directory");
    let w = fio_ok("[w]\nrw=randrw\nrwmixwrite=30\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n");
    assert_eq!(job_of(&w).runs[0].read_pct, 70);
}

#[test]
fn fio_stonewalled_groups_become_runs_in_order() {
    let imp = fio_ok(
        "[global]\ndirectory=/mnt/t\nsize=256m\ntime_based\nruntime=10\nioengine=psync\n\
         [write]\nrw=write\nbs=1m\n[read]\nstonewall\nrw=read\nbs=1m\n[rand]\nwait_for=read\nrw=randread\nbs=4k\n",
    );
    let j = job_of(&imp);
    let names: Vec<&str> = j.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["write", "read", "rand"]);
    assert_eq!(j.runs[2].rw, Pattern::Randread);
}

#[test]
fn fio_jobs_of_one_group_join_and_different_ones_are_refused() {
    // Two identical jobs without stonewall run at once: one run, their threads added.
    let imp = fio_ok(
        "[global]\nrw=randread\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n[a]\n[b]\nnumjobs=3\n",
    );
    let j = job_of(&imp);
    assert_eq!(j.runs.len(), 1);
    assert_eq!(j.runs[0].threads, 4);
    // Each job has its own file in fio: 4 files of 1 GiB.
    assert_eq!(j.runs[0].files, Some(4));
    assert_eq!(j.target.size, 4 << 30);
    let e = fio_err(
        "[global]\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n[reader]\nrw=randread\n[writer]\nrw=randwrite\n",
    );
    assert!(
        e.contains("/jobs/job.fio line 8") && e.contains("[writer]") && e.contains("stonewall"),
        "{e}"
    );
}

#[test]
fn fio_numjobs_each_own_file_unless_the_filename_is_shared() {
    let own = fio_ok("[j]\nrw=randread\nnumjobs=8\nsize=2g\ndirectory=/d\ntime_based\nruntime=5\n");
    let j = job_of(&own);
    assert_eq!((j.runs[0].threads, j.runs[0].files), (8, Some(8)));
    assert_eq!(j.target.size, 16 << 30);
    let shared =
        fio_ok("[j]\nrw=randread\nnumjobs=8\nsize=2g\nfilename=/d/f\ntime_based\nruntime=5\n");
    let j = job_of(&shared);
    assert_eq!((j.runs[0].threads, j.runs[0].files), (8, Some(1)));
    assert_eq!(j.target.size, 2 << 30);
}

#[test]
fn fio_bssplit_becomes_a_weighted_mix() {
    let imp = fio_ok(
        "[j]\nrw=randread\nbssplit=4k/10:64k/50:32k/\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n",
    );
    let bs = &job_of(&imp).runs[0].bs;
    let w: Vec<(u64, u32)> = bs.iter().map(|b| (b.bytes, b.weight)).collect();
    assert_eq!(w, [(4096, 1000), (65536, 5000), (32768, 4000)]);
    let e = fio_err("[j]\nbssplit=4k/10:64k/50\nsize=1g\ndirectory=/d\n");
    assert!(e.contains("line 2") && e.contains("60%"), "{e}");
}

#[test]
fn fio_rates_are_iops_across_all_jobs() {
    let imp = fio_ok(
        "[j]\nrw=randread\nbs=4k\nrate_iops=500\nnumjobs=4\nrate_process=poisson\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n",
    );
    let r = &job_of(&imp).runs[0];
    assert_eq!(r.rate_iops, Some(2000.0));
    assert_eq!(r.arrivals, Arrivals::Poisson);
    // A bandwidth limit with one block size is an exact IOPS limit.
    let bw =
        fio_ok("[j]\nrw=read\nbs=64k\nrate=10m\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n");
    assert_eq!(job_of(&bw).runs[0].rate_iops, Some(160.0));
    // fio holds each direction of a mixed job to the rate: 100 reads and
    // 100 writes a second, 200 in all at 50/50.
    let mixed =
        fio_ok("[j]\nrw=randrw\nrate_iops=100\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n");
    let r = &job_of(&mixed).runs[0];
    assert_eq!((r.read_pct, r.rate_iops), (50, Some(200.0)));
}

#[test]
fn fio_without_time_based_stops_after_its_size() {
    let imp = fio_ok("[j]\nrw=write\nbs=1m\nsize=512m\nnumjobs=2\ndirectory=/d\n");
    let r = &job_of(&imp).runs[0];
    assert_eq!(r.io_limit, Some(1 << 30));
    assert_eq!(r.warmup_s, 0.0);
}

#[test]
fn fio_include_and_environment_variables() {
    let env = |n: &str| (n == "SIZE").then(|| "2g".to_string());
    let imp = fio_with(
        "include common.fio\n[j]\nsize=${SIZE}\nrw=randread\n",
        &[(
            "/jobs/common.fio",
            "[global]\ndirectory=/d\ntime_based\nruntime=5\n",
        )],
        &env,
    )
    .unwrap();
    let j = job_of(&imp);
    assert_eq!(j.target.size, 2 << 30);
    assert_eq!(j.target.path, PathBuf::from("/d"));
    let e = fio_err("[j]\nsize=${NOPE}\n");
    assert!(e.contains("line 2") && e.contains("NOPE"), "{e}");
}

#[test]
fn fio_unsupported_options_are_refused_by_name_file_and_line() {
    for (opt, why) in [
        ("thinktime_spin=100", "think time"),
        ("random_distribution=normal:5", "distribution"),
        ("fsync_on_close=1", "fsync on close"),
        ("sync=maybe", "must be"),
        ("startdelay=1-5", "delay"),
        ("verify=pattern", "not supported yet"),
        ("bsrange=4k-64k", "range"),
    ] {
        let e = fio_err(&format!(
            "[global]\nsize=1g\n[j]\nrw=randread\ndirectory=/d\n{opt}\n"
        ));
        assert!(
            e.starts_with("/jobs/job.fio line 6: ") && e.contains(opt) && e.contains(why),
            "{opt}: {e}"
        );
    }
    // An option fio's table does not know: its name, never its value (the
    // line may be from a file that is no job file).
    let e = fio_err("[global]\nsize=1g\n[j]\nrw=randread\ndirectory=/d\npassword=hunter2\n");
    assert!(
        e.starts_with("/jobs/job.fio line 6: password: not supported yet (no volbench equivalent of this fio option)"),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
}

#[test]
fn fio_sync_engines_have_one_io_in_flight() {
    let imp = fio_ok(
        "[j]\nioengine=sync\niodepth=8\nrw=randread\nsize=1g\ndirectory=/d\ntime_based\nruntime=5\n",
    );
    assert_eq!(job_of(&imp).runs[0].iodepth, 1);
    assert!(imp.printed().iter().any(|n| n.contains("iodepth=8")));
}

/// The seed paper's generator loop, written out as it writes the files.
fn paper_vdbench() -> BTreeMap<PathBuf, String> {
    let mut f = BTreeMap::new();
    let mut luns = String::from("sd=default,size=693g\n");
    for vm in 1..=24 {
        for vol in 1..=6 {
            luns.push_str(&format!(
                "sd=sd-{vm}-{vol},host=vm{vm},lun=/mnt/vdb{vol}/file-{vm}-{vol},openflags=o_direct\n"
            ));
        }
    }
    f.insert(PathBuf::from("/p/vnet1-luns-nfs"), luns);
    let mut hosts = String::from("hd=default,jvms=1,shell=ssh\n");
    for vm in 1..=24 {
        hosts.push_str(&format!("hd=vm{vm},system=vdbench-vnet1-{vm},user=root\n"));
    }
    f.insert(PathBuf::from("/p/vnet1-hosts-nfs"), hosts);
    let wd = [
        (
            "FillWrite",
            "wd=FillWrite,sd=sd*,rdpct=0,seekpct=eof,xfersize=64k",
        ),
        (
            "SeqWrite",
            "wd=SeqWrite,sd=sd*,rdpct=0,seekpct=0,xfersize=64k",
        ),
        (
            "SeqRead",
            "wd=SeqRead,sd=sd*,rdpct=100,seekpct=0,xfersize=64k",
        ),
        (
            "RndRead",
            "wd=RndRead,sd=sd*,rdpct=100,seekpct=100,xfersize=8k",
        ),
        (
            "RndWrite",
            "wd=RndWrite,sd=sd*,rdpct=0,seekpct=100,xfersize=8k",
        ),
        ("SeqMix", "wd=SeqMix,sd=sd*,rdpct=50,seekpct=0,xfersize=64k"),
        (
            "RndMix",
            "wd=RndMix,sd=sd*,rdpct=50,seekpct=100,xfersize=8k",
        ),
    ];
    let rds: [(&str, &[&str]); 7] = [
        ("FillWrite", &[]),
        (
            "RndRead",
            &["rd=RndRead,wd=RndRead,sd=(\"sd*\"),threads=25"],
        ),
        (
            "RndWrite",
            &["rd=RndWrite,wd=RndWrite,sd=(\"sd*\"),threads=20"],
        ),
        (
            "SeqRead",
            &["rd=SeqRead-4,wd=SeqRead,sd=(\"sd*\"),threads=20"],
        ),
        (
            "SeqWrite",
            &[
                "rd=SeqWrite-26,wd=SeqWrite,sd=(\"sd*\"),threads=26",
                "rd=SeqWrite-32,wd=SeqWrite,sd=(\"sd*\"),threads=32",
                "rd=SeqWrite-40,wd=SeqWrite,sd=(\"sd*\"),threads=40",
            ],
        ),
        ("RndMix", &["rd=RndMix,wd=RndMix,sd=(\"sd*\"),threads=25"]),
        (
            "SeqMix",
            &[
                "rd=SeqMix-6,wd=SeqMix,sd=(\"sd*\"),threads=6",
                "rd=SeqMix-7,wd=SeqMix,sd=(\"sd*\"),threads=7",
            ],
        ),
    ];
    for (pattern, w) in wd {
        let mut t = "include=vnet1-hosts-nfs\ninclude=vnet1-luns-nfs\n".to_string();
        t.push_str(w);
        t.push('\n');
        if pattern == "FillWrite" {
            t.push_str("* Run Defaults\n");
            t.push_str("rd=Initialize-LUNs-Full,wd=FillWrite,sd=(\"sd*\"),iorate=max,interval=1,forthreads=1,elapsed=259200\n");
        } else {
            t.push_str("* Run Defaults\n");
            t.push_str("rd=default,warmup=60,elapsed=600,iorate=max\n* Run Definitions\n");
            for (p, lines) in rds {
                if p == pattern {
                    for l in lines {
                        t.push_str(l);
                        t.push('\n');
                    }
                }
            }
        }
        f.insert(PathBuf::from(format!("/p/vnet1-{pattern}-workload")), t);
    }
    f
}

#[test]
fn vdbench_paper_files_import_into_24_hosts_with_6_targets_each() {
    let read = files(paper_vdbench());
    let src = vdbench::Sources { read: &read };
    let expect: [(&str, &[u64]); 6] = [
        ("RndRead", &[25]),
        ("RndWrite", &[20]),
        ("SeqRead", &[20]),
        ("SeqWrite", &[26, 32, 40]),
        ("RndMix", &[25]),
        ("SeqMix", &[6, 7]),
    ];
    for (p, threads) in expect {
        let path = PathBuf::from(format!("/p/vnet1-{p}-workload"));
        let imp = vdbench::import_files(&[path], &PathMap::default(), &src).unwrap();
        let hosts = &imp.hosts;
        assert_eq!(hosts.len(), 24, "{p}");
        let targets = |h: &crate::input::hosts::HostSpec| {
            let t = h.target.as_deref().unwrap();
            t.trim_matches(['{', '}'])
                .split(',')
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert!(hosts.iter().all(|h| targets(h).len() == 6));
        assert_eq!(hosts[6].name, "root@vdbench-vnet1-7");
        assert_eq!(targets(&hosts[6])[0], "/mnt/vdb1/file-7-1");
        assert_eq!(targets(&hosts[6])[5], "/mnt/vdb6/file-7-6");
        assert_eq!(bytes(&imp.suite.defaults.size), Some(693 << 30));
        assert_eq!(text_of(&imp.suite.defaults.direct).as_deref(), Some("true"));
        let j = job_of(&imp);
        let t: Vec<u64> = j.runs.iter().map(|r| u64::from(r.threads)).collect();
        assert_eq!(t, threads, "{p}");
        assert!(
            j.runs
                .iter()
                .all(|r| r.warmup_s == 60.0 && r.duration_s == 600.0 && r.rate_iops.is_none())
        );
        assert!(j.runs.iter().all(|r| r.iodepth == 1));
    }
    let fill = vdbench::import_files(
        &[PathBuf::from("/p/vnet1-FillWrite-workload")],
        &PathMap::default(),
        &src,
    )
    .unwrap();
    let j = job_of(&fill);
    let r = &j.runs[0];
    assert_eq!((r.rw, r.bs[0].bytes, r.threads), (Pattern::Write, 65536, 1));
    assert_eq!(
        r.io_limit,
        Some(693 << 30),
        "seekpct=eof: one pass to the end"
    );
    assert_eq!(r.duration_s, 259200.0);
    // Its xfersize is the fill's transfer size; alone, it stays a run.
    assert_eq!(j.target.fill.bs, 64 << 10);
    assert_eq!(bytes(&fill.suite.defaults.fill_bs), Some(64 << 10));
    // Every file at once, as vdbench reads several -f files: one suite.
    let paths: Vec<PathBuf> = ["FillWrite", "RndRead", "SeqWrite"]
        .iter()
        .map(|p| PathBuf::from(format!("/p/vnet1-{p}-workload")))
        .collect();
    let imp = vdbench::import_files(&paths, &PathMap::default(), &src).unwrap();
    let j = job_of(&imp);
    let names: Vec<String> = j.runs.iter().map(|r| r.name.clone()).collect();
    // FillWrite is volbench's fill, at its 64k: no run of its own.
    assert_eq!(
        names,
        ["RndRead", "SeqWrite-26", "SeqWrite-32", "SeqWrite-40"]
    );
    assert_eq!(j.target.fill.bs, 64 << 10);
    let text = render::suite_toml(&imp, "s.toml", "h").unwrap();
    assert!(text.contains("fill_bs = \"64k\""), "{text}");
    assert!(
        text.contains("rd=Initialize-LUNs-Full -> no run of its own"),
        "{text}"
    );
    // The hosts file is one the hosts parser takes, with six targets each.
    let h = render::hosts_file(&imp).unwrap();
    let hosts = crate::input::hosts::parse_file(&h, "h").unwrap();
    assert_eq!(hosts.len(), 24);
    let a = crate::input::hosts::assign(&hosts, "/unused/{host}", false).unwrap();
    assert!(a.iter().all(|x| x.targets.len() == 6));
}

#[test]
fn vdbench_refuses_by_name_and_line() {
    // A workload file whose runs are fine, but a host reached another way.
    let mut f = paper_vdbench();
    f.insert(
        PathBuf::from("/p/vnet1-hosts-nfs"),
        "hd=default,shell=rsh\nhd=vm1,system=a\n".into(),
    );
    let read = files(f);
    let e = vdbench::import_files(
        &[PathBuf::from("/p/vnet1-RndRead-workload")],
        &PathMap::default(),
        &vdbench::Sources { read: &read },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("/p/vnet1-hosts-nfs line 1: shell=rsh") && e.contains("ssh"),
        "{e}"
    );
    let read = files(BTreeMap::new());
    let src = vdbench::Sources { read: &read };
    let e = vdbench::import_text(
        "p.txt",
        "sd=sd1,lun=/dev/sdb\nwd=w,sd=sd1,rdpct=70,seekpct=often,xfersize=4k\nrd=r,wd=w,iorate=max,elapsed=10\n",
        &PathMap::default(),
        &src,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("p.txt line 2: seekpct=often") && e.contains("0..100"),
        "{e}"
    );
    let e = vdbench::import_text(
        "p.txt",
        "sd=sd1,lun=/dev/sdb,openflags=o_rsync\nwd=w,sd=sd1\nrd=r,wd=w\n",
        &PathMap::default(),
        &src,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("p.txt line 1: openflags=o_rsync"), "{e}");
}

#[test]
fn vdbench_for_loops_and_curves() {
    let read = files(BTreeMap::new());
    let src = vdbench::Sources { read: &read };
    let imp = vdbench::import_text(
        "p.txt",
        "sd=sd1,lun=/dev/sdb,size=10g\nwd=w,sd=sd1,xfersize=(4k,50,64k,50),seekpct=random\n\
         rd=r,wd=w,forthreads=(1-8,d),forrdpct=(100,0),elapsed=20,warmup=5\n\
         rd=c,wd=w,iorate=curve,curve=(50,100),threads=4,elapsed=20\n",
        &PathMap::default(),
        &src,
    )
    .unwrap();
    let j = job_of(&imp);
    let names: Vec<&str> = j.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "r-1t-100r",
            "r-1t-0r",
            "r-2t-100r",
            "r-2t-0r",
            "r-4t-100r",
            "r-4t-0r",
            "r-8t-100r",
            "r-8t-0r",
            "c-max",
            "c-50pct",
            "c-100pct"
        ]
    );
    assert_eq!(j.runs[1].rw, Pattern::Randwrite);
    assert_eq!(j.runs[0].bs.len(), 2);
    // No warmup= given: vdbench leaves out the first interval.
    assert_eq!(j.runs[8].warmup_s, 1.0);
    assert_eq!(j.target.path, PathBuf::from("/dev/sdb"));
}

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

mod diskspd_lines;
mod guide;
mod lists;
mod rendered;
mod tables;
mod unc_map;

mod corpus_diskspd;

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z_]{1,12}=[a-z0-9k:/%,()\\-\\.*\"]{0,16}",
            "\\[[a-z]{0,6}\\]",
            "(sd|wd|rd|hd)=[a-z*]{1,4}(,[a-z]{1,8}=[a-z0-9()\",*]{0,10}){0,4}",
            ".{0,20}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn no_importer_panics_on_any_text(lines in proptest::collection::vec(line(), 0..12)) {
            let text = lines.join("\n");
            let _ = fio_with(&text, &[], &no_env).map(|i| render::suite_toml(&i, "s", "h").map(|t| suite::parse("s", &t)));
            let read = files(BTreeMap::new());
            let _ = vdbench::import_text("p", &text, &PathMap::default(), &vdbench::Sources { read: &read })
                .map(|i| render::suite_toml(&i, "s", "h").map(|t| suite::parse("s", &t)));
            let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
            let _ = diskspd::import_args(&words, &PathMap::default());
        }
    }
}

mod shape;

mod data;

mod corpus_fio;

mod fio_meta;

mod fio_nfs;

mod fio_fidelity;

mod fio_rates;
mod fio_sizes;

mod vdbench_fs;

mod corpus_vdbench;

mod vdbench_skew;

#[test]
fn an_import_error_names_the_first_refusals_cut_short_and_counts_the_rest() {
    // A file of a thousand bad lines made one error line of tens of KB.
    let mut n = Notes::default();
    for i in 0..1000 {
        n.refuse(
            &format!("job.fio line {i}"),
            &"e=1g".repeat(100),
            "not supported yet",
        );
    }
    let e = n.check().unwrap_err().message;
    assert!(e.starts_with("job.fio line 0: e=1ge=1g"), "{e}");
    assert!(e.contains("job.fio line 7: "), "{e}");
    assert!(!e.contains("job.fio line 8: "), "{e}");
    assert!(e.ends_with("; and 992 more"), "{e}");
    assert!(e.len() < 8192 && !e.contains('\n'), "{} bytes", e.len());
    let mut one = Notes::default();
    one.refuse("job.fio line 1", "rw=trim", "not supported yet");
    assert_eq!(
        one.check().unwrap_err().message,
        "job.fio line 1: rw=trim: not supported yet"
    );
}

#[test]
fn a_path_under_dev_shm_is_a_file_not_a_device() {
    use super::names_device;
    assert!(
        names_device("/dev/sdz9"),
        "a disk named by a job from elsewhere"
    );
    assert!(names_device("/dev/null"));
    assert!(!names_device("/dev/shm/volbench-job/file"));
    assert!(!names_device("/mnt/data/file"));
}
