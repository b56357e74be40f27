//! The SMB client (`volbench::proto::smb`) against a real Samba on
//! loopback: every dialect, NTLMv2 and guest logons, signing and each
//! cipher recorded and carrying exact data, the ownership rules of CREATE
//! and rename, bounded listings, credits as the queue depth, and the
//! failures a user meets (wrong password, missing share, a restart).

use std::time::Duration;

use volbench::proto::smb::auth::creds::{Credentials, Secret};
use volbench::proto::smb::conn::wait::wait_all;
use volbench::proto::smb::conn::{Completion, Outcome};
use volbench::proto::smb::consts::{Cipher, Command, Dialect, SigningAlgo, status};
use volbench::proto::smb::msg::info::SetInfo;
use volbench::proto::smb::session::client::Client;
use volbench::proto::smb::session::ops::Open;
use volbench::proto::smb::session::{Auth, Options, Signing, Target};

use crate::common::smb::{PASSWORD, Samba, SambaConfig, USER};

fn user() -> Auth {
    Auth::Ntlm(Credentials {
        user: USER.into(),
        domain: String::new(),
        password: Secret::new(PASSWORD.into()),
    })
}

fn target(s: &Samba, share: &str) -> Target {
    Target {
        server: "127.0.0.1".into(),
        addr: s.addr(),
        share: share.into(),
    }
}

fn connect(s: &Samba, auth: Auth, opts: Options) -> Client {
    Client::connect(target(s, "bench"), auth, opts)
        .unwrap_or_else(|e| panic!("connect: {e}\n{}", s.log()))
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2654435761).to_le_bytes()[1] ^ seed)
        .collect()
}

/// Writes `data` to a new file through the client in blocks of `bs`,
/// reads it back, and checks both the bytes on the server's disk and the
/// client's per-command counts.
fn round_trip(s: &Samba, c: &mut Client, name: &str, data: &[u8], bs: usize) {
    let before = c.total_stats();
    let f = c
        .open(name, Open::CreateFile)
        .unwrap_or_else(|e| panic!("create {name}: {e}"));
    for (i, chunk) in data.chunks(bs).enumerate() {
        let n = c
            .write_at(f.file_id, (i * bs) as u64, chunk)
            .expect("write");
        assert_eq!(n, chunk.len());
    }
    c.flush(f.file_id).expect("flush");
    c.close(f.file_id).expect("close");
    assert_eq!(
        std::fs::read(s.share().join(name)).expect("the file on the server"),
        data,
        "{name}"
    );
    let f = c.open(name, Open::Read).expect("open to read");
    let mut back = vec![0u8; data.len()];
    for (i, chunk) in back.chunks_mut(bs).enumerate() {
        let n = c.read_at(f.file_id, (i * bs) as u64, chunk).expect("read");
        assert_eq!(n, chunk.len());
    }
    c.close(f.file_id).expect("close");
    assert_eq!(back, data, "{name} read back");
    let after = c.total_stats();
    let blocks = data.len().div_ceil(bs) as u64;
    for (cmd, bytes) in [(Command::Write, data.len()), (Command::Read, data.len())] {
        let (a, b) = (after.command(cmd), before.command(cmd));
        assert_eq!(
            a.requests - b.requests,
            blocks,
            "{name}: {} requests",
            cmd.name()
        );
        assert_eq!(
            a.bytes - b.bytes,
            bytes as u64,
            "{name}: {} bytes",
            cmd.name()
        );
        assert_eq!(a.errors, b.errors);
    }
}

#[test]
fn smb_every_dialect_negotiates_what_was_offered_and_moves_exact_bytes() {
    let Some(s) = Samba::up("smb_every_dialect", SambaConfig::default()) else {
        return;
    };
    for (d, algo) in [
        (Dialect::Smb210, SigningAlgo::HmacSha256),
        (Dialect::Smb300, SigningAlgo::AesCmac),
        (Dialect::Smb302, SigningAlgo::AesCmac),
        (Dialect::Smb311, SigningAlgo::AesGmac),
    ] {
        let opts = Options {
            dialects: vec![d],
            signing: Signing::On,
            ..Options::default()
        };
        let mut c = connect(&s, user(), opts);
        let n = c.negotiated().clone();
        assert_eq!(n.dialect, d);
        assert_eq!(n.signing_algo, Some(algo), "{}", d.name());
        assert!(n.signing && !n.guest && !n.anonymous);
        round_trip(
            &s,
            &mut c,
            &format!("dialect-{}", d.name()),
            &pattern(300_000, 1),
            65536,
        );
        c.logoff();
    }
}

#[test]
fn smb_each_cipher_and_signing_choice_is_recorded_and_carries_exact_data() {
    let Some(s) = Samba::up("smb_each_cipher", SambaConfig::default()) else {
        return;
    };
    for cipher in Cipher::ALL {
        let opts = Options {
            encryption: vec![cipher],
            ..Options::default()
        };
        let mut c = connect(&s, user(), opts);
        assert_eq!(c.negotiated().cipher, Some(cipher));
        assert_eq!(c.negotiated().dialect, Dialect::Smb311);
        // Large reads are sealed whole; small ones many to a receive.
        round_trip(
            &s,
            &mut c,
            &format!("sealed-{}", cipher.name()),
            &pattern(3 << 20, 2),
            1 << 20,
        );
        round_trip(
            &s,
            &mut c,
            &format!("sealed-small-{}", cipher.name()),
            &pattern(40_000, 3),
            4096,
        );
    }
    // 3.0 encrypts with AES-128-CCM, its only cipher.
    let opts = Options {
        dialects: vec![Dialect::Smb300],
        encryption: vec![Cipher::Aes128Ccm],
        ..Options::default()
    };
    let mut c = connect(&s, user(), opts);
    assert_eq!(c.negotiated().cipher, Some(Cipher::Aes128Ccm));
    round_trip(&s, &mut c, "sealed-3.0", &pattern(200_000, 4), 65536);
    // Signing only with the algorithm offered; off when asked off.
    for (algos, want) in [
        (vec![SigningAlgo::AesCmac], SigningAlgo::AesCmac),
        (vec![SigningAlgo::HmacSha256], SigningAlgo::HmacSha256),
    ] {
        let opts = Options {
            signing: Signing::On,
            signing_algos: algos,
            ..Options::default()
        };
        let mut c = connect(&s, user(), opts);
        assert_eq!(c.negotiated().signing_algo, Some(want));
        round_trip(
            &s,
            &mut c,
            &format!("signed-{}", want.name()),
            &pattern(2 << 20, 5),
            1 << 20,
        );
    }
    let mut c = connect(&s, user(), Options::default());
    assert!(!c.negotiated().signing && c.negotiated().cipher.is_none());
    round_trip(&s, &mut c, "plain", &pattern(2 << 20, 6), 1 << 20);
}

#[test]
fn smb_a_share_that_requires_encryption_is_encrypted_and_recorded_so() {
    let cfg = SambaConfig {
        sealed_share: true,
        ..SambaConfig::default()
    };
    let Some(s) = Samba::up("smb_share_requires_encryption", cfg) else {
        return;
    };
    let mut c =
        Client::connect(target(&s, "sealed"), user(), Options::default()).expect("connects");
    assert!(c.negotiated().server_requires_encryption);
    assert!(c.negotiated().cipher.is_some());
    round_trip(&s, &mut c, "on-sealed", &pattern(100_000, 7), 65536);
    // A guest cannot encrypt: one clear refusal.
    let e = Client::connect(target(&s, "sealed"), Auth::Guest, Options::default())
        .err()
        .expect("refused");
    assert!(
        e.to_string().contains("encrypt") || e.nt_status() == Some(status::ACCESS_DENIED),
        "{e}"
    );
}

#[test]
fn smb_guest_logs_on_without_a_password_and_cannot_sign() {
    let Some(s) = Samba::up("smb_guest", SambaConfig::default()) else {
        return;
    };
    let mut c = connect(&s, Auth::Guest, Options::default());
    assert!(c.negotiated().guest || c.negotiated().anonymous);
    assert_eq!(c.negotiated().signing_algo, None);
    round_trip(&s, &mut c, "guest-file", &pattern(100_000, 8), 32768);
    let opts = Options {
        signing: Signing::On,
        ..Options::default()
    };
    let e = Client::connect(target(&s, "bench"), Auth::Guest, opts)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("guest"), "{e}");
    let e = c
        .add_channels(2, &[s.addr()])
        .expect_err("no binding without a key");
    assert!(e.to_string().contains("guest"), "{e}");
}

#[test]
fn smb_wrong_password_and_missing_share_are_one_line_without_the_password() {
    let Some(s) = Samba::up("smb_wrong_password", SambaConfig::default()) else {
        return;
    };
    let wrong = Auth::Ntlm(Credentials {
        user: USER.into(),
        domain: String::new(),
        password: Secret::new("not-the-Password-42".into()),
    });
    let e = Client::connect(target(&s, "bench"), wrong, Options::default())
        .err()
        .expect("refused");
    let line = e.to_string();
    assert!(line.contains("STATUS_LOGON_FAILURE"), "{line}");
    assert!(
        !line.contains('\n') && !line.contains("not-the-Password"),
        "{line}"
    );
    let e = Client::connect(target(&s, "nosuchshare"), user(), Options::default())
        .err()
        .expect("refused");
    let line = e.to_string();
    assert!(
        line.contains("STATUS_BAD_NETWORK_NAME") && line.contains("nosuchshare"),
        "{line}"
    );
    assert!(!line.contains(PASSWORD) && !format!("{e:?}").contains(PASSWORD));
    // Nothing printed anywhere holds the password.
    let c = connect(&s, user(), Options::default());
    assert!(!format!("{:?}", c.negotiated()).contains(PASSWORD));
    assert!(!format!("{:?}", user()).contains(PASSWORD));
    assert!(
        !s.log().contains(PASSWORD),
        "the server's log holds the password"
    );
}

#[test]
fn smb_create_makes_only_new_files_and_rename_never_replaces() {
    let Some(s) = Samba::up("smb_create_rules", SambaConfig::default()) else {
        return;
    };
    let mut c = connect(&s, user(), Options::default());
    std::fs::write(s.share().join("theirs"), b"not ours").expect("a foreign file");
    let e = c
        .open("theirs", Open::CreateFile)
        .expect_err("an existing name is not new");
    assert_eq!(e.nt_status(), Some(status::OBJECT_NAME_COLLISION), "{e}");
    assert_eq!(
        std::fs::read(s.share().join("theirs")).expect("intact"),
        b"not ours"
    );
    let d = c.open("dir", Open::CreateDir).expect("mkdir");
    c.close(d.file_id).expect("close");
    let f = c.open("dir/mine", Open::CreateFile).expect("create");
    assert_eq!(f.action, volbench::proto::smb::msg::file::FILE_CREATED);
    c.write_at(f.file_id, 0, &[1u8; 5000]).expect("write");
    c.set_info(f.file_id, SetInfo::EndOfFile(12345))
        .expect("truncate");
    let info = c.file_info(f.file_id).expect("attributes");
    let meta = std::fs::metadata(s.share().join("dir/mine")).expect("on disk");
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        (info.end_of_file, info.links, info.directory),
        (12345, 1, false)
    );
    assert_eq!(meta.len(), 12345);
    assert_eq!(info.file_id, meta.ino(), "Samba's file id is the inode");
    // A rename onto an existing name is refused and leaves both alone.
    let e = c
        .set_info(f.file_id, SetInfo::Rename("theirs"))
        .expect_err("no replace");
    assert_eq!(e.nt_status(), Some(status::OBJECT_NAME_COLLISION), "{e}");
    assert_eq!(
        std::fs::read(s.share().join("theirs")).expect("intact"),
        b"not ours"
    );
    c.set_info(f.file_id, SetInfo::Rename("dir/renamed"))
        .expect("rename");
    c.set_info(f.file_id, SetInfo::DeleteOnClose)
        .expect("delete on close");
    c.close(f.file_id).expect("close");
    assert!(!s.share().join("dir/renamed").exists() && !s.share().join("dir/mine").exists());
    // A symbolic link is opened as itself, never followed out of the share.
    std::os::unix::fs::symlink("/etc/passwd", s.share().join("link")).expect("symlink");
    match c.open("link", Open::Read) {
        Ok(r) => {
            let mut b = [0u8; 64];
            let n = c.read_at(r.file_id, 0, &mut b).unwrap_or(0);
            let passwd = std::fs::read("/etc/passwd").expect("passwd");
            assert!(
                n == 0 || b[..n] != passwd[..n.min(passwd.len())],
                "read through a link"
            );
        }
        Err(e) => assert!(e.nt_status().is_some(), "{e}"),
    }
}

#[test]
fn smb_listing_is_bounded_and_complete() {
    let Some(s) = Samba::up("smb_listing", SambaConfig::default()) else {
        return;
    };
    std::fs::create_dir(s.share().join("many")).expect("dir");
    for i in 0..300 {
        std::fs::write(
            s.share()
                .join(format!("many/file-with-a-longish-name-{i:04}")),
            b"x",
        )
        .expect("file");
    }
    let mut c = connect(&s, user(), Options::default());
    let (all, more) = c.list("many", 1000).expect("list");
    assert_eq!((all.len(), more), (300, false));
    let (some, more) = c.list("many", 120).expect("list");
    assert_eq!((some.len(), more), (120, true));
    assert!(
        all.iter()
            .all(|e| e.end_of_file == 1 && e.name.starts_with("file-with"))
    );
}

#[test]
fn smb_credits_bound_the_queue_depth_and_waits_are_counted() {
    let Some(s) = Samba::up("smb_credits", SambaConfig::default()) else {
        return;
    };
    let opts = Options {
        credit_target: 16,
        ..Options::default()
    };
    let mut c = connect(&s, user(), opts);
    let data = pattern(64 * 4096, 9);
    let f = c.open("credits", Open::CreateFile).expect("create");
    c.write_at(f.file_id, 0, &data).expect("write");
    let tree = c.tree_id();
    let mut bufs = vec![vec![0u8; 4096]; 64];
    let ch = &mut c.channels_mut()[0];
    for (i, b) in bufs.iter_mut().enumerate() {
        // SAFETY: each buffer lives past the wait below and is used once.
        unsafe {
            ch.queue_read(
                i as u64,
                tree,
                f.file_id,
                (i * 4096) as u64,
                4096,
                b.as_mut_ptr(),
            )
        };
    }
    let mut done: Vec<Completion> = Vec::new();
    while done.len() < 64 {
        wait_all(
            c.channels_mut(),
            64 - done.len(),
            Duration::from_secs(30),
            &mut done,
        )
        .expect("reads");
    }
    for d in &done {
        assert_eq!((d.status, d.outcome), (0, Outcome::Bytes(4096)));
        let i = d.tag as usize;
        assert_eq!(bufs[i], data[i * 4096..(i + 1) * 4096], "slot {i}");
    }
    let st = c.channels()[0].stats().clone();
    assert!(
        st.max_in_flight <= 16,
        "{} in flight with 16 credits",
        st.max_in_flight
    );
    assert!(st.credit_waits >= 1, "64 reads on 16 credits never waited");
    assert_eq!(st.command(Command::Read).requests, 64);
    let lat = st.command(Command::Read).latency.as_ref().expect("latency");
    assert_eq!(lat.ops, 64);
}

#[test]
fn smb_a_restarted_server_fails_what_was_in_flight_and_a_reconnect_is_counted() {
    let Some(mut s) = Samba::up("smb_restart", SambaConfig::default()) else {
        return;
    };
    let mut c = connect(&s, user(), Options::default());
    let f = c.open("survivor", Open::CreateFile).expect("create");
    c.write_at(f.file_id, 0, &[7u8; 8192]).expect("write");
    s.stop();
    let e = c.echo().expect_err("the server is gone");
    assert!(
        e.is_disconnect() || matches!(e, volbench::proto::smb::error::SmbError::Protocol(_)),
        "{e}"
    );
    assert!(!e.to_string().contains('\n'));
    s.start();
    c.reconnect().expect("reconnects");
    assert_eq!(c.reconnects(), 1);
    // Handles do not survive: the file is reopened, its data intact.
    let f = c.open("survivor", Open::Read).expect("reopen");
    let mut b = vec![0u8; 8192];
    assert_eq!(c.read_at(f.file_id, 0, &mut b).expect("read"), 8192);
    assert!(b.iter().all(|&x| x == 7));
}
