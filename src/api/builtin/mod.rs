//! The static table of every built-in resource an upstream kube-apiserver
//! v1.34 serves by default (no feature gates, no `--runtime-config`): only
//! GA group versions, since beta APIs have been off by default since 1.24.
//! It mirrors upstream v1.34 discovery: groups in discovery priority order,
//! versions in preferred order, resources by plural; verbs, short names,
//! categories and subresources as discovery lists them; storage key paths
//! as upstream lays them out below `/registry`.
//!
//! One file per API group holds that group's entries, as upstream keeps
//! each group's storage in its own package; this module holds what they
//! share (verb lists, the status and scale subresources, `BASE`) and
//! joins the groups into `BUILTINS` in discovery priority order.

mod admissionregistration;
mod apiextensions;
mod apiregistration;
mod apps;
mod authentication;
mod authorization;
mod autoscaling;
mod batch;
mod certificates;
mod coordination;
mod core;
mod discovery;
mod events;
mod flowcontrol;
mod networking;
mod node;
mod policy;
mod rbac;
mod resource;
mod scheduling;
mod storage;

use crate::api::catalog::{BuiltinDef, SubDef};

/// The verbs of an ordinary stored resource.
const RW: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// Namespaces: no `deletecollection`.
const RW_NO_COLLECTION: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
/// Reviews and other create-only resources.
const CREATE: &[&str] = &["create"];
/// Status-like subresources.
const GET_PATCH_UPDATE: &[&str] = &["get", "patch", "update"];
/// Connect subresources (exec, attach, portforward).
const CREATE_GET: &[&str] = &["create", "get"];
/// Proxy subresources.
const PROXY: &[&str] = &["create", "delete", "get", "patch", "update"];

/// `<resource>/status`, served as the parent's kind.
const STATUS: SubDef = SubDef {
    name: "status",
    group: "",
    version: "",
    kind: "",
    verbs: GET_PATCH_UPDATE,
};
/// `<resource>/scale`, served as autoscaling/v1 `Scale`.
const SCALE: SubDef = SubDef {
    name: "scale",
    group: "autoscaling",
    version: "v1",
    kind: "Scale",
    verbs: GET_PATCH_UPDATE,
};
const ONLY_STATUS: &[SubDef] = &[STATUS];
const SCALE_AND_STATUS: &[SubDef] = &[SCALE, STATUS];

/// Defaults for the optional fields; every entry names its identity,
/// scope, verbs, storage path and codec itself.
const BASE: BuiltinDef = BuiltinDef {
    group: "",
    version: "v1",
    kind: "",
    plural: "",
    singular: "",
    namespaced: true,
    verbs: RW,
    short_names: &[],
    categories: &[],
    subresources: &[],
    storage_path: "",
    storage_version: "",
    selectable_fields: &[],
    codec: None,
    schema: None,
};

/// The groups in discovery priority order, each in its preferred-version
/// order and by plural.
const GROUPS: &[&[BuiltinDef]] = &[
    core::CORE,
    apiregistration::APIREGISTRATION,
    apps::APPS,
    events::EVENTS,
    authentication::AUTHENTICATION,
    authorization::AUTHORIZATION,
    autoscaling::AUTOSCALING,
    batch::BATCH,
    certificates::CERTIFICATES,
    networking::NETWORKING,
    policy::POLICY,
    rbac::RBAC,
    storage::STORAGE,
    admissionregistration::ADMISSIONREGISTRATION,
    apiextensions::APIEXTENSIONS,
    scheduling::SCHEDULING,
    coordination::COORDINATION,
    node::NODE,
    discovery::DISCOVERY,
    flowcontrol::FLOWCONTROL,
    resource::RESOURCE,
];

const BUILTINS_LEN: usize = {
    let (mut n, mut i) = (0, 0);
    while i < GROUPS.len() {
        n += GROUPS[i].len();
        i += 1;
    }
    n
};

/// The groups' entries one after another, at compile time.
const fn concat_groups() -> [BuiltinDef; BUILTINS_LEN] {
    let mut out = [BASE; BUILTINS_LEN];
    let (mut k, mut i) = (0, 0);
    while i < GROUPS.len() {
        let mut j = 0;
        while j < GROUPS[i].len() {
            out[k] = GROUPS[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

pub static BUILTINS: &[BuiltinDef] = &concat_groups();

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn api_version(d: &BuiltinDef) -> String {
        if d.group.is_empty() {
            d.version.to_string()
        } else {
            format!("{}/{}", d.group, d.version)
        }
    }

    fn minimal(d: &BuiltinDef) -> serde_json::Value {
        serde_json::json!({"apiVersion": api_version(d), "kind": d.kind, "metadata": {"name": "x"}})
    }

    #[test]
    fn no_duplicate_group_version_plural() {
        let mut seen = HashSet::new();
        for d in BUILTINS {
            assert!(
                seen.insert((d.group, d.version, d.plural)),
                "duplicate {}/{}",
                api_version(d),
                d.plural
            );
        }
    }

    #[test]
    fn served_group_versions_and_counts() {
        let mut gvs: Vec<(String, usize)> = Vec::new();
        for d in BUILTINS {
            let gv = api_version(d);
            match gvs.last_mut() {
                Some((last, n)) if *last == gv => *n += 1,
                _ => {
                    assert!(!gvs.iter().any(|(g, _)| *g == gv), "{gv} is not contiguous");
                    gvs.push((gv, 1));
                }
            }
        }
        let want: &[(&str, usize)] = &[
            ("v1", 17),
            ("apiregistration.k8s.io/v1", 1),
            ("apps/v1", 5),
            ("events.k8s.io/v1", 1),
            ("authentication.k8s.io/v1", 2),
            ("authorization.k8s.io/v1", 4),
            ("autoscaling/v2", 1),
            ("autoscaling/v1", 1),
            ("batch/v1", 2),
            ("certificates.k8s.io/v1", 1),
            ("networking.k8s.io/v1", 5),
            ("policy/v1", 1),
            ("rbac.authorization.k8s.io/v1", 4),
            ("storage.k8s.io/v1", 6),
            ("admissionregistration.k8s.io/v1", 4),
            ("apiextensions.k8s.io/v1", 1),
            ("scheduling.k8s.io/v1", 1),
            ("coordination.k8s.io/v1", 1),
            ("node.k8s.io/v1", 1),
            ("discovery.k8s.io/v1", 1),
            ("flowcontrol.apiserver.k8s.io/v1", 2),
            ("resource.k8s.io/v1", 4),
        ];
        let got: Vec<(&str, usize)> = gvs.iter().map(|(g, n)| (g.as_str(), *n)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn resources_sorted_by_plural_within_group_version() {
        for w in BUILTINS.windows(2) {
            if (w[0].group, w[0].version) == (w[1].group, w[1].version) {
                assert!(
                    w[0].plural < w[1].plural,
                    "{} before {}",
                    w[0].plural,
                    w[1].plural
                );
            }
        }
    }

    #[test]
    fn only_ga_versions_served() {
        for d in BUILTINS {
            assert!(
                !d.version.contains("alpha") && !d.version.contains("beta"),
                "{}",
                api_version(d)
            );
        }
    }

    #[test]
    fn stored_resources_have_a_storage_path() {
        let never_stored: HashSet<&str> = [
            "bindings",
            "componentstatuses",
            "tokenreviews",
            "selfsubjectreviews",
            "localsubjectaccessreviews",
            "selfsubjectaccessreviews",
            "selfsubjectrulesreviews",
            "subjectaccessreviews",
        ]
        .into_iter()
        .collect();
        for d in BUILTINS {
            if never_stored.contains(d.plural) {
                assert!(d.storage_path.is_empty(), "{} must not be stored", d.plural);
            } else {
                assert!(
                    !d.storage_path.is_empty(),
                    "{} has no storage path",
                    d.plural
                );
                assert!(
                    d.verbs.contains(&"watch"),
                    "{} is stored but not watchable",
                    d.plural
                );
            }
        }
    }

    #[test]
    fn shared_storage_agrees() {
        // Resources with the same storage path must be stored as one version.
        for a in BUILTINS {
            for b in BUILTINS {
                if !a.storage_path.is_empty() && a.storage_path == b.storage_path {
                    assert_eq!(a.storage_version, b.storage_version, "{}", a.storage_path);
                    assert_eq!(a.kind, b.kind, "{}", a.storage_path);
                }
            }
        }
    }

    #[test]
    fn singular_is_lower_case_kind() {
        for d in BUILTINS {
            assert_eq!(d.singular, d.kind.to_lowercase(), "{}", d.plural);
        }
    }

    #[test]
    fn every_codec_matches_its_group_version_kind() {
        for d in BUILTINS {
            let codec = d
                .codec
                .unwrap_or_else(|| panic!("{} has no codec", d.plural));
            let out = codec(&minimal(d)).unwrap_or_else(|e| panic!("{}: {e}", d.plural));
            assert_eq!(out["apiVersion"], api_version(d).as_str(), "{}", d.plural);
            assert_eq!(out["kind"], d.kind, "{}", d.plural);
            assert_eq!(out["metadata"]["name"], "x", "{}", d.plural);
            // The wrong kind is refused.
            let mut wrong = minimal(d);
            wrong["kind"] = "NoSuchKind".into();
            assert!(codec(&wrong).is_err(), "{} accepted a wrong kind", d.plural);
        }
    }

    #[test]
    fn codec_round_trips_and_drops_unknown_fields() {
        let pod = BUILTINS.iter().find(|d| d.plural == "pods").unwrap();
        let v = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "bogus": 1},
        });
        let out = (pod.codec.unwrap())(&v).unwrap();
        assert_eq!(out["spec"]["containers"][0]["image"], "busybox");
        assert_eq!(out["metadata"]["labels"]["a"], "b");
        assert!(out["spec"].get("bogus").is_none());

        let deploy = BUILTINS.iter().find(|d| d.plural == "deployments").unwrap();
        let bad = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "three"}});
        assert!((deploy.codec.unwrap())(&bad).is_err());
    }
}
