//! `volbench run --target smb://...` against a real Samba (`common::smb`):
//! the file set made through the protocol lands in the shared directory
//! with exact sizes, a run's op and byte counts are the ones its
//! configuration fixes and the client's per-command counts agree, the set
//! is reused by a second run, `--smb-channels 2` carries traffic on both
//! channels of each session, the negotiation is recorded, a foreign file
//! or a link planted in the set is refused and left untouched, `clean`
//! and `quick` leave the share as it was, and a wrong password, a missing
//! share or an unparsable URL is one line and a non-zero exit before any
//! I/O.

use std::path::Path;

use volbench::error::exit;

use crate::common::smb::{PASSWORD, Samba, SambaConfig, USER};
use crate::common::{stderr, stdout, vb};

const PW: &str = "VOLBENCH_SMB_PASSWORD";
const NOBODY: u32 = 65534;

fn url(s: &Samba, dir: &str, query: &str) -> String {
    let q = if query.is_empty() {
        String::new()
    } else {
        format!("?{query}")
    };
    format!("smb://{USER}@127.0.0.1:{}/bench/{dir}{q}", s.port)
}

fn json_of(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("the result as JSON on stdout: {e}\n{}", stderr(o)))
}

/// The entries of `dir` on the server's side, by name, with their sizes.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| {
                    let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                    (e.file_name().to_string_lossy().into_owned(), len)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn ops_bytes(run: &serde_json::Value, dir: &str) -> (u64, u64) {
    let t = &run["totals"][dir];
    (
        t["ops"].as_u64().unwrap_or(0),
        t["bytes"].as_u64().unwrap_or(0),
    )
}

/// Calls and bytes of one operation type in `runs[].protocol`.
fn calls(run: &serde_json::Value, op: &str) -> (u64, u64) {
    run["protocol"]["ops"]
        .as_array()
        .and_then(|o| o.iter().find(|x| x["op"] == op))
        .map_or((0, 0), |x| {
            (
                x["calls"].as_u64().unwrap_or(0),
                x["bytes"].as_u64().unwrap_or(0),
            )
        })
}

/// Requests and bytes of `command` on each channel in `protocol.smb`.
fn per_channel(run: &serde_json::Value, command: &str) -> Vec<(u64, u64)> {
    run["protocol"]["smb"]["channels"]
        .as_array()
        .map(|chs| {
            chs.iter()
                .map(|c| {
                    c["commands"]
                        .as_array()
                        .and_then(|x| x.iter().find(|x| x["command"] == command))
                        .map_or((0, 0), |x| {
                            (
                                x["requests"].as_u64().unwrap_or(0),
                                x["bytes"].as_u64().unwrap_or(0),
                            )
                        })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn one_line_error(o: &std::process::Output) -> String {
    let e = stderr(o);
    let lines: Vec<&str> = e.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {e}");
    lines[0].to_string()
}

#[test]
fn smb_target_runs_land_exactly_in_the_share_and_the_set_is_reused() {
    let test = "smb_target_runs_land_exactly_in_the_share_and_the_set_is_reused";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let target = url(&s, "set", "dialect=3.1.1&signing=on");
    // Sequential writes of exactly 8 MiB over two 4 MiB files.
    let o = vb(["run", "--target", &target])
        .env(PW, PASSWORD)
        .args([
            "--size", "8m", "--files", "2", "--rw", "write", "--bs", "64k",
        ])
        .args(["--iodepth", "4", "--io-limit", "8m", "--warmup", "0"])
        .args(["--duration", "60s", "--json"])
        .expect(exit::OK);
    let doc = json_of(&o);
    let run = &doc["runs"][0];
    assert_eq!(run["engine"], "smb");
    assert_eq!(ops_bytes(run, "write"), (128, 8 << 20), "writes");
    assert_eq!(ops_bytes(run, "read"), (0, 0));
    assert_eq!(calls(run, "WRITE"), (128, 8 << 20), "{}", run["protocol"]);
    assert_eq!(run["protocol"]["protocol"], "smb");
    assert_eq!(run["protocol"]["version"], "3.1.1");
    let smb = &run["protocol"]["smb"];
    assert_eq!(smb["dialect"], "3.1.1", "{smb}");
    assert_eq!(smb["signing"], true, "{smb}");
    assert!(smb["signing_algorithm"].is_string(), "{smb}");
    assert!(smb["encryption"].is_null(), "{smb}");
    assert_eq!(per_channel(run, "write"), [(128, 8 << 20)], "{smb}");
    let dir = s.share().join("set");
    let files = listing(&dir);
    let data: Vec<_> = files
        .iter()
        .filter(|(n, _)| n.ends_with(".dat"))
        .cloned()
        .collect();
    assert_eq!(
        data,
        [
            ("volbench.0.dat".to_string(), 4 << 20),
            ("volbench.1.dat".to_string(), 4 << 20)
        ],
        "the set on the server: {files:?}"
    );
    assert!(
        files.iter().any(|(n, _)| n == ".volbench-fileset.json"),
        "the marker: {files:?}"
    );
    assert!(
        !files
            .iter()
            .any(|(n, _)| n.contains("lock") || n.ends_with(".tmp")),
        "the run's lock and temporaries are gone: {files:?}"
    );
    // The same set reused: 1024 random 4 KiB reads, 16 in flight, sealed.
    let sealed = url(&s, "set", "encryption=aes-256-gcm");
    let o = vb(["run", "--target", &sealed])
        .env(PW, PASSWORD)
        .args([
            "--size", "8m", "--files", "2", "--rw", "randread", "--bs", "4k",
        ])
        .args(["--iodepth", "16", "--io-limit", "4m", "--warmup", "0"])
        .args(["--duration", "60s", "--json"])
        .expect(exit::OK);
    let doc = json_of(&o);
    let run = &doc["runs"][0];
    assert_eq!(ops_bytes(run, "read"), (1024, 4 << 20), "reads");
    assert_eq!(calls(run, "READ"), (1024, 4 << 20), "{}", run["protocol"]);
    assert_eq!(ops_bytes(run, "write"), (0, 0));
    assert_eq!(run["depth_per_thread"], 16, "the queue depth is real");
    assert_eq!(run["protocol"]["smb"]["encryption"], "AES-256-GCM");
    let read = run["protocol"]["ops"]
        .as_array()
        .and_then(|o| o.iter().find(|x| x["op"] == "READ"))
        .expect("READ");
    let (rtt, exec) = (
        read["rtt_us"]["mean"].as_f64().unwrap_or(0.0),
        read["exec_us"]["mean"].as_f64().unwrap_or(0.0),
    );
    // Queued no later than sent, completed no earlier than the reply came.
    assert!(rtt > 0.0 && exec >= rtt, "rtt {rtt} exec {exec}");
    assert_eq!(
        doc["fill"]
            .as_array()
            .map(|f| f.iter().all(|x| x["skipped_reused"] == true)),
        Some(true),
        "the filled set was reused: {}",
        doc["fill"]
    );
    let path = doc["target"]["path"].as_str().unwrap_or_default();
    assert!(
        path.starts_with("smb://") && !path.contains(PASSWORD),
        "{}",
        doc["target"]
    );
    assert_eq!(
        listing(&dir),
        files,
        "a read run changes nothing on the share"
    );
    assert!(!stdout(&o).contains(PASSWORD) && !stderr(&o).contains(PASSWORD));
}

#[test]
fn smb_two_channels_carry_traffic_on_both_and_a_thread_sweep_counts_them() {
    let test = "smb_two_channels_carry_traffic_on_both_and_a_thread_sweep_counts_them";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let target = url(&s, "multi", "");
    let o = vb(["run", "--target", &target])
        .env(PW, PASSWORD)
        .args(["--size", "4m", "--rw", "randread", "--bs", "4k"])
        .args(["--threads", "1,2", "--iodepth", "8", "--smb-channels", "2"])
        .args(["--io-limit", "2m", "--warmup", "0", "--duration", "60s"])
        .arg("--json")
        .expect(exit::OK);
    let doc = json_of(&o);
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "one run per thread count");
    for (threads, run) in [1u64, 2].iter().zip(runs) {
        let (ops, bytes) = ops_bytes(run, "read");
        assert_eq!((ops, bytes), (512, 2 << 20), "{threads} threads");
        let smb = &run["protocol"]["smb"];
        assert_eq!(smb["channels_per_session"], 2, "{smb}");
        assert_eq!(
            run["protocol"]["connections"].as_u64(),
            Some(2 * threads),
            "each thread's session binds two channels"
        );
        let each = per_channel(run, "read");
        assert_eq!(each.len(), 2, "{smb}");
        assert!(
            each.iter().all(|&(n, b)| n > 0 && b == n * 4096),
            "both channels carry reads: {each:?}"
        );
        assert_eq!(
            each.iter().map(|c| c.0).sum::<u64>(),
            ops,
            "the channels' reads add up to the run's"
        );
        let chans = smb["channels"].as_array().expect("channels");
        assert!(
            chans
                .iter()
                .all(|c| c["sessions"].as_u64() == Some(*threads)),
            "{smb}"
        );
    }
    assert!(
        doc["target"]["path"]
            .as_str()
            .is_some_and(|p| p.contains("channels=2")),
        "the result records the channels: {}",
        doc["target"]
    );
}

#[test]
fn smb_a_foreign_file_or_a_link_in_the_set_is_refused_and_left_untouched() {
    let test = "smb_a_foreign_file_or_a_link_in_the_set_is_refused_and_left_untouched";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let args = ["--size", "1m", "--rw", "write", "--warmup", "0"];
    // A file of the set's name that volbench did not make.
    let planted = s.share().join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::fs::write(planted.join("volbench.0.dat"), b"the user's data").unwrap();
    let o = vb(["run", "--target", &url(&s, "planted", "")])
        .env(PW, PASSWORD)
        .args(args)
        .args(["--duration", "1s"])
        .output();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(
        one_line_error(&o).contains("volbench did not create it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(planted.join("volbench.0.dat")).unwrap(),
        b"the user's data"
    );
    // Links at the set's name, into the share and out of it: never
    // written through.
    std::fs::write(s.share().join("victim"), b"keep me").unwrap();
    for (name, to) in [
        ("inside", s.share().join("victim")),
        ("outside", std::path::PathBuf::from("/etc/hostname")),
    ] {
        let d = s.share().join(name);
        std::fs::create_dir(&d).unwrap();
        std::os::unix::fs::symlink(&to, d.join("volbench.0.dat")).unwrap();
        let before = std::fs::read(&to).unwrap();
        let o = vb(["run", "--target", &url(&s, name, "")])
            .env(PW, PASSWORD)
            .args(args)
            .args(["--duration", "1s"])
            .output();
        assert_eq!(
            o.status.code(),
            Some(exit::REFUSED),
            "{name}: {}",
            stderr(&o)
        );
        one_line_error(&o);
        assert_eq!(
            std::fs::read(&to).unwrap(),
            before,
            "{name}: the link's target"
        );
        assert!(
            std::fs::symlink_metadata(d.join("volbench.0.dat"))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{name}: the link is left"
        );
    }
    // A set of ours whose file the user replaced: the new file is refused.
    let mine = url(&s, "mine", "");
    vb(["run", "--target", &mine])
        .env(PW, PASSWORD)
        .args(args)
        .args(["--files", "2", "--io-limit", "64k", "--duration", "10s"])
        .expect(exit::OK);
    let one = s.share().join("mine/volbench.1.dat");
    std::fs::remove_file(&one).unwrap();
    std::fs::write(&one, b"replaced by the user").unwrap();
    let o = vb(["run", "--target", &mine])
        .env(PW, PASSWORD)
        .args(args)
        .args(["--files", "2", "--duration", "1s"])
        .output();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert_eq!(std::fs::read(&one).unwrap(), b"replaced by the user");
    // A set of ours whose file now belongs to another user, in place (the
    // same file id, one link): its owner is what tells. Refused when the
    // run's workers open the set, before any I/O (a refusal, exit 3, as at
    // the fill, and the result written says why); not written; still read.
    let given = url(&s, "given", "");
    vb(["run", "--target", &given])
        .env(PW, PASSWORD)
        .args(args)
        .args(["--files", "2", "--io-limit", "64k", "--duration", "10s"])
        .expect(exit::OK);
    let theirs = s.share().join("given/volbench.1.dat");
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    let before = std::fs::read(&theirs).unwrap();
    let o = vb(["run", "--target", &given])
        .env(PW, PASSWORD)
        .args(args)
        .args(["--files", "2", "--duration", "1s"])
        .output();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    let said: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.contains("error"))
        .map(String::from)
        .collect();
    assert!(
        said.len() == 1
            && said[0].contains("refusing to write")
            && said[0].contains("given/volbench.1.dat: another user owns it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&theirs).unwrap(), before, "not written");
    let o = vb(["run", "--target", &given])
        .env(PW, PASSWORD)
        .args(["--size", "1m", "--rw", "read", "--warmup", "0"])
        .args(["--files", "2", "--io-limit", "64k", "--duration", "10s"])
        .output();
    assert_eq!(o.status.code(), Some(exit::OK), "a read: {}", stderr(&o));
    // A set to be filled again (another size) with that file in it: the
    // fill's own proof refuses it before any write (exit 3).
    let o = vb(["run", "--target", &given])
        .env(PW, PASSWORD)
        .args(["--size", "2m", "--rw", "write", "--warmup", "0"])
        .args(["--files", "2", "--duration", "1s"])
        .output();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another user owns it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&theirs).unwrap(), before, "not filled");
}

#[test]
fn smb_clean_and_quick_leave_the_share_as_it_was() {
    let test = "smb_clean_and_quick_leave_the_share_as_it_was";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let dir = s.share().join("work");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), b"keep me").unwrap();
    let before = listing(&dir);
    let target = url(&s, "work", "");
    vb(["run", "--target", &target])
        .env(PW, PASSWORD)
        .args(["--size", "1m", "--files", "2", "--rw", "read"])
        .args(["--io-limit", "64k", "--warmup", "0", "--duration", "10s"])
        .expect(exit::OK);
    assert_eq!(listing(&dir).len(), before.len() + 3, "{:?}", listing(&dir));
    let o = vb(["clean", "--target", &target])
        .env(PW, PASSWORD)
        .expect(exit::OK);
    assert!(stdout(&o).contains("removed 2 files"), "{}", stdout(&o));
    assert_eq!(listing(&dir), before, "only what volbench made is gone");
    // quick on a share's directory: its scratch set made and removed.
    let o = vb(["quick", "--dir", &target])
        .env(PW, PASSWORD)
        .args(["--size", "4m", "--duration", "1s"])
        .expect(exit::OK);
    assert!(stdout(&o).contains("IOPS") || !stdout(&o).is_empty());
    assert_eq!(listing(&dir), before, "the scratch set is gone");
}

#[test]
fn smb_a_wrong_password_a_missing_share_and_a_bad_url_are_one_line_before_io() {
    let test = "smb_a_wrong_password_a_missing_share_and_a_bad_url_are_one_line_before_io";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let run = |target: &str, pw: Option<&str>, extra: &[&str]| {
        let mut c = vb(["run", "--target", target, "--duration", "1s"]).args(extra);
        if let Some(p) = pw {
            c = c.env(PW, p);
        }
        c.output()
    };
    for (target, pw, extra, code, why) in [
        (
            url(&s, "d1", ""),
            Some("not-the-password"),
            &[][..],
            exit::TARGET,
            "wrong user or password",
        ),
        (
            format!("smb://{USER}@127.0.0.1:{}/nosuch/d", s.port),
            Some(PASSWORD),
            &[],
            exit::TARGET,
            "no such share",
        ),
        (
            url(&s, "d2", "vers=3"),
            Some(PASSWORD),
            &[],
            exit::BAD_INPUT,
            "unknown key 'vers'",
        ),
        (
            format!("smb://{USER}:{PASSWORD}@127.0.0.1:{}/bench/d3", s.port),
            None,
            &[],
            exit::BAD_INPUT,
            "a password never goes in the URL",
        ),
        (
            url(&s, "d4", ""),
            None,
            &[],
            exit::BAD_INPUT,
            "VOLBENCH_SMB_PASSWORD",
        ),
        (
            url(&s, "d5", ""),
            Some(PASSWORD),
            &["--engine", "psync"],
            exit::BAD_INPUT,
            "smb engine",
        ),
        (
            url(&s, "d6", "channels=2"),
            Some(PASSWORD),
            &["--smb-channels", "3"],
            exit::BAD_INPUT,
            "disagree",
        ),
        (
            url(&s, "d7", ""),
            Some(PASSWORD),
            &["--smb-channels", "33"],
            exit::BAD_INPUT,
            "1..32",
        ),
        (
            "/tmp".to_string(),
            None,
            &["--smb-channels", "2"],
            exit::BAD_INPUT,
            "smb:// target",
        ),
    ] {
        let o = run(&target, pw, extra);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{target} {extra:?}: {}",
            stderr(&o)
        );
        let line = one_line_error(&o);
        assert!(line.contains(why), "{target} {extra:?}: {line}");
        assert!(!line.contains(PASSWORD), "the password shown: {line}");
    }
    // Nothing reached the share: no directory was made.
    assert_eq!(listing(&s.share()), [], "before any I/O");
    assert!(
        !s.log().contains(PASSWORD),
        "the server's log holds the password"
    );
}

#[test]
fn smb_report_of_a_real_run_shows_its_channels() {
    let test = "smb_report_of_a_real_run_shows_its_channels";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    vb(["run", "--target", &url(&s, "report", "dialect=3.1.1")])
        .env(PW, PASSWORD)
        .args(["--size", "4m", "--rw", "randread", "--bs", "4k"])
        .args(["--iodepth", "4", "--smb-channels", "2", "--io-limit", "2m"])
        .args(["--warmup", "0", "--duration", "60s"])
        .args(["--output", out.to_str().unwrap()])
        .expect(exit::OK);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<section id=\"smb-client\">"),
        "no SMB section"
    );
    assert!(html.contains("SMB channels: "), "no channel table");
    assert!(html.contains("SMB 3.1.1, "), "no negotiation line");
    let md = std::fs::read_to_string(out.join("tables.md")).unwrap();
    assert!(md.contains("SMB commands: "), "{md}");
}
