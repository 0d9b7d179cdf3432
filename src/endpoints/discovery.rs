//! Discovery documents, derived from the catalog: `/api`, `/apis`,
//! `/apis/<group>`, `/api/v1` and `/apis/<group>/<version>`, with ETags.

use std::cmp::Ordering;

use axum::response::{IntoResponse, Response};
use base64::Engine;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::api::catalog::{Catalog, Resource};

/// Kubernetes version priority: GA > beta > alpha, higher numbers first.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u32, u32, u32)> {
        let rest = v.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let major: u32 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((3, major, 0));
        }
        for (label, rank) in [("beta", 2), ("alpha", 1)] {
            if let Some(n) = tail.strip_prefix(label) {
                return Some((rank, major, n.parse().ok()?));
            }
        }
        None
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// upstream's storageVersionHash: base64 of the first 8 bytes of sha256("group/version/kind").
pub fn storage_version_hash(r: &Resource) -> String {
    let digest =
        Sha256::digest(format!("{}/{}/{}", r.storage_group, r.storage_version, r.kind).as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// Groups in priority order, each with its versions in priority order.
pub fn groups(catalog: &Catalog) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for g in catalog.group_order() {
        if g.is_empty() {
            continue;
        }
        let mut versions: Vec<String> = catalog
            .all()
            .iter()
            .filter(|r| r.group == g)
            .map(|r| r.version.clone())
            .collect();
        versions.sort_by(|a, b| compare_versions(a, b));
        versions.dedup();
        if !versions.is_empty() {
            out.push((g, versions));
        }
    }
    out
}

fn group_json(name: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{name}/{v}"), "version": v});
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

pub fn api_versions(server_address: &str) -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]})
}

pub fn api_group_list(catalog: &Catalog) -> Value {
    let groups: Vec<Value> = groups(catalog)
        .iter()
        .map(|(g, v)| group_json(g, v))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn api_group(catalog: &Catalog, group: &str) -> Option<Value> {
    let (name, versions) = groups(catalog).into_iter().find(|(g, _)| g == group)?;
    let mut v = group_json(&name, &versions);
    v["kind"] = json!("APIGroup");
    v["apiVersion"] = json!("v1");
    Some(v)
}

pub fn resource_list(catalog: &Catalog, group: &str, version: &str) -> Option<Value> {
    let rs: Vec<_> = catalog
        .all()
        .into_iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if rs.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for r in &rs {
        let mut e = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs,
        });
        if !r.short_names.is_empty() {
            e["shortNames"] = json!(r.short_names);
        }
        if !r.categories.is_empty() {
            e["categories"] = json!(r.categories);
        }
        if r.is_stored() {
            e["storageVersionHash"] = json!(storage_version_hash(r));
        }
        resources.push(e);
        for s in &r.subresources {
            let mut e = json!({
                "name": format!("{}/{}", r.plural, s.name),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": s.kind,
                "verbs": s.verbs,
            });
            if s.group != r.group || s.version != r.version {
                e["group"] = json!(s.group);
                e["version"] = json!(s.version);
            }
            resources.push(e);
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    // The legacy group's list carries no apiVersion (upstream's handler
    // for /api/v1 writes the struct without TypeMeta's version).
    let mut doc = json!({"kind": "APIResourceList", "groupVersion": gv, "resources": resources});
    if !group.is_empty() {
        doc["apiVersion"] = json!("v1");
    }
    Some(doc)
}

/// The Go struct a discovery document is written as (its fields in
/// declaration order, as kubectl's own tests grep them).
fn message_of(kind: &str) -> &'static str {
    match kind {
        "APIVersions" => "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions",
        "APIGroupList" => "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList",
        "APIGroup" => "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup",
        "APIResourceList" => "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
        // v2beta1's struct has the same fields in the same order.
        _ => "io.k8s.api.apidiscovery.v2.APIGroupDiscoveryList",
    }
}

/// A discovery document with an ETag; `304 Not Modified` when the client has it.
pub fn respond(doc: &Value, request_headers: &HeaderMap) -> Response {
    let body = crate::api::go_json::to_vec_as(doc, message_of(doc["kind"].as_str().unwrap_or("")));
    let etag = format!("\"{:x}\"", Sha256::digest(&body));
    if request_headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag))
    {
        let mut r = StatusCode::NOT_MODIFIED.into_response();
        if let Ok(v) = HeaderValue::from_str(&etag) {
            r.headers_mut().insert(header::ETAG, v);
        }
        return r;
    }
    // Written as upstream's serializer writes it, newline-ended; the
    // ETag is of the document.
    let mut body = body;
    body.push(b'\n');
    let mut r = (StatusCode::OK, body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(v) = HeaderValue::from_str(&etag) {
        r.headers_mut().insert(header::ETAG, v);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_priority() {
        let mut v = vec!["v1beta1", "v1", "v2", "v1alpha1", "v2beta2", "foo"];
        v.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(v, vec!["v2", "v1", "v2beta2", "v1beta1", "v1alpha1", "foo"]);
    }
}

/// Which aggregated discovery version an Accept header asks for, if any
/// (`application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`).
pub fn aggregated_version(accept: Option<&str>) -> Option<&'static str> {
    for range in accept?.split(',') {
        let params: Vec<(&str, &str)> = range
            .split(';')
            .skip(1)
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        let get = |k: &str| params.iter().find(|(pk, _)| *pk == k).map(|(_, v)| *v);
        if get("g") == Some("apidiscovery.k8s.io") && get("as") == Some("APIGroupDiscoveryList") {
            match get("v") {
                Some("v2") => return Some("v2"),
                Some("v2beta1") => return Some("v2beta1"),
                _ => {}
            }
        }
        // The first acceptable plain type wins over later aggregated ones.
        if range.trim().starts_with("application/json") && get("as").is_none() {
            return None;
        }
    }
    None
}

fn resource_discovery(r: &Resource) -> Value {
    let mut e = json!({
        "resource": r.plural,
        "responseKind": {"group": "", "version": "", "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        e["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        e["categories"] = json!(r.categories);
    }
    if !r.subresources.is_empty() {
        let subs: Vec<Value> = r
            .subresources
            .iter()
            .map(|s| {
                let same = s.group == r.group && s.version == r.version;
                json!({
                    "subresource": s.name,
                    "responseKind": {"group": if same { "" } else { s.group.as_str() }, "version": if same { "" } else { s.version.as_str() }, "kind": s.kind},
                    "verbs": s.verbs,
                })
            })
            .collect();
        e["subresources"] = json!(subs);
    }
    e
}

/// The aggregated discovery document of `/api` (`legacy`) or `/apis`.
pub fn aggregated(catalog: &Catalog, legacy: bool, version: &str) -> Value {
    let all = catalog.all();
    let group_versions: Vec<(String, Vec<String>)> = if legacy {
        vec![(String::new(), vec!["v1".to_string()])]
    } else {
        groups(catalog)
    };
    let items: Vec<Value> = group_versions
        .iter()
        .map(|(g, versions)| {
            let vs: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = all
                        .iter()
                        .filter(|r| r.group == *g && r.version == *v)
                        .map(|r| resource_discovery(r))
                        .collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let mut meta = json!({"creationTimestamp": null});
            if !legacy {
                meta["name"] = json!(g);
            }
            json!({"metadata": meta, "versions": vs})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{version}"), "metadata": {}, "items": items})
}

/// An aggregated discovery document with its content type, ETag and `Vary: Accept`.
pub fn respond_aggregated(doc: &Value, version: &str, request_headers: &HeaderMap) -> Response {
    let mut r = respond(doc, request_headers);
    let ct = format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList");
    if let Ok(v) = HeaderValue::from_str(&ct) {
        if r.status() == StatusCode::OK {
            r.headers_mut().insert(header::CONTENT_TYPE, v);
        }
    }
    r.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    r
}
