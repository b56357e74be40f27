//! The importer tables at work: diskspd's thread and queue semantics,
//! offset windows, relative paths; vdbench's rate lists, fsd size
//! distributions, mkdir/rmdir and fwdrate.

use super::*;
use crate::spec::meta::MetaOp;

fn ds(line: &str) -> Result<Imported> {
    diskspd::import_args(&args(line), &PathMap::default())
}

fn vdb(text: &str) -> Result<Imported> {
    let read = files(BTreeMap::new());
    vdbench::import_text(
        "t.parm",
        text,
        &PathMap::default(),
        &vdbench::Sources { read: &read },
    )
}

#[test]
fn diskspd_fixed_threads_keep_o_outstanding_on_each_target_they_reach() {
    // The wiki's example: -F2 -o2 over five files is 2 threads x 5 x 2 = 20.
    let imp = ds("-c1G -F2 -o2 /d/1 /d/2 /d/3 /d/4 /d/5").unwrap();
    let j = job_of(&imp);
    let r = &j.runs[0];
    assert_eq!((r.threads, r.iodepth, r.files), (2, 10, Some(5)));
    // -t binds each thread to one target: -o is its depth.
    let imp = ds("-c1G -t2 -o2 /d/1 /d/2").unwrap();
    assert_eq!(count_of(&run(&imp, 0).iodepth), Some(2));
    // -O is the per-thread total over all targets.
    let imp = ds("-c1G -F2 -O4 /d/1 /d/2 /d/3 /d/4 /d/5").unwrap();
    let r = run(&imp, 0);
    assert_eq!(
        (count_of(&r.threads), count_of(&r.iodepth)),
        (Some(2), Some(4))
    );
    // The paper's one-file line keeps its -o4.
    let imp = ds("-c50G -d300 -F16 -w20 -r -b4k -o4 /mnt/disk/DiskSpd.dat").unwrap();
    let r = run(&imp, 0);
    assert_eq!(
        (count_of(&r.threads), count_of(&r.iodepth)),
        (Some(16), Some(4))
    );
    let e = ds("-c1G -F2 -o4096 /d/1 /d/2").unwrap_err().to_string();
    assert!(e.contains("8192 outstanding"), "{e}");
}

#[test]
fn diskspd_base_and_max_offsets_bound_volbenchs_own_files_and_refuse_existing_ones() {
    let imp = ds("-c1G -B256M -f768M -b4k -r /d/f.dat").unwrap();
    assert_eq!(bytes(&imp.suite.defaults.size), Some(512 << 20));
    assert!(
        imp.printed()
            .iter()
            .any(|n| n.contains("-B256M") && n.contains("512MiB")),
        "{:?}",
        imp.printed()
    );
    // -B<base>:<length> (diskspd 2.2).
    let imp = ds("-c1G -B100M:200M /d/f.dat").unwrap();
    assert_eq!(bytes(&imp.suite.defaults.size), Some(200 << 20));
    // A max offset past the file's end is the whole file, exactly.
    let imp = ds("-c1G -f2G /d/f.dat").unwrap();
    assert_eq!(bytes(&imp.suite.defaults.size), Some(1 << 30));
    assert!(imp.printed().iter().all(|n| !n.contains("-f2G")));
    // The Windows access hints are noted, not read as sizes.
    let imp = ds("-c1G -fr /d/f.dat").unwrap();
    assert!(
        imp.printed()
            .iter()
            .any(|n| n.contains("-fr") && n.contains("hint"))
    );
    for (line, arg, why) in [
        (
            "-B1M /dev/sdq",
            "argument 1: -B1M",
            "existing file or device",
        ),
        ("-c1G -B1G /d/f.dat", "argument 2: -B1G", "less than one"),
        ("-c1G -Bx /d/f.dat", "argument 2: -Bx", ""),
    ] {
        let e = ds(line).unwrap_err().to_string();
        assert!(e.contains(arg) && e.contains(why), "{line}: {e}");
    }
}

#[test]
fn diskspd_relative_paths_are_taken_against_the_current_directory_and_said_so() {
    let cwd = std::env::current_dir().unwrap();
    let imp = ds("-c64M -d5 testfile.dat").unwrap();
    assert_eq!(imp.target, cwd.to_string_lossy());
    let said = imp.run_said[0].iter().any(|m| {
        m.option == "testfile.dat"
            && matches!(&m.how, How::Exact(h) if h.contains("current directory"))
    });
    assert!(said, "{:?}", imp.run_said[0]);
    // A Windows relative path still needs --map.
    let e = ds("-c64M data\\t.dat").unwrap_err().to_string();
    assert!(e.contains("--map"), "{e}");
}

#[test]
fn diskspd_create_on_a_device_never_plans_a_file_set_under_dev() {
    for line in [
        "-c100M /dev/sdq",
        "-c100M -F2 /dev/sdq /dev/sdr",
        "-c100M -t1 /dev/sdq /dev/sdr",
    ] {
        let e = ds(line).unwrap_err().to_string();
        assert!(
            e.contains("-c100M") && e.contains("kernel's files"),
            "{line}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn vdbench_iorate_lists_are_one_run_per_rate_in_order() {
    let imp = vdb(
        "sd=sd1,lun=/mnt/v/f,size=1g\nwd=wd1,sd=sd1,xfersize=4k,rdpct=70\n\
         rd=rd1,wd=wd1,iorate=(100,200,max),elapsed=10,threads=4\n\
         rd=rd2,wd=wd1,foriorate=(50,150),elapsed=10,threads=4\n",
    )
    .unwrap();
    let runs: Vec<(String, Option<f64>)> = imp
        .suite
        .runs
        .iter()
        .map(|r| (r.get_ref().name().to_string(), number(&r.get_ref().rate)))
        .collect();
    assert_eq!(
        runs,
        vec![
            ("rd1-100iops".into(), Some(100.0)),
            ("rd1-200iops".into(), Some(200.0)),
            ("rd1-max".into(), None),
            ("rd2-50iops".into(), Some(50.0)),
            ("rd2-150iops".into(), Some(150.0)),
        ]
    );
    let j = job_of(&imp);
    assert_eq!(j.runs.len(), 5);
    assert_eq!(j.runs[1].rate_iops, Some(200.0));
    let e = vdb("sd=sd1,lun=/mnt/v/f\nwd=w,sd=sd1\nrd=r,wd=w,iorate=(100,fast)\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 3: iorate=(100,fast)") && e.contains("'fast'"),
        "{e}"
    );
}

#[test]
fn vdbench_fsd_size_distributions_mkdir_rmdir_and_fwdrate_map() {
    let imp = vdb(
        "fsd=f,anchor=/mnt/fs,depth=2,width=3,files=10,sizes=(4k,50,64k,50)\n\
         fwd=mk,fsd=f,operation=mkdir,threads=2\n\
         fwd=st,fsd=f,operation=getattr,threads=2\n\
         fwd=rm,fsd=f,operation=rmdir,threads=2\n\
         rd=dirs,fwd=mk,elapsed=30\n\
         rd=look,fwd=st,fwdrate=(100,500),format=yes,elapsed=5,interval=1\n",
    )
    .unwrap();
    assert_eq!(
        text_of(&run(&imp, 0).file_size).as_deref(),
        Some("4k:50,64k:50")
    );
    let runs: Vec<(String, String, Option<f64>)> = imp
        .suite
        .runs
        .iter()
        .map(|r| {
            let r = r.get_ref();
            (
                r.name().to_string(),
                text_of(&r.ops).unwrap(),
                number(&r.rate),
            )
        })
        .collect();
    assert_eq!(
        runs,
        vec![
            ("dirs".into(), "mkdir".into(), None),
            ("look-format".into(), "create".into(), None),
            ("look-100ops".into(), "stat:100".into(), Some(100.0)),
            ("look-500ops".into(), "stat:100".into(), Some(500.0)),
        ]
    );
    let j = job_of(&imp);
    let m = j.runs[0].meta.as_ref().unwrap();
    assert_eq!((m.ops[0].op, m.whole_tree), (MetaOp::Mkdir, true));
    let sizes: Vec<(u64, u32)> = j.runs[2]
        .meta
        .as_ref()
        .unwrap()
        .file_size
        .iter()
        .map(|b| (b.bytes, b.weight))
        .collect();
    assert_eq!(sizes, vec![(4 << 10, 50), (64 << 10, 50)]);
    assert_eq!(j.runs[3].rate_iops, Some(500.0));
    // mkdir in a timed mix is what volbench cannot run: refused by name.
    let e = vdb("fsd=f,anchor=/mnt/fs,depth=1,width=2,files=2,size=4k\n\
         fwd=mk,fsd=f,operation=mkdir\nfwd=st,fsd=f,operation=getattr\n\
         rd=r,fwd=(mk,st)\n")
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("rd=r") && e.contains("mkdir beside other operations"),
        "{e}"
    );
}

#[test]
fn the_disk_papers_lines_import_as_written_with_their_drive_placeholder_mapped() {
    // As the Azure disk paper prints them, `[X]:` standing for the drive.
    for (b, bs) in [("4k", 4096), ("8k", 8192), ("64k", 65536)] {
        let line = format!("-c50G -d300 -F16 -w20 -r -b{b} -o4 [X]:\\DiskSpd.dat");
        let e = ds(&line).unwrap_err().to_string();
        assert!(e.contains("--map '[x]:\\=/mnt/share/'"), "{e}");
        let map = PathMap::parse(&["[X]:\\=/mnt/disk/".into()]).unwrap();
        let imp = diskspd::import_args(&args(&line), &map).unwrap();
        let j = job_of(&imp);
        let r = &j.runs[0];
        assert_eq!(
            (r.rw, r.read_pct, r.bs[0].bytes, r.threads, r.iodepth),
            (crate::spec::Pattern::Randrw, 80, bs, 16, 4)
        );
        assert_eq!((r.duration_s, j.target.size), (300.0, 50 << 30));
        assert_eq!(j.target.path, PathBuf::from("/mnt/disk"));
    }
    // The SMB paper's `z:\write0.dat ... z:\write9.dat` elides eight files.
    let map = PathMap::parse(&["z:\\=/mnt/share/".into()]).unwrap();
    let e = diskspd::import_args(
        &args("-W300 -C5 -r -w100 -b4k -t8 -o8 -Sh -d60 -L -c2G -Z1G z:\\write0.dat ... z:\\write9.dat"),
        &map,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("argument 14: ...") && e.contains("name every target"),
        "{e}"
    );
}
