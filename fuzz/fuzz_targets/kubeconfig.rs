#![no_main]
//! A kubeconfig as the client commands read it.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::kubeconfig(data);
});
