//! The key layout: which resource a key names (upstream's
//! `<prefix>/<path>/<namespace>/<name>`), and the key ranges and checks a
//! filter becomes (the `Plan`).

use super::super::backend::prefix_end;
use super::super::encryption::EncryptionConfig;
use super::DumpError;
use crate::api::catalog::Catalog;

/// A resource's key path below the prefix and what it stores.
#[derive(Debug, Clone)]
struct StoragePath {
    path: String,
    group: String,
    plural: String,
    /// Every name the resource answers to on the command line.
    names: Vec<String>,
    namespaced: bool,
}

/// Maps keys to resources and filters to key ranges, from the catalog's
/// storage paths.
#[derive(Debug, Clone)]
pub struct KeyLayout {
    prefix: String,
    /// Longest path first, so `services/specs` wins over a `services`.
    paths: Vec<StoragePath>,
}

/// What a key names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyInfo {
    pub group: String,
    pub resource: String,
    pub namespace: String,
    pub name: String,
}

impl KeyInfo {
    /// `configmaps`, `deployments.apps`, as kubectl names resources.
    pub fn resource_name(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

impl KeyLayout {
    /// `prefix` is the storage prefix (`/registry`), without a trailing slash.
    pub fn new(catalog: &Catalog, prefix: &str) -> KeyLayout {
        let mut paths: Vec<StoragePath> = Vec::new();
        for r in catalog.all_stored().iter().filter(|r| r.is_stored()) {
            let mut names = vec![
                r.plural.clone(),
                r.singular.clone(),
                r.kind.to_ascii_lowercase(),
            ];
            names.extend(r.short_names.iter().cloned());
            // Several group versions share one path (events and
            // events.k8s.io events, autoscaling v1 and v2): the group of
            // the storage version names the key.
            let entry = StoragePath {
                path: r.storage_path.clone(),
                group: r.group.clone(),
                plural: r.plural.clone(),
                names,
                namespaced: r.namespaced,
            };
            match paths.iter_mut().find(|p| {
                p.path == entry.path && p.group == entry.group && p.plural == entry.plural
            }) {
                Some(p) => p.names.extend(entry.names),
                None => paths.push(entry),
            }
        }
        // The storage group's entry first among those sharing a path.
        let storage_groups: Vec<(String, String)> = catalog
            .all()
            .iter()
            .map(|r| (r.storage_path.clone(), r.storage_group.clone()))
            .collect();
        let is_storage_group = |p: &StoragePath| {
            storage_groups
                .iter()
                .any(|(sp, sg)| *sp == p.path && *sg == p.group)
        };
        paths.sort_by(|a, b| {
            b.path
                .len()
                .cmp(&a.path.len())
                .then_with(|| a.path.cmp(&b.path))
                .then_with(|| is_storage_group(b).cmp(&is_storage_group(a)))
        });
        KeyLayout {
            prefix: prefix.trim_end_matches('/').to_string(),
            paths,
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// What a key names. Keys outside the prefix, or of no known
    /// resource, get their first segments as resource and name.
    pub fn parse(&self, key: &str) -> KeyInfo {
        let Some(rest) = key
            .strip_prefix(self.prefix.as_str())
            .and_then(|r| r.strip_prefix('/'))
        else {
            return KeyInfo {
                name: key.to_string(),
                ..Default::default()
            };
        };
        for p in &self.paths {
            if let Some(tail) = rest
                .strip_prefix(p.path.as_str())
                .and_then(|t| t.strip_prefix('/'))
            {
                return with_tail(p.group.clone(), p.plural.clone(), tail);
            }
        }
        // Custom resources: `<group>/<plural>/...`; groups have a dot.
        let mut parts = rest.splitn(2, '/');
        let first = parts.next().unwrap_or_default();
        let after = parts.next().unwrap_or_default();
        if first.contains('.') {
            if let Some((plural, tail)) = after.split_once('/') {
                return with_tail(first.to_string(), plural.to_string(), tail);
            }
        }
        with_tail(String::new(), first.to_string(), after)
    }

    /// The storage paths a `--resource`/`--group` pair selects: each as
    /// (path, namespaced); `None` for namespaced when it is not known.
    fn select(&self, resource: Option<&str>, group: Option<&str>) -> Vec<(String, Option<bool>)> {
        let group = group.map(|g| if g == "core" { "" } else { g });
        let (resource, group) = match resource.map(|r| r.to_ascii_lowercase()) {
            // `deployments.apps`, as kubectl writes it.
            Some(r) if group.is_none() && r.contains('.') => {
                let (n, g) = r.split_once('.').unwrap_or((&r, ""));
                (Some(n.to_string()), Some(g.to_string()))
            }
            r => (r, group.map(String::from)),
        };
        let mut out: Vec<(String, Option<bool>)> = Vec::new();
        for p in &self.paths {
            let group_fits = group.as_deref().is_none_or(|g| p.group == g);
            let name_fits = resource
                .as_deref()
                .is_none_or(|r| p.names.iter().any(|n| n == r));
            if group_fits && name_fits && !out.iter().any(|(path, _)| *path == p.path) {
                out.push((p.path.clone(), Some(p.namespaced)));
            }
        }
        if out.is_empty() {
            // Custom resources and groups kapi does not build in.
            match (&resource, &group) {
                (Some(r), Some(g)) if !g.is_empty() => out.push((format!("{g}/{r}"), None)),
                (None, Some(g)) if !g.is_empty() => out.push((g.clone(), None)),
                _ => {}
            }
        }
        out.sort();
        out
    }
}

fn with_tail(group: String, resource: String, tail: &str) -> KeyInfo {
    let (namespace, name) = match tail.split_once('/') {
        Some((ns, name)) if !name.contains('/') => (ns.to_string(), name.to_string()),
        _ => (String::new(), tail.to_string()),
    };
    KeyInfo {
        group,
        resource,
        namespace,
        name,
    }
}

/// What to dump.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub resource: Option<String>,
    pub group: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// A raw key prefix (absolute: `/registry/configmaps/default/`).
    pub prefix: Option<String>,
}

/// Key ranges to read, in key order, and the checks each key must pass.
#[derive(Debug, Clone)]
pub struct Plan {
    pub ranges: Vec<(String, String)>,
    filter: Filter,
    pub(super) layout: KeyLayout,
    /// Decrypts values encrypted at rest.
    pub(super) encryption: Option<EncryptionConfig>,
}

impl Plan {
    /// Values encrypted at rest are decrypted with `config`'s keys.
    pub fn with_encryption(mut self, config: EncryptionConfig) -> Plan {
        self.encryption = Some(config);
        self
    }

    pub fn new(layout: KeyLayout, filter: Filter) -> Result<Plan, DumpError> {
        let root = layout.prefix().to_string();
        if let Some(p) = &filter.prefix {
            if !p.starts_with('/') {
                return Err(DumpError::Usage(format!(
                    "invalid value for --prefix: {p:?} must be a key prefix starting with /"
                )));
            }
        }
        let mut ranges: Vec<(String, String)> = Vec::new();
        if filter.resource.is_some() || filter.group.is_some() {
            let selected = layout.select(filter.resource.as_deref(), filter.group.as_deref());
            if selected.is_empty() {
                let what = match (&filter.resource, &filter.group) {
                    (Some(r), _) => {
                        format!("unknown resource {r:?}; a custom resource needs --group")
                    }
                    (None, Some(g)) => format!("unknown group {g:?}"),
                    _ => String::new(),
                };
                return Err(DumpError::Usage(what));
            }
            for (path, namespaced) in selected {
                let base = format!("{root}/{path}/");
                let key = match (&filter.namespace, &filter.name, namespaced) {
                    // One object: exactly its key.
                    (Some(ns), Some(n), Some(true) | None) => Some(format!("{base}{ns}/{n}")),
                    (_, Some(n), Some(false)) => Some(format!("{base}{n}")),
                    _ => None,
                };
                match key {
                    Some(k) => ranges.push((k.clone(), format!("{k}\0"))),
                    None => {
                        let start = match (&filter.namespace, namespaced) {
                            (Some(ns), Some(true) | None) => format!("{base}{ns}/"),
                            _ => base,
                        };
                        let end = prefix_end(&start);
                        ranges.push((start, end));
                    }
                }
            }
        } else {
            let start = filter.prefix.clone().unwrap_or_else(|| format!("{root}/"));
            let end = prefix_end(&start);
            ranges.push((start, end));
        }
        // Both a resource and a raw prefix: read only where they overlap.
        if let Some(p) = &filter.prefix {
            let (ps, pe) = (p.clone(), prefix_end(p));
            ranges = ranges
                .into_iter()
                .map(|(s, e)| (s.max(ps.clone()), e.min(pe.clone())))
                .filter(|(s, e)| s < e)
                .collect();
        }
        ranges.sort();
        ranges.dedup();
        Ok(Plan {
            ranges,
            filter,
            layout,
            encryption: None,
        })
    }

    pub(super) fn accepts(&self, info: &KeyInfo) -> bool {
        let f = &self.filter;
        f.namespace.as_deref().is_none_or(|ns| info.namespace == ns)
            && f.name.as_deref().is_none_or(|n| info.name == n)
    }
}
