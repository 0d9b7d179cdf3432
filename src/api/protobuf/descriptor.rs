//! The static description of protobuf messages (fields, tags,
//! cardinalities, wire kinds) that the generated tables in `schema.rs` are
//! written in: protobuf's descriptors, reduced to what kapi reads.

/// How many times a field may occur.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Card {
    /// At most once (proto2 `optional`: presence is tracked).
    Optional,
    /// Any number of times; scalars packed or not.
    Repeated,
    /// A `map<K, V>`: repeated entries `{K key = 1; V value = 2}`.
    Map,
}

/// The protobuf type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Double,
    Float,
    Enumeration,
    /// An embedded message, by full name.
    Message(&'static str),
    /// Key and value kinds of a map.
    Map(&'static Kind, &'static Kind),
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub tag: u32,
    /// prost's snake_case name (`pod_ip`).
    pub name: &'static str,
    pub card: Card,
    pub kind: Kind,
}

/// One protobuf message.
#[derive(Debug, Clone, Copy)]
pub struct Message {
    /// The full name as Kubernetes' OpenAPI spells it
    /// (`io.k8s.api.core.v1.Pod`).
    pub name: &'static str,
    /// A Go slice type (`+protobuf.nullable=true`, e.g. `meta.v1.Verbs`,
    /// `ExtraValue`): `{repeated items = 1}` on the wire, an array in JSON.
    pub array_wrapper: bool,
    /// Sorted by tag.
    pub fields: &'static [Field],
}

/// A top-level kind with an `impl Resource` in k8s-pb.
#[derive(Debug, Clone, Copy)]
pub struct ResourceKind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub message: &'static str,
}
