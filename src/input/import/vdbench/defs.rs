//! vdbench's host and storage definitions (`general`, `hd`, `sd`): where
//! the luns are and how hosts are reached, before any run is read.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{Mapping, Notes, PathMap};
use super::parse::{Def, exact, items, noted, with_defaults};
use crate::units::{bounds, parse_size};

/// A storage definition: one lun, where it is and how it is opened.
pub(super) struct Sd {
    pub(super) name: String,
    pub(super) lun: String,
    pub(super) size: Option<u64>,
    pub(super) host: Option<String>,
    pub(super) direct: bool,
    pub(super) threads: Option<u64>,
}

/// The hosts (`hd`, name and ssh destination) and luns (`sd`) the runs
/// can name; `general` parameters are mapped or refused on the way.
pub(super) fn hosts_and_sds(
    defs: &[Def],
    map: &PathMap,
    notes: &mut Notes,
    global: &mut Vec<Mapping>,
    write_sync: &mut Option<&'static str>,
    data: &mut Vec<(&'static str, String)>,
) -> (Vec<(String, String)>, Vec<Sd>) {
    let mut hosts: Vec<(String, String)> = Vec::new();
    let mut sds: Vec<Sd> = Vec::new();

    for (i, d) in defs.iter().enumerate() {
        match d.kind.as_str() {
            "general" => {
                for p in &d.params {
                    if super::data::map(p, global, data, notes) {
                        continue;
                    }
                    match p.key.as_str() {
                        "messagescan" | "histogram" | "report" | "data_errors" | "debug"
                        | "create_anchors" | "monitor" => noted(
                            global,
                            p,
                            "reporting detail of vdbench's own; volbench keeps its time series and histograms",
                        ),
                        _ => notes.refuse(
                            &p.at,
                            &p.text(),
                            "not supported yet (no volbench equivalent of this vdbench parameter)",
                        ),
                    }
                }
            }
            "fsd" | "fwd" => notes.unsupported(
                &d.at,
                &format!("{}={}", d.kind, d.name),
                "file-system workloads (fsd/fwd)",
            ),
            "hd" if d.name == "default" => {}
            "hd" => {
                let d = with_defaults(defs, i);
                let mut system = d.name.clone();
                let mut user = None;
                for p in &d.params {
                    match p.key.as_str() {
                        "system" => {
                            system = p.value.clone();
                            exact(
                                global,
                                p,
                                &format!("host {} is reached at {}", d.name, p.value),
                            );
                        }
                        "user" => {
                            user = Some(p.value.clone());
                            exact(global, p, "ssh user");
                        }
                        "shell" if p.value == "ssh" => {
                            exact(global, p, "volbench reaches hosts with ssh")
                        }
                        "shell" => notes.unsupported(
                            &p.at,
                            &p.text(),
                            "volbench reaches hosts only with ssh",
                        ),
                        _ => super::keys::judge("hd", p, global, notes),
                    }
                }
                let ssh = match user {
                    Some(u) => format!("{u}@{system}"),
                    None => system,
                };
                if let Err(e) = crate::input::hosts::check_host_name(&ssh) {
                    notes.refuse(&d.at, &format!("hd={}", d.name), e.message);
                }
                hosts.push((d.name.clone(), ssh));
            }
            "sd" if d.name == "default" => {}
            "sd" => {
                let d = with_defaults(defs, i);
                let mut sd = Sd {
                    name: d.name.clone(),
                    lun: String::new(),
                    size: None,
                    host: None,
                    direct: false,
                    threads: None,
                };
                for p in &d.params {
                    match p.key.as_str() {
                        "lun" => match map.resolve(&p.value) {
                            Ok((l, _)) => match super::super::kernel_target(&l) {
                                Some(why) => notes.refuse(&p.at, &p.text(), why),
                                None => sd.lun = l,
                            },
                            Err(e) => notes.refuse(&p.at, &p.text(), e),
                        },
                        "size" => match parse_size(&p.value) {
                            Ok(b) if b > 0 && b <= bounds::MAX_SIZE => sd.size = Some(b),
                            _ => notes.refuse(&p.at, &p.text(), "not a size within 1..8p"),
                        },
                        "host" | "hd" => sd.host = Some(p.value.clone()),
                        "openflags" => super::flags::openflags(
                            notes,
                            &p.at,
                            &p.text(),
                            &items(&p.value),
                            &mut sd.direct,
                            write_sync,
                        ),
                        "threads" => match p.value.parse::<u64>() {
                            Ok(t) if (1..=bounds::MAX_THREADS).contains(&t) => sd.threads = Some(t),
                            _ => notes.refuse(&p.at, &p.text(), "threads must be 1..4096"),
                        },
                        _ => super::keys::judge("sd", p, global, notes),
                    }
                }
                if sd.lun.is_empty() && !notes.refused.iter().any(|r| r.0 == d.at) {
                    notes.refuse(&d.at, &format!("sd={}", d.name), "no lun=");
                }
                sds.push(sd);
            }
            _ => {}
        }
    }
    (hosts, sds)
}
