//! What `kapi apiservice register` creates, rendered from `templates/`:
//! the APIService `<version>.<group>` and, for a server given by URL, the
//! Service it points at in `kube-system`, named after the group
//! (`wardle-example-com`). A server at an IP address other than loopback
//! gets a Service without selector and Endpoints holding that address; a
//! server on loopback or at a DNS name gets an ExternalName Service
//! (Endpoints may not hold loopback addresses, as upstream's may not).

use base64::Engine;
use serde_json::Value;

use crate::templates;

/// The namespace `register` puts the Services it creates in.
pub const NAMESPACE: &str = "kube-system";
/// The APIService annotation listing what `register` created for it
/// (`kube-system/services/x,kube-system/endpoints/x`), so `unregister`
/// removes exactly that.
pub const CREATED_ANNOTATION: &str = "kapi.dev/created-objects";

/// Where the aggregated API server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// `https://host:port`: kapi creates the Service.
    Url { host: String, port: u16 },
    /// An existing Service.
    Service {
        namespace: String,
        name: String,
        port: u16,
    },
}

#[derive(Debug, Clone)]
pub struct Registration {
    pub group: String,
    pub version: String,
    pub backend: Backend,
    pub ca_bundle: Option<Vec<u8>>,
    pub insecure_skip_tls_verify: bool,
    pub group_priority_minimum: i64,
    pub version_priority: i64,
}

/// One object to create, as YAML and as JSON.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Plural resource, for the API path (`services`, `endpoints`, `apiservices`).
    pub resource: &'static str,
    pub namespace: String,
    pub name: String,
    pub yaml: String,
    pub object: Value,
}

impl Manifest {
    /// The collection path to create it at.
    pub fn collection_path(&self) -> String {
        match self.resource {
            "apiservices" => "/apis/apiregistration.k8s.io/v1/apiservices".to_string(),
            r => format!("/api/v1/namespaces/{}/{r}", self.namespace),
        }
    }

    pub fn path(&self) -> String {
        format!("{}/{}", self.collection_path(), self.name)
    }
}

/// `https://host[:port][/]` -> (host, port).
pub fn parse_url(url: &str) -> Result<(String, u16), String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| format!("--url {url:?}: only https:// URLs are supported"))?;
    let authority = rest.trim_end_matches('/');
    if authority.contains('/') {
        return Err(format!(
            "--url {url:?}: an aggregated API server is served at the root; give no path"
        ));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, rest) = v6
            .split_once(']')
            .ok_or_else(|| format!("--url {url:?}: unclosed '['"))?;
        (h.to_string(), rest.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("--url {url:?}: bad port {p:?}"))?,
        None => 443,
    };
    if host.is_empty() {
        return Err(format!("--url {url:?}: no host"));
    }
    Ok((host, port))
}

/// The Service name for a group: dashes for dots, at most 63 characters.
pub fn service_name(group: &str) -> String {
    let mut n: String = group
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(63)
        .collect();
    while n.ends_with('-') {
        n.pop();
    }
    n
}

fn is_loopback_or_name(host: &str) -> bool {
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => true,
    }
}

fn render(template: &str, values: &[(&str, &str)]) -> Result<(String, Value), String> {
    let yaml = templates::render(template, values)?;
    let object: Value =
        serde_saphyr::from_str(&yaml).map_err(|e| format!("rendered template: {e}"))?;
    Ok((yaml, object))
}

impl Registration {
    pub fn name(&self) -> String {
        format!("{}.{}", self.version, self.group)
    }

    /// The Service, Endpoints and APIService to create, in that order.
    pub fn manifests(&self) -> Result<Vec<Manifest>, String> {
        let mut out = Vec::new();
        let (svc_ns, svc_name, svc_port) = match &self.backend {
            Backend::Service {
                namespace,
                name,
                port,
            } => (namespace.clone(), name.clone(), *port),
            Backend::Url { host, port } => {
                let name = service_name(&self.group);
                let target = port.to_string();
                if is_loopback_or_name(host) {
                    let (yaml, object) = render(
                        templates::SERVICE_EXTERNAL_NAME,
                        &[
                            ("name", &name),
                            ("namespace", NAMESPACE),
                            ("host", host),
                            ("service_port", &target),
                        ],
                    )?;
                    out.push(Manifest {
                        resource: "services",
                        namespace: NAMESPACE.into(),
                        name: name.clone(),
                        yaml,
                        object,
                    });
                    (NAMESPACE.to_string(), name, *port)
                } else {
                    let values = [
                        ("name", name.as_str()),
                        ("namespace", NAMESPACE),
                        ("ip", host.as_str()),
                        ("service_port", "443"),
                        ("target_port", target.as_str()),
                    ];
                    for (resource, template) in [
                        ("services", templates::SERVICE),
                        ("endpoints", templates::ENDPOINTS),
                    ] {
                        let (yaml, object) = render(template, &values)?;
                        out.push(Manifest {
                            resource,
                            namespace: NAMESPACE.into(),
                            name: name.clone(),
                            yaml,
                            object,
                        });
                    }
                    (NAMESPACE.to_string(), name, 443)
                }
            }
        };
        let created: Vec<String> = out
            .iter()
            .map(|m| format!("{}/{}/{}", m.namespace, m.resource, m.name))
            .collect();
        let tls = match (&self.ca_bundle, self.insecure_skip_tls_verify) {
            (_, true) => "  insecureSkipTLSVerify: true".to_string(),
            (Some(ca), false) => format!(
                "  caBundle: {}",
                base64::engine::general_purpose::STANDARD.encode(ca)
            ),
            (None, false) => String::new(),
        };
        let name = self.name();
        let (gp, vp, port) = (
            self.group_priority_minimum.to_string(),
            self.version_priority.to_string(),
            svc_port.to_string(),
        );
        let (yaml, object) = render(
            templates::APISERVICE,
            &[
                ("name", &name),
                ("group", &self.group),
                ("version", &self.version),
                ("group_priority_minimum", &gp),
                ("version_priority", &vp),
                ("service_namespace", &svc_ns),
                ("service_name", &svc_name),
                ("service_port", &port),
                ("created_objects", &created.join(",")),
                ("tls", &tls),
            ],
        )?;
        out.push(Manifest {
            resource: "apiservices",
            namespace: String::new(),
            name,
            yaml,
            object,
        });
        Ok(out)
    }
}

/// The objects an APIService's annotation says `register` created:
/// (namespace, resource, name).
pub fn created_objects(api_service: &Value) -> Vec<(String, String, String)> {
    api_service["metadata"]["annotations"][CREATED_ANNOTATION]
        .as_str()
        .unwrap_or("")
        .split(',')
        .filter_map(|s| {
            let mut p = s.trim().splitn(3, '/');
            let (ns, resource, name) = (p.next()?, p.next()?, p.next()?);
            let known = matches!(resource, "services" | "endpoints");
            (known && !ns.is_empty() && !name.is_empty())
                .then(|| (ns.to_string(), resource.to_string(), name.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(backend: Backend) -> Registration {
        Registration {
            group: "wardle.example.com".into(),
            version: "v1alpha1".into(),
            backend,
            ca_bundle: Some(b"PEM".to_vec()),
            insecure_skip_tls_verify: false,
            group_priority_minimum: 1000,
            version_priority: 15,
        }
    }

    #[test]
    fn urls() {
        assert_eq!(
            parse_url("https://127.0.0.1:8443"),
            Ok(("127.0.0.1".into(), 8443))
        );
        assert_eq!(parse_url("https://[::1]:8443/"), Ok(("::1".into(), 8443)));
        assert_eq!(
            parse_url("https://api.example.com"),
            Ok(("api.example.com".into(), 443))
        );
        assert!(parse_url("http://x:1").is_err());
        assert!(parse_url("https://x:1/apis").is_err());
        assert_eq!(service_name("wardle.example.com"), "wardle-example-com");
    }

    #[test]
    fn loopback_gets_an_external_name_service() {
        let ms = reg(Backend::Url {
            host: "127.0.0.1".into(),
            port: 8443,
        })
        .manifests()
        .expect("manifests");
        assert_eq!(ms.len(), 2);
        assert_eq!(ms[0].object["spec"]["type"], "ExternalName");
        assert_eq!(ms[0].object["spec"]["externalName"], "127.0.0.1");
        let api = &ms[1].object;
        assert_eq!(api["metadata"]["name"], "v1alpha1.wardle.example.com");
        assert_eq!(api["spec"]["service"]["port"], 8443);
        assert_eq!(api["spec"]["service"]["name"], "wardle-example-com");
        assert_eq!(api["spec"]["caBundle"], "UEVN");
        assert_eq!(api["spec"]["groupPriorityMinimum"], 1000);
        assert_eq!(
            created_objects(api),
            [(
                "kube-system".into(),
                "services".into(),
                "wardle-example-com".into()
            )]
        );
        assert_eq!(
            ms[1].collection_path(),
            "/apis/apiregistration.k8s.io/v1/apiservices"
        );
    }

    #[test]
    fn an_address_gets_a_service_with_endpoints() {
        let ms = reg(Backend::Url {
            host: "10.1.2.3".into(),
            port: 8443,
        })
        .manifests()
        .expect("manifests");
        let kinds: Vec<&str> = ms.iter().map(|m| m.resource).collect();
        assert_eq!(kinds, ["services", "endpoints", "apiservices"]);
        assert_eq!(ms[0].object["spec"]["ports"][0]["targetPort"], 8443);
        assert_eq!(ms[1].object["subsets"][0]["addresses"][0]["ip"], "10.1.2.3");
        assert_eq!(ms[2].object["spec"]["service"]["port"], 443);
        assert_eq!(
            ms[1].path(),
            "/api/v1/namespaces/kube-system/endpoints/wardle-example-com"
        );
    }

    #[test]
    fn an_existing_service_creates_nothing_else() {
        let mut r = reg(Backend::Service {
            namespace: "wardle".into(),
            name: "api".into(),
            port: 443,
        });
        r.ca_bundle = None;
        r.insecure_skip_tls_verify = true;
        let ms = r.manifests().expect("manifests");
        assert_eq!(ms.len(), 1);
        assert_eq!(ms[0].object["spec"]["insecureSkipTLSVerify"], true);
        assert!(created_objects(&ms[0].object).is_empty());
    }
}
