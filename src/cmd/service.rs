//! `volbench size`, `volbench service list|show`, and `--expect` with the
//! diagnosis that follows every run.

use crate::error::{Result, VbError, exit};
use crate::input::args::{CommonArgs, ServiceCommand, SizeArgs};
use crate::input::catalogue::{self, size};
use crate::output::fmt::terminal;
use crate::result::ResultDoc;
use crate::result::diagnosis;
use crate::result::expect::Expectation;

pub fn cmd_size(a: &SizeArgs) -> Result<i32> {
    let all = catalogue::load(a.catalogue.catalogue.as_deref())?;
    let text = match (&a.quota, &a.need) {
        (_, Some(n)) => size::quota_for(&all, &a.service, size::parse_need(n)?)?,
        (Some(q), None) => size::capacity(&all, &a.service, Some(size::parse_quota(q)?))?,
        (None, None) => size::capacity(&all, &a.service, None)?,
    };
    println!("{}", terminal(&text));
    Ok(exit::OK)
}

pub fn cmd_service(c: &ServiceCommand) -> Result<i32> {
    match c {
        ServiceCommand::List(cat) => {
            let all = catalogue::load(cat.catalogue.as_deref())?;
            let mut origin = "";
            for s in &all {
                if s.origin != origin {
                    origin = &s.origin;
                    println!("# {}", terminal(origin));
                }
                println!("{}", terminal(&size::brief(s)));
            }
            println!(
                "\n`volbench service show NAME` prints an entry with its source; \
                 `volbench size --service NAME --quota SIZE | --need RATE` works out a volume."
            );
        }
        ServiceCommand::Show { name, catalogue } => {
            let all = catalogue::load(catalogue.catalogue.as_deref())?;
            println!("{}", terminal(&size::show(catalogue::find(&all, name)?)));
        }
    }
    Ok(exit::OK)
}

/// `--expect` checked and worked out before any I/O.
pub fn expectation(c: &CommonArgs) -> Result<Option<Expectation>> {
    let Some(text) = &c.expect else {
        if c.catalogue.catalogue.is_some() {
            return Err(VbError::input(
                "--catalogue is only read for --expect; give --expect SERVICE[:QUOTA]",
            ));
        }
        return Ok(None);
    };
    let all = catalogue::load(c.catalogue.catalogue.as_deref())?;
    size::expectation(&all, text).map(Some)
}

/// The expectation recorded and the diagnosis made, before the result is
/// written and shown.
pub fn annotate(mut doc: ResultDoc, expect: Option<Expectation>) -> ResultDoc {
    if expect.is_some() {
        doc.expect = expect;
    }
    doc.diagnosis = diagnosis::diagnose(&doc);
    doc
}
