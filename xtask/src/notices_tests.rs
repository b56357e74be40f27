use super::*;

fn dep(pkg: &str, kind: Option<&str>) -> Value {
    serde_json::json!({ "name": pkg, "pkg": pkg, "dep_kinds": [{ "kind": kind, "target": null }] })
}

/// root -> a (normal) -> d (normal); root -> b (build) -> f; root -> c
/// (dev) -> e; d -> root (a cycle through a dev-dependency's features).
fn graph() -> Value {
    let pkg = |id: &str, source: Option<&str>| {
        serde_json::json!({ "name": id, "id": id, "version": "1.0.0", "source": source,
                            "license": "MIT", "manifest_path": "/nonexistent/Cargo.toml" })
    };
    let reg = Some("registry+https://github.com/rust-lang/crates.io-index");
    serde_json::json!({
        "packages": [pkg("root", None), pkg("a", reg), pkg("b", reg), pkg("c", reg),
                     pkg("d", reg), pkg("e", reg), pkg("f", reg)],
        "resolve": { "root": "root", "nodes": [
            { "id": "root", "deps": [dep("a", None), dep("b", Some("build")), dep("c", Some("dev"))] },
            { "id": "a", "deps": [dep("d", None)] },
            { "id": "b", "deps": [dep("f", None)] },
            { "id": "c", "deps": [dep("e", None)] },
            { "id": "d", "deps": [dep("root", None)] },
            { "id": "e", "deps": [] },
            { "id": "f", "deps": [] },
        ]}
    })
}

#[test]
fn the_linked_graph_is_the_normal_closure_without_build_or_dev_dependencies() {
    assert_eq!(linked(&graph(), "root").unwrap(), ["a", "d"]);
    assert!(linked(&graph(), "nobody").is_err());
}

#[test]
fn each_distinct_text_is_printed_once_under_every_crate_that_ships_it() {
    let c = |name: &str, texts: &[(&str, &str)]| Crate {
        name: name.into(),
        version: "1.0.0".into(),
        license: "MIT OR Apache-2.0".into(),
        repository: String::new(),
        texts: texts
            .iter()
            .map(|(f, t)| (f.to_string(), t.to_string()))
            .collect(),
    };
    let crates = [
        c(
            "alpha",
            &[
                ("LICENSE-APACHE", "APACHE TEXT"),
                ("LICENSE-MIT", "MIT alpha"),
            ],
        ),
        c(
            "beta",
            &[
                ("LICENSE-APACHE", "APACHE TEXT"),
                ("LICENSE-MIT", "MIT beta"),
            ],
        ),
        c("gamma", &[]),
    ];
    let s = render("volbench", "x86_64-unknown-linux-gnu", &crates);
    assert_eq!(s.matches("APACHE TEXT").count(), 1, "{s}");
    assert!(
        s.contains("alpha 1.0.0 LICENSE-APACHE\nbeta 1.0.0 LICENSE-APACHE\n"),
        "{s}"
    );
    assert!(s.contains("MIT alpha") && s.contains("MIT beta"));
    assert!(s.contains("  gamma 1.0.0 (MIT OR Apache-2.0)"), "{s}");
}

/// What `cargo tree` says volbench's binary for `triple` is built from:
/// "name version" of every crate in its normal dependency graph.
fn cargo_tree(triple: &str) -> BTreeSet<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(crate::root())
        .args([
            "tree",
            "--offline",
            "--locked",
            "-p",
            "volbench",
            "-e",
            "normal",
        ])
        .args(["--target", triple, "--prefix", "none", "--format", "{p}"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, version) = (w.next()?, w.next()?.strip_prefix('v')?);
            (name != "volbench").then(|| format!("{name} {version}"))
        })
        .collect()
}

#[test]
fn the_notices_list_every_crate_of_the_linked_graph_with_its_licence() {
    for triple in ["x86_64-unknown-linux-gnu", "x86_64-pc-windows-gnu"] {
        let meta = metadata(&crate::root(), triple).unwrap();
        let crates = crates(&meta, "volbench").unwrap();
        let listed: BTreeSet<String> = crates
            .iter()
            .map(|c| format!("{} {}", c.name, c.version))
            .collect();
        let tree = cargo_tree(triple);
        assert!(tree.len() > 20, "{triple}: {tree:?}");
        let missing: Vec<_> = tree.difference(&listed).collect();
        assert!(
            missing.is_empty(),
            "{triple}: not in the notices: {missing:?}"
        );
        let text = render("volbench", triple, &crates);
        for c in &crates {
            assert!(
                !c.license.is_empty() || !c.texts.is_empty(),
                "{} {}: neither a licence expression nor a licence file",
                c.name,
                c.version
            );
            let row = format!("\n{:w$}", c.name, w = c.name.len());
            assert!(text.contains(&row), "{} not listed", c.name);
        }
    }
}
