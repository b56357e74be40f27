//! The SQLite store, the embedded default: one file (`file.rs` proves it
//! ours and opens it), in WAL mode so readers never wait for a writer, with
//! a busy timeout so writers queue instead of failing: many runs finishing
//! at once each get their turn, and none is lost. Each write takes the
//! write lock at its start (`BEGIN IMMEDIATE`), so two writers never both
//! read and then fight to upgrade.

pub(crate) mod file;

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};

use super::db::{Cell, Db, Dialect, Row, Val, numbered_for_sqlite};
use super::schema::{self, Found};
use crate::error::{Result, VbError};

/// How long a writer waits for the others before it gives up (eight runs'
/// writes of a 1,000-host result each take well under a second).
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) struct Sqlite {
    conn: rusqlite::Connection,
    shown: String,
}

impl Sqlite {
    /// Opens the store at `path`, proves it a volbench store of this
    /// schema or older (and, to write, brings it to this schema), or
    /// refuses it with one line and nothing changed.
    pub(crate) fn open(path: &Path, mode: file::Mode) -> Result<Sqlite> {
        let shown = path.display().to_string();
        let (conn, _made) = file::open(path, mode)?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| damaged(&shown, &e))?;
        let mut s = Sqlite { conn, shown };
        // Read before anything is written: a file that is not a database,
        // or is damaged, fails here, untouched.
        let found = s.found()?;
        // Paths are case-sensitive: `history --target` matches as written
        // (PostgreSQL's LIKE is already).
        s.conn
            .execute_batch(
                "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY; \
                 PRAGMA case_sensitive_like = ON;",
            )
            .map_err(|e| damaged(&s.shown, &e))?;
        match found {
            Found::Foreign => return Err(schema::foreign(&s.shown)),
            Found::Store(v) if v > schema::VERSION => return Err(schema::newer(&s.shown, v)),
            _ => {}
        }
        match mode {
            file::Mode::Read if found == Found::Empty => Err(VbError::input(format!(
                "{}: an empty store: no run is kept there yet",
                s.shown
            ))),
            file::Mode::Read => Ok(s),
            file::Mode::Write { .. } => {
                // WAL persists in the file once set: every later opener,
                // reader or writer, uses it. Setting it needs the file to
                // itself, which SQLite does not wait for: volbenches making
                // one new store at once retry until the busy timeout.
                let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
                loop {
                    match s
                        .conn
                        .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
                    {
                        Ok(()) => break,
                        Err(e) if busy(&e) && std::time::Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        Err(e) => return Err(damaged(&s.shown, &e)),
                    }
                }
                s.migrate()?;
                Ok(s)
            }
        }
    }

    /// What the file holds, read without writing.
    fn found(&mut self) -> Result<Found> {
        let shown = self.shown.clone();
        // One statement, so one snapshot: read apart, a sibling making the
        // store could commit between them, and its tables without the id
        // read before them made a new store look foreign (CI saw it).
        let (app, tables): (i64, i64) = self
            .conn
            .query_row(
                "SELECT (SELECT application_id FROM pragma_application_id()), \
                        (SELECT count(*) FROM sqlite_master)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| damaged(&shown, &e))?;
        Ok(match (app, tables) {
            (0, 0) => Found::Empty,
            (schema::APPLICATION_ID, _) => Found::Store(schema::recorded(self, &shown)?),
            _ => Found::Foreign,
        })
    }

    /// The schema brought to this volbench's, once, under the write lock.
    fn migrate(&mut self) -> Result<()> {
        let shown = self.shown.clone();
        self.begin_write(true)?;
        let done = (|| {
            let found = self.found()?;
            schema::migrate(self, found, &shown)?;
            self.batch(&format!(
                "PRAGMA application_id = {}",
                schema::APPLICATION_ID
            ))
        })();
        match done {
            Ok(()) => self.commit(),
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }

    fn err(&self, e: &rusqlite::Error) -> VbError {
        damaged(&self.shown, e)
    }
}

fn busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// A SQLite error as one line: a file that is not a database or is
/// damaged is refused as such (and never "repaired"); a lock held too long
/// says so.
fn damaged(shown: &str, e: &rusqlite::Error) -> VbError {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::NotADatabase) => VbError::input(format!(
            "{shown}: not a volbench store (the file is not a SQLite database); nothing was \
             changed"
        )),
        Some(C::DatabaseCorrupt) => VbError::input(format!(
            "{shown}: the store is damaged ({e}); refused, nothing was changed (a copy from \
             before the damage, or `sqlite3 {shown} .recover`, can rescue its runs)"
        )),
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => VbError::run(format!(
            "{shown}: the store stayed locked by other writers for over {}s",
            BUSY_TIMEOUT.as_secs()
        )),
        Some(C::ReadOnly) | Some(C::CannotOpen) | Some(C::PermissionDenied) => {
            VbError::target(format!("{shown}: {e}"))
        }
        Some(C::DiskFull) => VbError::target(format!("{shown}: no space left for the store: {e}")),
        _ => VbError::run(format!("{shown}: {e}")),
    }
}

fn bind(v: &Val) -> ToSqlOutput<'_> {
    match v {
        Val::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
        Val::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
        Val::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        Val::Bytes(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        Val::NullReal | Val::NullText => ToSqlOutput::Owned(SqlValue::Null),
    }
}

fn params(vals: &[Val]) -> Vec<ToSqlOutput<'_>> {
    vals.iter().map(bind).collect()
}

impl Db for Sqlite {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(|e| self.err(&e))
    }

    fn exec(&mut self, sql: &str, vals: &[Val]) -> Result<u64> {
        let p = params(vals);
        let mut st = self
            .conn
            .prepare_cached(&numbered_for_sqlite(sql))
            .map_err(|e| damaged(&self.shown, &e))?;
        st.execute(rusqlite::params_from_iter(p.iter()))
            .map(|n| n as u64)
            .map_err(|e| damaged(&self.shown, &e))
    }

    fn query(&mut self, sql: &str, vals: &[Val]) -> Result<Vec<Row>> {
        let p = params(vals);
        let shown = self.shown.clone();
        let mut st = self
            .conn
            .prepare_cached(&numbered_for_sqlite(sql))
            .map_err(|e| damaged(&shown, &e))?;
        let n = st.column_count();
        let mut rows = st
            .query(rusqlite::params_from_iter(p.iter()))
            .map_err(|e| damaged(&shown, &e))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| damaged(&shown, &e))? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                let v = r.get_ref(i).map_err(|e| damaged(&shown, &e))?;
                row.push(match v {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(i) => Cell::Int(i),
                    ValueRef::Real(f) => Cell::Real(f),
                    ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Cell::Bytes(b.to_vec()),
                });
            }
            out.push(row);
        }
        Ok(out)
    }

    fn insert(&mut self, table: &str, columns: &[&str], rows: &[Vec<Val>]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            columns.join(", "),
            marks.join(", ")
        );
        let shown = self.shown.clone();
        let mut st = self
            .conn
            .prepare_cached(&sql)
            .map_err(|e| damaged(&shown, &e))?;
        for r in rows {
            st.execute(rusqlite::params_from_iter(r.iter().map(bind)))
                .map_err(|e| damaged(&shown, &e))?;
        }
        Ok(())
    }

    fn begin_write(&mut self, _schema: bool) -> Result<()> {
        self.batch("BEGIN IMMEDIATE")
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}
