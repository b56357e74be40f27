//! vdbench's openflags= (on sd, wd or rd): o_direct, and o_sync / o_dsync
//! onto volbench's write_sync, which holds for the whole suite.

use super::super::Notes;

/// Applies one openflags= value; the sync mode must agree wherever it is given.
pub(super) fn openflags(
    notes: &mut Notes,
    at: &str,
    text: &str,
    flags: &[String],
    direct: &mut bool,
    sync: &mut Option<&'static str>,
) {
    for f in flags {
        let mode = match f.to_ascii_lowercase().as_str() {
            "o_direct" | "directio" => {
                *direct = true;
                continue;
            }
            "o_sync" => "sync",
            "o_dsync" => "dsync",
            _ => {
                notes.unsupported(at, text, "openflags other than o_direct, o_sync, o_dsync");
                return;
            }
        };
        match sync {
            Some(m) if *m != mode => notes.refuse(
                at,
                text,
                format!("o_{mode} after o_{m} elsewhere: volbench's write_sync holds for the whole suite"),
            ),
            _ => *sync = Some(mode),
        }
    }
}
