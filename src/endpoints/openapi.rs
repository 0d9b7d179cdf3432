//! OpenAPI v2 (`/openapi/v2`) and v3 (`/openapi/v3` and one document per
//! group version), generated from the catalog: schemas from `k8s-openapi`
//! (and, later, CRDs), paths and operations from each resource's verbs,
//! with upstream's `x-kubernetes-*` extensions. Documents are built on
//! first request after a catalog change and cached with their hashes.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use schemars::generate::SchemaSettings;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha512};

use crate::api::catalog::{Catalog, Resource};
use crate::version;

/// Built documents for one catalog generation.
pub struct Documents {
    pub v2: Bytes,
    pub v2_etag: String,
    /// v2 in gnostic's protobuf, with its ETag (what kubectl asks for).
    pub v2_protobuf: Bytes,
    pub v2_protobuf_etag: String,
    pub v3_index: Bytes,
    /// `api/v1`, `apis/apps/v1`, ... -> (document, hash)
    pub v3: BTreeMap<String, (Bytes, String)>,
}

#[derive(Clone, Default)]
pub struct OpenApi {
    catalog: Catalog,
    cache: Arc<Mutex<Option<(u64, Arc<Documents>)>>>,
}

fn hash(b: &[u8]) -> String {
    let d = Sha512::digest(b);
    d.iter().map(|x| format!("{x:02X}")).collect()
}

/// `listCoreV1NamespacedConfigMap` and friends: upstream's operation ids.
fn op_group(group: &str) -> String {
    if group.is_empty() {
        return "Core".into();
    }
    group
        .trim_end_matches(".k8s.io")
        .split('.')
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn op_version(v: &str) -> String {
    let mut c = v.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!([{"group": group, "version": version, "kind": kind}])
}

fn query_param(name: &str, description: &str, ty: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": ty, "uniqueItems": true}})
}

fn write_params() -> Vec<Value> {
    vec![
        query_param("dryRun", "When present, indicates that modifications should not be persisted.", "string"),
        query_param("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes.", "string"),
        query_param("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: Ignore, Warn (default), Strict.", "string"),
    ]
}

fn list_params() -> Vec<Value> {
    vec![
        query_param("allowWatchBookmarks", "allowWatchBookmarks requests watch events with type \"BOOKMARK\".", "boolean"),
        query_param("continue", "The continue option should be set when retrieving more results from the server.", "string"),
        query_param("fieldSelector", "A selector to restrict the list of returned objects by their fields.", "string"),
        query_param("labelSelector", "A selector to restrict the list of returned objects by their labels.", "string"),
        query_param("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
        query_param("resourceVersion", "resourceVersion sets a constraint on what resource versions a request may be served from.", "string"),
        query_param("resourceVersionMatch", "resourceVersionMatch determines how resourceVersion is applied to list calls.", "string"),
        query_param("sendInitialEvents", "`sendInitialEvents=true` may be set together with `watch=true`.", "boolean"),
        query_param("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
        query_param("watch", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.", "boolean"),
    ]
}

struct PathBuilder<'a> {
    r: &'a Resource,
    v3: bool,
}

impl PathBuilder<'_> {
    fn schema_ref(&self, name: &str) -> Value {
        if self.v3 {
            json!({"$ref": format!("#/components/schemas/{name}")})
        } else {
            json!({"$ref": format!("#/definitions/{name}")})
        }
    }

    fn response(&self, code: &str, schema: &str) -> Value {
        let mut responses = Map::new();
        if self.v3 {
            responses.insert(code.into(), json!({"description": "OK", "content": {"application/json": {"schema": self.schema_ref(schema)}, "application/yaml": {"schema": self.schema_ref(schema)}}}));
        } else {
            responses.insert(
                code.into(),
                json!({"description": "OK", "schema": self.schema_ref(schema)}),
            );
        }
        responses.insert("401".into(), json!({"description": "Unauthorized"}));
        Value::Object(responses)
    }

    fn body(&self, schema: &str, content_types: &[&str]) -> (Option<Value>, Option<Value>) {
        if self.v3 {
            let content: Map<String, Value> = content_types
                .iter()
                .map(|ct| (ct.to_string(), json!({"schema": self.schema_ref(schema)})))
                .collect();
            (Some(json!({"content": content, "required": true})), None)
        } else {
            (
                None,
                Some(
                    json!({"name": "body", "in": "body", "required": true, "schema": self.schema_ref(schema)}),
                ),
            )
        }
    }

    fn op(
        &self,
        id: String,
        action: &str,
        kind_gvk: Value,
        mut params: Vec<Value>,
        body: Option<(&str, &[&str])>,
        response: Value,
    ) -> Value {
        let mut o = json!({
            "tags": [format!("{}{}", op_group(&self.r.group).to_lowercase(), op_version(&self.r.version))],
            "operationId": id,
            "responses": response,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": kind_gvk.get(0).cloned().unwrap_or(Value::Null),
        });
        if let Some((schema, cts)) = body {
            let (v3_body, v2_param) = self.body(schema, cts);
            if let Some(b) = v3_body {
                o["requestBody"] = b;
            }
            if let Some(p) = v2_param {
                params.push(p);
            }
        }
        if !self.v3 {
            for p in params.iter_mut() {
                if let Some(t) = p.get("schema").and_then(|s| s.get("type")).cloned() {
                    p["type"] = t;
                    if let Some(m) = p.as_object_mut() {
                        m.remove("schema");
                    }
                }
            }
        }
        if !params.is_empty() {
            o["parameters"] = Value::Array(params);
        }
        o
    }

    fn add(&self, paths: &mut Map<String, Value>, schema_name: &str) {
        let r = self.r;
        let prefix = if r.group.is_empty() {
            format!("/api/{}", r.version)
        } else {
            format!("/apis/{}/{}", r.group, r.version)
        };
        let (ns_seg, ns_word) = if r.namespaced {
            ("/namespaces/{namespace}", "Namespaced")
        } else {
            ("", "")
        };
        let base = format!(
            "{}{}{}",
            op_group(&r.group),
            op_version(&r.version),
            ns_word
        );
        let collection = format!("{prefix}{ns_seg}/{}", r.plural);
        let item = format!("{collection}/{{name}}");
        let kind_gvk = gvk(&r.group, &r.version, &r.kind);
        let list_name = format!("{schema_name}List");
        let mut coll = Map::new();
        let mut it = Map::new();
        let v = |verb: &str| r.has_verb(verb);
        if v("list") {
            coll.insert(
                "get".into(),
                self.op(
                    format!("list{base}{}", r.kind),
                    "list",
                    kind_gvk.clone(),
                    list_params(),
                    None,
                    self.response("200", &list_name),
                ),
            );
        }
        if v("create") {
            coll.insert(
                "post".into(),
                self.op(
                    format!("create{base}{}", r.kind),
                    "post",
                    kind_gvk.clone(),
                    write_params(),
                    Some((schema_name, &["application/json", "application/yaml"])),
                    self.response("201", schema_name),
                ),
            );
        }
        if v("deletecollection") {
            coll.insert(
                "delete".into(),
                self.op(
                    format!("deletecollection{base}{}", r.kind),
                    "deletecollection",
                    kind_gvk.clone(),
                    list_params(),
                    None,
                    self.response("200", "io.k8s.apimachinery.pkg.apis.meta.v1.Status"),
                ),
            );
        }
        if v("get") {
            it.insert(
                "get".into(),
                self.op(
                    format!("read{base}{}", r.kind),
                    "get",
                    kind_gvk.clone(),
                    vec![],
                    None,
                    self.response("200", schema_name),
                ),
            );
        }
        if v("update") {
            it.insert(
                "put".into(),
                self.op(
                    format!("replace{base}{}", r.kind),
                    "put",
                    kind_gvk.clone(),
                    write_params(),
                    Some((schema_name, &["application/json", "application/yaml"])),
                    self.response("200", schema_name),
                ),
            );
        }
        if v("patch") {
            let mut params = write_params();
            params.push(query_param(
                "force",
                "Force is going to \"force\" Apply requests.",
                "boolean",
            ));
            let cts = patch_types(r);
            it.insert(
                "patch".into(),
                self.op(
                    format!("patch{base}{}", r.kind),
                    "patch",
                    kind_gvk.clone(),
                    params,
                    Some(("io.k8s.apimachinery.pkg.apis.meta.v1.Patch", cts)),
                    self.response("200", schema_name),
                ),
            );
        }
        if v("delete") {
            it.insert(
                "delete".into(),
                self.op(
                    format!("delete{base}{}", r.kind),
                    "delete",
                    kind_gvk.clone(),
                    vec![
                        query_param(
                            "dryRun",
                            "When present, indicates that modifications should not be persisted.",
                            "string",
                        ),
                        query_param(
                            "propagationPolicy",
                            "Whether and how garbage collection will be performed.",
                            "string",
                        ),
                    ],
                    None,
                    self.response("200", "io.k8s.apimachinery.pkg.apis.meta.v1.Status"),
                ),
            );
        }
        let path_params = |with_name: bool| {
            let mut ps = Vec::new();
            if with_name {
                ps.push(json!({"name": "name", "in": "path", "description": format!("name of the {}", r.kind), "required": true, "schema": {"type": "string", "uniqueItems": true}}));
            }
            if r.namespaced {
                ps.push(json!({"name": "namespace", "in": "path", "description": "object name and auth scope, such as for teams and projects", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
            }
            ps
        };
        let fix = |mut m: Map<String, Value>, with_name: bool, v3: bool| {
            let mut ps = path_params(with_name);
            if !v3 {
                for p in ps.iter_mut() {
                    p["type"] = json!("string");
                    if let Some(o) = p.as_object_mut() {
                        o.remove("schema");
                    }
                }
            }
            if !ps.is_empty() {
                m.insert("parameters".into(), Value::Array(ps));
            }
            Value::Object(m)
        };
        if !coll.is_empty() {
            paths.insert(collection.clone(), fix(coll, false, self.v3));
        }
        if !it.is_empty() {
            paths.insert(item.clone(), fix(it, true, self.v3));
        }
        for s in &r.subresources {
            if s.name != "status" && s.name != "scale" {
                continue;
            }
            let (sub_schema, sub_gvk) = if s.name == "scale" {
                (
                    "io.k8s.api.autoscaling.v1.Scale".to_string(),
                    gvk("autoscaling", "v1", "Scale"),
                )
            } else {
                (schema_name.to_string(), kind_gvk.clone())
            };
            let suffix = if s.name == "status" {
                "Status"
            } else {
                "Scale"
            };
            let mut m = Map::new();
            m.insert(
                "get".into(),
                self.op(
                    format!("read{base}{}{suffix}", r.kind),
                    "get",
                    sub_gvk.clone(),
                    vec![],
                    None,
                    self.response("200", &sub_schema),
                ),
            );
            m.insert(
                "put".into(),
                self.op(
                    format!("replace{base}{}{suffix}", r.kind),
                    "put",
                    sub_gvk.clone(),
                    write_params(),
                    Some((&sub_schema, &["application/json"])),
                    self.response("200", &sub_schema),
                ),
            );
            let cts = patch_types(r);
            m.insert(
                "patch".into(),
                self.op(
                    format!("patch{base}{}{suffix}", r.kind),
                    "patch",
                    sub_gvk,
                    write_params(),
                    Some(("io.k8s.apimachinery.pkg.apis.meta.v1.Patch", cts)),
                    self.response("200", &sub_schema),
                ),
            );
            paths.insert(format!("{item}/{}", s.name), fix(m, true, self.v3));
        }
    }
}

/// Schema of a `<Kind>List`.
fn list_schema(item_ref: &str, list_meta_ref: &str, g: &str, v: &str, kind: &str) -> Value {
    json!({
        "description": format!("{kind}List is a list of {kind}."),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "items": {"type": "array", "items": {"$ref": item_ref}, "description": format!("List of {}.", kind.to_lowercase())},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"allOf": [{"$ref": list_meta_ref}], "default": {}, "description": "Standard list metadata."}
        },
        "x-kubernetes-group-version-kind": gvk(g, v, &format!("{kind}List")),
    })
}

/// Generates the schemas for `resources` and the common meta types.
fn schemas(
    resources: &[Arc<Resource>],
    v3: bool,
) -> (
    Map<String, Value>,
    BTreeMap<(String, String, String), String>,
) {
    let settings = SchemaSettings::openapi3().with(|s| {
        s.meta_schema = None;
        if !v3 {
            s.definitions_path = "/definitions".into();
        }
    });
    let mut g = settings.into_generator();
    let mut names = BTreeMap::new();
    for r in resources {
        if let Some(f) = r.schema {
            let s = f(&mut g);
            if let Some(name) = s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.rsplit('/').next())
            {
                names.insert(
                    (r.group.clone(), r.version.clone(), r.kind.clone()),
                    name.to_string(),
                );
            }
        }
    }
    g.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>();
    g.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions>();
    g.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta>();
    let mut custom: Vec<(String, Value)> = Vec::new();
    for r in resources {
        // CRDs bring their schema; an aggregated server's resources (whose
        // own OpenAPI kapi does not merge) are open objects.
        let own_schema = match (&r.custom, &r.proxy) {
            (Some(info), _) => info.schema.clone(),
            (None, Some(_)) => None,
            (None, None) => continue,
        };
        g.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>();
        // upstream names CRD schemas by the reversed group: com.example.stable.v1.CronTab.
        let reversed: Vec<&str> = r.group.split('.').rev().collect();
        let name = format!("{}.{}.{}", reversed.join("."), r.version, r.kind);
        let mut schema = own_schema.unwrap_or_else(
            || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        );
        if !v3 {
            // kubectl validates against v2 and takes properties listed as
            // all there is: a schema that keeps unknown fields is an open
            // object there, without even TypeMeta (upstream's buildKubeNative).
            if schema["x-kubernetes-preserve-unknown-fields"] == json!(true) {
                let mut open = json!({"type": "object"});
                if let Some(d) = schema.get("description") {
                    open["description"] = d.clone();
                }
                names.insert(
                    (r.group.clone(), r.version.clone(), r.kind.clone()),
                    name.clone(),
                );
                custom.push((name, open));
                continue;
            }
            to_v2(&mut schema);
        }
        let meta_ref = if v3 {
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        } else {
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        };
        if let Some(props) = schema
            .as_object_mut()
            .map(|m| m.entry("properties").or_insert_with(|| json!({})))
        {
            props["apiVersion"] = json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."});
            props["kind"] = json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."});
            props["metadata"] = json!({"allOf": [{"$ref": meta_ref}], "description": "Standard object's metadata."});
        }
        names.insert(
            (r.group.clone(), r.version.clone(), r.kind.clone()),
            name.clone(),
        );
        custom.push((name, schema));
    }
    if resources.iter().any(|r| r.subresource("scale").is_some()) {
        g.subschema_for::<k8s_openapi::api::autoscaling::v1::Scale>();
    }
    let mut defs = g.take_definitions(true);
    for (name, schema) in custom {
        defs.insert(name, schema);
    }
    let (item_prefix, meta_ref) = if v3 {
        (
            "#/components/schemas/",
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        )
    } else {
        (
            "#/definitions/",
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        )
    };
    for ((grp, ver, kind), name) in &names {
        if let Some(s) = defs.get_mut(name).and_then(Value::as_object_mut) {
            // k8s-openapi's types hold `metadata` outside an Option, so its
            // schemas list it as required; upstream's do not (but for
            // core/v1 Event), and kubectl's client-side validation would
            // refuse a TokenReview or SubjectAccessReview written without it.
            if name != "io.k8s.api.core.v1.Event" {
                let now_empty = s
                    .get_mut("required")
                    .and_then(Value::as_array_mut)
                    .is_some_and(|req| {
                        req.retain(|f| f != "metadata");
                        req.is_empty()
                    });
                if now_empty {
                    s.remove("required");
                }
            }
            let entry = s
                .entry("x-kubernetes-group-version-kind")
                .or_insert_with(|| json!([]));
            if let Some(a) = entry.as_array_mut() {
                a.push(json!({"group": grp, "version": ver, "kind": kind}));
            }
        }
        defs.insert(
            format!("{name}List"),
            list_schema(&format!("{item_prefix}{name}"), meta_ref, grp, ver, kind),
        );
    }
    defs.insert("io.k8s.apimachinery.pkg.apis.meta.v1.Patch".into(), json!({"description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.", "type": "object"}));
    add_patch_extensions(&mut defs);
    (defs, names)
}

fn info() -> Value {
    json!({"title": "Kubernetes", "version": version::KUBERNETES_GIT_VERSION})
}

fn build(catalog: &Catalog) -> Documents {
    let all = catalog.all();
    // v2: one document for everything.
    let (defs, names) = schemas(&all, false);
    let mut paths = Map::new();
    for r in &all {
        if let Some(n) = names.get(&(r.group.clone(), r.version.clone(), r.kind.clone())) {
            PathBuilder { r, v3: false }.add(&mut paths, n);
        }
    }
    let v2 = json!({"swagger": "2.0", "info": info(), "paths": paths, "definitions": defs,
        "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey", "name": "authorization", "in": "header"}},
        "security": [{"BearerToken": []}]});
    let v2_protobuf = Bytes::from(super::openapi_pb::document(&v2));
    let v2_protobuf_etag = format!("\"{}\"", hash(&v2_protobuf));
    let v2 = Bytes::from(serde_json::to_vec(&v2).unwrap_or_default());
    let v2_etag = format!("\"{}\"", hash(&v2));
    // v3: one document per group version.
    let mut gvs: BTreeMap<String, Vec<Arc<Resource>>> = BTreeMap::new();
    for r in &all {
        gvs.entry(gv_path(&r.group, &r.version))
            .or_default()
            .push(r.clone());
    }
    let mut v3 = BTreeMap::new();
    for (path, rs) in gvs {
        let (defs, names) = schemas(&rs, true);
        let mut paths = Map::new();
        for r in &rs {
            if let Some(n) = names.get(&(r.group.clone(), r.version.clone(), r.kind.clone())) {
                PathBuilder { r, v3: true }.add(&mut paths, n);
            }
        }
        let doc = json!({"openapi": "3.0.0", "info": info(), "paths": paths,
            "components": {"schemas": defs, "securitySchemes": {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header"}}}});
        let bytes = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
        let h = hash(&bytes);
        v3.insert(path, (bytes, h));
    }
    let index: Map<String, Value> = v3
        .iter()
        .map(|(p, (_, h))| {
            (
                p.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={h}")}),
            )
        })
        .collect();
    let v3_index = Bytes::from(serde_json::to_vec(&json!({"paths": index})).unwrap_or_default());
    Documents {
        v2,
        v2_etag,
        v2_protobuf,
        v2_protobuf_etag,
        v3_index,
        v3,
    }
}

impl OpenApi {
    pub fn new(catalog: Catalog) -> Self {
        OpenApi {
            catalog,
            cache: Arc::default(),
        }
    }

    /// The documents for the catalog as it is now (built off the runtime).
    pub async fn documents(&self) -> Arc<Documents> {
        let generation = self.catalog.generation();
        if let Some((g, d)) = self.cache.lock().as_ref() {
            if *g == generation {
                return d.clone();
            }
        }
        let catalog = self.catalog.clone();
        let docs = match tokio::task::spawn_blocking(move || build(&catalog)).await {
            Ok(d) => Arc::new(d),
            Err(_) => Arc::new(Documents {
                v2: Bytes::new(),
                v2_etag: String::new(),
                v2_protobuf: Bytes::new(),
                v2_protobuf_etag: String::new(),
                v3_index: Bytes::new(),
                v3: BTreeMap::new(),
            }),
        };
        *self.cache.lock() = Some((generation, docs.clone()));
        docs
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn operation_ids() {
        assert_eq!(super::op_group(""), "Core");
        assert_eq!(
            super::op_group("rbac.authorization.k8s.io"),
            "RbacAuthorization"
        );
        assert_eq!(super::op_group("apps"), "Apps");
        assert_eq!(super::op_version("v2beta1"), "V2beta1");
    }
}

/// Upstream's `x-kubernetes-patch-*`, `x-kubernetes-list-*` and
/// `x-kubernetes-map-type` extensions, which clients (kubectl apply, SSA
/// clients) read to merge lists by key instead of replacing them.
fn add_patch_extensions(defs: &mut Map<String, Value>) {
    use crate::registry::patch::meta;
    for (name, schema) in defs.iter_mut() {
        if let Some(ty) = meta::TYPES.iter().find(|t| t.type_name == name) {
            schema["x-kubernetes-map-type"] = json!(ty.map_type);
        }
        let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
            continue;
        };
        for f in meta::fields_of(name) {
            let Some(p) = props.get_mut(f.field).and_then(Value::as_object_mut) else {
                continue;
            };
            if let Some(s) = f.patch_strategy {
                p.insert("x-kubernetes-patch-strategy".into(), json!(s));
            }
            if let Some(k) = f.merge_key {
                p.insert("x-kubernetes-patch-merge-key".into(), json!(k));
            }
            if let Some(lt) = f.list_type {
                p.insert("x-kubernetes-list-type".into(), json!(lt));
            }
            if !f.list_map_keys.is_empty() {
                p.insert("x-kubernetes-list-map-keys".into(), json!(f.list_map_keys));
            }
            if let Some(mt) = f.map_type {
                p.insert("x-kubernetes-map-type".into(), json!(mt));
            }
        }
    }
}

/// The patch types a resource's PATCH takes. Custom resources have no Go
/// struct to merge strategically by (kubectl picks its patch type from
/// this list, and would send one the server refuses).
fn patch_types(r: &Resource) -> &'static [&'static str] {
    if r.custom.is_some() {
        &[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ]
    } else {
        &[
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/apply-patch+yaml",
        ]
    }
}

/// upstream's ToStructuralOpenAPIV2: what kubectl's v2 validation cannot
/// take is dropped (combinators; properties and items under nullable or
/// unknown-field-keeping nodes; the type of arrays without items), and
/// nullable properties are not required.
fn to_v2(schema: &mut Value) {
    let Some(m) = schema.as_object_mut() else {
        return;
    };
    for k in ["allOf", "oneOf", "anyOf", "not"] {
        m.remove(k);
    }
    if m.get("nullable") == Some(&json!(true)) {
        for k in ["type", "nullable", "items", "properties"] {
            m.remove(k);
        }
    }
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true)) {
        m.remove("items");
        m.remove("properties");
    }
    if !m.contains_key("items") && m.get("type") == Some(&json!("array")) {
        m.remove("type");
    }
    let nullable: Vec<String> = m
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, v)| v.get("nullable") == Some(&json!(true)))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(req) = m.get_mut("required").and_then(Value::as_array_mut) {
        req.retain(|r| !nullable.iter().any(|n| r == n));
        if req.is_empty() {
            m.remove("required");
        }
    }
    if let Some(props) = m.get_mut("properties").and_then(Value::as_object_mut) {
        props.values_mut().for_each(to_v2);
    }
    if let Some(items) = m.get_mut("items") {
        to_v2(items);
    }
    if let Some(extra) = m.get_mut("additionalProperties").filter(|a| a.is_object()) {
        to_v2(extra);
    }
}
