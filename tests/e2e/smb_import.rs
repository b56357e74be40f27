//! A diskspd line written for Windows, its target a UNC path, run on
//! Linux against a real Samba (`common::smb`) by mapping the share to an
//! `smb://` URL: volbench's own set lands in the share's directory, the
//! run reads and writes, the password appears nowhere volbench prints,
//! and a map that cannot be used is one line and exit 2 before any I/O.

use std::path::Path;

use volbench::error::exit;

use crate::common::smb::{PASSWORD, Samba, SambaConfig, USER};
use crate::common::{stderr, stdout, vb};

const PW: &str = "VOLBENCH_SMB_PASSWORD";

/// Every file under `dir`, by path below it, with its size.
fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
                out.push((rel, e.metadata().map(|m| m.len()).unwrap_or(0)));
            }
        }
    }
    out.sort();
    out
}

fn one_line(o: &std::process::Output) -> String {
    let e = stderr(o);
    let lines: Vec<&str> = e.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {e}");
    lines[0].to_string()
}

#[test]
fn smb_import_a_diskspd_unc_line_runs_on_the_mapped_share() {
    let test = "smb_import_a_diskspd_unc_line_runs_on_the_mapped_share";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let map = format!(
        "\\\\srv\\share\\=smb://{USER}@127.0.0.1:{}/bench/?channels=2",
        s.port
    );
    let line = [
        "-c8M",
        "-d1",
        "-W0",
        "-r",
        "-w50",
        "-b4K",
        "-o4",
        "\\\\SRV\\Share\\dir\\f.dat",
    ];

    // The dry run says where the I/O goes, and no password.
    let o = vb(["diskspd", "--dry-run", "--map", &map])
        .args(line)
        .env(PW, PASSWORD)
        .expect(exit::OK);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("/bench/dir"), "{all}");
    assert!(!all.contains(PASSWORD), "{all}");
    assert!(files(&s.share()).is_empty(), "a dry run does no I/O");

    let o = vb(["diskspd", "--json", "--map", &map])
        .args(line)
        .env(PW, PASSWORD)
        .expect(exit::OK);
    assert!(!stderr(&o).contains(PASSWORD), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("\\\\SRV\\Share\\dir\\f.dat") && stderr(&o).contains("SMB client"),
        "the notes say what was mapped: {}",
        stderr(&o)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("the result as JSON: {e}\n{}", stderr(&o)));
    let run = &doc["runs"][0];
    assert_eq!(run["engine"], "smb", "{run}");
    for dir in ["read", "write"] {
        let ops = run["totals"][dir]["ops"].as_u64().unwrap_or(0);
        assert!(ops > 0, "{dir}s: {}", run["totals"]);
    }
    let data: Vec<_> = files(&s.share().join("dir"))
        .into_iter()
        .filter(|(n, _)| n.ends_with(".dat"))
        .collect();
    assert_eq!(
        data,
        [("volbench.0.dat".to_string(), 8 << 20)],
        "volbench's own 8 MiB file in the share's dir"
    );
}

#[test]
fn smb_import_a_bad_unc_map_is_one_line_before_any_io() {
    let test = "smb_import_a_bad_unc_map_is_one_line_before_any_io";
    let Some(s) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let good = format!("\\\\srv\\share\\=smb://{USER}@127.0.0.1:{}/bench/", s.port);
    let with_pw = format!(
        "\\\\srv\\share\\=smb://{USER}:{PASSWORD}@127.0.0.1:{}/bench/",
        s.port
    );
    let cases: [(&str, &str, &str); 4] = [
        // Out of the mapped share.
        (
            &good,
            "\\\\srv\\share\\..\\x\\f.dat",
            "leaves the mapped share",
        ),
        // An existing file: the SMB back end runs on its own set.
        (&good, "\\\\srv\\share\\f.dat", "-cSIZE"),
        // A password on the command line, never echoed.
        (&with_pw, "\\\\srv\\share\\f.dat", "--map"),
        // A scheme volbench has no client for.
        (
            "\\\\srv\\share\\=ftp://srv/share/",
            "\\\\srv\\share\\f.dat",
            "ftp://",
        ),
    ];
    for (map, target, says) in cases {
        let mut line = vec!["diskspd", "--map", map, "-d1", "-W0", "-r", target];
        if says != "-cSIZE" {
            line.insert(3, "-c8M");
        }
        let o = vb(line).env(PW, PASSWORD).expect(exit::BAD_INPUT);
        let e = one_line(&o);
        assert!(e.contains(says), "{map} {target}: {e}");
        assert!(!e.contains(PASSWORD), "{e}");
        assert!(files(&s.share()).is_empty(), "{target}: no I/O: {e}");
    }
}
