//! fio's nfs engine (`ioengine=nfs`, through libnfs): its `nfs_url=` read
//! by libnfs's rules (`nfs://[user@]server[:port]/path[?arg=val&...]`),
//! each URL argument through its row, and where the job's files go:
//! volbench's own `nfs://` target at the same server and path. fio mounts
//! the URL's whole path and names its files from there (`directory=` and
//! `filename=` below it, even when they start with '/'); to fio the engine
//! is diskless, so it lays nothing out: its writes create the files as
//! they go and its reads need files an earlier job wrote.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use super::super::table::{self, Row, Rule, Said, Verdict, row};
use super::super::{Mapping, Notes};
use super::files::{FileList, split};
use super::parse::{Opt, Read};

use Rule::{Always, Judge, Map};
use Verdict::{Exact, Note, Refuse};

/// What libnfs asks for per READ and WRITE unless told (its default
/// rsize and wsize), and the most volbench's client sends in one call.
const ONE_MIB: u64 = 1 << 20;
/// libnfs's smallest rsize and wsize, and the step it rounds them down to.
const LIBNFS_MIN_XFER: u64 = 8192;
const XFER_STEP: u64 = 4096;

/// What volbench does where fio's job file leaves it to libnfs's
/// defaults, said with the target.
const LAYOUT: &str = "created and filled before it measures (fio's nfs engine lays no file out: \
                      its writes create the files as they go, its reads need files an earlier \
                      job wrote)";
const WAITS: &str = "volbench's client waits 60 s for a reply and sends a call at most 3 times \
                     (libnfs's defaults, timeo=600 and retrans=2), 60 s for a lost server to \
                     come back and 10 s for a connection: a server that answers in time sees no \
                     difference";
const LOOKUPS: &str = "no effect on what is measured: the files are looked up before the run and \
                       no directory is listed while it runs";
const NESTED: &str = "volbench reaches the URL's directory through the deepest export holding it \
                      (NFSv3) or from the server's root (NFSv4.1), and keeps its files in that one \
                      directory";
const KERBEROS: &str = "Kerberos security (volbench's client speaks AUTH_SYS: give uid= and gid=)";

/// The URL's arguments as their rows read them.
#[derive(Debug, Default)]
pub(crate) struct UrlRead {
    said: Vec<Mapping>,
    /// volbench's URL query, key and value, in the order given.
    query: Vec<(String, String)>,
}

impl Said for UrlRead {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

impl UrlRead {
    fn set(&mut self, o: &Opt, value: &str) {
        self.query.push((o.key.clone(), value.to_string()));
    }

    fn has(&self, key: &str) -> bool {
        self.query.iter().any(|(k, _)| k == key)
    }
}

/// libnfs's URL arguments (its README's list), one row each.
pub(crate) const URL_ARGS: &[Row<UrlRead>] = &[
    row("version", Map(version)),
    row("uid", Map(same)),
    row("gid", Map(same)),
    row("nfsport", Map(same)),
    row("mountport", Map(same)),
    row("rsize", Map(xfer)),
    row("wsize", Map(xfer)),
    row("nconnect", Map(nconnect)),
    row("timeo", Judge(timeo)),
    row("retrans", Judge(retrans)),
    row("autoreconnect", Always(Note(WAITS))),
    row("tcp-syncnt", Always(Note(WAITS))),
    row("debug", Judge(debug)),
    row("dircache", Always(Note(LOOKUPS))),
    row("readdir-buffer", Always(Note(LOOKUPS))),
    row("auto-traverse-mounts", Always(Note(NESTED))),
    row("xprtsec", Judge(xprtsec)),
    row("sec", Always(Refuse(KERBEROS))),
    row("if", Always(Refuse("binding to one network interface"))),
    row(
        "readonly",
        Always(Refuse(
            "a read-only mount: volbench creates and fills its own files before it measures",
        )),
    ),
];

/// `nfs_url=`: read with the job's place, once its engine is known.
pub(super) fn nfs_url(opt: &Opt, r: &mut Read, _: &mut Notes) {
    r.nfs_url = Some(opt.clone());
}

/// `version=`: libnfs's 4 is NFSv4.0, which volbench does not speak.
fn version(o: &Opt, u: &mut UrlRead, notes: &mut Notes) {
    match o.val().trim() {
        "3" => {
            u.set(o, "3");
            u.said
                .push(o.mapping("version=3: NFSv3 with MOUNT, as libnfs", true));
        }
        "4" => {
            u.set(o, "4.1");
            u.said.push(o.mapping(
                "version=4.1: libnfs's version 4 is NFSv4.0 (SETCLIENTID, no sessions); volbench \
                 speaks NFSv4.1 (sessions, RFC 8881): the same OPEN, READ, WRITE and COMMIT, the \
                 calls in flight bounded by the server's session slots too",
                false,
            ));
        }
        _ => o.refuse(notes, "libnfs takes version 3 or 4"),
    }
}

/// uid, gid, nfsport, mountport: the same keys in volbench's URL (whose
/// parser bounds them).
fn same(o: &Opt, u: &mut UrlRead, notes: &mut Notes) {
    let v = o.val().trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return o.refuse(notes, "must be a whole number");
    }
    u.set(o, v);
    u.said.push(o.mapping(
        format!("{}={v} in volbench's URL, the same meaning", o.key),
        true,
    ));
}

/// rsize, wsize: libnfs asks for at least 8 KiB, rounded down to 4 KiB
/// steps, then takes the server's maximum if smaller; volbench's URL takes
/// the value libnfs would ask for.
fn xfer(o: &Opt, u: &mut UrlRead, notes: &mut Notes) {
    let Ok(n) = o.val().trim().parse::<u64>() else {
        return o.refuse(notes, "must be a whole number of bytes");
    };
    let asked = n.max(LIBNFS_MIN_XFER) / XFER_STEP * XFER_STEP;
    u.set(o, &asked.to_string());
    let call = if o.key == "rsize" { "READ" } else { "WRITE" };
    let mut how = format!(
        "{}={asked}: the largest {call} asked for, bounded by the server's maximum, as libnfs",
        o.key
    );
    if asked != n {
        how.push_str(&format!(
            " (libnfs asks for {asked}: at least 8 KiB, in 4 KiB steps)"
        ));
    }
    if asked > ONE_MIB {
        how.push_str("; volbench's client sends at most 1 MiB per call");
    }
    u.said.push(o.mapping(how, asked == n && asked <= ONE_MIB));
}

fn nconnect(o: &Opt, _: &mut UrlRead, notes: &mut Notes) {
    o.refuse(
        notes,
        "not a libnfs argument, so fio's nfs engine refuses this URL (volbench's connections per \
         thread: run the imported suite with --nfs-connections N)",
    );
}

fn timeo(o: &Opt) -> Verdict {
    match o.val().trim() {
        "600" => Exact(WAITS),
        _ => Note(WAITS),
    }
}

fn retrans(o: &Opt) -> Verdict {
    match o.val().trim() {
        "2" => Exact(WAITS),
        _ => Note(WAITS),
    }
}

fn debug(o: &Opt) -> Verdict {
    match o.val().trim() {
        "0" => Exact("quiet, as volbench's client"),
        _ => Note("libnfs's debug output; volbench's client prints none"),
    }
}

fn xprtsec(o: &Opt) -> Verdict {
    match o.val().trim() {
        "none" => Exact("no TLS, as volbench's client"),
        _ => Refuse("RPC over TLS"),
    }
}

/// nfs_url as libnfs reads it.
struct FioUrl {
    /// The server as written (an IPv6 address in its brackets).
    host: String,
    /// The port after the server: libnfs's NFS port, as volbench's.
    port: Option<String>,
    /// The path's components as written (escapes kept: volbench's URL
    /// decodes them as libnfs does).
    path: Vec<String>,
    args: UrlRead,
}

fn read_url(opt: &Opt, notes: &mut Notes) -> Option<FioUrl> {
    let refuse = |notes: &mut Notes, why: &str| {
        opt.refuse(notes, why);
        None
    };
    let v = opt.val().trim();
    let Some(rest) = v.strip_prefix("nfs://") else {
        return refuse(notes, "a libnfs URL starts with nfs://");
    };
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (auth, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if auth.contains('@') {
        return refuse(
            notes,
            "a user name before the server is libnfs's Kerberos principal; volbench's client \
             speaks AUTH_SYS (give uid= and gid=)",
        );
    }
    let (host, port) = match auth.strip_prefix('[').and_then(|a| a.split_once(']')) {
        Some((h, tail)) => (format!("[{h}]"), tail.strip_prefix(':')),
        None => match auth.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (auth.to_string(), None),
        },
    };
    if host.is_empty() || host == "[]" {
        return refuse(notes, "names no server");
    }
    let path: Vec<String> = path
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    if path.is_empty() {
        return refuse(
            notes,
            "names no export (nfs://SERVER/EXPORT[/DIR]; volbench does not take the server's root)",
        );
    }
    let mut args = UrlRead::default();
    let mut seen: Vec<&str> = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, val) = part.split_once('=').unwrap_or((part, ""));
        let arg = Opt::written_as(&opt.at, k, val, &format!("nfs_url's {part}"));
        if seen.contains(&k) {
            arg.refuse(
                notes,
                "given twice in the URL (libnfs takes the last): give it once",
            );
            continue;
        }
        seen.push(k);
        table::read(URL_ARGS, &arg, &mut args, notes, "libnfs URL argument");
    }
    let mut port = port.map(str::to_string);
    if port.is_some() && args.has("nfsport") {
        // libnfs reads the arguments after the server: nfsport= wins.
        port = None;
        args.said.push(opt.mapping(
            "libnfs takes nfsport= over the port after the server, and so does volbench's URL here",
            true,
        ));
    }
    Some(FioUrl {
        host,
        port,
        path,
        args,
    })
}

/// A name on the server as one component of a URL's path.
fn escaped(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The components of a name below the URL's path: fio's nfs engine names
/// files from its mount, so a leading '/' is the mount's root too.
fn below(raw: &str, opt: &Opt, notes: &mut Notes) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for c in raw.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if c == ".." {
            opt.refuse(
                notes,
                "'..' would leave the directory nfs_url names; volbench reaches nothing outside it",
            );
            return None;
        }
        out.push(escaped(c));
    }
    Some(out)
}

/// The URL of the directory `dir` (components below nfs_url's path), with
/// the query, and without it for the notes.
fn url_of(u: &FioUrl, dir: &[String]) -> (String, String) {
    let mut base = format!("nfs://{}", u.host);
    if let Some(p) = &u.port {
        base.push(':');
        base.push_str(p);
    }
    for c in u.path.iter().chain(dir) {
        base.push('/');
        base.push_str(c);
    }
    let query: Vec<String> = u
        .args
        .query
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if query.is_empty() {
        (base.clone(), base)
    } else {
        (format!("{base}?{}", query.join("&")), base)
    }
}

/// Replaces how `opt` was said to map.
fn renote(r: &mut Read, opt: &Opt, how: &str, exact: bool) {
    r.mapped
        .retain(|m| !(m.at == opt.at && m.option == opt.text()));
    r.say(opt, how, exact);
}

/// Where a job with fio's nfs engine, or with nfs_url, does its I/O: the
/// target, whether the jobs share one named file, and a named list; a job
/// with the engine and not nfs_url, or nfs_url and not the engine, is
/// refused.
pub(super) fn place(
    o: &BTreeMap<String, Opt>,
    r: &mut Read,
    engine: bool,
    notes: &mut Notes,
) -> Option<(String, bool, Option<FileList>)> {
    let Some(url_opt) = r.nfs_url.clone() else {
        let opt = o.get("ioengine")?;
        opt.refuse(
            notes,
            "fio's nfs engine needs nfs_url=nfs://SERVER/EXPORT[/DIR] (where its files go), and \
             so does volbench",
        );
        return None;
    };
    if !engine {
        let what = o
            .get("ioengine")
            .map_or("psync (fio's default)".to_string(), |e| e.val().to_string());
        url_opt.refuse(
            notes,
            format!("only fio's nfs engine reads it, and this job's ioengine is {what} (give ioengine=nfs)"),
        );
        return None;
    }
    let mut u = read_url(&url_opt, notes)?;
    let mut dir = Vec::new();
    if let (Some(d), Some(opt)) = (&r.directory, o.get("directory")) {
        dir = below(d, opt, notes)?;
    }
    // A file (or a list) fio names: volbench's own set in its directory.
    let mut named: Option<(Opt, usize)> = None;
    if let (Some(f), Some(opt)) = (r.filename.clone(), o.get("filename")) {
        let names = split(&f);
        let mut parents = Vec::new();
        for n in &names {
            let mut parts = below(n, opt, notes)?;
            if parts.pop().is_none() {
                opt.refuse(notes, "names no file");
                return None;
            }
            if !parents.contains(&parts) {
                parents.push(parts);
            }
        }
        let [parent] = parents.as_slice() else {
            notes.unsupported(
                &opt.at,
                &opt.text(),
                "files in several directories (volbench's own files go in one)",
            );
            return None;
        };
        if let Some(nr) = o.get("nrfiles").filter(|_| names.len() > 1) {
            if nr.val().trim().parse::<usize>().ok() != Some(names.len()) {
                nr.refuse(
                    notes,
                    format!(
                        "filename= names {} files; fio takes the files from it",
                        names.len()
                    ),
                );
                return None;
            }
        }
        dir.extend(parent.iter().cloned());
        named = Some((opt.clone(), names.len()));
    }
    let defaults = ["rsize", "wsize"].map(|k| !u.args.has(k));
    for (k, missing) in ["rsize", "wsize"].iter().zip(defaults) {
        if missing {
            u.args.query.push((k.to_string(), ONE_MIB.to_string()));
        }
    }
    let (target, shown) = url_of(&u, &dir);
    #[cfg(unix)]
    if let Err(e) = crate::proto::nfs::url::parse(&target) {
        url_opt.refuse(notes, format!("as volbench's target: {e}"));
        return None;
    }
    let sizes = if defaults.iter().any(|d| *d) {
        "; rsize and wsize 1 MiB where the URL gives none, as libnfs asks (volbench's own \
         default is the server's preference)"
    } else {
        ""
    };
    let files = match named {
        None => {
            "its own files there, volbench.N.dat, one per job and nrfiles, for fio's jobname.N.M"
        }
        Some(_) => "its own files there (filename=)",
    };
    // One note for the job's place, on nfs_url: jobs that share it say it once.
    r.mapped.push(url_opt.mapping(
        format!(
            "the target {shown}: volbench's own NFS client at the same server and path, no mount \
             (libnfs mounts the URL's whole path; volbench finds the export that holds it); \
             {files}, {LAYOUT}{sizes}"
        ),
        false,
    ));
    r.mapped.append(&mut u.args.said);
    if let Some(opt) = o.get("directory") {
        let how = "the directory below nfs_url's path: fio's nfs engine names its files from its \
                   mount, a leading '/' too";
        renote(r, opt, how, true);
    }
    // libnfs keeps no cache, nor does volbench's client: fio's direct=
    // changes nothing, and its sync= is not passed to libnfs's open.
    for key in ["direct", "buffered"] {
        if let Some(opt) = o.get(key) {
            let how = "no effect with fio's nfs engine: libnfs keeps no client cache, nor does \
                       volbench's client, so every I/O goes to the server (direct = true)";
            renote(r, opt, how, true);
        }
    }
    r.direct = true;
    if let (Some(_), Some(opt)) = (r.write_sync, o.get("sync")) {
        let how = "fio's nfs engine opens its files without O_SYNC whatever sync= says, so \
                   libnfs's writes are UNSTABLE; volbench's are too (no write_sync)";
        renote(r, opt, how, false);
        r.write_sync = None;
    }
    let (shared_file, list) = match named {
        None => (false, None),
        Some((opt, 1)) => {
            let how = format!(
                "volbench writes only files it creates: its own file (volbench.0.dat) in {shown}, \
                 shared by the jobs"
            );
            renote(r, &opt, &how, false);
            (true, None)
        }
        Some((opt, n)) => {
            let how = format!(
                "volbench writes only files it creates: its own {n} files volbench.N.dat in \
                 {shown}, the size split among them as fio does, every thread reaching every file"
            );
            renote(r, &opt, &how, false);
            let list = FileList {
                target: target.clone(),
                whole: false,
                files: n as u64,
                threads_total: false,
            };
            (true, Some(list))
        }
    };
    Some((target, shared_file, list))
}
