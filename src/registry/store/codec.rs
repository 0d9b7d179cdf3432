//! The decode and encode stages of the write path, and their mirror on
//! reads: a body must be this kind in this version, unknown fields go per
//! `fieldValidation`, objects are stored in the storage version and served
//! converted. Kept together because what is written and what is read must
//! round-trip.

use bytes::Bytes;
use serde_json::{json, Value};

use super::Registry;
use crate::api::status::qualified_kind;
use crate::api::ApiError;
use crate::registry::{conversion, meta, FieldValidation, WriteOptions};
use crate::trace;

/// Paths of fields in `input` that the typed object did not keep.
pub(super) fn unknown_fields(input: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (input, typed) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match b.get(k) {
                    Some(tv) => unknown_fields(v, tv, &p, out),
                    None if v.is_null() => {}
                    None => out.push(p),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                unknown_fields(x, y, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

impl Registry {
    /// Decode stage: the body must be this kind in this group version;
    /// the typed round trip drops unknown fields (reported per
    /// `fieldValidation`); the namespace is checked against the URL.
    pub fn decode(
        &self,
        body: Value,
        namespace: &str,
        opts: &WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let r = &self.resource;
        let expected = qualified_kind("", &r.kind);
        // JSON `null` decodes to the zero object, as Go's decoder leaves it.
        let body = if body.is_null() { json!({}) } else { body };
        let Some(obj) = body.as_object() else {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {expected}): couldn't get version/kind; json parse error: expected an object"
            )));
        };
        // As upstream's decoder: what the body leaves out comes from the URL.
        let r_api_version = r.api_version();
        let kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .unwrap_or(&r.kind)
            .to_string();
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .unwrap_or(&r_api_version)
            .to_string();
        let (kind, api_version) = (kind.as_str(), api_version.as_str());
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        if kind == r.kind && group == r.group && version != r.version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({r_api_version})"
            )));
        }
        if kind != r.kind || group != r.group || version != r.version {
            return Err(ApiError::bad_request(format!(
                "{kind} in version {version:?} cannot be handled as a {}: converting ({version}.{kind}) to ({}.{}): unknown conversion",
                r.kind,
                if r.group.is_empty() { "core" } else { r.group.split('.').next().unwrap_or("") },
                r.kind
            )));
        }
        // Go's decoder refuses metadata fields of the wrong JSON type.
        if let Some(m) = obj.get("metadata").filter(|m| !m.is_null()) {
            let wrong = |field: &str, want: &str, v: &Value| {
                ApiError::bad_request(format!(
                    "{kind} in version {version:?} cannot be handled as a {}: json: cannot unmarshal {} into Go struct field {field} of type {want}",
                    r.kind,
                    crate::api::json_type_name(v)
                ))
            };
            let Some(m) = m.as_object() else {
                return Err(wrong("ObjectMeta.metadata", "v1.ObjectMeta", m));
            };
            for f in [
                "name",
                "generateName",
                "namespace",
                "uid",
                "resourceVersion",
            ] {
                if let Some(v) = m.get(f).filter(|v| !v.is_null() && !v.is_string()) {
                    return Err(wrong(&format!("ObjectMeta.metadata.{f}"), "string", v));
                }
            }
        }
        let mut value = body;
        if let Some(m) = value.as_object_mut() {
            m.insert("kind".into(), Value::String(kind.to_string()));
            m.insert("apiVersion".into(), Value::String(api_version.to_string()));
        }
        {
            let m = meta::meta_mut(&mut value);
            let obj_ns = m
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if r.namespaced {
                if obj_ns.is_empty() {
                    m.insert("namespace".into(), Value::String(namespace.to_string()));
                } else if obj_ns != namespace {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
            } else {
                m.remove("namespace");
            }
        }
        let mut warnings = Vec::new();
        if let Some(schema) = r.custom.as_ref().and_then(|c| c.schema.as_ref()) {
            // Custom resources: the CRD's structural schema prunes what it does not know.
            let unknown = crate::schema::prune(&mut value, schema);
            if !unknown.is_empty() {
                match opts.field_validation {
                    FieldValidation::Strict => {
                        let list: Vec<String> = unknown
                            .iter()
                            .map(|f| format!("unknown field {f:?}"))
                            .collect();
                        return Err(ApiError::bad_request(format!(
                            "{kind} in version {version:?} cannot be handled as a {}: strict decoding error: {}",
                            r.kind,
                            list.join(", ")
                        )));
                    }
                    FieldValidation::Warn => {
                        warnings.extend(unknown.iter().map(|f| format!("unknown field {f:?}")))
                    }
                    FieldValidation::Ignore => {}
                }
            }
        }
        if let Some(codec) = r.codec {
            // Quantities decode into resource.Quantity upstream: refused when
            // malformed, written back canonical.
            crate::api::quantity::canonicalize_fields(api_version, kind, &mut value).map_err(
                |e| {
                    ApiError::bad_request(format!(
                        "{kind} in version {version:?} cannot be handled as a {}: {e}",
                        r.kind
                    ))
                },
            )?;
            // Go's base64 decoder ignores line breaks in []byte fields
            // (PEM-style wrapped Secret data); the typed decode does not.
            crate::api::protobuf::visit_bytes(api_version, kind, &mut value, &mut |v| {
                if let Value::String(s) = v {
                    if s.contains(['\n', '\r']) {
                        s.retain(|c| c != '\n' && c != '\r');
                    }
                }
            });
            let typed = codec(&value).map_err(|e| {
                ApiError::bad_request(format!(
                    "{kind} in version {version:?} cannot be handled as a {}: {e}",
                    r.kind
                ))
            })?;
            let mut unknown = Vec::new();
            unknown_fields(&value, &typed, "", &mut unknown);
            if !unknown.is_empty() {
                match opts.field_validation {
                    FieldValidation::Strict => {
                        let list: Vec<String> = unknown
                            .iter()
                            .map(|f| format!("unknown field {f:?}"))
                            .collect();
                        return Err(ApiError::bad_request(format!(
                            "{kind} in version {version:?} cannot be handled as a {}: strict decoding error: {}",
                            r.kind,
                            list.join(", ")
                        )));
                    }
                    FieldValidation::Warn => {
                        warnings.extend(unknown.iter().map(|f| format!("unknown field {f:?}")))
                    }
                    FieldValidation::Ignore => {}
                }
            }
            value = typed;
        }
        Ok((value, warnings))
    }

    pub(super) fn encode(obj: &Value) -> Bytes {
        // Most objects have nothing to drop: encoded as they are, without
        // a copy of the whole tree.
        let trimmed = obj
            .get("metadata")
            .and_then(Value::as_object)
            .is_some_and(|m| m.iter().any(|(k, v)| Self::not_stored(k, v)))
            .then(|| {
                let mut v = obj.clone();
                if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.retain(|k, v| !Self::not_stored(k, v));
                }
                v
            });
        // In Go's field order, as upstream stores and serves built-ins.
        Bytes::from(crate::api::go_json::to_vec(trimmed.as_ref().unwrap_or(obj)))
    }

    /// Metadata fields encoding leaves out: the resourceVersion (storage
    /// keeps it), and ObjectMeta's maps and lists when empty, as Go's
    /// `omitempty` does (removing the last label leaves no `labels: {}`
    /// behind upstream).
    fn not_stored(key: &str, value: &Value) -> bool {
        match key {
            "resourceVersion" => true,
            "labels" | "annotations" | "finalizers" | "ownerReferences" | "managedFields" => {
                match value {
                    Value::Object(o) => o.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::Null => true,
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// What a trace shows of encoding: the conversion from the served to
    /// the storage version, and the size stored.
    /// The object as stored: converted to the storage version and encoded
    /// (the `encode` stage of a trace).
    pub(super) fn encode_for_storage(&self, obj: &Value) -> Result<Bytes, ApiError> {
        let began = trace::start();
        let bytes = if conversion::needed(&self.resource) {
            Self::encode(&conversion::to_storage(
                &self.registries,
                &self.resource,
                obj.clone(),
            )?)
        } else {
            Self::encode(obj)
        };
        trace::stage(began, "encode", "ok", || self.encode_detail(bytes.len()));
        Ok(bytes)
    }

    /// The storage version, as an apiVersion.
    fn storage_api_version(&self) -> String {
        if self.resource.storage_group.is_empty() {
            self.resource.storage_version.clone()
        } else {
            format!(
                "{}/{}",
                self.resource.storage_group, self.resource.storage_version
            )
        }
    }

    fn encode_detail(&self, bytes: usize) -> Value {
        let storage = self.storage_api_version();
        json!({"conversion": format!("{} -> {storage}", self.resource.api_version()), "storageVersion": storage, "bytes": bytes})
    }

    /// What a read converts: from the storage version to the one served.
    pub(super) fn decode_detail(&self, bytes: usize) -> Value {
        let storage = self.storage_api_version();
        let conversion = if conversion::needed(&self.resource) {
            format!("{storage} -> {}", self.resource.api_version())
        } else {
            format!("none ({storage} is served as stored)")
        };
        json!({"conversion": conversion, "bytes": bytes})
    }

    /// Stored bytes as the served version shows them (no work when they
    /// agree): converted, and for custom resources defaulted by the schema
    /// as upstream defaults on read from storage.
    pub fn served(&self, stored: Bytes) -> Bytes {
        let convert = conversion::differs(&self.resource, &stored);
        if !convert && !self.defaults_on_read {
            return stored;
        }
        let converted = serde_json::from_slice::<Value>(&stored)
            .map_err(|e| ApiError::internal(e.to_string()))
            .and_then(|v| {
                if convert {
                    // Defaulted by the stored version's schema on the way.
                    conversion::from_storage(&self.registries, &self.resource, v)
                } else {
                    let mut v = v;
                    self.strategy.default(&mut v);
                    Ok(v)
                }
            });
        match converted {
            Ok(v) => Bytes::from(crate::api::go_json::to_vec(&v)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot convert a stored object to the served version");
                stored
            }
        }
    }
}
