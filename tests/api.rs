//! The built-in API checked against upstream behaviour.

mod common;

use common::Kapi;

#[test]
fn placeholder() {
    kapi::crypto_provider();
    let _ = Kapi::start;
    let _ = kube::Client::try_from;
}
