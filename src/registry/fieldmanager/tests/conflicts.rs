//! Apply conflicts: with updaters and other appliers, as upstream words
//! them, shared ownership of equal values, and `force`.

use super::*;

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
