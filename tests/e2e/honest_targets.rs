//! Honest targets: a mistyped device or a kernel directory is "no such
//! device" on every front end, never a file set made in /dev; a target that
//! is the host's memory runs but is named as memory everywhere its figures
//! go; a read-only file system is the target's failure (exit 4).

use std::path::{Path, PathBuf};
use std::process::Command;

use volbench::error::exit;
use volbench::report::fixtures::{self, RunFixture};
use volbench::result::check::parse_result;
use volbench::result::diagnosis::{Kind, diagnose};
use volbench::spec::Pattern;

use crate::common::{is_root, read_json, skip, stderr, stdout, vb};

/// A device name no machine has: a mistyped /dev/nvme9n1.
const NO_SUCH: &str = "/dev/vb-no-such-nvme9n1";

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_mistyped_device_is_no_such_device_and_nothing_is_made_in_dev() {
    let o = vb([
        "run",
        "--target",
        NO_SUCH,
        "--rw",
        "randread",
        "--duration",
        "1s",
    ])
    .expect(exit::TARGET);
    assert!(stderr(&o).contains("no such device"), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(NO_SUCH).is_err(),
        "nothing made in /dev"
    );
    // The suite front end plans the same way.
    let o = vb([
        "suite",
        "run",
        "disk-check",
        "--target",
        NO_SUCH,
        "--dry-run",
    ])
    .expect(exit::TARGET);
    assert!(stderr(&o).contains("no such device"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(NO_SUCH).is_err());
}

#[test]
fn dev_proc_and_sys_are_no_targets() {
    for t in ["/dev", "/proc", "/sys", "/dev/null", "/proc/vb-no-such"] {
        let o = vb(["run", "--target", t, "--rw", "randread", "--dry-run"]).expect(exit::TARGET);
        assert!(stderr(&o).contains("no such device"), "{t}: {}", stderr(&o));
    }
}

#[test]
fn an_imported_file_set_in_dev_is_refused_naming_the_option() {
    let o = vb([
        "import",
        "diskspd",
        "--",
        "-c100M",
        "-d5",
        "-r",
        "/dev/null",
    ])
    .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("-c100M"), "{}", stderr(&o));
    assert!(stderr(&o).contains("kernel's files"), "{}", stderr(&o));

    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("dev.fio");
    std::fs::write(&job, "[j]\nfilename=/dev/null\nsize=64m\nrw=randwrite\n").unwrap();
    let o = vb(["import", "fio", p(&job)]).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("filename=/dev/null"), "{}", stderr(&o));

    // A device that is not here imports (it may be on the host the suite
    // is for), and running it here is "no such device", nothing created.
    let job = d.path().join("missing.fio");
    std::fs::write(
        &job,
        format!("[j]\nfilename={NO_SUCH}\nsize=64m\nrw=randread\ntime_based\nruntime=1\n"),
    )
    .unwrap();
    let o = vb(["fio", p(&job)]).expect(exit::TARGET);
    assert!(stderr(&o).contains("no such device"), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(NO_SUCH).is_err());
}

#[test]
fn host_names_that_leave_the_template_directory_are_refused() {
    for bad in ["..", "a/../../etc"] {
        let hosts = format!("vm1,{bad}");
        let o = vb([
            "run",
            "--hosts",
            &hosts,
            "--target",
            "/mnt/vol/{host}",
            "--dry-run",
        ])
        .expect(exit::BAD_INPUT);
        let e = stderr(&o);
        assert!(
            e.contains("--hosts") && e.contains(&format!("'{bad}'")),
            "{e}"
        );
    }
    let o = vb([
        "run",
        "--hosts-from",
        "echo ..",
        "--target",
        "/mnt/vol/{host}",
        "--dry-run",
    ])
    .expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("--hosts-from"), "{}", stderr(&o));
}

#[test]
fn a_read_pct_sweep_on_a_fixed_pattern_says_why_not_two_names() {
    let d = tempfile::tempdir().unwrap();
    let o = vb(["run", "--target", p(d.path()), "--rw", "randread"])
        .args(["--read-pct", "100,50", "--dry-run"])
        .expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("--read-pct 50 conflicts with --rw randread"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_empty_file_is_said_to_be_empty() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("empty.dat");
    std::fs::write(&f, b"").unwrap();
    let o = vb(["run", "--target", p(&f), "--rw", "randread", "--dry-run"]).expect(exit::TARGET);
    assert!(stderr(&o).contains("is an empty file"), "{}", stderr(&o));
}

/// A tmpfs mounted on a temporary directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(test: &str, size: &str) -> Option<Self> {
        if !is_root() {
            skip(test, "mounting a tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip(test, "mount -t tmpfs failed (no mount namespace rights?)");
            return None;
        }
        Some(Self { dir })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn remount_ro(&self) {
        let ok = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "remount read-only");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_tmpfs_target_runs_and_is_named_memory_everywhere() {
    let Some(fs) = Tmpfs::mount("a_tmpfs_target_runs_and_is_named_memory_everywhere", "64m") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let res = out.path().join("res");
    let o = vb([
        "run",
        "--target",
        p(&fs.path("set")),
        "--size",
        "8M",
        "--rw",
        "randread",
    ])
    .args([
        "--bs",
        "4k",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--buffered",
    ])
    .args(["--output", p(&res)])
    .expect(exit::OK);
    let so = stdout(&o);
    let lines: Vec<&str> = so.lines().filter(|l| l.starts_with("memory:")).collect();
    assert_eq!(lines.len(), 1, "one line names the memory:\n{so}");
    assert!(lines[0].contains("(tmpfs), not storage"), "{so}");
    let v = read_json(&res.join("result.json"));
    assert_eq!(v["target"]["memory"], "tmpfs", "{}", v["target"]);
    let kinds: Vec<&str> = v["diagnosis"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f["kind"].as_str()).collect())
        .unwrap_or_default();
    assert!(kinds.contains(&"memory_target"), "{kinds:?}");
    // The file read back keeps it; a memory the schema does not know is refused.
    let text = std::fs::read(res.join("result.json")).unwrap();
    assert!(parse_result(&text).is_ok());
    let mut bad: serde_json::Value = serde_json::from_slice(&text).unwrap();
    bad["target"]["memory"] = "floppy".into();
    let e = parse_result(&serde_json::to_vec(&bad).unwrap()).unwrap_err();
    assert!(e.to_string().contains("floppy"), "{e}");
}

#[test]
fn a_write_on_a_read_only_file_system_is_the_targets_failure() {
    let Some(fs) = Tmpfs::mount(
        "a_write_on_a_read_only_file_system_is_the_targets_failure",
        "64m",
    ) else {
        return;
    };
    let set = fs.path("set");
    let base = [
        "--size",
        "8M",
        "--bs",
        "4k",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--buffered",
    ];
    vb(["run", "--target", p(&set), "--rw", "randread"])
        .args(base)
        .expect(exit::OK);
    fs.remount_ro();
    let o = vb(["run", "--target", p(&set), "--rw", "randwrite"])
        .args(base)
        .expect(exit::TARGET);
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );
    // A new set cannot even be made there: the target's failure too.
    vb(["run", "--target", p(&fs.path("new")), "--rw", "randwrite"])
        .args(base)
        .expect(exit::TARGET);
}

#[test]
fn a_refused_fill_leaves_no_directory_behind() {
    let Some(fs) = Tmpfs::mount("a_refused_fill_leaves_no_directory_behind", "2m") else {
        return;
    };
    let new = fs.path("new");
    let o = vb([
        "run",
        "--target",
        p(&new),
        "--size",
        "100M",
        "--rw",
        "randread",
    ])
    .args(["--duration", "1s", "--buffered"])
    .expect(exit::TARGET);
    assert!(stderr(&o).contains("free"), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&new).is_err(),
        "the directory volbench made is gone"
    );
    // One the user made is theirs: it stays.
    std::fs::create_dir(&new).unwrap();
    vb([
        "run",
        "--target",
        p(&new),
        "--size",
        "100M",
        "--rw",
        "randread",
    ])
    .args(["--duration", "1s", "--buffered"])
    .expect(exit::TARGET);
    assert!(new.is_dir());
}

#[test]
fn a_memory_target_is_one_finding_and_no_storage_cap() {
    // Flat IOPS across block sizes: a cap, on storage.
    let runs: Vec<RunFixture> = [4u64, 8, 64]
        .iter()
        .map(|&k| {
            RunFixture::new(&format!("80r-{k}k"), Pattern::Randrw, 80, k << 10)
                .conc(4, 4)
                .perf(500.0, 16.0 * 1e6 / 500.0)
        })
        .collect();
    let mut doc = fixtures::doc("client-1", &runs);
    let kinds =
        |d: &volbench::result::ResultDoc| diagnose(d).iter().map(|f| f.kind).collect::<Vec<_>>();
    assert!(!kinds(&doc).contains(&Kind::MemoryTarget));
    assert!(kinds(&doc).contains(&Kind::InferredIopsCap));
    doc.target.as_mut().unwrap().memory = Some("tmpfs".into());
    let f = diagnose(&doc);
    assert_eq!(
        f.iter().map(|f| f.kind).collect::<Vec<_>>(),
        vec![Kind::MemoryTarget],
        "{f:#?}"
    );
    assert!(f[0].message.contains("memory (tmpfs)"), "{}", f[0].message);
    // Quiet on the report fixtures.
    for d in [
        fixtures::six_patterns(),
        fixtures::thread_curve(),
        fixtures::latency_curve(),
    ] {
        assert!(!kinds(&d).contains(&Kind::MemoryTarget));
    }
}
