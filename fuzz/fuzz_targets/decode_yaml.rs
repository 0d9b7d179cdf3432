#![no_main]
//! A YAML request body: created and updated (dry runs) on the resource its kind names.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::decode_object(data, kapi::fuzzing::Format::Yaml);
});
