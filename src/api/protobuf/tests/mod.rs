//! Decoder tests, by topic; the objects and the envelope they are sent in
//! are built with k8s-pb's (prost's) encoder, as a Go client sends them.

mod go_clients;
mod json_forms;
mod schema;
mod wire;

use super::*;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::coordination::v1 as coordination;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{RawExtension, TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message as _;
use serde_json::json;
use std::collections::BTreeMap;

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let u = Unknown {
        type_meta: Some(TypeMeta {
            api_version: s(api_version),
            kind: s(kind),
        }),
        raw: Some(raw),
        // Go writes these even when empty.
        content_encoding: s(""),
        content_type: s(""),
    };
    let mut out = MAGIC.to_vec();
    out.extend(u.encode_to_vec());
    out
}

fn encode<M: prost::Message>(api_version: &str, kind: &str, m: &M) -> Vec<u8> {
    envelope(api_version, kind, m.encode_to_vec())
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn quantity(v: &str) -> Quantity {
    Quantity { string: s(v) }
}

fn time(seconds: i64) -> meta::Time {
    meta::Time {
        seconds: Some(seconds),
        nanos: Some(0),
    }
}

// 2026-11-21T06:48:50Z
const T: i64 = 1_795_243_730;

fn configmap() -> core::ConfigMap {
    core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            name: s("x"),
            namespace: s("default"),
            labels: labels(&[("app", "web"), ("tier", "front")]),
            creation_timestamp: Some(time(T)),
            ..Default::default()
        }),
        data: labels(&[("a", "b"), ("empty", "")]),
        binary_data: [("bin".to_string(), vec![0u8, 1, 2, 255])]
            .into_iter()
            .collect(),
        immutable: None,
    }
}

fn container() -> core::Container {
    core::Container {
        name: s("nginx"),
        image: s("nginx:1.27"),
        ports: vec![core::ContainerPort {
            container_port: Some(80),
            protocol: s("TCP"),
            ..Default::default()
        }],
        resources: Some(core::ResourceRequirements {
            limits: [
                ("cpu".to_string(), quantity("500m")),
                ("memory".to_string(), quantity("128Mi")),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        }),
        security_context: Some(core::SecurityContext::default()),
        ..Default::default()
    }
}
