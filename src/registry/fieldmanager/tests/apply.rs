//! Server-side apply: creating, re-applying, removing fields no longer
//! applied, invalid configurations, untracked objects, nulls, and handing
//! over from client-side apply and to controllers.

use super::*;

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
