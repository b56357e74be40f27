//! The counts of a result.json that cost the views far more than their
//! text (runs, notes, findings, names), bounded before any view is built:
//! with the file's own cap (256 MiB), what `report` and `compare` hold.
//! A report of 20,000 runs took 1.2 GB: no job volbench runs writes that
//! many, so such a file is refused in one line, its runs counted in the
//! text before any is built (a 253 MB file of 20,000 runs: 256 MB peak,
//! 665 MB when they were built first).

use crate::result::{MAX_INTERVALS, ResultDoc};
use crate::units::bounds::MAX_SEARCH_STEPS;

/// Runs of a job (`units::bounds::MAX_RUNS`, and a suite's warm-up copy),
/// and hosts in a result's cluster part.
pub(crate) const MAX_RUNS: usize = crate::units::bounds::MAX_RUNS + 1;

/// Runs one result may hold: one per run of its job, and each step of a
/// latency search, a run of its own (at most `MAX_SEARCH_STEPS` and the
/// closed-loop one per search, a search per run of the job).
pub(crate) fn most_runs(doc: &ResultDoc) -> usize {
    let per_search = MAX_SEARCH_STEPS as usize + 1;
    let steps: usize = doc
        .latency_search
        .iter()
        .take(MAX_RUNS)
        .map(|s| s.steps.len().min(per_search))
        .sum();
    MAX_RUNS + steps
}

/// The lists that cost the views far more than their text: a note of two
/// bytes (`""`) becomes a table row and an HTML paragraph, a long run name
/// is repeated in every table and chart. volbench writes a few notes per
/// run and per file set, a handful of findings per run and target, a few
/// lines of basis and names of at most `MAX_NAME_CHARS`; a file with more
/// is not one it wrote, and is refused before any view is built, so the
/// memory a report takes stays a small multiple of the file's size.
pub(crate) fn check_counts(doc: &ResultDoc) -> Result<(), String> {
    use crate::units::bounds::MAX_NAME_CHARS;
    let many = |what: &str, n: usize, max: usize| {
        if n > max {
            Err(format!("{n} {what}, more than {max}"))
        } else {
            Ok(())
        }
    };
    many("runs in its spec", doc.spec.runs.len(), MAX_RUNS)?;
    let sets = doc.runs.len() + doc.spec.runs.len() + doc.fill.len();
    many("notes", doc.notes.len(), 16 + 4 * sets)?;
    let targets: usize = doc.runs.iter().map(|r| r.targets.len()).sum();
    let hosts = doc.cluster.as_ref().map_or(0, |c| c.hosts.len());
    many(
        "findings",
        doc.diagnosis.len(),
        16 * (1 + doc.runs.len() + targets + hosts),
    )?;
    for f in &doc.diagnosis {
        many("runs named by one finding", f.runs.len(), doc.runs.len())?;
        if f.figures.len() > 64 {
            return Err(format!("a finding with {} figures", f.figures.len()));
        }
    }
    if let Some(e) = &doc.expect {
        many("lines of the expectation's basis", e.basis.len(), 16)?;
    }
    let all_runs = doc.runs.iter().chain(
        doc.cluster
            .iter()
            .flat_map(|c| c.hosts.iter().flat_map(|h| &h.runs)),
    );
    for r in all_runs {
        let n = r.name.chars().count();
        if n > MAX_NAME_CHARS {
            return Err(format!(
                "a run name of {n} characters; volbench names runs in at most {MAX_NAME_CHARS}"
            ));
        }
        if let Some(c) = &r.counters {
            many("counter intervals", c.intervals.len(), MAX_INTERVALS + 2)?;
        }
    }
    Ok(())
}

/// The counts `most_runs` and the cluster check need, read from the text
/// without building a run: a file of 20,000 runs is refused at the cost of
/// its text (its runs, each tens of kilobytes once built, never are).
#[derive(serde::Deserialize)]
pub(crate) struct Counts {
    #[serde(default)]
    runs: Count,
    #[serde(default)]
    latency_search: SearchSteps,
    #[serde(default)]
    cluster: Option<ClusterCounts>,
}

#[derive(serde::Deserialize)]
struct ClusterCounts {
    #[serde(default)]
    hosts: Count,
    #[serde(default)]
    runs: Count,
}

impl Counts {
    /// The refusal `check_doc` would give, before the runs are built.
    pub(crate) fn check(&self) -> Result<(), String> {
        let most = MAX_RUNS + self.latency_search.0;
        if self.runs.0 > most {
            return Err(format!(
                "{} runs, more than {most}: no volbench job writes that many",
                self.runs.0
            ));
        }
        if let Some(c) = &self.cluster {
            if c.hosts.0 > crate::units::bounds::MAX_HOSTS || c.runs.0 > most {
                return Err("a cluster section out of bounds".into());
            }
        }
        Ok(())
    }
}

/// The length of a JSON array, its elements skipped.
#[derive(Default)]
struct Count(usize);

impl<'de> serde::Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Count, A::Error> {
                let mut n = 0usize;
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Count(n))
            }
        }
        d.deserialize_seq(V)
    }
}

/// What `most_runs` adds for latency searches: each search's steps, at
/// most `MAX_SEARCH_STEPS + 1`, over the first `MAX_RUNS` searches.
#[derive(Default)]
struct SearchSteps(usize);

impl<'de> serde::Deserialize<'de> for SearchSteps {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Search {
            #[serde(default)]
            steps: Count,
        }
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SearchSteps;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of searches")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<SearchSteps, A::Error> {
                let per_search = MAX_SEARCH_STEPS as usize + 1;
                let (mut seen, mut steps) = (0usize, 0usize);
                while seen < crate::units::bounds::MAX_RUNS {
                    match a.next_element::<Search>()? {
                        Some(s) => steps += s.steps.0.min(per_search),
                        None => return Ok(SearchSteps(steps)),
                    }
                    seen += 1;
                }
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(SearchSteps(steps))
            }
        }
        d.deserialize_seq(V)
    }
}
