//! OpenAPI v2 in protobuf: the document `/openapi/v2` serves as JSON,
//! encoded as gnostic's `openapi.v2.Document` (google/gnostic-models,
//! openapiv2/OpenAPIv2.proto), which is what kubectl asks for
//! (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`)
//! before it validates a manifest client-side. Values gnostic keeps as
//! `Any` (defaults, examples, enums, vendor extensions) carry their YAML
//! text; JSON is YAML, so they carry their JSON.

use serde_json::{Map, Value};

/// The protobuf media types kube-openapi answers with protobuf (the
/// `@` form is what clients send; the `.` form is what is returned).
pub const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// Whether an Accept header's media range asks for the protobuf document
/// (`...spec.v2@v1.0+protobuf`, `...spec.v2.v1.0+protobuf`).
pub fn is_protobuf_range(range: &str) -> bool {
    let t = range.split(';').next().unwrap_or("").trim();
    t.eq_ignore_ascii_case("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
        || t.eq_ignore_ascii_case(CONTENT_TYPE)
}

/// A protobuf message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }

    fn key(&mut self, tag: u32, wire: u8) {
        self.varint(((tag as u64) << 3) | wire as u64);
    }

    fn bytes(&mut self, tag: u32, b: &[u8]) {
        self.key(tag, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn string(&mut self, tag: u32, v: Option<&Value>) {
        if let Some(s) = v.and_then(Value::as_str) {
            if !s.is_empty() {
                self.bytes(tag, s.as_bytes());
            }
        }
    }

    fn strings(&mut self, tag: u32, v: Option<&Value>) {
        for s in v.and_then(Value::as_array).into_iter().flatten() {
            if let Some(s) = s.as_str() {
                self.bytes(tag, s.as_bytes());
            }
        }
    }

    fn message(&mut self, tag: u32, m: Msg) {
        self.bytes(tag, &m.0);
    }

    fn boolean(&mut self, tag: u32, v: Option<&Value>) {
        if v.and_then(Value::as_bool) == Some(true) {
            self.key(tag, 0);
            self.varint(1);
        }
    }

    fn int(&mut self, tag: u32, v: Option<&Value>) {
        if let Some(n) = v.and_then(Value::as_i64) {
            if n != 0 {
                self.key(tag, 0);
                self.varint(n as u64);
            }
        }
    }

    fn double(&mut self, tag: u32, v: Option<&Value>) {
        if let Some(n) = v.and_then(Value::as_f64) {
            if n != 0.0 {
                self.key(tag, 1);
                self.0.extend_from_slice(&n.to_le_bytes());
            }
        }
    }

    /// gnostic's `Any`: `{ yaml = 2 }`.
    fn any(&mut self, tag: u32, v: Option<&Value>) {
        if let Some(v) = v {
            self.message(tag, any(v));
        }
    }

    fn anys(&mut self, tag: u32, v: Option<&Value>) {
        for item in v.and_then(Value::as_array).into_iter().flatten() {
            self.message(tag, any(item));
        }
    }

    /// `repeated NamedAny vendor_extension`: every `x-` key of `obj`.
    fn extensions(&mut self, tag: u32, obj: &Map<String, Value>) {
        for (k, v) in obj.iter().filter(|(k, _)| k.starts_with("x-")) {
            let mut named = Msg::default();
            named.bytes(1, k.as_bytes());
            named.message(2, any(v));
            self.message(tag, named);
        }
    }
}

fn any(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.bytes(2, v.to_string().as_bytes());
    m
}

fn obj(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

/// The whole document.
pub fn document(doc: &Value) -> Vec<u8> {
    let d = obj(doc);
    let mut m = Msg::default();
    m.string(1, d.get("swagger"));
    if let Some(i) = d.get("info") {
        let io = obj(i);
        let mut info = Msg::default();
        info.string(1, io.get("title"));
        info.string(2, io.get("version"));
        info.string(3, io.get("description"));
        info.string(4, io.get("termsOfService"));
        info.extensions(7, &io);
        m.message(2, info);
    }
    m.string(3, d.get("host"));
    m.string(4, d.get("basePath"));
    m.strings(5, d.get("schemes"));
    m.strings(6, d.get("consumes"));
    m.strings(7, d.get("produces"));
    if let Some(Value::Object(paths)) = d.get("paths") {
        let mut p = Msg::default();
        p.extensions(1, paths);
        for (name, item) in paths.iter().filter(|(k, _)| !k.starts_with("x-")) {
            let mut named = Msg::default();
            named.bytes(1, name.as_bytes());
            named.message(2, path_item(item));
            p.message(2, named);
        }
        m.message(8, p);
    }
    if let Some(Value::Object(defs)) = d.get("definitions") {
        m.message(9, named_schemas(defs));
    }
    for req in d
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(12, security_requirement(req));
    }
    if let Some(Value::Object(defs)) = d.get("securityDefinitions") {
        let mut sd = Msg::default();
        for (name, def) in defs {
            let mut named = Msg::default();
            named.bytes(1, name.as_bytes());
            named.message(2, security_definition(def));
            sd.message(1, named);
        }
        m.message(13, sd);
    }
    m.extensions(16, &d);
    m.0
}

/// `Definitions` and `Properties` share a shape: `repeated NamedSchema = 1`.
fn named_schemas(map: &Map<String, Value>) -> Msg {
    let mut m = Msg::default();
    for (name, s) in map {
        let mut named = Msg::default();
        named.bytes(1, name.as_bytes());
        named.message(2, schema(s));
        m.message(1, named);
    }
    m
}

fn schema(v: &Value) -> Msg {
    let s = obj(v);
    let mut m = Msg::default();
    m.string(1, s.get("$ref"));
    m.string(2, s.get("format"));
    m.string(3, s.get("title"));
    m.string(4, s.get("description"));
    m.any(5, s.get("default"));
    m.double(6, s.get("multipleOf"));
    m.double(7, s.get("maximum"));
    m.boolean(8, s.get("exclusiveMaximum"));
    m.double(9, s.get("minimum"));
    m.boolean(10, s.get("exclusiveMinimum"));
    m.int(11, s.get("maxLength"));
    m.int(12, s.get("minLength"));
    m.string(13, s.get("pattern"));
    m.int(14, s.get("maxItems"));
    m.int(15, s.get("minItems"));
    m.boolean(16, s.get("uniqueItems"));
    m.int(17, s.get("maxProperties"));
    m.int(18, s.get("minProperties"));
    m.strings(19, s.get("required"));
    m.anys(20, s.get("enum"));
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            let mut a = Msg::default();
            a.key(2, 0);
            a.varint(*b as u64);
            m.message(21, a);
        }
        Some(inner @ Value::Object(_)) => {
            let mut a = Msg::default();
            a.message(1, schema(inner));
            m.message(21, a);
        }
        _ => {}
    }
    match s.get("type") {
        Some(Value::String(t)) => {
            let mut ti = Msg::default();
            ti.bytes(1, t.as_bytes());
            m.message(22, ti);
        }
        Some(types @ Value::Array(_)) => {
            let mut ti = Msg::default();
            ti.strings(1, Some(types));
            m.message(22, ti);
        }
        _ => {}
    }
    match s.get("items") {
        Some(Value::Array(list)) => {
            let mut items = Msg::default();
            for i in list {
                items.message(1, schema(i));
            }
            m.message(23, items);
        }
        Some(one @ Value::Object(_)) => {
            let mut items = Msg::default();
            items.message(1, schema(one));
            m.message(23, items);
        }
        _ => {}
    }
    for sub in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(24, schema(sub));
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        m.message(25, named_schemas(props));
    }
    m.string(26, s.get("discriminator"));
    m.boolean(27, s.get("readOnly"));
    m.any(30, s.get("example"));
    m.extensions(31, &s);
    m
}

fn path_item(v: &Value) -> Msg {
    let p = obj(v);
    let mut m = Msg::default();
    m.string(1, p.get("$ref"));
    for (tag, verb) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (6, "options"),
        (7, "head"),
        (8, "patch"),
    ] {
        if let Some(op) = p.get(verb) {
            m.message(tag, operation(op));
        }
    }
    for param in p
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(9, parameters_item(param));
    }
    m.extensions(10, &p);
    m
}

fn operation(v: &Value) -> Msg {
    let o = obj(v);
    let mut m = Msg::default();
    m.strings(1, o.get("tags"));
    m.string(2, o.get("summary"));
    m.string(3, o.get("description"));
    m.string(5, o.get("operationId"));
    m.strings(6, o.get("produces"));
    m.strings(7, o.get("consumes"));
    for param in o
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(8, parameters_item(param));
    }
    if let Some(Value::Object(responses)) = o.get("responses") {
        let mut r = Msg::default();
        for (code, resp) in responses.iter().filter(|(k, _)| !k.starts_with("x-")) {
            let ro = obj(resp);
            let mut value = Msg::default();
            if let Some(reference) = ro.get("$ref") {
                let mut j = Msg::default();
                j.string(1, Some(reference));
                value.message(2, j);
            } else {
                let mut response = Msg::default();
                response.string(1, ro.get("description"));
                if let Some(sch) = ro.get("schema") {
                    let mut item = Msg::default();
                    item.message(1, schema(sch));
                    response.message(2, item);
                }
                response.extensions(5, &ro);
                value.message(1, response);
            }
            let mut named = Msg::default();
            named.bytes(1, code.as_bytes());
            named.message(2, value);
            r.message(1, named);
        }
        r.extensions(2, responses);
        m.message(9, r);
    }
    m.strings(10, o.get("schemes"));
    m.boolean(11, o.get("deprecated"));
    for req in o
        .get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        m.message(12, security_requirement(req));
    }
    m.extensions(13, &o);
    m
}

/// `ParametersItem`: a `$ref`, or a body or non-body parameter.
fn parameters_item(v: &Value) -> Msg {
    let p = obj(v);
    let mut item = Msg::default();
    if let Some(reference) = p.get("$ref") {
        let mut j = Msg::default();
        j.string(1, Some(reference));
        j.string(2, p.get("description"));
        item.message(2, j);
        return item;
    }
    let mut param = Msg::default();
    match p.get("in").and_then(Value::as_str).unwrap_or("") {
        "body" => {
            let mut b = Msg::default();
            b.string(1, p.get("description"));
            b.string(2, p.get("name"));
            b.string(3, p.get("in"));
            b.boolean(4, p.get("required"));
            if let Some(s) = p.get("schema") {
                b.message(5, schema(s));
            }
            b.extensions(6, &p);
            param.message(1, b);
        }
        place => {
            // Query and form parameters number their fields one way
            // (allowEmptyValue at 5), path and header ones the other.
            let (which, offset) = match place {
                "query" => (3, 1),
                "formData" => (2, 1),
                "header" => (1, 0),
                _ => (4, 0),
            };
            let mut sub = Msg::default();
            sub.boolean(1, p.get("required"));
            sub.string(2, p.get("in"));
            sub.string(3, p.get("description"));
            sub.string(4, p.get("name"));
            if offset == 1 {
                sub.boolean(5, p.get("allowEmptyValue"));
            }
            sub.string(5 + offset, p.get("type"));
            sub.string(6 + offset, p.get("format"));
            sub.string(8 + offset, p.get("collectionFormat"));
            sub.any(9 + offset, p.get("default"));
            sub.double(10 + offset, p.get("maximum"));
            sub.boolean(11 + offset, p.get("exclusiveMaximum"));
            sub.double(12 + offset, p.get("minimum"));
            sub.boolean(13 + offset, p.get("exclusiveMinimum"));
            sub.int(14 + offset, p.get("maxLength"));
            sub.int(15 + offset, p.get("minLength"));
            sub.string(16 + offset, p.get("pattern"));
            sub.int(17 + offset, p.get("maxItems"));
            sub.int(18 + offset, p.get("minItems"));
            sub.boolean(19 + offset, p.get("uniqueItems"));
            sub.anys(20 + offset, p.get("enum"));
            sub.double(21 + offset, p.get("multipleOf"));
            sub.extensions(22 + offset, &p);
            let mut non_body = Msg::default();
            non_body.message(which, sub);
            param.message(2, non_body);
        }
    }
    item.message(1, param);
    item
}

fn security_requirement(v: &Value) -> Msg {
    let mut m = Msg::default();
    for (name, scopes) in obj(v) {
        let mut arr = Msg::default();
        arr.strings(1, Some(&scopes));
        let mut named = Msg::default();
        named.bytes(1, name.as_bytes());
        named.message(2, arr);
        m.message(1, named);
    }
    m
}

fn security_definition(v: &Value) -> Msg {
    let d = obj(v);
    let mut item = Msg::default();
    match d.get("type").and_then(Value::as_str) {
        Some("apiKey") => {
            let mut k = Msg::default();
            k.string(1, d.get("type"));
            k.string(2, d.get("name"));
            k.string(3, d.get("in"));
            k.string(4, d.get("description"));
            k.extensions(5, &d);
            item.message(2, k);
        }
        Some("basic") => {
            let mut b = Msg::default();
            b.string(1, d.get("type"));
            b.string(2, d.get("description"));
            b.extensions(3, &d);
            item.message(1, b);
        }
        _ => {}
    }
    item
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_and_nested_messages_are_length_delimited() {
        let d = document(
            &json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.34.0"}}),
        );
        let mut want = vec![0x0a, 3];
        want.extend_from_slice(b"2.0");
        want.extend_from_slice(&[0x12, 21, 0x0a, 10]);
        want.extend_from_slice(b"Kubernetes");
        want.extend_from_slice(&[0x12, 7]);
        want.extend_from_slice(b"v1.34.0");
        assert_eq!(d, want);
    }

    #[test]
    fn the_media_types_kubectl_sends() {
        assert!(is_protobuf_range(
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
        ));
        assert!(is_protobuf_range(
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf; q=0.9"
        ));
        assert!(!is_protobuf_range("application/json"));
    }
}
