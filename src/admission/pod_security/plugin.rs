//! The PodSecurity admission plugin: where the policy meets requests. It
//! reads the namespace's labels, evaluates pods and the pod templates of
//! workload resources, refuses under `enforce` and warns under `warn`, and on
//! a namespace label change warns about the pods already there.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::checks::{evaluate, forbidden_detail, forbidden_reason, Violation};
use super::policy::{policy_to_evaluate, Level, LevelVersion, Policy};
use crate::admission::common::{self, forbidden_for};
use crate::admission::{Attributes, Context, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::registry::validation::FieldError;

/// How many existing pods a namespace update checks (upstream's default).
const NAMESPACE_MAX_PODS_TO_CHECK: usize = 3000;

pub struct PodSecurity;

/// Pod subresources that never change the pod's spec.
const IGNORED_POD_SUBRESOURCES: [&str; 8] = [
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// Where a workload resource keeps its pod template (upstream's `DefaultPodSpecExtractor`).
fn template_path(group: &str, plural: &str) -> Option<&'static [&'static str]> {
    Some(match (group, plural) {
        ("", "podtemplates") => &["template"],
        ("", "replicationcontrollers") => &["spec", "template"],
        ("apps", "replicasets" | "deployments" | "statefulsets" | "daemonsets") => {
            &["spec", "template"]
        }
        ("batch", "jobs") => &["spec", "template"],
        ("batch", "cronjobs") => &["spec", "jobTemplate", "spec", "template"],
        _ => return None,
    })
}

/// upstream's `isSignificantPodUpdate`: images and containers, the only
/// mutable parts of a pod the policy looks at.
fn significant_pod_update(new: &Value, old: &Value) -> bool {
    let (ns, os) = (&new["spec"], &old["spec"]);
    for key in ["containers", "initContainers"] {
        let (a, b): (Vec<&Value>, Vec<&Value>) = (
            common::items(ns, key).collect(),
            common::items(os, key).collect(),
        );
        if a.len() != b.len() {
            return true;
        }
        if a.iter()
            .zip(b.iter())
            .any(|(x, y)| x["image"] != y["image"])
        {
            return true;
        }
    }
    for c in common::items(ns, "ephemeralContainers") {
        match common::items(os, "ephemeralContainers").find(|o| o["name"] == c["name"]) {
            None => return true,
            Some(o) if o["image"] != c["image"] => return true,
            _ => {}
        }
    }
    false
}

async fn namespace_labels(ctx: &Context, namespace: &str) -> Result<Map<String, Value>, ApiError> {
    match common::get_core_cached(&ctx.registries, "namespaces", "", namespace).await {
        Ok(Some(ns)) => Ok(ns["metadata"]["labels"]
            .as_object()
            .cloned()
            .unwrap_or_default()),
        Ok(None) => Err(ApiError::internal(format!(
            "failed to lookup namespace {namespace:?}"
        ))),
        Err(e) => Err(ApiError::internal(format!(
            "failed to lookup namespace {namespace:?}: {}",
            e.message
        ))),
    }
}

impl PodSecurity {
    /// upstream's `EvaluatePod`: refuses under `enforce` (pods only), else
    /// warns under `warn`.
    fn evaluate_pod(
        &self,
        a: &Attributes<'_>,
        policy: &Policy,
        meta: &Value,
        spec: &Value,
        enforce: bool,
    ) -> Result<Vec<String>, ApiError> {
        let mut cache: HashMap<LevelVersion, Vec<Violation>> = HashMap::new();
        if enforce {
            let vs = evaluate(policy.enforce, meta, spec);
            if !vs.is_empty() {
                return Err(forbidden_for(
                    &a.resource.group,
                    &a.resource.plural,
                    a.name,
                    format!(
                        "violates PodSecurity {:?}: {}",
                        policy.enforce.to_string(),
                        forbidden_detail(&vs)
                    ),
                ));
            }
            cache.insert(policy.enforce, vs);
        }
        let warn = match cache.remove(&policy.warn) {
            Some(v) => v,
            None => evaluate(policy.warn, meta, spec),
        };
        if warn.is_empty() {
            return Ok(Vec::new());
        }
        Ok(vec![format!(
            "would violate PodSecurity {:?}: {}",
            policy.warn.to_string(),
            forbidden_detail(&warn)
        )])
    }

    async fn validate_pod(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError> {
        if IGNORED_POD_SUBRESOURCES.contains(&a.subresource) {
            return Ok(Vec::new());
        }
        let labels = namespace_labels(ctx, a.namespace).await?;
        let (policy, errs) = policy_to_evaluate(&labels);
        if errs.is_empty() && policy.fully_privileged() {
            return Ok(Vec::new());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        if a.operation == Operation::Update {
            if let Some(old) = a.old_object {
                if !significant_pod_update(pod, old) {
                    return Ok(Vec::new());
                }
            }
        }
        self.evaluate_pod(a, &policy, &pod["metadata"], &pod["spec"], true)
    }

    async fn validate_controller(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
        path: &[&str],
    ) -> Result<Vec<String>, ApiError> {
        if !a.subresource.is_empty() {
            return Ok(Vec::new());
        }
        let labels = namespace_labels(ctx, a.namespace).await?;
        let (policy, errs) = policy_to_evaluate(&labels);
        if errs.is_empty()
            && policy.warn.level == Level::Privileged
            && policy.audit.level == Level::Privileged
        {
            return Ok(Vec::new());
        }
        let Some(obj) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let mut template = obj;
        for p in path {
            template = &template[*p];
        }
        if template.is_null() {
            return Ok(Vec::new());
        }
        self.evaluate_pod(a, &policy, &template["metadata"], &template["spec"], false)
    }

    async fn validate_namespace(
        &self,
        a: &Attributes<'_>,
        ctx: &Context,
    ) -> Result<Vec<String>, ApiError> {
        if !a.subresource.is_empty() {
            return Ok(Vec::new());
        }
        let Some(ns) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let labels = ns["metadata"]["labels"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let (new_policy, new_errs) = policy_to_evaluate(&labels);
        let invalid = |errs: &[FieldError]| {
            ApiError::invalid(
                "",
                "Namespace",
                a.name,
                errs.iter().map(FieldError::to_cause).collect(),
            )
        };
        match a.operation {
            Operation::Create => {
                if !new_errs.is_empty() {
                    return Err(invalid(&new_errs));
                }
                Ok(Vec::new())
            }
            Operation::Update => {
                let old_labels = a
                    .old_object
                    .and_then(|o| o["metadata"]["labels"].as_object().cloned())
                    .unwrap_or_default();
                let (old_policy, old_errs) = policy_to_evaluate(&old_labels);
                if !new_errs.is_empty() && (old_errs.is_empty() || new_errs != old_errs) {
                    return Err(invalid(&new_errs));
                }
                let (ne, oe) = (new_policy.enforce, old_policy.enforce);
                if ne == oe
                    || ne.level == Level::Privileged
                    || (ne.version == oe.version && ne.level <= oe.level)
                {
                    return Ok(Vec::new());
                }
                self.evaluate_pods_in_namespace(ctx, a.name, ne).await
            }
            _ => Ok(Vec::new()),
        }
    }

    /// upstream's `EvaluatePodsInNamespace`: warnings naming the existing
    /// pods a tighter enforce level would refuse.
    async fn evaluate_pods_in_namespace(
        &self,
        ctx: &Context,
        namespace: &str,
        enforce: LevelVersion,
    ) -> Result<Vec<String>, ApiError> {
        let pods = match common::list_core(&ctx.registries, "pods", namespace).await {
            Ok(p) => p,
            Err(_) => {
                return Ok(vec![
                    "failed to list pods while checking new PodSecurity enforce level".into(),
                ])
            }
        };
        // One pod per controller first, then the rest (upstream's prioritizePods).
        let mut seen_controllers = BTreeSet::new();
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for p in &pods {
            let controller = p["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| r["controller"].as_bool() == Some(true))
                .and_then(|r| r["uid"].as_str());
            match controller {
                Some(uid) if !seen_controllers.insert(uid.to_string()) => rest.push(p),
                _ => first.push(p),
            }
        }
        first.extend(rest);
        let total = first.len();
        first.truncate(NAMESPACE_MAX_PODS_TO_CHECK);
        let checked = first.len();
        let mut order: Vec<String> = Vec::new();
        let mut counts: HashMap<String, (String, usize)> = HashMap::new();
        for p in first {
            let vs = evaluate(enforce, &p["metadata"], &p["spec"]);
            if vs.is_empty() {
                continue;
            }
            let warning = forbidden_reason(&vs);
            let name = p["metadata"]["name"].as_str().unwrap_or("").to_string();
            match counts.get_mut(&warning) {
                Some((first_name, n)) => {
                    if name < *first_name {
                        *first_name = name;
                    }
                    *n += 1;
                }
                None => {
                    order.push(warning.clone());
                    counts.insert(warning, (name, 1));
                }
            }
        }
        let mut warnings = Vec::new();
        if checked < total {
            warnings.push(format!(
                "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
            ));
        }
        if !order.is_empty() {
            warnings.push(format!(
                "existing pods in namespace {namespace:?} violate the new PodSecurity enforce level {:?}",
                enforce.to_string()
            ));
        }
        let mut pod_warnings: Vec<String> = order
            .into_iter()
            .map(|w| {
                let (name, n) = counts.get(&w).cloned().unwrap_or_default();
                match n {
                    0 => w,
                    1 => format!("{name}: {w}"),
                    2 => format!("{name} (and 1 other pod): {w}"),
                    n => format!("{name} (and {} other pods): {w}", n - 1),
                }
            })
            .collect();
        pod_warnings.sort();
        warnings.extend(pod_warnings);
        Ok(warnings)
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !matches!(a.operation, Operation::Create | Operation::Update) {
            return Ok(Vec::new());
        }
        let (group, plural) = (a.resource.group.as_str(), a.resource.plural.as_str());
        match (group, plural) {
            ("", "namespaces") => self.validate_namespace(a, ctx).await,
            ("", "pods") => self.validate_pod(a, ctx).await,
            _ => match template_path(group, plural) {
                Some(path) => self.validate_controller(a, ctx, path).await,
                None => Ok(Vec::new()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::common::testing;

    #[tokio::test]
    async fn enforce_refuses_and_warn_warns() {
        let env = testing::env().await;
        env.namespace(
            "r",
            json!({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}),
        )
        .await;
        let ctx = Context {
            registries: env.registries.clone(),
        };
        let pods = env.resource("", "v1", "pods");
        let pod = json!({"metadata": {"name": "p", "namespace": "r"},
            "spec": {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]}});
        let a = testing::create_attrs(&pods, "r", "p", pod);
        let e = PodSecurity
            .validate(&a, &ctx)
            .await
            .err()
            .map(|e| (e.code, e.message));
        assert_eq!(
            e,
            Some((
                403,
                "pods \"p\" is forbidden: violates PodSecurity \"baseline:latest\": privileged (container \"c\" must not set securityContext.privileged=true)".to_string()
            ))
        );
        let plain = json!({"metadata": {"name": "q", "namespace": "r"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let a = testing::create_attrs(&pods, "r", "q", plain.clone());
        let w = PodSecurity.validate(&a, &ctx).await.unwrap_or_default();
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"), "{w:?}");

        // Deployments are only warned about.
        let deploy = env.resource("apps", "v1", "deployments");
        let d = json!({"metadata": {"name": "d", "namespace": "r"}, "spec": {"template": {"spec":
            {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]}}}});
        let a = testing::create_attrs(&deploy, "r", "d", d);
        let w = PodSecurity.validate(&a, &ctx).await.unwrap_or_default();
        assert!(
            w.len() == 1
                && w[0].starts_with("would violate PodSecurity \"restricted:latest\": privileged"),
            "{w:?}"
        );

        // Bad labels on a namespace are refused.
        let nss = env.resource("", "v1", "namespaces");
        let a = testing::create_attrs(
            &nss,
            "",
            "bad",
            json!({"metadata": {"name": "bad",
            "labels": {"pod-security.kubernetes.io/enforce": "strict"}}}),
        );
        let e = PodSecurity
            .validate(&a, &ctx)
            .await
            .err()
            .map(|e| (e.code, e.message));
        assert_eq!(
            e,
            Some((422, "Namespace \"bad\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted".to_string()))
        );
    }
}
