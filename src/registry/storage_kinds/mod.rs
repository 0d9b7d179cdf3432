//! Strategies of storage.k8s.io: StorageClass, CSIDriver, CSINode,
//! CSIStorageCapacity, VolumeAttachment and VolumeAttributesClass
//! (upstream's pkg/registry/storage, pkg/apis/storage/v1/defaults.go and
//! pkg/apis/storage/validation, as of v1.34).
//!
//! One file per kind, named as upstream's pkg/registry/storage/<kind>; this
//! module keeps what several kinds share (provisioner parameter limits,
//! name checks, semantic equality, Go-formatted values, printer columns)
//! and re-exports every strategy, so `registry::storage_kinds::CSIDriverStrategy`
//! and the like stay the paths callers use. (Not named `storage`: that is
//! crate::storage, the storage layer.)

mod csi_driver;
mod csi_node;
mod csi_storage_capacity;
mod storage_class;
mod volume_attachment;
mod volume_attributes_class;

pub use csi_driver::CSIDriverStrategy;
pub use csi_node::CSINodeStrategy;
pub use csi_storage_capacity::CSIStorageCapacityStrategy;
pub use storage_class::{StorageClassStrategy, BETA_IS_DEFAULT_ANNOTATION, IS_DEFAULT_ANNOTATION};
pub use volume_attachment::VolumeAttachmentStrategy;
pub use volume_attributes_class::VolumeAttributesClassStrategy;

use serde_json::{json, Value};

use super::helpers;
use super::strategy::Column;
use super::validation::{self, FieldError};

pub(super) const MAX_PROVISIONER_PARAMETER_SIZE: usize = 256 * 1024;
pub(super) const MAX_PROVISIONER_PARAMETER_LEN: usize = 512;

const QUALIFIED_NAME_REGEX_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn col(
    name: &'static str,
    kind: &'static str,
    desc: &'static str,
    cell: fn(&Value) -> Value,
) -> Column {
    Column {
        name,
        kind,
        format: "",
        description: desc,
        priority: 0,
        cell,
    }
}

/// upstream's IsQualifiedName, including what the shared helper leaves out:
/// an empty name part also fails the regex, and more than one '/' is one error.
pub(crate) fn qualified_name(v: &str) -> Vec<String> {
    if v.matches('/').count() > 1 {
        return vec![format!("a qualified name {QUALIFIED_NAME_REGEX_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")];
    }
    let mut out = validation::qualified_name(v);
    if v.rsplit('/').next().is_some_and(str::is_empty) {
        out.push(format!("name part {QUALIFIED_NAME_REGEX_MSG}"));
    }
    out
}

/// The value with nulls and empty lists/maps left out: upstream compares
/// with apiequality.Semantic, for which nil and empty are the same.
pub(crate) fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), semantic(x)))
                .filter(|(_, x)| !helpers::is_empty(x) || x.is_string())
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

pub(crate) fn sem_eq(a: &Value, b: &Value) -> bool {
    semantic(a) == semantic(b)
}

/// upstream's ValidateCSIDriverName.
fn csi_driver_name(name: &str, path: &str, errs: &mut Vec<FieldError>) {
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    if name.len() > 63 {
        errs.push(FieldError::too_long(path, 63));
    }
    for m in validation::dns1123_subdomain(&name.to_lowercase()) {
        errs.push(FieldError::invalid(path, json!(name), m));
    }
}

fn subdomain(v: &str, path: &str, errs: &mut Vec<FieldError>) {
    for m in validation::dns1123_subdomain(v) {
        errs.push(FieldError::invalid(path, json!(v), m));
    }
}

/// A value as upstream's v1.34 messages print a non-scalar: its JSON
/// (Go's encoder escapes HTML characters).
fn go_json(v: &Value) -> String {
    serde_json::to_string(v)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A Go struct's JSON: fields in declaration order, values already rendered.
fn go_struct(fields: &[(&str, String)]) -> String {
    let inner: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

/// upstream sets no generation on create (only updates bump it).
fn drop_generation(obj: &mut Value) {
    crate::registry::meta::meta_mut(obj).remove("generation");
}

/// The kinds' tests: each error as (field, message).
#[cfg(test)]
fn fields(errs: &[FieldError]) -> Vec<(String, String)> {
    errs.iter()
        .map(|e| (e.field.clone(), e.message()))
        .collect()
}

/// The kinds' tests: a row's cells.
#[cfg(test)]
fn cells(cols: &[Column], o: &Value) -> Vec<Value> {
    cols.iter().map(|c| (c.cell)(o)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_as_upstream() {
        assert!(qualified_name("example.com/zone").is_empty());
        assert_eq!(qualified_name("a/b/c").len(), 1);
        assert!(qualified_name("a/b/c")[0].starts_with("a qualified name must consist of"));
        assert_eq!(qualified_name("example.com/").len(), 2);
        assert!(sem_eq(
            &json!({"a": [], "b": null, "c": 1}),
            &json!({"c": 1})
        ));
        assert!(!sem_eq(&json!({"c": 1}), &json!({"c": 2})));
    }
}
