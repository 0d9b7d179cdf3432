//! The admission plugins that ask the authorizer, as clients see them:
//! CertificateApproval, CertificateSigning and CertificateSubjectRestriction
//! (on by default), NodeRestriction and OwnerReferencesPermissionEnforcement
//! (named by flag). Users are the admin impersonating someone RBAC grants
//! exactly what the case needs; refusals are compared with upstream's text.

mod common;

use base64::Engine;
use common::{runtime, Kapi};
use serde_json::{json, Value};

const FLAGS: &[&str] =
    &["--enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement"];
const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

/// Requests as the admin, or as a user (and groups) it impersonates.
struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    fn new(k: &Kapi) -> Api {
        Api {
            client: k.admin_client(),
            base: k.url.clone(),
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        who: Option<(&str, &[&str])>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some((user, groups)) = who {
            req = req.header("Impersonate-User", user);
            for g in groups {
                req = req.header("Impersonate-Group", *g);
            }
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request");
        let code = resp.status().as_u16();
        (code, resp.json::<Value>().await.unwrap_or(Value::Null))
    }

    async fn admin(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let (code, v) = self.send(method.clone(), path, None, body).await;
        assert!((200..300).contains(&code), "{method} {path}: {code} {v}");
        v
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.admin(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> Value {
        self.admin(reqwest::Method::GET, path, None).await
    }

    /// A ClusterRole with `rules`, bound to a user or group.
    async fn grant(&self, name: &str, subject: Value, rules: Value) {
        self.post(
            &format!("{RBAC}/clusterroles"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": {"name": name}, "rules": rules}),
        )
        .await;
        self.post(
            &format!("{RBAC}/clusterrolebindings"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": name},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                   "subjects": [subject]}),
        )
        .await;
    }
}

fn user(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name})
}

/// A CSR PEM for `cn` in organization `org` (none when empty), base64 as
/// `spec.request` carries it.
fn request(cn: &str, org: &str) -> String {
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    if !org.is_empty() {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, org);
    }
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    let key = rcgen::KeyPair::generate().expect("key");
    let pem = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    base64::engine::general_purpose::STANDARD.encode(pem)
}

fn csr(name: &str, signer: &str, request: String) -> Value {
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
           "metadata": {"name": name},
           "spec": {"request": request, "signerName": signer,
                    "usages": ["digital signature", "client auth"]}})
}

fn approved(mut csr: Value) -> Value {
    csr["status"]["conditions"] = json!([
        {"type": "Approved", "status": "True", "reason": "Test", "message": "approved by the test"}
    ]);
    csr
}

#[test]
fn approving_a_csr_needs_approve_on_its_signer() {
    let k = Kapi::start(&[]);
    let api = Api::new(&k);
    runtime().block_on(async {
        api.post(CSRS, csr("c1", "example.com/signer", request("alice", "")))
            .await;
        api.grant(
            "csr-approval",
            user("approver"),
            json!([{"apiGroups": ["certificates.k8s.io"],
                    "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
                    "verbs": ["get", "update"]}]),
        )
        .await;
        let body = approved(api.get(&format!("{CSRS}/c1")).await);
        let approval = format!("{CSRS}/c1/approval");
        let who = Some(("approver", &[][..]));
        let (code, v) = api
            .send(reqwest::Method::PUT, &approval, who, Some(body.clone()))
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "certificatesigningrequests.certificates.k8s.io \"c1\" is forbidden: user not permitted to approve requests with signerName \"example.com/signer\""
        );
        assert_eq!(v["reason"], "Forbidden");
        // `approve` on the signer's domain (`example.com/*`) is enough.
        api.grant(
            "signer-approver",
            user("approver"),
            json!([{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                    "resourceNames": ["example.com/*"], "verbs": ["approve"]}]),
        )
        .await;
        let (code, v) = api
            .send(reqwest::Method::PUT, &approval, who, Some(body))
            .await;
        assert_eq!(code, 200, "{v}");
        assert_eq!(v["status"]["conditions"][0]["type"], "Approved");
        // `approve` on another signer's name grants nothing here.
        api.post(CSRS, csr("c2", "example.org/signer", request("bob", "")))
            .await;
        let body = approved(api.get(&format!("{CSRS}/c2")).await);
        let (code, v) = api
            .send(
                reqwest::Method::PUT,
                &format!("{CSRS}/c2/approval"),
                who,
                Some(body),
            )
            .await;
        assert_eq!(code, 403, "{v}");
    });
}

#[test]
fn issuing_a_certificate_needs_sign_on_its_signer() {
    let k = Kapi::start(&[]);
    let api = Api::new(&k);
    runtime().block_on(async {
        api.post(CSRS, csr("s1", "example.com/signer", request("alice", "")))
            .await;
        let body = approved(api.get(&format!("{CSRS}/s1")).await);
        api.admin(
            reqwest::Method::PUT,
            &format!("{CSRS}/s1/approval"),
            Some(body),
        )
        .await;
        api.grant(
            "csr-status",
            user("signer"),
            json!([{"apiGroups": ["certificates.k8s.io"],
                    "resources": ["certificatesigningrequests", "certificatesigningrequests/status"],
                    "verbs": ["get", "update"]}]),
        )
        .await;
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = rcgen::CertificateParams::new(vec!["alice".to_string()])
            .expect("params")
            .self_signed(&key)
            .expect("cert")
            .pem();
        let cert = json!(base64::engine::general_purpose::STANDARD.encode(cert));
        let mut body = api.get(&format!("{CSRS}/s1")).await;
        body["status"]["certificate"] = cert.clone();
        let status = format!("{CSRS}/s1/status");
        let who = Some(("signer", &[][..]));
        let (code, v) = api
            .send(reqwest::Method::PUT, &status, who, Some(body.clone()))
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "certificatesigningrequests.certificates.k8s.io \"s1\" is forbidden: user not permitted to sign requests with signerName \"example.com/signer\""
        );
        // A status write that changes neither certificate nor conditions
        // needs no signer permission.
        let unchanged = api.get(&format!("{CSRS}/s1")).await;
        let (code, v) = api
            .send(reqwest::Method::PUT, &status, who, Some(unchanged))
            .await;
        assert_eq!(code, 200, "{v}");
        api.grant(
            "signer-signer",
            user("signer"),
            json!([{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                    "resourceNames": ["example.com/signer"], "verbs": ["sign"]}]),
        )
        .await;
        let mut body = api.get(&format!("{CSRS}/s1")).await;
        body["status"]["certificate"] = cert.clone();
        let (code, v) = api
            .send(reqwest::Method::PUT, &status, who, Some(body))
            .await;
        assert_eq!(code, 200, "{v}");
        assert_eq!(v["status"]["certificate"], cert);
    });
}

#[test]
fn no_system_masters_certificates_from_the_client_signer() {
    let k = Kapi::start(&[]);
    let api = Api::new(&k);
    runtime().block_on(async {
        let signer = "kubernetes.io/kube-apiserver-client";
        let (code, v) = api
            .send(
                reqwest::Method::POST,
                CSRS,
                None,
                Some(csr("m", signer, request("mallory", "system:masters"))),
            )
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "certificatesigningrequests.certificates.k8s.io \"m\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
        );
        // Another group, or system:masters from another signer, is fine.
        api.post(CSRS, csr("dev", signer, request("dev", "developers")))
            .await;
        api.post(
            CSRS,
            csr("other", "example.com/signer", request("m", "system:masters")),
        )
        .await;
    });
}

const NODE_GROUPS: &[&str] = &["system:nodes"];

fn node(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
}

#[test]
fn a_node_writes_only_its_own_node_object() {
    let k = Kapi::start(FLAGS);
    let api = Api::new(&k);
    runtime().block_on(async {
        api.grant(
            "node-writer",
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:nodes"}),
            json!([{"apiGroups": [""], "resources": ["nodes", "pods"],
                    "verbs": ["get", "create", "update", "delete"]}]),
        )
        .await;
        let n1 = Some(("system:node:n1", NODE_GROUPS));
        let post = |body: Value| api.send(reqwest::Method::POST, "/api/v1/nodes", n1, Some(body));
        let (code, v) = post(node("n2", json!({}))).await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""
        );
        let (code, v) = post(node(
            "n1",
            json!({"node-restriction.kubernetes.io/pci": "true", "kubernetes.io/hostname": "n1"}),
        ))
        .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "nodes \"n1\" is forbidden: node \"n1\" is not allowed to set the following labels: node-restriction.kubernetes.io/pci"
        );
        let (code, v) = post(node("n1", json!({"kubernetes.io/hostname": "n1"}))).await;
        assert_eq!(code, 201, "{v}");

        // Another node's object is out of reach for updates too.
        api.post("/api/v1/nodes", node("n2", json!({}))).await;
        let mut other = api.get("/api/v1/nodes/n2").await;
        other["metadata"]["labels"] = json!({"stolen": "yes"});
        let (code, v) = api
            .send(reqwest::Method::PUT, "/api/v1/nodes/n2", n1, Some(other))
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""
        );

        // Its own: allowed labels yes; reserved labels, taints, owners no.
        let own = api.get("/api/v1/nodes/n1").await;
        let put = |body: Value| api.send(reqwest::Method::PUT, "/api/v1/nodes/n1", n1, Some(body));
        let mut bad = own.clone();
        bad["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = json!("");
        let (code, v) = put(bad).await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "nodes \"n1\" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane"
        );
        let mut tainted = own.clone();
        tainted["spec"]["taints"] = json!([{"key": "k", "effect": "NoSchedule"}]);
        let (code, v) = put(tainted).await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify taints"
        );
        let mut owned = own.clone();
        owned["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "v1", "kind": "Node", "name": "n2", "uid": other_uid(&api).await}]);
        let (code, v) = put(owned).await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "nodes \"n1\" is forbidden: node \"n1\" is not allowed to modify ownerReferences"
        );
        let mut good = own.clone();
        good["metadata"]["labels"]["topology.kubernetes.io/zone"] = json!("z1");
        good["metadata"]["labels"]["example.com/anything"] = json!("x");
        let (code, v) = put(good).await;
        assert_eq!(code, 200, "{v}");
        assert_eq!(v["metadata"]["labels"]["topology.kubernetes.io/zone"], "z1");

        // The admin is no node: the same label is its to set.
        let mut admin = api.get("/api/v1/nodes/n1").await;
        admin["metadata"]["labels"]["node-restriction.kubernetes.io/pci"] = json!("true");
        api.admin(reqwest::Method::PUT, "/api/v1/nodes/n1", Some(admin))
            .await;
    });
}

async fn other_uid(api: &Api) -> Value {
    api.get("/api/v1/nodes/n2").await["metadata"]["uid"].clone()
}

#[test]
fn a_node_creates_only_mirror_pods_bound_to_itself() {
    let k = Kapi::start(FLAGS);
    k.wait_for_default_service_account("default");
    let api = Api::new(&k);
    runtime().block_on(async {
        api.grant(
            "node-pods",
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:nodes"}),
            json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "create", "delete"]}]),
        )
        .await;
        let n1 = api.post("/api/v1/nodes", node("n1", json!({}))).await;
        let uid = n1["metadata"]["uid"].clone();
        let who = Some(("system:node:n1", NODE_GROUPS));
        let pods = "/api/v1/namespaces/default/pods";
        let pod = |name: &str, annotations: Value, owners: Value| {
            json!({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name, "annotations": annotations, "ownerReferences": owners},
                   "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}})
        };
        let owner = json!([{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": uid, "controller": true}]);
        let (code, v) = api
            .send(
                reqwest::Method::POST,
                pods,
                who,
                Some(pod("plain", json!({}), owner.clone())),
            )
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "pods \"plain\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, node \"n1\" can only create mirror pods"
        );
        let mirror = json!({"kubernetes.io/config.mirror": "hash"});
        let (code, v) = api
            .send(
                reqwest::Method::POST,
                pods,
                who,
                Some(pod("orphan", mirror.clone(), json!([]))),
            )
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "pods \"orphan\" is forbidden: node \"n1\" can only create pods with an owner reference set to itself"
        );
        let (code, v) = api
            .send(
                reqwest::Method::POST,
                pods,
                who,
                Some(pod("static", mirror, owner)),
            )
            .await;
        assert_eq!(code, 201, "{v}");
        // A pod bound elsewhere is not this node's to delete.
        api.post(
            pods,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "elsewhere"},
                   "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "busybox"}]}}),
        )
        .await;
        let (code, v) = api
            .send(
                reqwest::Method::DELETE,
                &format!("{pods}/elsewhere"),
                who,
                None,
            )
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "pods \"elsewhere\" is forbidden: node \"n1\" can only delete pods with spec.nodeName set to itself"
        );
    });
}

#[test]
fn owner_references_need_delete_and_finalizers_permission() {
    let k = Kapi::start(FLAGS);
    let api = Api::new(&k);
    runtime().block_on(async {
        api.post(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "own"}}),
        )
        .await;
        let cms = "/api/v1/namespaces/own/configmaps";
        let parent = api
            .post(
                cms,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "parent"}}),
            )
            .await;
        let uid = parent["metadata"]["uid"].clone();
        api.grant(
            "cm-writer",
            user("dev"),
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "update"]}]),
        )
        .await;
        let dev = Some(("dev", &[][..]));
        let child = |name: &str, block: Option<bool>| {
            let mut r = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "parent", "uid": uid});
            if let Some(b) = block {
                r["blockOwnerDeletion"] = json!(b);
            }
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, "ownerReferences": [r]}})
        };
        let (code, v) = api
            .send(reqwest::Method::POST, cms, dev, Some(child("c1", Some(true))))
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "configmaps \"c1\" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>"
        );
        // Creating with a reference that does not block needs nothing more.
        let (code, v) = api
            .send(reqwest::Method::POST, cms, dev, Some(child("c1", None)))
            .await;
        assert_eq!(code, 201, "{v}");
        // Changing the references of an existing object needs `delete` on it.
        let mut update = child("c1", Some(false));
        update["metadata"]["resourceVersion"] = v["metadata"]["resourceVersion"].clone();
        let (code, v) = api
            .send(
                reqwest::Method::PUT,
                &format!("{cms}/c1"),
                dev,
                Some(update),
            )
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "configmaps \"c1\" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>"
        );
        // An owner kind nobody serves cannot be checked, so it is refused.
        let mut unknown = child("c2", None);
        unknown["metadata"]["ownerReferences"] = json!([{"apiVersion": "example.com/v1",
            "kind": "Thing", "name": "t", "uid": "u", "blockOwnerDeletion": true}]);
        let (code, v) = api
            .send(reqwest::Method::POST, cms, dev, Some(unknown))
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            "configmaps \"c2\" is forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion example.com/v1 Kind Thing: no matches for kind \"Thing\" in version \"example.com/v1\""
        );
        // With `update` on the owners' finalizers, blocking is allowed.
        api.grant(
            "cm-finalizers",
            user("dev"),
            json!([{"apiGroups": [""], "resources": ["configmaps/finalizers"], "verbs": ["update"]}]),
        )
        .await;
        let (code, v) = api
            .send(reqwest::Method::POST, cms, dev, Some(child("c3", Some(true))))
            .await;
        assert_eq!(code, 201, "{v}");
        assert_eq!(v["metadata"]["ownerReferences"][0]["blockOwnerDeletion"], true);
        // The admin may do all of it.
        api.post(cms, child("c4", Some(true))).await;
        // kapi's garbage collector, orphaning the children, rewrites their
        // references: the plugin must let it.
        api.admin(
            reqwest::Method::DELETE,
            &format!("{cms}/parent"),
            Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"})),
        )
        .await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let c3 = api.get(&format!("{cms}/c3")).await;
            let (code, _) = api
                .send(reqwest::Method::GET, &format!("{cms}/parent"), None, None)
                .await;
            if c3["metadata"]["ownerReferences"].is_null() && code == 404 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not orphaned within 20 s: {c3}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    });
}
