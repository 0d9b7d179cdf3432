//! The type registry: the generated messages indexed by name and by
//! (apiVersion, kind), each field's JSON name (`field_json`),
//! embedding and requiredness, and each message's special JSON form. Built
//! once, shared by the decoder and the encoder.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

use super::field_json::FIELD_JSON;
use super::{zero_values, Kind, Message, MESSAGES, RESOURCES};

/// The full message name of a kind of an API version, e.g. `apps/v1`
/// `Deployment` -> `io.k8s.api.apps.v1.Deployment`.
pub fn message_for_kind(api_version: &str, kind: &str) -> Option<&'static str> {
    let reg = registry();
    reg.kind_index(api_version, kind).map(|i| MESSAGES[i].name)
}

/// The `status` a built-in kind has when a create resets it: the JSON Go
/// writes for its Status struct's zero value (`{}`, a Service's
/// `{"loadBalancer":{}}`, a ReplicaSet's `{"replicas":0}`). `None` for
/// kinds without a status struct or not built in.
pub fn zero_status(api_version: &str, kind: &str) -> Option<Value> {
    // By the resource table and the package name, as `kind_index` finds a
    // kind, without building the protobuf registry: a create of a kind
    // with a status needs only this, and a server that never speaks
    // protobuf never builds it.
    static MESSAGES_BY_KIND: LazyLock<HashMap<(&str, &str), &str>> = LazyLock::new(|| {
        RESOURCES
            .iter()
            .map(|r| ((r.api_version, r.kind), r.message))
            .collect()
    });
    let zero = |message: &str| {
        zero_values::ZERO_STATUS
            .binary_search_by(|(k, _)| (*k).cmp(message))
            .ok()
            .map(|i| zero_values::ZERO_STATUS[i].1)
    };
    let json = MESSAGES_BY_KIND
        .get(&(api_version, kind))
        .and_then(|m| zero(m))
        .or_else(|| zero(&format!("{}.{kind}", package_for_api_version(api_version))))?;
    serde_json::from_str(json).ok()
}

/// The proto package (OpenAPI name prefix) of an API version:
/// `apps/v1` -> `io.k8s.api.apps.v1`, `v1` -> `io.k8s.api.core.v1`.
pub fn package_for_api_version(api_version: &str) -> String {
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    let base = match group {
        "" => "io.k8s.api.core".to_string(),
        "meta.k8s.io" => "io.k8s.apimachinery.pkg.apis.meta".to_string(),
        "apiextensions.k8s.io" => {
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions".to_string()
        }
        "apiregistration.k8s.io" => "io.k8s.kube-aggregator.pkg.apis.apiregistration".to_string(),
        "internal.apiserver.k8s.io" => "io.k8s.api.apiserverinternal".to_string(),
        "metrics.k8s.io" => "io.k8s.metrics.pkg.apis.metrics".to_string(),
        "custom.metrics.k8s.io" => "io.k8s.metrics.pkg.apis.custom_metrics".to_string(),
        "external.metrics.k8s.io" => "io.k8s.metrics.pkg.apis.external_metrics".to_string(),
        // rbac.authorization.k8s.io -> rbac, flowcontrol.apiserver.k8s.io
        // -> flowcontrol, storage.k8s.io -> storage, apps -> apps, ...
        g => format!("io.k8s.api.{}", g.split('.').next().unwrap_or(g)),
    };
    format!("{base}.{version}")
}

/// How a message's JSON differs from a plain object of its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Special {
    None,
    Time,
    MicroTime,
    Duration,
    IntOrString,
    Quantity,
    /// RawExtension, FieldsV1, apiextensions JSON: `bytes raw = 1` is JSON.
    RawJson,
    SchemaOrArray,
    SchemaOrBool,
    SchemaOrStringArray,
    ArrayWrapper,
}

fn special_of(m: &Message) -> Special {
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";
    const APIEXT: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.";
    if m.array_wrapper {
        return Special::ArrayWrapper;
    }
    if let Some(n) = m.name.strip_prefix(META) {
        return match n {
            "Time" => Special::Time,
            "MicroTime" => Special::MicroTime,
            "Duration" => Special::Duration,
            "FieldsV1" => Special::RawJson,
            _ => Special::None,
        };
    }
    if let Some(rest) = m.name.strip_prefix(APIEXT) {
        let n = rest.split_once('.').map(|(_, n)| n).unwrap_or(rest);
        return match n {
            "JSON" => Special::RawJson,
            "JSONSchemaPropsOrArray" => Special::SchemaOrArray,
            "JSONSchemaPropsOrBool" => Special::SchemaOrBool,
            "JSONSchemaPropsOrStringArray" => Special::SchemaOrStringArray,
            _ => Special::None,
        };
    }
    match m.name {
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Special::IntOrString,
        "io.k8s.apimachinery.pkg.api.resource.Quantity"
        | "io.k8s.apimachinery.pkg.api.resource.QuantityValue" => Special::Quantity,
        "io.k8s.apimachinery.pkg.runtime.RawExtension" => Special::RawJson,
        _ => Special::None,
    }
}

/// What the decoder needs of one field beyond the static data.
#[derive(Debug)]
pub(super) struct FieldInfo {
    pub(super) json: &'static str,
    /// The embedded message (or map value message).
    pub(super) target: Option<usize>,
    /// A Go embedded struct (`json:",inline"`): go-to-protobuf makes it a
    /// message field, JSON merges its fields into the parent's.
    pub(super) inline: bool,
    /// In the schema's `required` list (Go: no `omitempty`).
    pub(super) required: bool,
}

/// Lookups built once from the static data and k8s-openapi's schemas.
pub(super) struct Registry {
    by_name: HashMap<&'static str, usize>,
    by_lower: HashMap<String, usize>,
    resources: HashMap<(&'static str, &'static str), usize>,
    pub(super) fields: Vec<Vec<FieldInfo>>,
    pub(super) special: Vec<Special>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::build);

pub(super) fn registry() -> &'static Registry {
    &REGISTRY
}

/// `io.k8s.api.core.v1.Volume` -> `Volume`.
#[cfg(test)]
pub(super) fn short_name(full: &str) -> &str {
    full.rsplit('.').next().unwrap_or(full)
}

/// Where [`FIELD_JSON`] comes from: each field's JSON name, embedding and
/// requiredness as k8s-openapi's schemas give them. Generating every
/// schema took an eighth of start-up's instructions and kept 3.7 MiB of
/// schema code resident, so the answer is generated once into
/// `field_json.rs` and a test keeps it current.
#[cfg(test)]
pub(super) mod from_schemas {
    use std::collections::HashMap;

    use serde_json::Value;

    use super::super::{Card, Kind, MESSAGES, OPENAPI_SCHEMAS};
    use super::short_name;

    /// Lowercase alphanumerics only: `pod_ip`, `podIP` -> `podip`;
    /// `x_kubernetes_list_type`, `x-kubernetes-list-type` -> `xkuberneteslisttype`;
    /// `ref`, `$ref` -> `ref`.
    fn normalize(name: &str) -> String {
        name.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    }

    /// `pod_ip` -> `podIp`: the fallback when no schema names the field.
    fn lower_camel(snake: &str) -> String {
        let mut out = String::with_capacity(snake.len());
        let mut upper = false;
        for c in snake.chars() {
            if c == '_' {
                upper = !out.is_empty();
            } else if upper {
                out.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }

    /// The property names of a schema, and which of them are required.
    pub(in super::super) struct Props {
        pub(in super::super) names: Vec<String>,
        required: Vec<String>,
    }

    /// Property names of every k8s-openapi schema, by definition name.
    pub(in super::super) fn openapi_properties() -> HashMap<String, Props> {
        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        let mut out: HashMap<String, Props> = HashMap::new();
        let props_of = |v: &Value| -> Option<Props> {
            let names = v
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())?;
            let required = v
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|n| n.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            Some(Props { names, required })
        };
        for (name, schema_fn) in OPENAPI_SCHEMAS {
            let schema = schema_fn(&mut generator);
            // Inlined schemas are returned whole; the others are references.
            if let Some(p) = props_of(schema.as_value()) {
                out.insert((*name).to_string(), p);
            }
        }
        for (name, def) in generator.definitions() {
            if let Some(p) = props_of(def) {
                out.entry(name.clone()).or_insert(p);
            }
        }
        out
    }

    /// (JSON name, inline, required) of every field of every message, in
    /// [`MESSAGES`] order.
    pub(super) fn field_json() -> Vec<Vec<(String, bool, bool)>> {
        let by_name: HashMap<&str, usize> = MESSAGES
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name, i))
            .collect();
        let props = openapi_properties();
        // Every property name seen anywhere, by normalized name, for
        // messages k8s-openapi has no type of (older versions, lists): the
        // most common spelling wins.
        let mut counts: HashMap<String, HashMap<&str, usize>> = HashMap::new();
        for p in props.values() {
            for n in &p.names {
                *counts
                    .entry(normalize(n))
                    .or_default()
                    .entry(n)
                    .or_default() += 1;
            }
        }
        let global: HashMap<String, String> = counts
            .into_iter()
            .filter_map(|(k, spellings)| {
                spellings
                    .into_iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
                    .map(|(s, _)| (k, s.to_string()))
            })
            .collect();

        // Embedded and required fields, by short message name and field
        // name, as seen in messages that have a schema: for the same message
        // in versions that have none.
        let mut seen: HashMap<(&str, &str), (bool, bool)> = HashMap::new();
        let mut fields: Vec<Vec<(String, bool, bool)>> = Vec::with_capacity(MESSAGES.len());
        let mut has_schema = Vec::with_capacity(MESSAGES.len());
        for m in MESSAGES {
            let own: HashMap<String, &String> = props
                .get(m.name)
                .map(|p| p.names.iter().map(|n| (normalize(n), n)).collect())
                .unwrap_or_default();
            let required: &[String] = props.get(m.name).map_or(&[], |p| &p.required);
            has_schema.push(!own.is_empty());
            let short = short_name(m.name);
            let infos = m
                .fields
                .iter()
                .map(|f| {
                    let key = normalize(f.name);
                    let target = match f.kind {
                        Kind::Message(t) => by_name.get(t).copied(),
                        Kind::Map(_, Kind::Message(t)) => by_name.get(t).copied(),
                        _ => None,
                    };
                    // A message field the schema does not name, whose
                    // message's fields the schema does name, is embedded.
                    let inline = f.card == Card::Optional
                        && !own.is_empty()
                        && !own.contains_key(&key)
                        && target.is_some_and(|t| {
                            MESSAGES[t]
                                .fields
                                .iter()
                                .any(|tf| own.contains_key(&normalize(tf.name)))
                        });
                    let json = own
                        .get(&key)
                        .map(|s| (*s).clone())
                        .or_else(|| global.get(&key).cloned())
                        .unwrap_or_else(|| lower_camel(f.name));
                    let required = required.contains(&json);
                    if !own.is_empty() {
                        seen.insert((short, f.name), (inline, required));
                    }
                    (json, inline, required)
                })
                .collect();
            fields.push(infos);
        }
        for (i, m) in MESSAGES.iter().enumerate() {
            if has_schema[i] {
                continue;
            }
            let short = short_name(m.name);
            for (f, info) in m.fields.iter().zip(fields[i].iter_mut()) {
                if let Some(&(inline, required)) = seen.get(&(short, f.name)) {
                    info.1 = inline && f.card == Card::Optional;
                    info.2 = required;
                }
            }
        }
        fields
    }
}

impl Registry {
    fn build() -> Registry {
        let by_name: HashMap<&'static str, usize> = MESSAGES
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name, i))
            .collect();
        let by_lower = MESSAGES
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.to_ascii_lowercase(), i))
            .collect();
        let resources = RESOURCES
            .iter()
            .filter_map(|r| {
                by_name
                    .get(r.message)
                    .map(|&i| ((r.api_version, r.kind), i))
            })
            .collect();

        let fields = MESSAGES
            .iter()
            .zip(FIELD_JSON)
            .map(|(m, names)| {
                m.fields
                    .iter()
                    .zip(names.iter())
                    .map(|(f, &(json, inline, required))| FieldInfo {
                        json,
                        target: match f.kind {
                            Kind::Message(t) => by_name.get(t).copied(),
                            Kind::Map(_, Kind::Message(t)) => by_name.get(t).copied(),
                            _ => None,
                        },
                        inline,
                        required,
                    })
                    .collect()
            })
            .collect();
        let special = MESSAGES.iter().map(special_of).collect();
        Registry {
            by_name,
            by_lower,
            resources,
            fields,
            special,
        }
    }

    pub(super) fn index(&self, name: &str) -> Option<usize> {
        self.by_name
            .get(name)
            .copied()
            .or_else(|| self.by_lower.get(&name.to_ascii_lowercase()).copied())
    }

    pub(super) fn kind_index(&self, api_version: &str, kind: &str) -> Option<usize> {
        if let Some(&i) = self.resources.get(&(api_version, kind)) {
            return Some(i);
        }
        let pkg = package_for_api_version(api_version);
        if let Some(i) = self.index(&format!("{pkg}.{kind}")) {
            return Some(i);
        }
        // Kinds every group version registers from meta.k8s.io/v1 (Status,
        // DeleteOptions, WatchEvent, ...).
        self.index(&format!("io.k8s.apimachinery.pkg.apis.meta.v1.{kind}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `field_json.rs` says what k8s-openapi's schemas say. After a change
    /// of k8s-openapi or of the messages, `KAPI_BLESS=1 cargo test --lib
    /// field_json` writes it again.
    #[test]
    fn field_json_is_what_the_schemas_give() {
        let derived = from_schemas::field_json();
        let mut text = String::from(
            "// @generated by `KAPI_BLESS=1 cargo test --lib field_json` from\n\
             // k8s-openapi's schemas (registry::from_schemas). Do not edit.\n\n\
             /// Each field's (JSON name, embedded, required), per message of\n\
             /// [`MESSAGES`](super::MESSAGES) and in its order.\n\
             pub(super) static FIELD_JSON: &[&[(&str, bool, bool)]] = &[\n",
        );
        for (m, fields) in MESSAGES.iter().zip(&derived) {
            text.push_str(&format!("    // {}\n    &[", m.name));
            for (i, (json, inline, required)) in fields.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                text.push_str(&format!("(\"{json}\", {inline}, {required})"));
            }
            text.push_str("],\n");
        }
        text.push_str("];\n");
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/api/protobuf/field_json.rs"
        );
        if std::env::var_os("KAPI_BLESS").is_some() {
            std::fs::write(path, &text).expect("write field_json.rs");
        }
        let table: Vec<Vec<(String, bool, bool)>> = FIELD_JSON
            .iter()
            .map(|fs| fs.iter().map(|&(j, i, r)| (j.to_string(), i, r)).collect())
            .collect();
        assert_eq!(table.len(), MESSAGES.len(), "one row per message");
        for ((m, row), want) in MESSAGES.iter().zip(&table).zip(&derived) {
            assert_eq!(
                row, want,
                "{}: field_json.rs is stale; regenerate it",
                m.name
            );
        }
        assert_eq!(
            std::fs::read_to_string(path).ok().as_deref(),
            Some(text.as_str()),
            "field_json.rs is not as generated; regenerate it"
        );
    }

    /// The registry-free lookup finds the zero status the registry's kind
    /// index finds, for every resource kind and for kinds out of the table.
    #[test]
    fn zero_status_is_the_one_the_registry_finds() {
        let by_registry = |api_version: &str, kind: &str| {
            let message = message_for_kind(api_version, kind)?;
            let i = zero_values::ZERO_STATUS
                .binary_search_by(|(k, _)| (*k).cmp(message))
                .ok()?;
            serde_json::from_str::<Value>(zero_values::ZERO_STATUS[i].1).ok()
        };
        let mut with_status = 0;
        for r in RESOURCES {
            let z = zero_status(r.api_version, r.kind);
            with_status += usize::from(z.is_some());
            assert_eq!(
                z,
                by_registry(r.api_version, r.kind),
                "{} {}",
                r.api_version,
                r.kind
            );
        }
        assert!(
            with_status > 20,
            "only {with_status} kinds have a zero status"
        );
        assert_eq!(
            zero_status("v1", "Service"),
            Some(serde_json::json!({"loadBalancer": {}}))
        );
        for (v, k) in [
            ("v1", "NoSuchKind"),
            ("example.com/v1", "Widget"),
            ("v1", "Status"),
        ] {
            assert_eq!(zero_status(v, k), by_registry(v, k), "{v} {k}");
        }
    }
}
