//! NodeRestriction (plugin/pkg/admission/noderestriction): what a kubelet
//! (`system:node:<name>` in `system:nodes`) may write is limited to its
//! own node: its Node object (no taints, ownerReferences or reserved
//! labels of its own choosing), mirror pods bound to it, the status of
//! pods bound to it, its Lease, CSINode and ResourceSlices, PVC status,
//! tokens for its own pods, and CSRs in its own name.
//!
//! upstream runs it as a mutating plugin (Admit) that never mutates: it
//! decides before any validation and before later mutating plugins change
//! the object. kapi does the same: [`MutatingPlugin`] carries the checks.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::certificates::parse_csr;
use super::common::{forbidden, get_core_cached, items};
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::auth::authorizer::Authorizer;
use crate::auth::UserInfo;

pub struct NodeRestriction {
    pub authorizer: Arc<dyn Authorizer>,
}

const NODE_USER_PREFIX: &str = "system:node:";
const NODES_GROUP: &str = "system:nodes";
/// api.MirrorPodAnnotationKey.
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// api.NamespaceNodeLease.
const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// v1.LabelNamespaceNodeRestriction.
const NODE_RESTRICTION_LABELS: &str = "node-restriction.kubernetes.io";
/// The signers whose requests must carry the node's own name.
const KUBELET_SERVING_SIGNER: &str = "kubernetes.io/kubelet-serving";
const KUBELET_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client-kubelet";

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

/// upstream's default NodeIdentifier: `Some(name)` for a node user (the
/// name may be empty), `None` for anyone else.
fn node_identity(user: &UserInfo) -> Option<&str> {
    let name = user.name.strip_prefix(NODE_USER_PREFIX)?;
    user.in_group(NODES_GROUP).then_some(name)
}

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

/// Semantic equality of JSON as Go's apiequality.Semantic sees decoded
/// objects: a missing field, null, and an empty list or map are the same.
pub fn semantic_eq(a: &Value, b: &Value) -> bool {
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::Array(x) => x.is_empty(),
        Value::Object(x) => x.is_empty(),
        _ => false,
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).all(|k| {
            semantic_eq(
                x.get(k).unwrap_or(&Value::Null),
                y.get(k).unwrap_or(&Value::Null),
            )
        }),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantic_eq(p, q))
        }
        _ if empty(a) && empty(b) => true,
        _ => a == b,
    }
}

fn op_name(op: Operation) -> &'static str {
    op.as_str()
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter().fold(v, |v, k| &v[*k]).as_str().unwrap_or("")
}

/// Whether any container (init, regular, ephemeral) has an env or envFrom
/// source of `kind` (`secret` or `configMap`).
fn containers_reference(spec: &Value, env_from: &str, key_ref: &str) -> bool {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|k| items(spec, k))
        .any(|c| {
            items(c, "envFrom").any(|e| !e[env_from].is_null())
                || items(c, "env").any(|e| !e["valueFrom"][key_ref].is_null())
        })
}

/// podutil.VisitPodSecretNames finding any name at all.
fn references_secrets(spec: &Value) -> bool {
    if items(spec, "imagePullSecrets").next().is_some()
        || containers_reference(spec, "secretRef", "secretKeyRef")
    {
        return true;
    }
    items(spec, "volumes").any(|v| {
        let set = |k: &str| !v[k].is_null();
        (set("azureFile") && !str_at(v, &["azureFile", "secretName"]).is_empty())
            || [
                "cephfs",
                "cinder",
                "flexVolume",
                "rbd",
                "scaleIO",
                "iscsi",
                "storageos",
            ]
            .iter()
            .any(|k| set(k) && !v[*k]["secretRef"].is_null())
            || set("secret")
            || (set("csi") && !v["csi"]["nodePublishSecretRef"].is_null())
            || items(&v["projected"], "sources").any(|s| !s["secret"].is_null())
    })
}

/// podutil.VisitPodConfigmapNames finding any name at all.
fn references_config_maps(spec: &Value) -> bool {
    containers_reference(spec, "configMapRef", "configMapKeyRef")
        || items(spec, "volumes").any(|v| {
            !v["configMap"].is_null()
                || items(&v["projected"], "sources").any(|s| !s["configMap"].is_null())
        })
}

impl NodeRestriction {
    async fn admit_node_request(
        &self,
        node: &str,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<(), ApiError> {
        let (group, plural) = (a.resource.group.as_str(), a.resource.plural.as_str());
        match (group, plural) {
            ("", "pods") => match a.subresource {
                "" => self.admit_pod(node, a, ctx).await,
                "status" => admit_pod_status(node, a),
                "eviction" => admit_pod_eviction(node, a, ctx).await,
                other => Err(forbidden(
                    a,
                    format!(
                        "unexpected pod subresource {}, only 'status' and 'eviction' are allowed",
                        crate::api::go_quote(other)
                    ),
                )),
            },
            ("", "nodes") => admit_node(node, a),
            ("", "persistentvolumeclaims") => match a.subresource {
                "status" => admit_pvc_status(node, a),
                _ => Err(forbidden(a, "may only update PVC status")),
            },
            ("", "serviceaccounts") => admit_service_account(node, a, ctx).await,
            ("coordination.k8s.io", "leases") => admit_lease(node, a),
            ("storage.k8s.io", "csinodes") => admit_csi_node(node, a),
            ("resource.k8s.io", "resourceslices") => admit_resource_slice(node, a),
            ("certificates.k8s.io", "certificatesigningrequests") => admit_csr(node, a),
            _ => Ok(()),
        }
    }

    async fn admit_pod(
        &self,
        node: &str,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<(), ApiError> {
        match a.operation {
            Operation::Create => admit_pod_create(node, a, ctx).await,
            Operation::Delete => {
                let existing = match a.old_object {
                    Some(o) => o.clone(),
                    None => get_core_cached(&ctx.registries, "pods", a.namespace, a.name)
                        .await
                        .map_err(|e| forbidden(a, e.message))?
                        .ok_or_else(|| ApiError::not_found("", "pods", a.name))?,
                };
                if str_at(&existing, &["spec", "nodeName"]) != node {
                    return Err(forbidden(
                        a,
                        format!(
                            "node {} can only delete pods with spec.nodeName set to itself",
                            crate::api::go_quote(node)
                        ),
                    ));
                }
                Ok(())
            }
            op => Err(forbidden(
                a,
                format!(
                    "unexpected operation {}, node {} can only create and delete mirror pods",
                    crate::api::go_quote(op_name(op)),
                    crate::api::go_quote(node)
                ),
            )),
        }
    }
}

fn unexpected_type(a: &Attributes<'_>) -> ApiError {
    forbidden(a, "unexpected type <nil>")
}

async fn admit_pod_create(node: &str, a: &Attributes<'_>, ctx: &Context) -> Result<(), ApiError> {
    let pod = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
    if pod["metadata"]["annotations"]
        .get(MIRROR_POD_ANNOTATION)
        .is_none()
    {
        return Err(forbidden(
            a,
            format!(
                "pod does not have {} annotation, node {} can only create mirror pods",
                crate::api::go_quote(MIRROR_POD_ANNOTATION),
                crate::api::go_quote(node)
            ),
        ));
    }
    let spec = &pod["spec"];
    if str_at(spec, &["nodeName"]) != node {
        return Err(forbidden(
            a,
            format!(
                "node {} can only create pods with spec.nodeName set to itself",
                crate::api::go_quote(node)
            ),
        ));
    }
    let owners: Vec<&Value> = items(&pod["metadata"], "ownerReferences").collect();
    match owners[..] {
        [] => {
            return Err(forbidden(
                a,
                format!(
                    "node {} can only create pods with an owner reference set to itself",
                    crate::api::go_quote(node)
                ),
            ))
        }
        [owner] => {
            if str_at(owner, &["apiVersion"]) != "v1"
                || str_at(owner, &["kind"]) != "Node"
                || str_at(owner, &["name"]) != node
            {
                return Err(forbidden(
                    a,
                    format!(
                        "node {} can only create pods with an owner reference set to itself",
                        crate::api::go_quote(node)
                    ),
                ));
            }
            if owner["controller"].as_bool() != Some(true) {
                return Err(forbidden(
                    a,
                    format!("node {} can only create pods with a controller owner reference set to itself", crate::api::go_quote(node)),
                ));
            }
            if owner["blockOwnerDeletion"].as_bool() == Some(true) {
                return Err(forbidden(
                    a,
                    format!(
                        "node {} must not set blockOwnerDeletion on an owner reference",
                        crate::api::go_quote(node)
                    ),
                ));
            }
            let found = get_core_cached(&ctx.registries, "nodes", "", node)
                .await
                .map_err(|e| {
                    forbidden(
                        a,
                        format!("error looking up node {node} to verify uid: {}", e.message),
                    )
                })?
                .ok_or_else(|| ApiError::not_found("", "nodes", node))?;
            let (want, have) = (
                str_at(owner, &["uid"]),
                str_at(&found, &["metadata", "uid"]),
            );
            if want != have {
                return Err(forbidden(
                    a,
                    format!("node {node} UID mismatch: expected {want} got {have}"),
                ));
            }
        }
        _ => {
            return Err(forbidden(
                a,
                format!(
                    "node {} can only create pods with a single owner reference set to itself",
                    crate::api::go_quote(node)
                ),
            ))
        }
    }
    if !str_at(spec, &["serviceAccountName"]).is_empty() {
        return Err(forbidden(
            a,
            format!(
                "node {} can not create pods that reference a service account",
                crate::api::go_quote(node)
            ),
        ));
    }
    if references_secrets(spec) {
        return Err(forbidden(
            a,
            format!(
                "node {} can not create pods that reference secrets",
                crate::api::go_quote(node)
            ),
        ));
    }
    if references_config_maps(spec) {
        return Err(forbidden(
            a,
            format!(
                "node {} can not create pods that reference configmaps",
                crate::api::go_quote(node)
            ),
        ));
    }
    let volumes: Vec<&Value> = items(spec, "volumes").collect();
    if volumes
        .iter()
        .any(|v| items(&v["projected"], "sources").any(|s| !s["clusterTrustBundle"].is_null()))
    {
        return Err(forbidden(
            a,
            format!(
                "node {} can not create pods that reference clustertrustbundles",
                crate::api::go_quote(node)
            ),
        ));
    }
    if volumes
        .iter()
        .any(|v| !v["persistentVolumeClaim"].is_null())
    {
        return Err(forbidden(
            a,
            format!(
                "node {} can not create pods that reference persistentvolumeclaims",
                crate::api::go_quote(node)
            ),
        ));
    }
    Ok(())
}

/// upstream's resourceClaimStatusesEqual: same names and claim names, in order.
fn same_claim_statuses(a: &Value, b: &Value) -> bool {
    let list = |v: &Value| -> Vec<(Value, Value)> {
        v["status"]["resourceClaimStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| (s["name"].clone(), s["resourceClaimName"].clone()))
            .collect()
    };
    list(a) == list(b)
}

fn admit_pod_status(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.operation != Operation::Update {
        return Err(forbidden(
            a,
            format!(
                "unexpected operation {}",
                crate::api::go_quote(op_name(a.operation))
            ),
        ));
    }
    let old = a.old_object.ok_or_else(|| unexpected_type(a))?;
    if str_at(old, &["spec", "nodeName"]) != node {
        return Err(forbidden(
            a,
            format!(
                "node {} can only update pod status for pods with spec.nodeName set to itself",
                crate::api::go_quote(node)
            ),
        ));
    }
    let new = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
    if !semantic_eq(&old["metadata"]["labels"], &new["metadata"]["labels"]) {
        return Err(forbidden(
            a,
            format!(
                "node {} cannot update labels through pod status",
                crate::api::go_quote(node)
            ),
        ));
    }
    if !same_claim_statuses(old, new) {
        return Err(forbidden(
            a,
            format!(
                "node {} cannot update resource claim statues",
                crate::api::go_quote(node)
            ),
        ));
    }
    Ok(())
}

async fn admit_pod_eviction(node: &str, a: &Attributes<'_>, ctx: &Context) -> Result<(), ApiError> {
    if a.operation != Operation::Create {
        return Err(forbidden(
            a,
            format!("unexpected operation {}", op_name(a.operation)),
        ));
    }
    let eviction = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
    let pod_name = if a.name.is_empty() {
        str_at(eviction, &["metadata", "name"])
    } else {
        a.name
    };
    if pod_name.is_empty() {
        return Err(forbidden(a, "could not determine pod from request data"));
    }
    let pod = get_core_cached(&ctx.registries, "pods", a.namespace, pod_name)
        .await
        .map_err(|e| forbidden(a, e.message))?
        .ok_or_else(|| ApiError::not_found("", "pods", pod_name))?;
    if str_at(&pod, &["spec", "nodeName"]) != node {
        return Err(forbidden(
            a,
            format!("node {node} can only evict pods with spec.nodeName set to itself"),
        ));
    }
    Ok(())
}

/// The PVC with what a kubelet may change cleared: the resource version,
/// status capacity, conditions and (RecoverVolumeExpansionFailure, on in
/// v1.34) allocated resources and their statuses, and managed fields.
fn pvc_without_kubelet_fields(pvc: &Value) -> Value {
    let mut v = pvc.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
        m.remove("managedFields");
    }
    if let Some(s) = v.get_mut("status").and_then(Value::as_object_mut) {
        for k in [
            "capacity",
            "conditions",
            "allocatedResourceStatuses",
            "allocatedResources",
        ] {
            s.remove(k);
        }
    }
    v
}

/// Where two JSON values differ, as `path: old -> new` lines (upstream
/// prints go-cmp's diff here, which kapi does not reproduce).
fn json_diff(old: &Value, new: &Value, path: &str, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                json_diff(p, q, &format!("{path}.{k}"), out);
            }
        }
        _ if semantic_eq(old, new) => {}
        _ => out.push(format!("{path}: {old} -> {new}")),
    }
}

fn admit_pvc_status(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.operation != Operation::Update {
        return Err(forbidden(
            a,
            format!(
                "unexpected operation {}",
                crate::api::go_quote(op_name(a.operation))
            ),
        ));
    }
    let old = pvc_without_kubelet_fields(a.old_object.ok_or_else(|| unexpected_type(a))?);
    let new = pvc_without_kubelet_fields(a.object.as_ref().ok_or_else(|| unexpected_type(a))?);
    if !semantic_eq(&old, &new) {
        let mut diff = Vec::new();
        json_diff(&old, &new, "", &mut diff);
        return Err(forbidden(
            a,
            format!(
                "node {} is not allowed to update fields other than status.quantity and status.conditions: {}",
                crate::api::go_quote(node),
                diff.join("; ")
            ),
        ));
    }
    Ok(())
}

fn admit_node(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
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

async fn admit_service_account(
    node: &str,
    a: &Attributes<'_>,
    ctx: &Context,
) -> Result<(), ApiError> {
    if a.operation != Operation::Create || a.subresource != "token" {
        return Ok(());
    }
    let tr = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
    let r = &tr["spec"]["boundObjectRef"];
    if r.is_null()
        || str_at(r, &["apiVersion"]) != "v1"
        || str_at(r, &["kind"]) != "Pod"
        || str_at(r, &["name"]).is_empty()
    {
        return Err(forbidden(a, "node requested token not bound to a pod"));
    }
    let uid = str_at(r, &["uid"]);
    if uid.is_empty() {
        return Err(forbidden(
            a,
            "node requested token with a pod binding without a uid",
        ));
    }
    let pod_name = str_at(r, &["name"]);
    let pod = get_core_cached(&ctx.registries, "pods", a.namespace, pod_name)
        .await
        .map_err(|e| forbidden(a, e.message))?
        .ok_or_else(|| ApiError::not_found("", "pods", pod_name))?;
    if uid != str_at(&pod, &["metadata", "uid"]) {
        return Err(forbidden(
            a,
            format!("the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"),
        ));
    }
    if str_at(&pod, &["spec", "nodeName"]) != node {
        return Err(forbidden(
            a,
            "node requested token bound to a pod scheduled on a different node",
        ));
    }
    Ok(())
}

/// The object's name on create (the request has none yet), the request's otherwise.
fn target_name<'a>(a: &'a Attributes<'_>) -> &'a str {
    match a.operation {
        Operation::Create => a
            .object
            .as_ref()
            .map_or("", |o| str_at(o, &["metadata", "name"])),
        _ => a.name,
    }
}

fn admit_lease(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.namespace != NODE_LEASE_NAMESPACE {
        return Err(forbidden(
            a,
            format!(
                "can only access leases in the {} system namespace",
                crate::api::go_quote(NODE_LEASE_NAMESPACE)
            ),
        ));
    }
    if a.operation == Operation::Create && a.object.is_none() {
        return Err(unexpected_type(a));
    }
    if target_name(a) != node {
        return Err(forbidden(
            a,
            "can only access node lease with the same name as the requesting node",
        ));
    }
    Ok(())
}

fn admit_csi_node(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.operation == Operation::Create && a.object.is_none() {
        return Err(forbidden(a, "unable to access the object name"));
    }
    if target_name(a) != node {
        return Err(forbidden(
            a,
            "can only access CSINode with the same name as the requesting node",
        ));
    }
    Ok(())
}

fn admit_resource_slice(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    // Other writes are the node authorizer's to judge; it cannot see a
    // created object's content, nor each object of a collection delete.
    let (slice, verb) = match a.operation {
        Operation::Create => (a.object.as_ref(), "create"),
        Operation::Delete => (a.old_object, "delete"),
        _ => return Ok(()),
    };
    let slice = slice.ok_or_else(|| unexpected_type(a))?;
    if str_at(slice, &["spec", "nodeName"]) != node {
        return Err(forbidden(
            a,
            format!("can only {verb} ResourceSlice with the same NodeName as the requesting node"),
        ));
    }
    Ok(())
}

/// AllowInsecureKubeletCertificateSigningRequests is off in v1.34: a
/// node's requests to the kubelet signers must name the node itself.
fn admit_csr(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.operation != Operation::Create {
        return Ok(());
    }
    let csr = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
    let signer = str_at(csr, &["spec", "signerName"]);
    if signer != KUBELET_SERVING_SIGNER && signer != KUBELET_CLIENT_SIGNER {
        return Ok(());
    }
    let subject = parse_csr(&csr["spec"]["request"])
        .map_err(|e| forbidden(a, format!("unable to parse csr: {e}")))?;
    if subject.common_name != format!("{NODE_USER_PREFIX}{node}") {
        return Err(forbidden(
            a,
            format!("can only create a node CSR with CN={NODE_USER_PREFIX}{node}"),
        ));
    }
    Ok(())
}

#[async_trait::async_trait]
impl MutatingPlugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !matches!(
            a.operation,
            Operation::Create | Operation::Update | Operation::Delete
        ) {
            return Ok(Vec::new());
        }
        let Some(node) = node_identity(a.user) else {
            return Ok(Vec::new());
        };
        if node.is_empty() {
            return Err(forbidden(
                a,
                format!(
                    "could not determine node from user {}",
                    crate::api::go_quote(&a.user.name)
                ),
            ));
        }
        self.admit_node_request(node, a, ctx).await?;
        Ok(Vec::new())
    }
}

/// Nothing to do here: upstream decides in the mutating phase (see the
/// module comment); registering only this would check nothing.
#[async_trait::async_trait]
impl ValidatingPlugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    async fn validate(&self, _a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn node_users() {
        let user = |name: &str, groups: &[&str]| UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        };
        assert_eq!(
            node_identity(&user("system:node:n1", &[NODES_GROUP])),
            Some("n1")
        );
        assert_eq!(
            node_identity(&user("system:node:", &[NODES_GROUP])),
            Some("")
        );
        assert_eq!(node_identity(&user("system:node:n1", &[])), None);
        assert_eq!(node_identity(&user("n1", &[NODES_GROUP])), None);
    }

    #[test]
    fn labels_a_kubelet_may_not_set() {
        let modified = set(&[
            "kubernetes.io/hostname",
            "topology.kubernetes.io/zone",
            "node.kubernetes.io/exclude-from-external-load-balancers",
            "a.node.kubernetes.io/x",
            "kubelet.kubernetes.io/x",
            "example.com/anything",
            "plain",
            "node-restriction.kubernetes.io/pci",
            "example.com.node-restriction.kubernetes.io/fips",
            "node-role.kubernetes.io/control-plane",
            "kubernetes.io/role",
            "foo.k8s.io/bar",
            "k8s.io/bar",
            "notkubernetes.io/x",
        ]);
        assert_eq!(
            forbidden_labels(&modified),
            vec![
                "example.com.node-restriction.kubernetes.io/fips",
                "foo.k8s.io/bar",
                "k8s.io/bar",
                "kubernetes.io/role",
                "node-restriction.kubernetes.io/pci",
                "node-role.kubernetes.io/control-plane",
            ]
        );
    }

    #[test]
    fn labels_changed() {
        let old = json!({"metadata": {"labels": {"a": "1", "b": "2", "c": "3"}}});
        let new = json!({"metadata": {"labels": {"a": "1", "b": "x", "d": "4"}}});
        assert_eq!(modified_labels(&new, Some(&old)), set(&["b", "c", "d"]));
        assert_eq!(modified_labels(&new, None), set(&["a", "b", "d"]));
        assert!(modified_labels(&json!({}), Some(&json!({"metadata": {"labels": {}}}))).is_empty());
    }

    #[test]
    fn semantic_equality() {
        assert!(semantic_eq(&json!(null), &json!([])));
        assert!(semantic_eq(&json!({"a": []}), &json!({})));
        assert!(!semantic_eq(&json!([{"key": "k"}]), &json!([])));
        assert!(!semantic_eq(&json!({"a": 1}), &json!({"a": 2})));
    }

    #[test]
    fn pod_references() {
        assert!(references_secrets(
            &json!({"imagePullSecrets": [{"name": "s"}]})
        ));
        assert!(references_secrets(
            &json!({"containers": [{"env": [{"name": "e", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]})
        ));
        assert!(references_secrets(
            &json!({"volumes": [{"name": "v", "projected": {"sources": [{"secret": {"name": "s"}}]}}]})
        ));
        assert!(!references_secrets(
            &json!({"volumes": [{"name": "v", "azureFile": {"secretName": ""}}]})
        ));
        assert!(references_config_maps(
            &json!({"initContainers": [{"envFrom": [{"configMapRef": {"name": "c"}}]}]})
        ));
        assert!(!references_config_maps(
            &json!({"containers": [{"name": "c", "image": "i"}]})
        ));
    }

    fn kubelet(node: &str) -> UserInfo {
        UserInfo {
            name: format!("{NODE_USER_PREFIX}{node}"),
            groups: vec![NODES_GROUP.into()],
            ..Default::default()
        }
    }

    /// Runs the plugin as `user`; the refusal's message, if any.
    #[allow(clippy::too_many_arguments)]
    async fn run(
        env: &crate::admission::common::testing::Env,
        user: &UserInfo,
        op: Operation,
        plural: &str,
        ns: &str,
        name: &str,
        object: Option<Value>,
        old: Option<&Value>,
    ) -> Option<String> {
        let resource = env.resource("", "v1", plural);
        let mut a = Attributes {
            operation: op,
            resource: &resource,
            subresource: "",
            namespace: ns,
            name,
            object,
            old_object: old,
            user,
            dry_run: false,
            options: json!({}),
        };
        let plugin = NodeRestriction {
            authorizer: Arc::new(crate::auth::authorizer::AlwaysAllow),
        };
        let ctx = Context {
            registries: env.registries.clone(),
        };
        plugin.admit(&mut a, &ctx).await.err().map(|e| e.message)
    }

    #[tokio::test]
    async fn a_kubelet_and_its_node() {
        let env = crate::admission::common::testing::env().await;
        let n1 = kubelet("n1");
        let node = |name: &str, labels: Value| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}});
        assert_eq!(
            run(
                &env,
                &n1,
                Operation::Create,
                "nodes",
                "",
                "n2",
                Some(node("n2", json!({}))),
                None
            )
            .await,
            Some(
                "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""
                    .into()
            )
        );
        assert_eq!(
            run(&env, &n1, Operation::Create, "nodes", "", "n1", Some(node("n1", json!({"kubernetes.io/role": "x"}))), None).await,
            Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to set the following labels: kubernetes.io/role".into())
        );
        let own = node("n1", json!({"kubernetes.io/hostname": "n1"}));
        assert_eq!(
            run(
                &env,
                &n1,
                Operation::Create,
                "nodes",
                "",
                "n1",
                Some(own.clone()),
                None
            )
            .await,
            None
        );
        let mut relabeled = own.clone();
        relabeled["metadata"]["labels"]["node-restriction.kubernetes.io/x"] = json!("y");
        assert_eq!(
            run(&env, &n1, Operation::Update, "nodes", "", "n1", Some(relabeled), Some(&own)).await,
            Some("nodes \"n1\" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x".into())
        );
        let mut tainted = own.clone();
        tainted["spec"]["taints"] = json!([{"key": "k", "effect": "NoSchedule"}]);
        assert_eq!(
            run(
                &env,
                &n1,
                Operation::Update,
                "nodes",
                "",
                "n1",
                Some(tainted),
                Some(&own)
            )
            .await,
            Some("nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify taints".into())
        );
        // Anyone else, and a node user with no name, are judged otherwise.
        let admin = UserInfo {
            name: "admin".into(),
            ..Default::default()
        };
        assert_eq!(
            run(
                &env,
                &admin,
                Operation::Create,
                "nodes",
                "",
                "n2",
                Some(node("n2", json!({}))),
                None
            )
            .await,
            None
        );
        assert_eq!(
            run(
                &env,
                &kubelet(""),
                Operation::Create,
                "nodes",
                "",
                "n2",
                Some(node("n2", json!({}))),
                None
            )
            .await,
            Some(
                "nodes \"n2\" is forbidden: could not determine node from user \"system:node:\""
                    .into()
            )
        );
    }

    #[tokio::test]
    async fn a_kubelet_and_pods() {
        let env = crate::admission::common::testing::env().await;
        let stored = env
            .create(
                "",
                "v1",
                "nodes",
                json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
            )
            .await;
        let uid = stored["metadata"]["uid"].clone();
        let n1 = kubelet("n1");
        let pod = |annotations: Value, owners: Value, spec: Value| {
            json!({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "p", "namespace": "ns", "annotations": annotations, "ownerReferences": owners},
                   "spec": spec})
        };
        let mirror = json!({MIRROR_POD_ANNOTATION: "h"});
        let owner = json!([{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": uid, "controller": true}]);
        let spec = json!({"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]});
        let create = |p: Value| {
            run(
                &env,
                &n1,
                Operation::Create,
                "pods",
                "ns",
                "p",
                Some(p),
                None,
            )
        };
        assert_eq!(
            create(pod(mirror.clone(), owner.clone(), spec.clone())).await,
            None
        );
        assert_eq!(
            create(pod(json!({}), owner.clone(), spec.clone())).await,
            Some("pods \"p\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods".into())
        );
        let mut elsewhere = spec.clone();
        elsewhere["nodeName"] = json!("n2");
        assert_eq!(
            create(pod(mirror.clone(), owner.clone(), elsewhere)).await,
            Some("pods \"p\" is forbidden: node \"n1\" can only create pods with spec.nodeName set to itself".into())
        );
        let mut wrong_uid = owner.clone();
        wrong_uid[0]["uid"] = json!("other");
        assert_eq!(
            create(pod(mirror.clone(), wrong_uid, spec.clone())).await,
            Some(format!(
                "pods \"p\" is forbidden: node n1 UID mismatch: expected other got {}",
                uid.as_str().unwrap_or("")
            ))
        );
        let mut blocking = owner.clone();
        blocking[0]["blockOwnerDeletion"] = json!(true);
        assert_eq!(
            create(pod(mirror.clone(), blocking, spec.clone())).await,
            Some("pods \"p\" is forbidden: node \"n1\" must not set blockOwnerDeletion on an owner reference".into())
        );
        let mut with_secret = spec.clone();
        with_secret["volumes"] = json!([{"name": "v", "secret": {"secretName": "s"}}]);
        assert_eq!(
            create(pod(mirror.clone(), owner.clone(), with_secret)).await,
            Some(
                "pods \"p\" is forbidden: node \"n1\" can not create pods that reference secrets"
                    .into()
            )
        );
        let theirs = pod(json!({}), json!([]), json!({"nodeName": "n2"}));
        assert_eq!(
            run(&env, &n1, Operation::Delete, "pods", "ns", "p", None, Some(&theirs)).await,
            Some("pods \"p\" is forbidden: node \"n1\" can only delete pods with spec.nodeName set to itself".into())
        );
        assert_eq!(
            run(&env, &n1, Operation::Update, "pods", "ns", "p", Some(theirs.clone()), Some(&theirs)).await,
            Some("pods \"p\" is forbidden: unexpected operation \"UPDATE\", node \"n1\" can only create and delete mirror pods".into())
        );
    }

    #[test]
    fn pvc_status_fields() {
        let old = json!({"metadata": {"resourceVersion": "1"}, "spec": {"volumeName": "v"}, "status": {"phase": "Bound"}});
        let mut new = old.clone();
        new["metadata"]["resourceVersion"] = json!("2");
        new["status"]["capacity"] = json!({"storage": "1Gi"});
        new["status"]["conditions"] = json!([{"type": "Resizing", "status": "True"}]);
        assert!(semantic_eq(
            &pvc_without_kubelet_fields(&old),
            &pvc_without_kubelet_fields(&new)
        ));
        new["status"]["phase"] = json!("Lost");
        let mut diff = Vec::new();
        json_diff(
            &pvc_without_kubelet_fields(&old),
            &pvc_without_kubelet_fields(&new),
            "",
            &mut diff,
        );
        assert_eq!(diff, vec![".status.phase: \"Bound\" -> \"Lost\""]);
    }
}
