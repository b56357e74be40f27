//! A protocol client's running totals per connection (an SMB session's
//! channels, an NFS client's TCP connections), published by its engine
//! beside `LiveCounters::proto` and read by the collector once per
//! interval: each live interval's per-channel figures. Connection K of
//! every worker's client is added into K, as the result's channels are.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use super::LiveCounters;

/// Connections one worker's client holds at most, so the live figures are
/// bounded: an SMB session's channels (`bounds::MAX_SMB_CHANNELS`) and an
/// NFS client's connections (`bounds::MAX_NFS_CONNECTIONS`), the larger
/// (held to both there: `stats` is below `units`).
pub(crate) const MAX_LINKS: usize = 64;

/// What a connection counts, by index.
pub(crate) const LINK_FIELDS: usize = 4;
pub(crate) mod link {
    /// Requests sent (SMB) or calls answered (NFS), and the data moved.
    pub(crate) const REQUESTS: usize = 0;
    pub(crate) const BYTES: usize = 1;
    pub(crate) const ERRORS: usize = 2;
    /// Requests that waited for credits (SMB), calls sent again (NFS).
    pub(crate) const WAITS: usize = 3;
}

/// What a client's connections are: an SMB session's channels, or an NFS
/// client's connections (the live outputs name them so).
// The protocol engines that make them are Unix-only.
#[cfg_attr(windows, allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkKind {
    Channel,
    Connection,
}

/// One worker's connections: their server addresses, fixed when the
/// engine first publishes, and their running totals.
#[derive(Debug)]
pub(crate) struct LiveLinks {
    kind: LinkKind,
    servers: Box<[String]>,
    vals: Box<[[AtomicU64; LINK_FIELDS]]>,
}

impl LiveLinks {
    /// Connection `i`'s totals so far (an index past the ones set up is
    /// left out).
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn store(&self, i: usize, totals: &[u64; LINK_FIELDS]) {
        if let Some(v) = self.vals.get(i) {
            for (a, &x) in v.iter().zip(totals) {
                a.store(x, Ordering::Relaxed);
            }
        }
    }
}

/// The connections' totals of a worker, set up on its engine's first
/// publish (`servers` called then only: the hot path allocates nothing).
#[cfg_attr(windows, allow(dead_code))]
pub(crate) fn links_of(
    counters: &LiveCounters,
    kind: LinkKind,
    servers: impl FnOnce() -> Vec<String>,
) -> &LiveLinks {
    counters.links.get_or_init(|| {
        let mut servers = servers();
        servers.truncate(MAX_LINKS);
        LiveLinks {
            kind,
            vals: servers
                .iter()
                .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
            servers: servers.into_boxed_slice(),
        }
    })
}

/// Every worker's connections added up, connection K into K; the
/// collector keeps one and reuses it.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct LinkSum {
    pub(crate) kind: Option<LinkKind>,
    /// Connection K's server (the first worker's that has a K).
    pub(crate) servers: Vec<String>,
    pub(crate) vals: Vec<[u64; LINK_FIELDS]>,
}

impl LinkSum {
    /// Reads the workers' totals (once per interval, on the collector).
    pub(crate) fn read<'a>(&mut self, workers: impl IntoIterator<Item = &'a OnceLock<LiveLinks>>) {
        for v in &mut self.vals {
            *v = [0; LINK_FIELDS];
        }
        for w in workers {
            let Some(l) = w.get() else { continue };
            self.kind.get_or_insert(l.kind);
            for (i, v) in l.vals.iter().enumerate() {
                if self.vals.len() <= i {
                    self.vals.push([0; LINK_FIELDS]);
                    self.servers.push(l.servers[i].clone());
                }
                for (s, a) in self.vals[i].iter_mut().zip(v) {
                    *s += a.load(Ordering::Relaxed);
                }
            }
        }
    }

    /// Each connection's figures since `earlier` (a connection it did not
    /// have counts from zero).
    pub(crate) fn since(&self, earlier: &LinkSum) -> Vec<[u64; LINK_FIELDS]> {
        self.vals
            .iter()
            .enumerate()
            .map(|(i, now)| {
                let before = earlier.vals.get(i).copied().unwrap_or_default();
                std::array::from_fn(|k| now[k].saturating_sub(before[k]))
            })
            .collect()
    }
}

/// Keeps an engine's published per-connection totals from going back
/// when a connection's counters start over (the measured phase starting,
/// a channel replaced after a loss): what was counted before is carried.
/// Sized once when the engine opens; nothing allocated after.
#[derive(Debug, Default)]
#[cfg_attr(windows, allow(dead_code))]
pub(crate) struct Carry {
    base: Vec<[u64; LINK_FIELDS]>,
    last: Vec<[u64; LINK_FIELDS]>,
}

#[cfg_attr(windows, allow(dead_code))]
impl Carry {
    pub(crate) fn new(links: usize) -> Carry {
        let n = links.min(MAX_LINKS);
        Carry {
            base: vec![[0; LINK_FIELDS]; n],
            last: vec![[0; LINK_FIELDS]; n],
        }
    }

    /// Connection `i`'s running total, given its counters now: when one of
    /// them is below its last reading, they started over.
    pub(crate) fn total(&mut self, i: usize, now: [u64; LINK_FIELDS]) -> [u64; LINK_FIELDS] {
        let (Some(base), Some(last)) = (self.base.get_mut(i), self.last.get_mut(i)) else {
            return now;
        };
        if now.iter().zip(last.iter()).any(|(n, l)| n < l) {
            for (b, l) in base.iter_mut().zip(last.iter()) {
                *b += l;
            }
        }
        *last = now;
        std::array::from_fn(|k| base[k] + now[k])
    }

    /// Every connection's counters start over now, after the last reading
    /// (`total`) of each: what they counted is carried.
    pub(crate) fn restart(&mut self) {
        for (b, l) in self.base.iter_mut().zip(self.last.iter_mut()) {
            for (x, y) in b.iter_mut().zip(l.iter()) {
                *x += y;
            }
            *l = [0; LINK_FIELDS];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_connections_add_up_by_place_and_intervals_are_differences() {
        let (a, b) = (LiveCounters::default(), LiveCounters::default());
        let two = || vec!["10.0.0.1:445".to_string(), "10.0.0.2:445".to_string()];
        links_of(&a, LinkKind::Channel, two).store(0, &[3, 300, 0, 1]);
        links_of(&a, LinkKind::Channel, || unreachable!("set up once")).store(1, &[1, 100, 0, 0]);
        links_of(&b, LinkKind::Channel, two).store(1, &[2, 200, 1, 0]);
        // Past the ones set up: left out.
        links_of(&b, LinkKind::Channel, two).store(5, &[9, 9, 9, 9]);
        let quiet = LiveCounters::default();
        let mut s = LinkSum::default();
        s.read([&a.links, &b.links, &quiet.links]);
        assert_eq!(s.kind, Some(LinkKind::Channel));
        assert_eq!(s.vals, [[3, 300, 0, 1], [3, 300, 1, 0]]);
        assert_eq!(s.servers, two());
        let before = s.clone();
        links_of(&a, LinkKind::Channel, two).store(0, &[5, 500, 0, 1]);
        s.read([&a.links, &b.links]);
        assert_eq!(s.since(&before), [[2, 200, 0, 0], [0, 0, 0, 0]]);
        assert_eq!(s.since(&LinkSum::default()), s.vals);
    }

    #[test]
    fn a_connections_totals_never_go_back_when_its_counters_start_over() {
        let mut c = Carry::new(2);
        assert_eq!(c.total(0, [4, 400, 0, 0]), [4, 400, 0, 0]);
        // The measured phase starts: counters read once more, then reset.
        assert_eq!(c.total(0, [5, 500, 0, 1]), [5, 500, 0, 1]);
        c.restart();
        assert_eq!(c.total(0, [1, 100, 0, 0]), [6, 600, 0, 1]);
        assert_eq!(c.total(0, [9, 900, 0, 0]), [14, 1400, 0, 1]);
        // A channel replaced: its new counters start below the last.
        assert_eq!(c.total(0, [2, 0, 0, 0]), [16, 1400, 0, 1]);
        assert_eq!(c.total(1, [3, 3, 3, 3]), [3, 3, 3, 3]);
        // Past the ones sized for: as they are.
        assert_eq!(c.total(7, [1, 1, 1, 1]), [1, 1, 1, 1]);
    }

    #[test]
    fn a_client_with_more_connections_than_the_bound_keeps_the_first() {
        let c = LiveCounters::default();
        let l = links_of(&c, LinkKind::Connection, || {
            (0..MAX_LINKS + 3).map(|i| i.to_string()).collect()
        });
        assert_eq!(l.vals.len(), MAX_LINKS);
    }
}
