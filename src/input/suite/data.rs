//! A suite's data keys (`[defaults]` compress, dedup, dedup_unit, verify):
//! each fills in the flag the command line left out, then goes through the
//! flags' own parser (`data_args::data_spec`), so the bounds are the same.

use super::{Ctx, P, Param};
use crate::error::{Result, VbError};
use crate::input::args::data::{DataArgs, data_spec};
use crate::spec::data::DataSpec;

/// The suite's data defaults, as written in its `[defaults]`.
pub(super) struct Keys<'a> {
    pub compress: &'a P,
    pub dedup: &'a P,
    pub dedup_unit: &'a P,
    pub verify: &'a P,
}

pub(super) fn spec(cx: &Ctx, flags: &DataArgs, k: &Keys) -> Result<DataSpec> {
    let mut a = flags.clone();
    // The flag a user typed wins over the suite's default, as for every key.
    for (key, flag, val) in [
        ("compress", &mut a.compress, k.compress),
        ("dedup", &mut a.dedup, k.dedup),
        ("dedup_unit", &mut a.dedup_unit, k.dedup_unit),
    ] {
        if flag.is_none() {
            if let Some(v) = val {
                // Check it alone first so an error names the suite's line.
                let mut one = DataArgs::default();
                let t = v.get_ref().text();
                match key {
                    "compress" => one.compress = Some(t.clone()),
                    "dedup" => one.dedup = Some(t.clone()),
                    _ => one.dedup_unit = Some(t.clone()),
                }
                cx.with(key, Some(v), data_spec(&one))?;
                *flag = Some(t);
            }
        }
    }
    if let Some(v) = k.verify {
        match v.get_ref() {
            Param::Bool(b) => a.verify |= *b,
            _ => {
                return Err(cx.err(
                    v,
                    "verify",
                    VbError::input("give true or false".to_string()),
                ));
            }
        }
    }
    data_spec(&a)
}
