//! The dependency graph (upstream's GraphBuilder): one node per object
//! uid, kept incrementally from the metadata informers' events, with
//! "virtual" nodes for owners that dependents name but no informer has
//! shown yet. Processing an event returns the work it calls for, which
//! the collector's workers confirm against live objects before writing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;

use crate::api::catalog::Resource;
use crate::registry::{conversion, meta};

/// `metav1.FinalizerDeleteDependents`.
pub(super) const FOREGROUND: &str = "foregroundDeletion";
/// `metav1.FinalizerOrphanDependents`.
pub(super) const ORPHAN: &str = "orphan";

/// An owner reference, as much of it as the collector reads.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    /// `blockOwnerDeletion`.
    pub block: bool,
}

/// The metadata the collector reads of an object.
#[derive(Debug, Clone, Default)]
pub(super) struct Meta {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub resource_version: String,
    pub deleting: bool,
    pub finalizers: Vec<String>,
    pub refs: Vec<OwnerRef>,
}

impl Meta {
    pub fn of(v: &Value) -> Meta {
        let text = |r: &Value, f: &str| r[f].as_str().unwrap_or("").to_string();
        let refs = v["metadata"]["ownerReferences"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| OwnerRef {
                        api_version: text(r, "apiVersion"),
                        kind: text(r, "kind"),
                        name: text(r, "name"),
                        uid: text(r, "uid"),
                        block: r["blockOwnerDeletion"].as_bool().unwrap_or(false),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Meta {
            namespace: meta::namespace(v).to_string(),
            name: meta::name(v).to_string(),
            uid: meta::str_field(v, "uid").to_string(),
            resource_version: meta::str_field(v, "resourceVersion").to_string(),
            deleting: meta::is_deleting(v),
            finalizers: meta::finalizers(v),
            refs,
        }
    }

    pub fn has(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    /// Deleted in the foreground, waiting for its dependents. With both
    /// finalizers (upstream's apiserver never leaves both) orphaning goes
    /// first, so its dependents are not deleted meanwhile.
    pub fn deleting_dependents(&self) -> bool {
        self.deleting && self.has(FOREGROUND) && !self.has(ORPHAN)
    }

    /// Deleted with its dependents to be orphaned.
    pub fn orphaning(&self) -> bool {
        self.deleting && self.has(ORPHAN)
    }
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// The catalog as the collector reads it.
#[derive(Default)]
pub(super) struct Tables {
    /// (group, version, kind) of every stored resource, for owner references.
    by_kind: HashMap<(String, String, String), Arc<Resource>>,
    /// One served version per stored resource (the storage version when
    /// served, so reading converts nothing), by storage path: what is
    /// watched and written through. Upstream watches resources with
    /// delete, list and watch.
    pub watched: BTreeMap<String, Arc<Resource>>,
}

impl Tables {
    pub fn build(all: &[Arc<Resource>]) -> Tables {
        let mut by_kind = HashMap::new();
        let mut chosen: BTreeMap<String, Arc<Resource>> = BTreeMap::new();
        for r in all {
            if !r.is_stored() {
                continue;
            }
            by_kind.insert(
                (r.group.clone(), r.version.clone(), r.kind.clone()),
                r.clone(),
            );
            if !["delete", "list", "watch"].iter().all(|v| r.has_verb(v)) {
                continue;
            }
            let better = chosen
                .get(&r.storage_path)
                .is_none_or(|c| conversion::needed(c) && !conversion::needed(r));
            if better {
                chosen.insert(r.storage_path.clone(), r.clone());
            }
        }
        Tables {
            by_kind,
            watched: chosen,
        }
    }

    /// Whether the reference's kind is served at its apiVersion.
    pub fn serves_kind(&self, r: &OwnerRef) -> bool {
        let (group, version) = split_api_version(&r.api_version);
        self.by_kind
            .contains_key(&(group.to_string(), version.to_string(), r.kind.clone()))
    }

    /// The resource and namespace of the owner a reference of an object in
    /// `namespace` names. `None`: the kind is not served (upstream retries
    /// such an item and never deletes it) or a cluster-scoped object names a
    /// namespaced owner (invalid; upstream reports it and leaves the item).
    pub fn resolve(&self, r: &OwnerRef, namespace: &str) -> Option<(Arc<Resource>, String)> {
        let (group, version) = split_api_version(&r.api_version);
        let res = self
            .by_kind
            .get(&(group.to_string(), version.to_string(), r.kind.clone()))?;
        match (res.namespaced, namespace.is_empty()) {
            (true, true) => None,
            (true, false) => Some((res.clone(), namespace.to_string())),
            (false, _) => Some((res.clone(), String::new())),
        }
    }
}

/// What the builder saw happen to an object.
#[derive(Debug, Clone)]
pub(super) enum Change {
    /// Added or updated, from a watched resource's informer.
    Observed {
        resource: Arc<Resource>,
        meta: Arc<Meta>,
    },
    Deleted(Arc<Meta>),
    /// A worker found no object behind a virtual node (upstream's virtual
    /// delete event).
    Absent(String),
}

/// Work for the collector's queues, by uid.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Work {
    /// upstream's attemptToDelete queue.
    Attempt(String),
    /// upstream's attemptToOrphan queue.
    Orphan(String),
}

/// A node of the graph.
#[derive(Debug, Clone)]
pub(super) struct Node {
    /// The watched resource and metadata, once an informer showed it.
    pub observed: Option<(Arc<Resource>, Arc<Meta>)>,
    /// How the first dependent named a virtual node (reference, and that
    /// dependent's namespace).
    pub named_as: Option<Box<(OwnerRef, String)>>,
    pub dependents: BTreeSet<String>,
}

impl Node {
    pub fn meta(&self) -> Option<&Arc<Meta>> {
        self.observed.as_ref().map(|(_, m)| m)
    }

    fn deleting_dependents(&self) -> bool {
        self.meta().is_some_and(|m| m.deleting_dependents())
    }
}

#[derive(Default)]
pub(super) struct Graph {
    pub nodes: HashMap<String, Node>,
}

impl Graph {
    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// The dependents of `owner` whose reference to it blocks its deletion.
    pub fn blocking_dependents(&self, owner: &str) -> Vec<(String, Arc<Meta>)> {
        let Some(n) = self.nodes.get(owner) else {
            return Vec::new();
        };
        n.dependents
            .iter()
            .filter_map(|d| {
                let m = self.nodes.get(d)?.meta()?;
                m.refs
                    .iter()
                    .any(|r| r.uid == owner && r.block)
                    .then(|| (d.clone(), m.clone()))
            })
            .collect()
    }

    /// Whether a dependent's reference names the observed owner by its
    /// real coordinates (resource, namespace, name).
    fn matches(tables: &Tables, r: &OwnerRef, dependent_ns: &str, owner: &Node) -> bool {
        let Some((res, meta)) = &owner.observed else {
            return true;
        };
        tables.resolve(r, dependent_ns).is_some_and(|(rr, ns)| {
            rr.storage_path == res.storage_path && ns == meta.namespace && r.name == meta.name
        })
    }

    /// upstream's processGraphChanges for one change.
    pub fn process(&mut self, tables: &Tables, change: Change) -> Vec<Work> {
        let mut work = Vec::new();
        match change {
            Change::Observed { resource, meta } => self.observe(tables, resource, meta, &mut work),
            Change::Deleted(meta) => self.remove(&meta.uid, &mut work),
            Change::Absent(uid) => {
                if self.nodes.get(&uid).is_some_and(|n| n.observed.is_none()) {
                    self.remove(&uid, &mut work);
                }
            }
        }
        work
    }

    fn observe(
        &mut self,
        tables: &Tables,
        resource: Arc<Resource>,
        new: Arc<Meta>,
        work: &mut Vec<Work>,
    ) {
        let uid = new.uid.clone();
        if uid.is_empty() {
            return;
        }
        let previous = self.nodes.get(&uid).map(|n| n.observed.clone());
        let old = match previous {
            None => {
                self.nodes.insert(
                    uid.clone(),
                    Node {
                        observed: Some((resource, new.clone())),
                        named_as: None,
                        dependents: BTreeSet::new(),
                    },
                );
                self.add_to_owners(tables, &new, &new.refs, work);
                None
            }
            Some(None) => {
                // A virtual node is observed: dependents that named it by
                // other coordinates are checked (upstream's identity check).
                let Some(node) = self.nodes.get_mut(&uid) else {
                    return;
                };
                node.observed = Some((resource, new.clone()));
                node.named_as = None;
                let node = node.clone();
                for d in &node.dependents {
                    let Some(dm) = self.nodes.get(d).and_then(Node::meta) else {
                        continue;
                    };
                    let misnamed = dm
                        .refs
                        .iter()
                        .any(|r| r.uid == uid && !Self::matches(tables, r, &dm.namespace, &node));
                    if misnamed {
                        work.push(Work::Attempt(d.clone()));
                    }
                }
                self.add_to_owners(tables, &new, &new.refs, work);
                None
            }
            Some(Some((_, old))) => {
                if let Some(node) = self.nodes.get_mut(&uid) {
                    node.observed = Some((resource, new.clone()));
                }
                let old_uids: BTreeSet<&str> = old.refs.iter().map(|r| r.uid.as_str()).collect();
                let new_uids: BTreeSet<&str> = new.refs.iter().map(|r| r.uid.as_str()).collect();
                let added: Vec<OwnerRef> = new
                    .refs
                    .iter()
                    .filter(|r| !old_uids.contains(r.uid.as_str()))
                    .cloned()
                    .collect();
                self.add_to_owners(tables, &new, &added, work);
                for r in &old.refs {
                    let removed = !new_uids.contains(r.uid.as_str());
                    let unblocked = r.block && new.refs.iter().any(|n| n.uid == r.uid && !n.block);
                    if !removed && !unblocked {
                        continue;
                    }
                    if let Some(owner) = self.nodes.get_mut(&r.uid) {
                        if removed {
                            owner.dependents.remove(&uid);
                        }
                        // A foreground owner may be free to go now.
                        if owner.deleting_dependents() {
                            work.push(Work::Attempt(r.uid.clone()));
                        }
                    }
                    if removed {
                        self.drop_unneeded_virtual(&r.uid);
                    }
                }
                Some(old)
            }
        };
        self.transitions(&uid, old.as_deref(), &new, work);
    }

    /// upstream's addDependentToOwners.
    fn add_to_owners(
        &mut self,
        tables: &Tables,
        dependent: &Meta,
        refs: &[OwnerRef],
        work: &mut Vec<Work>,
    ) {
        let uid = &dependent.uid;
        for r in refs {
            match self.nodes.get_mut(&r.uid) {
                None => {
                    self.nodes.insert(
                        r.uid.clone(),
                        Node {
                            observed: None,
                            named_as: Some(Box::new((r.clone(), dependent.namespace.clone()))),
                            dependents: BTreeSet::from([uid.clone()]),
                        },
                    );
                    // A worker asks storage whether this owner exists.
                    work.push(Work::Attempt(r.uid.clone()));
                }
                Some(owner) => {
                    owner.dependents.insert(uid.clone());
                    let owner = owner.clone();
                    let waiting = owner.deleting_dependents() && !dependent.deleting;
                    if waiting || !Self::matches(tables, r, &dependent.namespace, &owner) {
                        work.push(Work::Attempt(uid.clone()));
                    }
                }
            }
        }
    }

    /// upstream's processTransitions: an owner starting to orphan or to
    /// delete its dependents.
    fn transitions(&self, uid: &str, old: Option<&Meta>, new: &Meta, work: &mut Vec<Work>) {
        if new.orphaning() {
            if !old.is_some_and(Meta::orphaning) {
                work.push(Work::Orphan(uid.to_string()));
            }
            return;
        }
        if new.deleting_dependents() && !old.is_some_and(Meta::deleting_dependents) {
            if let Some(n) = self.nodes.get(uid) {
                work.extend(n.dependents.iter().cloned().map(Work::Attempt));
            }
            work.push(Work::Attempt(uid.to_string()));
        }
    }

    /// Removes a node; its dependents are attempted (their owner is gone),
    /// and so are its foreground owners (one dependent fewer to wait for).
    fn remove(&mut self, uid: &str, work: &mut Vec<Work>) {
        let Some(node) = self.nodes.remove(uid) else {
            return;
        };
        work.extend(node.dependents.iter().cloned().map(Work::Attempt));
        let refs = node.meta().map(|m| m.refs.clone()).unwrap_or_default();
        for r in &refs {
            if let Some(owner) = self.nodes.get_mut(&r.uid) {
                owner.dependents.remove(uid);
                if owner.deleting_dependents() {
                    work.push(Work::Attempt(r.uid.clone()));
                }
            }
            self.drop_unneeded_virtual(&r.uid);
        }
        // Dependents of a virtual node that was never observed keep
        // nothing alive; an observed node with dependents left behind is
        // gone, and the dependents' events no longer find it.
    }

    /// A virtual node nobody names any more is forgotten.
    fn drop_unneeded_virtual(&mut self, uid: &str) {
        if self
            .nodes
            .get(uid)
            .is_some_and(|n| n.observed.is_none() && n.dependents.is_empty())
        {
            self.nodes.remove(uid);
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::api::catalog::Catalog;

    fn tables() -> Tables {
        let catalog = Catalog::default();
        for def in crate::api::builtin::BUILTINS {
            catalog.add(Resource::from_builtin(def));
        }
        Tables::build(&catalog.all_stored())
    }

    fn res(t: &Tables, plural: &str) -> Arc<Resource> {
        t.watched
            .values()
            .find(|r| r.plural == plural)
            .cloned()
            .unwrap_or_else(|| panic!("{plural} not watched"))
    }

    pub(crate) fn oref(
        api_version: &str,
        kind: &str,
        name: &str,
        uid: &str,
        block: bool,
    ) -> OwnerRef {
        OwnerRef {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            block,
        }
    }

    fn meta(ns: &str, name: &str, uid: &str, refs: Vec<OwnerRef>) -> Meta {
        Meta {
            namespace: ns.into(),
            name: name.into(),
            uid: uid.into(),
            resource_version: "1".into(),
            refs,
            ..Default::default()
        }
    }

    fn deleting(mut m: Meta, finalizers: &[&str]) -> Meta {
        m.deleting = true;
        m.finalizers = finalizers.iter().map(|s| s.to_string()).collect();
        m
    }

    fn see(g: &mut Graph, t: &Tables, plural: &str, m: Meta) -> Vec<Work> {
        let mut w = g.process(
            t,
            Change::Observed {
                resource: res(t, plural),
                meta: Arc::new(m),
            },
        );
        w.sort();
        w.dedup();
        w
    }

    fn attempt(uid: &str) -> Work {
        Work::Attempt(uid.into())
    }

    fn rs() -> Meta {
        meta(
            "ns",
            "d-1",
            "rs",
            vec![oref("apps/v1", "Deployment", "d", "dep", true)],
        )
    }

    fn pod() -> Meta {
        meta(
            "ns",
            "d-1-a",
            "pod",
            vec![oref("apps/v1", "ReplicaSet", "d-1", "rs", true)],
        )
    }

    #[test]
    fn the_storage_version_is_watched_once_per_resource() {
        let t = tables();
        let hpas: Vec<_> = t
            .watched
            .values()
            .filter(|r| r.plural == "horizontalpodautoscalers")
            .collect();
        assert_eq!(hpas.len(), 1);
        assert!(!conversion::needed(hpas[0]));
        assert!(t.watched.values().all(|r| r.has_verb("watch")));
    }

    #[test]
    fn nothing_to_do_while_every_owner_exists() {
        let (t, mut g) = (tables(), Graph::default());
        assert!(see(&mut g, &t, "deployments", meta("ns", "d", "dep", vec![])).is_empty());
        assert!(see(&mut g, &t, "replicasets", rs()).is_empty());
        assert!(see(&mut g, &t, "pods", pod()).is_empty());
        assert_eq!(g.blocking_dependents("dep").len(), 1);
        assert_eq!(g.blocking_dependents("rs")[0].0, "pod");
        // An update that changes no reference calls for nothing.
        assert!(see(&mut g, &t, "pods", pod()).is_empty());
    }

    #[test]
    fn an_owner_not_seen_yet_is_a_virtual_node_to_check() {
        let (t, mut g) = (tables(), Graph::default());
        // The dependent first (upstream's virtual node): storage is asked.
        assert_eq!(see(&mut g, &t, "replicasets", rs()), vec![attempt("dep")]);
        assert!(g.node("dep").is_some_and(|n| n.observed.is_none()));
        // Then observed: nothing to do, and the node is real.
        assert!(see(&mut g, &t, "deployments", meta("ns", "d", "dep", vec![])).is_empty());
        assert!(g.node("dep").is_some_and(|n| n.observed.is_some()));
        // A virtual owner confirmed absent goes, and its dependents are attempted.
        let mut g = Graph::default();
        see(&mut g, &t, "replicasets", rs());
        assert_eq!(
            g.process(&t, Change::Absent("dep".into())),
            vec![attempt("rs")]
        );
        assert!(g.node("dep").is_none());
        // An absent report for an observed node changes nothing.
        see(&mut g, &t, "deployments", meta("ns", "d", "dep", vec![]));
        assert!(g.process(&t, Change::Absent("dep".into())).is_empty());
        assert!(g.node("dep").is_some());
    }

    #[test]
    fn an_owner_named_by_other_coordinates_makes_the_dependent_checked() {
        let (t, mut g) = (tables(), Graph::default());
        see(&mut g, &t, "deployments", meta("other", "d", "dep", vec![]));
        assert_eq!(see(&mut g, &t, "replicasets", rs()), vec![attempt("rs")]);
        let (t, mut g) = (tables(), Graph::default());
        see(&mut g, &t, "replicasets", rs());
        assert_eq!(
            see(
                &mut g,
                &t,
                "deployments",
                meta("ns", "other-name", "dep", vec![])
            ),
            vec![attempt("rs")]
        );
    }

    #[test]
    fn deleting_an_owner_attempts_its_dependents() {
        let (t, mut g) = (tables(), Graph::default());
        let d = meta("ns", "d", "dep", vec![]);
        see(&mut g, &t, "deployments", d.clone());
        see(&mut g, &t, "replicasets", rs());
        assert_eq!(
            g.process(&t, Change::Deleted(Arc::new(d))),
            vec![attempt("rs")]
        );
        assert!(g.node("dep").is_none());
    }

    #[test]
    fn foreground_deletion_attempts_dependents_then_the_owner_as_they_go() {
        let (t, mut g) = (tables(), Graph::default());
        let d = meta("ns", "d", "dep", vec![]);
        see(&mut g, &t, "deployments", d.clone());
        see(&mut g, &t, "replicasets", rs());
        see(&mut g, &t, "pods", pod());
        assert_eq!(
            see(
                &mut g,
                &t,
                "deployments",
                deleting(d.clone(), &[FOREGROUND])
            ),
            vec![attempt("dep"), attempt("rs")]
        );
        // Seen again in the same state: no new transition.
        assert!(see(&mut g, &t, "deployments", deleting(d, &[FOREGROUND])).is_empty());
        // The dependent going wakes the waiting owner.
        let mut work = g.process(&t, Change::Deleted(Arc::new(rs())));
        work.sort();
        assert_eq!(work, vec![attempt("dep"), attempt("pod")]);
        assert!(g.blocking_dependents("dep").is_empty());
    }

    #[test]
    fn unblocking_or_dropping_a_reference_wakes_a_foreground_owner() {
        let (t, mut g) = (tables(), Graph::default());
        let d = meta("ns", "d", "dep", vec![]);
        see(&mut g, &t, "deployments", deleting(d, &[FOREGROUND]));
        // A new dependent of a waiting owner is attempted at once.
        assert_eq!(see(&mut g, &t, "replicasets", rs()), vec![attempt("rs")]);
        let unblocked = meta(
            "ns",
            "d-1",
            "rs",
            vec![oref("apps/v1", "Deployment", "d", "dep", false)],
        );
        assert_eq!(
            see(&mut g, &t, "replicasets", unblocked),
            vec![attempt("dep")]
        );
        assert!(g.blocking_dependents("dep").is_empty());
        let released = meta("ns", "d-1", "rs", vec![]);
        assert_eq!(
            see(&mut g, &t, "replicasets", released),
            vec![attempt("dep")]
        );
        assert!(g.node("dep").is_some_and(|n| n.dependents.is_empty()));
    }

    #[test]
    fn orphaning_comes_first() {
        let (t, mut g) = (tables(), Graph::default());
        let d = meta("ns", "d", "dep", vec![]);
        see(&mut g, &t, "deployments", d.clone());
        see(&mut g, &t, "replicasets", rs());
        assert_eq!(
            see(
                &mut g,
                &t,
                "deployments",
                deleting(d, &[ORPHAN, FOREGROUND])
            ),
            vec![Work::Orphan("dep".into())]
        );
    }

    #[test]
    fn owner_scopes() {
        let t = tables();
        let role_ref = oref(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "r",
            "role",
            false,
        );
        // A cluster-scoped owner of a namespaced object.
        let mut g = Graph::default();
        see(&mut g, &t, "clusterroles", meta("", "r", "role", vec![]));
        assert!(see(
            &mut g,
            &t,
            "configmaps",
            meta("ns", "c", "cm", vec![role_ref])
        )
        .is_empty());
        // A namespaced owner named by a cluster-scoped object cannot match:
        // the dependent is attempted (and the worker leaves it alone).
        let mut g = Graph::default();
        see(&mut g, &t, "configmaps", meta("ns", "c", "cm", vec![]));
        let pv = meta(
            "",
            "pv",
            "pv",
            vec![oref("v1", "ConfigMap", "c", "cm", true)],
        );
        assert_eq!(
            see(&mut g, &t, "persistentvolumes", pv),
            vec![attempt("pv")]
        );
        assert!(t
            .resolve(&oref("v1", "ConfigMap", "c", "cm", true), "")
            .is_none());
        assert!(t
            .resolve(&oref("example.com/v1", "Widget", "w", "w", true), "ns")
            .is_none());
    }
}
