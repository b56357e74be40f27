//! vdbench's FillWrite: a wd writing every lun sequentially to its end
//! (`rdpct=0,seekpct=eof`) is what volbench's fill does before the first
//! run, so its xfersize becomes the suite's `fill_bs` and the rd needs no
//! run of its own (the fill is reported as result.json `fill`). A file
//! holding only the fill keeps it as a run, so the suite has something to
//! run and time; the fill before it then writes the luns once more.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::super::{How, Mapping, Notes};
use super::parse::Def;
use crate::input::suite::RunEntry;
use crate::units::format_size;

#[derive(Default)]
pub(super) struct Fill {
    pub(crate) bs: Option<u64>,
    /// The fill rd's threads (vdbench papers fill with `forthreads=1`).
    pub(crate) threads: Option<u64>,
    /// The fill rds' runs (and how their keys were mapped), kept only when
    /// nothing else runs.
    pub(crate) runs: Vec<(RunEntry, Vec<Mapping>)>,
    mapped: Vec<Mapping>,
}

impl Fill {
    /// Whether this point of an rd is a fill: if so its transfer size is
    /// taken (one size per suite) and the caller sets its run aside.
    pub(super) fn takes(
        &mut self,
        seek: &str,
        read_pct: u8,
        bs: &[(u64, u32)],
        threads: u64,
        wd: &Def,
        notes: &mut Notes,
    ) -> bool {
        if seek != "eof" || read_pct != 0 {
            return false;
        }
        match self.threads {
            None if threads <= u64::from(crate::units::bounds::MAX_FILL_THREADS) => {
                self.threads = Some(threads);
                self.mapped.push(Mapping {
                    at: wd.at.clone(),
                    option: format!("forthreads of wd={} seekpct=eof", wd.name),
                    how: How::Exact(format!(
                        "fill_threads = {threads}: the fill's threads, each writing one file at a time"
                    )),
                });
            }
            None => notes.unsupported(
                &wd.at,
                &format!("forthreads={threads} of wd={} seekpct=eof", wd.name),
                &format!(
                    "a fill of more than {} threads",
                    crate::units::bounds::MAX_FILL_THREADS
                ),
            ),
            Some(had) if had == threads => {}
            Some(_) => notes.unsupported(
                &wd.at,
                &format!("forthreads of wd={} seekpct=eof", wd.name),
                "two fills of different thread counts",
            ),
        }
        let option = format!("wd={} seekpct=eof xfersize", wd.name);
        match (bs, self.bs) {
            ([(b, _)], None) => {
                self.bs = Some(*b);
                self.mapped.push(Mapping {
                    at: wd.at.clone(),
                    option,
                    how: How::Exact(format!(
                        "fill_bs = {}: volbench's fill writes every file sequentially to its end before the first run",
                        format_size(*b)
                    )),
                });
            }
            ([(b, _)], Some(had)) if *b == had => {}
            ([_], Some(_)) => notes.unsupported(&wd.at, &option, "two fills of different xfersize"),
            _ => notes.unsupported(
                &wd.at,
                &option,
                "an xfersize distribution for a fill (it writes one size)",
            ),
        }
        true
    }

    /// Drops the fill's runs when others run (the fill is that pass), else
    /// keeps them; says which in the suite's mappings.
    pub(super) fn settle(
        self,
        runs: &mut Vec<(RunEntry, Vec<Mapping>)>,
        global: &mut Vec<Mapping>,
    ) {
        global.extend(self.mapped);
        let Some((first, said)) = self.runs.first() else {
            return;
        };
        let at = said.last().map(|m| m.at.clone()).unwrap_or_default();
        if runs.is_empty() {
            global.push(Mapping {
                at,
                option: format!("rd={}", first.name()),
                how: How::Note(
                    "the only run: kept as a timed sequential pass (io_limit), after volbench's own fill".into(),
                ),
            });
            *runs = self.runs;
        } else {
            global.push(Mapping {
                at,
                option: format!("rd={}", first.name()),
                how: How::Exact(
                    "no run of its own: volbench's fill is that pass, timed in result.json fill"
                        .into(),
                ),
            });
        }
    }
}
