//! End-to-end tests of `volbench import` and of running fio, vdbench and
//! diskspd jobs directly, through the real binary; and fio's JSON output
//! shape read as fio tooling reads it.

use std::path::Path;

use crate::common::{self, run, stderr, stdout};
use volbench::error::exit;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn import_fio_writes_a_suite_that_runs_and_never_replaces_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=8m\ntime_based\nruntime=2\n\n[rand]\nrw=randread\nbs=4k\nnumjobs=2\n\
             [seq]\nstonewall\nrw=write\nbs=64k\nnumjobs=2\n",
            tmp.path().join("t").display()
        ),
    )
    .unwrap();
    let suite = tmp.path().join("s.toml");
    let o = run(&["import", "fio", p(&job), "-o", p(&suite)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&suite).unwrap();
    assert!(
        text.contains("job.fio line 10: numjobs=2 -> threads"),
        "{text}"
    );
    let o = run(&[
        "suite",
        "run",
        p(&suite),
        "--target",
        p(&tmp.path().join("t")),
        "--dry-run",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"name\": \"seq\""), "{}", stdout(&o));
    // A second import to the same path fails and leaves the first alone.
    std::fs::write(&suite, "mine").unwrap();
    let o = run(&["import", "fio", p(&job), "-o", p(&suite)]);
    assert_eq!(o.status.code(), Some(exit::TARGET), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&suite).unwrap(), "mine");
}

#[test]
fn an_unsupported_option_exits_2_naming_it_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job.fio");
    std::fs::write(
        &job,
        "[j]\nrw=randwrite\nsize=1g\ndirectory=/tmp\nfsync_on_close=1\n",
    )
    .unwrap();
    for args in [
        vec!["import", "fio", p(&job)],
        vec!["fio", p(&job), "--dry-run"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(exit::BAD_INPUT));
        let e = stderr(&o);
        assert!(
            e.contains(&format!(
                "{} line 5: fsync_on_close=1: not supported yet",
                job.display()
            )),
            "{e}"
        );
    }
    let o = run(&["diskspd", "-b4k", "-i5", "-d1", "z:\\x.dat"]);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT));
    let e = stderr(&o);
    assert!(
        e.contains("-i5: not supported yet") && e.contains("--map 'z:\\=/mnt/share/'"),
        "{e}"
    );
}

#[test]
fn fio_job_runs_directly_and_its_fio_json_reads_like_fio_s() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job.fio");
    // Buffered: the temporary directory may be on tmpfs (no O_DIRECT).
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=16m\ntime_based\nruntime=1\nramp_time=0\ndirect=0\n\
             [mixed]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=4\nioengine=io_uring\n",
            tmp.path().join("t").display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = run(&["fio", p(&job), "--output", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = tmp.path().join("fio.json");
    let o = run(&["report", p(&out), "--format", "fio-json", "-o", p(&json)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = common::read_json(&json);
    let j = &v["jobs"][0];
    assert_eq!(j["jobname"], "mixed");
    assert_eq!(j["job options"]["rw"], "randrw");
    let (r, w) = (
        j["read"]["iops"].as_f64().unwrap(),
        j["write"]["iops"].as_f64().unwrap(),
    );
    assert!(r > 0.0 && w > 0.0);
    // 70/30: the reads' share of operations within a few points.
    let share = r / (r + w);
    assert!((0.6..0.8).contains(&share), "{share}");
    let p99 = j["read"]["clat_ns"]["percentile"]["99.000000"]
        .as_u64()
        .unwrap();
    let p50 = j["read"]["clat_ns"]["percentile"]["50.000000"]
        .as_u64()
        .unwrap();
    assert!(p50 > 0 && p50 <= p99);
    // bw is KiB/s, as fio's.
    let kib = j["read"]["bw"].as_f64().unwrap();
    assert!((kib / (r * 4.0) - 1.0).abs() < 0.01, "{kib} vs {r}");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_json_read.py");
    match std::process::Command::new("python3")
        .arg(&script)
        .arg(&json)
        .output()
    {
        Ok(o) => {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(String::from_utf8_lossy(&o.stdout).starts_with("mixed randrw 4 1 4096"));
        }
        Err(e) => common::skip("fio_json python reader", &format!("no python3: {e}")),
    }
}

#[test]
fn vdbench_and_diskspd_dry_runs_show_the_translation() {
    let tmp = tempfile::tempdir().unwrap();
    let parm = tmp.path().join("parm");
    std::fs::write(
        &parm,
        "hd=default,jvms=1,shell=ssh\nhd=vm1,system=host-a,user=root\nhd=vm2,system=host-b,user=root\n\
         sd=default,size=1g\nsd=sd-1-1,host=vm1,lun=/mnt/vdb1/f-1-1,openflags=o_direct\n\
         sd=sd-1-2,host=vm1,lun=/mnt/vdb2/f-1-2,openflags=o_direct\n\
         sd=sd-2-1,host=vm2,lun=/mnt/vdb1/f-2-1,openflags=o_direct\n\
         sd=sd-2-2,host=vm2,lun=/mnt/vdb2/f-2-2,openflags=o_direct\n\
         wd=RndRead,sd=sd*,rdpct=100,seekpct=100,xfersize=8k\n\
         rd=default,warmup=60,elapsed=600,iorate=max\nrd=RndRead,wd=RndRead,sd=(\"sd*\"),threads=25\n",
    )
    .unwrap();
    let o = run(&["vdbench", "-f", p(&parm), "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("root@host-b  target={/mnt/vdb1/f-2-1,/mnt/vdb2/f-2-2}"),
        "{out}"
    );
    assert!(
        out.contains("root@host-a") && out.contains("\"threads\": 25"),
        "{out}"
    );
    let suite = tmp.path().join("v.toml");
    let o = run(&["import", "vdbench", p(&parm), "-o", p(&suite)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let hosts = std::fs::read_to_string(tmp.path().join("v.toml.hosts")).unwrap();
    assert_eq!(hosts.lines().filter(|l| l.starts_with("root@")).count(), 2);
    let o = run(&[
        "diskspd",
        "--dry-run",
        "--map",
        &format!("X:\\={}/", tmp.path().display()),
        "-c64M",
        "-d5",
        "-F16",
        "-w20",
        "-r",
        "-b4k",
        "-o4",
        "X:\\DiskSpd.dat",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\"threads\": 16") && out.contains("\"read_pct\": 80"),
        "{out}"
    );
}

/// fio's examples/fio-rand-read.fio as fio ships it, but for its size,
/// runtime and place: buffered libaio at iodepth 16.
const FIO_RAND_READ: &str = "; fio-rand-read.job for fiotest

[global]
name=fio-rand-read
filename=fio-rand-read
rw=randread
bs=4K
direct=0
numjobs=1
time_based
runtime=1

[file1]
size=4m
ioengine=libaio
iodepth=16
";

#[test]
fn fios_buffered_random_read_example_keeps_fios_random_map_and_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("fio-rand-read.fio");
    std::fs::write(
        &job,
        FIO_RAND_READ.replace(
            "filename=",
            &format!("directory={}\nfilename=", p(tmp.path())),
        ),
    )
    .unwrap();
    let o = run(&["import", "fio", p(&job)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // Each block once per pass, as fio's default random map, and one
    // request in flight, as buffered libaio.
    assert!(text.contains("random_map = true"), "{text}");
    assert!(text.contains("iodepth = 1"), "{text}");
    let o = run(&["fio", p(&job), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &doc["runs"][0];
    assert_eq!(r["workload"]["shape"]["random_map"], true, "{r}");
    assert!(r["totals"]["read"]["ops"].as_u64().unwrap() > 0, "{r}");
}

#[test]
fn fio_latency_target_and_per_direction_rates_reach_the_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("job.fio");
    let dir = tmp.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        &job,
        format!(
            "[global]\nsize=64m\ndirectory={}\ntime_based\nruntime=5\nbs=8k\n\
             [lat]\nrw=randread\nlatency_target=2ms\nlatency_percentile=99\n\
             [caps]\nstonewall\nrw=randrw\nrwmixread=70\nrate_iops=700,100\n",
            dir.display()
        ),
    )
    .unwrap();
    let o = run(&["fio", p(&job), "--dry-run"]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("latency_target = \"p99=2000us\""), "{all}");
    assert!(all.contains("rate_iops = \"700,100\""), "{all}");
    // Nothing ran: a dry run makes no file.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn no_byte_of_an_included_file_that_is_no_job_file_reaches_the_terminal() {
    // `include /etc/shadow` as the job's first line printed the file's
    // first line; an INI file's `password=...` printed its value.
    let tmp = tempfile::tempdir().unwrap();
    let secrets = [
        ("shadow-locked", "root:*:19000:0:99999:7:SECRETROOT::\n"),
        (
            "shadow-hash",
            "root:$6$salt$SECRETHASH:19000:0:99999:7:::\n",
        ),
        ("bracket", "[SECRETSECTION\nx=1\n"),
        ("ini", "[db]\npassword=SECRETVALUE\n"),
    ];
    for (name, text) in secrets {
        let secret = tmp.path().join(name);
        std::fs::write(&secret, text).unwrap();
        for job_text in [
            format!("include {}\n[j]\nrw=read\n", secret.display()),
            format!("[j]\nrw=read\ninclude {}\n", secret.display()),
        ] {
            let job = tmp.path().join("a.fio");
            std::fs::write(&job, &job_text).unwrap();
            let o = run(&["import", "fio", p(&job)]);
            assert_eq!(
                o.status.code(),
                Some(exit::BAD_INPUT),
                "{name}: {}",
                stderr(&o)
            );
            let e = stderr(&o);
            assert_eq!(e.lines().count(), 1, "{name}: {e}");
            assert!(!e.to_lowercase().contains("secret"), "{name}: {e}");
        }
    }
}

#[test]
fn a_vdbench_tree_past_the_bound_is_refused_in_one_line_before_anything() {
    // An fsd of 10^8 files (a typo's extra zeros) imported and exited 0.
    let tmp = tempfile::tempdir().unwrap();
    let parm = tmp.path().join("fs.parm");
    std::fs::write(
        &parm,
        format!(
            "fsd=f,anchor={},depth=2,width=100,files=10000,size=4k\n\
             fwd=c,fsd=f,operation=create,threads=4\nrd=r,fwd=c,fwdrate=max,format=yes,elapsed=10\n",
            tmp.path().join("tree").display()
        ),
    )
    .unwrap();
    let suite = tmp.path().join("s.toml");
    let o = run(&["import", "vdbench", p(&parm), "-o", p(&suite)]);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    let bound = volbench::units::bounds::MAX_TREE_FILES.to_string();
    assert!(
        e.contains("fs.parm line 1: fsd=f") && e.contains(&bound),
        "{e}"
    );
    assert!(!suite.exists());
    assert!(!tmp.path().join("tree").exists());
}

#[test]
fn a_fio_job_on_stdin_is_read_as_fio_reads_it() {
    use std::io::Write;
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let job = format!(
        "[global]\nthread=1\ndirectory={}\nsize=8m\nruntime=2\n[rand]\nrw=randread\nbs=16k\n",
        tmp.path().display()
    );
    let mut child = common::volbench()
        .args(["fio", "-", "--dry-run"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(job.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let suite = stdout(&o);
    assert!(suite.contains("source = \"fio job file stdin\""), "{suite}");
    assert!(
        suite.contains("rw = \"randread\"") && suite.contains("16k"),
        "{suite}"
    );
    // Not a job: one line, before any I/O.
    let mut child = common::volbench()
        .args(["fio", "-", "--dry-run"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&[0xff, 0xfe, 0x00])
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(stderr(&o).contains("stdin is not UTF-8"), "{}", stderr(&o));
}
