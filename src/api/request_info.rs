//! upstream's `RequestInfo`: what a request is about, parsed from its path,
//! method and query the way `RequestInfoFactory` does, before routing.

use http::Method;

/// Subresources that make a request long-running (no timeout, no in-flight limit).
const LONG_RUNNING_SUBRESOURCES: &[&str] = &["proxy", "log", "exec", "attach", "portforward"];
/// Path segments after `namespaces/<name>` that are namespace subresources, not resources.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestInfo {
    pub is_resource_request: bool,
    pub path: String,
    /// Lower-case API verb: get, list, watch, create, update, patch, delete, deletecollection;
    /// for non-resource requests, the lower-case HTTP method.
    pub verb: String,
    /// `api` or `apis`.
    pub api_prefix: String,
    pub api_group: String,
    pub api_version: String,
    pub namespace: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// How many path segments there are from the resource on.
    pub depth: usize,
    /// The path is one of the deprecated `/watch/` forms
    /// (`/api/v1/watch/pods`), not a `?watch=true` query.
    pub watch_path: bool,
}

fn query_flag(query: Option<&str>, key: &str) -> bool {
    query_value(query, key).is_some_and(|v| v == "true" || v == "1")
}

/// One query parameter's first value, percent-decoded.
pub fn query_value(query: Option<&str>, key: &str) -> Option<String> {
    let q = query?;
    q.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(k) == key).then(|| percent_decode(v))
    })
}

pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl RequestInfo {
    pub fn parse(method: &Method, path: &str, query: Option<&str>) -> RequestInfo {
        let mut info = RequestInfo {
            path: path.to_string(),
            verb: method.as_str().to_ascii_lowercase(),
            ..Default::default()
        };
        let trimmed = path.trim_matches('/');
        // Upstream splits without dropping empty segments, so `//api//v1`
        // names no resource and no route: it is a 404, not /api/v1.
        if trimmed.contains("//") {
            return info;
        }
        let segments: Vec<&str> = trimmed.split('/').filter(|s| !s.is_empty()).collect();
        let Some((&prefix, rest)) = segments.split_first() else {
            return info;
        };
        let mut parts: &[&str] = match prefix {
            "api" => {
                if rest.len() < 2 {
                    return info; // /api, /api/v1: discovery
                }
                info.api_version = rest[0].to_string();
                &rest[1..]
            }
            "apis" => {
                if rest.len() < 3 {
                    return info; // /apis, /apis/g, /apis/g/v: discovery
                }
                info.api_group = rest[0].to_string();
                info.api_version = rest[1].to_string();
                &rest[2..]
            }
            _ => return info,
        };
        info.api_prefix = prefix.to_string();
        info.is_resource_request = true;

        if parts.first() == Some(&"watch") {
            info.verb = "watch".into();
            info.watch_path = true;
            parts = &parts[1..];
        } else {
            info.verb = match *method {
                Method::POST => "create",
                Method::GET | Method::HEAD => "get",
                Method::PUT => "update",
                Method::PATCH => "patch",
                Method::DELETE => "delete",
                // Methods are case-sensitive: `get` is no verb, and no
                // route takes it (405), as with upstream's empty verb.
                _ => "",
            }
            .to_string();
        }

        if parts.first() == Some(&"namespaces") {
            if parts.len() > 1 {
                info.namespace = parts[1].to_string();
                if parts.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&parts[2]) {
                    parts = &parts[2..];
                }
            }
        }
        info.depth = parts.len();
        if let Some(r) = parts.first() {
            info.resource = r.to_string();
        }
        if let Some(n) = parts.get(1) {
            info.name = n.to_string();
        }
        if let Some(s) = parts.get(2) {
            info.subresource = s.to_string();
        }

        if info.name.is_empty() && info.verb == "get" {
            info.verb = if query_flag(query, "watch") {
                "watch"
            } else {
                "list"
            }
            .into();
        }
        if info.name.is_empty() && info.verb == "delete" {
            info.verb = "deletecollection".into();
        }
        // A list or watch narrowed to one name by field selector is, for
        // authorization, about that name (upstream does the same).
        if matches!(info.verb.as_str(), "list" | "watch") && info.name.is_empty() {
            if let Some(sel) = query_value(query, "fieldSelector") {
                if let Some(name) = sel.strip_prefix("metadata.name=") {
                    if !name.contains(',') {
                        info.name = name.to_string();
                    }
                }
            }
        }
        info
    }

    pub fn is_long_running(&self) -> bool {
        self.verb == "watch" || LONG_RUNNING_SUBRESOURCES.contains(&self.subresource.as_str())
    }

    pub fn is_mutating(&self) -> bool {
        matches!(
            self.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection" | "post" | "put"
        )
    }

    /// The `scope` label of upstream's request metrics.
    pub fn scope(&self) -> &'static str {
        if !self.is_resource_request {
            ""
        } else if !self.name.is_empty() {
            "resource"
        } else if !self.namespace.is_empty() {
            "namespace"
        } else {
            "cluster"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(method: Method, path: &str, q: Option<&str>) -> RequestInfo {
        RequestInfo::parse(&method, path, q)
    }

    #[test]
    fn resource_paths() {
        let i = p(Method::GET, "/api/v1/namespaces/ns/pods/web/log", None);
        assert!(i.is_resource_request);
        assert_eq!(
            (
                i.verb.as_str(),
                i.namespace.as_str(),
                i.resource.as_str(),
                i.name.as_str(),
                i.subresource.as_str()
            ),
            ("get", "ns", "pods", "web", "log")
        );
        assert!(i.is_long_running());

        let i = p(Method::GET, "/apis/apps/v1/deployments", None);
        assert_eq!(
            (
                i.verb.as_str(),
                i.api_group.as_str(),
                i.api_version.as_str(),
                i.resource.as_str()
            ),
            ("list", "apps", "v1", "deployments")
        );
        assert_eq!(i.scope(), "cluster");

        let i = p(
            Method::GET,
            "/apis/apps/v1/namespaces/x/deployments",
            Some("watch=true"),
        );
        assert_eq!(i.verb, "watch");
        let i = p(Method::GET, "/api/v1/watch/namespaces/x/pods/y", None);
        assert_eq!((i.verb.as_str(), i.name.as_str()), ("watch", "y"));
        let i = p(Method::DELETE, "/api/v1/namespaces/x/pods", None);
        assert_eq!(i.verb, "deletecollection");
        let i = p(Method::POST, "/api/v1/namespaces", None);
        assert_eq!(
            (i.verb.as_str(), i.resource.as_str(), i.namespace.as_str()),
            ("create", "namespaces", "")
        );
    }

    #[test]
    fn namespace_subresources_and_names() {
        let i = p(Method::PUT, "/api/v1/namespaces/x/finalize", None);
        assert_eq!(
            (
                i.resource.as_str(),
                i.name.as_str(),
                i.subresource.as_str(),
                i.namespace.as_str()
            ),
            ("namespaces", "x", "finalize", "x")
        );
        let i = p(Method::GET, "/api/v1/namespaces/x", None);
        assert_eq!(
            (i.verb.as_str(), i.resource.as_str(), i.name.as_str()),
            ("get", "namespaces", "x")
        );
        let i = p(
            Method::GET,
            "/api/v1/namespaces/x/configmaps",
            Some("fieldSelector=metadata.name%3Dcm"),
        );
        assert_eq!((i.verb.as_str(), i.name.as_str()), ("list", "cm"));
    }

    #[test]
    fn non_resource_paths() {
        for path in [
            "/",
            "/api",
            "/api/v1",
            "/apis",
            "/apis/apps",
            "/apis/apps/v1",
            "/healthz",
            "/readyz/etcd",
        ] {
            let i = p(Method::GET, path, None);
            assert!(!i.is_resource_request, "{path}");
            assert_eq!(i.verb, "get");
        }
    }
}
