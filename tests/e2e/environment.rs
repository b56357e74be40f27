//! What the papers tell you to check besides the CPUs (issue P6, item 6):
//! the socket buffer sysctls and the block size under the target are in
//! every result.json, `compare` names them when they differ, and a result
//! claiming impossible ones is refused when read back.

use std::path::Path;

use volbench::error::exit;
use volbench::report::fixtures;

use crate::common::{read_json, stderr, stdout, vb, write_result};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn sysctl(name: &str) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/"))).ok()?;
    text.split_whitespace().map(|w| w.parse().ok()).collect()
}

#[test]
fn a_short_run_records_the_socket_buffers_and_the_block_size_under_its_target() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("set");
    let out = d.path().join("out");
    vb([
        "run",
        "--target",
        p(&target),
        "--size",
        "4m",
        "--duration",
        "0.2",
        "--warmup",
        "0",
        "--output",
        p(&out),
    ])
    .expect(exit::OK);
    let r = read_json(&out.join("result.json"));
    let net = &r["host"]["net"];
    // What the kernel says now is what the result says.
    for key in [
        "net.core.rmem_max",
        "net.core.wmem_max",
        "net.core.rmem_default",
        "net.core.wmem_default",
    ] {
        if let Some(v) = sysctl(key) {
            assert_eq!(net[key], v[0], "{key}: {net}");
        }
    }
    for key in ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"] {
        if let Some(v) = sysctl(key) {
            assert_eq!(net[key], serde_json::json!(v), "{key}: {net}");
        }
    }
    let fs = rustix::fs::statvfs(&target).unwrap();
    let blocks = &r["target"]["blocks"];
    assert_eq!(blocks["fs_block"], fs.f_bsize, "{blocks}");
    assert_eq!(blocks["fs_fragment"], fs.f_frsize, "{blocks}");
    assert!(
        blocks["logical_sector"].is_null(),
        "a directory has no sectors of its own"
    );

    // The report's environment shows them.
    let o = vb(["report", p(&out), "--format", "md"]).expect(exit::OK);
    let md = stdout(&o);
    assert!(md.contains(&format!("block {} bytes", fs.f_bsize)), "{md}");
    if sysctl("net.core.rmem_max").is_some() {
        // Markdown cells escape `_` (no formatting from names).
        assert!(md.contains("net.core.rmem\\_max"), "{md}");
    }
}

#[test]
fn compare_names_socket_buffers_block_sizes_and_regions_that_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write_result(&tmp.path().join("before"), &fixtures::six_patterns());
    let mut d = fixtures::six_patterns();
    d.host.net.rmem_max = Some(16 << 20);
    d.host.net.tcp_wmem = Some([4096, 65_536, 16 << 20]);
    d.host.platform.region = Some("westeurope".into());
    if let Some(t) = d.target.as_mut() {
        t.blocks.fs_block = Some(1 << 20);
        t.blocks.fs_fragment = Some(1 << 20);
    }
    let b = write_result(&tmp.path().join("after"), &d);
    let o = vb(["compare", p(&a), p(&b), "--markdown", "-o", "-"]).expect(exit::OK);
    let md = stdout(&o);
    assert!(md.contains("### Conditions differ"), "{md}");
    assert!(
        md.contains("| net.core.rmem\\_max | 212992 | 16777216 |"),
        "{md}"
    );
    assert!(
        md.contains("| net.ipv4.tcp\\_wmem | 4096 16384 4194304 | 4096 65536 16777216 |"),
        "{md}"
    );
    assert!(md.contains("| region | - | westeurope |"), "{md}");
    assert!(
        md.contains("| block sizes | block 65536 bytes | block 1048576 bytes |"),
        "{md}"
    );
    assert!(
        !md.contains("net.core.wmem\\_max"),
        "alike on both sides: {md}"
    );
}

#[test]
fn a_result_claiming_impossible_buffers_or_block_sizes_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let mut big = fixtures::six_patterns();
    big.host.net.tcp_rmem = Some([4096, 131_072, u64::MAX]);
    let mut zero = fixtures::six_patterns();
    if let Some(t) = zero.target.as_mut() {
        t.blocks.logical_sector = Some(0);
    }
    let mut region = fixtures::six_patterns();
    region.host.platform.region = Some("r".repeat(10_000));
    for (name, doc, says) in [
        ("big", big, "socket buffer"),
        ("zero", zero, "sector size"),
        ("region", region, "region"),
    ] {
        let dir = write_result(&tmp.path().join(name), &doc);
        let o = vb(["report", p(&dir), "--format", "md"]).output();
        assert_eq!(
            o.status.code(),
            Some(exit::BAD_INPUT),
            "{name}: {}",
            stderr(&o)
        );
        let err = stderr(&o);
        assert!(
            err.contains(says) && err.trim().lines().count() == 1,
            "{name}: {err}"
        );
    }
}
