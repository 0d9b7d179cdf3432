//! RBAC authorization from the stored Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings (rbac.authorization.k8s.io/v1), as upstream's
//! `plugin/pkg/auth/authorizer/rbac` and `pkg/apis/rbac/v1` helpers decide
//! it: RBAC only ever allows; no matching rule is no opinion.
//!
//! `authorize` is synchronous and on every request, so it reads an
//! in-memory [`Index`] that a background task ([`run`]) rebuilds from the
//! watch caches whenever the four lists change. The same task keeps
//! aggregated ClusterRoles (`aggregationRule.clusterRoleSelectors`) the union
//! of the rules of the ClusterRoles they select, as upstream's
//! clusterrole-aggregation controller does.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::authorizer::{Attributes, Authorizer, Decision};
use super::{UserInfo, MASTERS_GROUP};
use crate::informers::Informers;
use crate::registry::{ListParams, Registries, WriteOptions};

pub const GROUP: &str = "rbac.authorization.k8s.io";
/// `rbac.authorization.kubernetes.io/autoupdate`.
pub const AUTO_UPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// The identity the server's own RBAC writers use (upstream's loopback
/// client is `system:apiserver` in `system:masters`).
pub fn loopback_user() -> UserInfo {
    UserInfo {
        name: "system:apiserver".into(),
        groups: vec![MASTERS_GROUP.into()],
        ..Default::default()
    }
}

/// One `rbac/v1` PolicyRule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub fn go_quote_list(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

impl PolicyRule {
    pub fn from_json(v: &Value) -> PolicyRule {
        PolicyRule {
            verbs: strings(&v["verbs"]),
            api_groups: strings(&v["apiGroups"]),
            resources: strings(&v["resources"]),
            resource_names: strings(&v["resourceNames"]),
            non_resource_urls: strings(&v["nonResourceURLs"]),
        }
    }

    /// The rules of a role object (`rules`, absent or null is none).
    pub fn list_from(obj: &Value) -> Vec<PolicyRule> {
        obj["rules"]
            .as_array()
            .map(|a| a.iter().map(PolicyRule::from_json).collect())
            .unwrap_or_default()
    }

    /// As `rbac/v1` serializes it (empty lists omitted, verbs always).
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("verbs".into(), json!(self.verbs));
        for (k, v) in [
            ("apiGroups", &self.api_groups),
            ("resources", &self.resources),
            ("resourceNames", &self.resource_names),
            ("nonResourceURLs", &self.non_resource_urls),
        ] {
            if !v.is_empty() {
                m.insert(k.into(), json!(v));
            }
        }
        Value::Object(m)
    }

    fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == "*" || v == verb)
    }

    fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == "*" || g == group)
    }

    /// upstream's ResourceMatches: `*`, an exact `resource[/subresource]`,
    /// or `*/subresource`.
    fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            r == "*"
                || r == combined
                || (!subresource.is_empty()
                    && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
        })
    }

    fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == "*"
                || u == path
                || u.strip_suffix('*')
                    .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
        })
    }

    /// upstream's RuleAllows.
    pub fn allows(&self, a: &Attributes<'_>) -> bool {
        if !self.verb_matches(a.verb) {
            return false;
        }
        if a.resource_request {
            let combined;
            let resource = if a.subresource.is_empty() {
                a.resource
            } else {
                combined = format!("{}/{}", a.resource, a.subresource);
                combined.as_str()
            };
            self.api_group_matches(a.api_group)
                && self.resource_matches(resource, a.subresource)
                && self.resource_name_matches(a.name)
        } else {
            self.non_resource_url_matches(a.path)
        }
    }

    /// upstream's `rbacv1helpers.CompactString`, for escalation messages.
    pub fn compact_string(&self) -> String {
        let mut parts = Vec::new();
        for (label, v) in [
            ("APIGroups", &self.api_groups),
            ("Resources", &self.resources),
            ("NonResourceURLs", &self.non_resource_urls),
            ("ResourceNames", &self.resource_names),
            ("Verbs", &self.verbs),
        ] {
            if !v.is_empty() {
                parts.push(format!("{label}:{}", go_quote_list(v)));
            }
        }
        format!("{{{}}}", parts.join(", "))
    }
}

/// A subject of a binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

impl Subject {
    fn from_json(v: &Value) -> Subject {
        Subject {
            kind: s(v, "kind").to_string(),
            name: s(v, "name").to_string(),
            namespace: s(v, "namespace").to_string(),
        }
    }

    /// upstream's appliesToUser; `namespace` is the binding's (a
    /// ServiceAccount subject without one means the binding's namespace).
    pub fn applies_to(&self, user: &UserInfo, namespace: &str) -> bool {
        match self.kind.as_str() {
            "User" => user.name == self.name,
            "Group" => user.in_group(&self.name),
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    namespace
                } else {
                    self.namespace.as_str()
                };
                if ns.is_empty() {
                    return false;
                }
                user.name
                    .strip_prefix(SERVICE_ACCOUNT_PREFIX)
                    .and_then(|rest| rest.split_once(':'))
                    .is_some_and(|(n, name)| n == ns && name == self.name)
            }
            _ => false,
        }
    }

    /// upstream's describeSubject.
    fn describe(&self, binding_namespace: &str) -> String {
        match self.kind.as_str() {
            "ServiceAccount" => {
                let ns = if self.namespace.is_empty() {
                    binding_namespace
                } else {
                    &self.namespace
                };
                format!("{} {:?}", self.kind, format!("{}/{}", self.name, ns))
            }
            _ => format!("{} {:?}", self.kind, self.name),
        }
    }
}

/// A RoleBinding (namespace set) or ClusterRoleBinding (namespace empty).
#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    pub namespace: String,
    pub role_kind: String,
    pub role_name: String,
    pub subjects: Vec<Subject>,
}

impl Binding {
    fn from_json(v: &Value) -> Binding {
        let meta = &v["metadata"];
        Binding {
            name: s(meta, "name").to_string(),
            namespace: s(meta, "namespace").to_string(),
            role_kind: s(&v["roleRef"], "kind").to_string(),
            role_name: s(&v["roleRef"], "name").to_string(),
            subjects: v["subjects"]
                .as_array()
                .map(|a| a.iter().map(Subject::from_json).collect())
                .unwrap_or_default(),
        }
    }

    fn subject_for(&self, user: &UserInfo) -> Option<&Subject> {
        self.subjects
            .iter()
            .find(|sub| sub.applies_to(user, &self.namespace))
    }
}

/// Where an allowing rule came from, worded as upstream's describers.
struct Source<'a> {
    binding: &'a Binding,
    subject: &'a Subject,
}

impl fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.binding;
        if b.namespace.is_empty() {
            write!(
                f,
                "ClusterRoleBinding {:?} of {} {:?} to {}",
                b.name,
                b.role_kind,
                b.role_name,
                self.subject.describe("")
            )
        } else {
            write!(
                f,
                "RoleBinding {:?} of {} {:?} to {}",
                format!("{}/{}", b.name, b.namespace),
                b.role_kind,
                b.role_name,
                self.subject.describe(&b.namespace)
            )
        }
    }
}

/// Everything RBAC decides from, as of one rebuild.
#[derive(Debug, Default)]
pub struct Index {
    cluster_roles: HashMap<String, Vec<PolicyRule>>,
    roles: HashMap<(String, String), Vec<PolicyRule>>,
    cluster_role_bindings: Vec<Binding>,
    role_bindings: HashMap<String, Vec<Binding>>,
    /// The revision of each of the four resources ([`PLURALS`] order) the
    /// index was built from.
    revs: [i64; 4],
}

fn name_ns(v: &Value) -> (String, String) {
    (
        s(&v["metadata"], "namespace").to_string(),
        s(&v["metadata"], "name").to_string(),
    )
}

impl Index {
    /// Builds the index from the four lists' objects.
    pub fn build<T: std::borrow::Borrow<Value>>(
        cluster_roles: &[T],
        roles: &[T],
        cluster_role_bindings: &[T],
        role_bindings: &[T],
    ) -> Index {
        let mut idx = Index::default();
        for cr in cluster_roles {
            let cr = cr.borrow();
            idx.cluster_roles
                .insert(name_ns(cr).1, PolicyRule::list_from(cr));
        }
        for r in roles {
            let r = r.borrow();
            idx.roles.insert(name_ns(r), PolicyRule::list_from(r));
        }
        idx.cluster_role_bindings = cluster_role_bindings
            .iter()
            .map(|b| Binding::from_json(b.borrow()))
            .collect();
        idx.cluster_role_bindings
            .sort_by(|a, b| a.name.cmp(&b.name));
        for rb in role_bindings {
            let b = Binding::from_json(rb.borrow());
            idx.role_bindings
                .entry(b.namespace.clone())
                .or_default()
                .push(b);
        }
        for list in idx.role_bindings.values_mut() {
            list.sort_by(|a, b| a.name.cmp(&b.name));
        }
        idx
    }

    /// upstream's GetRoleReferenceRules, against the index.
    pub fn role_rules(
        &self,
        kind: &str,
        name: &str,
        namespace: &str,
    ) -> Result<&[PolicyRule], String> {
        match kind {
            "ClusterRole" => self
                .cluster_roles
                .get(name)
                .map(Vec::as_slice)
                .ok_or_else(|| format!("clusterrole.{GROUP} {name:?} not found")),
            "Role" => self
                .roles
                .get(&(namespace.to_string(), name.to_string()))
                .map(Vec::as_slice)
                .ok_or_else(|| format!("role.{GROUP} {name:?} not found")),
            other => Err(format!("unsupported role reference kind: {other:?}")),
        }
    }

    /// upstream's VisitRulesFor: ClusterRoleBindings, then the RoleBindings
    /// of `namespace`; `visit` returns false to stop.
    fn visit<'a>(
        &'a self,
        user: &UserInfo,
        namespace: &str,
        visit: &mut dyn FnMut(Option<Source<'a>>, Option<&'a PolicyRule>, Option<String>) -> bool,
    ) {
        let namespaced = if namespace.is_empty() {
            None
        } else {
            self.role_bindings.get(namespace)
        };
        let bindings = self
            .cluster_role_bindings
            .iter()
            .chain(namespaced.into_iter().flatten());
        for b in bindings {
            let Some(subject) = b.subject_for(user) else {
                continue;
            };
            let rules = match self.role_rules(&b.role_kind, &b.role_name, &b.namespace) {
                Ok(r) => r,
                Err(e) => {
                    if !visit(None, None, Some(e)) {
                        return;
                    }
                    continue;
                }
            };
            for rule in rules {
                let source = Source {
                    binding: b,
                    subject,
                };
                if !visit(Some(source), Some(rule), None) {
                    return;
                }
            }
        }
    }

    /// upstream's RBACAuthorizer.Authorize.
    pub fn authorize(&self, a: &Attributes<'_>) -> Decision {
        let Some(user) = a.user else {
            return Decision::NoOpinion;
        };
        let mut reason = None;
        self.visit(
            user,
            a.namespace,
            &mut |source, rule, _err| match (source, rule) {
                (Some(src), Some(rule)) if rule.allows(a) => {
                    reason = Some(format!("RBAC: allowed by {src}"));
                    false
                }
                _ => true,
            },
        );
        match reason {
            Some(r) => Decision::Allow(r),
            None => Decision::NoOpinion,
        }
    }

    /// upstream's RulesFor: every rule `user` holds in `namespace`, and the
    /// errors met resolving role references.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let (mut rules, mut errors) = (Vec::new(), Vec::new());
        self.visit(user, namespace, &mut |_, rule, err| {
            if let Some(r) = rule {
                rules.push(r.clone());
            }
            if let Some(e) = err {
                errors.push(e);
            }
            true
        });
        (rules, errors)
    }
}

/// The index shared between the refresher and the authorizer; readers take
/// a snapshot and let go of the lock at once. It also knows the revision of
/// the last acknowledged write to each RBAC resource, so a request can wait
/// until the index reflects every policy change made before it arrived.
#[derive(Debug, Clone, Default)]
pub struct SharedIndex(Arc<SharedInner>);

#[derive(Default)]
struct SharedInner {
    current: RwLock<Arc<Index>>,
    published: tokio::sync::watch::Sender<u64>,
    marks: std::sync::OnceLock<[Arc<AtomicI64>; 4]>,
}

impl fmt::Debug for SharedInner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndex")
            .field("revs", &self.current.read().revs)
            .finish()
    }
}

impl SharedIndex {
    pub fn load(&self) -> Arc<Index> {
        self.0.current.read().clone()
    }

    pub fn store(&self, index: Index) {
        *self.0.current.write() = Arc::new(index);
        self.0.published.send_modify(|n| *n += 1);
    }

    /// From now on, decisions wait for writes to the four resources in
    /// `registries`' store (see [`SharedIndex::wait_current`]).
    pub fn follow_writes(&self, registries: &Registries) {
        let marks = PLURALS.map(|plural| {
            let root = registries
                .get(GROUP, "v1", plural)
                .map(|r| r.key_root().to_string())
                .unwrap_or_default();
            registries.store().write_mark(&root)
        });
        let _ = self.0.marks.set(marks);
    }

    /// Whether the index reflects every acknowledged RBAC write.
    pub fn is_current(&self) -> bool {
        let Some(marks) = self.0.marks.get() else {
            return true;
        };
        let revs = self.0.current.read().revs;
        marks
            .iter()
            .zip(revs)
            .all(|(m, r)| r >= m.load(Ordering::Acquire))
    }

    /// Waits until the index reflects every RBAC write acknowledged before
    /// this call (read-your-writes: a RoleBinding is honoured by the next
    /// request), at most [`crate::informers::informer::FRESHNESS_WAIT`].
    pub async fn wait_current(&self) {
        if self.is_current() {
            return;
        }
        let mut rx = self.0.published.subscribe();
        let _ = tokio::time::timeout(crate::informers::informer::FRESHNESS_WAIT, async {
            while !self.is_current() {
                if rx.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }
}

/// `--authorization-mode=RBAC`.
#[derive(Debug, Clone)]
pub struct RbacAuthorizer {
    pub index: SharedIndex,
}

/// Rules as SelfSubjectRulesReview shows them.
pub fn rules_json(rules: &[PolicyRule]) -> (Vec<Value>, Vec<Value>) {
    let (mut resource, mut non_resource) = (Vec::new(), Vec::new());
    for r in rules {
        if !r.resources.is_empty() {
            let mut v = json!({"verbs": r.verbs});
            if !r.api_groups.is_empty() {
                v["apiGroups"] = json!(r.api_groups);
            }
            v["resources"] = json!(r.resources);
            if !r.resource_names.is_empty() {
                v["resourceNames"] = json!(r.resource_names);
            }
            resource.push(v);
        }
        if !r.non_resource_urls.is_empty() {
            non_resource.push(json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}));
        }
    }
    (resource, non_resource)
}

impl Authorizer for RbacAuthorizer {
    fn authorize(&self, a: &Attributes<'_>) -> Decision {
        self.index.load().authorize(a)
    }

    fn settle(&self) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(self.index.wait_current())
    }

    fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<Value>, Vec<Value>, bool) {
        let (rules, _errors) = self.index.load().rules_for(user, namespace);
        let (r, n) = rules_json(&rules);
        (r, n, false)
    }
}

// ---- the refresher and the aggregation controller ----

/// The four resources the index is built from, in [`Index`]'s order.
const PLURALS: [&str; 4] = [
    "clusterroles",
    "roles",
    "clusterrolebindings",
    "rolebindings",
];
/// How soon a failed aggregation is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// The four lists, consistent with storage, with their resourceVersions.
async fn list_all(registries: &Registries) -> Result<([i64; 4], [Vec<Value>; 4]), String> {
    let mut versions = [0i64; 4];
    let mut items: [Vec<Value>; 4] = Default::default();
    for (i, plural) in PLURALS.iter().enumerate() {
        let reg = registries
            .get(GROUP, "v1", plural)
            .ok_or_else(|| format!("{plural}.{GROUP} are not served"))?;
        let out = reg
            .list("", &ListParams::default())
            .await
            .map_err(|e| format!("listing {plural}: {e}"))?;
        versions[i] = out.resource_version;
        items[i] = out
            .items
            .iter()
            .filter_map(|b| serde_json::from_slice::<Value>(b).ok())
            .collect();
    }
    Ok((versions, items))
}

/// Rebuilds the index (and aggregates) now from consistent lists: at
/// start-up, before the informers have synced, and after the bootstrap
/// policy is written.
pub async fn sync_now(index: &SharedIndex, registries: &Registries) -> Result<(), String> {
    let (versions, [crs, rs, crbs, rbs]) = list_all(registries).await?;
    let mut idx = Index::build(&crs, &rs, &crbs, &rbs);
    idx.revs = versions;
    index.store(idx);
    aggregate(registries, &crs).await
}

/// The refresher: follows the four RBAC informers and rebuilds the index
/// as soon as one of them changes (a burst of changes makes one rebuild),
/// then aggregates ClusterRoles when ClusterRoles changed (upstream's
/// ClusterRoleAggregationController; its writes come back as changes).
pub async fn run(index: SharedIndex, informers: Informers, stop: CancellationToken) {
    let mut followed = Vec::new();
    for plural in PLURALS {
        match informers.get(GROUP, "v1", plural) {
            Some(i) => followed.push(i),
            None => {
                tracing::warn!("{plural}.{GROUP} are not served; the RBAC index stays as loaded");
                return;
            }
        }
    }
    let changed = crate::informers::Wakeup::on(&followed.iter().collect::<Vec<_>>());
    for i in &followed {
        if !i.wait_synced(&stop).await {
            return;
        }
    }
    let registries = informers.registries().clone();
    let mut aggregated_at: Option<i64> = None;
    let mut failures = 0u32;
    loop {
        let snaps: Vec<(i64, Vec<Arc<Value>>)> = followed.iter().map(|i| i.snapshot()).collect();
        let mut idx = Index::build(&snaps[0].1, &snaps[1].1, &snaps[2].1, &snaps[3].1);
        idx.revs = [snaps[0].0, snaps[1].0, snaps[2].0, snaps[3].0];
        index.store(idx);
        let mut failed = false;
        if aggregated_at != Some(snaps[0].0) {
            let cluster_roles: Vec<Value> = snaps[0].1.iter().map(|v| (**v).clone()).collect();
            match aggregate(&registries, &cluster_roles).await {
                Ok(()) => {
                    aggregated_at = Some(snaps[0].0);
                    failures = 0;
                }
                Err(e) => {
                    // A conflict with the bootstrap hook writing the same
                    // role at start is expected and settles on the retry.
                    failures += 1;
                    if failures >= 3 {
                        tracing::warn!(error = %e, "ClusterRole aggregation keeps failing; retrying");
                    } else {
                        tracing::debug!(error = %e, "ClusterRole aggregation failed; retrying");
                    }
                    failed = true;
                }
            }
        }
        tokio::select! {
            _ = changed.changed() => {}
            _ = tokio::time::sleep(RETRY), if failed => {}
            _ = stop.cancelled() => return,
        }
    }
}

/// The rules an aggregated ClusterRole should have: the rules of every
/// other ClusterRole its selectors match, in name order, without repeats
/// (upstream's ClusterRoleAggregationController.syncClusterRole).
pub fn aggregated_rules(role: &Value, all: &[Value]) -> Option<Vec<Value>> {
    let selectors = role["aggregationRule"]["clusterRoleSelectors"].as_array()?;
    let own = s(&role["metadata"], "name");
    let mut matched: Vec<&Value> = all
        .iter()
        .filter(|cr| s(&cr["metadata"], "name") != own)
        .filter(|cr| {
            selectors.iter().any(|sel| {
                crate::registry::helpers::selector_matches(sel, &cr["metadata"]["labels"])
                    .unwrap_or(false)
            })
        })
        .collect();
    matched.sort_by(|a, b| s(&a["metadata"], "name").cmp(s(&b["metadata"], "name")));
    let mut out: Vec<Value> = Vec::new();
    let mut seen: Vec<PolicyRule> = Vec::new();
    for cr in matched {
        for rule in cr["rules"].as_array().into_iter().flatten() {
            let parsed = PolicyRule::from_json(rule);
            if !seen.contains(&parsed) {
                seen.push(parsed);
                out.push(rule.clone());
            }
        }
    }
    Some(out)
}

/// Writes the aggregated rules of every aggregated ClusterRole that is not
/// current. Aggregations of aggregations converge in memory first, so a
/// change reaches `admin` through `edit` and `view` in one pass.
async fn aggregate(registries: &Registries, cluster_roles: &[Value]) -> Result<(), String> {
    if !cluster_roles
        .iter()
        .any(|cr| !cr["aggregationRule"].is_null())
    {
        return Ok(());
    }
    let mut state: Vec<Value> = cluster_roles.to_vec();
    let mut changed: Vec<usize> = Vec::new();
    for _ in 0..10 {
        let mut any = false;
        for i in 0..state.len() {
            let Some(rules) = aggregated_rules(&state[i], &state) else {
                continue;
            };
            let current = PolicyRule::list_from(&state[i]);
            let wanted: Vec<PolicyRule> = rules.iter().map(PolicyRule::from_json).collect();
            if current != wanted {
                state[i]["rules"] = Value::Array(rules);
                if !changed.contains(&i) {
                    changed.push(i);
                }
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    if changed.is_empty() {
        return Ok(());
    }
    let reg = registries
        .get(GROUP, "v1", "clusterroles")
        .ok_or("clusterroles are not served")?;
    let opts = WriteOptions {
        field_manager: Some("clusterrole-aggregation-controller".into()),
        user: loopback_user(),
        ..Default::default()
    };
    let mut failed = Vec::new();
    for i in changed {
        let name = s(&state[i]["metadata"], "name").to_string();
        match reg.update("", &name, state[i].clone(), None, &opts).await {
            Ok(_) => tracing::debug!(clusterrole = %name, "aggregated rules"),
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "updating aggregated clusterroles: {}",
            failed.join("; ")
        ))
    }
}

// ---- escalation checks (upstream's pkg/registry/rbac/validation) ----

/// upstream's BreakdownRule: one verb, group, resource and name per rule.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                if rule.resource_names.is_empty() {
                    out.push(PolicyRule {
                        api_groups: vec![group.clone()],
                        resources: vec![resource.clone()],
                        verbs: vec![verb.clone()],
                        ..Default::default()
                    });
                } else {
                    for name in &rule.resource_names {
                        out.push(PolicyRule {
                            api_groups: vec![group.clone()],
                            resources: vec![resource.clone()],
                            verbs: vec![verb.clone()],
                            resource_names: vec![name.clone()],
                            ..Default::default()
                        });
                    }
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: vec![url.clone()],
                verbs: vec![verb.clone()],
                ..Default::default()
            });
        }
    }
    out
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| set.contains(w))
}

fn resource_covers_all(set: &[String], wanted: &[String]) -> bool {
    if set.iter().any(|r| r == "*") || has_all(set, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        if set.contains(path) {
            return true;
        }
        match path.split_once('/') {
            Some((_, sub)) => set.iter().any(|r| *r == format!("*/{sub}")),
            None => false,
        }
    })
}

fn non_resource_url_covers(owner: &str, sub: &str) -> bool {
    owner == sub
        || owner
            .strip_suffix('*')
            .is_some_and(|p| sub.starts_with(p.trim_end_matches('*')))
}

/// upstream's ruleCovers: `owner` may hold several of everything, `sub` at
/// most one of each.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = owner.verbs.iter().any(|v| v == "*") || has_all(&owner.verbs, &sub.verbs);
    let groups =
        owner.api_groups.iter().any(|g| g == "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resource_covers_all(&owner.resources, &sub.resources);
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| non_resource_url_covers(o, path))
    });
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty() || has_all(&owner.resource_names, &sub.resource_names)
    };
    verbs && groups && resources && names && urls
}

/// upstream's Covers: whether `owner` rules cover every `servant` rule,
/// and the broken-down rules they do not.
pub fn covers(owner: &[PolicyRule], servant: &[PolicyRule]) -> (bool, Vec<PolicyRule>) {
    let missing: Vec<PolicyRule> = servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect();
    (missing.is_empty(), missing)
}

/// upstream's CompactRules: simple rules (one group, one resource, at most
/// one name, nothing else) that differ only by verb become one.
pub fn compact(rules: &[PolicyRule]) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for r in rules {
        let is_simple = r.resource_names.len() <= 1
            && r.non_resource_urls.is_empty()
            && r.api_groups.len() == 1
            && r.resources.len() == 1;
        if !is_simple {
            out.push(r.clone());
            continue;
        }
        match simple.iter_mut().find(|x| {
            x.api_groups == r.api_groups
                && x.resources == r.resources
                && x.resource_names == r.resource_names
        }) {
            Some(existing) => {
                for v in &r.verbs {
                    if !existing.verbs.contains(v) {
                        existing.verbs.push(v.clone());
                    }
                }
            }
            None => simple.push(r.clone()),
        }
    }
    out.extend(simple);
    out
}

/// upstream's ConfirmNoEscalation: `Err` is the message of the Forbidden.
pub fn confirm_no_escalation(
    index: &Index,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owner, errors) = index.rules_for(user, namespace);
    let (ok, missing) = covers(&owner, rules);
    if ok {
        return Ok(());
    }
    let mut lines: Vec<String> = compact(&missing)
        .iter()
        .map(PolicyRule::compact_string)
        .collect();
    lines.sort();
    lines.dedup();
    let mut msg = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        go_quote_list(&user.groups),
        lines.join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(", ")));
    }
    Err(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP};

    fn rule(v: Value) -> PolicyRule {
        PolicyRule::from_json(&v)
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn res<'a>(
        u: &'a UserInfo,
        verb: &'a str,
        ns: &'a str,
        resource: &'a str,
        sub: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            user: Some(u),
            verb,
            resource_request: true,
            api_group: "",
            namespace: ns,
            resource,
            subresource: sub,
            name,
            ..Default::default()
        }
    }

    #[test]
    fn rule_matching() {
        let u = user("u", &[]);
        let r = rule(
            json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"]}),
        );
        assert!(r.allows(&res(&u, "get", "n", "pods", "", "p")));
        assert!(r.allows(&res(&u, "list", "n", "pods", "", "")));
        assert!(!r.allows(&res(&u, "delete", "n", "pods", "", "p")));
        assert!(r.allows(&res(&u, "get", "n", "pods", "log", "p")));
        assert!(!r.allows(&res(&u, "get", "n", "pods", "exec", "p")));
        assert!(!r.allows(&res(&u, "get", "n", "secrets", "", "")));
        let mut apps = res(&u, "get", "n", "pods", "", "p");
        apps.api_group = "apps";
        assert!(!r.allows(&apps));

        let star = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        assert!(star.allows(&apps));
        assert!(star.allows(&res(&u, "escalate", "", "clusterroles", "", "x")));

        let any_status =
            rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]}));
        assert!(any_status.allows(&res(&u, "get", "n", "pods", "status", "p")));
        assert!(any_status.allows(&res(&u, "get", "n", "services", "status", "s")));
        assert!(!any_status.allows(&res(&u, "get", "n", "pods", "", "p")));
        assert!(!any_status.allows(&res(&u, "get", "n", "pods", "log", "p")));
        // upstream has no `resource/*` wildcard: it names a subresource "*".
        let pods_any = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]}));
        assert!(!pods_any.allows(&res(&u, "get", "n", "pods", "log", "p")));

        let named = rule(
            json!({"verbs": ["get", "list", "update"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cm1"]}),
        );
        assert!(named.allows(&res(&u, "get", "n", "configmaps", "", "cm1")));
        assert!(!named.allows(&res(&u, "get", "n", "configmaps", "", "cm2")));
        // A list has no name, so resourceNames never allow it.
        assert!(!named.allows(&res(&u, "list", "n", "configmaps", "", "")));

        let urls =
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*", "/logs*"]}));
        let path = |p: &'static str| Attributes {
            user: Some(&u),
            verb: "get",
            path: p,
            ..Default::default()
        };
        assert!(urls.allows(&path("/healthz")));
        assert!(!urls.allows(&path("/healthz/etcd")));
        assert!(urls.allows(&path("/apis/apps/v1")));
        assert!(!urls.allows(&path("/apis")));
        assert!(urls.allows(&path("/logs")));
        assert!(urls.allows(&path("/logs/kube.log")));
        assert!(!urls.allows(&Attributes {
            verb: "post",
            ..path("/healthz")
        }));
        let all = rule(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
        assert!(all.allows(&path("/anything")));
        // A resource rule never allows a path, and the other way round.
        assert!(!star.allows(&path("/healthz")));
        assert!(!all.allows(&res(&u, "get", "n", "pods", "", "")));
    }

    fn objects() -> Index {
        let crs = vec![
            json!({"metadata": {"name": "view"}, "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
            json!({"metadata": {"name": "metrics"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]}),
            json!({"metadata": {"name": "public"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/version"]}]}),
        ];
        let roles = vec![
            json!({"metadata": {"name": "pod-reader", "namespace": "ns1"}, "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
        ];
        let crbs = vec![
            json!({"metadata": {"name": "public"}, "roleRef": {"kind": "ClusterRole", "name": "public"}, "subjects": [
                {"kind": "Group", "name": AUTHENTICATED_GROUP}, {"kind": "Group", "name": UNAUTHENTICATED_GROUP}]}),
            json!({"metadata": {"name": "carol-metrics"}, "roleRef": {"kind": "ClusterRole", "name": "metrics"}, "subjects": [{"kind": "User", "name": "carol"}]}),
            json!({"metadata": {"name": "dangling"}, "roleRef": {"kind": "ClusterRole", "name": "gone"}, "subjects": [{"kind": "User", "name": "carol"}]}),
        ];
        let rbs = vec![
            json!({"metadata": {"name": "alice-pods", "namespace": "ns1"}, "roleRef": {"kind": "Role", "name": "pod-reader"}, "subjects": [{"kind": "User", "name": "alice"}]}),
            json!({"metadata": {"name": "bot-view", "namespace": "ns1"}, "roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "ServiceAccount", "name": "bot"}]}),
            json!({"metadata": {"name": "bob-metrics", "namespace": "ns1"}, "roleRef": {"kind": "ClusterRole", "name": "metrics"}, "subjects": [{"kind": "User", "name": "bob"}]}),
        ];
        Index::build(&crs, &roles, &crbs, &rbs)
    }

    #[test]
    fn bindings_grant_where_they_are() {
        let idx = objects();
        let alice = user("alice", &[AUTHENTICATED_GROUP]);
        assert_eq!(
            idx.authorize(&res(&alice, "list", "ns1", "pods", "", "")),
            Decision::Allow(
                "RBAC: allowed by RoleBinding \"alice-pods/ns1\" of Role \"pod-reader\" to User \"alice\"".into()
            )
        );
        assert_eq!(
            idx.authorize(&res(&alice, "list", "ns2", "pods", "", "")),
            Decision::NoOpinion
        );
        assert_eq!(
            idx.authorize(&res(&alice, "delete", "ns1", "pods", "", "p")),
            Decision::NoOpinion
        );
        // All namespaces (a cluster-wide list) is not granted by a RoleBinding.
        assert_eq!(
            idx.authorize(&res(&alice, "list", "", "pods", "", "")),
            Decision::NoOpinion
        );

        let bot = user(
            "system:serviceaccount:ns1:bot",
            &["system:serviceaccounts", AUTHENTICATED_GROUP],
        );
        assert_eq!(
            idx.authorize(&res(&bot, "get", "ns1", "pods", "", "p")),
            Decision::Allow(
                "RBAC: allowed by RoleBinding \"bot-view/ns1\" of ClusterRole \"view\" to ServiceAccount \"bot/ns1\"".into()
            )
        );
        let other_bot = user("system:serviceaccount:ns2:bot", &[AUTHENTICATED_GROUP]);
        assert_eq!(
            idx.authorize(&res(&other_bot, "get", "ns1", "pods", "", "p")),
            Decision::NoOpinion
        );

        let path = |u: &'static UserInfo, p: &'static str| Attributes {
            user: Some(u),
            verb: "get",
            path: p,
            ..Default::default()
        };
        let carol: &'static UserInfo = Box::leak(Box::new(user("carol", &[AUTHENTICATED_GROUP])));
        let bob: &'static UserInfo = Box::leak(Box::new(user("bob", &[AUTHENTICATED_GROUP])));
        let anon: &'static UserInfo = Box::leak(Box::new(UserInfo::anonymous()));
        assert_eq!(
            idx.authorize(&path(carol, "/metrics")),
            Decision::Allow("RBAC: allowed by ClusterRoleBinding \"carol-metrics\" of ClusterRole \"metrics\" to User \"carol\"".into())
        );
        // nonResourceURLs only come from ClusterRoleBindings.
        assert_eq!(idx.authorize(&path(bob, "/metrics")), Decision::NoOpinion);
        assert!(matches!(
            idx.authorize(&path(anon, "/healthz")),
            Decision::Allow(_)
        ));
        assert_eq!(idx.authorize(&path(anon, "/metrics")), Decision::NoOpinion);

        let (rules, errors) = idx.rules_for(carol, "ns1");
        assert_eq!(
            errors,
            ["clusterrole.rbac.authorization.k8s.io \"gone\" not found"]
        );
        let (r, n) = rules_json(&rules);
        assert!(r.is_empty());
        assert_eq!(n.len(), 2);
        let (rules, _) = idx.rules_for(&alice, "ns1");
        let (r, _) = rules_json(&rules);
        assert_eq!(
            r,
            vec![json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]})]
        );
    }

    #[test]
    fn aggregation_unions_selected_roles() {
        let all = vec![
            json!({"metadata": {"name": "view", "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
                   "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}}]}}),
            json!({"metadata": {"name": "b-extra", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                   "rules": [{"verbs": ["get"], "apiGroups": ["x.io"], "resources": ["widgets"]}, {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
            json!({"metadata": {"name": "a-base", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                   "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
            json!({"metadata": {"name": "other"}, "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}),
        ];
        let got = aggregated_rules(&all[0], &all).expect("aggregated");
        assert_eq!(
            got,
            vec![
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
                json!({"verbs": ["get"], "apiGroups": ["x.io"], "resources": ["widgets"]}),
            ]
        );
        assert!(aggregated_rules(&all[1], &all).is_none());
    }

    #[test]
    fn covering_and_messages() {
        let owner = vec![
            rule(
                json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "*/status"]}),
            ),
            rule(
                json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a", "b"]}),
            ),
            rule(json!({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]})),
        ];
        let ok = |r: Value| covers(&owner, &[rule(r)]).0;
        assert!(ok(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
        ));
        assert!(ok(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]})
        ));
        assert!(ok(
            json!({"verbs": ["list"], "apiGroups": [""], "resources": ["deployments/status"]})
        ));
        assert!(!ok(
            json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]})
        ));
        assert!(!ok(
            json!({"verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]})
        ));
        assert!(ok(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]})
        ));
        assert!(!ok(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]})
        ));
        assert!(ok(
            json!({"verbs": ["get"], "nonResourceURLs": ["/apis/apps"]})
        ));
        assert!(!ok(json!({"verbs": ["get"], "nonResourceURLs": ["/api"]})));
        let admin = vec![rule(
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
        )];
        assert!(
            covers(
                &admin,
                &[rule(
                    json!({"verbs": ["x"], "apiGroups": ["y"], "resources": ["z/w"]})
                )]
            )
            .0
        );
        assert!(
            !covers(
                &admin,
                &[rule(json!({"verbs": ["get"], "nonResourceURLs": ["/x"]}))]
            )
            .0
        );

        let (_, missing) = covers(
            &owner,
            &[rule(
                json!({"verbs": ["get", "delete", "watch"], "apiGroups": [""], "resources": ["pods", "secrets"]}),
            )],
        );
        let mut lines: Vec<String> = compact(&missing)
            .iter()
            .map(PolicyRule::compact_string)
            .collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"watch\"]}",
                "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\" \"watch\"]}",
            ]
        );
    }

    #[test]
    fn escalation_message_as_upstream() {
        let idx = objects();
        let alice = user("alice", &["devs", AUTHENTICATED_GROUP]);
        let want = [rule(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
        )];
        assert!(confirm_no_escalation(&idx, &alice, "ns1", &want).is_ok());
        assert_eq!(
            confirm_no_escalation(&idx, &alice, "ns2", &want),
            Err("user \"alice\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}".into())
        );
    }
}
