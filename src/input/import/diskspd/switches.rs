//! The diskspd switch table: one row per switch letter (its value, and the
//! rule that maps it, notes it or refuses it by name). A new switch is one
//! row, one function and a test.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::Notes;
use super::super::table::{Row, Rule, Verdict, takes};
use super::state::{Given, Opt, State, count, secs, size, sized};
use crate::input::suite::write::value;
use crate::units::{bounds, format_size};

use Rule::{Always, Map};
use Verdict::{Note, Refuse};

/// The table: one row per switch letter, with the value diskspd's usage shows.
pub(crate) const SWITCHES: &[Row<State>] = &[
    takes("b", "<size>", Map(block)),
    takes("c", "<size>", Map(create)),
    takes("d", "<seconds>", Map(duration)),
    takes("W", "<seconds>", Map(warmup)),
    takes("C", "<seconds>", Map(cooldown)),
    takes("r", "[<align>|s<pct>|dpct<zones>]", Map(random)),
    takes("s", "[i][<stride>]", Map(sequential)),
    takes("w", "<pct>", Map(write)),
    takes("t", "<threads>", Map(per_target)),
    takes("F", "<threads>", Map(total_threads)),
    takes("o", "<count>", Map(outstanding)),
    takes("O", "<count>", Map(outstanding_per_thread)),
    takes("T", "<offset>", Map(thread_stride)),
    takes("S", "[b|h|u|w]", Map(caching)),
    takes("h", "", Map(old_h)),
    takes("L", "", Map(latency)),
    takes("Z", "[r|<size>]", Map(write_source)),
    takes("g", "<bytes/ms>[i]", Map(throughput)),
    takes("D", "[<ms>]", Map(interval)),
    takes("B", "<offset>[:<length>]", Map(base)),
    takes("f", "<size>|[r|s|t|p]", Map(max_offset)),
    takes("z", "[<seed>]", Map(seed)),
    takes("a", "<cpus>", Always(Note(PINNING))),
    takes("n", "", Always(Note(PINNING))),
    takes("R", "<format>", Always(Note(OWN_OUTPUT))),
    takes("v", "", Always(Note(OWN_OUTPUT))),
    takes("P", "<count>", Always(Note(OWN_OUTPUT))),
    takes("x", "", Always(Note(OWN_OUTPUT))),
    takes("l", "", Always(Note(OWN_OUTPUT))),
    takes("e", "<event>", Always(Note(OWN_OUTPUT))),
    takes("i", "<count>", Always(Refuse(BURSTS))),
    takes("j", "<ms>", Always(Refuse(BURSTS))),
    takes(
        "p",
        "",
        Always(Refuse(
            "threads issuing sequential I/O at one shared offset",
        )),
    ),
];

const OWN_OUTPUT: &str = "diskspd's own output or timing detail; volbench reports its own way";
const PINNING: &str = "ignored: volbench does not pin its threads to CPUs";
const BURSTS: &str = "bursts and think time";

fn block(a: &Opt, s: &mut State, n: &mut Notes) {
    match size(a.val()) {
        Ok(b) if b <= bounds::MAX_BS => {
            s.bs = b;
            s.exact(a, format!("bs = {}", format_size(b)));
        }
        Ok(_) => a.refuse(n, "block size above 1g"),
        Err(e) => a.refuse(n, e),
    }
}

fn create(a: &Opt, s: &mut State, n: &mut Notes) {
    match sized(a.val(), s.bs) {
        Ok(b) => {
            s.create = Some(Given::of(b, a));
            s.exact(a, "size of each file");
        }
        Err(e) => a.refuse(n, e),
    }
}

fn duration(a: &Opt, s: &mut State, n: &mut Notes) {
    match secs(a.val()) {
        Ok(d) if d > 0.0 => {
            s.duration = d;
            s.exact(a, "duration");
        }
        _ => a.refuse(n, "a duration of 1..2592000 seconds"),
    }
}

fn warmup(a: &Opt, s: &mut State, n: &mut Notes) {
    match secs(a.val()) {
        Ok(w) => {
            s.warmup = w;
            s.exact(a, "warmup");
        }
        Err(e) => a.refuse(n, e),
    }
}

fn cooldown(a: &Opt, s: &mut State, n: &mut Notes) {
    match secs(a.val()) {
        Ok(0.0) => s.exact(a, "no cool-down"),
        Ok(c) => {
            let text = super::super::secs_text(c);
            s.run.cooldown = value(text.as_str());
            s.exact(a, format!("cooldown = {text}: I/O goes on, not counted"));
        }
        Err(e) => a.refuse(n, e),
    }
}

/// `-r`, `-r<align>`, `-rs<pct>`, `-rdpct<zones>` (`-rdabs` refused).
fn random(a: &Opt, s: &mut State, n: &mut Notes) {
    let v = a.val();
    if let Some(zones) = v.strip_prefix("dpct") {
        match hot_zones(zones) {
            Ok(dist) => {
                s.run.distribution = value(dist.as_str());
                s.exact(
                    a,
                    format!(
                        "distribution = {dist}: the same IO%/target% zones, the rest of the I/O to the rest of the target"
                    ),
                );
            }
            Err(e) => a.refuse(n, e),
        }
    } else if v.starts_with('d') {
        n.unsupported(
            &a.at,
            &a.text(),
            "zones of absolute sizes; -rdpct (zones as percentages of the target) maps",
        );
    } else if let Some(p) = v.strip_prefix('s') {
        match p.parse::<u64>() {
            Ok(p) if p <= 100 => {
                s.random = true;
                s.run.seek_pct = value(p);
                s.exact(
                    a,
                    format!(
                        "seek_pct = {p}: {p}% random, the rest sequential on from the last I/O"
                    ),
                );
            }
            _ => a.refuse(n, "a percentage of random I/O, 0..100"),
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
            Err(_) => a.refuse(n, "-r takes an alignment in bytes (K, M, G, T)"),
        }
    }
}

fn sequential(a: &Opt, s: &mut State, n: &mut Notes) {
    let (interlocked, stride) = match a.val().strip_prefix('i') {
        Some(x) => (true, x),
        None => (false, a.val()),
    };
    if !stride.is_empty() && sized(stride, s.bs).ok() != Some(s.bs) {
        n.unsupported(
            &a.at,
            &a.text(),
            "a sequential stride other than the block size",
        );
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

fn write(a: &Opt, s: &mut State, n: &mut Notes) {
    match count(a.val(), 0, 100) {
        Ok(w) => {
            s.write_pct = w;
            s.exact(
                a,
                format!("read_pct = {}: each I/O a write with this chance", 100 - w),
            );
        }
        Err(e) => a.refuse(n, e),
    }
}

fn per_target(a: &Opt, s: &mut State, n: &mut Notes) {
    match count(a.val(), 1, bounds::MAX_THREADS) {
        Ok(t) => {
            s.per_target = Some(t);
            s.exact(a, "threads per target");
        }
        Err(e) => a.refuse(n, e),
    }
}

fn total_threads(a: &Opt, s: &mut State, n: &mut Notes) {
    match count(a.val(), 1, bounds::MAX_THREADS) {
        Ok(t) => {
            s.total_threads = Some(t);
            s.exact(a, "threads in all, each reaching every target");
        }
        Err(e) => a.refuse(n, e),
    }
}

fn outstanding(a: &Opt, s: &mut State, n: &mut Notes) {
    match count(a.val(), 1, bounds::MAX_IODEPTH) {
        Ok(o) => {
            s.outstanding = o;
            s.exact(a, "outstanding I/Os per thread on each of its targets");
        }
        Err(e) => a.refuse(n, e),
    }
}

/// `-O`: diskspd's outstanding I/Os per thread over all the targets it
/// reaches (with `-F`, rather than `-o` on each target).
fn outstanding_per_thread(a: &Opt, s: &mut State, n: &mut Notes) {
    match count(a.val(), 1, bounds::MAX_IODEPTH) {
        Ok(o) => {
            s.per_thread = Some(Given::of(o, a));
            s.exact(
                a,
                format!("iodepth = {o}: outstanding I/Os per thread over all its targets"),
            );
        }
        Err(e) => a.refuse(n, e),
    }
}

fn thread_stride(a: &Opt, s: &mut State, n: &mut Notes) {
    if a.val() == "0" {
        s.exact(a, "no offset between threads");
    } else {
        n.unsupported(&a.at, &a.text(), "a fixed offset between threads' I/O");
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

fn caching(a: &Opt, s: &mut State, n: &mut Notes) {
    match a.val() {
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
        _ => n.unsupported(&a.at, &a.text(), "this caching mode"),
    }
}

fn old_h(a: &Opt, s: &mut State, n: &mut Notes) {
    if a.val().is_empty() {
        s.direct = true;
        s.write_sync = Some("dsync");
        s.exact(
            a,
            "direct = true, write_sync = \"dsync\" (-h is the old spelling of -Sh)",
        );
    } else {
        a.refuse(n, "not a diskspd switch (-h takes no value)");
    }
}

fn latency(a: &Opt, s: &mut State, n: &mut Notes) {
    if a.val().is_empty() {
        s.exact(a, "volbench always measures latency");
    } else {
        a.refuse(n, "not a diskspd switch (-L takes no value)");
    }
}

fn write_source(a: &Opt, s: &mut State, n: &mut Notes) {
    if a.val().is_empty() {
        n.unsupported(&a.at, &a.text(), "writing zeros");
    } else if a.val() == "r" || size(a.val()).is_ok() {
        s.note(
            a,
            "volbench writes its own incompressible data, unique per block",
        );
    } else {
        n.unsupported(&a.at, &a.text(), "a write source file");
    }
}

fn throughput(a: &Opt, s: &mut State, n: &mut Notes) {
    let (num, iops) = match a.val().strip_suffix('i') {
        Some(n) => (n, true),
        None => (a.val(), false),
    };
    match num.parse::<f64>() {
        Ok(g) if g > 0.0 && g.is_finite() => s.throttle = Some(Given::of((g, iops), a)),
        _ => a.refuse(n, "a positive throughput limit"),
    }
}

fn interval(a: &Opt, s: &mut State, n: &mut Notes) {
    let ms = if a.val().is_empty() {
        Ok(1000)
    } else {
        count(a.val(), 50, 3_600_000)
    };
    match ms {
        Ok(ms) => {
            s.interval = Some(ms as f64 / 1000.0);
            s.exact(a, "interval");
        }
        Err(e) => a.refuse(n, e),
    }
}

/// `-B<base>` or `-B<base>:<length>`: judged with `-c` once all are read.
fn base(a: &Opt, s: &mut State, n: &mut Notes) {
    let (b, len) = match a.val().split_once(':') {
        Some((b, l)) => (b, Some(l)),
        None => (a.val(), None),
    };
    let b = if b == "0" { Ok(0) } else { sized(b, s.bs) };
    let len = len.map(|l| sized(l, s.bs)).transpose();
    match (b, len) {
        (Ok(0), Ok(None)) => s.exact(a, "from the start"),
        (Ok(b), Ok(l)) => s.base = Some(Given::of((b, l), a)),
        (Err(e), _) | (_, Err(e)) => a.refuse(n, e),
    }
}

/// `-f<size>`, the highest offset (judged with `-c`), or `-fr`/`-fs`/
/// `-ft`/`-fp`, Windows' file-access hints.
fn max_offset(a: &Opt, s: &mut State, n: &mut Notes) {
    let hints = !a.val().is_empty() && a.val().chars().all(|c| "rstp".contains(c));
    if hints {
        s.note(
            a,
            "ignored: Windows' file-access hints (random, sequential, temporary, parallel); \
             volbench gives Linux no hint, so buffered reads keep the kernel's read-ahead",
        );
        return;
    }
    match sized(a.val(), s.bs) {
        Ok(f) => s.max_offset = Some(Given::of(f, a)),
        Err(e) => a.refuse(n, e),
    }
}

fn seed(a: &Opt, s: &mut State, n: &mut Notes) {
    match a.val().parse::<u64>() {
        Ok(z) => {
            s.seed = Some(z);
            s.exact(a, "seed");
        }
        Err(_) if a.val().is_empty() => s.note(a, "volbench's default seed"),
        Err(_) => a.refuse(n, "a whole-number seed"),
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
