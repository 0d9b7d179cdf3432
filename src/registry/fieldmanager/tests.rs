//! Expectations follow upstream's documented behaviour
//! (kubernetes.io/docs/reference/using-api/server-side-apply) and objects
//! and errors recorded from a real v1.28 API server.

use super::*;

const CM: &str = "io.k8s.api.core.v1.ConfigMap";
const DEPLOY: &str = "io.k8s.api.apps.v1.Deployment";
const POD: &str = "io.k8s.api.core.v1.Pod";
const T0: &str = "2024-01-01T00:00:00Z";
const T1: &str = "2024-01-01T00:01:00Z";
const T2: &str = "2024-01-01T00:02:00Z";

fn at<'a>(type_name: &str, subresource: &'a str, now: &'a str) -> Scope<'a> {
    Scope {
        now: Some(now),
        ..Scope::for_type(type_name, subresource)
    }
}

fn entries(obj: &Value) -> Vec<ManagedFieldsEntry> {
    entries_of(obj).expect("managed fields decode")
}

/// The fieldsV1 of `manager`'s entry with `op`.
fn fields(obj: &Value, manager: &str, op: Operation) -> Option<Value> {
    entries(obj)
        .into_iter()
        .find(|e| e.manager == manager && e.operation == op)
        .and_then(|e| e.fields_v1)
}

fn managers(obj: &Value) -> Vec<(String, Operation)> {
    entries(obj)
        .into_iter()
        .map(|e| (e.manager, e.operation))
        .collect()
}

fn cm(data: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default"},
        "data": data,
    })
}

fn p(s: &str) -> Path {
    Path(s.split('.').map(PathElement::field).collect())
}

/// The managedFields entry a real API server wrote for `kubectl create
/// deployment web --image nginx:1.27` (tests/objects/deployments.json).
fn kubectl_create_deployment_fields() -> Value {
    json!({
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:progressDeadlineSeconds": {},
            "f:replicas": {},
            "f:revisionHistoryLimit": {},
            "f:selector": {},
            "f:strategy": {
                "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                "f:type": {}
            },
            "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        "k:{\"name\":\"nginx\"}": {
                            ".": {},
                            "f:image": {},
                            "f:imagePullPolicy": {},
                            "f:name": {},
                            "f:resources": {},
                            "f:terminationMessagePath": {},
                            "f:terminationMessagePolicy": {}
                        }
                    },
                    "f:dnsPolicy": {},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                    "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {}
                }
            }
        }
    })
}

/// The deployment that entry describes, as the server stored it.
fn created_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "5",
            "generation": 1, "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": {"app": "web"}
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "name": "nginx", "image": "nginx:1.27", "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"
                    }],
                    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                    "dnsPolicy": "ClusterFirst", "securityContext": {},
                    "schedulerName": "default-scheduler"
                }
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600
        }
    })
}

fn nginx_apply(image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]}
            }
        }
    })
}

// ------------------------------------------------------------- field sets

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

// ----------------------------------------------------------------- update

#[test]
fn create_records_what_the_creator_set_like_upstream() {
    let out = update_in(
        &at(DEPLOY, "", T0),
        None,
        &created_deployment(),
        "kubectl-create",
        "apps/v1",
    );
    let e = entries(&out);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].manager, "kubectl-create");
    assert_eq!(e[0].operation, Operation::Update);
    assert_eq!(e[0].api_version, "apps/v1");
    assert_eq!(e[0].time.as_deref(), Some(T0));
    assert_eq!(e[0].fields_type, "FieldsV1");
    assert_eq!(e[0].subresource, "");
    assert_eq!(e[0].fields_v1, Some(kubectl_create_deployment_fields()));
    // The object is otherwise untouched.
    let mut without = out.clone();
    without["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    assert_eq!(without, created_deployment());
}

#[test]
fn create_of_a_config_map_owns_each_key() {
    let out = update(None, &cm(json!({"a": "1"})), "kubectl-create", "v1", "", CM);
    assert_eq!(
        fields(&out, "kubectl-create", Operation::Update),
        Some(json!({"f:data": {".": {}, "f:a": {}}}))
    );
}

#[test]
fn updates_move_ownership_between_managers() {
    let created = update_in(
        &at(CM, "", T0),
        None,
        &cm(json!({"a": "1", "b": "2"})),
        "creator",
        "v1",
    );
    // Another manager changes a: it takes a, the creator keeps b.
    let mut new = created.clone();
    new["data"]["a"] = json!("changed");
    let updated = update_in(&at(CM, "", T1), Some(&created), &new, "editor", "v1");
    assert_eq!(
        fields(&updated, "creator", Operation::Update),
        Some(json!({"f:data": {".": {}, "f:b": {}}}))
    );
    assert_eq!(
        fields(&updated, "editor", Operation::Update),
        Some(json!({"f:data": {"f:a": {}}}))
    );
    let e = entries(&updated);
    assert_eq!(e[0].manager, "creator", "sorted by time");
    assert_eq!(e[0].time.as_deref(), Some(T0));
    assert_eq!(e[1].time.as_deref(), Some(T1));

    // Removing b and the whole data map takes them from everyone; the
    // creator's entry goes once it is empty.
    let mut new = updated.clone();
    new.as_object_mut().unwrap().remove("data");
    let removed = update_in(&at(CM, "", T2), Some(&updated), &new, "editor", "v1");
    assert_eq!(managers(&removed), vec![]);
    assert!(removed["metadata"].get("managedFields").is_none());
}

#[test]
fn update_that_changes_nothing_keeps_the_entries() {
    let created = update_in(
        &at(CM, "", T0),
        None,
        &cm(json!({"a": "1"})),
        "creator",
        "v1",
    );
    let again = update_in(&at(CM, "", T1), Some(&created), &created, "other", "v1");
    assert_eq!(
        again, created,
        "no entry for a manager that changed nothing, times kept"
    );
    // The same manager updating again accumulates into one entry.
    let mut new = created.clone();
    new["data"]["b"] = json!("2");
    let more = update_in(&at(CM, "", T1), Some(&created), &new, "creator", "v1");
    let e = entries(&more);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].time.as_deref(), Some(T1));
    assert_eq!(
        e[0].fields_v1,
        Some(json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}}))
    );
    // Another API version is another entry.
    let mut new = more.clone();
    new["data"]["c"] = json!("3");
    let v2 = update_in(&at(CM, "", T2), Some(&more), &new, "creator", "v2");
    assert_eq!(entries(&v2).len(), 2);
}

#[test]
fn untracked_objects_stay_untracked_and_managed_fields_can_be_reset() {
    // An object stored without managedFields: updates do not start tracking.
    let old = cm(json!({"a": "1"}));
    let new = cm(json!({"a": "2"}));
    assert_eq!(update(Some(&old), &new, "m", "v1", "", CM), new);

    // `managedFields: [{}]` (or `[]`) in a request clears them.
    let tracked = update(None, &old, "creator", "v1", "", CM);
    let mut reset = tracked.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    reset["data"]["a"] = json!("2");
    let out = update(Some(&tracked), &reset, "m", "v1", "", CM);
    assert!(out["metadata"].get("managedFields").is_none());
    assert_eq!(out["data"]["a"], "2");

    // Managed fields a client sends (valid ones) replace the stored ones.
    let mut edited = tracked.clone();
    edited["metadata"]["managedFields"][0]["manager"] = json!("renamed");
    let out = update(Some(&tracked), &edited, "m", "v1", "", CM);
    assert_eq!(
        managers(&out),
        vec![("renamed".to_string(), Operation::Update)]
    );
    // Invalid ones are ignored in favour of the stored ones.
    let mut bad = tracked.clone();
    bad["metadata"]["managedFields"][0]["operation"] = json!("Replace");
    let out = update(Some(&tracked), &bad, "m", "v1", "", CM);
    assert_eq!(
        managers(&out),
        vec![("creator".to_string(), Operation::Update)]
    );
}

#[test]
fn status_belongs_to_the_status_subresource() {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending"}
    });
    let created = update_in(&at(POD, "", T0), None, &pod, "creator", "v1");
    let f = fields(&created, "creator", Operation::Update).unwrap();
    assert!(f.get("f:status").is_none(), "{f}");
    assert!(f.get("f:spec").is_some());

    let mut new = created.clone();
    new["status"]["phase"] = json!("Running");
    new["metadata"]["labels"]["a"] = json!("changed-through-status");
    let updated = update_in(
        &at(POD, "status", T1),
        Some(&created),
        &new,
        "kubelet",
        "v1",
    );
    let e = entries(&updated);
    let kubelet = e.iter().find(|e| e.manager == "kubelet").unwrap();
    assert_eq!(kubelet.subresource, "status");
    assert_eq!(
        kubelet.fields_v1,
        Some(json!({"f:status": {"f:phase": {}}}))
    );
    // The main resource's manager keeps its label.
    assert!(
        fields(&updated, "creator", Operation::Update).unwrap()["f:metadata"]["f:labels"]
            .get("f:a")
            .is_some()
    );
}

#[test]
fn at_most_ten_update_entries() {
    let mut obj = update_in(&at(CM, "", T0), None, &cm(json!({"k0": "v"})), "m0", "v1");
    for i in 1..12 {
        let mut new = obj.clone();
        new["data"][format!("k{i}")] = json!("v");
        let t = format!("2024-01-01T00:00:{i:02}Z");
        obj = update_in(&at(CM, "", &t), Some(&obj), &new, &format!("m{i}"), "v1");
    }
    let e = entries(&obj);
    assert_eq!(e.len(), 10);
    let ancient = e.iter().find(|e| e.manager == "ancient-changes").unwrap();
    assert_eq!(ancient.api_version, "v1");
    // The three oldest (m0, m1, m2) were merged.
    assert_eq!(
        ancient.fields_v1,
        Some(json!({"f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}}))
    );
    assert_eq!(ancient.time.as_deref(), Some("2024-01-01T00:00:02Z"));
}

#[test]
fn manager_names_from_user_agents() {
    assert_eq!(
        manager_from_user_agent("kubectl/v1.28.7 (linux/amd64) kubernetes/c8dcb00"),
        "kubectl"
    );
    assert_eq!(
        manager_from_user_agent("kube-controller-manager/v1.34.0"),
        "kube-controller-manager"
    );
    assert_eq!(
        manager_from_user_agent("Go-http-client/1.1"),
        "Go-http-client"
    );
    assert_eq!(manager_from_user_agent("a\tb\u{7}c"), "abc");
    assert_eq!(manager_from_user_agent(&"x".repeat(200)).len(), 128);
    assert_eq!(manager_from_user_agent(""), "");
    assert_eq!(
        manager_or_user_agent(Some("kubectl-edit"), "kubectl/v1"),
        "kubectl-edit"
    );
    assert_eq!(manager_or_user_agent(None, "kubectl/v1"), "kubectl");
    assert!(validate_field_manager(&"x".repeat(129)).is_err());
    assert!(validate_field_manager("a\nb").is_err());
    assert!(validate_field_manager("kubectl-client-side-apply").is_ok());
}

// ------------------------------------------------------------------ apply

#[test]
fn apply_creates_the_object() {
    let out = apply_in(
        &at(DEPLOY, "", T0),
        None,
        &nginx_apply("nginx:1.27"),
        "kubectl",
        false,
    )
    .unwrap();
    assert_eq!(out["spec"]["replicas"], 3);
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    let mut without = out.clone();
    without["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    assert_eq!(
        without,
        nginx_apply("nginx:1.27"),
        "nothing but the configuration"
    );
    let e = entries(&out);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].manager, "kubectl");
    assert_eq!(e[0].operation, Operation::Apply);
    assert_eq!(e[0].api_version, "apps/v1");
    assert_eq!(e[0].time.as_deref(), Some(T0));
    assert_eq!(
        e[0].fields_v1,
        Some(FieldSet::from_object(&nginx_apply("nginx:1.27"), DEPLOY).to_fields_v1())
    );
    // The documented ConfigMap example: keys owned without ".".
    let out = apply(
        None,
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
                "data": {"key": "some value"}}),
        "kubectl",
        false,
        CM,
    )
    .unwrap();
    assert_eq!(
        fields(&out, "kubectl", Operation::Apply),
        Some(json!({"f:metadata": {"f:labels": {"f:test-label": {}}}, "f:data": {"f:key": {}}}))
    );
}

#[test]
fn applying_the_same_configuration_again_changes_nothing() {
    let config = nginx_apply("nginx:1.27");
    let first = apply_in(&at(DEPLOY, "", T0), None, &config, "kubectl", false).unwrap();
    let second = apply_in(&at(DEPLOY, "", T0), Some(&first), &config, "kubectl", false).unwrap();
    assert_eq!(second, first);
    // Later, only the entry's time moves; the registry puts it back.
    let mut later = apply_in(&at(DEPLOY, "", T1), Some(&first), &config, "kubectl", false).unwrap();
    assert_ne!(later, first);
    ignore_timestamp_only_changes(&mut later, &first);
    assert_eq!(later, first);
    // A real change keeps the new time.
    let mut changed = apply_in(
        &at(DEPLOY, "", T1),
        Some(&first),
        &nginx_apply("nginx:2"),
        "kubectl",
        false,
    )
    .unwrap();
    ignore_timestamp_only_changes(&mut changed, &first);
    assert_eq!(entries(&changed)[0].time.as_deref(), Some(T1));
}

#[test]
fn fields_no_longer_applied_are_removed() {
    let first = apply(None, &cm(json!({"a": "1", "b": "2"})), "m", false, CM).unwrap();
    let second = apply(Some(&first), &cm(json!({"a": "1"})), "m", false, CM).unwrap();
    assert_eq!(second["data"], json!({"a": "1"}));
    assert_eq!(
        fields(&second, "m", Operation::Apply),
        Some(json!({"f:data": {"f:a": {}}}))
    );
    // A struct field no one owns anything under any more goes as a whole;
    // fields the manager never applied stay.
    let mut live = apply(None, &nginx_apply("nginx:1.27"), "m", false, DEPLOY).unwrap();
    live["spec"]["revisionHistoryLimit"] = json!(10); // a default: no one's
    let mut config = nginx_apply("nginx:1.27");
    config["spec"].as_object_mut().unwrap().remove("replicas");
    let out = apply(Some(&live), &config, "m", false, DEPLOY).unwrap();
    assert!(out["spec"].get("replicas").is_none(), "{out:#}");
    assert_eq!(out["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"][0]["name"],
        "nginx"
    );
}

#[test]
fn fields_another_manager_owns_stay_when_no_longer_applied() {
    let first = apply(None, &cm(json!({"a": "1", "b": "2"})), "applier", false, CM).unwrap();
    // Another applier sets b to the same value: shared ownership.
    let shared = apply(Some(&first), &cm(json!({"b": "2"})), "other", false, CM).unwrap();
    let out = apply(Some(&shared), &cm(json!({"a": "1"})), "applier", false, CM).unwrap();
    assert_eq!(out["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(
        fields(&out, "other", Operation::Apply),
        Some(json!({"f:data": {"f:b": {}}}))
    );
    // The same holds for a field an updater owns.
    let mut updated = first.clone();
    updated["data"]["b"] = json!("3");
    let updated = update(Some(&first), &updated, "editor", "v1", "", CM);
    let out = apply(Some(&updated), &cm(json!({"a": "1"})), "applier", false, CM).unwrap();
    assert_eq!(out["data"], json!({"a": "1", "b": "3"}));
    assert_eq!(
        fields(&out, "editor", Operation::Update),
        Some(json!({"f:data": {"f:b": {}}}))
    );
}

#[test]
fn conflict_with_an_updater_matches_upstream() {
    let created = update(None, &cm(json!({"a": "1"})), "kubectl-create", "v1", "", CM);
    let err = apply(Some(&created), &cm(json!({"a": "2"})), "m", false, CM).unwrap_err();
    assert_eq!(err.code(), 409);
    let ApplyError::Conflicts(c) = err else {
        panic!("expected conflicts");
    };
    assert_eq!(
        c.0,
        vec![Conflict {
            manager: "kubectl-create".into(),
            operation: Operation::Update,
            api_version: "v1".into(),
            subresource: String::new(),
            field: ".data.a".into(),
        }]
    );
    // The body a v1.28 API server answered with.
    assert_eq!(
        c.to_status(),
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Apply failed with 1 conflict: conflict with \"kubectl-create\" using v1: .data.a",
            "reason": "Conflict",
            "details": {"causes": [{
                "reason": "FieldManagerConflict",
                "message": "conflict with \"kubectl-create\" using v1",
                "field": ".data.a"
            }]},
            "code": 409
        })
    );
}

#[test]
fn applying_the_owned_value_shares_ownership() {
    let created = update(None, &cm(json!({"a": "1"})), "kubectl-create", "v1", "", CM);
    let out = apply(Some(&created), &cm(json!({"a": "1"})), "m", false, CM).unwrap();
    assert_eq!(
        fields(&out, "kubectl-create", Operation::Update),
        Some(json!({"f:data": {".": {}, "f:a": {}}}))
    );
    assert_eq!(
        fields(&out, "m", Operation::Apply),
        Some(json!({"f:data": {"f:a": {}}}))
    );
    // Apply entries come first.
    assert_eq!(managers(&out)[0], ("m".to_string(), Operation::Apply));
    // Any change of the shared field now conflicts, for either applier.
    let err = apply(Some(&out), &cm(json!({"a": "2"})), "m", false, CM).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"kubectl-create\" using v1: .data.a"
    );
}

#[test]
fn several_conflicts_are_listed_by_manager() {
    let created = update(
        None,
        &cm(json!({"a": "1", "b": "1"})),
        "creator",
        "v1",
        "",
        CM,
    );
    let applied = apply(Some(&created), &cm(json!({"c": "1"})), "applier", false, CM).unwrap();
    let err = apply(
        Some(&applied),
        &cm(json!({"a": "2", "b": "2", "c": "2"})),
        "m",
        false,
        CM,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 3 conflicts: conflicts with \"applier\":\n- .data.c\nconflicts with \"creator\" using v1:\n- .data.a\n- .data.b"
    );
    let ApplyError::Conflicts(c) = err else {
        panic!()
    };
    assert_eq!(
        c.causes()[0],
        json!({"reason": "FieldManagerConflict", "message": "conflict with \"applier\"", "field": ".data.c"})
    );
    assert_eq!(c.causes().len(), 3);
}

#[test]
fn force_takes_ownership() {
    let created = update(
        None,
        &cm(json!({"a": "1", "b": "1"})),
        "creator",
        "v1",
        "",
        CM,
    );
    let out = apply(Some(&created), &cm(json!({"a": "2"})), "m", true, CM).unwrap();
    assert_eq!(out["data"], json!({"a": "2", "b": "1"}));
    assert_eq!(
        fields(&out, "m", Operation::Apply),
        Some(json!({"f:data": {"f:a": {}}}))
    );
    assert_eq!(
        fields(&out, "creator", Operation::Update),
        Some(json!({"f:data": {".": {}, "f:b": {}}}))
    );
    // Taking every key leaves the creator the map itself (it added it).
    let out = apply(Some(&out), &cm(json!({"a": "2", "b": "2"})), "m", true, CM).unwrap();
    assert_eq!(
        fields(&out, "creator", Operation::Update),
        Some(json!({"f:data": {}}))
    );
    // An entry left with nothing goes.
    let created = update(None, &cm(json!({"a": "1"})), "creator", "v1", "", CM);
    let mut new = created.clone();
    new["data"]["a"] = json!("2");
    let edited = update(Some(&created), &new, "editor", "v1", "", CM);
    let out = apply(Some(&edited), &cm(json!({"a": "3"})), "m", true, CM).unwrap();
    assert_eq!(
        managers(&out),
        vec![
            ("m".to_string(), Operation::Apply),
            ("creator".to_string(), Operation::Update)
        ]
    );
}

#[test]
fn conflicts_with_appliers_name_nested_list_items() {
    let first = apply(None, &nginx_apply("nginx:1.27"), "alice", false, DEPLOY).unwrap();
    let err = apply(Some(&first), &nginx_apply("nginx:2"), "bob", false, DEPLOY).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.template.spec.containers[name=\"nginx\"].image"
    );
    // A subresource manager is named with it.
    let c = Conflict {
        manager: "kubelet".into(),
        operation: Operation::Update,
        api_version: "v1".into(),
        subresource: "status".into(),
        field: ".status.phase".into(),
    };
    assert_eq!(
        c.manager_text(),
        "\"kubelet\" with subresource \"status\" using v1"
    );
}

#[test]
fn containers_merge_by_name() {
    let first = apply(None, &nginx_apply("nginx:1.27"), "alice", false, DEPLOY).unwrap();
    // A controller adds a sidecar before nginx (an update).
    let mut new = first.clone();
    new["spec"]["template"]["spec"]["containers"] = json!([
        {"name": "sidecar", "image": "envoy"},
        {"name": "nginx", "image": "nginx:1.27"}
    ]);
    let updated = update(Some(&first), &new, "injector", "apps/v1", "", DEPLOY);
    assert_eq!(
        fields(&updated, "injector", Operation::Update).unwrap()["f:spec"]["f:template"]["f:spec"],
        json!({"f:containers": {"k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}}})
    );
    // Alice changes nginx: the sidecar stays, in its place.
    let out = apply(
        Some(&updated),
        &nginx_apply("nginx:2"),
        "alice",
        false,
        DEPLOY,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        json!([{"name": "sidecar", "image": "envoy"}, {"name": "nginx", "image": "nginx:2"}])
    );
    // Alice adds a container: it follows hers, after the shared one.
    let mut config = nginx_apply("nginx:2");
    config["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "nginx", "image": "nginx:2"}, {"name": "logger", "image": "fluent"}]);
    let out = apply(Some(&out), &config, "alice", false, DEPLOY).unwrap();
    let names: Vec<&str> = out["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["sidecar", "nginx", "logger"]);
    // Alice drops logger: hers alone, so it goes.
    let out = apply(Some(&out), &nginx_apply("nginx:2"), "alice", false, DEPLOY).unwrap();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn ports_merge_by_port_and_protocol() {
    let pod = |ports: Value| {
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": ports}]}
        })
    };
    let first = apply(
        None,
        &pod(json!([{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}])),
        "m",
        false,
        POD,
    )
    .unwrap();
    // The key of an item without protocol takes its default, TCP.
    let f = fields(&first, "m", Operation::Apply).unwrap();
    let ports = &f["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["f:ports"];
    assert_eq!(
        ports,
        &json!({
            "k:{\"containerPort\":53,\"protocol\":\"UDP\"}": {".": {}, "f:containerPort": {}, "f:protocol": {}},
            "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}
        })
    );
    // The registry defaults protocol; a later apply naming it merges into
    // the same item, and 53/TCP is another item than 53/UDP.
    let mut live = first.clone();
    live["spec"]["containers"][0]["ports"][0]["protocol"] = json!("TCP");
    let out = apply(
        Some(&live),
        &pod(json!([
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            {"containerPort": 53, "protocol": "UDP"},
            {"containerPort": 53, "protocol": "TCP"}
        ])),
        "m",
        false,
        POD,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"][0]["ports"],
        json!([
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            {"containerPort": 53, "protocol": "UDP"},
            {"containerPort": 53, "protocol": "TCP"}
        ])
    );
}

#[test]
fn finalizers_are_a_set() {
    let mut obj = cm(json!({}));
    obj["metadata"]["finalizers"] = json!(["a"]);
    let created = update(None, &obj, "creator", "v1", "", CM);
    let mut config = cm(json!({}));
    config["metadata"]["finalizers"] = json!(["b"]);
    let out = apply(Some(&created), &config, "m", false, CM).unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
    assert_eq!(
        fields(&out, "m", Operation::Apply).unwrap()["f:metadata"],
        json!({"f:finalizers": {"v:\"b\"": {}}})
    );
    // Applying without b removes b only.
    let out = apply(Some(&out), &cm(json!({})), "m", false, CM).unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["a"]));
}

#[test]
fn atomic_lists_and_maps_are_replaced() {
    let pod = |args: Value, node_selector: Value| {
        json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {
                "nodeSelector": node_selector,
                "containers": [{"name": "c", "image": "i", "args": args}]
            }
        })
    };
    let first = apply(
        None,
        &pod(json!(["x", "y"]), json!({"zone": "a", "disk": "ssd"})),
        "m",
        false,
        POD,
    )
    .unwrap();
    let f = fields(&first, "m", Operation::Apply).unwrap();
    assert_eq!(
        f["f:spec"]["f:nodeSelector"],
        json!({}),
        "an atomic map is a leaf"
    );
    assert_eq!(
        f["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["f:args"],
        json!({}),
        "an atomic list is a leaf"
    );
    let out = apply(
        Some(&first),
        &pod(json!(["z"]), json!({"zone": "b"})),
        "m",
        false,
        POD,
    )
    .unwrap();
    assert_eq!(out["spec"]["containers"][0]["args"], json!(["z"]));
    assert_eq!(out["spec"]["nodeSelector"], json!({"zone": "b"}));
    // Someone else's atomic list conflicts as a whole.
    let err = apply(
        Some(&out),
        &pod(json!(["w"]), json!({"zone": "b"})),
        "n",
        false,
        POD,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"m\": .spec.containers[name=\"c\"].args"
    );
}

#[test]
fn invalid_configurations_are_refused() {
    let mut config = cm(json!({"a": "1"}));
    config["metadata"]["managedFields"] = json!([]);
    let err = apply(None, &config, "m", false, CM).unwrap_err();
    assert_eq!(
        err,
        ApplyError::BadRequest("metadata.managedFields must be nil".into())
    );
    let mut config = nginx_apply("x");
    config["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]);
    let err = apply(None, &config, "m", false, DEPLOY).unwrap_err();
    assert_eq!(
        err,
        ApplyError::Internal(
            ".spec.template.spec.containers: duplicate entries for key [name=\"a\"]".into()
        )
    );
    let mut config = nginx_apply("x");
    config["spec"]["template"]["spec"]["containers"] = json!([{"image": "x"}]);
    let err = apply(None, &config, "m", false, DEPLOY).unwrap_err();
    assert_eq!(
        err.message(),
        ".spec.template.spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)"
    );
}

#[test]
fn first_apply_to_an_untracked_object() {
    // Fields of an object without managed fields belong to
    // before-first-apply, so changing them conflicts.
    let live = cm(json!({"a": "1", "b": "1"}));
    let err = apply(Some(&live), &cm(json!({"a": "2"})), "m", false, CM).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.a"
    );
    let out = apply(
        Some(&live),
        &cm(json!({"a": "1", "c": "1"})),
        "m",
        false,
        CM,
    )
    .unwrap();
    assert_eq!(out["data"], json!({"a": "1", "b": "1", "c": "1"}));
    assert_eq!(
        fields(&out, "before-first-apply", Operation::Update),
        Some(json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}}))
    );
}

#[test]
fn custom_resources_without_schema() {
    let cr = |spec: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": "w", "labels": {"x": "y"}}, "spec": spec})
    };
    let first = apply(
        None,
        &cr(json!({"size": 1, "tags": ["a", "b"], "nested": {"k": "v"}})),
        "m",
        false,
        "",
    )
    .unwrap();
    assert_eq!(
        fields(&first, "m", Operation::Apply),
        Some(json!({
            "f:metadata": {"f:labels": {"f:x": {}}},
            "f:spec": {".": {}, "f:nested": {".": {}, "f:k": {}}, "f:size": {}, "f:tags": {}}
        }))
    );
    // Lists are atomic: replaced.
    let out = apply(
        Some(&first),
        &cr(json!({"tags": ["c"]})),
        "m",
        false,
        "example.com/Widget",
    )
    .unwrap();
    assert_eq!(out["spec"], json!({"tags": ["c"]}));
    // Updates record granular maps too: a create of a custom resource
    // adds `spec` as a whole.
    let created = update(
        None,
        &cr(json!({"size": 1})),
        "creator",
        "example.com/v1",
        "",
        "",
    );
    assert_eq!(
        fields(&created, "creator", Operation::Update),
        Some(json!({
            "f:metadata": {"f:labels": {".": {}, "f:x": {}}},
            "f:spec": {".": {}, "f:size": {}}
        }))
    );
}

#[test]
fn custom_resources_with_a_structural_schema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["id"],
                        "items": {"type": "object", "properties": {
                            "id": {"type": "string"}, "value": {"type": "integer"}
                        }}
                    },
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                 "additionalProperties": {"type": "string"}}
                }
            }
        }
    });
    let scope = Scope::new(Schema::structural(&schema), "");
    let cr = |spec: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": "w"}, "spec": spec})
    };
    let first = apply_in(
        &scope,
        None,
        &cr(json!({"items": [{"id": "a", "value": 1}], "selector": {"k": "v"}})),
        "m",
        false,
    )
    .unwrap();
    assert_eq!(
        fields(&first, "m", Operation::Apply),
        Some(json!({"f:spec": {
            "f:items": {"k:{\"id\":\"a\"}": {".": {}, "f:id": {}, "f:value": {}}},
            "f:selector": {}
        }}))
    );
    let out = apply_in(
        &scope,
        Some(&first),
        &cr(json!({"items": [{"id": "b", "value": 2}]})),
        "n",
        false,
    )
    .unwrap();
    assert_eq!(
        out["spec"]["items"],
        json!([{"id": "a", "value": 1}, {"id": "b", "value": 2}])
    );
}

#[test]
fn status_is_not_applied_through_the_resource() {
    let mut config = nginx_apply("nginx");
    config["status"] = json!({"replicas": 5});
    let out = apply(None, &config, "m", false, DEPLOY).unwrap();
    assert!(fields(&out, "m", Operation::Apply)
        .unwrap()
        .get("f:status")
        .is_none());
    // Through /status, only status is owned.
    let scope = at(DEPLOY, "status", T0);
    let out = apply_in(&scope, Some(&out), &config, "ctl", false).unwrap();
    let e = entries(&out);
    let ctl = e.iter().find(|e| e.manager == "ctl").unwrap();
    assert_eq!(ctl.subresource, "status");
    assert_eq!(ctl.fields_v1, Some(json!({"f:status": {"f:replicas": {}}})));
}

#[test]
fn kubectl_applies_keep_the_last_applied_annotation_current() {
    let mut live = cm(json!({"a": "1"}));
    live["metadata"]["annotations"] =
        json!({LAST_APPLIED_ANNOTATION: "{\"data\":{\"a\":\"0\"}}\n"});
    let live = update(None, &live, "kubectl-client-side-apply", "v1", "", CM);
    let config = cm(json!({"a": "1", "b": "<2>"}));
    let out = apply(Some(&live), &config, "kubectl", false, CM).unwrap();
    assert_eq!(
        out["metadata"]["annotations"][LAST_APPLIED_ANNOTATION],
        "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"1\",\"b\":\"\\u003c2\\u003e\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\",\"namespace\":\"default\"}}\n"
    );
    // Other managers leave it alone.
    let out = apply(Some(&live), &config, "other", false, CM).unwrap();
    assert_eq!(
        out["metadata"]["annotations"][LAST_APPLIED_ANNOTATION],
        "{\"data\":{\"a\":\"0\"}}\n"
    );
}

#[test]
fn managed_fields_entries_parse_and_serialize() {
    let v = json!({
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
        "time": "2010-10-10T00:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:key": {}}}
    });
    let e = ManagedFieldsEntry::from_value(&v).unwrap();
    assert_eq!(e.operation, Operation::Apply);
    assert_eq!(e.fields().unwrap().len(), 1);
    assert_eq!(e.to_value(), v);
    let mut sub = v.clone();
    sub["subresource"] = json!("status");
    assert_eq!(
        ManagedFieldsEntry::from_value(&sub).unwrap().subresource,
        "status"
    );
    for bad in [
        json!({"manager": "m", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}),
        json!({"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1"}),
        json!({"manager": "m", "operation": "Apply", "apiVersion": "v1"}),
        json!({"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV2"}),
    ] {
        assert!(ManagedFieldsEntry::from_value(&bad).is_err(), "{bad}");
    }
}

#[test]
fn ownership_handed_over_to_a_controller() {
    // The documented hand-over: a user applies replicas, a controller
    // scales through /scale, the user drops replicas from the manifest.
    let first = apply(None, &nginx_apply("nginx:1.27"), "handover", false, DEPLOY).unwrap();
    let mut scaled = first.clone();
    scaled["spec"]["replicas"] = json!(5);
    let scaled = update_in(
        &at(DEPLOY, "scale", T1),
        Some(&first),
        &scaled,
        "kube-controller-manager",
        "apps/v1",
    );
    let e = entries(&scaled);
    let kcm = e
        .iter()
        .find(|e| e.manager == "kube-controller-manager")
        .unwrap();
    assert_eq!(kcm.subresource, "scale");
    assert_eq!(kcm.fields_v1, Some(json!({"f:spec": {"f:replicas": {}}})));
    // The user no longer owns replicas...
    let user = fields(&scaled, "handover", Operation::Apply).unwrap();
    assert!(user["f:spec"].get("f:replicas").is_none());
    // ...so applying 3 again conflicts, and leaving it out keeps 5.
    let err = apply(
        Some(&scaled),
        &nginx_apply("nginx:1.27"),
        "handover",
        false,
        DEPLOY,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"kube-controller-manager\" with subresource \"scale\" using apps/v1: .spec.replicas"
    );
    let mut config = nginx_apply("nginx:1.27");
    config["spec"].as_object_mut().unwrap().remove("replicas");
    let out = apply(Some(&scaled), &config, "handover", false, DEPLOY).unwrap();
    assert_eq!(out["spec"]["replicas"], 5);
}

#[test]
fn applied_nulls_are_owned_but_not_stored() {
    let created = update(
        None,
        &cm(json!({"a": "1", "b": "2"})),
        "creator",
        "v1",
        "",
        CM,
    );
    // Setting a field to null changes it: a conflict...
    let err = apply(Some(&created), &cm(json!({"a": null})), "m", false, CM).unwrap_err();
    assert_eq!(err.code(), 409);
    // ...and when forced, the key goes and the applier owns it.
    let out = apply(Some(&created), &cm(json!({"a": null})), "m", true, CM).unwrap();
    assert_eq!(out["data"], json!({"b": "2"}));
    assert_eq!(
        fields(&out, "m", Operation::Apply),
        Some(json!({"f:data": {"f:a": {}}}))
    );
}

#[test]
fn server_side_apply_over_a_client_side_applied_deployment() {
    let live = update_in(
        &at(DEPLOY, "", T0),
        None,
        &created_deployment(),
        "kubectl-client-side-apply",
        "apps/v1",
    );
    // Same labels, selector and container: shared; replicas 3 != 1.
    let err = apply(
        Some(&live),
        &nginx_apply("nginx:1.27"),
        "kubectl",
        false,
        DEPLOY,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
    );
    let out = apply(
        Some(&live),
        &nginx_apply("nginx:1.27"),
        "kubectl",
        true,
        DEPLOY,
    )
    .unwrap();
    assert_eq!(out["spec"]["replicas"], 3);
    // Everything the creator set but replicas is still its own.
    let creator = fields(&out, "kubectl-client-side-apply", Operation::Update).unwrap();
    let mut expected = kubectl_create_deployment_fields();
    expected["f:spec"]
        .as_object_mut()
        .unwrap()
        .remove("f:replicas");
    assert_eq!(creator, expected);
    // The defaults no one applied stay.
    assert_eq!(out["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
}

#[test]
fn custom_resource_status_follows_the_scope() {
    let cr = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": {"name": "w"}, "spec": {"a": 1}, "status": {"ok": true}});
    // Untyped: no status subresource unless the caller says so.
    let out = apply(None, &cr, "m", false, "").unwrap();
    assert!(fields(&out, "m", Operation::Apply)
        .unwrap()
        .get("f:status")
        .is_some());
    let scope = Scope {
        status_subresource: true,
        ..Scope::new(Schema::untyped(), "")
    };
    let out = apply_in(&scope, None, &cr, "m", false).unwrap();
    assert!(fields(&out, "m", Operation::Apply)
        .unwrap()
        .get("f:status")
        .is_none());
    assert!(Schema::for_type(DEPLOY).has_status());
    assert!(!Schema::for_type(CM).has_status());
}
