//! A suite's data keys (`[defaults]` compress, dedup, dedup_unit, verify):
//! each fills in the flag the command line left out, then goes through the
//! flags' own parsers (`args::data`), so the bounds are the same.

use super::{Ctx, P, Param};
use crate::error::{Result, VbError};
use crate::input::args::data::{compress, dedup, dedup_unit};
use crate::input::overrides::DataFlags;
use crate::spec::data::DataSpec;

/// The suite's data defaults, as written in its `[defaults]`.
pub(super) struct Keys<'a> {
    pub(crate) compress: &'a P,
    pub(crate) dedup: &'a P,
    pub(crate) dedup_unit: &'a P,
    pub(crate) verify: &'a P,
}

pub(super) fn spec(cx: &Ctx, flags: &DataFlags, k: &Keys) -> Result<DataSpec> {
    let mut a = flags.clone();
    // The flag a user typed wins over the suite's default, as for every
    // key; a suite's value is read by the flag's own parser, its line named.
    let text = |v: &toml::Spanned<Param>| v.get_ref().text();
    if let (None, Some(v)) = (a.compress, k.compress) {
        a.compress = Some(cx.with("compress", Some(v), compress("compress", &text(v)))?);
    }
    if let (None, Some(v)) = (a.dedup, k.dedup) {
        a.dedup = Some(cx.with("dedup", Some(v), dedup("dedup", &text(v)))?);
    }
    if let (None, Some(v)) = (a.dedup_unit, k.dedup_unit) {
        let unit = dedup_unit("dedup_unit", &text(v));
        a.dedup_unit = Some(cx.with("dedup_unit", Some(v), unit)?);
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
    a.spec()
}
