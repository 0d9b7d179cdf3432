#![no_main]
//! First byte: base object and options (see kapi::fuzzing::patch_object); rest: a strategic merge patch.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::patch_object(data, kapi::fuzzing::Patch::StrategicMerge);
});
