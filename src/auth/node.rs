//! `--authorization-mode=Node` (upstream's NodeAuthorizer, as kubeadm
//! configures it with `Node,RBAC`): a kubelet, the user
//! `system:node:<name>` in `system:nodes`, may read the secrets,
//! configmaps, claims and volumes its pods use, request tokens for its
//! pods' service accounts, and manage its own Lease and CSINode; anything
//! else it may do is the `system:node` role's rules. Other users get no
//! opinion.
//!
//! Upstream keeps a graph of pods, nodes and what they reference; kapi
//! answers the same question by reading the pods bound to the node when a
//! kubelet asks, which is cheap at a developer's scale.

use serde_json::Value;

use super::authorizer::{Attributes, Authorizer, Decision};
use super::rbac::PolicyRule;
use super::UserInfo;
use crate::registry::{ListParams, Registries};

const NODES_GROUP: &str = "system:nodes";
const NODE_USER_PREFIX: &str = "system:node:";

pub struct NodeAuthorizer {
    registries: Registries,
    /// The `system:node` ClusterRole's rules (upstream's NodeRules).
    rules: Vec<PolicyRule>,
}

impl std::fmt::Debug for NodeAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeAuthorizer")
            .field("rules", &self.rules.len())
            .finish()
    }
}

/// The node a kubelet's user names, as upstream's NodeIdentifier reads it:
/// `None` for users that are not nodes, `Some("")` for a node user
/// without a name.
fn node_name(user: &UserInfo) -> Option<&str> {
    if !user.groups.iter().any(|g| g == NODES_GROUP) {
        return None;
    }
    user.name.strip_prefix(NODE_USER_PREFIX)
}

/// Which part of a pod refers to an object of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Secret,
    ConfigMap,
    Claim,
    ServiceAccount,
    ResourceClaim,
}

/// Whether `pod` uses the object `name` of `kind`.
fn references(pod: &Value, kind: Kind, name: &str) -> bool {
    let spec = &pod["spec"];
    let is = |v: &Value| v.as_str() == Some(name);
    let containers = || {
        ["containers", "initContainers", "ephemeralContainers"]
            .into_iter()
            .flat_map(|k| spec[k].as_array().into_iter().flatten())
    };
    let volumes = || spec["volumes"].as_array().into_iter().flatten();
    let projected =
        || volumes().flat_map(|v| v["projected"]["sources"].as_array().into_iter().flatten());
    match kind {
        Kind::Secret => {
            spec["imagePullSecrets"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| is(&s["name"]))
                || volumes().any(|v| {
                    is(&v["secret"]["secretName"])
                        || [
                            "azureFile",
                            "cephfs",
                            "cinder",
                            "flexVolume",
                            "rbd",
                            "scaleIO",
                            "storageos",
                            "iscsi",
                            "csi",
                        ]
                        .iter()
                        .any(|k| {
                            is(&v[*k]["secretRef"]["name"])
                                || is(&v[*k]["nodePublishSecretRef"]["name"])
                        })
                        || is(&v["azureFile"]["secretName"])
                })
                || projected().any(|s| is(&s["secret"]["name"]))
                || containers().any(|c| {
                    c["envFrom"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|e| is(&e["secretRef"]["name"]))
                        || c["env"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|e| is(&e["valueFrom"]["secretKeyRef"]["name"]))
                })
        }
        Kind::ConfigMap => {
            volumes().any(|v| is(&v["configMap"]["name"]))
                || projected().any(|s| is(&s["configMap"]["name"]))
                || containers().any(|c| {
                    c["envFrom"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|e| is(&e["configMapRef"]["name"]))
                        || c["env"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|e| is(&e["valueFrom"]["configMapKeyRef"]["name"]))
                })
        }
        Kind::Claim => volumes().any(|v| {
            is(&v["persistentVolumeClaim"]["claimName"])
                // A generic ephemeral volume's claim is `<pod>-<volume>`.
                || (v.get("ephemeral").is_some()
                    && format!(
                        "{}-{}",
                        pod["metadata"]["name"].as_str().unwrap_or(""),
                        v["name"].as_str().unwrap_or("")
                    ) == name)
        }),
        Kind::ServiceAccount => spec["serviceAccountName"].as_str().unwrap_or("default") == name,
        Kind::ResourceClaim => pod["status"]["resourceClaimStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| is(&s["resourceClaimName"])),
    }
}

impl NodeAuthorizer {
    pub fn new(registries: Registries) -> Result<Self, String> {
        let objects = super::bootstrap_policy::objects()?;
        let role = objects
            .iter()
            .find(|(kind, o)| *kind == "clusterroles" && o["metadata"]["name"] == "system:node")
            .map(|(_, o)| o)
            .ok_or("the bootstrap policy has no system:node ClusterRole")?;
        Ok(NodeAuthorizer {
            registries,
            rules: PolicyRule::list_from(role),
        })
    }

    fn by_rules(&self, attrs: &Attributes<'_>) -> Decision {
        if self.rules.iter().any(|r| r.allows(attrs)) {
            Decision::Allow(String::new())
        } else {
            Decision::NoOpinion
        }
    }

    /// The pods bound to `node` in `namespace` (all namespaces when empty).
    async fn pods_on(&self, node: &str, namespace: &str) -> Vec<Value> {
        let Some(pods) = self.registries.get("", "v1", "pods") else {
            return Vec::new();
        };
        let params = ListParams {
            field_selector: Some(format!("spec.nodeName={node}")),
            ..ListParams::default()
        };
        match pods.list(namespace, &params).await {
            Ok(list) => list
                .items
                .iter()
                .filter_map(|b| serde_json::from_slice(b).ok())
                .collect(),
            Err(e) => {
                tracing::debug!(error = %e.message, "node authorizer: listing pods");
                Vec::new()
            }
        }
    }

    /// upstream's "no relationship found" unless a pod on the node uses it.
    async fn related(&self, node: &str, attrs: &Attributes<'_>, kind: Kind) -> Decision {
        let namespace = attrs.namespace;
        let related = match kind {
            // A volume is the node's through a claim its pods use.
            _ if attrs.resource == "persistentvolumes" => {
                let claims: Vec<(String, String)> = self
                    .pods_on(node, "")
                    .await
                    .iter()
                    .flat_map(|p| {
                        let ns = p["metadata"]["namespace"]
                            .as_str()
                            .unwrap_or("")
                            .to_string();
                        p["spec"]["volumes"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(move |v| {
                                v["persistentVolumeClaim"]["claimName"]
                                    .as_str()
                                    .map(|c| (ns.clone(), c.to_string()))
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let mut bound = false;
                if let Some(pvcs) = self.registries.get("", "v1", "persistentvolumeclaims") {
                    for (ns, claim) in claims {
                        if let Ok(b) = pvcs.get_object(&ns, &claim, None).await {
                            let pvc: Value = serde_json::from_slice(&b).unwrap_or_default();
                            if pvc["spec"]["volumeName"].as_str() == Some(attrs.name) {
                                bound = true;
                                break;
                            }
                        }
                    }
                }
                bound
            }
            _ => self
                .pods_on(node, namespace)
                .await
                .iter()
                .any(|p| references(p, kind, attrs.name)),
        };
        if related {
            Decision::Allow(String::new())
        } else {
            Decision::NoOpinion
        }
    }

    async fn decide(&self, attrs: &Attributes<'_>) -> Decision {
        let Some(user) = attrs.user else {
            return Decision::NoOpinion;
        };
        let Some(node) = node_name(user) else {
            return Decision::NoOpinion;
        };
        if node.is_empty() || !attrs.resource_request {
            return if node.is_empty() {
                Decision::NoOpinion
            } else {
                self.by_rules(attrs)
            };
        }
        let read = matches!(attrs.verb, "get" | "list" | "watch");
        let named = !attrs.name.is_empty();
        match (attrs.api_group, attrs.resource) {
            ("", "secrets") | ("", "configmaps") => {
                let kind = if attrs.resource == "secrets" {
                    Kind::Secret
                } else {
                    Kind::ConfigMap
                };
                // One object at a time (a list or watch by metadata.name).
                if !read || !named {
                    return Decision::NoOpinion;
                }
                self.related(node, attrs, kind).await
            }
            ("", "persistentvolumeclaims") if attrs.subresource == "status" => {
                if !matches!(attrs.verb, "update" | "patch") || !named {
                    return Decision::NoOpinion;
                }
                self.related(node, attrs, Kind::Claim).await
            }
            ("", "persistentvolumeclaims") | ("", "persistentvolumes") => {
                if attrs.verb != "get" || !named {
                    return Decision::NoOpinion;
                }
                self.related(node, attrs, Kind::Claim).await
            }
            ("resource.k8s.io", "resourceclaims") => {
                if attrs.verb != "get" || !named {
                    return Decision::NoOpinion;
                }
                self.related(node, attrs, Kind::ResourceClaim).await
            }
            ("", "serviceaccounts") => {
                if attrs.verb != "create" || attrs.subresource != "token" || !named {
                    return Decision::NoOpinion;
                }
                self.related(node, attrs, Kind::ServiceAccount).await
            }
            // upstream allows a node only the slices its nodeName field
            // selector names; without the selector here, system:node's
            // deletecollection rule must not reach every node's slices.
            ("resource.k8s.io", "resourceslices") => Decision::NoOpinion,
            ("coordination.k8s.io", "leases") => {
                let own = attrs.namespace == "kube-node-lease"
                    && (attrs.name == node || (attrs.verb == "create" && !named));
                if own && matches!(attrs.verb, "get" | "create" | "update" | "patch" | "delete") {
                    Decision::Allow(String::new())
                } else {
                    Decision::NoOpinion
                }
            }
            ("storage.k8s.io", "csinodes") => {
                let own = attrs.name == node || (attrs.verb == "create" && !named);
                if own && matches!(attrs.verb, "get" | "create" | "update" | "patch" | "delete") {
                    Decision::Allow(String::new())
                } else {
                    Decision::NoOpinion
                }
            }
            _ => self.by_rules(attrs),
        }
    }
}

impl Authorizer for NodeAuthorizer {
    /// Without the pods at hand, only the static rules decide.
    fn authorize(&self, attrs: &Attributes<'_>) -> Decision {
        match attrs.user.and_then(node_name) {
            Some(node) if !node.is_empty() => self.by_rules(attrs),
            _ => Decision::NoOpinion,
        }
    }

    /// Only users that are not nodes are decided at once (no opinion).
    fn authorize_now(&self, attrs: &Attributes<'_>) -> Option<Decision> {
        match attrs.user.and_then(node_name) {
            Some(node) if !node.is_empty() => None,
            _ => Some(Decision::NoOpinion),
        }
    }

    fn authorize_async<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
    ) -> futures::future::BoxFuture<'a, Decision> {
        Box::pin(self.decide(attrs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nodes_are_recognised_by_group_and_name() {
        let u = |name: &str, groups: &[&str]| UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        };
        assert_eq!(
            node_name(&u("system:node:n1", &["system:nodes"])),
            Some("n1")
        );
        assert_eq!(node_name(&u("system:node:n1", &[])), None);
        assert_eq!(node_name(&u("alice", &["system:nodes"])), None);
    }

    #[test]
    fn pods_reference_what_they_mount_and_read() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {
            "serviceAccountName": "sa",
            "imagePullSecrets": [{"name": "pull"}],
            "volumes": [
                {"name": "v", "secret": {"secretName": "vol"}},
                {"name": "c", "configMap": {"name": "cm"}},
                {"name": "pj", "projected": {"sources": [{"secret": {"name": "proj"}}]}},
                {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "e", "ephemeral": {"volumeClaimTemplate": {}}}
            ],
            "containers": [{"name": "c", "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "env", "key": "k"}}}],
                "envFrom": [{"configMapRef": {"name": "cm2"}}]}]
        }});
        for s in ["pull", "vol", "proj", "env"] {
            assert!(references(&pod, Kind::Secret, s), "{s}");
        }
        assert!(!references(&pod, Kind::Secret, "other"));
        assert!(
            references(&pod, Kind::ConfigMap, "cm") && references(&pod, Kind::ConfigMap, "cm2")
        );
        assert!(references(&pod, Kind::Claim, "data") && references(&pod, Kind::Claim, "p-e"));
        assert!(references(&pod, Kind::ServiceAccount, "sa"));
        assert!(!references(&pod, Kind::ServiceAccount, "default"));
    }
}
