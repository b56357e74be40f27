//! The whole result.json, the source of truth of every stored run, kept
//! compressed: a many-host run's text is mostly numbers and repeated keys,
//! which zstd shrinks about tenfold at hundreds of MiB/s. Read back with
//! the same cap as a result file on disk, so a damaged or hostile store
//! cannot make volbench allocate without bound.

use super::rows::Blob;
use crate::error::{Result, VbError};
use crate::output::source::MAX_RESULT_BYTES;

pub(crate) const ZSTD: &str = "zstd";
/// Level 3, zstd's default: of the levels measured on a 1,000-host result
/// (bench/store.sh) it kept the store write under a second with the file
/// about a tenth of the text.
const LEVEL: i32 = 3;

pub(crate) fn pack(json: &str) -> Result<Blob> {
    let bytes = zstd::bulk::compress(json.as_bytes(), LEVEL)
        .map_err(|e| VbError::run(format!("compressing the result for the store: {e}")))?;
    Ok(Blob {
        codec: ZSTD,
        text_len: json.len(),
        bytes,
    })
}

/// The result.json text of a stored run; `shown` names it in errors.
pub(crate) fn unpack(codec: &str, bytes: &[u8], shown: &str) -> Result<String> {
    let raw = match codec {
        ZSTD => zstd::bulk::decompress(bytes, MAX_RESULT_BYTES as usize).map_err(|e| {
            VbError::input(format!(
                "{shown}: the stored result does not decompress ({e}): the store is damaged"
            ))
        })?,
        "none" => bytes.to_vec(),
        other => {
            return Err(VbError::input(format!(
                "{shown}: the stored result is in a form this volbench does not know \
                 ({other:?}): written by a newer volbench?"
            )));
        }
    };
    String::from_utf8(raw).map_err(|_| {
        VbError::input(format!(
            "{shown}: the stored result is not text: the store is damaged"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_comes_back_byte_for_byte() {
        let text = "{\"schema\":\"volbench.result/v1\",\"runs\":[]}\n".repeat(100);
        let b = pack(&text).unwrap();
        assert!(b.bytes.len() < text.len() / 5, "{} bytes", b.bytes.len());
        assert_eq!(b.text_len, text.len());
        assert_eq!(unpack(b.codec, &b.bytes, "t").unwrap(), text);
    }

    #[test]
    fn damage_and_unknown_codecs_are_one_line_each() {
        let e = unpack(ZSTD, b"not zstd at all", "store:3").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("store:3: the stored result does not decompress")
        );
        let e = unpack("brotli", b"", "store:3").unwrap_err();
        assert!(e.to_string().contains("newer volbench"));
    }
}
