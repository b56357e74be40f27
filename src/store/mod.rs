//! The results store: every run remembered. A result goes in as rows (the
//! run, its conditions and environment, per-op totals and percentiles,
//! intervals, hosts and targets, findings) beside the whole result.json,
//! its source of truth, all in one transaction: a run killed mid-write
//! leaves no half-run. SQLite by default (`sqlite/`, one file, made and
//! opened through the gate's rules), PostgreSQL for a team (`postgres.rs`);
//! both speak `db::Db`, so the schema (`schema.rs`), the rows (`rows.rs`)
//! and the queries (`query.rs`) are written once. `refs.rs` reads
//! `store:ID`, `store:latest`, `store:baseline` where a result directory
//! may be named; `import/` brings in earlier result directories and fio's
//! JSON output.

pub(crate) mod blob;
pub(crate) mod db;
pub(crate) mod import;
pub(crate) mod location;
pub(crate) mod postgres;
pub(crate) mod query;
pub(crate) mod refs;
pub(crate) mod rows;
pub(crate) mod schema;
pub(crate) mod sink;
pub(crate) mod sqlite;

use db::{Db, Val};
pub(crate) use location::Location;
use rows::{Origin, Rows};

use crate::error::{Result, VbError};
use crate::result::ResultDoc;

/// A child table's rows as `put` writes them: its name, its columns, the
/// rows.
type Table<'a> = (&'a str, &'a [&'a str], &'a Vec<Vec<Val>>);

/// An open store.
pub(crate) struct Store {
    db: Box<dyn Db + Send>,
    at: Location,
}

/// What storing a result did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Put {
    pub(crate) id: i64,
    /// False when the same result.json was already stored (as `id`).
    pub(crate) new: bool,
}

impl Store {
    /// Opens the store to read (it must exist and be a volbench store) or
    /// to write (made when absent, brought to this schema).
    pub(crate) fn open(at: &Location, write: bool) -> Result<Store> {
        let db: Box<dyn Db + Send> = match at {
            Location::File(p) => {
                let mode = if write {
                    // Missing directories are made only for the default
                    // location, which volbench chose itself.
                    let parents = location::default_file().is_ok_and(|d| &d == p);
                    // `self::`: our module, not a crate of that name.
                    self::sqlite::file::Mode::Write { parents }
                } else {
                    self::sqlite::file::Mode::Read
                };
                Box::new(self::sqlite::Sqlite::open(p, mode)?)
            }
            Location::Postgres(u) => Box::new(postgres::Postgres::open(u, write)?),
        };
        Ok(Store { db, at: at.clone() })
    }

    /// The store as messages name it (a URL without its password).
    pub(crate) fn shown(&self) -> String {
        self.at.shown()
    }

    pub(crate) fn db(&mut self) -> &mut dyn Db {
        self.db.as_mut()
    }

    /// Stores a result in one transaction; `json` is its result.json text,
    /// kept whole. The same text stored again is the run already there.
    pub(crate) fn put(&mut self, doc: &ResultDoc, json: &str, origin: &Origin) -> Result<Put> {
        let digest = rows::digest(json);
        if let Some(id) = self.by_digest(&digest)? {
            return Ok(Put { id, new: false });
        }
        let blob = blob::pack(json)?;
        let rows = Rows::of(doc, &blob, &digest, origin);
        drop(blob);
        self.db.begin_write(false)?;
        match self.write(&rows) {
            Ok(id) => {
                hold_for_test();
                self.db.commit()?;
                Ok(Put { id, new: true })
            }
            Err(e) => {
                self.db.rollback();
                // Another writer stored the same result meanwhile.
                match self.by_digest(&digest) {
                    Ok(Some(id)) => Ok(Put { id, new: false }),
                    _ => Err(e),
                }
            }
        }
    }

    fn by_digest(&mut self, digest: &str) -> Result<Option<i64>> {
        let rows = self.db.query(
            "SELECT id FROM runs WHERE digest = $1",
            &[Val::text(digest)],
        )?;
        Ok(rows.first().and_then(|r| r.first()).and_then(|c| c.int()))
    }

    fn write(&mut self, rows: &Rows) -> Result<i64> {
        let marks: Vec<String> = (1..=rows::RUN_COLUMNS.len())
            .map(|i| format!("${i}"))
            .collect();
        let sql = format!(
            "INSERT INTO runs ({}) VALUES ({}) RETURNING id",
            rows::RUN_COLUMNS.join(", "),
            marks.join(", ")
        );
        let id = self.db.insert_returning_id(&sql, &rows.run)?;
        let tables: [Table<'_>; 7] = [
            ("workloads", rows::WORKLOAD_COLUMNS, &rows.workloads),
            ("op_totals", rows::OP_COLUMNS, &rows.op_totals),
            ("intervals", rows::INTERVAL_COLUMNS, &rows.intervals),
            ("hosts", rows::HOST_COLUMNS, &rows.hosts),
            ("host_totals", rows::HOST_TOTAL_COLUMNS, &rows.host_totals),
            ("targets", rows::TARGET_COLUMNS, &rows.targets),
            ("findings", rows::FINDING_COLUMNS, &rows.findings),
        ];
        for (table, cols, list) in tables {
            let mut columns = vec!["run_id"];
            columns.extend_from_slice(cols);
            let with_id: Vec<Vec<Val>> = list
                .iter()
                .map(|r| {
                    let mut v = Vec::with_capacity(r.len() + 1);
                    v.push(Val::Int(id));
                    v.extend(r.iter().cloned());
                    v
                })
                .collect();
            self.db.insert(table, &columns, &with_id)?;
        }
        Ok(id)
    }

    /// The result.json text of run `id`, as stored.
    pub(crate) fn result_text(&mut self, id: i64) -> Result<String> {
        let shown = format!("{} (store:{id})", self.shown());
        let rows = self.db.query(
            "SELECT result_codec, result FROM runs WHERE id = $1",
            &[Val::Int(id)],
        )?;
        let Some([codec, bytes]) = rows.first().map(|r| r.as_slice()) else {
            return Err(VbError::input(format!(
                "store:{id}: no such run in {} (volbench history lists them)",
                self.shown()
            )));
        };
        let db::Cell::Bytes(b) = bytes else {
            return Err(VbError::input(format!(
                "{shown}: the stored result is missing: the store is damaged"
            )));
        };
        blob::unpack(&codec.text(), b, &shown)
    }

    /// Run `id`'s result, read back and checked whole like a result file.
    pub(crate) fn result(&mut self, id: i64) -> Result<ResultDoc> {
        let text = self.result_text(id)?;
        crate::result::check::parse_result(text.as_bytes()).map_err(|e| {
            VbError::input(format!(
                "store:{id} in {}: the stored result is not a volbench result: {e}",
                self.shown()
            ))
        })
    }
}

/// A debug build's test hook: with `VOLBENCH_STORE_TEST_HOLD` set, the
/// writer says so on stderr and waits for its stdin to close before it
/// commits, so a test can kill it in the middle of a write. Release builds
/// have no such wait.
fn hold_for_test() {
    #[cfg(debug_assertions)]
    if std::env::var_os("VOLBENCH_STORE_TEST_HOLD").is_some() {
        use std::io::Read;
        crate::console::errln!("volbench: store: holding the write open (test)");
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    }
}
