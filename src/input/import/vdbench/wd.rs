//! vdbench's workload definitions (`wd=`), one row per key: what each run
//! of an rd does (its luns, read and seek percentages, transfer sizes,
//! open flags). `skew=` and `hotband=` are read before the rows, when the
//! rd's wds are combined into one workload (`skew.rs`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::table::{self, Row, Rule, Said, Verdict, alias, row};
use super::super::{How, Mapping, Notes};
use super::parse::{Def, Opt, exact, items, xfersize};

use Rule::{Always, Map};
use Verdict::{Note, Refuse};

/// A wd's keys: what each run of an rd does.
pub(super) struct Workload {
    pub(super) rdpct: u64,
    pub(super) seek: String,
    pub(super) bs: Vec<(u64, u32)>,
    pub(super) sd_pat: Vec<String>,
    /// The hot zones of the wds' skews and hotbands (`skew.rs`).
    pub(super) zones: Option<String>,
    pub(super) direct: bool,
}

/// A wd's keys as its rows read them.
pub(super) struct WdRead {
    w: Workload,
    write_sync: Option<&'static str>,
    said: Vec<Mapping>,
}

impl Said for WdRead {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.said
    }
}

const WD_AREA: &str = "cache hits, ranges, strides and streams";

/// In the order vdbench tries them: an abbreviation is the first key it
/// starts (`keys.rs`).
pub(super) const WD: &[Row<WdRead>] = &[
    row("skew", Map(combined)),
    row("xfersize", Map(xfer)),
    alias("rdpct", &["readpct"], Map(rdpct)),
    alias("wrpct", &["writepct"], Map(wrpct)),
    row("range", Always(Refuse(WD_AREA))),
    alias("seekpct", &["seek"], Map(seekpct)),
    row("priority", Always(Refuse(WD_AREA))),
    row(
        "iorate",
        Always(Refuse("a workload's share of the run's rate")),
    ),
    row("rhpct", Always(Refuse(WD_AREA))),
    row("whpct", Always(Refuse(WD_AREA))),
    alias(
        "host",
        &["hd"],
        Always(Note("every host of the sd runs it")),
    ),
    row("generate", Always(Refuse(WD_AREA))),
    row("openflags", Map(openflags)),
    row("stride", Always(Refuse(WD_AREA))),
    row("streams", Always(Refuse(WD_AREA))),
    row("hotband", Map(combined)),
    row("sd", Map(sd)),
];

/// `skew=` and `hotband=`: read when the rd's wds became one workload
/// (`skew::combine`), which takes them out of the wd.
fn combined(_: &Opt, _: &mut WdRead, _: &mut Notes) {}

fn sd(p: &Opt, r: &mut WdRead, _: &mut Notes) {
    r.w.sd_pat = items(p.val());
}

fn rdpct(p: &Opt, r: &mut WdRead, notes: &mut Notes) {
    match p.val().parse::<u64>() {
        Ok(v) if v <= 100 => {
            r.w.rdpct = v;
            exact(&mut r.said, p, "read_pct");
        }
        _ => p.refuse(notes, "must be 0..100"),
    }
}

fn wrpct(p: &Opt, r: &mut WdRead, notes: &mut Notes) {
    match p.val().parse::<u64>() {
        Ok(v) if v <= 100 => {
            r.w.rdpct = 100 - v;
            exact(&mut r.said, p, "read_pct = 100 - this");
        }
        _ => p.refuse(notes, "must be 0..100"),
    }
}

fn seekpct(p: &Opt, r: &mut WdRead, notes: &mut Notes) {
    match p.val().to_ascii_lowercase().as_str() {
        "0" | "seq" | "sequential" => r.w.seek = "seq".into(),
        "100" | "random" => r.w.seek = "random".into(),
        "eof" => r.w.seek = "eof".into(),
        n if n.parse::<u8>().is_ok_and(|n| n < 100) => r.w.seek = n.into(),
        _ => p.refuse(notes, "seekpct is 0..100, seq, random or eof"),
    }
}

fn xfer(p: &Opt, r: &mut WdRead, notes: &mut Notes) {
    match xfersize(p.val()) {
        Ok(x) => {
            r.w.bs = x;
            exact(&mut r.said, p, "bs");
        }
        Err(e) => p.refuse(notes, e),
    }
}

fn openflags(p: &Opt, r: &mut WdRead, notes: &mut Notes) {
    super::flags::openflags(p, notes, &mut r.w.direct, &mut r.write_sync);
}

/// A wd's keys, each mapped or refused; `zones` are the hot zones its
/// skews and hotbands made (`skew::combine`), said at `zones_at`.
pub(super) fn workload(
    wd: &Def,
    zones: Option<(String, String)>,
    m: &mut Vec<Mapping>,
    notes: &mut Notes,
    write_sync: &mut Option<&'static str>,
) -> Workload {
    let mut r = WdRead {
        w: Workload {
            rdpct: 100,
            seek: "random".into(),
            bs: vec![(4096, 1)],
            sd_pat: Vec::new(),
            zones: None,
            direct: false,
        },
        write_sync: *write_sync,
        said: Vec::new(),
    };
    for p in &wd.params {
        table::read(WD, p, &mut r, notes, "wd parameter");
    }
    if let Some((z, at)) = zones {
        r.said.push(Mapping {
            at,
            option: format!("skew=/hotband= of wd={}", wd.name),
            how: How::Note(format!(
                "distribution = \"{z}\" (each band's share of the I/O, the rest spread by \
                 width; within a band vdbench favours its low end, volbench spreads evenly)"
            )),
        });
        r.w.zones = Some(z);
    }
    *write_sync = r.write_sync;
    m.append(&mut r.said);
    r.w
}
