//! The conditions a result ran under, as (condition, value) pairs in the
//! order they are listed: volbench version, kernel, CPUs, machine, hosts,
//! engine, direct or buffered I/O, file system, block sizes, socket buffers
//! and the mount options that change what NFS/SMB clients deliver. One
//! definition for `compare`'s "conditions differ" and the store's
//! environment rows (and the trend's marks).

use crate::result::{ResultDoc, engine_names};

/// Mount options that change what NFS/SMB clients can deliver.
const MOUNT_KEYS: [&str; 6] = ["vers", "nconnect", "rsize", "wsize", "proto", "max_connect"];

/// Distinct values in first-seen order, joined: "6.1.0 / 6.8.0" when the
/// hosts of one multi-host result differ among themselves.
fn joined(values: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    if seen.is_empty() {
        "-".into()
    } else {
        seen.join(" / ")
    }
}

/// The client machines of a result: every host of a multi-host run (the
/// coordinator does no I/O), else the one host.
fn hosts(d: &ResultDoc) -> Vec<&crate::result::HostInfo> {
    match &d.cluster {
        Some(c) if c.hosts.iter().any(|h| h.host.is_some()) => {
            c.hosts.iter().filter_map(|h| h.host.as_ref()).collect()
        }
        _ => vec![&d.host],
    }
}

fn mounts(d: &ResultDoc) -> Vec<&crate::result::mount::MountInfo> {
    let cluster = d
        .cluster
        .iter()
        .flat_map(|c| c.hosts.iter().flat_map(|h| h.targets.iter()));
    let m: Vec<_> = cluster.filter_map(|t| t.mount.as_ref()).collect();
    if !m.is_empty() {
        return m;
    }
    d.target.iter().filter_map(|t| t.mount.as_ref()).collect()
}

/// The block and sector sizes under the targets, every host's.
fn blocks(d: &ResultDoc) -> Vec<String> {
    let cluster = d
        .cluster
        .iter()
        .flat_map(|c| c.hosts.iter().flat_map(|h| h.targets.iter()));
    let local = d.target.iter();
    let b: Vec<String> = cluster.filter_map(|t| t.blocks.describe()).collect();
    if !b.is_empty() {
        return b;
    }
    local.filter_map(|t| t.blocks.describe()).collect()
}

fn option(m: &crate::result::mount::MountInfo, key: &str) -> Option<String> {
    m.options.split(',').find_map(|o| {
        let (k, v) = o.split_once('=')?;
        (k == key).then(|| v.to_string())
    })
}

/// (condition, value) for one result, in the order they are listed.
pub(crate) fn conditions(d: &ResultDoc) -> Vec<(String, String)> {
    let hs = hosts(d);
    let ms = mounts(d);
    let mut v = vec![
        ("volbench version".to_string(), d.tool.version.clone()),
        ("kernel".into(), joined(hs.iter().map(|h| h.kernel.clone()))),
        (
            "CPU model".into(),
            joined(
                hs.iter()
                    .filter(|h| !h.cpu_model.is_empty())
                    .map(|h| h.cpu_model.clone()),
            ),
        ),
        ("CPUs".into(), joined(hs.iter().map(|h| h.cpus.to_string()))),
        (
            "VM size".into(),
            joined(hs.iter().filter_map(|h| h.vm_size.clone())),
        ),
        (
            "region".into(),
            joined(hs.iter().filter_map(|h| h.platform.region.clone())),
        ),
        (
            "machine".into(),
            joined(
                hs.iter()
                    .filter(|h| !h.machine.is_empty())
                    .map(|h| h.machine.clone()),
            ),
        ),
        (
            "hosts".into(),
            d.cluster.as_ref().map_or(1, |c| c.hosts.len()).to_string(),
        ),
        (
            "engine".into(),
            joined(d.runs.iter().map(|r| engine_names(&r.engine))),
        ),
        (
            "I/O".into(),
            if d.spec.target.direct {
                "direct"
            } else {
                "buffered"
            }
            .into(),
        ),
        (
            "file system".into(),
            joined(ms.iter().map(|m| m.fs_type.clone())),
        ),
    ];
    v.push(("block sizes".into(), joined(blocks(d).into_iter())));
    // The socket buffers the ANF paper tells you to raise.
    for key in [
        "net.core.rmem_max",
        "net.core.wmem_max",
        "net.core.rmem_default",
        "net.core.wmem_default",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    ] {
        let of = |h: &&crate::result::HostInfo| {
            h.net
                .rows()
                .into_iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v)
        };
        v.push((key.to_string(), joined(hs.iter().filter_map(of))));
    }
    for key in MOUNT_KEYS {
        v.push((
            format!("mount {key}"),
            joined(ms.iter().filter_map(|m| option(m, key))),
        ));
    }
    v
}
