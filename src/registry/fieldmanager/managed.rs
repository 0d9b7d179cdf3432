//! `metadata.managedFields`: its entries, and the per-manager field sets
//! they decode to (upstream's `managedfields/internal/managedfields.go`).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::fieldset::{go_json, FieldSet};

/// `operation` of a managed fields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }

    pub fn parse(s: &str) -> Option<Operation> {
        match s {
            "Apply" => Some(Operation::Apply),
            "Update" => Some(Operation::Update),
            _ => None,
        }
    }
}

/// One entry of `metadata.managedFields`.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedFieldsEntry {
    pub manager: String,
    pub operation: Operation,
    pub api_version: String,
    /// RFC 3339, seconds (`2024-01-02T03:04:05Z`).
    pub time: Option<String>,
    /// Always `FieldsV1` for entries kapi writes.
    pub fields_type: String,
    pub fields_v1: Option<Value>,
    pub subresource: String,
}

impl ManagedFieldsEntry {
    /// Reads an entry, checking it as upstream's `DecodeManagedFields` does.
    pub fn from_value(v: &Value) -> Result<Self, String> {
        let Value::Object(m) = v else {
            return Err("managed fields entry must be an object".into());
        };
        let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = Operation::parse(&s("operation"))
            .ok_or_else(|| "operation must be `Apply` or `Update`".to_string())?;
        let api_version = s("apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        let fields_type = s("fieldsType");
        match fields_type.as_str() {
            "FieldsV1" => {}
            "" => return Err("missing fieldsType in managed fields entry".into()),
            other => {
                return Err(format!(
                    "invalid fieldsType {} in managed fields entry",
                    go_json(&Value::String(other.into()))
                ))
            }
        }
        Ok(ManagedFieldsEntry {
            manager: s("manager"),
            operation,
            api_version,
            time: m.get("time").and_then(Value::as_str).map(str::to_string),
            fields_type,
            fields_v1: m.get("fieldsV1").filter(|v| !v.is_null()).cloned(),
            subresource: s("subresource"),
        })
    }

    /// The entry as `metadata.managedFields` holds it (empty strings left out).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        if !self.manager.is_empty() {
            m.insert("manager".into(), json!(self.manager));
        }
        m.insert("operation".into(), json!(self.operation.as_str()));
        if !self.api_version.is_empty() {
            m.insert("apiVersion".into(), json!(self.api_version));
        }
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        if !self.fields_type.is_empty() {
            m.insert("fieldsType".into(), json!(self.fields_type));
        }
        if let Some(f) = &self.fields_v1 {
            m.insert("fieldsV1".into(), f.clone());
        }
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }

    /// The entry's field set.
    pub fn fields(&self) -> Result<FieldSet, String> {
        match &self.fields_v1 {
            Some(v) => FieldSet::from_fields_v1(v),
            None => Ok(FieldSet::new()),
        }
    }

    fn unix_time(&self) -> i64 {
        self.time
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.timestamp())
            .unwrap_or(0)
    }
}

/// The entries of an object's `metadata.managedFields` (none if absent).
pub fn entries_of(obj: &Value) -> Result<Vec<ManagedFieldsEntry>, String> {
    match obj.get("metadata").and_then(|m| m.get("managedFields")) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a.iter().map(ManagedFieldsEntry::from_value).collect(),
        Some(_) => Err("managedFields must be a list".into()),
    }
}

/// Who manages a set: upstream's manager identifier (the entry less its
/// time and fields, and less its apiVersion for appliers).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ManagerId {
    pub manager: String,
    pub operation: Operation,
    /// Empty for appliers.
    pub api_version: String,
    pub subresource: String,
}

impl ManagerId {
    pub fn new(manager: &str, operation: Operation, api_version: &str, subresource: &str) -> Self {
        ManagerId {
            manager: manager.to_string(),
            operation,
            api_version: match operation {
                Operation::Apply => String::new(),
                Operation::Update => api_version.to_string(),
            },
            subresource: subresource.to_string(),
        }
    }

    /// Upstream's identifier string (`BuildManagerIdentifier`): the JSON of
    /// the entry's remaining fields, in `ManagedFieldsEntry` field order.
    pub fn identifier(&self) -> String {
        let mut parts = Vec::new();
        if !self.manager.is_empty() {
            parts.push(format!("\"manager\":{}", go_json(&json!(self.manager))));
        }
        parts.push(format!("\"operation\":\"{}\"", self.operation.as_str()));
        if !self.api_version.is_empty() {
            parts.push(format!(
                "\"apiVersion\":{}",
                go_json(&json!(self.api_version))
            ));
        }
        if !self.subresource.is_empty() {
            parts.push(format!(
                "\"subresource\":{}",
                go_json(&json!(self.subresource))
            ));
        }
        format!("{{{}}}", parts.join(","))
    }
}

/// A manager's fields, at the API version it used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VersionedSet {
    pub set: FieldSet,
    pub api_version: String,
    pub applied: bool,
}

/// Decoded managed fields: the sets and the times of each manager.
#[derive(Debug, Clone, Default)]
pub(crate) struct Managed {
    pub fields: BTreeMap<ManagerId, VersionedSet>,
    pub times: BTreeMap<ManagerId, Option<String>>,
}

impl Managed {
    /// Upstream's `DecodeManagedFields`.
    pub fn decode(entries: &[ManagedFieldsEntry]) -> Result<Managed, String> {
        let mut out = Managed::default();
        for e in entries {
            let id = ManagerId::new(&e.manager, e.operation, &e.api_version, &e.subresource);
            let set = e
                .fields()
                .map_err(|err| format!("error decoding versioned set: {err}"))?;
            out.fields.insert(
                id.clone(),
                VersionedSet {
                    set,
                    api_version: e.api_version.clone(),
                    applied: e.operation == Operation::Apply,
                },
            );
            out.times.insert(id, e.time.clone());
        }
        Ok(out)
    }

    /// Decodes an object's `metadata.managedFields`.
    pub fn of(obj: &Value) -> Result<Managed, String> {
        Managed::decode(&entries_of(obj)?)
    }

    /// Upstream's `encodeManagedFields`: one entry per manager, sorted as
    /// `sortEncodedManagedFields` sorts them (operation, time, manager,
    /// apiVersion, subresource).
    pub fn encode(&self) -> Vec<ManagedFieldsEntry> {
        let mut out: Vec<ManagedFieldsEntry> = self
            .fields
            .iter()
            .map(|(id, vs)| ManagedFieldsEntry {
                manager: id.manager.clone(),
                operation: if vs.applied {
                    Operation::Apply
                } else {
                    id.operation
                },
                api_version: vs.api_version.clone(),
                time: self.times.get(id).cloned().flatten(),
                fields_type: "FieldsV1".into(),
                fields_v1: Some(vs.set.to_fields_v1()),
                subresource: id.subresource.clone(),
            })
            .collect();
        out.sort_by(|p, q| {
            p.operation
                .cmp(&q.operation)
                .then_with(|| p.unix_time().cmp(&q.unix_time()))
                .then_with(|| p.manager.cmp(&q.manager))
                .then_with(|| p.api_version.cmp(&q.api_version))
                .then_with(|| p.subresource.cmp(&q.subresource))
        });
        out
    }

    /// Sets (or, when there are none, removes) `metadata.managedFields`.
    pub fn write_to(&self, obj: &mut Value) {
        let entries = self.encode();
        let Value::Object(o) = obj else {
            return;
        };
        if entries.is_empty() {
            if let Some(Value::Object(meta)) = o.get_mut("metadata") {
                meta.remove("managedFields");
            }
            return;
        }
        let meta = o
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(meta) = meta {
            meta.insert(
                "managedFields".into(),
                Value::Array(entries.iter().map(ManagedFieldsEntry::to_value).collect()),
            );
        }
    }
}
