//! Authentication and authorization as clients see them: impersonation,
//! `kubectl auth whoami` / `can-i`, and the review APIs.

mod common;

use common::{run, runtime, Kapi};

#[test]
fn whoami_and_can_i_as_admin_and_impersonated() {
    let k = Kapi::start(&[]);
    let (ok, out, err) = run(k.kubectl().args(["auth", "whoami", "-o", "json"]));
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["kind"], "SelfSubjectReview");
    assert_eq!(v["status"]["userInfo"]["username"], "kubernetes-admin");
    let groups = v["status"]["userInfo"]["groups"].to_string();
    assert!(
        groups.contains("system:masters") && groups.contains("system:authenticated"),
        "{groups}"
    );
    let (_, out, _) = run(k.kubectl().args(["auth", "can-i", "create", "deployments"]));
    assert_eq!(out.trim(), "yes");
    // Impersonated, the same questions get bob's answers.
    let (_, out, _) =
        run(k
            .kubectl()
            .args(["auth", "can-i", "create", "deployments", "--as", "bob"]));
    assert_eq!(out.trim(), "no");
    let (ok, out, err) = run(k.kubectl().args([
        "auth",
        "whoami",
        "--as",
        "bob",
        "--as-group",
        "devs",
        "-o",
        "json",
    ]));
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["status"]["userInfo"]["username"], "bob");
    assert_eq!(
        v["status"]["userInfo"]["groups"],
        serde_json::json!(["devs", "system:authenticated"])
    );
    let (ok, _, err) = run(k.kubectl().args(["get", "pods", "--as", "bob"]));
    assert!(!ok && err.contains("User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""), "{err}");
    let (ok, out, err) = run(k.kubectl().args(["auth", "can-i", "--list", "--as", "bob"]));
    assert!(ok, "{err}");
    assert!(
        out.contains("selfsubjectaccessreviews.authorization.k8s.io") && out.contains("/healthz"),
        "{out}"
    );
}

#[test]
fn impersonation_needs_the_impersonate_verb() {
    let dir = tempfile::tempdir().expect("tmp");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "t-bob,bob,1\n").expect("write");
    let k = Kapi::start(&["--token-auth-file", tokens.to_str().expect("path")]);
    runtime().block_on(async {
        let r = k
            .anonymous_client()
            .get(format!("{}/api/v1/namespaces/default/pods", k.url))
            .bearer_auth("t-bob")
            .header("Impersonate-User", "admin")
            .header("Impersonate-Group", "system:masters")
            .send()
            .await
            .expect("req");
        assert_eq!(r.status(), 403);
        let s: serde_json::Value = r.json().await.expect("status");
        assert_eq!(s["message"], "users \"admin\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope");
        assert_eq!(s["details"], serde_json::json!({"name": "admin", "kind": "users"}));
    });
}

#[test]
fn review_apis_answer_and_are_not_stored() {
    let dir = tempfile::tempdir().expect("tmp");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "t-alice,alice,42,\"dev,ops\"\n").expect("write");
    let k = Kapi::start(&["--token-auth-file", tokens.to_str().expect("path")]);
    runtime().block_on(async {
        let c = k.admin_client();
        let post = |path: &str, body: serde_json::Value| c.post(format!("{}{path}", k.url)).json(&body).send();
        let r = post("/apis/authentication.k8s.io/v1/tokenreviews", serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "t-alice"}})).await.expect("tr");
        assert_eq!(r.status(), 201);
        let v: serde_json::Value = r.json().await.expect("json");
        assert_eq!(v["status"]["authenticated"], true);
        assert_eq!(v["status"]["user"]["username"], "alice");
        assert_eq!(v["status"]["user"]["uid"], "42");
        assert_eq!(v["status"]["user"]["groups"], serde_json::json!(["dev", "ops", "system:authenticated"]));
        let r = post("/apis/authentication.k8s.io/v1/tokenreviews", serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "nope"}})).await.expect("tr");
        let v: serde_json::Value = r.json().await.expect("json");
        assert_eq!(v["status"]["authenticated"], false);
        let sar = |user: &str, verb: &str| serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": if user == "root" { serde_json::json!(["system:masters"]) } else { serde_json::json!([]) }, "resourceAttributes": {"verb": verb, "resource": "pods", "namespace": "default"}}});
        let v: serde_json::Value = post("/apis/authorization.k8s.io/v1/subjectaccessreviews", sar("root", "delete")).await.expect("sar").json().await.expect("json");
        assert_eq!(v["status"]["allowed"], true);
        let v: serde_json::Value = post("/apis/authorization.k8s.io/v1/subjectaccessreviews", sar("eve", "delete")).await.expect("sar").json().await.expect("json");
        assert_eq!(v["status"]["allowed"], false);
        // Neither user nor group: 422 as upstream.
        let bad = serde_json::json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}});
        let r = post("/apis/authorization.k8s.io/v1/subjectaccessreviews", bad).await.expect("sar");
        assert_eq!(r.status(), 422);
        // Reviews are create-only: no list, no get.
        let r = c.get(format!("{}/apis/authorization.k8s.io/v1/subjectaccessreviews", k.url)).send().await.expect("list");
        assert_eq!(r.status(), 405);
    });
}
