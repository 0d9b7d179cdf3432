#![no_main]
//! A CRD openAPIV3Schema (JSON): CRD creation, then custom resources against it.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::crd_schema(data);
});
