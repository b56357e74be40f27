#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| volbench::fuzz::nfs_url(data));
