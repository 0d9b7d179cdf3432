//! Kubernetes protobuf (`application/vnd.kubernetes.protobuf`) decoding.
//!
//! Upstream clients (kubectl's typed clients among them) send request
//! bodies, and upstream stores etcd values, as the bytes `k8s\0` followed by
//! a protobuf `runtime.Unknown`:
//!
//! ```text
//! message Unknown {
//!   optional TypeMeta typeMeta = 1;   // {apiVersion = 1; kind = 2}
//!   optional bytes raw = 2;           // the object, e.g. a k8s.io.api.core.v1.ConfigMap
//!   optional string contentEncoding = 3;
//!   optional string contentType = 4;
//! }
//! ```
//!
//! [`decode`] turns that into the JSON upstream would print for the same
//! object. The messages' fields (tags, cardinalities, wire kinds) are static
//! data in `schema.rs`, generated from the crate `k8s-pb` by
//! `scripts/gen-protobuf-schema.py`; JSON field names come from the schemas
//! of `k8s-openapi`'s types at run time (prost's snake_case loses acronyms:
//! `pod_ip` is `podIP`).
//!
//! JSON forms follow upstream's Go types: `Time` and `MicroTime` are RFC 3339
//! strings (null for the zero time), `Duration` a Go duration string,
//! `IntOrString` a number or a string, `Quantity` its string, `RawExtension`,
//! `FieldsV1` and apiextensions' `JSON` their raw JSON, bytes base64. Proto2
//! presence is kept: a scalar on the wire appears in the JSON even when it is
//! zero, and a field absent from the wire is omitted. Unknown tags are
//! skipped. Go embedded structs (`json:",inline"`, a message field in
//! protobuf, e.g. `Volume.volumeSource`) are merged into their parent.
//!
//! Go's encoder writes every non-pointer field, zero or not, so bodies from
//! Go clients carry `generateName: ""`, `imagePullPolicy: ""` and the like;
//! [`DecodeOptions::omit_empty_strings`] drops such empty strings.
//!
//! Layout: `descriptor` holds the shape of the generated tables (`schema`,
//! `zero_values`, and `field_json`: each field's JSON name, generated from
//! k8s-openapi's schemas and checked against them by a test); `registry`
//! indexes them by name and kind; `decode` and `encode` turn bytes into
//! JSON and back over the `wire` format.

mod decode;
mod descriptor;
mod encode;
#[rustfmt::skip]
mod field_json;
mod quantities;
mod registry;
#[rustfmt::skip]
mod schema;
mod wire;
#[rustfmt::skip]
pub(crate) mod zero_values;

#[cfg(test)]
mod tests;

pub use crate::api::catalog::SchemaFn;
pub use decode::{
    decode, decode_message, decode_with, go_duration, is_protobuf, DecodeError, DecodeOptions,
};
pub use descriptor::{Card, Field, Kind, Message, ResourceKind};
pub use encode::{
    encode, encode_kind_body, encode_list, encode_message, envelope, has_message,
    parse_go_duration, watch_frame, EncodeError,
};
pub use quantities::{visit_bytes, visit_quantities};
pub use registry::{message_for_kind, package_for_api_version, zero_status};
pub use schema::{MESSAGES, OPENAPI_SCHEMAS, RESOURCES};

/// The magic prefix of every Kubernetes protobuf object.
pub const MAGIC: &[u8] = b"k8s\x00";

/// Nesting limit of embedded messages: deep enough for any real object
/// (CRD schemas included), shallow enough for a small thread stack.
const MAX_DEPTH: usize = 200;
