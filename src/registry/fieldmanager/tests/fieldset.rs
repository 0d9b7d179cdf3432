//! Field sets: fieldsV1 to paths and back, and set operations.

use super::*;

#[test]
fn fields_v1_round_trips_a_real_entry() {
    let v = kubectl_create_deployment_fields();
    let set = FieldSet::from_fields_v1(&v).unwrap();
    assert_eq!(set.to_fields_v1(), v);
    let item = PathElement::key(vec![("name".into(), json!("nginx"))]);
    let containers = p("spec.template.spec.containers").0;
    let mut item_path = containers.clone();
    item_path.push(item.clone());
    assert!(set.has(&item_path), "the item itself is a member ('.')");
    let mut image = item_path.clone();
    image.push(PathElement::field("image"));
    assert!(set.has(&image));
    assert!(!set.has(&containers), "the list itself is not");
    assert!(set.has(&p("metadata.labels").0));
    assert!(!set.has(&p("spec.strategy").0));
    assert!(set.has(&p("spec.strategy.rollingUpdate").0));
    assert_eq!(
        Path(image).to_string(),
        ".spec.template.spec.containers[name=\"nginx\"].image"
    );
}

#[test]
fn fields_v1_keys_values_and_indexes() {
    let v = json!({
        "f:metadata": {"f:finalizers": {"v:\"b\"": {}, "v:\"a\"": {}}},
        "f:spec": {"f:ports": {
            "k:{\"protocol\":\"TCP\",\"port\":80}": {".": {}, "f:port": {}},
            "k:{\"port\":8080,\"protocol\":\"UDP\"}": {}
        }},
        "f:x": {"i:0": {}, "unknown:thing": {}}
    });
    let set = FieldSet::from_fields_v1(&v).unwrap();
    let out = set.to_fields_v1();
    // Key fields come back sorted by name; unknown elements are dropped.
    assert_eq!(
        out,
        json!({
            "f:metadata": {"f:finalizers": {"v:\"a\"": {}, "v:\"b\"": {}}},
            "f:spec": {"f:ports": {
                "k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}},
                "k:{\"port\":8080,\"protocol\":\"UDP\"}": {}
            }},
            "f:x": {"i:0": {}}
        })
    );
    let printed: Vec<String> = set.paths().iter().map(Path::to_string).collect();
    assert_eq!(
        printed,
        vec![
            ".metadata.finalizers[=\"a\"]",
            ".metadata.finalizers[=\"b\"]",
            ".spec.ports[port=80,protocol=\"TCP\"]",
            ".spec.ports[port=8080,protocol=\"UDP\"]",
            ".spec.ports[port=80,protocol=\"TCP\"].port",
            ".x[0]",
        ]
    );
    assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_err());
    assert!(FieldSet::from_fields_v1(&json!({"k:notjson": {}})).is_err());
}

#[test]
fn set_operations() {
    let a = FieldSet::from_paths(&[p("spec.a"), p("spec.b"), p("spec.c.d")]);
    let b = FieldSet::from_paths(&[p("spec.b"), p("spec.c"), p("spec.e")]);
    let paths = |s: &FieldSet| -> Vec<String> { s.paths().iter().map(Path::to_string).collect() };
    assert_eq!(
        paths(&a.union(&b)),
        vec![".spec.a", ".spec.b", ".spec.c", ".spec.e", ".spec.c.d"]
    );
    assert_eq!(paths(&a.intersection(&b)), vec![".spec.b"]);
    // A member of the other set does not take the paths under it...
    assert_eq!(paths(&a.difference(&b)), vec![".spec.a", ".spec.c.d"]);
    // ...unless the difference is recursive.
    assert_eq!(paths(&a.recursive_difference(&b)), vec![".spec.a"]);
    assert_eq!(
        paths(&a.under(&FieldSet::from_paths(&[p("spec.c")]))),
        vec![".spec.c.d"]
    );
    assert!(a.difference(&a).is_empty());
    assert_eq!(a.len(), 3);
}

#[test]
fn from_object_of_an_applied_deployment() {
    let set = FieldSet::from_object(&nginx_apply("nginx:1.27"), DEPLOY);
    // The shape `kubectl apply --server-side` gets: map keys and list
    // items are members, the structs between are not, the atomic
    // selector is a leaf, and metadata.name / apiVersion / kind go.
    assert_eq!(
        set.to_fields_v1(),
        json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {
                        "k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}
                    }}
                }
            }
        })
    );
}
