//! The catalog: one table of every served resource. Routes, discovery,
//! OpenAPI and `kapi routes` all read it, so they cannot disagree.
//! Built-ins are entered once at start (from `controlplane::builtin`);
//! CRDs and APIServices add and remove entries at run time.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A subresource as the static table declares it, e.g. `deployments/scale`
/// served as autoscaling/v1 `Scale`.
#[derive(Debug, Clone, Copy)]
pub struct SubDef {
    pub name: &'static str,
    /// Group, version and kind of the subresource's object ("" group and
    /// version: the parent's).
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub verbs: &'static [&'static str],
}

/// Round-trips a JSON object through its `k8s-openapi` type: a decode
/// failure is a malformed object; unknown fields are dropped as upstream
/// drops them.
pub type TypedCodec = fn(&serde_json::Value) -> Result<serde_json::Value, String>;

/// The typed round trip for `T`.
pub fn typed<T: DeserializeOwned + Serialize>(
    v: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    // Read from the borrowed value: no copy of the object to consume.
    let t = T::deserialize(v).map_err(|e| e.to_string())?;
    serde_json::to_value(t).map_err(|e| e.to_string())
}

/// Adds `T`'s schema to a generator and returns the reference to it.
pub type SchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

pub fn schema_of<T: schemars::JsonSchema>(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    g.subschema_for::<T>()
}

/// One built-in resource of one group version, as upstream serves it by default.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinDef {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub namespaced: bool,
    /// Verbs of the main resource, as discovery lists them.
    pub verbs: &'static [&'static str],
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub subresources: &'static [SubDef],
    /// Key path below the storage prefix, as upstream lays it out
    /// (`pods`, `services/specs`, `deployments`, `ingress`); "" for
    /// resources that are never stored (reviews).
    pub storage_path: &'static str,
    /// `group/version` objects are stored as when several versions are
    /// served (e.g. `autoscaling/v2`); "" means this version.
    pub storage_version: &'static str,
    /// Field selector keys beyond metadata.name and metadata.namespace.
    pub selectable_fields: &'static [&'static str],
    pub codec: Option<TypedCodec>,
    /// The OpenAPI schema of the kind.
    pub schema: Option<SchemaFn>,
}

/// Which server in the chain answers for a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Owner {
    KubeApiserver,
    Apiextensions,
    Aggregator,
}

/// A served subresource at run time.
#[derive(Debug, Clone)]
pub struct Subresource {
    pub name: String,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub verbs: Vec<String>,
}

/// A served resource at run time (built-in or custom).
#[derive(Debug, Clone)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub list_kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub subresources: Vec<Subresource>,
    pub storage_path: String,
    pub storage_group: String,
    pub storage_version: String,
    pub selectable_fields: Vec<String>,
    pub codec: Option<TypedCodec>,
    pub schema: Option<SchemaFn>,
    pub owner: Owner,
    /// For custom resources: what their CRD says about this version.
    pub custom: Option<Arc<CustomInfo>>,
    /// For resources of an aggregated API server: the APIService whose
    /// backend serves them (the aggregator proxies every request).
    pub proxy: Option<Arc<ProxyInfo>>,
    /// Its routes, derived from the fields above on first use ([`Resource::routes`]).
    pub routes: crate::api::routes::RouteCache,
}

/// A resource served by an aggregated API server, as its discovery lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyInfo {
    /// The APIService's name (`v1alpha1.wardle.example.com`).
    pub api_service: String,
}

/// `additionalPrinterColumns` of a CRD version.
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    pub name: String,
    pub kind: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
    pub json_path: String,
}

/// `subresources.scale` of a CRD version.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleInfo {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    pub label_selector_path: Option<String>,
}

/// One served version of a CustomResourceDefinition.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomInfo {
    pub crd_name: String,
    /// `openAPIV3Schema` of this version.
    pub schema: Option<serde_json::Value>,
    pub status: bool,
    pub scale: Option<ScaleInfo>,
    pub printer_columns: Vec<PrinterColumn>,
    /// The version objects are stored in.
    pub storage_version: String,
    /// `spec.conversion` of the CRD.
    pub conversion: serde_json::Value,
    /// `selectableFields` of this version, as field paths (`spec.color`).
    pub selectable_fields: Vec<String>,
    /// `openAPIV3Schema` of every version of the CRD, served or not, by
    /// name: an object converted to a version is pruned by that version's
    /// schema, as upstream's storage codec does.
    pub schemas: Arc<BTreeMap<String, serde_json::Value>>,
}

impl Resource {
    pub fn from_builtin(d: &BuiltinDef) -> Resource {
        let (sg, sv) = match d.storage_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None if d.storage_version.is_empty() => (d.group.to_string(), d.version.to_string()),
            None => (String::new(), d.storage_version.to_string()),
        };
        let owner = match d.group {
            "apiextensions.k8s.io" => Owner::Apiextensions,
            "apiregistration.k8s.io" => Owner::Aggregator,
            _ => Owner::KubeApiserver,
        };
        Resource {
            group: d.group.into(),
            version: d.version.into(),
            kind: d.kind.into(),
            list_kind: format!("{}List", d.kind),
            plural: d.plural.into(),
            singular: d.singular.into(),
            namespaced: d.namespaced,
            verbs: d.verbs.iter().map(|s| s.to_string()).collect(),
            short_names: d.short_names.iter().map(|s| s.to_string()).collect(),
            categories: d.categories.iter().map(|s| s.to_string()).collect(),
            subresources: d
                .subresources
                .iter()
                .map(|s| Subresource {
                    name: s.name.into(),
                    group: if s.kind.is_empty() || s.group.is_empty() && s.version.is_empty() {
                        d.group.into()
                    } else {
                        s.group.into()
                    },
                    version: if s.version.is_empty() {
                        d.version.into()
                    } else {
                        s.version.into()
                    },
                    kind: if s.kind.is_empty() {
                        d.kind.into()
                    } else {
                        s.kind.into()
                    },
                    verbs: s.verbs.iter().map(|v| v.to_string()).collect(),
                })
                .collect(),
            storage_path: d.storage_path.into(),
            storage_group: sg,
            storage_version: sv,
            selectable_fields: d.selectable_fields.iter().map(|s| s.to_string()).collect(),
            codec: d.codec,
            schema: d.schema,
            owner,
            custom: None,
            proxy: None,
            routes: Default::default(),
        }
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Every route of this resource, as upstream's installer lays them out
    /// (see [`crate::api::routes`]).
    pub fn routes(&self) -> &[crate::api::routes::Route] {
        self.routes.get_or_build(self)
    }

    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    pub fn subresource(&self, name: &str) -> Option<&Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }

    /// Whether objects are kept in storage (reviews are not).
    pub fn is_stored(&self) -> bool {
        !self.storage_path.is_empty()
    }
}

/// The live table of served resources, keyed by group, version and plural.
#[derive(Debug, Clone)]
pub struct Catalog {
    inner: Arc<RwLock<CatalogInner>>,
    /// The generation, for those who follow resources coming and going.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            inner: Arc::default(),
            changes: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }
}

#[derive(Debug, Default)]
struct CatalogInner {
    by_gvr: BTreeMap<(String, String, String), Arc<Resource>>,
    /// The same entries hashed: every request looks its resource up (once
    /// per server it passes), and a search of the ordered map compares
    /// about twenty keys of three strings each (3% of a GET's time).
    hashed: GvrMap<Arc<Resource>>,
    /// Groups in the order they were first added: built-ins in upstream's
    /// priority order, then custom groups as they come.
    groups: Vec<String>,
    /// Switched off by `--runtime-config`: not served over HTTP (no
    /// discovery, 404), yet still stored and used by kapi's own
    /// controllers, which reach storage directly.
    hidden: std::collections::HashSet<(String, String, String)>,
    generation: u64,
}

/// A group/version/resource key, owned or borrowed, so that a map keyed by
/// `(String, String, String)` (the catalog's, the registries') can be
/// searched on every request without building a key of three `String`s:
/// `map.get(&(group, version, plural) as &dyn GvrKey)`.
pub trait GvrKey {
    fn parts(&self) -> (&str, &str, &str);
}

impl GvrKey for (String, String, String) {
    fn parts(&self) -> (&str, &str, &str) {
        (&self.0, &self.1, &self.2)
    }
}

impl GvrKey for (&str, &str, &str) {
    fn parts(&self) -> (&str, &str, &str) {
        *self
    }
}

/// A map by group/version/resource searched on the request path: hashed
/// with foldhash, which is several times quicker than the standard
/// library's SipHash on keys this short; they come from the catalog and
/// CRDs, not from clients, so a flooding attack has nothing to aim at.
pub type GvrMap<V> =
    std::collections::HashMap<(String, String, String), V, foldhash::fast::FixedState>;

impl<'a> std::borrow::Borrow<dyn GvrKey + 'a> for (String, String, String) {
    fn borrow(&self) -> &(dyn GvrKey + 'a) {
        self
    }
}

impl PartialEq for dyn GvrKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn GvrKey + '_ {}

/// The same hash as the owned tuple's (its fields in order), as `Borrow`
/// requires.
impl std::hash::Hash for dyn GvrKey + '_ {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state)
    }
}

impl PartialOrd for dyn GvrKey + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The same order as the owned tuple's, as `Borrow` requires.
impl Ord for dyn GvrKey + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.parts().cmp(&other.parts())
    }
}

impl CatalogInner {
    fn served(&self) -> impl Iterator<Item = (&(String, String, String), &Arc<Resource>)> {
        self.by_gvr
            .iter()
            .filter(|(k, _)| !self.hidden.contains(*k))
    }
}

impl Catalog {
    pub fn add(&self, r: Resource) {
        let mut inner = self.inner.write();
        if !inner.groups.contains(&r.group) {
            inner.groups.push(r.group.clone());
        }
        let key = (r.group.clone(), r.version.clone(), r.plural.clone());
        let r = Arc::new(r);
        inner.hashed.insert(key.clone(), r.clone());
        inner.by_gvr.insert(key, r);
        inner.generation += 1;
        self.changes.send_replace(inner.generation);
    }

    /// Groups that have at least one served resource, in priority order.
    pub fn group_order(&self) -> Vec<String> {
        let inner = self.inner.read();
        let mut groups: Vec<String> = inner
            .groups
            .iter()
            .filter(|g| inner.served().any(|((rg, _, _), _)| rg == *g))
            .cloned()
            .collect();
        // Built-in groups come in their priority order; the others (custom
        // resources' groups, all at priority 1000) follow by name, as
        // upstream breaks ties, not by when they were created.
        let builtin = |g: &String| crate::api::builtin::BUILTINS.iter().any(|b| b.group == g);
        let first_other = groups
            .iter()
            .position(|g| !builtin(g))
            .unwrap_or(groups.len());
        let (_, others) = groups.split_at_mut(first_other);
        if others.iter().all(|g| !builtin(g)) {
            others.sort();
        }
        groups
    }

    /// Stops serving a resource over HTTP (`--runtime-config`); it stays
    /// in storage for kapi's own use, see [`Catalog::get_stored`].
    pub fn hide(&self, group: &str, version: &str, plural: &str) {
        let mut inner = self.inner.write();
        inner
            .hidden
            .insert((group.to_string(), version.to_string(), plural.to_string()));
        inner.generation += 1;
        self.changes.send_replace(inner.generation);
    }

    pub fn remove(&self, group: &str, version: &str, plural: &str) {
        let mut inner = self.inner.write();
        let key: &dyn GvrKey = &(group, version, plural);
        inner.hashed.remove(key);
        inner.by_gvr.remove(key);
        inner.generation += 1;
        self.changes.send_replace(inner.generation);
    }

    /// A resource served over HTTP.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        let inner = self.inner.read();
        // Every request looks a resource up (twice: aggregator and
        // kube-apiserver), so the common case borrows its key.
        if !inner.hidden.is_empty()
            && inner
                .hidden
                .contains(&(group.to_string(), version.to_string(), plural.to_string()))
        {
            return None;
        }
        inner
            .hashed
            .get(&(group, version, plural) as &dyn GvrKey)
            .cloned()
    }

    /// A resource kapi stores, served or not: for its own controllers.
    pub fn get_stored(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        self.inner
            .read()
            .hashed
            .get(&(group, version, plural) as &dyn GvrKey)
            .cloned()
    }

    /// Every served resource, in group, version, plural order.
    pub fn all(&self) -> Vec<Arc<Resource>> {
        self.inner.read().served().map(|(_, r)| r.clone()).collect()
    }

    /// Every stored resource, served or not.
    pub fn all_stored(&self) -> Vec<Arc<Resource>> {
        self.inner.read().by_gvr.values().cloned().collect()
    }

    /// Whether any resource is served in this group version.
    pub fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.inner
            .read()
            .served()
            .any(|((g, v, _), _)| g == group && v == version)
    }

    /// Changes each time an entry is added or removed (for discovery ETags).
    pub fn generation(&self) -> u64 {
        self.inner.read().generation
    }

    /// Tells of every change of the generation.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::GvrKey;
    use std::collections::{BTreeMap, HashMap};

    /// `Borrow` lookups find an owned key only if the borrowed form
    /// hashes and orders as the owned tuple does.
    #[test]
    fn borrowed_keys_find_owned_ones() {
        let owned = |g: &str, v: &str, p: &str| (g.to_string(), v.to_string(), p.to_string());
        let mut hashed = HashMap::new();
        let mut ordered = BTreeMap::new();
        for (i, (g, v, p)) in [
            ("", "v1", "pods"),
            ("apps", "v1", "deployments"),
            ("apps", "v1", "ab"),
        ]
        .into_iter()
        .enumerate()
        {
            hashed.insert(owned(g, v, p), i);
            ordered.insert(owned(g, v, p), i);
        }
        for (i, key) in [
            ("", "v1", "pods"),
            ("apps", "v1", "deployments"),
            ("apps", "v1", "ab"),
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(hashed.get(key as &dyn GvrKey), Some(&i));
            assert_eq!(ordered.get(key as &dyn GvrKey), Some(&i));
        }
        let missing = ("apps", "v1", "pods");
        assert_eq!(hashed.get(&missing as &dyn GvrKey), None);
        assert_eq!(ordered.get(&missing as &dyn GvrKey), None);
    }
}
