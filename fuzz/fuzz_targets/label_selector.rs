#![no_main]
//! A labelSelector (or a JSON metav1.LabelSelector).
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::label_selector(data);
});
