//! The papers' diskspd lines: each imports exactly, with a path map for
//! Windows paths, several targets as a target list.

use super::*;

#[test]
fn diskspd_disk_check_line_imports_exactly_with_a_map() {
    let line = "-c50G -d300 -F16 -w20 -r -b4k -o4 X:\\DiskSpd.dat";
    let e = diskspd::import_args(&args(line), &PathMap::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("X:\\DiskSpd.dat") && e.contains("--map 'x:\\=/mnt/share/'"),
        "{e}"
    );
    let map = PathMap::parse(&["X:\\=/mnt/disk/".into()]).unwrap();
    let imp = diskspd::import_args(&args(line), &map).unwrap();
    assert!(
        imp.printed().iter().all(|n| !n.contains("-w20")),
        "all exact"
    );
    let j = job_of(&imp);
    let r = &j.runs[0];
    assert_eq!(
        (r.rw, r.read_pct, r.bs[0].bytes),
        (Pattern::Randrw, 80, 4096)
    );
    assert_eq!((r.threads, r.iodepth, r.files), (16, 4, Some(1)));
    assert_eq!(
        (r.duration_s, r.warmup_s),
        (300.0, 5.0),
        "diskspd's default warm-up is 5 s"
    );
    assert_eq!(j.target.size, 50 << 30);
    assert_eq!(j.target.path, PathBuf::from("/mnt/disk"));
    assert!(!j.target.direct, "diskspd caches unless -S");
}

#[test]
fn diskspd_smb_line_imports_whole() {
    let mut line = "-W300 -C5 -r -w100 -b4k -t8 -o8 -Sh -d60 -L -c2G -Z1G".to_string();
    for i in 0..10 {
        line.push_str(&format!(" z:\\write{i}.dat"));
    }
    let map = PathMap::parse(&["z:\\=/mnt/share/".into()]).unwrap();
    // 10 targets of 2 GiB, 8 threads each (-t is per target), direct and
    // write-through (-Sh), 5 s of cool-down after the measured minute.
    let rest = line;
    let imp = diskspd::import_args(&args(&rest), &map).unwrap();
    let j = job_of(&imp);
    let r = &j.runs[0];
    assert_eq!(r.shape.cooldown_s, Some(5.0));
    assert_eq!(
        (r.rw, r.threads, r.iodepth, r.files),
        (Pattern::Randwrite, 8, 8, Some(1))
    );
    assert_eq!((r.warmup_s, r.duration_s), (300.0, 60.0));
    assert_eq!(j.target.size, 2 << 30);
    let listed = crate::input::targets::expand_local(&j.target.path).unwrap();
    assert_eq!(listed.len(), 10);
    assert_eq!(listed[9], PathBuf::from("/mnt/share/write9.dat"));
    assert!(j.target.direct);
    assert_eq!(j.target.write_sync, crate::spec::WriteSync::Dsync);
    let sw = diskspd::import_args(&args(&rest.replace("-Sh ", "-Sw ")), &map).unwrap();
    let j = job_of(&sw);
    assert_eq!(
        (j.target.direct, j.target.write_sync),
        (false, crate::spec::WriteSync::Dsync)
    );
    assert!(imp.printed().iter().any(|n| n.contains("-Z1G")));
    let e = diskspd::import_args(&args("-b4k /d/x --dry-run"), &PathMap::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("argument 3: --dry-run") && e.contains("before the diskspd"),
        "{e}"
    );
    let e = diskspd::import_args(&args("-b4k #1"), &PathMap::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("disk number") && e.contains("--map '#1=/dev/sdX'"),
        "{e}"
    );
    let imp = diskspd::import_args(
        &args("-b4k -g4096 #1"),
        &PathMap::parse(&["#1=/dev/sdb".into()]).unwrap(),
    )
    .unwrap();
    assert_eq!(imp.target, "/dev/sdb");
    assert_eq!(
        number(&run(&imp, 0).rate),
        Some(1000.0),
        "4096 bytes/ms of 4 KiB blocks"
    );
    // Several existing devices (no -c): each used whole, -t threads each.
    let imp = diskspd::import_args(
        &args("-b4k -t2 -r #1 #2"),
        &PathMap::parse(&["#1=/dev/sdb".into(), "#2=/dev/sdc".into()]).unwrap(),
    )
    .unwrap();
    assert_eq!(imp.target, "{/dev/sdb,/dev/sdc}");
    assert_eq!(count_of(&run(&imp, 0).threads), Some(2));
    assert_eq!(imp.suite.defaults.size, None);
    // -F over several files: every thread reaches every file, one file set.
    let imp =
        diskspd::import_args(&args("-c1G -F4 /d/a.dat /d/b.dat"), &PathMap::default()).unwrap();
    assert_eq!(
        (imp.target.as_str(), count_of(&imp.suite.defaults.files)),
        ("/d", Some(2))
    );
    assert_eq!(count_of(&run(&imp, 0).threads), Some(4));
}

#[test]
fn a_mapped_path_that_climbs_out_of_its_root_is_refused() {
    let map = PathMap::parse(&["x:\\=/mnt/share/".into()]).unwrap();
    let e = map.resolve("x:\\..\\..\\etc\\x.dat").unwrap_err();
    assert!(
        e.contains("/etc/x.dat") && e.contains("outside the mapped root"),
        "{e}"
    );
    // `..` that stays inside the root is the user's business.
    assert!(map.resolve("x:\\a\\..\\b.dat").is_ok());
    let e = diskspd::import_args(&args("-c1G -d5 x:\\..\\x.dat"), &map)
        .unwrap_err()
        .to_string();
    assert!(e.contains("x:\\..\\x.dat"), "{e}");
}

#[test]
fn a_file_set_among_the_kernels_files_is_refused_naming_the_option() {
    for line in [
        "-c100M -d5 /dev/null",
        "-c100M -d5 /dev/sdq /dev/sdr",
        "-c1G /proc/x.dat",
    ] {
        let e = diskspd::import_args(&args(line), &PathMap::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("-c") && e.contains("kernel's files"),
            "{line}: {e}"
        );
    }
    // A device without -c is the device itself, used whole.
    assert!(diskspd::import_args(&args("-d5 /dev/sdq"), &PathMap::default()).is_ok());
}

#[test]
fn on_windows_diskspd_paths_are_used_as_written() {
    use crate::spec::engine::Platform;
    let none = PathMap::default();
    for p in ["Z:\\io.dat", "c:/bench/f.dat", "\\\\server\\share\\f"] {
        assert_eq!(
            none.resolve_on(p, Platform::Windows).unwrap(),
            (p.to_string(), false)
        );
        // On Linux the same path needs its --map, and the error says so.
        let e = none.resolve_on(p, Platform::Linux).unwrap_err();
        assert!(e.contains("--map"), "{e}");
    }
    assert_eq!(
        none.resolve_on("#2", Platform::Windows).unwrap().0,
        "\\\\.\\PhysicalDrive2"
    );
    assert!(none.resolve_on("#x", Platform::Windows).is_err());
    let e = none.resolve_on("/dev/sdb", Platform::Windows).unwrap_err();
    assert!(e.contains("Linux path"), "{e}");
    // A --map still wins where the user gives one.
    let map = PathMap::parse(&["z:\\=/mnt/share/".into()]).unwrap();
    assert!(map.resolve_on("Z:\\io.dat", Platform::Windows).unwrap().1);
}
