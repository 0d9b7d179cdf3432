//! Keys map back to resources, filters become key ranges, values decode
//! or say why not.

use super::*;

fn layout() -> KeyLayout {
    KeyLayout::new(&crate::app::builtin_catalog(), "/registry")
}

fn info(g: &str, r: &str, ns: &str, n: &str) -> KeyInfo {
    KeyInfo {
        group: g.into(),
        resource: r.into(),
        namespace: ns.into(),
        name: n.into(),
    }
}

#[test]
fn keys_map_back_to_resources() {
    let l = layout();
    assert_eq!(
        l.parse("/registry/configmaps/default/x"),
        info("", "configmaps", "default", "x")
    );
    assert_eq!(
        l.parse("/registry/services/specs/default/kubernetes"),
        info("", "services", "default", "kubernetes")
    );
    assert_eq!(
        l.parse("/registry/services/endpoints/default/kubernetes"),
        info("", "endpoints", "default", "kubernetes")
    );
    assert_eq!(l.parse("/registry/minions/n1"), info("", "nodes", "", "n1"));
    assert_eq!(
        l.parse("/registry/namespaces/default"),
        info("", "namespaces", "", "default")
    );
    assert_eq!(
        l.parse("/registry/deployments/default/web"),
        info("apps", "deployments", "default", "web")
    );
    assert_eq!(
        l.parse("/registry/events/default/e"),
        info("", "events", "default", "e")
    );
    assert_eq!(
        l.parse("/registry/horizontalpodautoscalers/default/h"),
        info("autoscaling", "horizontalpodautoscalers", "default", "h")
    );
    assert_eq!(
        l.parse("/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com"),
        info(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "widgets.example.com"
        )
    );
    assert_eq!(
        l.parse("/registry/example.com/widgets/default/w"),
        info("example.com", "widgets", "default", "w")
    );
    assert_eq!(
        l.parse("/registry/example.com/gadgets/g"),
        info("example.com", "gadgets", "", "g")
    );
    assert_eq!(
        l.parse("/registry/compact_rev_key"),
        info("", "compact_rev_key", "", "")
    );
    assert_eq!(l.parse("/other/x"), info("", "", "", "/other/x"));
}

#[test]
fn filters_become_ranges() {
    let f = |resource: Option<&str>, group: Option<&str>, ns: Option<&str>, name: Option<&str>| {
        Plan::new(
            layout(),
            Filter {
                resource: resource.map(String::from),
                group: group.map(String::from),
                namespace: ns.map(String::from),
                name: name.map(String::from),
                prefix: None,
            },
        )
        .map(|p| p.ranges)
    };
    let r = f(Some("cm"), None, Some("default"), None).unwrap();
    assert_eq!(
        r,
        vec![(
            "/registry/configmaps/default/".into(),
            "/registry/configmaps/default0".into()
        )]
    );
    let r = f(Some("configmaps"), None, Some("default"), Some("x")).unwrap();
    assert_eq!(
        r,
        vec![(
            "/registry/configmaps/default/x".into(),
            "/registry/configmaps/default/x\0".into()
        )]
    );
    let r = f(Some("nodes"), None, None, Some("n1")).unwrap();
    assert_eq!(r[0].0, "/registry/minions/n1");
    let r = f(Some("deployments.apps"), None, None, None).unwrap();
    assert_eq!(r[0].0, "/registry/deployments/");
    let r = f(Some("widgets"), Some("example.com"), None, None).unwrap();
    assert_eq!(r[0].0, "/registry/example.com/widgets/");
    let r = f(Some("events"), None, None, None).unwrap();
    assert_eq!(r.len(), 1);
    assert!(matches!(
        f(Some("widgets"), None, None, None),
        Err(DumpError::Usage(_))
    ));
    let p = Plan::new(
        layout(),
        Filter {
            resource: Some("configmaps".into()),
            prefix: Some("/registry/configmaps/kube-system/".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        p.ranges,
        vec![(
            "/registry/configmaps/kube-system/".into(),
            "/registry/configmaps/kube-system0".into()
        )]
    );
}

#[test]
fn values_decode_or_say_why_not() {
    assert_eq!(
        decode_value(br#"{"a":1}"#),
        Decoded::Json(serde_json::json!({"a": 1}))
    );
    assert_eq!(decode_value(b"42"), Decoded::Text("42".into()));
    match decode_value(&[0, 1, 2, 0xff]) {
        Decoded::Undecodable { shown, .. } => {
            assert_eq!(shown, "<undecodable: 4 bytes: 000102ff>")
        }
        other => panic!("{other:?}"),
    }
    match decode_value(b"k8s\0\x0a\x03garbage") {
        Decoded::Undecodable { shown, reason } => {
            assert!(
                shown.starts_with("<undecodable: 13 bytes: 6b387300"),
                "{shown}"
            );
            assert!(reason.unwrap_or_default().starts_with("protobuf"));
        }
        other => panic!("{other:?}"),
    }
    match decode_value(b"k8s:enc:aescbc:v1:key1:\x01\x02") {
        Decoded::Undecodable { reason, .. } => {
            assert_eq!(
                reason.as_deref(),
                Some("encrypted at rest (aescbc:v1:key1)")
            )
        }
        other => panic!("{other:?}"),
    }
}
