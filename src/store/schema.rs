//! The store's schema: its version, the tables of version 1, and the
//! migrations that bring an older store up to this volbench's version, each
//! in the transaction that checks the version. A store written by a newer
//! volbench is refused; a database that is not a volbench store is never
//! written into. docs/guide/history.md describes every table.

use super::db::{Db, Val};
use crate::error::{Result, VbError};

/// The schema this volbench writes and reads. A change an older reader
/// would misread is a new version with its migration below.
pub(crate) const VERSION: i64 = 1;

/// SQLite's `application_id` of a volbench store ("vbst"), so `file(1)` and
/// volbench itself can tell the file from any other SQLite database.
pub(crate) const APPLICATION_ID: i64 = 0x7662_7374;

/// Each migration takes the store from the version of its index to the
/// next; the first makes an empty database a store. `@ID`, `@INT`,
/// `@REAL`, `@BLOB` are the dialect's types (`db::Dialect::ddl`).
pub(crate) const MIGRATIONS: &[&str] = &[V1];

const V1: &str = "
CREATE TABLE volbench_store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id @ID,
    digest TEXT NOT NULL UNIQUE,
    started TEXT NOT NULL,
    started_s @REAL NOT NULL,
    stored TEXT NOT NULL,
    source TEXT NOT NULL,
    origin TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    host TEXT NOT NULL,
    hosts @INT NOT NULL,
    target TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    suite TEXT NOT NULL,
    workloads @INT NOT NULL,
    interrupted @INT NOT NULL,
    error TEXT,
    findings @INT NOT NULL,
    headline TEXT NOT NULL,
    iops @REAL,
    mib_s @REAL,
    p99_us @REAL,
    environment TEXT NOT NULL,
    result_codec TEXT NOT NULL,
    result_bytes @INT NOT NULL,
    result @BLOB NOT NULL
);
CREATE INDEX runs_by_time ON runs (started_s, id);
CREATE INDEX runs_by_target ON runs (target, suite, started_s);
CREATE TABLE workloads (
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx @INT NOT NULL,
    name TEXT NOT NULL,
    pattern TEXT NOT NULL,
    read_pct @INT NOT NULL,
    bs TEXT NOT NULL,
    threads @INT NOT NULL,
    iodepth @INT NOT NULL,
    engine TEXT NOT NULL,
    rate_iops @REAL,
    duration_s @REAL NOT NULL,
    discarded @INT NOT NULL,
    interrupted @INT NOT NULL,
    conditions TEXT NOT NULL,
    conditions_key TEXT NOT NULL,
    iops @REAL NOT NULL,
    mib_s @REAL NOT NULL,
    lat_mean_us @REAL NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE INDEX workloads_by_name ON workloads (name, run_id);
CREATE TABLE op_totals (
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload @INT NOT NULL,
    op TEXT NOT NULL,
    ops @INT NOT NULL,
    bytes @INT NOT NULL,
    iops @REAL NOT NULL,
    mib_s @REAL NOT NULL,
    lat_mean_us @REAL NOT NULL,
    lat_min_us @REAL NOT NULL,
    lat_max_us @REAL NOT NULL,
    lat_stddev_us @REAL NOT NULL,
    p50_us @REAL NOT NULL,
    p90_us @REAL NOT NULL,
    p99_us @REAL NOT NULL,
    p99_9_us @REAL NOT NULL,
    p99_99_us @REAL NOT NULL,
    PRIMARY KEY (run_id, workload, op)
);
CREATE TABLE intervals (
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload @INT NOT NULL,
    seq @INT NOT NULL,
    t_s @REAL NOT NULL,
    duration_s @REAL NOT NULL,
    phase TEXT NOT NULL,
    read_iops @REAL NOT NULL,
    read_mib_s @REAL NOT NULL,
    read_lat_mean_us @REAL NOT NULL,
    read_p99_us @REAL,
    write_iops @REAL NOT NULL,
    write_mib_s @REAL NOT NULL,
    write_lat_mean_us @REAL NOT NULL,
    write_p99_us @REAL,
    PRIMARY KEY (run_id, workload, seq)
);
CREATE TABLE hosts (
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx @INT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    version TEXT NOT NULL,
    kernel TEXT NOT NULL,
    cpus @INT NOT NULL,
    clock_offset_ms @REAL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE host_totals (
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload @INT NOT NULL,
    host @INT NOT NULL,
    op TEXT NOT NULL,
    ops @INT NOT NULL,
    iops @REAL NOT NULL,
    mib_s @REAL NOT NULL,
    lat_mean_us @REAL NOT NULL,
    p99_us @REAL NOT NULL,
    PRIMARY KEY (run_id, workload, host, op)
);
CREATE TABLE targets (
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload @INT NOT NULL,
    idx @INT NOT NULL,
    host TEXT NOT NULL,
    path TEXT NOT NULL,
    read_iops @REAL NOT NULL,
    write_iops @REAL NOT NULL,
    mib_s @REAL NOT NULL,
    lat_mean_us @REAL NOT NULL,
    p99_us @REAL NOT NULL,
    PRIMARY KEY (run_id, workload, idx)
);
CREATE TABLE findings (
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx @INT NOT NULL,
    kind TEXT NOT NULL,
    confidence TEXT NOT NULL,
    message TEXT NOT NULL,
    runs TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE baselines (
    target TEXT NOT NULL,
    suite TEXT NOT NULL,
    run_id @INT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    set_at TEXT NOT NULL,
    PRIMARY KEY (target, suite)
);
";

/// What a database holds before volbench uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// No tables at all: a new store.
    Empty,
    /// A volbench store of this schema version.
    Store(i64),
    /// Tables, but not a volbench store's: never written into.
    Foreign,
}

/// Brings the store to `VERSION` inside one write transaction (the caller
/// has begun it, so concurrent openers migrate once): refuses a newer one.
pub(crate) fn migrate(db: &mut dyn Db, found: Found, shown: &str) -> Result<bool> {
    let from = match found {
        Found::Foreign => return Err(foreign(shown)),
        Found::Empty => 0,
        Found::Store(v) => v,
    };
    if from > VERSION {
        return Err(newer(shown, from));
    }
    if from < 0 {
        return Err(VbError::input(format!(
            "{shown}: the store says it is of schema {from}, which no volbench wrote: refused"
        )));
    }
    let dialect = db.dialect();
    for (i, m) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        db.batch(&dialect.ddl(m))?;
        let next = i as i64 + 1;
        db.exec("DELETE FROM volbench_store WHERE key = 'schema'", &[])?;
        db.exec(
            "INSERT INTO volbench_store (key, value) VALUES ('schema', $1)",
            &[Val::text(next.to_string())],
        )?;
    }
    if from == 0 {
        db.exec(
            "INSERT INTO volbench_store (key, value) VALUES ('created_by', $1)",
            &[Val::text(format!("volbench {}", env!("CARGO_PKG_VERSION")))],
        )?;
    }
    Ok(from < VERSION)
}

/// The one line for a database volbench did not make.
pub(crate) fn foreign(shown: &str) -> VbError {
    VbError::refused(format!(
        "{shown}: a database that is not a volbench store (it has tables of its own); \
         volbench writes only into a store it made: give a new path"
    ))
}

/// The one line for a store a newer volbench wrote.
pub(crate) fn newer(shown: &str, version: i64) -> VbError {
    VbError::input(format!(
        "{shown}: a store of schema {version}, written by a newer volbench (this one, {}, \
         reads schema {VERSION} and older): use that volbench or a newer one",
        env!("CARGO_PKG_VERSION")
    ))
}

/// The schema version a store records, from its `volbench_store` table.
pub(crate) fn recorded(db: &mut dyn Db, shown: &str) -> Result<i64> {
    let rows = db.query("SELECT value FROM volbench_store WHERE key = 'schema'", &[])?;
    let text = rows
        .first()
        .and_then(|r| r.first())
        .map(|c| c.text())
        .unwrap_or_default();
    text.trim().parse::<i64>().map_err(|_| {
        VbError::input(format!(
            "{shown}: a volbench store without a readable schema version ({text:?}): refused as \
             damaged (nothing was changed)"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_number_of_migrations() {
        assert_eq!(VERSION as usize, MIGRATIONS.len());
        assert_eq!(APPLICATION_ID, 0x7662_7374);
    }
}
