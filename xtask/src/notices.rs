//! `THIRD-PARTY-NOTICES.txt`: the crates a volbench binary links, each with
//! its version, the licence expression its manifest states and the licence
//! texts its source ships, made from Cargo.lock at `cargo xtask dist` time.
//!
//! By hand because the tool made for it (cargo-about) is not installed on
//! the build machine and cannot be fetched there; `cargo metadata` gives all
//! it needs (the resolved graph for one target, each package's manifest and
//! its unpacked source).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// One linked crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crate {
    pub name: String,
    pub version: String,
    /// The SPDX expression of its manifest, or "" when it states none.
    pub license: String,
    pub repository: String,
    /// (file name, text) of each licence file in its source.
    pub texts: Vec<(String, String)>,
}

/// `cargo metadata` for `triple`, from Cargo.lock as it is (`--locked`) and
/// the sources already unpacked (`--offline`: the build just used them).
pub fn metadata(root: &Path, triple: &str) -> Result<Value, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", triple])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata's output: {e}"))
}

/// The package ids `root_name` reaches through normal dependencies (what is
/// compiled into its binary, proc macros included since their output is),
/// without build scripts' and tests' dependencies, and without itself.
pub fn linked(meta: &Value, root_name: &str) -> Result<Vec<String>, String> {
    let packages = meta["packages"].as_array().ok_or("no packages")?;
    let root = packages
        .iter()
        .find(|p| p["name"] == root_name && p["source"].is_null())
        .and_then(|p| p["id"].as_str())
        .ok_or_else(|| format!("no workspace package {root_name}"))?;
    let nodes: BTreeMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .ok_or("no resolve graph")?
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([root.to_string()]);
    while let Some(id) = queue.pop_front() {
        let Some(node) = nodes.get(id.as_str()) else {
            return Err(format!("{id} is not in the resolve graph"));
        };
        for dep in node["deps"].as_array().into_iter().flatten() {
            let normal = dep["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["kind"].is_null());
            let Some(pkg) = dep["pkg"].as_str() else {
                continue;
            };
            if normal && pkg != root && seen.insert(pkg.to_string()) {
                queue.push_back(pkg.to_string());
            }
        }
    }
    Ok(seen.into_iter().collect())
}

/// The licence files at the top of a crate's source: LICENSE*, LICENCE*,
/// COPYING*, COPYRIGHT*, NOTICE*, UNLICENSE*, and the manifest's
/// `license-file` wherever it points.
pub fn licence_files(dir: &Path, license_file: Option<&str>) -> Vec<(String, String)> {
    const STEMS: [&str; 6] = [
        "LICENSE",
        "LICENCE",
        "COPYING",
        "COPYRIGHT",
        "NOTICE",
        "UNLICENSE",
    ];
    let mut paths: BTreeSet<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_ascii_uppercase();
            STEMS.iter().any(|s| n.starts_with(s))
        })
        .map(|e| e.path())
        .collect();
    if let Some(f) = license_file {
        paths.insert(dir.join(f));
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let text = fs::read_to_string(&p).ok()?;
            let name = p
                .strip_prefix(dir)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            Some((name, text))
        })
        .collect()
}

/// The linked crates of `root_name`, sorted by name and version.
pub fn crates(meta: &Value, root_name: &str) -> Result<Vec<Crate>, String> {
    let ids: BTreeSet<String> = linked(meta, root_name)?.into_iter().collect();
    let mut out = Vec::new();
    for p in meta["packages"].as_array().ok_or("no packages")? {
        let Some(id) = p["id"].as_str() else { continue };
        if !ids.contains(id) {
            continue;
        }
        let text = |k: &str| p[k].as_str().unwrap_or("").to_string();
        let manifest = PathBuf::from(text("manifest_path"));
        let dir = manifest.parent().unwrap_or(Path::new("."));
        out.push(Crate {
            name: text("name"),
            version: text("version"),
            license: text("license"),
            repository: text("repository"),
            texts: licence_files(dir, p["license_file"].as_str()),
        });
    }
    out.sort_by(|a, b| (&a.name, &a.version).cmp(&(&b.name, &b.version)));
    Ok(out)
}

/// The notices file: the list, then each distinct licence text once under
/// the crates whose source holds it.
pub fn render(product: &str, triple: &str, crates: &[Crate]) -> String {
    let mut s = format!(
        "Third-party software in {product} ({triple})\n\n\
         {product} is licensed MIT OR Apache-2.0 (LICENSE-MIT, LICENSE-APACHE).\n\
         Its binary is built from the crates below: the normal dependency graph\n\
         of Cargo.lock for this target, generated by `cargo xtask dist`. Each is\n\
         listed with its version and the licence expression its manifest states;\n\
         the licence texts its source ships follow, each distinct text once.\n\n"
    );
    let w = crates
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let v = crates
        .iter()
        .map(|c| c.version.len())
        .max()
        .unwrap_or(7)
        .max(7);
    s.push_str(&format!("{:w$}  {:v$}  licence\n", "crate", "version"));
    for c in crates {
        let lic = if c.license.is_empty() {
            "(none stated; see its licence file)"
        } else {
            &c.license
        };
        s.push_str(&format!("{:w$}  {:v$}  {lic}\n", c.name, c.version));
    }
    // Each distinct text once, in the order first met.
    let mut order: Vec<&str> = Vec::new();
    let mut holders: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut bare = Vec::new();
    for c in crates {
        if c.texts.is_empty() {
            bare.push(format!("{} {} ({})", c.name, c.version, c.license));
        }
        for (file, text) in &c.texts {
            let who = format!("{} {} {file}", c.name, c.version);
            match holders.get_mut(text.as_str()) {
                Some(v) => v.push(who),
                None => {
                    order.push(text);
                    holders.insert(text, vec![who]);
                }
            }
        }
    }
    if !bare.is_empty() {
        s.push_str(
            "\nThese ship no licence file in their source; the licence expressions of\n\
             their manifests apply (those licences' texts are among the texts below):\n",
        );
        for b in &bare {
            s.push_str(&format!("  {b}\n"));
        }
    }
    for text in order {
        s.push_str(&format!("\n{}\n", "=".repeat(78)));
        for who in &holders[text] {
            s.push_str(&format!("{who}\n"));
        }
        s.push_str(&format!("{}\n\n", "-".repeat(78)));
        s.push_str(text.trim_end());
        s.push('\n');
    }
    s
}

/// THIRD-PARTY-NOTICES.txt's text for volbench built for `triple`.
pub fn text(root: &Path, triple: &str) -> Result<String, String> {
    let meta = metadata(root, triple)?;
    Ok(render("volbench", triple, &crates(&meta, "volbench")?))
}

#[cfg(test)]
#[path = "notices_tests.rs"]
mod tests;
