#![no_main]
//! A continue token (and resourceVersion) of a list.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::continue_token(data);
});
