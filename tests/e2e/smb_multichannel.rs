//! Multichannel against a real Samba on two addresses: smbd runs in a
//! network namespace the test makes, reached over two veth links on two
//! subnets; the client asks the server for its interfaces, binds four
//! channels to one session over both addresses, and every channel carries
//! reads and writes whose sum is exact (and both links carry the bytes).

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use volbench::proto::smb::auth::creds::{Credentials, Secret};
use volbench::proto::smb::conn::wait::wait_all;
use volbench::proto::smb::conn::{Completion, Outcome};
use volbench::proto::smb::consts::Command as Cmd;
use volbench::proto::smb::session::client::Client;
use volbench::proto::smb::session::ops::Open;
use volbench::proto::smb::session::{Auth, Options, Signing, Target};

use crate::common::smb::{PASSWORD, Samba, SambaConfig, USER};

struct Net {
    ns: String,
    links: [String; 2],
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Removes what an earlier run may have left, or this one made: that it
/// is not there is no error, and not printed.
fn ip_gone(args: &[&str]) {
    let _ = Command::new("ip")
        .args(args)
        .stderr(std::process::Stdio::null())
        .status();
}

impl Net {
    /// A namespace with two links to this one: 10.79.K.2 and 10.80.K.2.
    fn up(k: u8) -> Option<Net> {
        let ns = format!("vbsmb{k}");
        let links = [format!("vbsmb{k}a"), format!("vbsmb{k}b")];
        ip_gone(&["netns", "del", &ns]);
        if !ip(&["netns", "add", &ns]) {
            return None;
        }
        let n = Net {
            ns: ns.clone(),
            links: links.clone(),
        };
        for (i, l) in links.iter().enumerate() {
            let net = 79 + i;
            ip_gone(&["link", "del", l]);
            let ok = ip(&[
                "link",
                "add",
                l,
                "type",
                "veth",
                "peer",
                "name",
                &format!("eth{i}"),
                "netns",
                &ns,
            ]) && ip(&["addr", "add", &format!("10.{net}.{k}.1/24"), "dev", l])
                && ip(&["link", "set", l, "up"])
                && ip(&[
                    "-n",
                    &ns,
                    "addr",
                    "add",
                    &format!("10.{net}.{k}.2/24"),
                    "dev",
                    &format!("eth{i}"),
                ])
                && ip(&["-n", &ns, "link", "set", &format!("eth{i}"), "up"])
                && ip(&["-n", &ns, "link", "set", "lo", "up"]);
            if !ok {
                return None;
            }
        }
        Some(n)
    }

    fn bytes(&self, i: usize) -> u64 {
        let p = format!("/sys/class/net/{}/statistics/rx_bytes", self.links[i]);
        let q = format!("/sys/class/net/{}/statistics/tx_bytes", self.links[i]);
        let r = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        r(&p) + r(&q)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for l in &self.links {
            ip_gone(&["link", "del", l]);
        }
        ip_gone(&["netns", "del", &self.ns]);
    }
}

#[test]
fn smb_multichannel_binds_four_channels_over_two_addresses_and_each_carries_io() {
    let test = "smb_multichannel";
    if !crate::common::is_root() {
        crate::common::skip(test, "needs root for a network namespace");
        return;
    }
    let k = (std::process::id() % 200) as u8 + 20;
    let Some(net) = Net::up(k) else {
        crate::common::skip(test, "cannot make a network namespace (ip netns)");
        return;
    };
    let cfg = SambaConfig {
        addrs: vec![format!("10.79.{k}.2"), format!("10.80.{k}.2")],
        netns: Some(net.ns.clone()),
        ..SambaConfig::default()
    };
    let Some(s) = Samba::up(test, cfg) else {
        return;
    };
    let first: SocketAddr = format!("10.79.{k}.2:445").parse().expect("addr");
    let second: SocketAddr = format!("10.80.{k}.2:445").parse().expect("addr");
    let auth = Auth::Ntlm(Credentials {
        user: USER.into(),
        domain: String::new(),
        password: Secret::new(PASSWORD.into()),
    });
    let opts = Options {
        signing: Signing::On,
        ..Options::default()
    };
    let t = Target {
        server: first.ip().to_string(),
        addr: first,
        share: "bench".into(),
    };
    let mut c = Client::connect(t, auth, opts).unwrap_or_else(|e| panic!("{e}\n{}", s.log()));
    assert!(c.negotiated().multichannel);
    let ifaces = c.query_interfaces().expect("interfaces");
    let reported: Vec<_> = ifaces.iter().map(|i| i.addr).collect();
    assert!(
        reported.contains(&first.ip()) && reported.contains(&second.ip()),
        "{reported:?}"
    );
    c.add_channels(4, &[])
        .unwrap_or_else(|e| panic!("{e}\n{}", s.log()));
    let peers: Vec<SocketAddr> = c.channels().iter().map(|ch| ch.peer()).collect();
    assert_eq!(peers.len(), 4);
    assert!(
        peers.contains(&first) && peers.contains(&second),
        "{peers:?}"
    );

    let bs = 256 * 1024;
    let n = 64usize;
    let f = c.open("mc.dat", Open::CreateFile).expect("create");
    let tree = c.tree_id();
    let before = [net.bytes(0), net.bytes(1)];
    let data: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; bs]).collect();
    let mut back = vec![vec![0u8; bs]; n];
    for write in [true, false] {
        let chans = c.channels_mut();
        for i in 0..n {
            let ch = &mut chans[i % 4];
            // SAFETY: the buffers outlive the waits below; one request each.
            unsafe {
                if write {
                    ch.queue_write(
                        i as u64,
                        tree,
                        f.file_id,
                        (i * bs) as u64,
                        bs as u32,
                        data[i].as_ptr(),
                        false,
                    );
                } else {
                    ch.queue_read(
                        i as u64,
                        tree,
                        f.file_id,
                        (i * bs) as u64,
                        bs as u32,
                        back[i].as_mut_ptr(),
                    );
                }
            }
        }
        let mut done: Vec<Completion> = Vec::new();
        while done.len() < n {
            wait_all(chans, n - done.len(), Duration::from_secs(30), &mut done).expect("I/O");
        }
        assert!(
            done.iter()
                .all(|d| d.status == 0 && d.outcome == Outcome::Bytes(bs as u32))
        );
    }
    assert_eq!(back, data);
    let total = c.total_stats();
    for cmd in [Cmd::Read, Cmd::Write] {
        assert_eq!(total.command(cmd).bytes, (n * bs) as u64);
        for ch in c.channels() {
            assert_eq!(
                ch.stats().command(cmd).requests,
                (n / 4) as u64,
                "channel {} {}",
                ch.index(),
                cmd.name()
            );
        }
    }
    // Both links carried at least the data their channels moved.
    let moved = [net.bytes(0) - before[0], net.bytes(1) - before[1]];
    let per_link =
        |a: SocketAddr| peers.iter().filter(|p| **p == a).count() as u64 * 2 * (n / 4 * bs) as u64;
    assert!(
        moved[0] >= per_link(first),
        "link a moved {} bytes",
        moved[0]
    );
    assert!(
        moved[1] >= per_link(second),
        "link b moved {} bytes",
        moved[1]
    );
}
