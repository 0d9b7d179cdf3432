//! What the webhook and policy plugins share, as upstream's
//! `webhook/predicates` and `policy/matching` packages: rules (operations,
//! groups, versions, resources with subresources, scope), namespace and
//! object selectors, the AdmissionRequest a request is shown as, and the
//! configuration objects read from the watch cache.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::{Attributes, Context, Operation};
use crate::api::selector::LabelSelector;
use crate::api::ApiError;
use crate::cel::admission::{Activation, Outcome};
use crate::registry::{ListParams, Registries};

pub const GROUP: &str = "admissionregistration.k8s.io";

/// Objects as last read and as parsed: the revision of the last change
/// the watch cache had seen (`None` without a watch cache), and the bytes.
struct Parsed<T> {
    last_change: Option<i64>,
    bytes: Vec<Bytes>,
    objects: Arc<Vec<T>>,
}

/// Configuration objects of one kind, read from the watch cache on each
/// request and parsed again only when they changed.
pub struct Cached<T> {
    plural: &'static str,
    parse: fn(&Value) -> T,
    state: Mutex<Option<Parsed<T>>>,
}

impl<T> Cached<T> {
    pub fn new(plural: &'static str, parse: fn(&Value) -> T) -> Cached<T> {
        Cached {
            plural,
            parse,
            state: Mutex::new(None),
        }
    }

    /// The objects, sorted by name (as upstream sorts configurations).
    pub async fn get(&self, registries: &Registries) -> Result<Arc<Vec<T>>, ApiError> {
        let Some(reg) = registries.get(GROUP, "v1", self.plural) else {
            return Ok(Arc::new(Vec::new()));
        };
        // From the cache, but never behind a configuration change this
        // server acknowledged: a webhook or policy applies from the next
        // request. Every write asks; most find nothing changed since the
        // last one and skip the list.
        let last_change = reg.last_change().await?;
        if let Some(p) = self.state.lock().as_ref() {
            if last_change.is_some() && p.last_change == last_change {
                return Ok(p.objects.clone());
            }
        }
        let params = ListParams {
            resource_version: Some(reg.fresh_rv()),
            ..Default::default()
        };
        let list = reg.list("", &params).await?;
        if let Some(p) = self.state.lock().as_mut() {
            if p.bytes == list.items {
                // Changes the cache saw since may be newer than this list:
                // the older mark only makes the next request list again.
                p.last_change = last_change;
                return Ok(p.objects.clone());
            }
        }
        let mut objs: Vec<Value> = list
            .items
            .iter()
            .filter_map(|b| serde_json::from_slice(b).ok())
            .collect();
        objs.sort_by(|a, b| name_of(a).cmp(name_of(b)));
        let objects = Arc::new(objs.iter().map(self.parse).collect::<Vec<T>>());
        *self.state.lock() = Some(Parsed {
            last_change,
            bytes: list.items,
            objects: objects.clone(),
        });
        Ok(objects)
    }
}

fn name_of(v: &Value) -> &str {
    v["metadata"]["name"].as_str().unwrap_or("")
}

pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A `RuleWithOperations` (or `NamedRuleWithOperations`).
#[derive(Debug, Clone, Default)]
pub struct Rule {
    pub operations: Vec<String>,
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub scope: String,
    pub resource_names: Vec<String>,
}

impl Rule {
    pub fn from_json(v: &Value) -> Rule {
        Rule {
            operations: strings(&v["operations"]),
            api_groups: strings(&v["apiGroups"]),
            api_versions: strings(&v["apiVersions"]),
            resources: strings(&v["resources"]),
            scope: str_of(v, "scope").to_string(),
            resource_names: strings(&v["resourceNames"]),
        }
    }

    pub fn list(v: &Value) -> Vec<Rule> {
        v.as_array()
            .map(|a| a.iter().map(Rule::from_json).collect())
            .unwrap_or_default()
    }

    /// Upstream's rules.Matcher; with `equivalent`, any served version of
    /// the request's group and resource matches too (matchPolicy
    /// Equivalent, without conversion to that version).
    pub fn matches(&self, a: &Attributes<'_>, registries: Option<&Registries>) -> bool {
        let r = a.resource;
        let op = a.operation.as_str();
        let ops = self.operations.iter().any(|o| o == "*" || o == op);
        let groups = self.api_groups.iter().any(|g| g == "*" || *g == r.group);
        let versions = self.api_versions.iter().any(|v| {
            v == "*"
                || *v == r.version
                || registries.is_some_and(|regs| regs.catalog.get(&r.group, v, &r.plural).is_some())
        });
        let resources = self.resources.iter().any(|res| {
            let (res, sub) = res.split_once('/').unwrap_or((res.as_str(), ""));
            (res == "*" || res == r.plural) && (sub == "*" || sub == a.subresource)
        });
        ops && groups && versions && resources && scope_matches(&self.scope, a)
    }
}

fn is_namespace_object(a: &Attributes<'_>) -> bool {
    a.resource.group.is_empty() && a.resource.plural == "namespaces"
}

fn scope_matches(scope: &str, a: &Attributes<'_>) -> bool {
    match scope {
        "Namespaced" => !is_namespace_object(a) && !a.namespace.is_empty(),
        "Cluster" => is_namespace_object(a) || a.namespace.is_empty(),
        _ => true,
    }
}

/// Requests for the admission configuration kinds themselves are never
/// sent to webhooks or policies, so that a bad one can always be fixed.
pub fn exempt(a: &Attributes<'_>) -> bool {
    a.resource.group == GROUP
        && matches!(
            a.resource.kind.as_str(),
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

/// A `metav1.LabelSelector`; absent is the empty selector (what the API defaults to).
pub fn selector(v: &Value) -> Result<LabelSelector, String> {
    if v.is_null() {
        return Ok(LabelSelector::default());
    }
    let api: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
        serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    LabelSelector::from_api(&api)
}

pub fn labels(obj: &Value) -> BTreeMap<String, String> {
    obj["metadata"]["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The namespace object `name`, from the cache and, when the cache has
/// not seen it yet, from a consistent read.
pub async fn get_namespace(ctx: &Context, name: &str) -> Result<Value, ApiError> {
    let reg = ctx
        .registries
        .get("", "v1", "namespaces")
        .ok_or_else(|| ApiError::internal("namespaces are not served"))?;
    let bytes = match reg.get_object("", name, Some("0")).await {
        Ok(b) => b,
        Err(e) if e.code == 404 => reg.get_object("", name, None).await?,
        Err(e) => return Err(e),
    };
    serde_json::from_slice(&bytes).map_err(|e| ApiError::internal(e.to_string()))
}

/// Upstream's namespace.Matcher: cluster-scoped requests (other than for
/// namespaces) always match; a namespace being written matches on its own labels.
pub async fn namespace_matches(
    sel: &Result<LabelSelector, String>,
    a: &Attributes<'_>,
    ctx: &Context,
) -> Result<bool, ApiError> {
    let is_ns = is_namespace_object(a);
    if a.namespace.is_empty() && !is_ns {
        return Ok(true);
    }
    let sel = sel.as_ref().map_err(|e| ApiError::internal(e.clone()))?;
    if sel.is_empty() {
        return Ok(true);
    }
    let own = is_ns
        && a.subresource.is_empty()
        && matches!(a.operation, Operation::Create | Operation::Update);
    let labels = match (&a.object, own) {
        (Some(obj), true) => labels(obj),
        _ => {
            let name = if is_ns { a.name } else { a.namespace };
            let ns = get_namespace(ctx, name)
                .await
                .map_err(|e| ApiError::internal(e.message))?;
            labels(&ns)
        }
    };
    Ok(sel.matches(&labels))
}

/// Upstream's object.Matcher: the object's or the old object's labels.
pub fn object_matches(
    sel: &Result<LabelSelector, String>,
    a: &Attributes<'_>,
) -> Result<bool, ApiError> {
    let sel = sel.as_ref().map_err(|e| ApiError::internal(e.clone()))?;
    if sel.is_empty() {
        return Ok(true);
    }
    Ok(a.object.as_ref().is_some_and(|o| sel.matches(&labels(o)))
        || a.old_object.is_some_and(|o| sel.matches(&labels(o))))
}

/// Upstream's matchconditions.Matcher: any condition false skips; errors
/// (with no condition false) fail the request, or skip with `fail_open`.
pub fn match_conditions(
    conditions: &[(String, String)],
    act: &mut Activation,
    fail_open: bool,
) -> Result<bool, String> {
    let mut errors = Vec::new();
    for (_, expression) in conditions {
        match act.eval(expression) {
            Ok(Outcome::Bool(true)) => {}
            Ok(Outcome::Bool(false)) => return Ok(false),
            Ok(_) => errors.push(format!(
                "expression '{expression}' resulted in error: must evaluate to bool"
            )),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        return Ok(true);
    }
    if fail_open {
        return Ok(false);
    }
    Err(aggregate(errors))
}

/// utilerrors.NewAggregate's text.
pub fn aggregate(mut errors: Vec<String>) -> String {
    if errors.len() == 1 {
        errors.remove(0)
    } else {
        format!("[{}]", errors.join(", "))
    }
}

fn user_info(a: &Attributes<'_>) -> Value {
    let u = a.user;
    let mut m = Map::new();
    m.insert("username".into(), json!(u.name));
    if !u.uid.is_empty() {
        m.insert("uid".into(), json!(u.uid));
    }
    if !u.groups.is_empty() {
        m.insert("groups".into(), json!(u.groups));
    }
    if !u.extra.is_empty() {
        m.insert("extra".into(), json!(u.extra));
    }
    Value::Object(m)
}

fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The admission/v1 AdmissionRequest for this request: with a uid and the
/// objects for a webhook, without them as CEL's `request` sees it.
pub fn request_json(a: &Attributes<'_>, uid: Option<&str>) -> Value {
    let r = a.resource;
    let kind = json!({"group": r.group, "version": r.version, "kind": r.kind});
    let resource = json!({"group": r.group, "version": r.version, "resource": r.plural});
    let mut m = Map::new();
    if let Some(uid) = uid {
        m.insert("uid".into(), json!(uid));
    }
    m.insert("kind".into(), kind.clone());
    m.insert("resource".into(), resource.clone());
    if !a.subresource.is_empty() {
        m.insert("subResource".into(), json!(a.subresource));
    }
    m.insert("requestKind".into(), kind);
    m.insert("requestResource".into(), resource);
    if !a.subresource.is_empty() {
        m.insert("requestSubResource".into(), json!(a.subresource));
    }
    if !a.name.is_empty() {
        m.insert("name".into(), json!(a.name));
    }
    if !a.namespace.is_empty() {
        m.insert("namespace".into(), json!(a.namespace));
    }
    m.insert("operation".into(), json!(a.operation.as_str()));
    m.insert("userInfo".into(), user_info(a));
    if uid.is_some() {
        m.insert("object".into(), a.object.clone().unwrap_or(Value::Null));
        m.insert(
            "oldObject".into(),
            a.old_object.cloned().unwrap_or(Value::Null),
        );
    }
    m.insert("dryRun".into(), json!(a.dry_run));
    if !a.options.is_null() {
        m.insert("options".into(), without_nulls(&a.options));
    }
    Value::Object(m)
}

/// Upstream's apierrors.NewForbidden for an admission refusal: the
/// request's name, else the object's name or generateName, else `Unknown`.
pub fn forbidden(a: &Attributes<'_>, message: &str) -> ApiError {
    let r = a.resource;
    let name = if !a.name.is_empty() {
        a.name.to_string()
    } else {
        let meta = a.object.as_ref().map(|o| &o["metadata"]);
        meta.and_then(|m| {
            m["name"]
                .as_str()
                .filter(|s| !s.is_empty())
                .or_else(|| m["generateName"].as_str().filter(|s| !s.is_empty()))
        })
        .unwrap_or("Unknown")
        .to_string()
    };
    let qualified = crate::api::status::qualified_resource(&r.group, &r.plural);
    ApiError::forbidden(format!("{qualified} {name:?} is forbidden: {message}")).with_details(Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails {
            name: Some(name),
            group: (!r.group.is_empty()).then(|| r.group.clone()),
            kind: Some(r.plural.clone()),
            ..Default::default()
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::catalog::Resource;
    use crate::auth::UserInfo;

    fn resource(
        group: &str,
        version: &str,
        plural: &str,
        kind: &str,
        namespaced: bool,
    ) -> Resource {
        let mut r = Resource::from_builtin(&crate::api::builtin::BUILTINS[0]);
        r.group = group.into();
        r.version = version.into();
        r.plural = plural.into();
        r.kind = kind.into();
        r.namespaced = namespaced;
        r
    }

    fn attrs<'a>(r: &'a Resource, sub: &'a str, ns: &'a str, user: &'a UserInfo) -> Attributes<'a> {
        Attributes {
            operation: Operation::Create,
            resource: r,
            subresource: sub,
            namespace: ns,
            name: "x",
            object: Some(json!({"metadata": {"name": "x", "labels": {"a": "1"}}})),
            old_object: None,
            user,
            dry_run: false,
            options: json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": null}),
        }
    }

    #[test]
    fn rules_match_as_upstream() {
        let user = UserInfo::default();
        let pods = resource("", "v1", "pods", "Pod", true);
        let a = attrs(&pods, "", "default", &user);
        let rule = |v: Value| Rule::from_json(&v);
        assert!(rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]})).matches(&a, None));
        assert!(rule(json!({"operations": ["CREATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]})).matches(&a, None));
        assert!(!rule(json!({"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]})).matches(&a, None));
        assert!(!rule(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["pods/status"]})).matches(&a, None));
        assert!(!rule(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["v2"], "resources": ["pods"]})).matches(&a, None));
        assert!(!rule(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"})).matches(&a, None));
        assert!(rule(json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Namespaced"})).matches(&a, None));
        let status = attrs(&pods, "status", "default", &user);
        assert!(rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/status"]})).matches(&status, None));
        assert!(rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*/status"]})).matches(&status, None));
        assert!(rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/*"]})).matches(&status, None));
        assert!(!rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]})).matches(&status, None));
        assert!(!rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*"]})).matches(&status, None));
        assert!(rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*/*"]})).matches(&status, None));
        let nss = resource("", "v1", "namespaces", "Namespace", false);
        let ns = attrs(&nss, "", "", &user);
        assert!(rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"], "scope": "Cluster"})).matches(&ns, None));
        assert!(!rule(json!({"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["namespaces"], "scope": "Namespaced"})).matches(&ns, None));
    }

    #[test]
    fn selectors_and_requests() {
        let user = UserInfo {
            name: "alice".into(),
            groups: vec!["g".into()],
            ..Default::default()
        };
        let pods = resource("", "v1", "pods", "Pod", true);
        let a = attrs(&pods, "", "default", &user);
        let sel = selector(&json!({"matchLabels": {"a": "1"}}));
        assert!(object_matches(&sel, &a).unwrap());
        let sel = selector(
            &json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}),
        );
        assert!(!object_matches(&sel, &a).unwrap());
        assert!(object_matches(&selector(&Value::Null), &a).unwrap());
        let req = request_json(&a, Some("u"));
        assert_eq!(req["uid"], "u");
        assert_eq!(
            req["kind"],
            json!({"group": "", "version": "v1", "kind": "Pod"})
        );
        assert_eq!(
            req["userInfo"],
            json!({"username": "alice", "groups": ["g"]})
        );
        assert_eq!(req["oldObject"], Value::Null);
        assert_eq!(
            req["options"],
            json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"})
        );
        let cel = request_json(&a, None);
        assert!(cel.get("object").is_none() && cel.get("uid").is_none());
        let e = forbidden(&a, "nope");
        assert_eq!(e.message, "pods \"x\" is forbidden: nope");
    }
}
