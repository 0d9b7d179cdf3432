//! The APIService availability controllers, as upstream's
//! `apiservice-status-local-available-controller` and
//! `apiservice-status-remote-available-controller`: a local APIService
//! (no `spec.service`) is always Available; a remote one is Available when
//! its Service resolves to an endpoint and the backend answers its
//! discovery document (`GET /apis/<group>/<version>`, asked with kapi's
//! front-proxy certificate as `system:kube-aggregator` in `system:masters`).
//! The remote controller also keeps the proxy's routing table and the
//! catalog entries of aggregated resources (so discovery and OpenAPI list
//! them) in step with what the backends serve.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::proxy::{self, Proxy, Target};
use crate::api::catalog::{Owner, ProxyInfo, Resource, Subresource};
use crate::auth::UserInfo;
use crate::informers::{Informers, Wakeup};
use crate::registry::{meta, ListParams, Registries, WriteOptions};

const TICK: Duration = Duration::from_secs(1);
/// How often an available backend is asked again; an unavailable one is
/// asked every tick.
const RECHECK_AVAILABLE: Duration = Duration::from_secs(2);
const PROBE_TIMEOUT: Duration = Duration::from_secs(6);

pub use crate::registry::apiregistration::{LOCAL_MESSAGE, LOCAL_REASON};

/// The Available condition an APIService should have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    pub status: &'static str,
    pub reason: String,
    pub message: String,
}

impl Availability {
    fn passed() -> Self {
        Availability {
            status: "True",
            reason: "Passed".into(),
            message: "all checks passed".into(),
        }
    }

    fn failed(reason: &str, message: String) -> Self {
        Availability {
            status: "False",
            reason: reason.into(),
            message,
        }
    }
}

async fn list_api_services(registries: &Registries) -> Result<Vec<Value>, String> {
    let reg = registries
        .get("apiregistration.k8s.io", "v1", "apiservices")
        .ok_or("APIServices are not served")?;
    let list = reg
        .list(
            "",
            &ListParams {
                resource_version: Some("0".into()),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(list
        .items
        .iter()
        .filter_map(|b| serde_json::from_slice(b).ok())
        .collect())
}

/// Writes the Available condition when it changed (keeping the transition
/// time while the status stays); other conditions are left alone.
async fn set_condition(
    registries: &Registries,
    obj: &Value,
    want: &Availability,
) -> Result<(), String> {
    let conds = obj["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let current = conds.iter().find(|c| c["type"] == "Available");
    if let Some(c) = current {
        if c["status"] == want.status
            && c["reason"] == want.reason.as_str()
            && c["message"] == want.message.as_str()
        {
            return Ok(());
        }
    }
    let since = current
        .filter(|c| c["status"] == want.status)
        .map(|c| c["lastTransitionTime"].clone())
        .unwrap_or_else(|| json!(meta::now_rfc3339()));
    let mut new_conds: Vec<Value> = conds
        .into_iter()
        .filter(|c| c["type"] != "Available")
        .collect();
    new_conds.push(json!({"type": "Available", "status": want.status, "lastTransitionTime": since, "reason": want.reason, "message": want.message}));
    let mut updated = obj.clone();
    updated["status"]["conditions"] = Value::Array(new_conds);
    let reg = registries
        .get("apiregistration.k8s.io", "v1", "apiservices")
        .ok_or("APIServices are not served")?;
    let name = meta::name(obj).to_string();
    reg.update("", &name, updated, Some("status"), &WriteOptions::default())
        .await
        .map(|_| ())
        .map_err(|e| format!("updating the status of APIService {name}: {e}"))
}

/// One pass of the local controller: every local APIService Available.
pub async fn sync_local(registries: &Registries) -> Result<(), String> {
    let want = Availability {
        status: "True",
        reason: LOCAL_REASON.into(),
        message: LOCAL_MESSAGE.into(),
    };
    let all = list_api_services(registries).await?;
    let writes = all
        .iter()
        .filter(|o| o["spec"]["service"].is_null() && !meta::is_deleting(o))
        .map(|o| set_condition(registries, o, &want));
    // Every write is tried; the first failure (a conflict with a concurrent
    // writer, typically) is reported so the caller can run the pass again.
    let mut first_err = None;
    for r in futures::future::join_all(writes).await {
        if let Err(e) = r {
            tracing::debug!(error = %e, "local APIService status");
            first_err.get_or_insert(e);
        }
    }
    first_err.map_or(Ok(()), Err)
}

/// The local controller: a pass whenever an APIService changes (upstream's
/// follows the same informer); a failed pass is tried again after [`TICK`].
pub async fn run_local(informers: Informers, stop: CancellationToken) {
    let Some(api_services) = informers.get("apiregistration.k8s.io", "v1", "apiservices") else {
        return;
    };
    let wake = Wakeup::on(&[&api_services]);
    let registries = informers.registries().clone();
    loop {
        let failed = match sync_local(&registries).await {
            Ok(()) => false,
            Err(e) => {
                tracing::debug!(error = %e, "local availability pass failed");
                true
            }
        };
        tokio::select! {
            _ = wake.changed() => {}
            _ = tokio::time::sleep(TICK), if failed => {}
            _ = stop.cancelled() => return,
        }
    }
}

/// upstream's remote availability check of one APIService; on success the
/// backend's discovery document.
pub async fn check(proxy: &Proxy, t: &Target) -> Result<Value, Availability> {
    let (host, port) = proxy::resolve(proxy.registries(), &t.service)
        .await
        .map_err(|u| Availability::failed(u.reason, u.message))?;
    let shown = format!(
        "https://{}/apis/{}/{}",
        proxy::host_port(&host, port),
        t.group,
        t.version
    );
    let failed = |why: String| {
        Availability::failed(
            "FailedDiscoveryCheck",
            format!("failing or missing response from {shown}: {why}"),
        )
    };
    let addrs = proxy::addresses(&host, port)
        .await
        .map_err(|e| failed(format!("Get {shown:?}: {e}")))?;
    let client = proxy
        .client(t, &addrs, false, Some(PROBE_TIMEOUT))
        .map_err(|e| failed(e))?;
    let url = format!(
        "https://{}/apis/{}/{}",
        proxy::host_port(&t.service.server_name(), port),
        t.group,
        t.version
    );
    let mut headers = http::HeaderMap::new();
    proxy::set_user_headers(
        &mut headers,
        &UserInfo {
            name: "system:kube-aggregator".into(),
            groups: vec!["system:masters".into()],
            ..Default::default()
        },
    );
    let resp = client
        .get(&url)
        .headers(headers)
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| {
            failed(format!(
                "Get {shown:?}: {}",
                proxy::describe_error(&e, &addrs)
            ))
        })?;
    let status = resp.status();
    if !(200..300).contains(&status.as_u16()) {
        return Err(failed(format!(
            "bad status from {shown}: {}",
            status.as_u16()
        )));
    }
    let body = resp.bytes().await.map_err(|e| {
        failed(format!(
            "Get {shown:?}: {}",
            proxy::describe_error(&e, &addrs)
        ))
    })?;
    Ok(serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// The catalog entries of an aggregated group version, from its
/// `APIResourceList`.
pub fn resources_from_discovery(doc: &Value, t: &Target) -> Vec<Resource> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let entries = doc["resources"].as_array().cloned().unwrap_or_default();
    let info = Arc::new(ProxyInfo {
        api_service: t.api_service.clone(),
    });
    let mut out: Vec<Resource> = Vec::new();
    for e in entries.iter().filter(|e| !text(&e["name"]).contains('/')) {
        let kind = text(&e["kind"]);
        let plural = text(&e["name"]);
        if plural.is_empty() || kind.is_empty() {
            continue;
        }
        let subresources = entries
            .iter()
            .filter_map(|s| {
                let name = text(&s["name"]);
                let sub = name.strip_prefix(&format!("{plural}/"))?.to_string();
                let same = s["group"].is_null() && s["version"].is_null();
                Some(Subresource {
                    name: sub,
                    group: if same {
                        t.group.clone()
                    } else {
                        text(&s["group"])
                    },
                    version: if same {
                        t.version.clone()
                    } else {
                        text(&s["version"])
                    },
                    kind: text(&s["kind"]),
                    verbs: strings(&s["verbs"]),
                })
            })
            .collect();
        out.push(Resource {
            group: t.group.clone(),
            version: t.version.clone(),
            list_kind: format!("{kind}List"),
            kind,
            singular: text(&e["singularName"]),
            plural,
            namespaced: e["namespaced"].as_bool().unwrap_or(false),
            verbs: strings(&e["verbs"]),
            short_names: strings(&e["shortNames"]),
            categories: strings(&e["categories"]),
            subresources,
            // Nothing of it is stored here.
            storage_path: String::new(),
            storage_group: t.group.clone(),
            storage_version: t.version.clone(),
            selectable_fields: Vec::new(),
            codec: None,
            schema: None,
            owner: Owner::Aggregator,
            custom: None,
            proxy: Some(info.clone()),
            routes: Default::default(),
        });
    }
    out
}

fn same_entry(a: &Resource, b: &Resource) -> bool {
    let subs = |r: &Resource| -> Vec<(String, String, String, String, Vec<String>)> {
        r.subresources
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.group.clone(),
                    s.version.clone(),
                    s.kind.clone(),
                    s.verbs.clone(),
                )
            })
            .collect()
    };
    a.kind == b.kind
        && a.singular == b.singular
        && a.namespaced == b.namespaced
        && a.verbs == b.verbs
        && a.short_names == b.short_names
        && a.categories == b.categories
        && subs(a) == subs(b)
        && a.proxy == b.proxy
}

/// Makes the aggregated entries of the catalog follow the backends:
/// `fresh` replaces what is listed for a group version; entries of group
/// versions no remote APIService serves any more go away. An unavailable
/// backend keeps its last entries (as upstream keeps stale discovery).
fn sync_catalog(
    registries: &Registries,
    remote: &HashSet<(String, String)>,
    fresh: HashMap<(String, String), Vec<Resource>>,
) {
    let catalog = &registries.catalog;
    let current: Vec<Arc<Resource>> = catalog
        .all()
        .into_iter()
        .filter(|r| r.proxy.is_some())
        .collect();
    for r in &current {
        let gv = (r.group.clone(), r.version.clone());
        let gone = !remote.contains(&gv)
            || fresh
                .get(&gv)
                .is_some_and(|rs| !rs.iter().any(|w| w.plural == r.plural));
        if gone {
            catalog.remove(&r.group, &r.version, &r.plural);
            registries.forget(&r.group, &r.version, &r.plural);
        }
    }
    for (_, wanted) in fresh {
        for w in wanted {
            // A built-in or custom resource of the same name keeps its entry.
            let existing = catalog.get(&w.group, &w.version, &w.plural);
            if existing
                .as_ref()
                .is_some_and(|c| c.proxy.is_none() || same_entry(c, &w))
            {
                continue;
            }
            let (g, v, p) = (w.group.clone(), w.version.clone(), w.plural.clone());
            catalog.add(w);
            registries.forget(&g, &v, &p);
        }
    }
}

/// What the remote controller remembers between passes.
#[derive(Default)]
struct Seen {
    /// APIService name -> (target as last checked, when, the outcome).
    checked: HashMap<String, (Target, Instant, bool)>,
}

/// One pass of the remote controller; how long until the next probe is
/// due (`None`: no remote APIService).
async fn sync_remote(proxy: &Proxy, seen: &mut Seen) -> Result<Option<Duration>, String> {
    let registries = proxy.registries();
    let all = list_api_services(registries).await?;
    let mut targets: Vec<(Value, Target)> = all
        .into_iter()
        .filter(|o| !meta::is_deleting(o))
        .filter_map(|o| Target::from_api_service(&o).map(|t| (o, t)))
        .collect();
    let now = Instant::now();
    let due: Vec<usize> = targets
        .iter()
        .enumerate()
        .filter(|(_, (_, t))| match seen.checked.get(&t.api_service) {
            None => true,
            Some((last, at, ok)) => {
                let mut probe_view = t.clone();
                probe_view.available = last.available;
                probe_view != *last
                    || now.duration_since(*at) >= if *ok { RECHECK_AVAILABLE } else { TICK }
            }
        })
        .map(|(i, _)| i)
        .collect();
    let checks = due.iter().map(|&i| {
        let t = targets[i].1.clone();
        async move { (i, check(proxy, &t).await) }
    });
    let results = futures::future::join_all(checks).await;
    let mut fresh = HashMap::new();
    for (i, result) in results {
        let (obj, t) = &mut targets[i];
        let want = match result {
            Ok(doc) => {
                let gv = (t.group.clone(), t.version.clone());
                fresh.insert(gv, resources_from_discovery(&doc, t));
                Availability::passed()
            }
            Err(a) => a,
        };
        let ok = want.status == "True";
        if let Err(e) = set_condition(registries, obj, &want).await {
            tracing::debug!(error = %e, "remote APIService status");
        }
        if ok != t.available {
            tracing::info!(apiservice = %t.api_service, available = ok, reason = %want.reason, "{}", want.message);
        }
        t.available = ok;
        // From the probe's end: a slow probe is not followed by another at once.
        seen.checked
            .insert(t.api_service.clone(), (t.clone(), Instant::now(), ok));
    }
    let names: HashSet<String> = targets.iter().map(|(_, t)| t.api_service.clone()).collect();
    seen.checked.retain(|n, _| names.contains(n));
    // Between checks a target keeps the outcome of its last one.
    for (_, t) in targets.iter_mut() {
        if let Some((_, _, ok)) = seen.checked.get(&t.api_service) {
            t.available = *ok;
        }
    }
    let remote: HashSet<(String, String)> = targets
        .iter()
        .map(|(_, t)| (t.group.clone(), t.version.clone()))
        .collect();
    sync_catalog(registries, &remote, fresh);
    let next = targets
        .iter()
        .filter_map(|(_, t)| seen.checked.get(&t.api_service))
        .map(|(_, at, ok)| {
            let every = if *ok { RECHECK_AVAILABLE } else { TICK };
            (*at + every).saturating_duration_since(Instant::now())
        })
        .min();
    proxy.set_targets(targets.into_iter().map(|(_, t)| t).collect());
    Ok(next)
}

/// The remote controller: a pass whenever an APIService, a Service or an
/// EndpointSlice changes (upstream's informers), and when a probe is due.
/// Probes are the one thing no event announces (a backend can stop
/// answering while its Service and endpoints stand): each remote
/// APIService is probed again after [`RECHECK_AVAILABLE`], or [`TICK`]
/// while it fails, where upstream resyncs every 30 s and retries failures
/// with a backoff. With no remote APIService nothing runs.
pub async fn run_remote(proxy: Arc<Proxy>, informers: Informers, stop: CancellationToken) {
    let (Some(api_services), Some(services), Some(slices)) = (
        informers.get("apiregistration.k8s.io", "v1", "apiservices"),
        informers.get("", "v1", "services"),
        informers.get("discovery.k8s.io", "v1", "endpointslices"),
    ) else {
        return;
    };
    let wake = Wakeup::on(&[&api_services, &services, &slices]);
    let mut seen = Seen::default();
    loop {
        let next = match sync_remote(&proxy, &mut seen).await {
            Ok(next) => next,
            Err(e) => {
                tracing::debug!(error = %e, "remote availability pass failed");
                Some(TICK)
            }
        };
        tokio::select! {
            _ = wake.changed() => {}
            _ = tokio::time::sleep(next.unwrap_or_default()), if next.is_some() => {}
            _ = stop.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_from_a_discovery_document() {
        let doc = json!({"kind": "APIResourceList", "groupVersion": "wardle.example.com/v1alpha1", "resources": [
            {"name": "fischers", "singularName": "fischer", "namespaced": false, "kind": "Fischer", "verbs": ["get", "list"]},
            {"name": "flunders", "singularName": "flunder", "namespaced": true, "kind": "Flunder", "verbs": ["create", "get", "list", "watch"], "shortNames": ["fl"]},
            {"name": "flunders/status", "singularName": "", "namespaced": true, "kind": "Flunder", "verbs": ["get", "update"]}
        ]});
        let t = Target::from_api_service(&json!({"metadata": {"name": "v1alpha1.wardle.example.com"}, "spec": {"group": "wardle.example.com", "version": "v1alpha1", "service": {"namespace": "kube-system", "name": "w"}}})).expect("target");
        let rs = resources_from_discovery(&doc, &t);
        assert_eq!(rs.len(), 2);
        let fl = &rs[1];
        assert_eq!(
            (fl.plural.as_str(), fl.kind.as_str(), fl.namespaced),
            ("flunders", "Flunder", true)
        );
        assert_eq!(fl.short_names, ["fl"]);
        assert_eq!(fl.subresources.len(), 1);
        assert_eq!(fl.subresources[0].group, "wardle.example.com");
        assert!(!fl.is_stored());
        assert_eq!(fl.owner, Owner::Aggregator);
        assert!(same_entry(fl, &rs[1].clone()));
        assert!(!same_entry(fl, &rs[0]));
    }
}
