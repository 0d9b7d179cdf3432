#![no_main]
//! A JSON object as storage holds it: the resourceVersion splice must keep it intact.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::resource_version(data);
});
