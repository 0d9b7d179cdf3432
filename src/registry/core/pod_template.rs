//! PodTemplate (upstream's pkg/registry/core/podtemplate): a stored pod
//! template, defaulted and validated with the pod's own rules (pod.rs) so a
//! template means what the pod made from it would.

use serde_json::{json, Value};

use super::pod::{default_pod_spec, validate_pod_spec};
use crate::registry::helpers as kh;
use crate::registry::strategy::{name_column, Column, Strategy};
use crate::registry::validation::FieldError;

pub struct PodTemplateStrategy;

static POD_TEMPLATE_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "Containers",
            kind: "string",
            format: "",
            description: "Names of each container in the template.",
            priority: 0,
            cell: |o| json!(kh::container_cells(&o["template"]["spec"]).0),
        },
        Column {
            name: "Images",
            kind: "string",
            format: "",
            description: "Images referenced by each container in the template.",
            priority: 0,
            cell: |o| json!(kh::container_cells(&o["template"]["spec"]).1),
        },
        Column {
            name: "Pod Labels",
            kind: "string",
            format: "",
            description: "The labels for the pod template.",
            priority: 0,
            cell: |o| json!(kh::format_labels(&o["template"]["metadata"]["labels"])),
        },
    ]
});

impl Strategy for PodTemplateStrategy {
    fn default(&self, obj: &mut Value) {
        if let Some(ps) = obj
            .get_mut("template")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            default_pod_spec(ps);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        kh::validate_labels(
            &obj["template"]["metadata"]["labels"],
            "template.metadata.labels",
            &mut errs,
        );
        errs.extend(validate_pod_spec(&obj["template"]["spec"], "template.spec"));
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&POD_TEMPLATE_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::test_support::cells;

    #[test]
    fn pod_templates() {
        let mut o = json!({"template": {"metadata": {"labels": {"b": "2", "a": "1"}}, "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}});
        PodTemplateStrategy.default(&mut o);
        assert_eq!(o["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(
            o["template"]["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert!(PodTemplateStrategy.validate(&o).is_empty());
        let c = cells(&POD_TEMPLATE_COLUMNS, &o);
        assert_eq!(c[1], "c");
        assert_eq!(c[2], "busybox:1");
        assert_eq!(c[3], "a=1,b=2");
        let bad = json!({"template": {"spec": {}}});
        assert_eq!(
            PodTemplateStrategy.validate(&bad)[0].field,
            "template.spec.containers"
        );
    }
}
