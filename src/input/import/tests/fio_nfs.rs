//! fio's nfs engine (`ioengine=nfs` with libnfs's `nfs_url=`): the job
//! becomes a run on volbench's own NFS client at the same server and path,
//! each URL argument mapped by its row, and a job with one of the two
//! without the other refused by file and line.

use super::*;
use crate::spec::{EngineChoice, EngineKind};

const URL: &str = "nfs://filer.example.com/export/bench";
/// What volbench's URL adds where libnfs's defaults decide.
const SIZES: &str = "rsize=1048576&wsize=1048576";

fn nfs_job(url: &str, extra: &str) -> String {
    format!(
        "[global]\nioengine=nfs\nnfs_url={url}\nsize=1g\nbs=4k\niodepth=16\n{extra}\n\
         [randread]\nrw=randread\nnumjobs=4\ntime_based\nruntime=60\n"
    )
}

/// The one refusal an import gives, its file and line first.
fn one_refusal(text: &str) -> String {
    let e = fio_err(text);
    assert_eq!(e.matches("/jobs/job.fio line ").count(), 1, "{e}");
    e
}

fn printed_about(imp: &Imported, what: &str) -> Vec<String> {
    imp.printed()
        .into_iter()
        .filter(|n| n.contains(what))
        .collect()
}

#[test]
fn an_nfs_job_runs_on_volbenchs_client_at_the_same_server_and_path() {
    let imp = fio_ok(&nfs_job(
        &format!("{URL}?version=3&uid=1000&gid=100&nfsport=2049&mountport=20048"),
        "nrfiles=2",
    ));
    assert_eq!(
        imp.target,
        format!("{URL}?version=3&uid=1000&gid=100&nfsport=2049&mountport=20048&{SIZES}")
    );
    let j = job_of(&imp);
    assert_eq!(j.engine, EngineChoice::Only(EngineKind::Nfs));
    assert_eq!(j.target.path, PathBuf::from(&imp.target));
    // libnfs keeps no cache, nor does volbench's client.
    assert!(j.target.direct);
    let r = &j.runs[0];
    assert_eq!((r.rw, r.threads, r.iodepth), (Pattern::Randread, 4, 16));
    // Each job its own nrfiles files: 4 jobs x 2, the size x 4 jobs.
    assert_eq!(r.files, Some(8));
    assert_eq!(j.target.size, 4 << 30);
    let text = render::suite_toml(&imp, "s.toml", "h.txt").unwrap();
    for said in [
        "nfs_url's version=3 -> version=3",
        "nfs_url's uid=1000 -> uid=1000 in volbench's URL",
        "nfs_url's gid=100 -> gid=100",
        "nfs_url's nfsport=2049 -> nfsport=2049",
        "nfs_url's mountport=20048 -> mountport=20048",
        "ioengine=nfs -> engine = \"nfs: volbench's own NFS client",
        "rsize and wsize 1 MiB where the URL gives none, as libnfs asks",
    ] {
        assert!(text.contains(said), "{said} not said:\n{text}");
    }
    // The arguments volbench's URL has are exact; what differs is noted
    // once, on nfs_url: volbench lays out its own set, where fio's nfs
    // engine lays none out.
    let notes = imp.printed();
    assert!(!notes.iter().any(|n| n.contains("nfs_url's")), "{notes:?}");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains(&format!("line 3: nfs_url={URL}?"))
            && notes[0].contains(&format!("the target {URL}: volbench's own NFS client"))
            && notes[0].contains("volbench.N.dat, one per job and nrfiles")
            && notes[0].contains("lays no file out"),
        "{notes:?}"
    );
}

#[test]
fn libnfs_version_4_is_nfsv4_0_and_runs_as_volbenchs_4_1_with_a_note() {
    let imp = fio_ok(&nfs_job(&format!("{URL}?version=4"), ""));
    assert_eq!(imp.target, format!("{URL}?version=4.1&{SIZES}"));
    let v = printed_about(&imp, "nfs_url's version=4");
    assert!(
        v.len() == 1 && v[0].contains("NFSv4.0") && v[0].contains("NFSv4.1"),
        "{v:?}"
    );
    // No version: NFSv3 in both, no key written.
    assert_eq!(fio_ok(&nfs_job(URL, "")).target, format!("{URL}?{SIZES}"));
    let e = one_refusal(&nfs_job(&format!("{URL}?version=4.2"), ""));
    assert!(
        e.contains("line 3: nfs_url's version=4.2: libnfs takes version 3 or 4"),
        "{e}"
    );
}

#[test]
fn directory_and_filename_name_files_below_the_urls_path() {
    // fio's nfs engine names its files from its mount: directory= is below
    // the URL's path whether it starts with '/' or not.
    for d in ["/runs/a", "runs/a", "./runs//a/"] {
        let imp = fio_ok(&nfs_job(URL, &format!("directory={d}")));
        assert_eq!(imp.target, format!("{URL}/runs/a?{SIZES}"), "{d}");
        let n = printed_about(&imp, "nfs_url=");
        assert!(
            n.len() == 1 && n[0].contains(&format!("the target {URL}/runs/a:")),
            "{n:?}"
        );
        let text = render::suite_toml(&imp, "s.toml", "h.txt").unwrap();
        assert!(
            text.contains(&format!(
                "directory={d} -> the directory below nfs_url's path"
            )),
            "{text}"
        );
    }
    // One named file: volbench's own file in its directory, shared.
    let imp = fio_ok(&nfs_job(URL, "directory=runs\nfilename=sub/data.bin"));
    assert_eq!(imp.target, format!("{URL}/runs/sub?{SIZES}"));
    let j = job_of(&imp);
    assert_eq!(j.runs[0].files, Some(1));
    assert_eq!(j.target.size, 1 << 30, "one file the jobs share");
    assert_eq!(printed_about(&imp, "shared by the jobs").len(), 1);
    // Several names in one directory: a set of that many files.
    let imp = fio_ok(&nfs_job(URL, "filename=a:b:c"));
    assert_eq!(imp.target, format!("{URL}?{SIZES}"));
    assert_eq!(job_of(&imp).runs[0].files, Some(3));
    // Names that need escaping in a URL are escaped.
    let imp = fio_ok(&nfs_job(URL, "directory=my dir?"));
    assert_eq!(imp.target, format!("{URL}/my%20dir%3F?{SIZES}"));
    // What volbench's file set cannot express, by file and line.
    for (extra, want) in [
        (
            "directory=../up",
            "line 7: directory=../up: '..' would leave",
        ),
        ("filename=a/../../x", "line 7: filename=a/../../x: '..'"),
        ("filename=a/x:b/y", "files in several directories"),
        (
            "filename=a:b\nnrfiles=3",
            "line 8: nrfiles=3: filename= names 2 files",
        ),
    ] {
        let e = one_refusal(&nfs_job(URL, extra));
        assert!(e.contains(want), "{extra}: {e}");
    }
}

#[test]
fn url_arguments_map_by_their_rows_and_the_others_are_refused_or_noted() {
    // libnfs's defaults are volbench's: exact.
    let imp = fio_ok(&nfs_job(
        &format!("{URL}?timeo=600&retrans=2&debug=0&xprtsec=none&rsize=65536"),
        "",
    ));
    assert_eq!(imp.target, format!("{URL}?rsize=65536&wsize=1048576"));
    assert!(imp.printed().iter().all(|n| !n.contains("nfs_url's")));
    // Others change nothing measured, or are said how they differ.
    let imp = fio_ok(&nfs_job(
        &format!(
            "{URL}?timeo=100&retrans=5&autoreconnect=-1&tcp-syncnt=3&debug=2&dircache=0&\
             readdir-buffer=8192&auto-traverse-mounts=0&rsize=5000&wsize=4194304"
        ),
        "",
    ));
    assert_eq!(imp.target, format!("{URL}?rsize=8192&wsize=4194304"));
    for arg in [
        "timeo=100",
        "retrans=5",
        "autoreconnect=-1",
        "tcp-syncnt=3",
        "debug=2",
        "dircache=0",
        "readdir-buffer=8192",
        "auto-traverse-mounts=0",
    ] {
        assert_eq!(
            printed_about(&imp, &format!("nfs_url's {arg}:")).len(),
            1,
            "{arg}: {:?}",
            imp.printed()
        );
    }
    let rsize = printed_about(&imp, "nfs_url's rsize=5000");
    assert!(rsize[0].contains("libnfs asks for 8192"), "{rsize:?}");
    let wsize = printed_about(&imp, "nfs_url's wsize=4194304");
    assert!(wsize[0].contains("at most 1 MiB per call"), "{wsize:?}");
    // The port after the server is the NFS port in both; libnfs takes
    // nfsport= over it, and so does the import.
    let imp = fio_ok(&nfs_job(
        "nfs://[fd00::5]:2049/export/bench?nfsport=2050",
        "",
    ));
    assert_eq!(
        imp.target,
        format!("nfs://[fd00::5]/export/bench?nfsport=2050&{SIZES}")
    );
    let imp = fio_ok(&nfs_job("nfs://filer:2049/export/bench", ""));
    assert_eq!(imp.target, format!("nfs://filer:2049/export/bench?{SIZES}"));
    // Refused, each by its name and the job file's line.
    for (url, want) in [
        (
            format!("{URL}?readonly"),
            "nfs_url's readonly: not supported yet (a read-only mount",
        ),
        (
            format!("{URL}?sec=krb5p"),
            "nfs_url's sec=krb5p: not supported yet (Kerberos",
        ),
        (
            format!("{URL}?if=eth1"),
            "nfs_url's if=eth1: not supported yet (binding",
        ),
        (
            format!("{URL}?xprtsec=tls"),
            "nfs_url's xprtsec=tls: not supported yet (RPC over TLS)",
        ),
        (
            format!("{URL}?nconnect=4"),
            "nfs_url's nconnect=4: not a libnfs argument",
        ),
        (
            format!("{URL}?vers=3"),
            "line 3: vers: not supported yet (no volbench equivalent of this libnfs URL argument)",
        ),
        (format!("{URL}?uid=1&uid=2"), "nfs_url's uid=2: given twice"),
        (
            format!("{URL}?uid=me"),
            "nfs_url's uid=me: must be a whole number",
        ),
        (
            format!("{URL}?rsize=big"),
            "nfs_url's rsize=big: must be a whole number of bytes",
        ),
        ("nfs://me@filer/export".to_string(), "Kerberos principal"),
        ("nfs://filer".to_string(), "names no export"),
        ("nfs://filer/".to_string(), "names no export"),
        ("nfs:///export".to_string(), "names no server"),
        ("http://filer/export".to_string(), "starts with nfs://"),
    ] {
        let e = one_refusal(&nfs_job(&url, ""));
        assert!(e.contains(want), "{url}: {e}");
    }
}

#[test]
#[cfg(unix)]
fn a_url_volbench_cannot_take_is_refused_with_volbenchs_reason() {
    let e = one_refusal(&nfs_job(&format!("{URL}?nfsport=70000"), ""));
    assert!(
        e.contains("line 3: nfs_url=")
            && e.contains("as volbench's target")
            && e.contains("out of range"),
        "{e}"
    );
    let e = one_refusal(&nfs_job("nfs://filer/export/../etc", ""));
    assert!(e.contains("'.' and '..' are not allowed"), "{e}");
}

#[test]
fn nfs_url_without_the_nfs_engine_and_the_engine_without_it_are_one_refusal_each() {
    let e = one_refusal(&format!(
        "[global]\nnfs_url={URL}\nsize=1g\n[a]\nrw=read\n[b]\nrw=write\nstonewall\n"
    ));
    assert!(
        e.contains(&format!(
            "line 2: nfs_url={URL}: only fio's nfs engine reads it"
        )) && e.contains("psync (fio's default)"),
        "{e}"
    );
    let e = one_refusal(&format!(
        "[j]\nioengine=libaio\nnfs_url={URL}\nsize=1g\nrw=read\n"
    ));
    assert!(e.contains("ioengine is libaio (give ioengine=nfs)"), "{e}");
    let e =
        one_refusal("[global]\nioengine=nfs\nsize=1g\n[a]\nrw=read\n[b]\nrw=write\nstonewall\n");
    assert!(
        e.contains("line 2: ioengine=nfs: fio's nfs engine needs nfs_url="),
        "{e}"
    );
}

#[test]
fn direct_and_sync_say_what_fios_nfs_engine_does_with_them() {
    // libnfs has no cache: direct=0 changes nothing, the run is direct.
    let imp = fio_ok(&nfs_job(URL, "direct=0"));
    assert!(job_of(&imp).target.direct);
    let text = render::suite_toml(&imp, "s.toml", "h.txt").unwrap();
    assert!(
        text.contains("direct=0 -> no effect with fio's nfs engine")
            && !text.contains("direct = false"),
        "{text}"
    );
    // fio's nfs engine opens without O_SYNC: its writes stay UNSTABLE.
    let imp = fio_ok(&nfs_job(URL, "sync=1"));
    assert_eq!(job_of(&imp).target.write_sync, crate::spec::WriteSync::None);
    let s = printed_about(&imp, "sync=1");
    assert!(s.len() == 1 && s[0].contains("without O_SYNC"), "{s:?}");
}

#[test]
fn nfs_jobs_on_different_urls_or_replaying_a_log_are_refused() {
    let e = one_refusal(&format!(
        "[global]\nioengine=nfs\nsize=1g\n[a]\nnfs_url={URL}\nrw=write\n\
         [b]\nnfs_url={URL}2\nrw=read\nstonewall\n"
    ));
    assert!(e.contains("[b]: its target differs from [a]'s"), "{e}");
    let e = fio_with(
        "[r]\nioengine=nfs\nread_iolog=trace.log\n",
        &[("/jobs/trace.log", "fio version 2 iolog\n")],
        &no_env,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("ioengine=nfs: not supported yet (replaying a log over NFS)"),
        "{e}"
    );
}
