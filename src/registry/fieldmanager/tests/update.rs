//! Ownership recorded by non-apply writes (create, update, patch):
//! managers, the status subresource, the limit on update entries.

use super::*;

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
