//! A protocol client's running totals per connection (an SMB session's
//! channels, an NFS client's TCP connections), published by its engine
//! beside `LiveCounters::proto` and read by the collector once per
//! interval: each live interval's per-channel figures. Connection K of
//! every worker's client is added into K, as the result's channels are.
//!
//! The client's totals and its connections' are one publication: the
//! engine stores both inside a sequence (`publish`, a seqlock on
//! `LiveCounters::proto_seq`) and the collector reads both again when the
//! sequence moved under it (`read`), so a live line's connections and
//! totals are of one instant, the last line of a run included (an NFS
//! client's connections' calls add up to its calls on every line). A mutex would
//! do it too, but the engine publishes after every batch of completions
//! and must never wait for the collector.

use std::sync::atomic::{AtomicU64, Ordering, fence};

use super::{LiveCounters, PROTO_FIELDS};

/// Stores a protocol client's totals and, through `links`, its
/// connections' as one publication (see the module's comment). One writer
/// per `LiveCounters`: the worker that owns it.
#[cfg_attr(windows, allow(dead_code))]
pub(crate) fn publish(
    counters: &LiveCounters,
    totals: &[u64; PROTO_FIELDS],
    links: impl FnOnce(&LiveCounters),
) {
    let seq = counters.proto_seq.load(Ordering::Relaxed);
    counters
        .proto_seq
        .store(seq.wrapping_add(1), Ordering::Relaxed);
    fence(Ordering::Release);
    links(counters);
    for (a, &v) in counters.proto.iter().zip(totals) {
        a.store(v, Ordering::Relaxed);
    }
    counters
        .proto_seq
        .store(seq.wrapping_add(2), Ordering::Release);
}

/// How long the collector waits for one publication to end before it
/// takes the figures as they stand: a worker that died mid-publication
/// (its thread panicked) must not stop the live lines for good.
const READ_PATIENCE: std::time::Duration = std::time::Duration::from_millis(100);

/// A worker's protocol totals, its connections' added into `sum`, both of
/// one publication (zero and none for a worker that publishes none); past
/// `READ_PATIENCE` of publications under way, as they stand.
pub(crate) fn read(counters: &LiveCounters, sum: &mut LinkSum) -> [u64; PROTO_FIELDS] {
    let mut tries = 0u32;
    let mut since = None;
    loop {
        let patient = since.is_none_or(|t: std::time::Instant| t.elapsed() < READ_PATIENCE);
        if let Some(totals) = try_read(counters, sum, patient) {
            return totals;
        }
        // The engine is storing: a few dozen stores, unless its thread
        // was preempted in the middle, when the collector gives way.
        tries += 1;
        if tries < 100 {
            std::hint::spin_loop();
        } else {
            since.get_or_insert_with(std::time::Instant::now);
            std::thread::yield_now();
        }
    }
}

/// `read`, or None (and `sum` untouched) when a publication was under way
/// and `whole` asks for one.
fn try_read(
    counters: &LiveCounters,
    sum: &mut LinkSum,
    whole: bool,
) -> Option<[u64; PROTO_FIELDS]> {
    let before = counters.proto_seq.load(Ordering::Acquire);
    if whole && before % 2 == 1 {
        return None;
    }
    let mut vals = [[0u64; LINK_FIELDS]; MAX_LINKS];
    let links = counters.links.get();
    let n = links.map_or(0, |l| l.load(&mut vals));
    let totals = std::array::from_fn(|i| counters.proto[i].load(Ordering::Relaxed));
    fence(Ordering::Acquire);
    if whole && counters.proto_seq.load(Ordering::Relaxed) != before {
        return None;
    }
    if let Some(l) = links {
        sum.add(l, &vals[..n]);
    }
    Some(totals)
}

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
    /// Every connection's totals into `out`; how many there are.
    fn load(&self, out: &mut [[u64; LINK_FIELDS]; MAX_LINKS]) -> usize {
        for (o, v) in out.iter_mut().zip(self.vals.iter()) {
            *o = std::array::from_fn(|k| v[k].load(Ordering::Relaxed));
        }
        self.vals.len().min(MAX_LINKS)
    }

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
    /// Starts a reading: every connection at zero, then each worker's
    /// added (`read`, once per interval, on the collector).
    pub(crate) fn clear(&mut self) {
        for v in &mut self.vals {
            *v = [0; LINK_FIELDS];
        }
    }

    /// One worker's connections, `vals` read from `l`, added by place.
    fn add(&mut self, l: &LiveLinks, vals: &[[u64; LINK_FIELDS]]) {
        self.kind.get_or_insert(l.kind);
        for (i, v) in vals.iter().enumerate() {
            if self.vals.len() <= i {
                self.vals.push([0; LINK_FIELDS]);
                self.servers.push(l.servers[i].clone());
            }
            for (s, a) in self.vals[i].iter_mut().zip(v) {
                *s += a;
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
        let read_all = |s: &mut LinkSum, workers: &[&LiveCounters]| {
            s.clear();
            for w in workers {
                read(w, s);
            }
        };
        read_all(&mut s, &[&a, &b, &quiet]);
        assert_eq!(s.kind, Some(LinkKind::Channel));
        assert_eq!(s.vals, [[3, 300, 0, 1], [3, 300, 1, 0]]);
        assert_eq!(s.servers, two());
        let before = s.clone();
        links_of(&a, LinkKind::Channel, two).store(0, &[5, 500, 0, 1]);
        read_all(&mut s, &[&a, &b]);
        assert_eq!(s.since(&before), [[2, 200, 0, 0], [0, 0, 0, 0]]);
        assert_eq!(s.since(&LinkSum::default()), s.vals);
    }

    #[test]
    fn a_reading_sees_the_totals_and_the_connections_of_one_publication() {
        use super::super::proto::CALLS;
        use std::sync::atomic::AtomicBool;
        let two = || vec!["a".to_string(), "b".to_string()];
        // Mid-publication, a reading waits: it would see the connections
        // of this publish and the totals of the last.
        let c = LiveCounters::default();
        let mut totals = [0; PROTO_FIELDS];
        totals[CALLS] = 3;
        publish(&c, &totals, |c| {
            links_of(c, LinkKind::Connection, two).store(0, &[3, 0, 0, 0]);
            assert_eq!(try_read(c, &mut LinkSum::default(), true), None);
        });
        let mut sum = LinkSum::default();
        assert_eq!(try_read(&c, &mut sum, true).map(|t| t[CALLS]), Some(3));
        assert_eq!(sum.vals[0][link::REQUESTS], 3);

        // And racing an engine that publishes without pause (its calls
        // always the sum of its two connections', with a pause between
        // the connections and the totals as a preempted thread has),
        // every reading sees them agree.
        // (The engine stops however the readings end, a failed one too.)
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut n = 1u64;
                while !done.load(Ordering::Relaxed) {
                    // (Its I/O between publishes.)
                    for _ in 0..200 {
                        std::hint::spin_loop();
                    }
                    n += 1;
                    let mut totals = [0; PROTO_FIELDS];
                    totals[CALLS] = 3 * n;
                    publish(&c, &totals, |c| {
                        let l = links_of(c, LinkKind::Connection, two);
                        l.store(0, &[n, 0, 0, 0]);
                        l.store(1, &[2 * n, 0, 0, 0]);
                        for _ in 0..20 {
                            std::hint::spin_loop();
                        }
                    });
                }
            });
            let _stop = Stop(&done);
            // 5,000 readings from the engine's first publish on (its
            // thread may start after the first of them).
            let mut last = 0;
            while last == 0 {
                last = read(&c, &mut LinkSum::default())[CALLS];
            }
            for reading in 0..5_000 {
                sum.clear();
                let calls = read(&c, &mut sum)[CALLS];
                let links: u64 = sum.vals.iter().map(|v| v[link::REQUESTS]).sum();
                assert_eq!(links, calls, "reading {reading}");
                assert!(calls >= last, "never back");
                last = calls;
            }
        });
    }

    #[test]
    fn a_publication_that_never_ends_holds_a_reading_back_only_so_long() {
        use super::super::proto::CALLS;
        // A worker that died mid-publication: the sequence stays odd.
        let c = LiveCounters::default();
        c.proto[CALLS].store(7, Ordering::Relaxed);
        c.proto_seq.store(1, Ordering::Relaxed);
        let t = std::time::Instant::now();
        assert_eq!(read(&c, &mut LinkSum::default())[CALLS], 7);
        assert!(t.elapsed() >= READ_PATIENCE);
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
