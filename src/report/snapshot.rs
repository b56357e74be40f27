//! SVG snapshot comparison for the chart tests.

/// Compares with tests/snapshots/NAME; `UPDATE_SNAPSHOTS=1` rewrites it.
pub(crate) fn snapshot(name: &str, got: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    assert!(
        want == got,
        "{name} differs from its snapshot; if the change is intended, rerun with UPDATE_SNAPSHOTS=1 and review the diff"
    );
}

/// A one-result source list, labelled as `volbench report` labels it.
pub(crate) fn one(doc: crate::result::ResultDoc, path: &str) -> Vec<super::Source> {
    let mut s = vec![super::Source {
        label: String::new(),
        path: path.into(),
        doc,
    }];
    super::label_sources(&mut s);
    s
}
