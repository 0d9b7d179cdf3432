#![no_main]
//! A CEL rule, optionally NUL and a messageExpression: CRD validation rule and admission expression.
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: kapi::fuzzing::init(), |data: &[u8]| {
    kapi::fuzzing::cel_expression(data);
});
