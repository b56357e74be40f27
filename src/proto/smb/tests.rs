//! Decoders over arbitrary bytes (never a panic, never a read past the
//! end), encoders against their decoders, and the cryptography against
//! independent computations: NTLMv2 against Python's hmac/md5, streaming
//! GMAC and CMAC against the one-shot primitives, sealing against tamper.

use proptest::prelude::*;

use super::auth::{ntlm, spnego};
use super::consts::{Cipher, SigningAlgo};
use super::crypto::{seal::Sealer, sign::Signer};
use super::header::{self, HEADER_LEN, Header};
use super::msg::{dir, file, info, ioctl, negotiate, session};

/// Every decoder, as the fuzz harness calls them.
fn decode_all(b: &[u8]) {
    let _ = header::decode_header(b);
    let _ = header::decode_transform(b);
    let _ = header::decode_error_body(b);
    let _ = negotiate::decode_negotiate(b);
    let _ = session::decode_session_setup(b);
    let _ = session::decode_tree_connect(b);
    let _ = session::decode_empty(b);
    let _ = file::decode_create(b);
    let _ = file::decode_close(b);
    let _ = file::decode_read_fixed(b);
    let _ = file::decode_write(b);
    let _ = info::decode_query_info(b);
    let _ = info::decode_file_all(b);
    let _ = info::decode_fs_full_size(b);
    let _ = info::decode_set_info(b);
    let _ = dir::decode_query_directory(b);
    let _ = dir::decode_entries(b);
    let _ = ioctl::decode_ioctl(b);
    let _ = ioctl::decode_interfaces(b);
    let _ = ioctl::decode_validate_negotiate(b);
    let _ = ntlm::decode_challenge(b);
    let _ = spnego::decode_server_token(b);
}

/// A reply of `body` behind a valid response header.
fn reply(command: u16, body: &[u8]) -> Vec<u8> {
    let h = Header {
        command,
        flags: super::consts::flags::SERVER_TO_REDIR,
        ..Header::default()
    };
    let mut v = [0u8; HEADER_LEN];
    h.encode(&mut v);
    let mut m = v.to_vec();
    m.extend_from_slice(body);
    m
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_decoder_panics_on_any_bytes(b in proptest::collection::vec(any::<u8>(), 0..600)) {
        decode_all(&b);
    }

    #[test]
    fn no_decoder_panics_behind_a_valid_header(cmd in 0u16..19, body in proptest::collection::vec(any::<u8>(), 0..400)) {
        decode_all(&reply(cmd, &body));
    }

    #[test]
    fn a_header_decodes_to_what_was_encoded(charge: u16, status: u32, cmd: u16, credits: u16, mid: u64, tree: u32, sid: u64, sig: [u8; 16], asy: bool, aid: u64) {
        let h = Header {
            credit_charge: charge,
            status,
            command: cmd,
            credits,
            flags: if asy { super::consts::flags::ASYNC_COMMAND } else { 0 },
            next_command: 0,
            message_id: mid,
            async_id: if asy { aid } else { 0 },
            tree_id: if asy { 0 } else { tree },
            session_id: sid,
            signature: sig,
        };
        let mut b = [0u8; HEADER_LEN];
        h.encode(&mut b);
        prop_assert_eq!(header::decode_header(&b), Ok(h));
    }

    #[test]
    fn streaming_signatures_match_whatever_the_pieces(msg in proptest::collection::vec(any::<u8>(), HEADER_LEN..700), cuts in proptest::collection::vec(0usize..700, 0..6), key: [u8; 16]) {
        for algo in [SigningAlgo::HmacSha256, SigningAlgo::AesCmac, SigningAlgo::AesGmac] {
            let s = Signer::new(algo, &key);
            let mut hb = [0u8; HEADER_LEN];
            hb.copy_from_slice(&msg[..HEADER_LEN]);
            let mut whole = s.start(&hb, true, false);
            whole.update(&msg[HEADER_LEN..]);
            let want = whole.finish();
            let mut run = s.start(&hb, true, false);
            let mut at = HEADER_LEN;
            let mut cuts = cuts.clone();
            cuts.sort_unstable();
            for c in cuts.into_iter().filter(|&c| c > HEADER_LEN && c < msg.len()) {
                run.update(&msg[at..c]);
                at = c;
            }
            run.update(&msg[at..]);
            prop_assert_eq!(run.finish(), want);
        }
    }
}

#[test]
fn gmac_is_aes_gcm_over_the_message_as_associated_data() {
    use aes_gcm::aead::AeadInPlace;
    use aes_gcm::{Aes128Gcm, KeyInit};
    let key = [7u8; 16];
    let mut msg: Vec<u8> = (0..200u32).map(|i| (i * 31 % 251) as u8).collect();
    msg[24..32].copy_from_slice(&42u64.to_le_bytes());
    msg[48..64].fill(0);
    let mut hb = [0u8; HEADER_LEN];
    hb.copy_from_slice(&msg[..HEADER_LEN]);
    let mut run = Signer::new(SigningAlgo::AesGmac, &key).start(&hb, true, false);
    run.update(&msg[HEADER_LEN..]);
    let mut nonce = [0u8; 12];
    nonce[..8].copy_from_slice(&42u64.to_le_bytes());
    nonce[8] = 1; // a server's reply
    let tag = Aes128Gcm::new(&key.into())
        .encrypt_in_place_detached(&nonce.into(), &msg, &mut [])
        .expect("an empty plaintext always seals");
    assert_eq!(run.finish(), <[u8; 16]>::from(tag));
}

#[test]
fn sealing_round_trips_and_a_changed_byte_fails() {
    for c in Cipher::ALL {
        let s = Sealer::new(c, &[9u8; 32]);
        let nonce = [3u8; 16];
        let aad = [5u8; 32];
        let plain: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let mut buf = plain.clone();
        let tag = s.seal(&nonce, &aad, &mut buf);
        assert_ne!(buf, plain, "{}", c.name());
        let mut opened = buf.clone();
        s.open(&nonce, &aad, &mut opened, &tag).expect("opens");
        assert_eq!(opened, plain, "{}", c.name());
        let mut bad = buf.clone();
        bad[500] ^= 1;
        assert!(
            s.open(&nonce, &aad, &mut bad, &tag).is_err(),
            "{}",
            c.name()
        );
        let mut aad2 = aad;
        aad2[0] ^= 1;
        let mut again = buf.clone();
        assert!(
            s.open(&nonce, &aad2, &mut again, &tag).is_err(),
            "{}",
            c.name()
        );
    }
}

/// [MS-NLMP] 4.2.4's inputs; NTOWFv2 as the spec gives it, the proof and
/// session base key as Python's hmac/md5 compute them from the NT hash.
#[test]
fn ntlmv2_matches_an_independent_computation() {
    assert_eq!(
        ntlm::ntowf_v2("User", "Domain", "Password").to_vec(),
        hex("0c868a403bfd7a93a3001ef22ef02e3f")
    );
    let ch = ntlm::Challenge {
        flags: ntlm::CLIENT_FLAGS & !ntlm::KEY_EXCH,
        server_challenge: [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef],
        target_info: hex(
            "02000c0044006f006d00610069006e0001000c005300650072007600650072000000000000",
        ),
        timestamp: None,
    };
    let n = ntlm::Nonces {
        client_challenge: [0xaa; 8],
        exported_session_key: [0x55; 16],
        now: 0,
    };
    let who = ntlm::Identity::User {
        user: "User",
        domain: "Domain",
        password: "Password",
    };
    let a = ntlm::authenticate(&ch, who, &n, "COMPUTER");
    // The NT response sits after the LM response in the payload at 72.
    let lm_len = u16::from_le_bytes([a.message[12], a.message[13]]) as usize;
    let nt_off =
        u32::from_le_bytes([a.message[24], a.message[25], a.message[26], a.message[27]]) as usize;
    assert_eq!(nt_off, 72 + lm_len);
    assert_eq!(
        a.message[nt_off..nt_off + 16].to_vec(),
        hex("8dae3a0d77f58504f5cae04991ef927e")
    );
    assert_eq!(
        a.session_key.map(|k| k.to_vec()),
        Some(hex("26f3458d1c24e6b3df089e599d6c0af0"))
    );
}

#[test]
fn an_anonymous_logon_asks_for_no_key() {
    let ch = ntlm::Challenge {
        flags: ntlm::CLIENT_FLAGS,
        server_challenge: [1; 8],
        target_info: Vec::new(),
        timestamp: None,
    };
    let n = ntlm::Nonces {
        client_challenge: [2; 8],
        exported_session_key: [3; 16],
        now: 0,
    };
    let a = ntlm::authenticate(&ch, ntlm::Identity::Anonymous, &n, "X");
    assert!(a.session_key.is_none());
    let flags = u32::from_le_bytes([a.message[60], a.message[61], a.message[62], a.message[63]]);
    assert_eq!(flags & ntlm::KEY_EXCH, 0);
    assert_ne!(flags & ntlm::ANONYMOUS, 0);
}

#[test]
fn spnego_tokens_wrap_and_unwrap() {
    let t = spnego::init_token(&ntlm::negotiate_message());
    assert!(spnego::offers_ntlmssp(&t));
    let inner = b"NTLMSSP\0\x02\0\0\0rest";
    let resp = spnego::response_token(inner);
    assert_eq!(
        spnego::decode_server_token(&resp).expect("decodes").token,
        inner.to_vec()
    );
    // A long token takes the two-byte length form.
    let big = vec![0x41u8; 3000];
    assert_eq!(
        spnego::decode_server_token(&spnego::response_token(&big))
            .expect("decodes")
            .token,
        big
    );
}

#[test]
fn directory_and_interface_chains_cannot_loop_or_overrun() {
    // An entry whose NextEntryOffset points at itself is refused.
    let mut e = vec![0u8; 84];
    e[0..4].copy_from_slice(&0u32.to_le_bytes());
    e[60..64].copy_from_slice(&4u32.to_le_bytes());
    assert_eq!(dir::decode_entries(&e).expect("one entry").len(), 1);
    e[0..4].copy_from_slice(&4u32.to_le_bytes());
    assert!(dir::decode_entries(&e).is_err());
    // A name longer than the buffer is refused.
    e[0..4].copy_from_slice(&0u32.to_le_bytes());
    e[60..64].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(dir::decode_entries(&e).is_err());
    let mut i = vec![0u8; 152];
    i[0..4].copy_from_slice(&152u32.to_le_bytes());
    assert!(ioctl::decode_interfaces(&i).is_err());
}

#[test]
fn a_read_reply_cannot_put_its_data_inside_the_header() {
    let mut fixed = [0u8; 16];
    fixed[0..2].copy_from_slice(&17u16.to_le_bytes());
    fixed[2] = 10;
    fixed[4..8].copy_from_slice(&100u32.to_le_bytes());
    assert!(file::decode_read_fixed(&fixed).is_err());
    fixed[2] = 80;
    assert_eq!(
        file::decode_read_fixed(&fixed).expect("valid").data_len,
        100
    );
}

#[test]
fn a_frame_prefix_that_is_not_a_session_message_is_refused() {
    assert!(header::decode_frame_len([0x85, 0, 0, 0]).is_err());
    assert_eq!(
        header::decode_frame_len([0, 0xff, 0xff, 0xff]),
        Ok(0xff_ffff)
    );
}

#[test]
fn credentials_files_parse_and_never_print_the_password() {
    let c = super::auth::creds::parse_file("username=alice\npassword= s3cr=t \ndomain=LAB\n", None)
        .expect("parses");
    assert_eq!(
        (c.user.as_str(), c.domain.as_str(), c.password.expose()),
        ("alice", "LAB", " s3cr=t ")
    );
    assert!(!format!("{c:?}").contains("s3cr"));
    let e = super::auth::creds::parse_file("password=hunter2\nhunter2\n", Some("bob"))
        .expect_err("refused");
    assert!(e.contains("line 2") && !e.contains("hunter2"), "{e}");
    assert!(super::auth::creds::parse_file("username=a\n", None).is_err());
}

#[cfg(unix)]
#[test]
fn a_credentials_file_others_can_read_or_a_link_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().expect("temp dir");
    let p = d.path().join("creds");
    std::fs::write(&p, "username=u\npassword=pw-in-file\n").expect("write");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let e = super::auth::creds::from_file(&p, None).expect_err("0644 refused");
    assert!(
        e.0.contains("0644") && e.0.contains("chmod 600") && !e.0.contains("pw-in-file"),
        "{e}"
    );
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let c = super::auth::creds::from_file(&p, Some("url-user")).expect("0600 accepted");
    assert_eq!(
        (c.user.as_str(), c.password.expose()),
        ("url-user", "pw-in-file")
    );
    let l = d.path().join("link");
    std::os::unix::fs::symlink(&p, &l).expect("symlink");
    assert!(
        super::auth::creds::from_file(&l, None).is_err(),
        "a link is not followed"
    );
}

#[test]
fn endless_credit_grants_stop_at_the_cap() {
    let mut s = super::conn::slots::Slots::new(64, 16);
    for _ in 0..100 {
        s.grant(u16::MAX);
    }
    assert_eq!(s.credits, super::conn::slots::MAX_CREDITS);
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or(0))
        .collect()
}
