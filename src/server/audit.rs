//! Auditing: `--audit-policy-file` (audit.k8s.io/v1 Policy) decides each
//! request's level; `--audit-log-path` receives audit.k8s.io/v1 Events as
//! JSON lines, written off the request path by a background task, and
//! `--audit-webhook-config-file` gets them in batches (see
//! [`super::audit_webhook`]).

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::api::request_info::RequestInfo;
use crate::auth::UserInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None,
    Metadata,
    Request,
    RequestResponse,
}

impl Level {
    fn parse(s: &str) -> Result<Level, String> {
        Ok(match s {
            "None" => Level::None,
            "Metadata" => Level::Metadata,
            "Request" => Level::Request,
            "RequestResponse" => Level::RequestResponse,
            other => return Err(format!("unknown audit level {other:?}")),
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

#[derive(Debug, Clone, Default)]
struct GroupResources {
    group: String,
    resources: Vec<String>,
    resource_names: Vec<String>,
}

#[derive(Debug, Clone)]
struct Rule {
    level: Level,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    non_resource_urls: Vec<String>,
    omit_stages: Option<Vec<String>>,
}

/// A parsed audit policy.
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
    omit_stages: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn url_matches(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|p| match p.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => p == path,
    })
}

impl Policy {
    pub fn load(path: &Path) -> Result<Policy, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Policy::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Policy, String> {
        let v: Value = serde_saphyr::from_str(text).map_err(|e| format!("not a policy: {e}"))?;
        if v["kind"] != "Policy" || !matches!(v["apiVersion"].as_str(), Some("audit.k8s.io/v1")) {
            return Err("want kind Policy, apiVersion audit.k8s.io/v1".into());
        }
        let mut rules = Vec::new();
        for (i, r) in v["rules"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let level = Level::parse(r["level"].as_str().unwrap_or(""))
                .map_err(|e| format!("rules[{i}].level: {e}"))?;
            let resources = r["resources"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|g| GroupResources {
                    group: g["group"].as_str().unwrap_or("").to_string(),
                    resources: strings(&g["resources"]),
                    resource_names: strings(&g["resourceNames"]),
                })
                .collect();
            rules.push(Rule {
                level,
                users: strings(&r["users"]),
                user_groups: strings(&r["userGroups"]),
                verbs: strings(&r["verbs"]),
                resources,
                namespaces: strings(&r["namespaces"]),
                non_resource_urls: strings(&r["nonResourceURLs"]),
                omit_stages: r.get("omitStages").map(strings),
            });
        }
        Ok(Policy {
            rules,
            omit_stages: strings(&v["omitStages"]),
        })
    }

    /// The level of the first matching rule (upstream's policy checker), and stages to omit.
    pub fn evaluate(&self, info: &RequestInfo, user: &UserInfo) -> (Level, Vec<String>) {
        for r in &self.rules {
            if !r.users.is_empty() && !r.users.iter().any(|u| *u == user.name) {
                continue;
            }
            if !r.user_groups.is_empty() && !r.user_groups.iter().any(|g| user.in_group(g)) {
                continue;
            }
            if !r.verbs.is_empty() && !r.verbs.iter().any(|v| *v == info.verb) {
                continue;
            }
            if info.is_resource_request {
                if !r.non_resource_urls.is_empty() && r.resources.is_empty() {
                    continue;
                }
                if !r.namespaces.is_empty() && !r.namespaces.iter().any(|n| *n == info.namespace) {
                    continue;
                }
                if !r.resources.is_empty() {
                    let combined = if info.subresource.is_empty() {
                        info.resource.clone()
                    } else {
                        format!("{}/{}", info.resource, info.subresource)
                    };
                    let hit = r.resources.iter().any(|g| {
                        g.group == info.api_group
                            && (g.resources.is_empty()
                                || g.resources.iter().any(|res| {
                                    *res == combined
                                        || *res == "*"
                                        || res
                                            .strip_prefix("*/")
                                            .is_some_and(|s| s == info.subresource)
                                        || res
                                            .strip_suffix("/*")
                                            .is_some_and(|p| p == info.resource)
                                }))
                            && (g.resource_names.is_empty()
                                || g.resource_names.iter().any(|n| *n == info.name))
                    });
                    if !hit {
                        continue;
                    }
                }
            } else {
                if !r.resources.is_empty() || !r.namespaces.is_empty() {
                    continue;
                }
                if !r.non_resource_urls.is_empty() && !url_matches(&r.non_resource_urls, &info.path)
                {
                    continue;
                }
            }
            let mut omit = self.omit_stages.clone();
            if let Some(o) = &r.omit_stages {
                omit.extend(o.iter().cloned());
            }
            return (r.level, omit);
        }
        (Level::None, Vec::new())
    }
}

/// Where events go: a background writer to a file or stdout, or the
/// webhook's batcher.
#[derive(Debug, Clone)]
pub struct Log {
    tx: mpsc::UnboundedSender<Value>,
}

impl Log {
    /// Events to `--audit-webhook-config-file`'s server.
    pub async fn webhook(
        kubeconfig: &Path,
        batching: super::audit_webhook::Batching,
    ) -> Result<Log, String> {
        Ok(Log {
            tx: super::audit_webhook::start(kubeconfig, batching).await?,
        })
    }

    /// `-` writes to stdout, as upstream.
    pub fn open(path: &Path) -> Result<Log, String> {
        let mut out: Box<dyn Write + Send> = if path == Path::new("-") {
            Box::new(std::io::stdout())
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
            )
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        std::thread::Builder::new()
            .name("kapi-audit".into())
            .spawn(move || {
                while let Some(ev) = rx.blocking_recv() {
                    let mut line = serde_json::to_vec(&ev).unwrap_or_default();
                    line.push(b'\n');
                    if let Err(e) = out.write_all(&line).and_then(|_| out.flush()) {
                        crate::warn_limited!("audit-write", error = %e, "cannot write the audit log (--audit-log-path)");
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(Log { tx })
    }

    pub fn write(&self, event: Value) {
        let _ = self.tx.send(event);
    }
}

/// Microsecond RFC 3339, as audit timestamps are.
pub fn now_micro() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// The audit configuration the handler chain consults.
#[derive(Debug, Clone)]
pub struct Auditor {
    pub policy: Policy,
    /// The log file and the webhook, whichever are configured.
    pub logs: Vec<Log>,
}

impl Auditor {
    pub fn write(&self, event: Value) {
        if let Some((last, rest)) = self.logs.split_last() {
            for log in rest {
                log.write(event.clone());
            }
            last.write(event);
        }
    }
}

/// What an event needs to know about one request.
pub struct Request<'a> {
    pub audit_id: &'a str,
    pub level: Level,
    pub info: &'a RequestInfo,
    pub uri: &'a str,
    pub user: &'a UserInfo,
    pub source_ip: String,
    pub user_agent: &'a str,
    pub received: &'a str,
    /// The metadata of the object a create or update sent, which fills in
    /// `objectRef` as upstream's LogRequestObject does.
    pub object_meta: Option<Value>,
}

/// One audit.k8s.io/v1 Event.
pub fn event(
    r: &Request<'_>,
    stage: &str,
    code: Option<u16>,
    request_object: Option<Value>,
    response_object: Option<Value>,
    annotations: Value,
) -> Value {
    let mut user = json!({"username": r.user.name, "groups": r.user.groups});
    if !r.user.uid.is_empty() {
        user["uid"] = json!(r.user.uid);
    }
    if !r.user.extra.is_empty() {
        user["extra"] = json!(r.user.extra);
    }
    let mut ev = json!({
        "kind": "Event", "apiVersion": "audit.k8s.io/v1",
        "level": r.level.as_str(), "auditID": r.audit_id, "stage": stage,
        "requestURI": r.uri, "verb": r.info.verb, "user": user,
        "sourceIPs": [r.source_ip], "userAgent": r.user_agent,
        "requestReceivedTimestamp": r.received, "stageTimestamp": now_micro(),
    });
    if r.info.is_resource_request {
        let mut obj = json!({"resource": r.info.resource, "apiVersion": r.info.api_version});
        if !r.info.namespace.is_empty() {
            obj["namespace"] = json!(r.info.namespace);
        }
        if !r.info.name.is_empty() {
            obj["name"] = json!(r.info.name);
        }
        if !r.info.api_group.is_empty() {
            obj["apiGroup"] = json!(r.info.api_group);
        }
        if !r.info.subresource.is_empty() {
            obj["subresource"] = json!(r.info.subresource);
        }
        if let Some(meta) = &r.object_meta {
            for (field, key) in [
                ("namespace", "namespace"),
                ("name", "name"),
                ("uid", "uid"),
                ("resourceVersion", "resourceVersion"),
            ] {
                let given = meta[key].as_str().filter(|v| !v.is_empty());
                if let (None, Some(v)) = (obj.get(field), given) {
                    obj[field] = json!(v);
                }
            }
        }
        ev["objectRef"] = obj;
    }
    if let Some(c) = code {
        ev["responseStatus"] = json!({"metadata": {}, "code": c});
    }
    if let Some(o) = request_object {
        ev["requestObject"] = o;
    }
    if let Some(o) = response_object {
        ev["responseObject"] = o;
    }
    if annotations.as_object().is_some_and(|m| !m.is_empty()) {
        ev["annotations"] = annotations;
    }
    ev
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

    #[test]
    fn first_matching_rule_wins() {
        let p = Policy::parse(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: None\n  nonResourceURLs: [/healthz*]\n- level: RequestResponse\n  resources:\n  - group: \"\"\n    resources: [configmaps]\n- level: Metadata\n",
        )
        .expect("policy");
        let user = UserInfo {
            name: "u".into(),
            ..Default::default()
        };
        let cm = RequestInfo::parse(&Method::POST, "/api/v1/namespaces/d/configmaps", None);
        assert_eq!(p.evaluate(&cm, &user).0, Level::RequestResponse);
        let pods = RequestInfo::parse(&Method::GET, "/api/v1/namespaces/d/pods", None);
        assert_eq!(
            p.evaluate(&pods, &user),
            (Level::Metadata, vec!["RequestReceived".to_string()])
        );
        let health = RequestInfo::parse(&Method::GET, "/healthz", None);
        assert_eq!(p.evaluate(&health, &user).0, Level::None);
        assert!(Policy::parse("kind: Nope").is_err());
    }
}
