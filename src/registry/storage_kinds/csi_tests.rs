//! Tests of the CSI kinds' strategies.

use super::*;

fn fields(errs: &[FieldError]) -> Vec<(String, String)> {
    errs.iter()
        .map(|e| (e.field.clone(), e.message()))
        .collect()
}

fn cells(cols: &[Column], o: &Value) -> Vec<Value> {
    cols.iter().map(|c| (c.cell)(o)).collect()
}

fn driver() -> Value {
    let mut o = json!({"metadata": {"name": "csi.example.com", "generation": 1}, "spec": {"nodeAllocatableUpdatePeriodSeconds": 30}});
    CSIDriverStrategy.default(&mut o);
    CSIDriverStrategy.prepare_for_create(&mut o);
    o
}

#[test]
fn csi_driver_defaults_drops_and_cells() {
    let o = driver();
    assert_eq!(
        o["spec"],
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                "requiresRepublish": false, "seLinuxMount": false})
    );
    assert!(o["metadata"].get("generation").is_none());
    assert!(CSIDriverStrategy.validate(&o).is_empty());
    let names: Vec<&str> = CSI_DRIVER_COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "Name",
            "AttachRequired",
            "PodInfoOnMount",
            "StorageCapacity",
            "TokenRequests",
            "RequiresRepublish",
            "Modes",
            "Age"
        ]
    );
    let c = cells(&CSI_DRIVER_COLUMNS, &o);
    assert_eq!(
        c[..7],
        [
            json!("csi.example.com"),
            json!(true),
            json!(false),
            json!(false),
            json!("<unset>"),
            json!(false),
            json!("Persistent")
        ]
    );
    let mut t = o.clone();
    t["spec"]["tokenRequests"] = json!([{"audience": "a"}, {"audience": "b"}]);
    t["spec"]["volumeLifecycleModes"] = json!(["Persistent", "Ephemeral"]);
    assert_eq!((CSI_DRIVER_COLUMNS[4].cell)(&t), "a,b");
    assert_eq!((CSI_DRIVER_COLUMNS[6].cell)(&t), "Persistent,Ephemeral");
    // The gated field survives an update only when already stored.
    let mut new = o.clone();
    new["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(30);
    CSIDriverStrategy.prepare_for_update(&mut new, &o);
    assert!(new["spec"]
        .get("nodeAllocatableUpdatePeriodSeconds")
        .is_none());
    let mut old = o.clone();
    old["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(60);
    new["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(30);
    CSIDriverStrategy.prepare_for_update(&mut new, &old);
    assert_eq!(new["spec"]["nodeAllocatableUpdatePeriodSeconds"], 30);
    assert!(CSIDriverStrategy.generation_changed(&new, &o));
    assert!(!CSIDriverStrategy.generation_changed(&o, &o));
}

#[test]
fn csi_driver_validation() {
    let mut o = driver();
    o["spec"]["fsGroupPolicy"] = json!("Sometimes");
    o["spec"]["volumeLifecycleModes"] = json!(["Persistent", "Forever"]);
    o["spec"]["tokenRequests"] = json!([{"audience": "a", "expirationSeconds": 60}, {"audience": "a"}, {"audience": "b", "expirationSeconds": 5_000_000_000i64}]);
    o["spec"]["seLinuxMount"] = Value::Null;
    o["spec"]["nodeAllocatableUpdatePeriodSeconds"] = json!(5);
    assert_eq!(
            fields(&CSIDriverStrategy.validate(&o)),
            [
                ("spec.fsGroupPolicy".into(), "Unsupported value: \"Sometimes\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"".into()),
                ("spec.tokenRequests[0].expirationSeconds".into(), "Invalid value: 60: may not specify a duration less than 10 minutes".into()),
                ("spec.tokenRequests[1].audience".into(), "Duplicate value: \"a\"".into()),
                ("spec.tokenRequests[2].expirationSeconds".into(), "Invalid value: 5000000000: may not specify a duration larger than 2^32 seconds".into()),
                ("spec.volumeLifecycleModes".into(), "Unsupported value: \"Forever\": supported values: \"Persistent\", \"Ephemeral\"".into()),
                ("spec.seLinuxMount".into(), "Required value".into()),
                ("spec.nodeAllocatableUpdatePeriodSeconds".into(), "Invalid value: 5: must be greater than or equal to 10 seconds".into()),
            ]
        );
    let old = driver();
    let mut new = old.clone();
    new["spec"]["attachRequired"] = json!(false);
    new["spec"]["volumeLifecycleModes"] = json!(["Ephemeral"]);
    new["spec"]["podInfoOnMount"] = json!(true);
    assert_eq!(
        fields(&CSIDriverStrategy.validate_update(&new, &old)),
        [
            (
                "spec.attachedRequired".into(),
                "Invalid value: false: field is immutable".into()
            ),
            (
                "spec.volumeLifecycleModes".into(),
                "Invalid value: [\"Ephemeral\"]: field is immutable".into()
            ),
        ]
    );
}

#[test]
fn csi_node_validation_and_cells() {
    let mut o = json!({"metadata": {"name": "node-1", "generation": 1}, "spec": {"drivers": [
            {"name": "csi.example.com", "nodeID": "n1", "topologyKeys": ["topology.example.com/zone"], "allocatable": {"count": 3}}]}});
    CSINodeStrategy.prepare_for_create(&mut o);
    assert!(o["metadata"].get("generation").is_none());
    assert!(CSINodeStrategy.validate(&o).is_empty());
    assert_eq!(
        cells(&CSI_NODE_COLUMNS, &o)[..2],
        [json!("node-1"), json!(1)]
    );
    let bad = json!({"spec": {"drivers": [
            {"name": "Bad_Driver", "nodeID": "", "topologyKeys": ["", "k", "k"], "allocatable": {"count": -1}},
            {"name": "Bad_Driver", "nodeID": "x".repeat(193)}]}});
    let got = fields(&CSINodeStrategy.validate(&bad));
    let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        paths,
        [
            "spec.drivers[0].name",
            "spec.drivers[0].nodeID",
            "spec.drivers[0].allocatable.count",
            "spec.drivers[0]",
            "spec.drivers[0]",
            "spec.drivers[0]",
            "spec.drivers[0]",
            "spec.drivers[1].name",
            "spec.drivers[1].nodeID",
            "spec.drivers[1].name"
        ]
    );
    assert_eq!(got[1].1, "Required value");
    assert_eq!(
        got[2].1,
        "Invalid value: -1: must be greater than or equal to 0"
    );
    assert_eq!(got[4].1, "Invalid value: \"\": name part must be non-empty");
    assert!(
        got[5]
            .1
            .starts_with("Invalid value: \"\": name part must consist of alphanumeric"),
        "{}",
        got[5].1
    );
    assert_eq!(got[6].1, "Duplicate value: \"k\"");
    assert_eq!(
        got[8].1,
        format!(
            "Invalid value: \"{}\": must be 192 characters or less",
            "x".repeat(193)
        )
    );
    assert_eq!(got[9].1, "Duplicate value: \"Bad_Driver\"");
    // Drivers are immutable whole; new ones may be added.
    let mut new = o.clone();
    new["spec"]["drivers"][0]["allocatable"]["count"] = json!(4);
    if let Some(a) = new["spec"]["drivers"].as_array_mut() {
        a.push(json!({"name": "other.example.com", "nodeID": "n1"}));
    }
    assert_eq!(
            fields(&CSINodeStrategy.validate_update(&new, &o)),
            [("spec.drivers".into(), "Invalid value: {\"Name\":\"csi.example.com\",\"NodeID\":\"n1\",\"TopologyKeys\":[\"topology.example.com/zone\"],\"Allocatable\":{\"Count\":4}}: field is immutable".into())]
        );
    assert!(!CSINodeStrategy.generation_changed(&new, &o));
}

#[test]
fn csi_storage_capacity_validation_and_cells() {
    let o = json!({"metadata": {"name": "cap", "namespace": "ns"}, "storageClassName": "fast", "capacity": "10Gi",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}}});
    assert!(CSIStorageCapacityStrategy.validate(&o).is_empty());
    let names: Vec<&str> = CSI_STORAGE_CAPACITY_COLUMNS
        .iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["Name", "StorageClassName", "Capacity"]);
    assert_eq!(
        cells(&CSI_STORAGE_CAPACITY_COLUMNS, &o),
        [json!("cap"), json!("fast"), json!("10Gi")]
    );
    assert_eq!(
        (CSI_STORAGE_CAPACITY_COLUMNS[2].cell)(&json!({})),
        "<unset>"
    );
    let bad = json!({"storageClassName": "", "capacity": "-1Gi", "nodeTopology": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["-bad"]}]}});
    let got = fields(&CSIStorageCapacityStrategy.validate(&bad));
    let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        paths,
        [
            "nodeTopology.matchExpressions[0].values[0]",
            "storageClassName",
            "capacity"
        ]
    );
    assert_eq!(
        got[2].1,
        "Invalid value: \"-1Gi\": must be greater than or equal to 0"
    );
    // An invalid label value already stored may stay; the selector may not change.
    let mut stored = bad.clone();
    stored["storageClassName"] = json!("fast");
    stored["capacity"] = json!("1Gi");
    let mut new = stored.clone();
    new["capacity"] = json!("2Gi");
    assert!(CSIStorageCapacityStrategy
        .validate_update(&new, &stored)
        .is_empty());
    let mut moved = o.clone();
    moved["nodeTopology"] = json!({"matchLabels": {"topology.kubernetes.io/zone": "b"}});
    moved["storageClassName"] = json!("slow");
    assert_eq!(
            fields(&CSIStorageCapacityStrategy.validate_update(&moved, &o)),
            [
                ("nodeTopology".into(), "Invalid value: {\"matchLabels\":{\"topology.kubernetes.io/zone\":\"b\"}}: field is immutable".into()),
                ("storageClassName".into(), "Invalid value: \"slow\": field is immutable".into()),
            ]
        );
}

fn attachment() -> Value {
    json!({"metadata": {"name": "va", "generation": 1}, "spec": {"attacher": "csi.example.com", "nodeName": "node-1",
            "source": {"persistentVolumeName": "pv-1"}}, "status": {"attached": false}})
}

#[test]
fn volume_attachment_validation_and_cells() {
    let mut o = attachment();
    VolumeAttachmentStrategy.prepare_for_create(&mut o);
    assert!(o["metadata"].get("generation").is_none());
    assert!(VolumeAttachmentStrategy.validate(&o).is_empty());
    let names: Vec<&str> = VOLUME_ATTACHMENT_COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, ["Name", "Attacher", "PV", "Node", "Attached", "Age"]);
    assert_eq!(VOLUME_ATTACHMENT_COLUMNS[1].format, "name");
    assert_eq!(
        cells(&VOLUME_ATTACHMENT_COLUMNS, &o)[..5],
        [
            json!("va"),
            json!("csi.example.com"),
            json!("pv-1"),
            json!("node-1"),
            json!(false)
        ]
    );
    let bad = json!({"spec": {"attacher": "", "nodeName": "", "source": {}}, "status": {"attachError": {"errorCode": -1, "message": "x".repeat(1025)}}});
    let got = fields(&VolumeAttachmentStrategy.validate(&bad));
    let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        paths,
        [
            "spec.attacher",
            "spec.source",
            "spec.nodeName",
            "status.attachError.message",
            "status.attachError.errorCode",
            "spec.attacher",
            "spec.attacher"
        ]
    );
    assert_eq!(
        got[1].1,
        "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    );
    assert_eq!(got[3].1, "Too long: may not be more than 262144 bytes");
    assert_eq!(
        got[4].1,
        "Invalid value: -1: must be between 0 and 2147483647, inclusive"
    );
    let both = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"persistentVolumeName": "", "inlineVolumeSpec": {}}}});
    assert_eq!(
        fields(&VolumeAttachmentStrategy.validate(&both))[0].0,
        "spec.source"
    );
    let empty_pv = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"persistentVolumeName": ""}}});
    let got = fields(&VolumeAttachmentStrategy.validate(&empty_pv));
    assert_eq!(
        got[0],
        (
            "spec.source.persistentVolumeName".into(),
            "Required value: must specify non empty persistentVolumeName".into()
        )
    );
    assert_eq!(got[1].0, "spec.source.persistentVolumeName");
    let inline = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"inlineVolumeSpec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"], "persistentVolumeReclaimPolicy": "Delete",
            "nfs": {"server": "s", "path": "/"}, "csi": {"driver": "", "volumeHandle": "", "nodePublishSecretRef": {"name": "s"}},
            "storageClassName": "fast", "volumeMode": "Block"}}}});
    let got = fields(&VolumeAttachmentStrategy.validate(&inline));
    let p = "spec.source.inlineVolumeSpec";
    let want: Vec<String> = [
        "capacity",
        "accessModes",
        "persistentVolumeReclaimPolicy",
        "csi",
        "storageClassName",
        "volumeMode",
    ]
    .iter()
    .map(|f| format!("{p}.{f}"))
    .collect();
    assert_eq!(got.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>(), want);
    assert_eq!(
        got[3].1,
        "Forbidden: may not specify more than 1 volume type"
    );
    let csi_only = json!({"spec": {"attacher": "a.b", "nodeName": "n", "source": {"inlineVolumeSpec": {
            "accessModes": ["ReadWriteOnce"], "csi": {"driver": "", "volumeHandle": "", "nodePublishSecretRef": {"name": "s"}}}}}});
    let got = fields(&VolumeAttachmentStrategy.validate(&csi_only));
    let paths: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        paths,
        [
            &format!("{p}.csi.driver"),
            &format!("{p}.csi.driver"),
            &format!("{p}.csi.volumeHandle"),
            &format!("{p}.csi.nodePublishSecretRef.namespace")
        ]
    );
}

#[test]
fn volume_attachment_update_rules() {
    let old = attachment();
    let mut new = old.clone();
    new["spec"]["nodeName"] = json!("node-2");
    assert_eq!(
            fields(&VolumeAttachmentStrategy.validate_update(&new, &old)),
            [("spec".into(), "Invalid value: {\"Attacher\":\"csi.example.com\",\"Source\":{\"PersistentVolumeName\":\"pv-1\",\"InlineVolumeSpec\":null},\"NodeName\":\"node-2\"}: field is immutable".into())]
        );
    // upstream validates the new object twice on update.
    let mut status = old.clone();
    status["status"]["detachError"] = json!({"errorCode": -2});
    let got = fields(&VolumeAttachmentStrategy.validate_update(&status, &old));
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(|(f, _)| f == "status.detachError.errorCode"));
    assert!(!VolumeAttachmentStrategy.generation_changed(&new, &old));
}

#[test]
fn volume_attributes_class_validation_and_cells() {
    let o = json!({"metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "100"}});
    assert!(VolumeAttributesClassStrategy.validate(&o).is_empty());
    assert_eq!(
        cells(&VOLUME_ATTRIBUTES_CLASS_COLUMNS, &o)[..2],
        [json!("gold"), json!("csi.example.com")]
    );
    let got = fields(
        &VolumeAttributesClassStrategy
            .validate(&json!({"driverName": "Bad Driver", "parameters": {"": "x"}})),
    );
    assert_eq!(got[0].0, "driverName");
    assert!(
        got[0]
            .1
            .starts_with("Invalid value: \"bad driver\": name part must consist of"),
        "{}",
        got[0].1
    );
    assert_eq!(
        got[1],
        (
            "parameters".into(),
            "Invalid value: \"\": field can not be empty.".into()
        )
    );
    assert_eq!(
        fields(&VolumeAttributesClassStrategy.validate(&json!({}))),
        [
            ("driverName".into(), "Required value".into()),
            (
                "parameters".into(),
                "Required value: must contain at least one key/value pair".into()
            ),
        ]
    );
    let mut new = o.clone();
    new["driverName"] = json!("other.example.com");
    new["parameters"] = json!({"iops": "200"});
    assert_eq!(
        fields(&VolumeAttributesClassStrategy.validate_update(&new, &o)),
        [
            (
                "driverName".into(),
                "Forbidden: updates to driverName are forbidden.".into()
            ),
            (
                "parameters".into(),
                "Forbidden: updates to parameters are forbidden.".into()
            ),
        ]
    );
}

#[test]
fn qualified_names_as_upstream() {
    assert!(qualified_name("example.com/zone").is_empty());
    assert_eq!(qualified_name("a/b/c").len(), 1);
    assert!(qualified_name("a/b/c")[0].starts_with("a qualified name must consist of"));
    assert_eq!(qualified_name("example.com/").len(), 2);
    assert!(sem_eq(
        &json!({"a": [], "b": null, "c": 1}),
        &json!({"c": 1})
    ));
    assert!(!sem_eq(&json!({"c": 1}), &json!({"c": 2})));
}
