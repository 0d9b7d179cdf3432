//! upstream's cluster authentication trust controller
//! (`start-cluster-authentication-info-controller`): publishes in
//! `kube-system/extension-apiserver-authentication` how kapi authenticates
//! clients and how it vouches for them as a front proxy, so aggregated API
//! servers can trust kapi's `X-Remote-*` headers (they read this ConfigMap
//! with the `extension-apiserver-authentication-reader` Role).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::auth::request_header::Trust;
use crate::informers::{Informers, Wakeup};
use crate::registry::{Registries, WriteOptions};

pub const NAMESPACE: &str = "kube-system";
pub const NAME: &str = "extension-apiserver-authentication";
/// The common name of kapi's front-proxy client certificate.
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";
/// upstream's ClusterAuthenticationTrustController requeues every minute.
const RESYNC: Duration = Duration::from_secs(60);

/// The ConfigMap's data, as kube-apiserver writes it (lists as JSON arrays).
pub fn data(client_ca_pem: &str, front_proxy: &Trust) -> BTreeMap<String, String> {
    let list = |items: &[String]| json!(items).to_string();
    let h = &front_proxy.headers;
    BTreeMap::from([
        ("client-ca-file".into(), client_ca_pem.to_string()),
        (
            "requestheader-client-ca-file".into(),
            front_proxy.ca_pem.clone(),
        ),
        (
            "requestheader-allowed-names".into(),
            list(&front_proxy.allowed_names),
        ),
        ("requestheader-username-headers".into(), list(&h.username)),
        ("requestheader-uid-headers".into(), list(&h.uid)),
        ("requestheader-group-headers".into(), list(&h.group)),
        (
            "requestheader-extra-headers-prefix".into(),
            list(&h.extra_prefixes),
        ),
    ])
}

/// Creates or updates the ConfigMap so it holds `want` (other keys stay).
pub async fn ensure(
    registries: &Registries,
    want: &BTreeMap<String, String>,
) -> Result<(), String> {
    let reg = registries
        .get("", "v1", "configmaps")
        .ok_or("configmaps are not served")?;
    match reg.get_object(NAMESPACE, NAME, None).await {
        Ok(bytes) => {
            let mut cm: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            let same = want
                .iter()
                .all(|(k, v)| cm["data"][k].as_str() == Some(v.as_str()));
            if same {
                return Ok(());
            }
            if !cm["data"].is_object() {
                cm["data"] = json!({});
            }
            for (k, v) in want {
                cm["data"][k] = json!(v);
            }
            reg.update(NAMESPACE, NAME, cm, None, &WriteOptions::default())
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        Err(e) if e.code == 404 => {
            let cm = json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": NAME, "namespace": NAMESPACE},
                "data": want,
            });
            reg.create(NAMESPACE, cm, &WriteOptions::default())
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Keeps the ConfigMap current: written again whenever it changes (someone
/// edits or deletes it), quickly retried until written (kube-system may
/// not exist yet), and rechecked every minute as upstream's controller
/// requeues its one key.
pub async fn run(informers: Informers, want: BTreeMap<String, String>, stop: CancellationToken) {
    let Some(configmaps) =
        informers.get_selected("", "v1", "configmaps", &format!("metadata.name={NAME}"))
    else {
        return;
    };
    let wake = Wakeup::on(&[&configmaps]);
    let registries = informers.registries().clone();
    loop {
        let pause = match ensure(&registries, &want).await {
            Ok(()) => RESYNC,
            Err(e) => {
                tracing::debug!(error = %e, "writing {NAMESPACE}/{NAME}");
                Duration::from_millis(200)
            }
        };
        tokio::select! {
            _ = wake.changed() => {}
            _ = tokio::time::sleep(pause) => {}
            _ = stop.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn data_as_upstream_publishes_it() {
        let trust = crate::auth::request_header::Trust {
            ca_pem: "FP".into(),
            allowed_names: vec![super::FRONT_PROXY_CLIENT.into()],
            headers: crate::auth::request_header::HeaderNames::standard().clone(),
        };
        let d = super::data("CA", &trust);
        assert_eq!(
            d["requestheader-allowed-names"],
            r#"["front-proxy-client"]"#
        );
        assert_eq!(d["requestheader-username-headers"], r#"["X-Remote-User"]"#);
        assert_eq!(
            d["requestheader-extra-headers-prefix"],
            r#"["X-Remote-Extra-"]"#
        );
        assert_eq!(d["requestheader-client-ca-file"], "FP");
        assert_eq!(d["client-ca-file"], "CA");
    }
}
