//! Where a value sits in the OpenAPI schemas of the built-in kinds (the
//! `Node`), and each field's patch strategy and merge key: what decides
//! how a patch merges into a field.

use std::sync::LazyLock;

use parking_lot::RwLock;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use super::super::meta::{self, FieldMeta};
use super::{PatchError, RETAIN_KEYS_STRATEGY};

type Definitions = std::collections::HashMap<&'static str, &'static Value>;

/// The OpenAPI definitions generated so far, by definition name. A kind's
/// (its own and those of every type it refers to) are added the first time
/// its type name is asked for ([`type_name_of`]), so a server that writes
/// a few kinds never generates the rest: about 2 MiB of definitions, and
/// the code that generates them stays on disk. Each is leaked when added:
/// there are finitely many, and [`Node`]s hand out `'static` references.
static DEFINITIONS: LazyLock<RwLock<Definitions>> = LazyLock::new(Default::default);

/// Adds the definitions not there yet.
fn add_definitions(generated: Map<String, Value>) {
    let mut defs = DEFINITIONS.write();
    for (name, schema) in generated {
        if !defs.contains_key(name.as_str()) {
            defs.insert(
                Box::leak(name.into_boxed_str()),
                Box::leak(Box::new(schema)),
            );
        }
    }
}

/// Every built-in kind's definitions, for a name no kind asked for first.
fn add_all_definitions() {
    static ALL: std::sync::Once = std::sync::Once::new();
    ALL.call_once(|| {
        let mut g = SchemaSettings::openapi3().into_generator();
        for d in crate::api::builtin::BUILTINS {
            if let Some(schema) = d.schema {
                schema(&mut g);
            }
        }
        // Served by every `scale` subresource.
        g.subschema_for::<k8s_openapi::api::autoscaling::v1::Scale>();
        add_definitions(g.take_definitions(true));
    });
}

/// The definition name of the type a catalog schema function describes
/// (e.g. `io.k8s.api.apps.v1.Deployment`), the `type_name` [`apply`](super::apply) takes.
/// Its definitions are then known to [`Node::named`].
pub fn type_name_of(schema: crate::api::catalog::SchemaFn) -> Option<String> {
    // Generating a schema walks the whole type graph: remember the answer.
    static NAMES: std::sync::LazyLock<
        parking_lot::Mutex<std::collections::HashMap<usize, Option<String>>>,
    > = std::sync::LazyLock::new(Default::default);
    let key = schema as usize;
    if let Some(n) = NAMES.lock().get(&key) {
        return n.clone();
    }
    let mut g = SchemaSettings::openapi3().into_generator();
    let s = schema(&mut g);
    let name = s.as_object().and_then(ref_name).map(str::to_string);
    add_definitions(g.take_definitions(true));
    NAMES.lock().insert(key, name.clone());
    name
}

/// Where a value sits in the schema: the (resolved) schema of its type and,
/// for named types, the definition name that keys the patch metadata.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Node {
    pub(crate) name: Option<&'static str>,
    pub(crate) schema: Option<&'static Map<String, Value>>,
}

/// The definition a schema refers to: `$ref`, or a `$ref` wrapped in
/// `allOf`/`anyOf`/`oneOf` (how siblings of a reference are kept).
fn ref_name(s: &Map<String, Value>) -> Option<&str> {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return r.rsplit('/').next();
    }
    ["allOf", "anyOf", "oneOf"]
        .iter()
        .filter_map(|k| s.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(|item| item.as_object().and_then(ref_name))
}

/// What a field's schema resolves to, by the schema's address: every
/// schema here is leaked, so the address names one field of one type.
/// Resolving takes a definition lookup by name and a search of the patch
/// metadata; field management asks it for every field of every write.
/// Keyed by address, so hashed with foldhash: SipHash cost more than the
/// lookup it saves.
type Resolved = (Node, Option<&'static FieldMeta>);
static RESOLVED: LazyLock<
    RwLock<std::collections::HashMap<usize, Resolved, foldhash::fast::FixedState>>,
> = LazyLock::new(Default::default);

fn remembered(schema: &'static Value, resolve: impl FnOnce() -> Resolved) -> Resolved {
    let key = std::ptr::from_ref(schema) as usize;
    if let Some(r) = RESOLVED.read().get(&key) {
        return *r;
    }
    let r = resolve();
    RESOLVED.write().insert(key, r);
    r
}

impl Node {
    /// The node of the definition `name`, if kapi has a schema for it.
    pub(crate) fn named(name: &str) -> Option<Node> {
        let found = |name: &str| {
            DEFINITIONS
                .read()
                .get_key_value(name)
                .map(|(k, v)| (*k, *v))
        };
        let (k, v) = found(name).or_else(|| {
            add_all_definitions();
            found(name)
        })?;
        Some(Node {
            name: Some(k),
            schema: v.as_object(),
        })
    }

    pub(super) fn resolve(schema: Option<&'static Value>) -> Node {
        let Some(obj) = schema.and_then(Value::as_object) else {
            return Node::default();
        };
        match ref_name(obj) {
            Some(name) => Node::named(name).unwrap_or_default(),
            None => Node {
                name: None,
                schema: Some(obj),
            },
        }
    }

    /// The node of `key`'s value, and the patch metadata of that field.
    pub(crate) fn field(&self, key: &str) -> (Node, Option<&'static FieldMeta>) {
        let Some(s) = self.schema else {
            return (Node::default(), None);
        };
        if let Some(p) = s
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|p| p.get(key))
        {
            return remembered(p, || {
                let field_meta = self.name.and_then(|n| meta::lookup(n, key));
                (Node::resolve(Some(p)), field_meta)
            });
        }
        match s.get("additionalProperties") {
            Some(ap) if ap.is_object() => remembered(ap, || (Node::resolve(Some(ap)), None)),
            _ => (Node::default(), None),
        }
    }

    /// The node of a list's items.
    pub(crate) fn items(&self) -> Node {
        Node::resolve(self.schema.and_then(|s| s.get("items")))
    }

    /// A string-keyed map (`additionalProperties`), not a struct.
    pub(crate) fn is_map(&self) -> bool {
        self.schema.is_some_and(|s| {
            s.get("properties").is_none()
                && s.get("additionalProperties").is_some_and(Value::is_object)
        })
    }

    /// Go's kind name of the type, for messages.
    pub(super) fn go_kind(&self) -> &'static str {
        let Some(s) = self.schema else {
            return "interface";
        };
        match s.get("type").and_then(Value::as_str) {
            Some("string") => "string",
            Some("integer") => "int64",
            Some("number") => "float64",
            Some("boolean") => "bool",
            Some("array") => "slice",
            _ if self.is_map() => "map",
            _ => "struct",
        }
    }
}

/// Upstream's `extractRetainKeysPatchStrategy`: the strategy besides
/// `retainKeys` (which only enables the `$retainKeys` directive), and the
/// merge key.
pub(super) fn strategy_of(
    m: Option<&FieldMeta>,
) -> Result<(&'static str, &'static str), PatchError> {
    let Some(m) = m else {
        return Ok(("", ""));
    };
    let strategies: Vec<&'static str> = m.patch_strategies().collect();
    let strategy = match strategies.as_slice() {
        [] => "",
        [one] if *one == RETAIN_KEYS_STRATEGY => "",
        [one] => one,
        [a, b] if *a == RETAIN_KEYS_STRATEGY => b,
        [a, b] if *b == RETAIN_KEYS_STRATEGY => a,
        _ => {
            return Err(PatchError::internal(format!(
                "unexpected patch strategy: [{}]",
                strategies.join(" ")
            )))
        }
    };
    Ok((strategy, m.merge_key.unwrap_or("")))
}
