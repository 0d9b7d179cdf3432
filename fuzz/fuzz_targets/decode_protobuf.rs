#![no_main]
//! A Kubernetes protobuf request body (`k8s\0` envelope): created and updated (dry runs).
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::decode_object(data, kapi::fuzzing::Format::Protobuf);
});
