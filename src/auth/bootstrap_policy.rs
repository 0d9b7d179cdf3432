//! The default RBAC objects (`templates/bootstrap-policy.yaml`, from
//! upstream v1.34's bootstrappolicy package) and the post-start hook
//! `rbac/bootstrap-roles` that reconciles them as upstream's
//! `pkg/registry/rbac/reconciliation` does: missing objects are created;
//! existing ones are left alone when annotated
//! `rbac.authorization.kubernetes.io/autoupdate: "false"`, and otherwise get
//! the labels, annotations, rules, aggregation selectors and subjects they
//! lack (nothing is taken away).

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};

use super::rbac::{self, covers, PolicyRule, AUTO_UPDATE_ANNOTATION, GROUP};
use crate::registry::{Registries, WriteOptions};

const POLICY_YAML: &str = include_str!("../../templates/bootstrap-policy.yaml");
pub const BOOTSTRAPPING_LABEL: &str = "kubernetes.io/bootstrapping";
/// upstream's saRolePrefix: a controller's role and binding are named
/// `system:controller:<its ServiceAccount in kube-system>`.
const CONTROLLER_ROLE_PREFIX: &str = "system:controller:";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PolicyFile {
    cluster_roles: Vec<Value>,
    #[serde(default)]
    controller_roles: Vec<ControllerRole>,
    cluster_role_bindings: Vec<BindingSpec>,
    roles: Vec<Value>,
    role_bindings: Vec<BindingSpec>,
}

/// A controller's ClusterRole; its binding follows from the name, as in
/// upstream's addControllerRole.
#[derive(Deserialize)]
struct ControllerRole {
    name: String,
    rules: Vec<Value>,
}

/// A binding as the policy file abbreviates it.
#[derive(Deserialize)]
struct BindingSpec {
    name: String,
    #[serde(default)]
    namespace: String,
    role: String,
    #[serde(default)]
    subjects: Vec<Value>,
}

/// The bootstrap objects in upstream's creation order: ClusterRoles (the
/// controllers' last), ClusterRoleBindings (likewise), Roles, RoleBindings;
/// each with its plural. Parsed
/// once per process: every start (and every `kapi::testing` server) reads it.
pub fn objects() -> Result<Vec<(&'static str, Value)>, String> {
    static PARSED: std::sync::OnceLock<Result<Vec<(&'static str, Value)>, String>> =
        std::sync::OnceLock::new();
    PARSED.get_or_init(parse_objects).clone()
}

fn parse_objects() -> Result<Vec<(&'static str, Value)>, String> {
    let file: PolicyFile = serde_saphyr::from_str(POLICY_YAML)
        .map_err(|e| format!("templates/bootstrap-policy.yaml: {e}"))?;
    let mut out = Vec::new();
    for mut cr in file.cluster_roles {
        finish(&mut cr, "ClusterRole");
        out.push(("clusterroles", cr));
    }
    let mut controller_bindings = Vec::with_capacity(file.controller_roles.len());
    for c in file.controller_roles {
        let name = format!("{CONTROLLER_ROLE_PREFIX}{}", c.name);
        let mut cr = json!({"metadata": {"name": name}, "rules": c.rules});
        finish(&mut cr, "ClusterRole");
        out.push(("clusterroles", cr));
        controller_bindings.push(BindingSpec {
            name: name.clone(),
            namespace: String::new(),
            role: name,
            subjects: vec![
                json!({"kind": "ServiceAccount", "name": c.name, "namespace": "kube-system"}),
            ],
        });
    }
    for b in file
        .cluster_role_bindings
        .iter()
        .chain(&controller_bindings)
    {
        out.push((
            "clusterrolebindings",
            binding(b, "ClusterRoleBinding", "ClusterRole"),
        ));
    }
    for mut r in file.roles {
        finish(&mut r, "Role");
        out.push(("roles", r));
    }
    for b in &file.role_bindings {
        out.push(("rolebindings", binding(b, "RoleBinding", "Role")));
    }
    Ok(out)
}

/// upstream's addDefaultMetadata, plus kind and apiVersion.
fn finish(obj: &mut Value, kind: &str) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    m.insert("apiVersion".into(), json!(format!("{GROUP}/v1")));
    m.insert("kind".into(), json!(kind));
    let meta = m.entry("metadata").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        for (field, key, value) in [
            ("labels", BOOTSTRAPPING_LABEL, "rbac-defaults"),
            ("annotations", AUTO_UPDATE_ANNOTATION, "true"),
        ] {
            let map = meta.entry(field).or_insert_with(|| json!({}));
            if let Some(map) = map.as_object_mut() {
                map.insert(key.into(), json!(value));
            }
        }
    }
}

fn binding(b: &BindingSpec, kind: &str, namespaced_role_kind: &str) -> Value {
    let role_kind = if b.namespace.is_empty() {
        "ClusterRole"
    } else {
        namespaced_role_kind
    };
    let subjects: Vec<Value> = b
        .subjects
        .iter()
        .map(|sub| {
            let mut sub = sub.clone();
            let k = sub["kind"].as_str().unwrap_or("");
            if k == "User" || k == "Group" {
                sub["apiGroup"] = json!(GROUP);
            }
            sub
        })
        .collect();
    let mut metadata = json!({"name": b.name});
    if !b.namespace.is_empty() {
        metadata["namespace"] = json!(b.namespace);
    }
    let mut obj = json!({
        "metadata": metadata,
        "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": b.role},
        "subjects": subjects,
    });
    finish(&mut obj, kind);
    obj
}

fn protected(existing: &Value) -> bool {
    existing["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION] == "false"
}

/// Adds the entries of `expected[field]` that `existing[field]` lacks
/// (existing values win, as upstream's merge).
fn merge_meta_map(existing: &mut Value, expected: &Value, field: &str) -> bool {
    let Some(want) = expected["metadata"][field].as_object() else {
        return false;
    };
    let Some(meta) = existing.get_mut("metadata").and_then(Value::as_object_mut) else {
        return false;
    };
    let have = meta.entry(field).or_insert_with(|| json!({}));
    if !have.is_object() {
        *have = json!({});
    }
    let Some(have) = have.as_object_mut() else {
        return false;
    };
    let mut changed = false;
    for (k, v) in want {
        if !have.contains_key(k) {
            have.insert(k.clone(), v.clone());
            changed = true;
        }
    }
    changed
}

/// upstream's computeReconciledRole (union mode): the object to write, or
/// `None` when `existing` needs nothing.
pub fn reconcile_role(existing: &Value, expected: &Value) -> Option<Value> {
    if protected(existing) {
        return None;
    }
    let mut out = existing.clone();
    let mut changed = merge_meta_map(&mut out, expected, "labels");
    changed |= merge_meta_map(&mut out, expected, "annotations");
    let want_agg = &expected["aggregationRule"];
    let have_agg = &existing["aggregationRule"];
    if want_agg.is_null() && !have_agg.is_null() {
        if let Some(m) = out.as_object_mut() {
            m.remove("aggregationRule");
        }
        changed = true;
    } else if !want_agg.is_null() {
        let have: Vec<Value> = have_agg["clusterRoleSelectors"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut selectors = have.clone();
        for sel in want_agg["clusterRoleSelectors"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if !selectors.contains(sel) {
                selectors.push(sel.clone());
            }
        }
        if selectors != have || have_agg.is_null() {
            out["aggregationRule"] = json!({"clusterRoleSelectors": selectors});
            changed = true;
        }
    }
    // Aggregated roles' rules belong to the aggregation controller.
    if want_agg.is_null() || have_agg.is_null() {
        let (_, missing) = covers(
            &PolicyRule::list_from(existing),
            &PolicyRule::list_from(expected),
        );
        if !missing.is_empty() {
            let mut rules = existing["rules"].as_array().cloned().unwrap_or_default();
            rules.extend(missing.iter().map(PolicyRule::to_json));
            out["rules"] = Value::Array(rules);
            changed = true;
        }
    }
    changed.then_some(out)
}

/// What a binding needs.
#[derive(Debug, PartialEq)]
pub enum BindingChange {
    None,
    Update(Value),
    /// The roleRef differs and cannot be changed: delete and create.
    Recreate(Value),
}

fn subject_key(v: &Value) -> (String, String, String, String) {
    let f = |k: &str| v[k].as_str().unwrap_or("").to_string();
    (f("kind"), f("apiGroup"), f("name"), f("namespace"))
}

/// upstream's computeReconciledRoleBinding (union mode).
pub fn reconcile_binding(existing: &Value, expected: &Value) -> BindingChange {
    if protected(existing) {
        return BindingChange::None;
    }
    let mut out = existing.clone();
    let mut changed = merge_meta_map(&mut out, expected, "labels");
    changed |= merge_meta_map(&mut out, expected, "annotations");
    let mut subjects = existing["subjects"].as_array().cloned().unwrap_or_default();
    let have: Vec<_> = subjects.iter().map(subject_key).collect();
    for sub in expected["subjects"].as_array().into_iter().flatten() {
        if !have.contains(&subject_key(sub)) {
            subjects.push(sub.clone());
            changed = true;
        }
    }
    if changed {
        out["subjects"] = Value::Array(subjects);
    }
    if existing["roleRef"] != expected["roleRef"] {
        let mut fresh = expected.clone();
        fresh["metadata"] = json!({
            "name": expected["metadata"]["name"],
            "labels": out["metadata"]["labels"],
            "annotations": out["metadata"]["annotations"],
        });
        if let Some(ns) = expected["metadata"]["namespace"].as_str() {
            fresh["metadata"]["namespace"] = json!(ns);
        }
        fresh["subjects"] = out["subjects"].clone();
        return BindingChange::Recreate(fresh);
    }
    if changed {
        BindingChange::Update(out)
    } else {
        BindingChange::None
    }
}

fn write_options() -> WriteOptions {
    WriteOptions {
        field_manager: Some("kube-apiserver".into()),
        user: rbac::loopback_user(),
        ..Default::default()
    }
}

/// Whether it wrote anything.
async fn reconcile_one(
    registries: &Registries,
    plural: &str,
    expected: &Value,
) -> Result<bool, String> {
    let reg = registries
        .get(GROUP, "v1", plural)
        .ok_or_else(|| format!("{plural}.{GROUP} are not served"))?;
    let ns = expected["metadata"]["namespace"].as_str().unwrap_or("");
    let name = expected["metadata"]["name"].as_str().unwrap_or("");
    let opts = write_options();
    let existing = match reg.get_object(ns, name, None).await {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes)
            .map_err(|e| format!("stored {plural} {name}: {e}"))?,
        Err(e) if e.code == 404 => {
            return match reg.create(ns, expected.clone(), &opts).await {
                Ok(_) => Ok(true),
                Err(e) => Err(format!("creating {plural} {name}: {e}")),
            };
        }
        Err(e) => return Err(format!("reading {plural} {name}: {e}")),
    };
    let change = if plural.ends_with("bindings") {
        reconcile_binding(&existing, expected)
    } else {
        match reconcile_role(&existing, expected) {
            Some(v) => BindingChange::Update(v),
            None => BindingChange::None,
        }
    };
    match change {
        BindingChange::None => Ok(false),
        BindingChange::Update(v) => reg
            .update(ns, name, v, None, &opts)
            .await
            .map(|_| {
                tracing::info!(%plural, %name, "reconciled bootstrap RBAC object");
                true
            })
            .map_err(|e| format!("updating {plural} {name}: {e}")),
        BindingChange::Recreate(v) => {
            let del = crate::registry::DeleteOptions {
                user: rbac::loopback_user(),
                ..Default::default()
            };
            match reg.delete(ns, name, &del).await {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(format!("deleting {plural} {name}: {e}")),
            }
            reg.create(ns, v, &opts)
                .await
                .map(|_| {
                    tracing::info!(%plural, %name, "recreated bootstrap RBAC binding");
                    true
                })
                .map_err(|e| format!("creating {plural} {name}: {e}"))
        }
    }
}

/// Every bootstrap object reconciled once: errors collected, and whether
/// anything was written.
async fn reconcile_all(
    registries: &Registries,
    objs: &[(&'static str, Value)],
) -> (Vec<String>, bool) {
    // The objects are independent: written side by side, the store commits
    // them in a few shared transactions instead of one each.
    let mut errors = Vec::new();
    let mut wrote = false;
    for chunk in objs.chunks(32) {
        let mut pending = Vec::with_capacity(chunk.len());
        for (plural, obj) in chunk {
            pending.push(reconcile_one(registries, plural, obj));
        }
        for r in futures::future::join_all(pending).await {
            match r {
                Ok(w) => wrote |= w,
                Err(e) => errors.push(e),
            }
        }
    }
    (errors, wrote)
}

/// The post-start hook `rbac/bootstrap-roles`: reconciles the bootstrap
/// policy (retrying for up to 30 s, as upstream), then has the index
/// rebuilt and the default roles aggregated before it reports done.
pub async fn ensure(registries: &Registries, index: &rbac::SharedIndex) -> Result<(), String> {
    let objs = objects()?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut wrote = false;
    loop {
        // Roles and bindings in kube-system and kube-public need their namespaces.
        let ns = crate::registry::core::ensure_system_namespaces(registries).await;
        let (mut errors, w) = reconcile_all(registries, &objs).await;
        wrote |= w;
        if let Err(e) = ns {
            errors.push(e);
        }
        if errors.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "unable to reconcile the bootstrap RBAC policy: {}",
                errors.join("; ")
            ));
        }
        tracing::debug!(errors = %errors.join("; "), "bootstrap RBAC policy: retrying");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The first clean pass aggregates (aggregations of aggregations settle
    // in memory), the second indexes what it wrote; when the policy was
    // already in place (a restart, a seeded store) one pass indexes it. A
    // pass can fail when the refresher writes the same role first; the
    // refresher finishes the job if these tries do not.
    let passes = if wrote { 2 } else { 1 };
    let mut clean = 0;
    for _ in 0..10 {
        match rbac::sync_now(index, registries).await {
            Ok(()) => clean += 1,
            Err(e) => tracing::debug!(error = %e, "RBAC index after bootstrap: retrying"),
        }
        if clean == passes {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_file_parses_into_upstream_objects() {
        let objs = objects().expect("bootstrap policy");
        let find = |plural: &str, name: &str| {
            objs.iter()
                .find(|(p, o)| *p == plural && o["metadata"]["name"] == name)
                .map(|(_, o)| o.clone())
                .unwrap_or_else(|| panic!("{plural} {name} missing"))
        };
        for name in [
            "cluster-admin",
            "admin",
            "edit",
            "view",
            "system:discovery",
            "system:basic-user",
            "system:public-info-viewer",
            "system:monitoring",
            "system:auth-delegator",
            "system:node-proxier",
            "system:kube-scheduler",
            "system:kube-controller-manager",
            "system:node",
            "system:volume-scheduler",
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
            "system:service-account-issuer-discovery",
        ] {
            let cr = find("clusterroles", name);
            assert_eq!(cr["kind"], "ClusterRole");
            assert_eq!(
                cr["metadata"]["labels"][BOOTSTRAPPING_LABEL],
                "rbac-defaults"
            );
            assert_eq!(
                cr["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION],
                "true"
            );
        }
        let admin = find("clusterroles", "cluster-admin");
        assert_eq!(
            admin["rules"],
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, {"nonResourceURLs": ["*"], "verbs": ["*"]}])
        );
        let view = find("clusterroles", "view");
        assert_eq!(
            view["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"]
                ["rbac.authorization.k8s.io/aggregate-to-view"],
            "true"
        );
        assert_eq!(
            view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"],
            "true"
        );
        let piv = find("clusterrolebindings", "system:public-info-viewer");
        assert_eq!(
            piv["roleRef"],
            json!({"apiGroup": GROUP, "kind": "ClusterRole", "name": "system:public-info-viewer"})
        );
        assert_eq!(
            piv["subjects"],
            json!([{"kind": "Group", "name": "system:authenticated", "apiGroup": GROUP},
                   {"kind": "Group", "name": "system:unauthenticated", "apiGroup": GROUP}])
        );
        let dns = find("clusterrolebindings", "system:kube-dns");
        assert_eq!(
            dns["subjects"],
            json!([{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}])
        );
        let reader = find(
            "rolebindings",
            "system::extension-apiserver-authentication-reader",
        );
        assert_eq!(reader["metadata"]["namespace"], "kube-system");
        assert_eq!(reader["roleRef"]["kind"], "Role");
        let signer = find("roles", "system:controller:bootstrap-signer");
        assert_eq!(signer["metadata"]["namespace"], "kube-public");
        // upstream v1.34 with its default feature gates: 31 ClusterRoles and
        // 12 ClusterRoleBindings, 37 controllers with one of each, 7 Roles
        // and 7 RoleBindings in kube-system and kube-public.
        let count = |plural: &str| objs.iter().filter(|(p, _)| *p == plural).count();
        assert_eq!(count("clusterroles"), 31 + 37);
        assert_eq!(count("clusterrolebindings"), 12 + 37);
        assert_eq!(count("roles"), 7);
        assert_eq!(count("rolebindings"), 7);
        let gc = find(
            "clusterroles",
            "system:controller:generic-garbage-collector",
        );
        assert_eq!(
            gc["metadata"]["labels"][BOOTSTRAPPING_LABEL],
            "rbac-defaults"
        );
        assert_eq!(
            gc["rules"],
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["delete", "get", "list", "patch", "update", "watch"]},
                   {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]}])
        );
        let gc_binding = find(
            "clusterrolebindings",
            "system:controller:generic-garbage-collector",
        );
        assert_eq!(
            gc_binding["roleRef"],
            json!({"apiGroup": GROUP, "kind": "ClusterRole", "name": "system:controller:generic-garbage-collector"})
        );
        assert_eq!(
            gc_binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": "generic-garbage-collector", "namespace": "kube-system"}])
        );
        // Gated off by default in v1.34, as upstream leaves them out.
        for name in [
            "system:cluster-trust-bundle-discovery",
            "system:controller:podcertificaterequestcleaner",
            "system:controller:device-taint-eviction-controller",
        ] {
            assert!(
                !objs.iter().any(|(_, o)| o["metadata"]["name"] == name),
                "{name}"
            );
        }
        // Every name is unique within its kind and namespace, as upstream's
        // addControllerRole and addNamespaceRole insist.
        let mut seen = std::collections::HashSet::new();
        for (p, o) in &objs {
            let key = (
                *p,
                o["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                o["metadata"]["name"].as_str().unwrap_or("").to_string(),
            );
            assert!(seen.insert(key.clone()), "{key:?} twice");
        }
        // Every binding's role is defined here too.
        for (p, b) in objs.iter().filter(|(p, _)| p.ends_with("bindings")) {
            let role_plural = if *p == "rolebindings" {
                "roles"
            } else {
                "clusterroles"
            };
            let ns = &b["metadata"]["namespace"];
            assert!(
                objs.iter().any(|(rp, r)| *rp == role_plural
                    && r["metadata"]["name"] == b["roleRef"]["name"]
                    && &r["metadata"]["namespace"] == ns),
                "{b}"
            );
        }
        // And the stored shapes pass the RBAC strategies' validation.
        use crate::registry::strategy::Strategy;
        for (p, o) in &objs {
            let errs = match *p {
                "clusterroles" => crate::registry::rbac::ClusterRoleStrategy.validate(o),
                "roles" => crate::registry::rbac::RoleStrategy.validate(o),
                "rolebindings" => crate::registry::rbac::RoleBindingStrategy.validate(o),
                _ => crate::registry::rbac::ClusterRoleBindingStrategy.validate(o),
            };
            assert!(errs.is_empty(), "{p} {}: {errs:?}", o["metadata"]["name"]);
        }
    }

    #[test]
    fn reconciling_adds_what_is_missing_and_respects_protection() {
        let expected = json!({"metadata": {"name": "r", "labels": {"a": "1"}, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]});
        // Covered already (and more): nothing to do.
        let wider = json!({"metadata": {"name": "r", "labels": {"a": "1"}, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
            "rules": [{"apiGroups": [""], "resources": ["pods", "secrets"], "verbs": ["*"]}]});
        assert_eq!(reconcile_role(&wider, &expected), None);
        // Missing a verb and the label: both added, the user's label kept.
        let narrow = json!({"metadata": {"name": "r", "labels": {"a": "mine"}},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
        let got = reconcile_role(&narrow, &expected).expect("update");
        assert_eq!(got["metadata"]["labels"]["a"], "mine");
        assert_eq!(
            got["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION],
            "true"
        );
        assert_eq!(
            got["rules"],
            json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                   {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}])
        );
        let mut protected = narrow.clone();
        protected["metadata"]["annotations"] = json!({AUTO_UPDATE_ANNOTATION: "false"});
        assert_eq!(reconcile_role(&protected, &expected), None);

        let binding = json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "Group", "apiGroup": GROUP, "name": "g"}]});
        let mut extra = binding.clone();
        extra["subjects"] = json!([{"kind": "User", "apiGroup": GROUP, "name": "u"}]);
        match reconcile_binding(&extra, &binding) {
            BindingChange::Update(v) => assert_eq!(v["subjects"].as_array().map(Vec::len), Some(2)),
            other => panic!("{other:?}"),
        }
        assert_eq!(reconcile_binding(&binding, &binding), BindingChange::None);
        let mut other_role = binding.clone();
        other_role["roleRef"]["name"] = json!("edit");
        assert!(matches!(
            reconcile_binding(&other_role, &binding),
            BindingChange::Recreate(_)
        ));
    }
}
