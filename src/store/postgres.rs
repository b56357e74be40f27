//! The PostgreSQL store, for a team: every run of every machine in one
//! database. The same schema and statements as SQLite (`db::Db`); each
//! run written in one transaction, concurrent writers serialised by
//! PostgreSQL itself, a schema change by an advisory lock. The URL's
//! password comes from the URL or `PGPASSWORD` and never leaves
//! `location.rs`: every error is scrubbed of it before it is shown.

use std::str::FromStr;
use std::time::Duration;

use postgres::types::{ToSql, Type};

use super::db::{Cell, Db, Dialect, Row, Val};
use super::location::{Location, PgUrl};
use super::schema::{self, Found};
use crate::error::{Result, VbError};

/// How long connecting may take before the store is called unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The advisory lock that serialises schema changes between volbenches.
const SCHEMA_LOCK: i64 = schema::APPLICATION_ID;
/// PostgreSQL's limit on one statement's parameters.
const MAX_PARAMS: usize = 65_535;

pub(crate) struct Postgres {
    client: postgres::Client,
    at: Location,
}

impl Postgres {
    /// Connects, proves the database a volbench store of this schema or
    /// older (an empty one becomes a store when writing), or refuses it.
    pub(crate) fn open(url: &PgUrl, write: bool) -> Result<Postgres> {
        let at = Location::Postgres(url.clone());
        let shown = at.shown();
        let mut config = postgres::Config::from_str(url.secret()).map_err(|e| {
            VbError::input(format!(
                "--store {shown}: not a PostgreSQL URL ({})",
                at.scrub(&e.to_string())
            ))
        })?;
        if !url.has_password() {
            if let Some(p) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
                config.password(p.to_string_lossy().as_bytes());
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("volbench");
        let client = config.connect(postgres::NoTls).map_err(|e| {
            VbError::run(format!(
                "{shown}: cannot reach the store: {}",
                at.scrub(&describe(&e))
            ))
        })?;
        let mut s = Postgres { client, at };
        let found = s.found()?;
        match found {
            Found::Foreign => return Err(schema::foreign(&shown)),
            Found::Store(v) if v > schema::VERSION => return Err(schema::newer(&shown, v)),
            Found::Empty if !write => {
                return Err(VbError::input(format!(
                    "{shown}: an empty store: no run is kept there yet"
                )));
            }
            Found::Store(v) if v == schema::VERSION || !write => return Ok(s),
            _ => {}
        }
        s.begin_write(true)?;
        let done = (|| {
            let found = s.found()?;
            schema::migrate(&mut s, found, &shown).map(|_| ())
        })();
        match done {
            Ok(()) => s.commit()?,
            Err(e) => {
                s.rollback();
                return Err(e);
            }
        }
        Ok(s)
    }

    fn found(&mut self) -> Result<Found> {
        let shown = self.at.shown();
        let rows = self.query(
            "SELECT count(*), count(*) FILTER (WHERE table_name = 'volbench_store') \
             FROM information_schema.tables WHERE table_schema = current_schema()",
            &[],
        )?;
        let (all, ours) = match rows.first().map(|r| r.as_slice()) {
            Some([a, o]) => (a.int().unwrap_or(0), o.int().unwrap_or(0)),
            _ => (0, 0),
        };
        Ok(match (all, ours) {
            (0, _) => Found::Empty,
            (_, 1) => Found::Store(schema::recorded(self, &shown)?),
            _ => Found::Foreign,
        })
    }

    fn err(&self, e: &postgres::Error) -> VbError {
        VbError::run(format!(
            "{}: {}",
            self.at.shown(),
            self.at.scrub(&describe(e))
        ))
    }
}

/// A PostgreSQL error as one line: the library's text ("db error") and
/// the server's message, which is what says why.
fn describe(e: &postgres::Error) -> String {
    let text = e.to_string();
    match e.as_db_error().map(|d| d.message()) {
        Some(m) if !text.contains(m) => format!("{text}: {m}"),
        _ => text,
    }
}

fn boxed(v: &Val) -> Box<dyn ToSql + Sync + '_> {
    match v {
        Val::Int(i) => Box::new(*i),
        Val::Real(f) => Box::new(*f),
        Val::Text(s) => Box::new(s.as_str()),
        Val::Bytes(b) => Box::new(b.as_slice()),
        Val::NullReal => Box::new(None::<f64>),
        Val::NullText => Box::new(None::<&str>),
    }
}

fn cell(row: &postgres::Row, i: usize) -> Cell {
    let ty = row.columns()[i].type_().clone();
    let got = |c: Option<Cell>| c.unwrap_or(Cell::Null);
    if ty == Type::INT8 {
        got(row
            .try_get::<_, Option<i64>>(i)
            .ok()
            .flatten()
            .map(Cell::Int))
    } else if ty == Type::INT4 {
        got(row
            .try_get::<_, Option<i32>>(i)
            .ok()
            .flatten()
            .map(|v| Cell::Int(v.into())))
    } else if ty == Type::INT2 {
        got(row
            .try_get::<_, Option<i16>>(i)
            .ok()
            .flatten()
            .map(|v| Cell::Int(v.into())))
    } else if ty == Type::FLOAT8 {
        got(row
            .try_get::<_, Option<f64>>(i)
            .ok()
            .flatten()
            .map(Cell::Real))
    } else if ty == Type::BYTEA {
        got(row
            .try_get::<_, Option<Vec<u8>>>(i)
            .ok()
            .flatten()
            .map(Cell::Bytes))
    } else {
        got(row
            .try_get::<_, Option<String>>(i)
            .ok()
            .flatten()
            .map(Cell::Text))
    }
}

impl Db for Postgres {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.client.batch_execute(sql).map_err(|e| self.err(&e))
    }

    fn exec(&mut self, sql: &str, params: &[Val]) -> Result<u64> {
        let b: Vec<_> = params.iter().map(boxed).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = b.iter().map(|x| x.as_ref()).collect();
        let r = self.client.execute(sql, &refs);
        r.map_err(|e| self.err(&e))
    }

    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Row>> {
        let b: Vec<_> = params.iter().map(boxed).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = b.iter().map(|x| x.as_ref()).collect();
        let rows = self.client.query(sql, &refs);
        let rows = rows.map_err(|e| self.err(&e))?;
        Ok(rows
            .iter()
            .map(|r| (0..r.len()).map(|i| cell(r, i)).collect())
            .collect())
    }

    /// Many rows per statement (one round trip each, not one per row).
    fn insert(&mut self, table: &str, columns: &[&str], rows: &[Vec<Val>]) -> Result<()> {
        let per = (MAX_PARAMS / columns.len().max(1)).clamp(1, 1000);
        for chunk in rows.chunks(per) {
            let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
            let mut n = 0;
            for (i, r) in chunk.iter().enumerate() {
                if i > 0 {
                    sql.push_str(", ");
                }
                sql.push('(');
                for j in 0..r.len() {
                    n += 1;
                    if j > 0 {
                        sql.push_str(", ");
                    }
                    sql.push_str(&format!("${n}"));
                }
                sql.push(')');
            }
            let flat: Vec<Val> = chunk.iter().flatten().cloned().collect();
            self.exec(&sql, &flat)?;
        }
        Ok(())
    }

    fn begin_write(&mut self, schema: bool) -> Result<()> {
        self.batch("BEGIN")?;
        if schema {
            self.exec("SELECT pg_advisory_xact_lock($1)", &[Val::Int(SCHEMA_LOCK)])?;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}
