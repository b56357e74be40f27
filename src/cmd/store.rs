//! `volbench store import DIR|FILE...`: earlier result directories and fio
//! JSON output kept in the store, each in its own transaction; one that
//! cannot be read is said, the others still go in, and the exit code is
//! that of the first failure.

use crate::error::{Result, exit};
use crate::input::args::results::StoreCommand;
use crate::store::{Location, Store, import};

pub(crate) fn cmd_store(c: &StoreCommand) -> Result<i32> {
    match c {
        StoreCommand::Import { paths, store } => {
            let files = import::files(paths)?;
            let mut s = Store::open(&Location::for_reading(store.as_deref())?, true)?;
            let mut code = exit::OK;
            let (mut new, mut known) = (0, 0);
            let (mut read_s, mut store_s) = (0.0, 0.0);
            for o in import::import(&mut s, &files) {
                read_s += o.read_s;
                store_s += o.store_s;
                match o.what {
                    Ok((p, source)) if p.new => {
                        new += 1;
                        crate::console::outln!("store:{}\t{}\t{}", p.id, source, o.path.display());
                    }
                    Ok((p, _)) => {
                        known += 1;
                        crate::console::outln!(
                            "store:{}\talready stored\t{}",
                            p.id,
                            o.path.display()
                        );
                    }
                    Err(e) => {
                        crate::console::errln!("volbench: error: {e}");
                        if code == exit::OK {
                            code = e.exit_code();
                        }
                    }
                }
            }
            crate::console::errln!(
                "store import: {new} stored, {known} already there, in {} (reading {read_s:.3} s, \
                 storing {store_s:.3} s)",
                s.shown()
            );
            Ok(code)
        }
    }
}
