//! Targets `decode_json`, `decode_yaml`, `decode_protobuf` and
//! `protobuf_message`: request bodies decoded and written as dry runs, and
//! protobuf messages decoded and encoded back.

use serde_json::Value;

use super::env::{block_on, dry_run, env, split_gvk};
use crate::endpoints::negotiation::BodyFormat;
use crate::registry::{meta, FieldValidation};

/// A request body as `endpoints::body::decode_body` (private) decodes it.
fn decode_body(bytes: &[u8], format: BodyFormat) -> Option<Value> {
    match format {
        BodyFormat::Json => serde_json::from_slice::<Value>(bytes).ok(),
        BodyFormat::Yaml => serde_saphyr::from_slice::<Value>(bytes).ok(),
        BodyFormat::Protobuf => {
            let opts = crate::api::protobuf::DecodeOptions {
                omit_empty_strings: true,
            };
            crate::api::protobuf::decode_with(bytes, opts).ok()
        }
    }
}

/// A create, then an update, of the body (JSON, YAML or Kubernetes
/// protobuf) on the resource its apiVersion and kind name (a Widget when
/// none is served), as dry runs; reviews and other kinds that are not
/// stored only decode.
pub fn decode_object(bytes: &[u8], format: BodyFormat) {
    let e = env();
    let Some(body) = decode_body(bytes, format) else {
        return;
    };
    let r = e
        .by_gvk
        .get(&split_gvk(&body))
        .cloned()
        .unwrap_or_else(|| e.widget.clone());
    let Some(registry) = e.registries.get(&r.group, &r.version, &r.plural) else {
        return;
    };
    let ns = if r.namespaced { "default" } else { "" };
    let validation = match bytes.len() % 3 {
        0 => FieldValidation::Strict,
        1 => FieldValidation::Warn,
        _ => FieldValidation::Ignore,
    };
    let opts = dry_run("fuzz", validation);
    if !r.is_stored() {
        let _ = registry.decode(body, ns, &opts);
        return;
    }
    block_on(async {
        let _ = registry.create(ns, body.clone(), &opts).await;
        let name = meta::name(&body).to_string();
        if !name.is_empty() {
            let _ = registry.update(ns, &name, body, None, &opts).await;
        }
    });
}

/// One message of the protobuf schema, by index, from its bytes (no
/// envelope), and the envelope decoder on the same bytes; what decodes is
/// encoded back.
pub fn decode_protobuf_message(input: &[u8]) {
    let [a, b, rest @ ..] = input else {
        return;
    };
    let messages = crate::api::protobuf::MESSAGES;
    let i = u16::from_le_bytes([*a, *b]) as usize % messages.len();
    // Whatever decodes must encode again without a panic.
    if let Ok(v) = crate::api::protobuf::decode_message(messages[i].name, rest) {
        let _ = crate::api::protobuf::encode_message(messages[i].name, &v);
    }
    if let Ok(v) = crate::api::protobuf::decode(rest) {
        let _ = crate::api::protobuf::encode(&v);
    }
}
