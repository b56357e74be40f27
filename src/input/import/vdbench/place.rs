//! Where a vdbench suite's runs go: the luns of the sds its runs use, on
//! this host (one lun, or a list run together) or on each `hd=` host (a
//! hosts file beside the suite).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{How, Mapping, Notes};
use super::defs::Sd;
use crate::error::{Result, VbError};
use crate::input::hosts::HostSpec;

/// What the runs ask of their luns.
pub(super) struct Luns<'a> {
    pub(super) chosen: &'a [&'a Sd],
    /// Each lun's size, when volbench makes its file set.
    pub(super) size: Option<u64>,
    /// The first run's threads, per lun.
    pub(super) threads: u64,
    /// No host anywhere: every sd is on this machine.
    pub(super) local: bool,
}

/// The suite's target and its hosts for the sds the runs use.
pub(super) fn place(
    origin: &str,
    hosts: &[(String, String)],
    luns: &Luns,
    global: &mut Vec<Mapping>,
    notes: &mut Notes,
) -> Result<(String, Vec<HostSpec>)> {
    let Luns {
        chosen,
        size,
        threads,
        local,
    } = *luns;
    if let Some(s) = chosen.iter().find(|s| !super::super::names_device(&s.lun)) {
        global.push(Mapping {
            at: format!("sd={}", s.name),
            option: format!("lun={}", s.lun),
            how: How::Note(
                "volbench writes only files it creates: its file set goes in a directory of this name".into(),
            ),
        });
    }
    if !hosts.is_empty() || chosen.iter().any(|s| s.host.is_some()) {
        return on_hosts(origin, hosts, chosen, notes);
    }
    match chosen {
        [one] => Ok((one.lun.clone(), Vec::new())),
        _ if !local => {
            notes.unsupported(
                origin,
                "several sds on one host",
                "several targets on one host run through agents: add hd=localhost,system=localhost and host= to each sd",
            );
            notes.check()?;
            Err(VbError::input("refused"))
        }
        _ => {
            let luns: Vec<String> = chosen.iter().map(|s| s.lun.clone()).collect();
            let create = size.filter(|_| luns.iter().any(|l| !super::super::names_device(l)));
            let mut m = Vec::new();
            let target = super::super::target_list::list(&luns, create, threads, &mut m, notes)?.0;
            // vdbench's threads= is per sd (forthreads=32: 32 threads for
            // each SD), which is what a list's threads are per target.
            global.extend(m.into_iter().map(|x| Mapping {
                how: How::Exact(format!(
                    "{} sds on this host as a list of targets run together; threads= per sd \
                     is threads per target",
                    luns.len()
                )),
                ..x
            }));
            Ok((target, Vec::new()))
        }
    }
}

/// Each host with the luns of its sds (an sd without `host=` on every host).
fn on_hosts(
    origin: &str,
    hosts: &[(String, String)],
    chosen: &[&Sd],
    notes: &mut Notes,
) -> Result<(String, Vec<HostSpec>)> {
    let mut names: Vec<String> = hosts.iter().map(|(n, _)| n.clone()).collect();
    for s in chosen {
        if let Some(h) = s.host.as_ref().filter(|h| !names.contains(h)) {
            names.push(h.clone());
        }
    }
    let mut listed = Vec::new();
    for n in &names {
        let ssh = hosts
            .iter()
            .find(|(h, _)| h == n)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| n.clone());
        let targets: Vec<String> = chosen
            .iter()
            .filter(|s| s.host.as_deref().is_none_or(|h| h == n))
            .map(|s| s.lun.clone())
            .collect();
        if targets.is_empty() {
            continue;
        }
        for t in &targets {
            if t.contains([' ', '#', '{', '}', ',']) {
                notes.unsupported(
                    origin,
                    &format!("lun={t}"),
                    "a lun path with spaces, '#', braces or commas in a hosts file",
                );
            }
        }
        let first = targets.first().cloned().unwrap_or_default();
        let target = match targets.as_slice() {
            [one] => one.clone(),
            many => format!("{{{}}}", many.join(",")),
        };
        listed.push((
            first,
            HostSpec {
                name: ssh,
                target: Some(target),
                threads: None,
                vm_size: None,
                agent: Default::default(),
            },
        ));
    }
    let Some((target, _)) = listed.first() else {
        return Err(VbError::input(format!("{origin}: no host runs any sd")));
    };
    Ok((target.clone(), listed.into_iter().map(|(_, h)| h).collect()))
}
