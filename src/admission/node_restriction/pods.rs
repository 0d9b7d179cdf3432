//! The kubelet and pods: it creates and deletes only mirror pods bound to
//! itself (owned by its Node, referencing no service account, secrets,
//! configmaps, cluster trust bundles or PVCs), updates the status of its
//! own pods, and evicts only its own pods.

use serde_json::Value;

use super::{op_name, semantic_eq, str_at, unexpected_type, NodeRestriction};
use crate::admission::common::{forbidden, get_core_cached, items};
use crate::admission::{Attributes, Context, Operation};
use crate::api::ApiError;

/// api.MirrorPodAnnotationKey.
pub(super) const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

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
pub(super) fn references_secrets(spec: &Value) -> bool {
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
pub(super) fn references_config_maps(spec: &Value) -> bool {
    containers_reference(spec, "configMapRef", "configMapKeyRef")
        || items(spec, "volumes").any(|v| {
            !v["configMap"].is_null()
                || items(&v["projected"], "sources").any(|s| !s["configMap"].is_null())
        })
}

impl NodeRestriction {
    pub(super) async fn admit_pod(
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

pub(super) fn admit_pod_status(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
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

pub(super) async fn admit_pod_eviction(
    node: &str,
    a: &Attributes<'_>,
    ctx: &Context,
) -> Result<(), ApiError> {
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
