#![no_main]
//! A fieldSelector.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::field_selector(data);
});
