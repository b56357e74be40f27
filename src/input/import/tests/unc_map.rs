//! `--map` onto `smb://` and `nfs://` URLs: a UNC path's prefix matched as
//! Windows matches names (any case, the trailing backslash optional), the
//! rest joined below the URL's path with the URL's user and options kept,
//! and nothing that leaves the mapped share.

use super::*;

const SMB: &str = "smb://bench@127.0.0.1:4455/share/runs?channels=2";

fn smb_map(from: &str) -> PathMap {
    PathMap::parse(&[format!("{from}={SMB}")]).unwrap()
}

#[test]
fn a_unc_prefix_maps_onto_the_url_in_any_case_with_or_without_its_backslash() {
    for from in ["\\\\srv\\share\\", "\\\\srv\\share", "\\\\SRV\\Share\\"] {
        let map = smb_map(from);
        let (p, mapped) = map.resolve("\\\\srv\\SHARE\\dir\\sub\\f.dat").unwrap();
        assert!(mapped, "{from}");
        assert_eq!(
            p, "smb://bench@127.0.0.1:4455/share/runs/dir/sub/f.dat?channels=2",
            "{from}: port, user and options kept, the rest joined with '/'"
        );
    }
}

#[test]
fn a_unc_prefix_maps_only_whole_names() {
    let map = smb_map("\\\\srv\\share");
    let e = map.resolve("\\\\srv\\shared\\f.dat").unwrap_err();
    assert!(e.contains("--map"), "not mapped, so asked to map it: {e}");
}

#[test]
fn leaving_the_mapped_share_is_refused() {
    let map = smb_map("\\\\srv\\share\\");
    for raw in [
        "\\\\srv\\share\\..\\other\\f.dat",
        "\\\\srv\\share\\dir\\..\\..\\f.dat",
        "\\\\srv\\share\\dir/../../f.dat",
    ] {
        let e = map.resolve(raw).unwrap_err();
        assert!(e.contains("leaves the mapped share"), "{raw}: {e}");
    }
    // A name the protocol cannot hold is the URL parser's refusal.
    assert!(map.resolve("\\\\srv\\share\\f.dat:stream").is_err());
    // Syntax in a name is escaped, so it stays one name.
    let (p, _) = map.resolve("\\\\srv\\share\\a b#1.dat").unwrap();
    assert!(p.ends_with("/runs/a b%231.dat?channels=2"), "{p}");
}

#[test]
fn a_map_onto_an_nfs_url_joins_the_same_way() {
    let map = PathMap::parse(&["z:\\=nfs://10.0.0.5/export/bench?version=4.1".into()]).unwrap();
    let (p, _) = map.resolve("Z:\\a\\f.dat").unwrap();
    assert_eq!(p, "nfs://10.0.0.5/export/bench/a/f.dat?version=4.1");
}

#[test]
fn a_bad_url_or_scheme_is_refused_without_showing_a_password() {
    for to in [
        "smb://bench:Secret-pw@srv/share/",
        "smb://srv/share/?password=Secret-pw",
        "http://bench:Secret-pw@srv/share/",
        "smb://",
    ] {
        let e = PathMap::parse(&[format!("\\\\srv\\share\\={to}")])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--map '\\\\srv\\share\\=...'"), "{e}");
        assert!(!e.contains("Secret-pw"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let e = PathMap::parse(&["smb://bench:Secret-pw@srv/share".into()])
        .unwrap_err()
        .to_string();
    assert!(!e.contains("Secret-pw"), "{e}");
}

#[test]
fn a_diskspd_create_line_on_a_share_is_volbench_set_in_its_directory() {
    let line = "-c8M -d1 -r -w0 -b4K \\\\srv\\share\\dir\\f.dat";
    let imp = diskspd::import_args(&args(line), &smb_map("\\\\srv\\share\\")).unwrap();
    assert_eq!(
        imp.target,
        "smb://bench@127.0.0.1:4455/share/runs/dir?channels=2"
    );
    let notes = imp.printed().join("\n");
    assert!(
        notes.contains("\\\\srv\\share\\dir\\f.dat")
            && notes.contains("--map")
            && notes.contains("SMB client"),
        "the notes say what was mapped: {notes}"
    );
}

#[test]
fn a_diskspd_line_on_an_existing_file_on_a_share_is_refused_with_the_remedy() {
    let line = "-d1 -r -w0 -b4K \\\\srv\\share\\dir\\f.dat";
    let e = diskspd::import_args(&args(line), &smb_map("\\\\srv\\share\\"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("-cSIZE") && e.contains("/runs/dir"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}
