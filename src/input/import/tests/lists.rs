//! Several targets in one imported job: fio's `filename=a:b`, a vdbench rd
//! over several sds of this host, diskspd's -F over existing files.

use super::*;

fn vd(text: &str) -> Result<Imported> {
    let read = files(BTreeMap::new());
    vdbench::import_text(
        "p.txt",
        text,
        &PathMap::default(),
        &vdbench::Sources { read: &read },
    )
}

fn note_of(imp: &Imported, part: &str) -> bool {
    imp.printed().iter().any(|n| n.contains(part))
}

#[test]
fn fio_devices_in_one_filename_share_the_jobs_threads() {
    let imp =
        fio_ok("[d]\nfilename=/dev/sdb:/dev/sdc\nrw=randread\nnumjobs=4\ntime_based\nruntime=10\n");
    assert_eq!(imp.target, "{/dev/sdb,/dev/sdc}");
    assert!(imp.suite.threads_total);
    let d = &imp.suite.defaults;
    assert_eq!((bytes(&d.size), count_of(&d.files)), (None, Some(1)));
    assert_eq!(count_of(&run(&imp, 0).threads), Some(4));
    // The roundrobin difference is printed, and the run line carries the flag.
    assert!(
        note_of(&imp, "take the 2 files in turn"),
        "{:?}",
        imp.printed()
    );
    let line = render::command_line(&imp, "s.toml", "h");
    assert!(line.ends_with("--target '{/dev/sdb,/dev/sdc}'"), "{line}");
    // The suite file itself says its threads are the total, so it runs as
    // imported without the flag.
    let toml = render::suite_toml(&imp, "s.toml", "h").unwrap();
    let suite = crate::input::suite::parse("s.toml", &toml).unwrap();
    assert!(suite.threads_total, "{toml}");
    // A size= is fio's start of each device: said, not silently dropped.
    let imp =
        fio_ok("[d]\nfilename=/dev/sdb:/dev/sdc\nsize=1g\nnumjobs=2\ntime_based\nruntime=5\n");
    assert!(
        note_of(&imp, "uses each whole unless"),
        "{:?}",
        imp.printed()
    );
    assert_eq!(imp.suite.defaults.size, None);
}

#[test]
fn fio_a_job_with_fewer_threads_than_files_is_refused() {
    let e = fio_err("[d]\nfilename=/dev/sdb:/dev/sdc:/dev/sdd\nnumjobs=2\ntime_based\nruntime=5\n");
    assert!(e.contains("2 threads in all over 3 targets"), "{e}");
    assert!(e.contains("give at least 3"), "{e}");
}

#[test]
fn fio_new_files_become_one_file_set_with_the_size_split() {
    let imp = fio_ok(
        "[n]\nfilename=/nonexistent-vb/a.dat:/nonexistent-vb/b\\:c.dat\nsize=2g\nrw=randwrite\n\
         numjobs=3\ntime_based\nruntime=5\n",
    );
    assert_eq!(imp.target, "/nonexistent-vb");
    assert!(!imp.suite.threads_total);
    let d = &imp.suite.defaults;
    assert_eq!(
        (bytes(&d.size), count_of(&d.files)),
        (Some(2 << 30), Some(2))
    );
    assert_eq!(count_of(&run(&imp, 0).threads), Some(3));
    let j = job_of(&imp);
    assert_eq!(j.target.files, 2);
    assert_eq!(j.target.size, 2 << 30);
}

#[test]
fn fio_file_lists_refuse_what_volbench_cannot_do_by_name() {
    let e = fio_err(
        "[d]\nfilename=/dev/sdb:/dev/sdc\nfile_service_type=sequential\nnumjobs=2\ntime_based\nruntime=5\n",
    );
    assert!(
        e.contains("line 3: file_service_type=sequential: not supported yet"),
        "{e}"
    );
    let e = fio_err(
        "[d]\nfilename=/dev/sdb:/dev/sdc\nfile_service_type=zipf:1.2\nnumjobs=2\ntime_based\nruntime=5\n",
    );
    assert!(e.contains("file_service_type=zipf:1.2"), "{e}");
    let e =
        fio_err("[d]\nfilename=/dev/sdb:/dev/sdc\nnrfiles=4\nnumjobs=2\ntime_based\nruntime=5\n");
    assert!(e.contains("nrfiles=4: filename= names 2 files"), "{e}");
    let e = fio_err(
        "[d]\nfilename=/nonexistent-vb/a:/nonexistent-vc/b\nsize=1g\ntime_based\nruntime=5\n",
    );
    assert!(e.contains("several directories"), "{e}");
    let e = fio_err(
        "[d]\nfilename=/dev/sdb:/nonexistent-vb/b\nsize=1g\nnumjobs=2\ntime_based\nruntime=5\n",
    );
    assert!(e.contains("together with files fio would create"), "{e}");
    // random is what volbench's list does already: a note.
    let imp = fio_ok(
        "[d]\nfilename=/dev/sdb:/dev/sdc\nfile_service_type=random\nnumjobs=2\ntime_based\nruntime=5\n",
    );
    assert!(
        note_of(&imp, "file_service_type=random: every file busy at once"),
        "{:?}",
        imp.printed()
    );
}

#[test]
fn fio_existing_files_run_whole_as_a_list() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, vec![0u8; 8192]).unwrap();
    std::fs::write(&b, vec![0u8; 8192]).unwrap();
    let text = format!(
        "[e]\nfilename={}:{}\nrw=randread\nnumjobs=2\ntime_based\nruntime=5\n",
        a.display(),
        b.display()
    );
    let imp = fio_ok(&text);
    assert_eq!(imp.target, format!("{{{},{}}}", a.display(), b.display()));
    assert!(imp.suite.threads_total);
}

#[test]
fn vdbench_an_rd_over_several_local_sds_is_a_list_with_threads_per_sd() {
    let imp = vd(
        "sd=sd1,lun=/dev/sdb,size=10g\nsd=sd2,lun=/dev/sdc,size=10g\n\
         wd=w,sd=sd*,xfersize=4k,rdpct=100,seekpct=random\n\
         rd=r,wd=w,iorate=1000,threads=6,elapsed=20,warmup=5\n",
    )
    .unwrap();
    assert_eq!(imp.target, "{/dev/sdb,/dev/sdc}");
    assert!(imp.hosts.is_empty());
    // vdbench: threads= is per sd, iorate the run's total.
    assert!(!imp.suite.threads_total);
    assert_eq!(count_of(&run(&imp, 0).threads), Some(6));
    assert_eq!(number(&run(&imp, 0).rate), Some(1000.0));
    let text = render::suite_toml(&imp, "s.toml", "h").unwrap();
    assert!(
        text.contains("2 sds on this host as a list of targets"),
        "{text}"
    );
}

#[test]
fn vdbench_like_wds_on_different_sds_run_together() {
    let base = "sd=sd1,lun=/dev/sdb\nsd=sd2,lun=/dev/sdc\n\
                wd=w1,sd=sd1,xfersize=8k,rdpct=70\nwd=w2,sd=sd2,xfersize=8k,rdpct=70\n";
    let imp = vd(&format!("{base}rd=r,wd=(w1,w2),threads=2,elapsed=10\n")).unwrap();
    assert_eq!(imp.target, "{/dev/sdb,/dev/sdc}");
    assert_eq!(count_of(&run(&imp, 0).read_pct), Some(70));
    // A skew would move I/O between the sds: refused by name.
    let skewed = base.replace("rdpct=70\nwd=w2", "rdpct=70,skew=80\nwd=w2");
    let e = vd(&format!("{skewed}rd=r,wd=(w1,w2),threads=2,elapsed=10\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("wd=(w1,w2)") && e.contains("different sds with skew="),
        "{e}"
    );
    // Workloads that differ in more than their sds stay refused.
    let other = base.replace("wd=w2,sd=sd2,xfersize=8k", "wd=w2,sd=sd2,xfersize=64k");
    let e = vd(&format!("{other}rd=r,wd=(w1,w2),threads=2,elapsed=10\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("on different sds that differ in more than their sd="),
        "{e}"
    );
}

#[test]
fn diskspd_f_over_existing_files_without_c_is_a_list_sharing_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dat"), dir.path().join("b.dat"));
    std::fs::write(&a, vec![0u8; 8192]).unwrap();
    std::fs::write(&b, vec![0u8; 8192]).unwrap();
    let line = format!("-F4 -r -b4k -d5 {} {}", a.display(), b.display());
    let imp = diskspd::import_args(&args(&line), &PathMap::default()).unwrap();
    assert_eq!(imp.target, format!("{{{},{}}}", a.display(), b.display()));
    assert!(imp.suite.threads_total);
    assert_eq!(
        (
            bytes(&imp.suite.defaults.size),
            count_of(&run(&imp, 0).threads)
        ),
        (None, Some(4))
    );
    // A path that is not there: diskspd needs -c to create it.
    let line = format!(
        "-F4 -r {} {}/missing.dat",
        a.display(),
        dir.path().display()
    );
    let e = diskspd::import_args(&args(&line), &PathMap::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("missing.dat") && e.contains("give -cSIZE"),
        "{e}"
    );
    // Fewer -F threads than files leaves a file idle.
    let line = format!("-F1 -r {} {}", a.display(), b.display());
    let e = diskspd::import_args(&args(&line), &PathMap::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 threads in all over 2 targets"), "{e}");
}

#[test]
fn fio_a_list_not_time_based_stops_after_size_per_job_and_names_are_run_once() {
    // fio without time_based: each job does size= of I/O over its files.
    let imp = fio_ok("[d]\nfilename=/dev/sdb:/dev/sdc\nsize=1g\nnumjobs=2\n");
    assert_eq!(bytes(&run(&imp, 0).io_limit), Some(2 << 30));
    let e = fio_err("[d]\nfilename=/dev/sdb:/dev/sdb\nnumjobs=2\ntime_based\nruntime=5\n");
    assert!(e.contains("named twice"), "{e}");
}

#[test]
fn fio_file_sets_among_the_kernels_files_are_refused_by_option() {
    // /dev/null is here and is no block device: never a file set in /dev.
    let e = fio_err("[j]\nfilename=/dev/null\nsize=1g\nrw=randwrite\n");
    assert!(
        e.contains("filename=/dev/null") && e.contains("not a block device"),
        "{e}"
    );
    let e = fio_err("[j]\nfilename=/proc/x.dat\nsize=1g\nrw=randread\n");
    assert!(
        e.contains("filename=/proc/x.dat") && e.contains("kernel's files"),
        "{e}"
    );
    let e = fio_err("[j]\ndirectory=/sys/x\nsize=1g\nrw=randread\n");
    assert!(e.contains("directory=/sys/x"), "{e}");
    // A device that is not on this machine is left to the run, where it runs.
    assert_eq!(
        fio_ok("[j]\nfilename=/dev/sdq\nsize=1g\nrw=randread\n").target,
        "/dev/sdq"
    );
}
