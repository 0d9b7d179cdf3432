#![no_main]
//! "METHOD target" then optional Accept and Content-Type lines.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::request_info(data);
});
