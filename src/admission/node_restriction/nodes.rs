//! The kubelet and its own Node object: no other node, no configSource,
//! no taints or ownerReferences of its choosing, and only the labels
//! kubeletapis lets a kubelet set.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{semantic_eq, unexpected_type};
use crate::admission::common::forbidden;
use crate::admission::{Attributes, Operation};
use crate::api::ApiError;

/// v1.LabelNamespaceNodeRestriction.
const NODE_RESTRICTION_LABELS: &str = "node-restriction.kubernetes.io";

/// kubeletapis' kubeletLabels: the kubernetes.io labels a kubelet may set.
const KUBELET_LABELS: &[&str] = &[
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];
/// kubeletapis' kubeletLabelNamespaces: label prefixes (and their
/// subdomains) a kubelet may set.
const KUBELET_LABEL_NAMESPACES: &[&str] = &["kubelet.kubernetes.io", "node.kubernetes.io"];

fn label_namespace(key: &str) -> &str {
    key.split_once('/').map_or("", |(ns, _)| ns)
}

fn in_domain(namespace: &str, domain: &str) -> bool {
    namespace == domain
        || namespace
            .strip_suffix(domain)
            .is_some_and(|rest| rest.ends_with('.'))
}

fn is_kubernetes_label(key: &str) -> bool {
    let ns = label_namespace(key);
    in_domain(ns, "kubernetes.io") || in_domain(ns, "k8s.io")
}

/// kubeletapis.IsKubeletLabel.
fn is_kubelet_label(key: &str) -> bool {
    KUBELET_LABELS.contains(&key)
        || KUBELET_LABEL_NAMESPACES
            .iter()
            .any(|d| in_domain(label_namespace(key), d))
}

/// upstream's getForbiddenLabels: of the labels changed, those a kubelet
/// may not set, sorted (a Go sets.String's List).
pub fn forbidden_labels(modified: &BTreeSet<String>) -> Vec<String> {
    modified
        .iter()
        .filter(|k| {
            in_domain(label_namespace(k), NODE_RESTRICTION_LABELS)
                || (is_kubernetes_label(k) && !is_kubelet_label(k))
        })
        .cloned()
        .collect()
}

/// upstream's getModifiedLabels: keys added, removed or changed.
pub fn modified_labels(new: &Value, old: Option<&Value>) -> BTreeSet<String> {
    let labels = |o: Option<&Value>| -> Vec<(String, Value)> {
        o.and_then(|o| o["metadata"]["labels"].as_object())
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let (a, b) = (labels(Some(new)), labels(old));
    let get = |list: &[(String, Value)], k: &str| {
        list.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone())
    };
    a.iter()
        .chain(b.iter())
        .filter(|(k, _)| get(&a, k) != get(&b, k))
        .map(|(k, _)| k.clone())
        .collect()
}

pub(super) fn admit_node(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.name != node {
        return Err(forbidden(
            a,
            format!(
                "node {} is not allowed to modify node {}",
                crate::api::go_quote(node),
                crate::api::go_quote(a.name)
            ),
        ));
    }
    match a.operation {
        Operation::Create => {
            let obj = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
            if !obj["spec"]["configSource"].is_null() {
                return Err(forbidden(
                    a,
                    format!(
                        "node {} is not allowed to create pods with a non-nil configSource",
                        crate::api::go_quote(node)
                    ),
                ));
            }
            let bad = forbidden_labels(&modified_labels(obj, None));
            if !bad.is_empty() {
                return Err(forbidden(
                    a,
                    format!(
                        "node {} is not allowed to set the following labels: {}",
                        crate::api::go_quote(node),
                        bad.join(", ")
                    ),
                ));
            }
        }
        Operation::Update => {
            let obj = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
            let old = a.old_object.ok_or_else(|| unexpected_type(a))?;
            let source = &obj["spec"]["configSource"];
            if !source.is_null() && !semantic_eq(source, &old["spec"]["configSource"]) {
                return Err(forbidden(
                    a,
                    format!("node {} is not allowed to update configSource to a new non-nil configSource", crate::api::go_quote(node)),
                ));
            }
            if !semantic_eq(&obj["spec"]["taints"], &old["spec"]["taints"]) {
                return Err(forbidden(
                    a,
                    format!(
                        "node {} is not allowed to modify taints",
                        crate::api::go_quote(node)
                    ),
                ));
            }
            if !semantic_eq(
                &obj["metadata"]["ownerReferences"],
                &old["metadata"]["ownerReferences"],
            ) {
                return Err(forbidden(
                    a,
                    format!(
                        "node {} is not allowed to modify ownerReferences",
                        crate::api::go_quote(node)
                    ),
                ));
            }
            let bad = forbidden_labels(&modified_labels(obj, Some(old)));
            if !bad.is_empty() {
                return Err(forbidden(
                    a,
                    format!("is not allowed to modify labels: {}", bad.join(", ")),
                ));
            }
        }
        _ => {}
    }
    Ok(())
}
