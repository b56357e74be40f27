//! `volbench size` and `volbench service list|show`.

use crate::error::{Result, exit};
use crate::input::args::{ServiceCommand, SizeArgs};
use crate::input::catalogue::{self, size};
use crate::output::fmt::terminal;

pub(crate) fn cmd_size(a: &SizeArgs) -> Result<i32> {
    let all = catalogue::load(a.catalogue.catalogue.as_deref())?;
    let text = match (&a.quota, &a.need) {
        (_, Some(n)) => size::quota_for(&all, &a.service, size::parse_need(n)?)?,
        (Some(q), None) => size::capacity(&all, &a.service, Some(size::parse_quota(q)?))?,
        (None, None) => size::capacity(&all, &a.service, None)?,
    };
    crate::console::outln!("{}", terminal(&text));
    Ok(exit::OK)
}

pub(crate) fn cmd_service(c: &ServiceCommand) -> Result<i32> {
    match c {
        ServiceCommand::List(cat) => {
            let all = catalogue::load(cat.catalogue.as_deref())?;
            let mut origin = "";
            for s in &all {
                if s.origin != origin {
                    origin = &s.origin;
                    crate::console::outln!("# {}", terminal(origin));
                }
                crate::console::outln!("{}", terminal(&size::brief(s)));
            }
            crate::console::outln!(
                "\n`volbench service show NAME` prints an entry with its source; \
                 `volbench size --service NAME --quota SIZE | --need RATE` works out a volume."
            );
        }
        ServiceCommand::Show { name, catalogue } => {
            let all = catalogue::load(catalogue.catalogue.as_deref())?;
            crate::console::outln!("{}", terminal(&size::show(catalogue::find(&all, name)?)));
        }
    }
    Ok(exit::OK)
}
