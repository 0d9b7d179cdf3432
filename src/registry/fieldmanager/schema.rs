//! How field management sees an object's type: upstream's
//! structured-merge-diff schema (atoms: scalar, list, map), derived from
//!
//! - the OpenAPI schemas of the built-in kinds (`k8s-openapi`, navigated
//!   as strategic merge patch does) with the list and map types of
//!   [`crate::registry::patch::meta`],
//! - a structural schema (a CRD version's `openAPIV3Schema`), or
//! - nothing: upstream's "deduced" type, where maps are granular and lists
//!   atomic (the root's `metadata` is still an `ObjectMeta`).

use std::collections::HashMap;
use std::sync::LazyLock;

use foldhash::fast::FixedState;
use parking_lot::RwLock;
use serde_json::{Map, Value};

use crate::registry::patch::meta::{self, FieldMeta};
use crate::registry::patch::strategic::Node;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The type of the object a field manager works on.
#[derive(Debug, Clone, Copy)]
pub struct Schema<'a> {
    pub(crate) root: Ty<'a>,
}

impl<'a> Schema<'a> {
    /// A built-in kind by OpenAPI definition name
    /// (`io.k8s.api.apps.v1.Deployment`), if kapi has its schema.
    pub fn builtin(type_name: &str) -> Option<Schema<'static>> {
        Node::named(type_name).map(|n| Schema {
            root: Ty::Builtin(n, None),
        })
    }

    /// A custom resource by its structural schema (`openAPIV3Schema`).
    pub fn structural(schema: &'a Value) -> Schema<'a> {
        Schema {
            root: match schema.as_object() {
                Some(s) => Ty::StructuralRoot(s),
                None => Ty::UntypedRoot,
            },
        }
    }

    /// No schema: granular maps, atomic lists.
    pub fn untyped() -> Schema<'static> {
        Schema {
            root: Ty::UntypedRoot,
        }
    }

    /// [`Schema::builtin`] for a known type name, else [`Schema::untyped`].
    pub fn for_type(type_name: &str) -> Schema<'static> {
        Self::builtin(type_name).unwrap_or_else(Self::untyped)
    }

    /// Whether the type has a `status` field (built-in kinds that have one
    /// serve it through a status subresource).
    pub fn has_status(&self) -> bool {
        match self.root {
            Ty::Builtin(n, _) => n
                .schema
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key("status")),
            Ty::StructuralRoot(s) | Ty::Structural(s) => s
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key("status")),
            _ => false,
        }
    }
}

/// The kind of a list: upstream's element relationship and keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// Replaced as a whole.
    Atomic,
    /// Items are scalars, each its own field (`v:`).
    Set,
    /// Items are maps identified by these key fields (`k:`).
    Map(Vec<String>),
}

/// The atom a value is handled as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Atom {
    Scalar,
    List(ListKind),
    /// A struct or a string-keyed map; `atomic` ones are replaced whole.
    Map {
        atomic: bool,
    },
}

/// Where a value sits in the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ty<'a> {
    /// A built-in type, and the metadata of the field that holds it.
    Builtin(Node, Option<&'static FieldMeta>),
    /// A node of a structural schema.
    Structural(&'a Map<String, Value>),
    /// The root of a structural schema (its `metadata` is an `ObjectMeta`).
    StructuralRoot(&'a Map<String, Value>),
    /// No schema: decided by the value.
    Deduced,
    /// The root of an object without schema.
    UntypedRoot,
}

fn deduce(v: Option<&Value>) -> Atom {
    match v {
        Some(Value::Object(_)) => Atom::Map { atomic: false },
        Some(Value::Array(_)) => Atom::List(ListKind::Atomic),
        _ => Atom::Scalar,
    }
}

impl<'a> Ty<'a> {
    /// The atom `v` (absent: the other side's atom decides, see callers)
    /// is handled as.
    pub(crate) fn atom(&self, v: Option<&Value>) -> Atom {
        match *self {
            Ty::Builtin(node, fm) => builtin_atom_remembered(node, fm).unwrap_or_else(|| deduce(v)),
            Ty::Structural(s) | Ty::StructuralRoot(s) => {
                structural_atom(s).unwrap_or_else(|| deduce(v))
            }
            Ty::Deduced | Ty::UntypedRoot => deduce(v),
        }
    }

    /// The type of the value of map key / struct field `key`.
    pub(crate) fn field(&self, key: &str) -> Ty<'a> {
        match *self {
            Ty::Builtin(node, _) => {
                let (child, fm) = node.field(key);
                if child.schema.is_none() {
                    return Ty::Deduced;
                }
                Ty::Builtin(child, fm)
            }
            Ty::StructuralRoot(_) | Ty::UntypedRoot if key == "metadata" => {
                match Node::named(OBJECT_META) {
                    Some(n) => Ty::Builtin(n, None),
                    None => Ty::Deduced,
                }
            }
            Ty::Structural(s) | Ty::StructuralRoot(s) => {
                if let Some(p) = s
                    .get("properties")
                    .and_then(Value::as_object)
                    .and_then(|p| p.get(key))
                    .and_then(Value::as_object)
                {
                    return Ty::Structural(p);
                }
                match s.get("additionalProperties").and_then(Value::as_object) {
                    Some(ap) => Ty::Structural(ap),
                    None => Ty::Deduced,
                }
            }
            Ty::Deduced | Ty::UntypedRoot => Ty::Deduced,
        }
    }

    /// Whether `key` is a declared struct field (not a map key): upstream's
    /// `FindField`.
    pub(crate) fn has_field(&self, key: &str) -> bool {
        let props = match *self {
            Ty::Builtin(node, _) => node.schema.and_then(|s| s.get("properties")),
            Ty::Structural(s) => s.get("properties"),
            Ty::StructuralRoot(s) => {
                if matches!(key, "apiVersion" | "kind" | "metadata") {
                    return true;
                }
                s.get("properties")
            }
            Ty::UntypedRoot => return key == "metadata",
            Ty::Deduced => None,
        };
        props
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key(key))
    }

    /// The type of a list's items.
    pub(crate) fn item(&self) -> Ty<'a> {
        match *self {
            Ty::Builtin(node, _) => {
                let it = node.items();
                if it.schema.is_none() {
                    return Ty::Deduced;
                }
                Ty::Builtin(it, None)
            }
            Ty::Structural(s) | Ty::StructuralRoot(s) => {
                match s.get("items").and_then(Value::as_object) {
                    Some(i) => Ty::Structural(i),
                    None => Ty::Deduced,
                }
            }
            Ty::Deduced | Ty::UntypedRoot => Ty::Deduced,
        }
    }

    /// The default of key field `key` of this (item) type, used when an
    /// item of a map list leaves it out.
    pub(crate) fn key_default(&self, key: &str) -> Option<Value> {
        match *self {
            // Upstream's OpenAPI defaults of list-map keys of the built-in
            // types (k8s-openapi's schemas do not carry defaults).
            Ty::Builtin(node, _) => match (node.name, key) {
                (
                    Some("io.k8s.api.core.v1.ContainerPort" | "io.k8s.api.core.v1.ServicePort"),
                    "protocol",
                ) => Some(Value::String("TCP".into())),
                _ => None,
            },
            Ty::Structural(s) | Ty::StructuralRoot(s) => s
                .get("properties")
                .and_then(|p| p.get(key))
                .and_then(|p| p.get("default"))
                .cloned(),
            _ => None,
        }
    }
}

/// [`builtin_atom`], by the addresses of the field's schema, type name and
/// patch metadata (all static, so the addresses name one field of one type).
/// Deciding it takes several schema lookups and a table search, and field
/// management asks for every field of every write.
type AtomKey = (usize, usize, usize);
static BUILTIN_ATOMS: LazyLock<RwLock<HashMap<AtomKey, Option<Atom>, FixedState>>> =
    LazyLock::new(Default::default);

fn builtin_atom_remembered(node: Node, fm: Option<&'static FieldMeta>) -> Option<Atom> {
    let Some(schema) = node.schema else {
        return None;
    };
    let key = (
        std::ptr::from_ref(schema) as usize,
        node.name.map_or(0, |n| n.as_ptr() as usize),
        fm.map_or(0, |m| std::ptr::from_ref(m) as usize),
    );
    if let Some(a) = BUILTIN_ATOMS.read().get(&key) {
        return a.clone();
    }
    let a = builtin_atom(node, fm);
    BUILTIN_ATOMS.write().insert(key, a.clone());
    a
}

fn builtin_atom(node: Node, fm: Option<&'static FieldMeta>) -> Option<Atom> {
    let s = node.schema?;
    if s.get("x-kubernetes-int-or-string").is_some() {
        return Some(Atom::Scalar);
    }
    match s.get("type").and_then(Value::as_str) {
        Some("array") => Some(Atom::List(builtin_list_kind(fm))),
        Some("string" | "integer" | "number" | "boolean") => Some(Atom::Scalar),
        _ => {
            let has_props = s.get("properties").is_some_and(Value::is_object);
            let is_map = node.is_map();
            if !has_props && !is_map {
                // `type: object` alone (RawExtension) or no type: decided
                // by the value.
                return None;
            }
            let atomic = fm.and_then(|m| m.map_type) == Some("atomic")
                || node.name.and_then(meta::type_map_type) == Some("atomic");
            Some(Atom::Map { atomic })
        }
    }
}

/// Upstream's `getListElementRelationship` (kube-openapi's schemaconv): the
/// list type, else a merge patch strategy (keyed by the merge key, a set
/// without one), else atomic.
fn builtin_list_kind(fm: Option<&'static FieldMeta>) -> ListKind {
    let Some(m) = fm else {
        return ListKind::Atomic;
    };
    match m.list_type {
        Some("map") => ListKind::Map(m.list_map_keys.iter().map(|k| k.to_string()).collect()),
        Some("set") => ListKind::Set,
        Some(_) => ListKind::Atomic,
        None => {
            if m.patch_strategies().any(|s| s == "merge") {
                match m.merge_key {
                    Some(k) => ListKind::Map(vec![k.to_string()]),
                    None => ListKind::Set,
                }
            } else {
                ListKind::Atomic
            }
        }
    }
}

fn structural_atom(s: &Map<String, Value>) -> Option<Atom> {
    if s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        return Some(Atom::Scalar);
    }
    match s.get("type").and_then(Value::as_str) {
        Some("array") => {
            let kind = match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => {
                    let keys: Vec<String> = s
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default();
                    if keys.is_empty() {
                        ListKind::Atomic
                    } else {
                        ListKind::Map(keys)
                    }
                }
                _ => ListKind::Atomic,
            };
            Some(Atom::List(kind))
        }
        Some("object") => Some(Atom::Map {
            atomic: s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic"),
        }),
        Some(_) => Some(Atom::Scalar),
        None => {
            if s.get("properties").is_some() || s.get("additionalProperties").is_some() {
                Some(Atom::Map {
                    atomic: s.get("x-kubernetes-map-type").and_then(Value::as_str)
                        == Some("atomic"),
                })
            } else {
                None
            }
        }
    }
}
