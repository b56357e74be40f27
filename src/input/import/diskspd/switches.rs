//! The diskspd switch table: one row per switch letter (its value, and the
//! rule that maps it, notes it or refuses it by name). A new switch is one
//! row, one function and a test.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::state::{Arg, Given, State, count, secs, size, sized};
use crate::units::{bounds, format_size};

/// What volbench does with a switch.
pub(crate) enum Rule {
    /// Read by its function, which maps it or refuses it.
    Map(fn(&mut State, &Arg)),
    /// Mapped whatever its value, with this note for the user.
    Note(&'static str),
    /// Refused whatever its value: volbench cannot keep its meaning.
    Refuse(&'static str),
}

pub(crate) struct Switch {
    pub(crate) letter: char,
    /// The value it takes, as diskspd's usage shows it (for the reference
    /// page, which a test holds against this table).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) value: &'static str,
    pub(crate) rule: Rule,
}

const fn row(letter: char, value: &'static str, rule: Rule) -> Switch {
    Switch {
        letter,
        value,
        rule,
    }
}

pub(crate) const SWITCHES: &[Switch] = &[
    row('b', "<size>", Rule::Map(block)),
    row('c', "<size>", Rule::Map(create)),
    row('d', "<seconds>", Rule::Map(duration)),
    row('W', "<seconds>", Rule::Map(warmup)),
    row('C', "<seconds>", Rule::Map(cooldown)),
    row('r', "[<align>|s<pct>|dpct<zones>]", Rule::Map(random)),
    row('s', "[i][<stride>]", Rule::Map(sequential)),
    row('w', "<pct>", Rule::Map(write)),
    row('t', "<threads>", Rule::Map(per_target)),
    row('F', "<threads>", Rule::Map(total_threads)),
    row('o', "<count>", Rule::Map(outstanding)),
    row('O', "<count>", Rule::Map(outstanding_per_thread)),
    row('T', "<offset>", Rule::Map(thread_stride)),
    row('S', "[b|h|u|w]", Rule::Map(caching)),
    row('h', "", Rule::Map(old_h)),
    row('L', "", Rule::Map(latency)),
    row('Z', "[r|<size>]", Rule::Map(write_source)),
    row('g', "<bytes/ms>[i]", Rule::Map(throughput)),
    row('D', "[<ms>]", Rule::Map(interval)),
    row('B', "<offset>[:<length>]", Rule::Map(base)),
    row('f', "<size>|[r|s|t|p]", Rule::Map(max_offset)),
    row('z', "[<seed>]", Rule::Map(seed)),
    row(
        'a',
        "<cpus>",
        Rule::Note("ignored: volbench does not pin its threads to CPUs"),
    ),
    row(
        'n',
        "",
        Rule::Note("ignored: volbench does not pin its threads to CPUs"),
    ),
    row('R', "<format>", Rule::Note(OWN_OUTPUT)),
    row('v', "", Rule::Note(OWN_OUTPUT)),
    row('P', "<count>", Rule::Note(OWN_OUTPUT)),
    row('x', "", Rule::Note(OWN_OUTPUT)),
    row('l', "", Rule::Note(OWN_OUTPUT)),
    row('e', "<event>", Rule::Note(OWN_OUTPUT)),
    row(
        'i',
        "<count>",
        Rule::Refuse("not supported yet (bursts and think time)"),
    ),
    row(
        'j',
        "<ms>",
        Rule::Refuse("not supported yet (bursts and think time)"),
    ),
    row(
        'p',
        "",
        Rule::Refuse("not supported yet (threads issuing sequential I/O at one shared offset)"),
    ),
];

const OWN_OUTPUT: &str = "diskspd's own output or timing detail; volbench reports its own way";

/// The row of a switch letter.
pub(crate) fn find(letter: char) -> Option<&'static Switch> {
    SWITCHES.iter().find(|s| s.letter == letter)
}

fn block(s: &mut State, a: &Arg) {
    match size(&a.v) {
        Ok(b) if b <= bounds::MAX_BS => {
            s.bs = b;
            s.exact(a, format!("bs = {}", format_size(b)));
        }
        Ok(_) => s.refuse(a, "block size above 1g"),
        Err(e) => s.refuse(a, e),
    }
}

fn create(s: &mut State, a: &Arg) {
    match sized(&a.v, s.bs) {
        Ok(b) => {
            s.create = Some(Given::of(b, a));
            s.exact(a, "size of each file");
        }
        Err(e) => s.refuse(a, e),
    }
}

fn duration(s: &mut State, a: &Arg) {
    match secs(&a.v) {
        Ok(d) if d > 0.0 => {
            s.duration = d;
            s.exact(a, "duration");
        }
        _ => s.refuse(a, "a duration of 1..2592000 seconds"),
    }
}

fn warmup(s: &mut State, a: &Arg) {
    match secs(&a.v) {
        Ok(w) => {
            s.warmup = w;
            s.exact(a, "warmup");
        }
        Err(e) => s.refuse(a, e),
    }
}

fn cooldown(s: &mut State, a: &Arg) {
    match secs(&a.v) {
        Ok(0.0) => s.exact(a, "no cool-down"),
        Ok(c) => {
            let text = super::super::secs_text(c);
            s.shape.push(("cooldown", format!("\"{text}\"")));
            s.exact(a, format!("cooldown = {text}: I/O goes on, not counted"));
        }
        Err(e) => s.refuse(a, e),
    }
}

/// `-r`, `-r<align>`, `-rs<pct>`, `-rdpct<zones>` (`-rdabs` refused).
fn random(s: &mut State, a: &Arg) {
    let v = a.v.as_str();
    if let Some(zones) = v.strip_prefix("dpct") {
        match hot_zones(zones) {
            Ok(dist) => {
                s.shape.push(("distribution", format!("\"{dist}\"")));
                s.exact(
                    a,
                    format!(
                        "distribution = {dist}: the same IO%/target% zones, the rest of the I/O to the rest of the target"
                    ),
                );
            }
            Err(e) => s.refuse(a, e),
        }
    } else if v.starts_with('d') {
        s.unsupported(
            a,
            "zones of absolute sizes; -rdpct (zones as percentages of the target) maps",
        );
    } else if let Some(p) = v.strip_prefix('s') {
        match p.parse::<u64>() {
            Ok(p) if p <= 100 => {
                s.random = true;
                s.shape.push(("seek_pct", p.to_string()));
                s.exact(
                    a,
                    format!(
                        "seek_pct = {p}: {p}% random, the rest sequential on from the last I/O"
                    ),
                );
            }
            _ => s.refuse(a, "a percentage of random I/O, 0..100"),
        }
    } else if v.is_empty() {
        s.random = true;
        s.exact(a, "random offsets, block aligned");
    } else {
        match size(v) {
            // Judged against the final -b: `-r4k -b4k` is aligned too.
            Ok(al) => {
                s.random = true;
                s.align = Some(Given::of(al, a));
            }
            Err(_) => s.refuse(a, "-r takes an alignment in bytes (K, M, G, T)"),
        }
    }
}

fn sequential(s: &mut State, a: &Arg) {
    let (interlocked, stride) = match a.v.strip_prefix('i') {
        Some(x) => (true, x),
        None => (false, a.v.as_str()),
    };
    if !stride.is_empty() && sized(stride, s.bs).ok() != Some(s.bs) {
        s.unsupported(a, "a sequential stride other than the block size");
    } else if interlocked {
        s.random = false;
        s.interlocked = true;
        s.note(
            a,
            "sequential; diskspd's threads share one offset, volbench's threads each stream through their own part",
        );
    } else {
        s.random = false;
        s.exact(a, "sequential");
    }
}

fn write(s: &mut State, a: &Arg) {
    match count(&a.v, 0, 100) {
        Ok(w) => {
            s.write_pct = w;
            s.exact(
                a,
                format!("read_pct = {}: each I/O a write with this chance", 100 - w),
            );
        }
        Err(e) => s.refuse(a, e),
    }
}

fn per_target(s: &mut State, a: &Arg) {
    match count(&a.v, 1, bounds::MAX_THREADS) {
        Ok(t) => {
            s.per_target = Some(t);
            s.exact(a, "threads per target");
        }
        Err(e) => s.refuse(a, e),
    }
}

fn total_threads(s: &mut State, a: &Arg) {
    match count(&a.v, 1, bounds::MAX_THREADS) {
        Ok(t) => {
            s.total_threads = Some(t);
            s.exact(a, "threads in all, each reaching every target");
        }
        Err(e) => s.refuse(a, e),
    }
}

fn outstanding(s: &mut State, a: &Arg) {
    match count(&a.v, 1, bounds::MAX_IODEPTH) {
        Ok(o) => {
            s.outstanding = o;
            s.exact(a, "outstanding I/Os per thread on each of its targets");
        }
        Err(e) => s.refuse(a, e),
    }
}

/// `-O`: diskspd's outstanding I/Os per thread over all the targets it
/// reaches (with `-F`, rather than `-o` on each target).
fn outstanding_per_thread(s: &mut State, a: &Arg) {
    match count(&a.v, 1, bounds::MAX_IODEPTH) {
        Ok(o) => {
            s.per_thread = Some(Given::of(o, a));
            s.exact(
                a,
                format!("iodepth = {o}: outstanding I/Os per thread over all its targets"),
            );
        }
        Err(e) => s.refuse(a, e),
    }
}

fn thread_stride(s: &mut State, a: &Arg) {
    if a.v == "0" {
        s.exact(a, "no offset between threads");
    } else {
        s.unsupported(a, "a fixed offset between threads' I/O");
    }
}

/// The system's names for direct I/O and write-through, for the notes:
/// the engine opens with these flags here.
const DIRECT: &str = if cfg!(windows) {
    "FILE_FLAG_NO_BUFFERING"
} else {
    "O_DIRECT"
};
const THROUGH: &str = if cfg!(windows) {
    "FILE_FLAG_WRITE_THROUGH"
} else {
    "O_DSYNC"
};

fn caching(s: &mut State, a: &Arg) {
    match a.v.as_str() {
        "" | "u" => {
            s.direct = true;
            s.exact(a, format!("direct = true ({DIRECT}: no software cache)"));
        }
        "b" => {
            s.direct = false;
            s.exact(a, "direct = false (the page cache)");
        }
        "h" | "uw" | "wu" => {
            s.direct = true;
            s.write_sync = Some("dsync");
            s.exact(
                a,
                format!(
                    "direct = true, write_sync = \"dsync\" (no software cache, write-through: {DIRECT} + {THROUGH})"
                ),
            );
        }
        "w" => {
            s.write_sync = Some("dsync");
            s.exact(
                a,
                format!("write_sync = \"dsync\" (write-through: {THROUGH})"),
            );
        }
        _ => s.unsupported(a, "this caching mode"),
    }
}

fn old_h(s: &mut State, a: &Arg) {
    if a.v.is_empty() {
        s.direct = true;
        s.write_sync = Some("dsync");
        s.exact(
            a,
            "direct = true, write_sync = \"dsync\" (-h is the old spelling of -Sh)",
        );
    } else {
        s.refuse(a, "not a diskspd switch (-h takes no value)");
    }
}

fn latency(s: &mut State, a: &Arg) {
    if a.v.is_empty() {
        s.exact(a, "volbench always measures latency");
    } else {
        s.refuse(a, "not a diskspd switch (-L takes no value)");
    }
}

fn write_source(s: &mut State, a: &Arg) {
    if a.v.is_empty() {
        s.unsupported(a, "writing zeros");
    } else if a.v == "r" || size(&a.v).is_ok() {
        s.note(
            a,
            "volbench writes its own incompressible data, unique per block",
        );
    } else {
        s.unsupported(a, "a write source file");
    }
}

fn throughput(s: &mut State, a: &Arg) {
    let (num, iops) = match a.v.strip_suffix('i') {
        Some(n) => (n, true),
        None => (a.v.as_str(), false),
    };
    match num.parse::<f64>() {
        Ok(g) if g > 0.0 && g.is_finite() => s.throttle = Some(Given::of((g, iops), a)),
        _ => s.refuse(a, "a positive throughput limit"),
    }
}

fn interval(s: &mut State, a: &Arg) {
    let ms = if a.v.is_empty() {
        Ok(1000)
    } else {
        count(&a.v, 50, 3_600_000)
    };
    match ms {
        Ok(ms) => {
            s.interval = Some(ms as f64 / 1000.0);
            s.exact(a, "interval");
        }
        Err(e) => s.refuse(a, e),
    }
}

/// `-B<base>` or `-B<base>:<length>`: judged with `-c` once all are read.
fn base(s: &mut State, a: &Arg) {
    let (b, len) = match a.v.split_once(':') {
        Some((b, l)) => (b, Some(l)),
        None => (a.v.as_str(), None),
    };
    let b = if b == "0" { Ok(0) } else { sized(b, s.bs) };
    let len = len.map(|l| sized(l, s.bs)).transpose();
    match (b, len) {
        (Ok(0), Ok(None)) => s.exact(a, "from the start"),
        (Ok(b), Ok(l)) => s.base = Some(Given::of((b, l), a)),
        (Err(e), _) | (_, Err(e)) => s.refuse(a, e),
    }
}

/// `-f<size>`, the highest offset (judged with `-c`), or `-fr`/`-fs`/
/// `-ft`/`-fp`, Windows' file-access hints.
fn max_offset(s: &mut State, a: &Arg) {
    let hints = !a.v.is_empty() && a.v.chars().all(|c| "rstp".contains(c));
    if hints {
        s.note(
            a,
            "ignored: Windows' file-access hints (random, sequential, temporary, parallel); \
             volbench gives Linux no hint, so buffered reads keep the kernel's read-ahead",
        );
        return;
    }
    match sized(&a.v, s.bs) {
        Ok(f) => s.max_offset = Some(Given::of(f, a)),
        Err(e) => s.refuse(a, e),
    }
}

fn seed(s: &mut State, a: &Arg) {
    match a.v.parse::<u64>() {
        Ok(z) => {
            s.seed = Some(z);
            s.exact(a, "seed");
        }
        Err(_) if a.v.is_empty() => s.note(a, "volbench's default seed"),
        Err(_) => s.refuse(a, "a whole-number seed"),
    }
}

/// diskspd's `-rdpct` zones (`90/10:0/10:5/20`) as volbench's hot zones:
/// the same IO%/space% pairs, and both leave the rest of the I/O to the rest
/// of the target.
fn hot_zones(arg: &str) -> Result<String, String> {
    let dist = format!("hot:{}", arg.replace(':', ","));
    crate::spec::shape::Distribution::parse(&dist)
        .map(|_| dist)
        .map_err(|e| e.message)
}
