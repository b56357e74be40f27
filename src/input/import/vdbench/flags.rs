//! vdbench's openflags= (on sd, wd or rd): o_direct, and o_sync / o_dsync
//! onto volbench's write_sync, which holds for the whole suite.

use super::super::Notes;
use super::parse::{Opt, items};

/// Applies one openflags= value; the sync mode must agree wherever it is given.
pub(super) fn openflags(
    o: &Opt,
    notes: &mut Notes,
    direct: &mut bool,
    sync: &mut Option<&'static str>,
) {
    for f in items(o.val()) {
        let mode = match f.to_ascii_lowercase().as_str() {
            "o_direct" | "directio" => {
                *direct = true;
                continue;
            }
            "o_sync" => "sync",
            "o_dsync" => "dsync",
            _ => {
                notes.unsupported(
                    &o.at,
                    &o.text(),
                    "openflags other than o_direct, o_sync, o_dsync",
                );
                return;
            }
        };
        match sync {
            Some(m) if *m != mode => o.refuse(
                notes,
                format!("o_{mode} after o_{m} elsewhere: volbench's write_sync holds for the whole suite"),
            ),
            _ => *sync = Some(mode),
        }
    }
}
