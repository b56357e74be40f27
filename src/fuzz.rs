//! Fuzz targets: one function per parser of outside input, each taking any
//! bytes and holding what every parser promises: no panic, no unbounded
//! memory (each format's caps), a refusal that is one non-empty line of
//! bounded length, and whatever is accepted carried through to the views
//! and checks that read it next. Compiled only with the `fuzzing` feature.
//!
//! Three runners share these functions: `cargo fuzz` (`fuzz/`, one binary
//! per target, coverage-guided), `tests/e2e/fuzz.rs` (each target over its
//! seeds in `fuzz/corpus/TARGET/` and mutations of them, on stable Rust,
//! bounded in time for CI), and `scripts/fuzz` (either, for longer).
//!
//! A new parser of outside input is a function here, its row in `TARGETS`,
//! a seed directory `fuzz/corpus/NAME/` and a file in `fuzz/fuzz_targets/`
//! (docs/reference/fuzzing.md).

use std::path::{Path, PathBuf};

/// A fuzz target: panics when a promise is broken.
pub type Target = fn(&[u8]);

/// Every target, by the name its seed directory and `cargo fuzz` use.
pub const TARGETS: &[(&str, Target)] = &[
    ("fio", fio),
    ("vdbench", vdbench),
    ("diskspd", diskspd),
    ("hosts", hosts),
    ("suite", suite),
    ("catalogue", catalogue),
    ("profile", profile),
    ("trace", trace),
    ("trace_pipe", trace_pipe),
    ("result", result),
    ("protocol", protocol),
    ("sftp", sftp),
    ("nfs_reply", nfs_reply),
    ("smb_reply", smb_reply),
    ("smb_url", smb_url),
    ("nfs_url", nfs_url),
];

/// The longest refusal a parser may print: it names the file, the line and
/// the rule, never the whole input.
const MAX_MESSAGE: usize = 8192;

/// A refusal as the user would read it: one non-empty line (main.rs
/// escapes what would break it, so only its length and content matter).
fn refusal(what: &str, message: &str) {
    assert!(!message.trim().is_empty(), "{what}: an empty refusal");
    assert!(
        message.len() <= MAX_MESSAGE,
        "{what}: a refusal of {} bytes: {}...",
        message.len(),
        message.chars().take(200).collect::<String>()
    );
}

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Reads an include as the same small file: the fuzzer drives the parser,
/// not this machine's files.
fn read_fixed(path: &Path) -> crate::error::Result<String> {
    Ok(match path.file_name().and_then(|n| n.to_str()) {
        Some("inc.fio") => "[k]\ninclude inc.fio\n".into(),
        Some("inc.vdb") => "include=inc.vdb\n".into(),
        _ => String::new(),
    })
}

/// What an importer accepted renders as a suite that parses, or says why.
fn render_and_parse(imp: crate::input::import::Imported) {
    let toml = match crate::input::import::render::suite_toml(&imp, "s.toml", "s.toml.hosts") {
        Ok(t) => t,
        Err(e) => return refusal("rendered suite", &e.message),
    };
    if let Err(e) = crate::input::suite::parse("s.toml", &toml) {
        refusal("rendered suite", &e.message);
    }
}

/// fio job files.
pub fn fio(data: &[u8]) {
    use crate::input::import::{PathMap, fio};
    let env = |n: &str| (n == "HOME").then(|| "/tmp/vb-fuzz".to_string());
    let src = fio::Sources {
        env: &env,
        read: &read_fixed,
        cwd: PathBuf::from("/tmp"),
    };
    let t = text(data);
    let path = Path::new("/tmp/job.fio");
    match fio::import_text("job.fio", &t, path, &PathMap::default(), &src) {
        Ok(imp) => render_and_parse(imp),
        Err(e) => refusal("fio", &e.message),
    }
}

/// vdbench parameter files.
pub fn vdbench(data: &[u8]) {
    use crate::input::import::{PathMap, vdbench};
    let src = vdbench::Sources { read: &read_fixed };
    match vdbench::import_text("p.vdb", &text(data), &PathMap::default(), &src) {
        Ok(imp) => render_and_parse(imp),
        Err(e) => refusal("vdbench", &e.message),
    }
}

/// diskspd command lines (the words of the first line).
pub fn diskspd(data: &[u8]) {
    use crate::input::import::{PathMap, diskspd};
    let t = text(data);
    let args: Vec<String> = t
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    match diskspd::import_args(&args, &PathMap::default()) {
        Ok(imp) => render_and_parse(imp),
        Err(e) => refusal("diskspd", &e.message),
    }
}

/// Hosts files, the `--hosts` list of their first line, and `--hosts-from`
/// output.
pub fn hosts(data: &[u8]) {
    let t = text(data);
    if let Err(e) = crate::input::hosts::parse_file(&t, "hosts") {
        refusal("hosts file", &e.message);
    }
    if let Err(e) = crate::input::hosts::parse_list(t.lines().next().unwrap_or("")) {
        refusal("--hosts", &e.message);
    }
    if let Err(e) = crate::input::hosts::from_command::parse(&t) {
        refusal("--hosts-from", &e.message);
    }
}

/// Suite files, their includes read and expanded into a job as `suite
/// run` would. A line `#= NAME` starts another file the suite may include
/// as `file = "NAME"` (read from memory, never the disk), so includes,
/// cycles and nesting are fuzzed too.
pub fn suite(data: &[u8]) {
    let t = text(data);
    let mut files = Vec::new();
    let mut parts = t.split("\n#= ");
    let main = parts.next().unwrap_or_default();
    for part in parts {
        let (name, body) = part.split_once('\n').unwrap_or((part, ""));
        files.push((name.trim().to_string(), body.to_string()));
    }
    let parsed = match crate::input::suite::parse("s.toml", main) {
        Ok(s) => s,
        Err(e) => return refusal("suite", &e.message),
    };
    let mut reader = MemFiles(files);
    let path = std::path::Path::new("s.toml");
    match crate::input::suite::resolve("s.toml", main, Some(path), parsed, &mut reader, false) {
        Ok(r) => {
            let o = crate::input::suite::Overrides::default();
            if let Err(e) = crate::input::suite::expand(&r, &o) {
                refusal("suite expansion", &e.message);
            }
        }
        Err(e) => refusal("suite include", &e.message),
    }
}

/// Suite files an include may name, held in memory.
struct MemFiles(Vec<(String, String)>);

impl crate::input::suite::include::Reader for MemFiles {
    fn read(
        &mut self,
        _: &std::path::Path,
        name: &str,
    ) -> crate::error::Result<crate::input::suite::include::Source> {
        match self.0.iter().find(|(n, _)| n == name) {
            Some((n, body)) => Ok(crate::input::suite::include::Source {
                origin: n.clone(),
                text: body.clone(),
                key: n.clone(),
                path: std::path::PathBuf::from(n),
            }),
            None => Err(crate::error::VbError::input(format!(
                "cannot read suite file {}: no such file",
                crate::error::clip(name)
            ))),
        }
    }
}

/// The catalogue's service files.
pub fn catalogue(data: &[u8]) {
    if let Err(e) = crate::input::catalogue::parse("services.toml", &text(data)) {
        refusal("catalogue", &e.message);
    }
}

/// Capture profiles, and every view of one that is accepted.
pub fn profile(data: &[u8]) {
    match crate::result::profile::Profile::from_json(&text(data), "p.json") {
        Ok(p) => {
            for t in crate::output::profile::tables(&p) {
                let _ = t.to_terminal();
            }
            if let Err(e) = crate::report::profile::profile_html(&p) {
                refusal("profile report", &e.message);
            }
        }
        Err(e) => refusal("profile", &e),
    }
}

/// Traces in the three formats (`run --replay`: volbench's, fio's iolog,
/// blktrace), scanned whole as a run does before any I/O. The bytes are a
/// file only in memory (a memfd): the scan opens it by path, as a run does.
#[cfg(target_os = "linux")]
pub fn trace(data: &[u8]) {
    use crate::io::sys::fs::{MemfdFlags, memfd_create};
    let Ok(fd) = memfd_create("volbench-fuzz-trace", MemfdFlags::CLOEXEC) else {
        return;
    };
    let mut rest = data;
    while !rest.is_empty() {
        match rustix::io::write(&fd, rest) {
            Ok(0) | Err(_) => return,
            Ok(n) => rest = rest.get(n..).unwrap_or_default(),
        }
    }
    use std::os::fd::AsRawFd;
    let path = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    if let Err(e) = crate::io::replay::scan_mapped(&path, Default::default()) {
        refusal("trace", &e.message);
    }
}

/// Traces need a memfd: Linux only.
#[cfg(not(target_os = "linux"))]
pub fn trace(_: &[u8]) {}

/// `capture --trace`'s reading of the kernel's trace_pipe lines.
pub fn trace_pipe(data: &[u8]) {
    for line in text(data).lines() {
        let _ = crate::io::capture::trace::parse_line(line);
    }
}

/// result.json as `report` and `compare` read it, and every view of one
/// that is accepted.
pub fn result(data: &[u8]) {
    match crate::result::check::parse_result(data) {
        Ok(doc) => views(doc),
        Err(e) => refusal("result.json", &e),
    }
}

fn views(doc: crate::result::ResultDoc) {
    use crate::report;
    let mut sources = vec![
        crate::output::source::Source {
            label: "a".into(),
            path: "a".into(),
            doc: doc.clone(),
        },
        crate::output::source::Source {
            label: "b".into(),
            path: "b".into(),
            doc,
        },
    ];
    crate::output::source::label_sources(&mut sources);
    let _ = report::export::markdown(&sources);
    let _ = report::export::csv(&sources);
    let _ = report::export::json(&sources);
    let _ = report::html::report_html(&sources[..1]);
    let all = report::items(&sources);
    let c = report::compare::match_runs(&sources, &all);
    let _ = report::compare::table(&c, &sources, &all).to_terminal();
    let _ = report::compare::headlines(&c, &all);
    let _ = report::html::render(&report::compare::page(&sources));
    let _ = crate::output::summary(&sources[0].doc);
    let _ = report::intervals_csv::intervals_csv(&sources);
    for t in report::threads::tables(&sources) {
        let _ = (t.to_terminal(), t.to_markdown(), t.to_csv());
    }
}

/// The agent protocol: lines as the coordinator and the agent read them;
/// a run's results checked against their own workload, and merged when
/// they pass.
pub fn protocol(data: &[u8]) {
    use crate::remote::protocol::{FromAgent, ToAgent, decode, read_line};
    let mut r = std::io::BufReader::new(data);
    let mut buf = Vec::new();
    while let Ok(Some(())) = read_line(&mut r, &mut buf) {
        if let Ok(FromAgent::RunDone { results, .. }) = decode::<FromAgent>(&buf) {
            for t in &results {
                match crate::result::merge::check_run(&t.result, &t.result.workload) {
                    Ok(()) => {
                        let m = crate::result::merge::merge_runs(&[&t.result, &t.result]);
                        assert!(m.is_ok(), "a checked result does not merge: {m:?}");
                    }
                    Err(e) => refusal("agent result", &e),
                }
            }
        }
        let _ = decode::<ToAgent>(&buf);
    }
}

/// SFTP replies as the push to a Windows host reads them.
pub fn sftp(data: &[u8]) {
    let (_, e) = crate::remote::push::sftp::read_replies(data);
    refusal("sftp", &e.message);
}

/// NFS server replies as the client reads them off a connection: record
/// marking reassembled under the client's record bound, the RPC reply
/// header, then the results as NFSv3 (first byte even) or NFSv4.1 (odd)
/// for the request kind the second byte names, a READ's data found where
/// the transport finds it, and every set-up reply (MOUNT, EXPORT,
/// EXCHANGE_ID, CREATE_SESSION, the path walk, OPEN) over the same bytes.
pub fn nfs_reply(data: &[u8]) {
    use crate::proto::nfs::types::{DirPage, OP_KINDS};
    use crate::proto::nfs::{v3, v4::reply as v4};
    use crate::proto::rpc::{msg, record};
    let (Some(&version), Some(&k)) = (data.first(), data.get(1)) else {
        return;
    };
    let kind = OP_KINDS[k as usize % OP_KINDS.len()];
    // The client's own bound: its largest transfer and room for the rest.
    const MAX_RECORD: u32 = (1 << 20) + (64 << 10);
    let mut stream = &data[2..];
    let mut rec = Vec::new();
    let mut page = DirPage::default();
    while !stream.is_empty() {
        let used = match record::reassemble(stream, MAX_RECORD, &mut rec) {
            Ok(n) => n,
            Err(e) => return refusal("nfs record", &e.to_string()),
        };
        assert!(rec.len() <= MAX_RECORD as usize, "a record past its bound");
        stream = &stream[used..];
        let head = match msg::parse_reply(&rec) {
            Ok(h) => h,
            Err(e) => {
                refusal("nfs reply", &e.to_string());
                continue;
            }
        };
        let Ok(at) = head.outcome else {
            continue;
        };
        let results = rec.get(at..).unwrap_or_default();
        let one = |r: std::result::Result<(), String>| {
            if let Err(e) = r {
                refusal("nfs results", &e);
            }
        };
        page.clear();
        if version % 2 == 0 {
            let (head, data_len) = match v3::data_at(results) {
                Ok(Some((start, len))) if start + len <= results.len() => (&results[..start], len),
                _ => (results, 0),
            };
            one(v3::decode(kind, head, data_len, &mut page)
                .map(drop)
                .map_err(|e| e.to_string()));
            one(v3::decode_mnt(results).map(drop));
            one(v3::decode_exports(results, 4096)
                .map(drop)
                .map_err(|e| e.to_string()));
        } else {
            let (head, data_len) = match v4::data_at(results) {
                Ok(Some((start, len))) if start + len <= results.len() => (&results[..start], len),
                _ => (results, 0),
            };
            let mut seq = None;
            let r = v4::decode(kind, head, data_len, &mut page, &mut seq);
            one(r.map(drop).map_err(|e| e.to_string()));
            one(v4::exchange_id(results)
                .map(drop)
                .map_err(|e| e.to_string()));
            one(v4::create_session(results)
                .map(drop)
                .map_err(|e| e.to_string()));
            one(v4::walk(results, 1 + k as usize % 4)
                .map(drop)
                .map_err(|e| e.to_string()));
            one(v4::open_fh(results, &mut seq)
                .map(drop)
                .map_err(|e| e.to_string()));
        }
        // A directory page holds no more entries than its reply had room
        // for (each at least a cookie, a file id and a name's length).
        assert!(
            page.entries.len() <= rec.len() / 16 + 1,
            "entries past the reply's size"
        );
    }
}

/// SMB2 responses as the client reads them: the header, every response
/// decoder over the same message (each checks its own StructureSize), the
/// variable parts they point at (directory entries, file and volume
/// information, a file's owner, the server's interfaces, the validation of the
/// negotiation), the transform header, and the security blobs (SPNEGO
/// and the NTLM challenge inside it).
pub fn smb_reply(data: &[u8]) {
    use crate::proto::smb::auth::{ntlm, spnego};
    use crate::proto::smb::header::{HEADER_LEN, decode_header, decode_transform};
    use crate::proto::smb::msg::{dir, file, info, ioctl, negotiate, security, session};
    let one = |what: &str, r: std::result::Result<(), crate::proto::smb::wire::Malformed>| {
        if let Err(e) = r {
            refusal(what, &e.to_string());
        }
    };
    one("header", decode_header(data).map(drop));
    one("transform", decode_transform(data).map(drop));
    one("negotiate", negotiate::decode_negotiate(data).map(drop));
    one(
        "session setup",
        session::decode_session_setup(data).map(drop),
    );
    one("tree connect", session::decode_tree_connect(data).map(drop));
    one("empty", session::decode_empty(data).map(drop));
    one("create", file::decode_create(data).map(drop));
    one("close", file::decode_close(data).map(drop));
    one("write", file::decode_write(data).map(drop));
    if let Some(fixed) = data.get(HEADER_LEN..) {
        one("read", file::decode_read_fixed(fixed).map(drop));
    }
    one("set info", info::decode_set_info(data).map(drop));
    match dir::decode_query_directory(data) {
        Ok(buf) => {
            if let Ok(v) = dir::decode_entries(buf) {
                assert!(v.len() <= buf.len() / 80, "entries past the buffer");
            }
            // The readdir's visitor: what it hands on is inside the buffer.
            let each = dir::each_entry(buf, |e| {
                assert!(e.name.len() < buf.len(), "a name past the buffer");
            });
            if let Ok(n) = each {
                assert!(n <= buf.len() / 80, "entries past the buffer");
            }
        }
        Err(e) => refusal("query directory", &e.to_string()),
    }
    if let Ok(buf) = info::decode_query_info(data) {
        one("file info", info::decode_file_all(buf).map(drop));
        one("fs info", info::decode_fs_full_size(buf).map(drop));
        match security::decode_owner(buf) {
            // What is compared, and named in no message, must print.
            Ok(Some(sid)) => assert!(sid.to_string().len() <= 200, "a SID past its size"),
            Ok(None) => {}
            Err(e) => refusal("owner", &e.to_string()),
        }
    }
    if let Ok(buf) = ioctl::decode_ioctl(data) {
        one("interfaces", ioctl::decode_interfaces(buf).map(drop));
        one("validate", ioctl::decode_validate_negotiate(buf).map(drop));
    }
    // The security blob as SESSION_SETUP carries it, and bare.
    let blob = session::decode_session_setup(data)
        .map(|r| r.blob)
        .unwrap_or_else(|_| data.to_vec());
    match spnego::decode_server_token(&blob) {
        Ok(t) => one("challenge", ntlm::decode_challenge(&t.token).map(drop)),
        Err(e) => refusal("spnego", &e.to_string()),
    }
    one("challenge", ntlm::decode_challenge(&blob).map(drop));
}

/// The target named `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// `--target smb://...` as a user types it: parsed by the one parser, or
/// refused in one line; what is accepted shows (in messages and results)
/// as a URL that parses back to the same server, share and directory, each
/// component one name (no separator, stream or wildcard), the channels
/// within their bound, the password never a part of it.
pub fn smb_url(data: &[u8]) {
    use crate::proto::smb::url::{self, MAX_CHANNELS, component_ok};
    let text = text(data);
    let u = match url::parse(&text) {
        Ok(u) => u,
        Err(e) => return refusal("smb url", &e),
    };
    assert!(component_ok(&u.share), "share {:?}", u.share);
    assert!(u.path.iter().all(|c| component_ok(c)), "{:?}", u.path);
    assert!(u.channels.is_none_or(|n| (1..=MAX_CHANNELS).contains(&n)));
    let shown = u.to_string();
    let again = url::parse(&shown).unwrap_or_else(|e| panic!("{shown} does not parse back: {e}"));
    assert_eq!(
        (
            &again.host,
            again.port,
            &again.user,
            &again.share,
            &again.path
        ),
        (&u.host, u.port, &u.user, &u.share, &u.path),
        "{shown}"
    );
}

/// `--target nfs://...` as a user types it (or fio's `nfs_url=`): parsed by
/// the one parser, or refused in one bounded line; what is accepted shows
/// as a URL that parses back to the same server, port and path, each path
/// component one name, the connections and transfer sizes within bounds.
pub fn nfs_url(data: &[u8]) {
    use crate::proto::nfs::url::{self, MAX_CONNECTIONS, MAX_XFER, MIN_XFER};
    let text = text(data);
    let u = match url::parse(&text) {
        Ok(u) => u,
        Err(e) => return refusal("nfs url", &e),
    };
    assert!(
        u.path
            .iter()
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains(['/', '\0'])),
        "{:?}",
        u.path
    );
    assert!(
        u.nconnect
            .is_none_or(|n| (1..=MAX_CONNECTIONS).contains(&n))
    );
    for size in [u.rsize, u.wsize].into_iter().flatten() {
        assert!((MIN_XFER..=MAX_XFER).contains(&size), "{size}");
    }
    let shown = u.to_string();
    let again = url::parse(&shown).unwrap_or_else(|e| panic!("{shown} does not parse back: {e}"));
    assert_eq!(
        (&again.host, again.port, &again.path),
        (&u.host, u.port, &u.path),
        "{shown}"
    );
}
