//! A suite's published variant: the values its paper ran with (thread
//! counts, sizes, durations), kept as data in a `[published]` table beside
//! the scaled-down defaults and chosen with `--published`. The table is
//! whole: its `[published.defaults]` replace `[defaults]`, its
//! `[[published.run]]` entries (when it has any) replace the `[[run]]`
//! list, so what a paper ran is read in one place.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::{Defaults, RunEntry, SuiteFile};
use crate::error::{Result, VbError};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Published {
    /// Where the numbers come from: the paper and its command line.
    pub(crate) source: String,
    /// What volbench runs differently from the paper, said on every run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) note: String,
    pub(crate) warmup_run: Option<bool>,
    #[serde(default)]
    pub(crate) defaults: Defaults,
    #[serde(rename = "run", default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) runs: Vec<Spanned<RunEntry>>,
}

/// The suite as published, and the lines that say where it comes from.
pub(crate) fn select(mut suite: SuiteFile, origin: &str) -> Result<(SuiteFile, Vec<String>)> {
    let Some(p) = suite.published.take() else {
        return Err(VbError::input(format!(
            "{origin} has no published variant (no paper gives its parameters); run it without --published"
        )));
    };
    suite.defaults = p.defaults;
    if !p.runs.is_empty() {
        suite.runs = p.runs;
    }
    if let Some(w) = p.warmup_run {
        suite.warmup_run = w;
    }
    let mut lines = vec![format!("published variant of {}: {}", suite.name, p.source)];
    if !p.note.is_empty() {
        lines.push(format!("published variant: {}", p.note));
    }
    Ok((suite, lines))
}

/// The `[published]` part of a suite's text, as written, for `suite show
/// --published`; the built-in suites keep it last.
pub(crate) fn section<'t>(origin: &str, text: &'t str) -> Result<&'t str> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("[published") {
            return Ok(text.get(at..).unwrap_or(text));
        }
        at += line.len();
    }
    Err(VbError::input(format!(
        "{origin} has no published variant (no paper gives its parameters)"
    )))
}
