//! The rule index RBAC decides from: the four lists as of one rebuild
//! ([`Index`], with upstream's VisitRulesFor, Authorize and RulesFor), and
//! the [`SharedIndex`] the refresher publishes it through.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use serde_json::Value;

use super::bindings::{Binding, Source};
use super::{s, PolicyRule, GROUP};
use crate::auth::authorizer::{Attributes, Decision};
use crate::auth::UserInfo;
use crate::registry::Registries;

/// Everything RBAC decides from, as of one rebuild.
#[derive(Debug, Default)]
pub struct Index {
    cluster_roles: HashMap<String, Vec<PolicyRule>>,
    roles: HashMap<(String, String), Vec<PolicyRule>>,
    cluster_role_bindings: Vec<Binding>,
    role_bindings: HashMap<String, Vec<Binding>>,
    /// The revision of each of the four resources ([`PLURALS`] order) the
    /// index was built from.
    pub(super) revs: [i64; 4],
}
/// The four resources the index is built from, in [`Index`]'s order.
pub(super) const PLURALS: [&str; 4] = [
    "clusterroles",
    "roles",
    "clusterrolebindings",
    "rolebindings",
];

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
