//! The suite files the importers write, word for word: one input of each
//! shape (fio block I/O, groups and rates, a replay, file engines, a file
//! list; vdbench on many hosts, for-loops, a local lun list, a tree;
//! diskspd on one file and on a list), held against the files in
//! `rendered/`. A change to what an import writes shows as a change to one
//! of those files, reviewed like code. `VB_BLESS=1` rewrites them.

use super::*;

fn vdb(text: &str) -> Imported {
    let read = files(BTreeMap::new());
    vdbench::import_text(
        "p.parm",
        text,
        &PathMap::default(),
        &vdbench::Sources { read: &read },
    )
    .unwrap()
}

fn ds(line: &str, map: &[&str]) -> Imported {
    let map: Vec<String> = map.iter().map(|m| m.to_string()).collect();
    diskspd::import_args(&args(line), &PathMap::parse(&map).unwrap()).unwrap()
}

/// The rendered suite (and hosts file) of `imp`, checked to load.
fn rendered(imp: &Imported) -> String {
    let mut text = render::suite_toml(imp, "s.toml", "s.toml.hosts").unwrap();
    job_of(imp);
    if let Some(h) = render::hosts_file(imp) {
        text.push_str("# ---- s.toml.hosts ----\n");
        text.push_str(&h);
    }
    text
}

fn check(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/input/import/tests/rendered")
        .join(format!("{name}.toml"));
    if std::env::var_os("VB_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (VB_BLESS=1 writes it)", path.display()));
    assert!(
        want == text,
        "{name}: the import writes another suite than {}:\n{text}",
        path.display()
    );
}

#[test]
fn fio_block_jobs_render_as_before() {
    let seq = fio_ok(
        "; sequential read\n[global]\nioengine=libaio\ndirect=1\nbs=128k\nsize=1g\ndirectory=/mnt/t\n\
         time_based\nruntime=30\nramp_time=5\ngroup_reporting\n\n[seq-read]\nrw=read\niodepth=16\n",
    );
    check("fio-seq-read", &rendered(&seq));
    let groups = fio_ok(
        "[global]\ndirectory=/mnt/t\nsize=256m\ntime_based\nruntime=10\nioengine=io_uring\n\
         direct=1\nrandseed=7\nsync=dsync\nbuffer_compress_percentage=50\nverify=crc32c\n\
         [write]\nrw=write\nbs=1m\nfsync=8\nend_fsync=1\n\
         [read]\nstonewall\nrw=randrw\nrwmixread=70\nbssplit=4k/30:64k/70\nrate_iops=700,100\n\
         random_distribution=zoned:60/10:30/20:10/\nthinktime=50\n\
         [lat]\nwait_for=read\nrw=randread:4\nbs=8k\nlatency_target=2ms\nlatency_percentile=99\n\
         ss=iops:10%\nrate_process=poisson\n\
         [capped]\nstonewall\nrw=read\nbs=64k\nrate=10m\nnumber_ios=1000\ntime_based=0\n",
    );
    check("fio-groups", &rendered(&groups));
    let list = fio_ok(
        "[d]\nfilename=/dev/sdb:/dev/sdc\nrw=randread\nnumjobs=4\ntime_based\nruntime=10\n\
         iodepth=8\nioengine=io_uring\ndirect=1\n",
    );
    check("fio-device-list", &rendered(&list));
}

#[test]
fn fio_replay_and_file_engines_render_as_before() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("fio.iolog");
    std::fs::write(
        &log,
        "fio version 2 iolog\n/dev/sdz add\n/dev/sdz open\n/dev/sdz read 0 4096\n/dev/sdz close\n",
    )
    .unwrap();
    let job = format!(
        "[r]\nread_iolog={}\nreplay_no_stall=1\nreplay_skip=write\nreplay_redirect=/dev/sdy\n\
         iodepth=4\nrw=randread\nbs=64k\nruntime=60\n",
        log.display()
    );
    let imp = fio_ok(&job);
    let text = rendered(&imp).replace(&d.path().display().to_string(), "/LOGS");
    check("fio-replay", &text);
    let meta = fio_ok(
        "[global]\nioengine=filestat\ndirectory=/mnt/meta\nnrfiles=40\nfilesize=4k\n\
         stat_type=statx\nnumjobs=2\n\n[a]\n[b]\n[gone]\nstonewall\nioengine=filedelete\nnumjobs=4\n",
    );
    check("fio-file-engines", &rendered(&meta));
}

#[test]
fn vdbench_parameter_files_render_as_before() {
    let read = files(super::paper_vdbench());
    let src = vdbench::Sources { read: &read };
    let paths: Vec<PathBuf> = ["FillWrite", "RndRead", "SeqWrite"]
        .iter()
        .map(|p| PathBuf::from(format!("/p/vnet1-{p}-workload")))
        .collect();
    let paper = vdbench::import_files(&paths, &PathMap::default(), &src).unwrap();
    check("vdbench-paper-hosts", &rendered(&paper));
    let loops = vdb(
        "compratio=2\ndedupratio=3\nsd=sd1,lun=/dev/sdb,size=10g,openflags=o_direct\n\
         wd=w,sd=sd1,xfersize=(4k,50,64k,50),seekpct=random\n\
         rd=r,wd=w,forthreads=(1-4,d),forrdpct=(100,0),elapsed=20,warmup=5,distribution=exponential\n\
         rd=c,wd=w,iorate=curve,curve=(50,100),threads=4,elapsed=20\n",
    );
    check("vdbench-loops", &rendered(&loops));
    let luns = vdb(
        "sd=default,size=1g\nsd=sd1,lun=/mnt/a/f1\nsd=sd2,lun=/mnt/b/f2\n\
         wd=fill,sd=sd*,rdpct=0,seekpct=eof,xfersize=256k\n\
         wd=hot,sd=sd*,xfersize=8k,rdpct=70,seekpct=30,hotband=(10,20)\n\
         rd=init,wd=fill,iorate=max,elapsed=600,forthreads=1\n\
         rd=run,wd=hot,iorate=(100,max),elapsed=30,threads=2\n",
    );
    check("vdbench-local-luns", &rendered(&luns));
    let tree = vdb(
        "fsd=f,anchor=/mnt/fs,depth=2,width=3,files=10,sizes=(4k,50,64k,50),shared=yes\n\
         fwd=st,fsd=f,operation=getattr,threads=2,skew=70\n\
         fwd=rd,fsd=f,operation=read,xfersize=4k,threads=1\n\
         fwd=mk,fsd=f,operation=mkdir,threads=2\n\
         rd=look,fwd=(st,rd),fwdrate=(100,500),format=yes,elapsed=5,interval=1\n\
         rd=dirs,fwd=mk,elapsed=30\n",
    );
    check("vdbench-tree", &rendered(&tree));
}

#[test]
fn diskspd_lines_render_as_before() {
    let paper = ds(
        "-c50G -d300 -F16 -w20 -r -b4k -o4 -L X:\\DiskSpd.dat",
        &["X:\\=/mnt/disk/"],
    );
    check("diskspd-paper", &rendered(&paper));
    let smb = ds(
        "-W30 -C5 -r -rdpct90/10:10/90 -w100 -b4k -t8 -o8 -Sh -d60 -g100i -z42 -D500 -c2G /mnt/s/w0.dat /mnt/s/w1.dat",
        &[],
    );
    check("diskspd-list", &rendered(&smb));
}
