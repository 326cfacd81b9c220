#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kinject::fuzz::serve(data));
