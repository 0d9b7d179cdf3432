//! The ServiceAccount and root-CA-publisher controllers: every namespace
//! has a `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap holding
//! the cluster CA, kept as upstream's kube-controller-manager keeps them:
//! each is a work queue of namespace names fed by informers.

use std::sync::Arc;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::informers::{run_controller, Event, Informers};
use crate::registry::{meta, WriteOptions};

pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";
const DEFAULT_SERVICE_ACCOUNT: &str = "default";
const WORKERS: usize = 2;

/// The namespace of an event's object, for queues keyed by namespace.
fn namespace_of(e: &Event) -> String {
    meta::namespace(e.object()).to_string()
}

/// Namespace events (any change) enqueue the namespace's name.
fn namespace_name(e: &Event) -> Option<String> {
    match e {
        Event::Deleted(_) => None,
        _ => Some(meta::name(e.object()).to_string()),
    }
}

/// Whether the namespace exists and is not being deleted (objects made in
/// a terminating namespace are refused anyway).
fn live_namespace(informers: &Informers, name: &str) -> bool {
    informers
        .get("", "v1", "namespaces")
        .and_then(|i| i.get(name))
        .is_some_and(|ns| !meta::is_deleting(&ns))
}

/// upstream's ServiceAccountsController: a `default` ServiceAccount in
/// every namespace, made again when deleted.
pub async fn run_service_accounts(informers: Informers, stop: CancellationToken) {
    let (Some(namespaces), Some(accounts)) = (
        informers.get("", "v1", "namespaces"),
        informers.get_selected(
            "",
            "v1",
            "serviceaccounts",
            &format!("metadata.name={DEFAULT_SERVICE_ACCOUNT}"),
        ),
    ) else {
        return;
    };
    let queue = informers.queue("serviceaccount");
    let q = queue.clone();
    let _ns = namespaces.add_handler(Arc::new(move |e| {
        if let Some(n) = namespace_name(e) {
            q.add(n);
        }
    }));
    let q = queue.clone();
    let _sa = accounts.add_handler(Arc::new(move |e| {
        if matches!(e, Event::Deleted(_)) {
            q.add(namespace_of(e));
        }
    }));
    let inf = informers.clone();
    let acc = accounts.clone();
    run_controller(
        queue,
        &[&namespaces, &accounts],
        WORKERS,
        stop,
        move |ns: String| {
            let (inf, acc) = (inf.clone(), acc.clone());
            async move {
                if !live_namespace(&inf, &ns)
                    || acc
                        .get(&format!("{ns}/{DEFAULT_SERVICE_ACCOUNT}"))
                        .is_some()
                {
                    return Ok(());
                }
                let sas = inf
                    .registries()
                    .get("", "v1", "serviceaccounts")
                    .ok_or("serviceaccounts are not served")?;
                let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": ns}});
                match sas.create(&ns, sa, &WriteOptions::default()).await {
                    Ok(_) => Ok(()),
                    // Made meanwhile, or the namespace is going away.
                    Err(e) if matches!(e.code, 409 | 403 | 404) => Ok(()),
                    Err(e) => Err(e.to_string()),
                }
            }
        },
    )
    .await;
}

/// upstream's root-ca-cert-publisher: `kube-root-ca.crt` in every
/// namespace holds the cluster CA, put back when changed or deleted.
pub async fn run_root_ca_publisher(informers: Informers, ca_pem: String, stop: CancellationToken) {
    let (Some(namespaces), Some(configmaps)) = (
        informers.get("", "v1", "namespaces"),
        informers.get_selected(
            "",
            "v1",
            "configmaps",
            &format!("metadata.name={ROOT_CA_CONFIGMAP}"),
        ),
    ) else {
        return;
    };
    let queue = informers.queue("root_ca_cert_publisher");
    let q = queue.clone();
    let _ns = namespaces.add_handler(Arc::new(move |e| {
        if let Some(n) = namespace_name(e) {
            q.add(n);
        }
    }));
    let q = queue.clone();
    let _cm = configmaps.add_handler(Arc::new(move |e| {
        if !matches!(e, Event::Added(_)) {
            q.add(namespace_of(e));
        }
    }));
    let inf = informers.clone();
    let cms = configmaps.clone();
    run_controller(
        queue,
        &[&namespaces, &configmaps],
        WORKERS,
        stop,
        move |ns: String| {
            let (inf, cms, ca_pem) = (inf.clone(), cms.clone(), ca_pem.clone());
            async move {
                if !live_namespace(&inf, &ns) {
                    return Ok(());
                }
                let reg = inf
                    .registries()
                    .get("", "v1", "configmaps")
                    .ok_or("configmaps are not served")?;
                let wanted = json!({"ca.crt": ca_pem});
                let outcome = match cms.get(&format!("{ns}/{ROOT_CA_CONFIGMAP}")) {
                    Some(cur) if cur["data"] == wanted => return Ok(()),
                    Some(cur) => {
                        let mut fixed: Value = (*cur).clone();
                        fixed["data"] = wanted;
                        reg.update(&ns, ROOT_CA_CONFIGMAP, fixed, None, &WriteOptions::default())
                            .await
                            .map(|_| ())
                    }
                    None => {
                        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": ROOT_CA_CONFIGMAP, "namespace": ns, "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
                            "data": wanted});
                        reg.create(&ns, cm, &WriteOptions::default()).await.map(|_| ())
                    }
                };
                match outcome {
                    Ok(()) => Ok(()),
                    // A namespace going away refuses new objects.
                    Err(e) if matches!(e.code, 403 | 404) => Ok(()),
                    // 409: the cache is behind; the event that follows requeues.
                    Err(e) => Err(e.to_string()),
                }
            }
        },
    )
    .await;
}
