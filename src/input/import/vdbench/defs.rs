//! vdbench's host and storage definitions (`hd`, `sd`), one row per key,
//! and the general parameters (`data.rs`): where the luns are and how
//! hosts are reached, before any run is read.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{self, Row, Rule, Said, Verdict, alias, row};
use super::super::{Mapping, Notes, PathMap};
use super::data::{GENERAL, General};
use super::parse::{Def, Opt, exact, with_defaults};
use crate::input::suite::Defaults;
use crate::units::{bounds, parse_size};

use Rule::{Always, Map};
use Verdict::{Note, Refuse};

/// A storage definition: one lun, where it is and how it is opened.
pub(super) struct Sd {
    pub(super) name: String,
    pub(super) lun: String,
    pub(super) size: Option<u64>,
    pub(super) host: Option<String>,
    pub(super) direct: bool,
    pub(super) threads: Option<u64>,
}

/// What the definitions before any run say: hosts (`hd`: name and ssh
/// destination), luns (`sd`), the suite's data keys, and how each key of
/// them was mapped.
pub(super) struct Defs {
    pub(super) hosts: Vec<(String, String)>,
    pub(super) sds: Vec<Sd>,
    pub(super) data: Defaults,
}

/// An hd's keys as its rows read them.
pub(super) struct HdRead {
    name: String,
    system: String,
    user: Option<String>,
    said: Vec<Mapping>,
}

impl Said for HdRead {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

const OWN_PROCESS: &str = "vdbench's own process layout; volbench runs one agent per host";

pub(super) const HD: &[Row<HdRead>] = &[
    row("system", Map(system)),
    row("user", Map(user)),
    row("shell", Map(shell)),
    row("jvms", Always(Note(OWN_PROCESS))),
    row("vdbench", Always(Note(OWN_PROCESS))),
    row("clients", Always(Refuse("several clients per hd"))),
    row("mount", Always(Refuse("a mount command per host"))),
];

fn system(p: &Opt, h: &mut HdRead, _: &mut Notes) {
    h.system = p.val().to_string();
    exact(
        &mut h.said,
        p,
        &format!("host {} is reached at {}", h.name, p.val()),
    );
}

fn user(p: &Opt, h: &mut HdRead, _: &mut Notes) {
    h.user = Some(p.val().to_string());
    exact(&mut h.said, p, "ssh user");
}

fn shell(p: &Opt, h: &mut HdRead, notes: &mut Notes) {
    if p.val() == "ssh" {
        exact(&mut h.said, p, "volbench reaches hosts with ssh");
    } else {
        notes.unsupported(&p.at, &p.text(), "volbench reaches hosts only with ssh");
    }
}

/// An sd's keys as its rows read them.
pub(super) struct SdRead {
    sd: Sd,
    /// `lun=`, resolved against `--map` once the keys are read.
    lun: Option<Opt>,
    write_sync: Option<&'static str>,
    said: Vec<Mapping>,
}

impl Said for SdRead {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

const SD_AREA: &str = "cache hit areas, ranges, offsets, journals and bus resets of an sd";

pub(super) const SD: &[Row<SdRead>] = &[
    row("lun", Map(lun)),
    row("size", Map(sd_size)),
    row("threads", Map(sd_threads)),
    row("openflags", Map(sd_openflags)),
    alias("host", &["hd"], Map(sd_host)),
    row("hitarea", Always(Refuse(SD_AREA))),
    row("range", Always(Refuse(SD_AREA))),
    row("offset", Always(Refuse(SD_AREA))),
    row("align", Always(Refuse(SD_AREA))),
    row("journal", Always(Refuse(SD_AREA))),
    row("count", Always(Refuse(SD_AREA))),
    row("streams", Always(Refuse(SD_AREA))),
    row("resetbus", Always(Refuse(SD_AREA))),
    row("resetlun", Always(Refuse(SD_AREA))),
];

fn lun(p: &Opt, s: &mut SdRead, _: &mut Notes) {
    s.lun = Some(p.clone());
}

fn sd_size(p: &Opt, s: &mut SdRead, notes: &mut Notes) {
    match parse_size(p.val()) {
        Ok(b) if b > 0 && b <= bounds::MAX_SIZE => s.sd.size = Some(b),
        _ => p.refuse(notes, "not a size within 1..8p"),
    }
}

fn sd_threads(p: &Opt, s: &mut SdRead, notes: &mut Notes) {
    match p.val().parse::<u64>() {
        Ok(t) if (1..=bounds::MAX_THREADS).contains(&t) => s.sd.threads = Some(t),
        _ => p.refuse(notes, "threads must be 1..4096"),
    }
}

fn sd_openflags(p: &Opt, s: &mut SdRead, notes: &mut Notes) {
    super::flags::openflags(p, notes, &mut s.sd.direct, &mut s.write_sync);
}

fn sd_host(p: &Opt, s: &mut SdRead, _: &mut Notes) {
    s.sd.host = Some(p.val().to_string());
}

/// Reads the general parameters, hosts and luns the runs can name; the
/// keys' mappings go to `global`.
pub(super) fn hosts_and_sds(
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
    global: &mut Vec<Mapping>,
    write_sync: &mut Option<&'static str>,
) -> Defs {
    let mut out = Defs {
        hosts: Vec::new(),
        sds: Vec::new(),
        data: Defaults::default(),
    };
    let mut general = General::default();
    for (i, d) in defs.iter().enumerate() {
        match d.kind.as_str() {
            "general" => {
                for p in &d.params {
                    table::read(GENERAL, p, &mut general, notes, "vdbench parameter");
                }
                global.append(&mut general.said);
            }
            "fsd" | "fwd" => notes.unsupported(
                &d.at,
                &format!("{}={}", d.kind, d.name),
                "file-system workloads (fsd/fwd)",
            ),
            "hd" if d.name == "default" => {}
            "hd" => out.hosts.push(hd(&with_defaults(defs, i), global, notes)),
            "sd" if d.name == "default" => {}
            "sd" => {
                let d = with_defaults(defs, i);
                let mut s = SdRead {
                    sd: Sd {
                        name: d.name.clone(),
                        lun: String::new(),
                        size: None,
                        host: None,
                        direct: false,
                        threads: None,
                    },
                    lun: None,
                    write_sync: *write_sync,
                    said: Vec::new(),
                };
                for p in &d.params {
                    table::read(SD, p, &mut s, notes, "sd parameter");
                }
                *write_sync = s.write_sync;
                global.append(&mut s.said);
                if let Some(p) = &s.lun {
                    match map.resolve(p.val()) {
                        Ok((l, _)) if crate::io::backend::is_url(std::path::Path::new(&l)) => {
                            let how = "an sd's lun is an existing file or device; for volbench's \
                                       own set there, run `volbench run --target` on the \
                                       directory's URL";
                            p.refuse(notes, super::super::url_map::existing_file(&l, how));
                        }
                        Ok((l, _)) => match super::super::kernel_target(&l) {
                            Some(why) => p.refuse(notes, why),
                            None => s.sd.lun = l,
                        },
                        Err(e) => p.refuse(notes, e),
                    }
                }
                if s.sd.lun.is_empty() && !notes.refused.iter().any(|r| r.0 == d.at) {
                    notes.refuse(&d.at, &format!("sd={}", d.name), "no lun=");
                }
                out.sds.push(s.sd);
            }
            _ => {}
        }
    }
    out.data = general.data;
    out
}

/// One hd: its name and the ssh destination it is reached at.
fn hd(d: &Def, global: &mut Vec<Mapping>, notes: &mut Notes) -> (String, String) {
    let mut h = HdRead {
        name: d.name.clone(),
        system: d.name.clone(),
        user: None,
        said: Vec::new(),
    };
    for p in &d.params {
        table::read(HD, p, &mut h, notes, "hd parameter");
    }
    global.append(&mut h.said);
    let ssh = match h.user {
        Some(u) => format!("{u}@{}", h.system),
        None => h.system,
    };
    if let Err(e) = crate::input::hosts::check_host_name(&ssh) {
        notes.refuse(&d.at, &format!("hd={}", d.name), e.message);
    }
    (d.name.clone(), ssh)
}
