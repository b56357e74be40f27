use super::*;

#[test]
fn a_url_target_chooses_its_engine_and_is_refused_any_other() {
    use crate::spec::{EngineChoice, EngineKind};
    let url = Path::new("nfs://s/e/d?version=3");
    let local = Path::new("/mnt/data");
    assert!(is_url(url) && !is_url(local) && !is_url(Path::new("a:b/c")));
    assert_eq!(
        engine_choice(url, EngineChoice::Auto, false).unwrap(),
        EngineChoice::Only(EngineKind::Nfs)
    );
    assert_eq!(
        engine_choice(local, EngineChoice::Auto, false).unwrap(),
        EngineChoice::Auto
    );
    // null touches no file: it runs anywhere.
    let null = EngineChoice::Only(EngineKind::Null);
    assert_eq!(engine_choice(url, null, false).unwrap(), null);
    let psync = EngineChoice::Only(EngineKind::Psync);
    assert!(engine_choice(url, psync, false).is_err());
    let nfs = EngineChoice::Only(EngineKind::Nfs);
    assert!(engine_choice(local, nfs, false).is_err());
    // A metadata job names the local engine; on a URL it is the client's.
    let meta = EngineChoice::Only(EngineKind::for_metadata());
    assert_eq!(
        engine_choice(url, meta, true).unwrap(),
        EngineChoice::Only(EngineKind::Nfs)
    );
    assert_eq!(engine_choice(local, meta, true).unwrap(), meta);
    assert!(check_url(Path::new("cifs://s/share")).is_err());
    // An SMB share's trees are its client's too.
    let share_meta = Path::new("smb://u@s/share/d");
    assert_eq!(
        engine_choice(share_meta, meta, true).unwrap(),
        EngineChoice::Only(EngineKind::Smb)
    );
    #[cfg(unix)]
    {
        assert!(check_url(url).is_ok());
        assert!(check_url(Path::new("nfs://s/e/d?vers=3")).is_err());
        assert!(check_url(Path::new("smb://s/share/d?channels=2")).is_ok());
        assert!(check_url(Path::new("smb://s/share/d?vers=3")).is_err());
    }
    let share = Path::new("smb://u@s/share/d");
    let smb = EngineChoice::Only(EngineKind::Smb);
    assert_eq!(
        engine_choice(share, EngineChoice::Auto, false).unwrap(),
        smb
    );
    assert!(engine_choice(share, nfs, false).is_err());
    assert!(engine_choice(url, smb, false).is_err());
    assert!(engine_choice(local, smb, false).is_err());
    assert_eq!(engine_choice(share, EngineChoice::Auto, true).unwrap(), smb);
    assert_eq!(engine_choice(share, null, false).unwrap(), null);
    assert_eq!(storage_for(share, EngineKind::Smb.row()), Storage::Smb);
    assert_eq!(url_storage(share), Some(Storage::Smb));
    assert_eq!(storage_for(url, EngineKind::Nfs.row()), Storage::Nfs);
    assert_eq!(url_storage(url), Some(Storage::Nfs));
    assert_eq!(url_storage(local), None);
    #[cfg(unix)]
    assert_eq!(shown(url), Path::new("nfs://s/e/d"));
    assert_eq!(shown(local), local);
    let tree = Ask {
        tree: true,
        ..Ask::default()
    };
    assert!(refusals(caps(Storage::Nfs), &tree).is_ok());
    assert!(refusals(caps(Storage::Smb), &tree).is_ok());
    let drop = Ask {
        drop_caches: true,
        ..tree
    };
    assert!(refusals(caps(Storage::Nfs), &drop).is_err());
}

#[test]
fn the_local_file_system_is_refused_nothing_and_a_lesser_back_end_is_named_why() {
    let all = Ask {
        named_target: false,
        flush: true,
        trace_barriers: true,
        drop_caches: true,
        tree: true,
    };
    assert!(refusals(LOCAL, &all).is_ok());
    let bare = Caps {
        fds: false,
        named_targets: false,
        flush: false,
        discard: false,
        drop_caches: false,
        trees: true,
    };
    let e = refusals(
        bare,
        &Ask {
            flush: true,
            ..Ask::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("--fsync"), "{e}");
    let e = refusals(
        bare,
        &Ask {
            drop_caches: true,
            ..Ask::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("--drop-caches"), "{e}");
    let e = refusals(
        bare,
        &Ask {
            named_target: true,
            ..Ask::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("directory"), "{e}");
    assert!(
        refusals(
            bare,
            &Ask {
                tree: true,
                ..Ask::default()
            }
        )
        .is_ok()
    );
}
