//! A fio job for fio's nfs engine (`ioengine=nfs` with libnfs's
//! `nfs_url=`) run by `volbench fio` against a real server (nfs-ganesha,
//! `common::nfs`): the files land in the directory nfs_url and
//! `directory=` name on the server, the counts are the job's, over NFSv3
//! and libnfs's `version=4` (volbench's NFSv4.1, said in a note).

use std::path::Path;

use volbench::error::exit;

use crate::common::nfs::NfsServer;
use crate::common::{stderr, vb};

/// The data files on the server's side of `dir`, with their sizes.
fn data_files(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let len = e.metadata().ok()?.len();
            name.ends_with(".dat").then_some((name, len))
        })
        .collect();
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

#[test]
fn a_fio_nfs_job_runs_on_the_server_its_nfs_url_names() {
    let test = "a_fio_nfs_job_runs_on_the_server_its_nfs_url_names";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    for (libnfs, ours) in [("3", "3"), ("4", "4.1")] {
        let dir = format!("fio-v{libnfs}");
        let url = format!(
            "nfs://127.0.0.1{}?version={libnfs}&nfsport={}&mountport={}",
            srv.export.display(),
            srv.port,
            srv.mount_port
        );
        // Two jobs of two 2 MiB files each: 8 MiB written in 64 KiB blocks,
        // then 1 MiB per job read back at random in 4 KiB blocks.
        let job = d.path().join(format!("{dir}.fio"));
        std::fs::write(
            &job,
            format!(
                "[global]\nioengine=nfs\nnfs_url={url}\ndirectory={dir}\nsize=4m\nnrfiles=2\n\
                 numjobs=2\niodepth=4\n\n[write]\nrw=write\nbs=64k\n\n\
                 [read]\nstonewall\nrw=randread\nbs=4k\nio_size=1m\n"
            ),
        )
        .unwrap();
        let o = vb(["fio", "--json"]).arg(&job).expect(exit::OK);
        let e = stderr(&o);
        // What differs from fio is said: the version, and the layout.
        assert_eq!(
            e.contains("nfs_url's version=4: version=4.1"),
            libnfs == "4",
            "v{libnfs}: {e}"
        );
        assert!(e.contains("lays no file out"), "v{libnfs}: {e}");
        let doc: serde_json::Value =
            serde_json::from_slice(&o.stdout).expect("the result as JSON on stdout");
        let runs = doc["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 2, "v{libnfs}: {doc}");
        for run in runs {
            assert_eq!(run["engine"], "nfs", "v{libnfs}");
            assert_eq!(run["protocol"]["version"], ours, "v{libnfs}");
        }
        assert_eq!(runs[0]["name"], "write");
        assert_eq!(ops_bytes(&runs[0], "write"), (128, 8 << 20), "v{libnfs}");
        assert_eq!(ops_bytes(&runs[0], "read"), (0, 0), "v{libnfs}");
        assert_eq!(runs[1]["name"], "read");
        assert_eq!(ops_bytes(&runs[1], "read"), (512, 2 << 20), "v{libnfs}");
        assert_eq!(ops_bytes(&runs[1], "write"), (0, 0), "v{libnfs}");
        // The job's files, on the server, in the directory the job names
        // below the URL's path: one per job and file, 2 MiB each.
        let files = data_files(&srv.export.join(&dir));
        let want: Vec<(String, u64)> = (0..4)
            .map(|i| (format!("volbench.{i}.dat"), 2 << 20))
            .collect();
        assert_eq!(files, want, "v{libnfs}");
        assert!(
            data_files(&srv.export).is_empty(),
            "v{libnfs}: nothing beside the directory"
        );
    }
}

#[test]
fn a_fio_nfs_job_volbench_cannot_run_as_fio_would_is_one_line_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    for (body, want) in [
        (
            "nfs_url=nfs://127.0.0.1/export/x\nrw=read\n",
            "line 3: nfs_url=nfs://127.0.0.1/export/x: only fio's nfs engine reads it",
        ),
        (
            "ioengine=nfs\nrw=read\n",
            "line 3: ioengine=nfs: fio's nfs engine needs nfs_url=",
        ),
        (
            "ioengine=nfs\nnfs_url=nfs://127.0.0.1/export/x?sec=krb5\nrw=read\n",
            "line 4: nfs_url's sec=krb5: not supported yet (Kerberos",
        ),
    ] {
        let job = d.path().join("job.fio");
        std::fs::write(&job, format!("[j]\nsize=1m\n{body}")).unwrap();
        let o = vb(["fio"]).arg(&job).expect(exit::BAD_INPUT);
        let e = stderr(&o);
        assert!(e.contains(want), "{body}: {e}");
        let said: Vec<&str> = e.lines().filter(|l| !l.contains(": note: ")).collect();
        assert_eq!(said.len(), 1, "{body}: {e}");
    }
}
