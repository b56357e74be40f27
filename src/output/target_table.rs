//! The per-target table of runs over several local targets: each target's
//! own IOPS, MiB/s and latency beside the others, so one slow volume
//! among fast ones shows instead of vanishing in the total.

use crate::output::fmt::{mib_s, micros, thousands};
use crate::output::table::Table;
use crate::result::RunResult;

pub fn per_target(runs: &[&RunResult]) -> Option<Table> {
    if runs.iter().all(|r| r.targets.is_empty()) {
        return None;
    }
    let mut t = Table::new(
        "Per target",
        &[
            "run", "target", "op", "threads", "IOPS", "MiB/s", "mean", "p99",
        ],
        3,
    );
    for run in runs {
        for tr in &run.targets {
            for (op, o) in [("read", &tr.read), ("write", &tr.write)] {
                if o.ops == 0 {
                    continue;
                }
                t.rows.push(vec![
                    run.name.clone(),
                    tr.path.clone(),
                    op.into(),
                    tr.io_threads.to_string(),
                    thousands(o.iops),
                    mib_s(o.mib_s),
                    micros(o.lat_us_mean),
                    micros(o.lat_us_p99),
                ]);
            }
        }
    }
    t.notes
        .push("each target's own figures; the tables above are their exact merge".into());
    Some(t)
}
