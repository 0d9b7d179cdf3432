//! What a list or watch selects (upstream's storage `SelectionPredicate`):
//! the labels and fields of an object that selectors look at, how the
//! watch cache reads them from a stored object, and the filter that
//! matches them.

use std::sync::Arc;

use serde_json::Value;

use super::cacher::CachedObject;
use crate::api::selector::{FieldSelector, LabelSelector, Pairs};

/// What selectors look at.
#[derive(Debug, Clone, Default)]
pub struct ObjectAttrs {
    pub labels: Pairs,
    pub fields: Pairs,
}

/// Reads what the cache needs of a stored object's JSON (None when it is
/// not a JSON object); each resource has its own selectable fields.
pub trait ReadAttrs: Send + Sync {
    /// [`ObjectAttrs`] alone (lists, the cache's initial fill).
    fn attrs(&self, raw: &[u8]) -> Option<ObjectAttrs>;
    /// [`ObjectAttrs`] and, from the same parse, what a metadata informer
    /// keeps of the object (`apiVersion`, `kind`, `metadata` without
    /// `managedFields`): each written object's metadata is then decoded
    /// once, not once here and again by the garbage collector's informer.
    fn attrs_and_metadata(&self, raw: &[u8]) -> Option<(ObjectAttrs, Value)>;
}

pub type AttrsFn = Arc<dyn ReadAttrs>;

/// A plain function reads the attributes; the metadata comes from a
/// second, partial parse.
impl<F: Fn(&[u8]) -> Option<ObjectAttrs> + Send + Sync> ReadAttrs for F {
    fn attrs(&self, raw: &[u8]) -> Option<ObjectAttrs> {
        self(raw)
    }
    fn attrs_and_metadata(&self, raw: &[u8]) -> Option<(ObjectAttrs, Value)> {
        let meta = crate::api::partial_json::object_metadata(raw)?;
        Some((self(raw)?, meta))
    }
}

/// Which objects a list or watch wants.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Key prefix within the resource (a namespace), or one exact key.
    pub key_prefix: Option<String>,
    pub exact_key: Option<String>,
    pub label: LabelSelector,
    pub field: FieldSelector,
}

impl Filter {
    pub(super) fn matches(&self, o: &CachedObject) -> bool {
        if let Some(k) = &self.exact_key {
            if o.key != *k {
                return false;
            }
        }
        if let Some(p) = &self.key_prefix {
            if !o.key.starts_with(p.as_str()) {
                return false;
            }
        }
        self.label.matches(&o.attrs.labels) && self.field.matches(&o.attrs.fields)
    }

    pub(super) fn is_unfiltered(&self) -> bool {
        self.label.is_empty() && self.field.is_empty()
    }
}

pub(super) fn decode_attrs(attrs: &AttrsFn, value: &[u8]) -> ObjectAttrs {
    attrs.attrs(value).unwrap_or_default()
}

/// What the cache reads of an object written at `rv`: its attributes and
/// its metadata as a metadata informer keeps it. Stored bytes carry no
/// resourceVersion; the object as served (and as informers decode it)
/// does, so the metadata gets it here.
pub(super) fn written(attrs: &AttrsFn, raw: &[u8], rv: i64) -> (ObjectAttrs, Option<Arc<Value>>) {
    match attrs.attrs_and_metadata(raw) {
        Some((a, mut meta)) => {
            if let Some(m) = meta.get_mut("metadata").and_then(Value::as_object_mut) {
                m.insert("resourceVersion".into(), Value::String(rv.to_string()));
            }
            (a, Some(Arc::new(meta)))
        }
        None => (ObjectAttrs::default(), None),
    }
}
