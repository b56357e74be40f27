//! A latency search over the hosts (`--latency-target` with `--hosts`):
//! the executor's search loop, each step one run on every host together,
//! judged on the exact merge of all hosts' histograms.

use super::runs::RunEnd;
use super::{Coordinator, keep_run};
use crate::executor::search::{Ran, search};
use crate::remote::protocol::StepRun;
use crate::result::ResultDoc;
use crate::result::merge::ClusterRun;
use crate::spec::JobSpec;
use crate::spec::latency::LatencySearch;

impl Coordinator<'_> {
    /// Searches run `index`: every step a run of the result, its rate the
    /// whole job's, dealt evenly over the targets of the hosts taking part
    /// (as `--rate` is per target per host). A host lost in a step ends
    /// the search and the job (`--on-host-loss fail`), or is left out and
    /// the step run again on the rest, unjudged (`continue`): a rate is
    /// never judged on a merge that lost part of its load midway.
    pub(super) fn search(
        &mut self,
        index: u32,
        template: &JobSpec,
        s: &LatencySearch,
        doc: &mut ResultDoc,
        cluster_runs: &mut Vec<ClusterRun>,
    ) -> RunEnd {
        let n_runs = template.runs.len();
        let spec = &template.runs[index as usize];
        let obs = self.obs;
        let mut end = RunEnd::Next;
        search(&spec.name, s, doc, obs, true, &mut |st, doc| {
            let targets: usize = self
                .hosts
                .iter()
                .filter(|h| {
                    h.live() && crate::input::hosts::counts::takes_part(spec.host_count, h.a.index)
                })
                .map(|h| h.a.targets.len())
                .sum();
            let each = st.rate.map(|r| r / targets.max(1) as f64);
            let sent = StepRun {
                name: st.name.clone(),
                rate_iops: each,
            };
            self.step = Some((sent, st.rate));
            let before = doc.runs.len();
            let (cr, ended) = self.one_run(index, n_runs, template);
            self.step = None;
            let partial = cr.as_ref().is_some_and(|c| c.0.partial);
            keep_run(cr, doc, cluster_runs);
            let measured = doc.runs.len() > before;
            let ran = match (&ended, measured, partial) {
                (RunEnd::Next, true, false) => Ran::Judged,
                (RunEnd::Next, true, true) => Ran::Again,
                _ => Ran::End,
            };
            end = ended;
            ran
        });
        end
    }
}
