#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| memlab::fuzz::plugin_module(data));
