//! ServiceAccount (plugin/pkg/admission/serviceaccount): a pod created
//! without `spec.serviceAccountName` runs as `default`; the service
//! account must exist (the `default` one is looked up a few times, since
//! its controller may not have created it yet); unless the pod or the
//! account opts out with `automountServiceAccountToken: false`, each
//! container mounts the projected `kube-api-access-<random>` volume (a
//! bound token, the cluster CA and the namespace) read-only at
//! `/var/run/secrets/kubernetes.io/serviceaccount`; the account's image
//! pull secrets are copied to a pod that names none. The `default`
//! accounts come from the service-account controller
//! (src/controlplane/serviceaccounts.rs).

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::common::{self, forbidden};
use super::{Attributes, Context, MutatingPlugin, Operation, ValidatingPlugin};
use crate::api::ApiError;
use crate::registry::meta;

pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
pub const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION: &str = "kubernetes.io/enforce-mountable-secrets";
pub const VOLUME_PREFIX: &str = "kube-api-access";
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// `serviceaccount.WarnOnlyBoundTokenExpirationSeconds`.
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;

pub struct ServiceAccount;

/// upstream's `TokenVolumeSource`.
pub fn token_volume_source() -> Value {
    json!({
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
        ]
    })
}

/// The pod requests this plugin looks at: pods themselves, created.
fn handles(a: &Attributes<'_>) -> bool {
    common::is_core(a, "pods")
        && a.subresource.is_empty()
        && a.operation == Operation::Create
        && a.object.is_some()
}

fn is_mirror_pod(pod: &Value) -> bool {
    pod["metadata"]["annotations"]
        .get(MIRROR_POD_ANNOTATION)
        .is_some()
}

/// upstream's `getServiceAccount`: the `default` account is retried, as its
/// controller may be about to create it.
async fn get_service_account(ctx: &Context, namespace: &str, name: &str) -> Result<Value, String> {
    let attempts = if name == DEFAULT_SERVICE_ACCOUNT {
        10
    } else {
        1
    };
    for i in 0..attempts {
        if i != 0 {
            let jitter = u64::from(rand::random::<u8>() % 100);
            tokio::time::sleep(Duration::from_millis(100 + jitter)).await;
        }
        match common::get_core_cached(&ctx.registries, "serviceaccounts", namespace, name).await {
            Ok(Some(sa)) => return Ok(sa),
            Ok(None) => {}
            Err(e) => return Err(e.message),
        }
    }
    Err(format!("serviceaccount {name:?} not found"))
}

fn should_automount(sa: &Value, spec: &Value) -> bool {
    spec["automountServiceAccountToken"]
        .as_bool()
        .or_else(|| sa["automountServiceAccountToken"].as_bool())
        .unwrap_or(true)
}

/// upstream's `mountServiceAccountToken`.
fn mount_token(spec: &mut Map<String, Value>) {
    let existing = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .find(|n| n.starts_with(&format!("{VOLUME_PREFIX}-")))
        .map(String::from);
    let has_volume = existing.is_some();
    let volume_name = existing.unwrap_or_else(|| meta::generate_name(&format!("{VOLUME_PREFIX}-")));
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut needs_volume = false;
    for key in ["initContainers", "containers"] {
        let Some(cs) = spec.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in cs.iter_mut().filter_map(Value::as_object_mut) {
            let mounted = c
                .get("volumeMounts")
                .and_then(Value::as_array)
                .is_some_and(|ms| ms.iter().any(|m| m["mountPath"] == TOKEN_MOUNT_PATH));
            if mounted {
                continue;
            }
            match c.get_mut("volumeMounts").and_then(Value::as_array_mut) {
                Some(ms) => ms.push(mount.clone()),
                None => {
                    c.insert("volumeMounts".into(), json!([mount.clone()]));
                }
            }
            needs_volume = true;
        }
    }
    if !has_volume && needs_volume {
        let volume = json!({"name": volume_name, "projected": token_volume_source()});
        match spec.get_mut("volumes").and_then(Value::as_array_mut) {
            Some(vs) => vs.push(volume),
            None => {
                spec.insert("volumes".into(), json!([volume]));
            }
        }
    }
}

/// upstream's `limitSecretReferences`, for accounts annotated
/// `kubernetes.io/enforce-mountable-secrets: "true"`.
fn limit_secret_references(sa: &Value, spec: &Value) -> Result<(), String> {
    let sa_name = sa["metadata"]["name"].as_str().unwrap_or("");
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["name"].as_str().map(String::from))
            .collect()
    };
    let mountable = names(&sa["secrets"]);
    for v in common::items(spec, "volumes") {
        if let Some(secret) = v["secret"]["secretName"].as_str() {
            if !mountable.iter().any(|m| m == secret) {
                return Err(format!("volume with secret.secretName=\"{secret}\" is not allowed because service account {sa_name} does not reference that secret"));
            }
        }
    }
    for (key, what) in [
        ("initContainers", "init container"),
        ("containers", "container"),
    ] {
        for c in common::items(spec, key) {
            for env in common::items(c, "env") {
                if let Some(secret) = env["valueFrom"]["secretKeyRef"]["name"].as_str() {
                    if !mountable.iter().any(|m| m == secret) {
                        return Err(format!(
                            "{what} {} with envVar {} referencing secret.secretName=\"{secret}\" is not allowed because service account {sa_name} does not reference that secret",
                            c["name"].as_str().unwrap_or(""),
                            env["name"].as_str().unwrap_or("")
                        ));
                    }
                }
            }
        }
    }
    let pull = names(&sa["imagePullSecrets"]);
    for (i, r) in common::items(spec, "imagePullSecrets").enumerate() {
        let n = r["name"].as_str().unwrap_or("");
        if !pull.iter().any(|p| p == n) {
            return Err(format!("imagePullSecrets[{i}].name=\"{n}\" is not allowed because service account {sa_name} does not reference that imagePullSecret"));
        }
    }
    Ok(())
}

#[async_trait::async_trait]
impl MutatingPlugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    async fn admit(&self, a: &mut Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !handles(a) {
            return Ok(Vec::new());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        if is_mirror_pod(pod) {
            return Ok(Vec::new());
        }
        let mut sa_name = pod["spec"]["serviceAccountName"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if sa_name.is_empty() {
            sa_name = DEFAULT_SERVICE_ACCOUNT.to_string();
        }
        let sa = match get_service_account(ctx, a.namespace, &sa_name).await {
            Ok(sa) => sa,
            Err(e) => {
                let why = format!(
                    "error looking up service account {}/{sa_name}: {e}",
                    a.namespace
                );
                return Err(forbidden(a, why));
            }
        };
        let Some(spec) = a
            .object
            .as_mut()
            .and_then(|p| p.get_mut("spec"))
            .and_then(Value::as_object_mut)
        else {
            return Ok(Vec::new());
        };
        spec.insert("serviceAccountName".into(), Value::String(sa_name.clone()));
        // The deprecated alias, which upstream's v1 conversion fills the same way.
        spec.insert("serviceAccount".into(), Value::String(sa_name));
        if should_automount(&sa, &Value::Object(spec.clone())) {
            mount_token(spec);
        }
        let no_pull_secrets = spec
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .is_none_or(|a| a.is_empty());
        if no_pull_secrets {
            let secrets: Vec<Value> = common::items(&sa, "imagePullSecrets")
                .filter_map(|s| s["name"].as_str())
                .map(|n| json!({"name": n}))
                .collect();
            if !secrets.is_empty() {
                spec.insert("imagePullSecrets".into(), Value::Array(secrets));
            }
        }
        Ok(Vec::new())
    }
}

#[async_trait::async_trait]
impl ValidatingPlugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    async fn validate(&self, a: &Attributes<'_>, ctx: &Context) -> Result<Vec<String>, ApiError> {
        if !handles(a) {
            return Ok(Vec::new());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(Vec::new());
        };
        let spec = &pod["spec"];
        if is_mirror_pod(pod) {
            if !spec["serviceAccountName"].as_str().unwrap_or("").is_empty() {
                return Err(forbidden(
                    a,
                    "a mirror pod may not reference service accounts",
                ));
            }
            let secret_volume = common::items(spec, "volumes").any(|v| v["secret"].is_object());
            let secret_env = ["initContainers", "containers", "ephemeralContainers"]
                .iter()
                .flat_map(|k| common::items(spec, k))
                .any(|c| {
                    common::items(c, "env").any(|e| e["valueFrom"]["secretKeyRef"].is_object())
                        || common::items(c, "envFrom").any(|e| e["secretRef"].is_object())
                });
            let pull = common::items(spec, "imagePullSecrets").next().is_some();
            if secret_volume || secret_env || pull {
                return Err(forbidden(a, "a mirror pod may not reference secrets"));
            }
            let token = common::items(spec, "volumes").any(|v| {
                common::items(&v["projected"], "sources")
                    .any(|s| s["serviceAccountToken"].is_object())
            });
            if token {
                return Err(forbidden(
                    a,
                    "a mirror pod may not use ServiceAccountToken volume projections",
                ));
            }
            return Ok(Vec::new());
        }
        let sa_name = spec["serviceAccountName"].as_str().unwrap_or("");
        if sa_name.is_empty() {
            return Err(forbidden(
                a,
                format!(
                    "no service account specified for pod {}/{}",
                    a.namespace, a.name
                ),
            ));
        }
        let sa = get_service_account(ctx, a.namespace, sa_name)
            .await
            .map_err(|e| {
                forbidden(
                    a,
                    format!(
                        "error looking up service account {}/{sa_name}: {e}",
                        a.namespace
                    ),
                )
            })?;
        let enforce = sa["metadata"]["annotations"][ENFORCE_MOUNTABLE_SECRETS_ANNOTATION]
            .as_str()
            .is_some_and(|v| matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True"));
        if enforce {
            limit_secret_references(&sa, spec).map_err(|e| forbidden(a, e))?;
        }
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::common::testing;

    #[tokio::test]
    async fn defaults_the_account_and_mounts_the_token() {
        let env = testing::env().await;
        env.namespace("sa", json!({})).await;
        let ctx = Context {
            registries: env.registries.clone(),
        };
        let pods = env.resource("", "v1", "pods");
        let pod = json!({"metadata": {"name": "p", "namespace": "sa"},
            "spec": {"containers": [{"name": "c", "image": "x"}], "initContainers": [{"name": "i", "image": "x",
                "volumeMounts": [{"name": "mine", "mountPath": TOKEN_MOUNT_PATH}]}]}});

        // No account yet: refused, as upstream (after the retries for `default`).
        let mut a = testing::create_attrs(&pods, "sa", "p", pod.clone());
        let e = ServiceAccount
            .admit(&mut a, &ctx)
            .await
            .err()
            .map(|e| (e.code, e.message));
        assert_eq!(
            e,
            Some((403, "pods \"p\" is forbidden: error looking up service account sa/default: serviceaccount \"default\" not found".to_string()))
        );

        env.create(
            "",
            "v1",
            "serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": "sa"}}),
        )
        .await;
        let mut a = testing::create_attrs(&pods, "sa", "p", pod.clone());
        ServiceAccount.admit(&mut a, &ctx).await.expect("admitted");
        ServiceAccount.validate(&a, &ctx).await.expect("valid");
        let spec = &a.object.as_ref().expect("object")["spec"];
        assert_eq!(spec["serviceAccountName"], "default");
        assert_eq!(spec["serviceAccount"], "default");
        let vol = &spec["volumes"][0];
        let vname = vol["name"].as_str().unwrap_or("");
        assert!(
            vname.starts_with("kube-api-access-") && vname.len() == 21,
            "{vname}"
        );
        assert_eq!(vol["projected"], token_volume_source());
        assert_eq!(
            spec["containers"][0]["volumeMounts"],
            json!([{"name": vname, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH}])
        );
        // An existing mount at the path is left alone.
        assert_eq!(
            spec["initContainers"][0]["volumeMounts"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );

        // Opting out on the pod.
        let mut p2 = pod.clone();
        p2["spec"]["automountServiceAccountToken"] = json!(false);
        let mut a = testing::create_attrs(&pods, "sa", "p", p2);
        ServiceAccount.admit(&mut a, &ctx).await.expect("admitted");
        assert!(a.object.as_ref().expect("object")["spec"]
            .get("volumes")
            .is_none());

        // A named account that does not exist.
        let mut p3 = pod.clone();
        p3["spec"]["serviceAccountName"] = json!("robot");
        let mut a = testing::create_attrs(&pods, "sa", "p", p3);
        let e = ServiceAccount
            .admit(&mut a, &ctx)
            .await
            .err()
            .map(|e| e.message);
        assert_eq!(
            e.as_deref(),
            Some("pods \"p\" is forbidden: error looking up service account sa/robot: serviceaccount \"robot\" not found")
        );

        // An account that opts out, with pull secrets.
        env.create(
            "",
            "v1",
            "serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "quiet", "namespace": "sa"}, "automountServiceAccountToken": false,
            "imagePullSecrets": [{"name": "reg"}]}),
        )
        .await;
        let mut p4 = pod.clone();
        p4["spec"]["serviceAccountName"] = json!("quiet");
        let mut a = testing::create_attrs(&pods, "sa", "p", p4);
        ServiceAccount.admit(&mut a, &ctx).await.expect("admitted");
        let spec = &a.object.as_ref().expect("object")["spec"];
        assert!(spec.get("volumes").is_none());
        assert_eq!(spec["imagePullSecrets"], json!([{"name": "reg"}]));
    }
}
