//! A realistic CRD (the CronTab example): default, prune, validate.

use super::*;

fn crontab_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["cronSpec", "image"],
                "properties": {
                    "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
                    "image": {"type": "string", "minLength": 1},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                    "suspend": {"type": "boolean", "default": false},
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "maxItems": 3,
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "port": {"x-kubernetes-int-or-string": true},
                                "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
                            },
                        },
                    },
                },
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        },
    })
}

#[test]
fn crontab_schema_is_structural() {
    assert_eq!(structural(crontab_schema()), Vec::<String>::new());
}

#[test]
fn crontab_good_object() {
    let s = crontab_schema();
    let mut o = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {
            "cronSpec": "* * * * */5",
            "image": "my-awesome-cron-image",
            "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": "dns", "protocol": "UDP"}],
            "color": "blue",
        },
        "status": {"lastScheduleTime": "now"},
    });
    apply_defaults(&mut o, &s);
    assert_eq!(prune(&mut o, &s), vec!["spec.color"]);
    assert_eq!(validate(&o, &s, ""), Vec::<FieldError>::new());
    assert_eq!(
        o["spec"],
        json!({
            "cronSpec": "* * * * */5",
            "image": "my-awesome-cron-image",
            "replicas": 1,
            "suspend": false,
            "ports": [
                {"name": "http", "port": 80, "protocol": "TCP"},
                {"name": "dns", "port": "dns", "protocol": "UDP"},
            ],
        })
    );
    assert_eq!(o["status"], json!({"lastScheduleTime": "now"}));
}

#[test]
fn crontab_bad_object() {
    let s = crontab_schema();
    let mut o = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "bad"},
        "spec": {
            "cronSpec": "every minute",
            "replicas": 20,
            "ports": [{"name": "a", "protocol": "SCTP"}, {"name": "a", "port": true}],
        },
    });
    apply_defaults(&mut o, &s);
    assert!(prune(&mut o, &s).is_empty());
    assert_eq!(
        msgs(&validate(&o, &s, "")),
        vec![
            "spec.cronSpec: Invalid value: \"every minute\": spec.cronSpec in body should match '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
            "spec.ports[0].protocol: Unsupported value: \"SCTP\": supported values: \"TCP\", \"UDP\"",
            "spec.ports[1].port: Invalid value: \"boolean\": spec.ports[1].port in body must be of type integer,string: \"boolean\"",
            "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
            "spec.image: Required value",
            "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"a\"}",
        ]
    );
}
