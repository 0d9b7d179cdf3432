#![no_main]
//! Two bytes pick a protobuf message; the rest is decoded as it (and as an envelope).
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::decode_protobuf_message(data);
});
