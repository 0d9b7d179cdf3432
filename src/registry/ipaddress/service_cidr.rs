//! ServiceCIDR (upstream's pkg/registry/networking/servicecidr).

use std::net::IpAddr;

use serde_json::{json, Value};

use super::{cidr_errors, drop_generation, is_4in6, parse_cidr, IMMUTABLE};
use crate::registry::helpers::strings;
use crate::registry::resource::gojson;
use crate::registry::strategy::{age_column, name_column, Column, Strategy};
use crate::registry::validation::FieldError;

const CIDRS_DESCRIPTION: &str = "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.";

/// netutils.IPFamilyOfCIDRString: 4, 6, or 0 when it does not parse.
fn cidr_family(value: &str) -> u8 {
    match parse_cidr(value, false) {
        Some((IpAddr::V4(_), _)) => 4,
        Some((ip, _)) if is_4in6(&ip) => 4,
        Some(_) => 6,
        None => 0,
    }
}

pub struct ServiceCIDRStrategy;

static SERVICE_CIDR_COLUMNS: std::sync::LazyLock<Vec<Column>> = std::sync::LazyLock::new(|| {
    vec![
        name_column(),
        Column {
            name: "CIDRs",
            kind: "string",
            format: "",
            description: CIDRS_DESCRIPTION,
            priority: 0,
            cell: |o| json!(strings(&o["spec"]["cidrs"]).join(",")),
        },
        age_column(),
    ]
});

/// upstream's validateServiceCIDRSpec at `spec.cidrs`.
fn validate_cidrs(cidrs: &Value) -> Vec<FieldError> {
    let list = strings(cidrs);
    if list.is_empty() {
        return vec![FieldError::required(
            "spec.cidrs",
            "at least one CIDR required",
        )];
    }
    if list.len() > 2 {
        let spec = gojson::structure(&[("CIDRs", gojson::strings(cidrs))]);
        return vec![crate::registry::helpers::invalid_raw(
            "spec.cidrs",
            &spec,
            "may only hold up to 2 values",
        )];
    }
    let mut errs = Vec::new();
    for (i, c) in list.iter().enumerate() {
        for msg in cidr_errors(c) {
            errs.push(FieldError::invalid(
                format!("spec.cidrs[{i}]"),
                json!(c),
                msg,
            ));
        }
    }
    if list.len() == 2
        && cidr_family(&list[0]) == cidr_family(&list[1])
        && cidr_family(&list[0]) != 0
    {
        errs.push(crate::registry::helpers::invalid_raw(
            "spec.cidrs",
            &gojson::strings(cidrs),
            "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
        ));
    }
    errs
}

impl Strategy for ServiceCIDRStrategy {
    /// Upstream's PrepareForCreate leaves the status as sent.
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_generation(obj);
        if let Some(m) = obj.as_object_mut() {
            if m.get("status").is_none_or(|s| !s.is_object()) {
                m.insert("status".into(), json!({}));
            }
        }
    }

    fn generation_changed(&self, _new: &Value, _old: &Value) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_cidrs(&obj["spec"]["cidrs"])
    }

    /// upstream's ValidateServiceCIDRUpdate: the CIDRs may only change by
    /// adding a second one (to go dual-stack); nothing else is re-checked.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let (nc, oc) = (
            strings(&new["spec"]["cidrs"]),
            strings(&old["spec"]["cidrs"]),
        );
        let mut errs = Vec::new();
        if nc.len() == oc.len() {
            for (i, o) in oc.iter().enumerate() {
                if &nc[i] != o {
                    errs.push(FieldError::invalid(
                        format!("spec.cidrs[{i}]"),
                        json!(nc[i]),
                        IMMUTABLE,
                    ));
                }
            }
        } else if oc.len() == 1 && nc.len() == 2 {
            if nc[0] != oc[0] {
                errs.push(FieldError::invalid(
                    "spec.cidrs[0]",
                    json!(nc[0]),
                    IMMUTABLE,
                ));
            }
            errs.extend(validate_cidrs(&new["spec"]["cidrs"]));
        } else {
            errs.push(crate::registry::helpers::invalid_raw(
                "spec.cidrs",
                &gojson::strings(&new["spec"]["cidrs"]),
                IMMUTABLE,
            ));
        }
        errs
    }

    fn columns(&self) -> Option<&'static [Column]> {
        Some(&SERVICE_CIDR_COLUMNS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(errs: &[FieldError]) -> Vec<(String, String)> {
        errs.iter()
            .map(|e| (e.field.clone(), e.message()))
            .collect()
    }

    #[test]
    fn service_cidr_validation() {
        let sc = |c: Value| json!({"metadata": {"name": "x"}, "spec": {"cidrs": c}});
        assert!(ServiceCIDRStrategy
            .validate(&sc(json!(["10.0.0.0/24", "fd00::/64"])))
            .is_empty());
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!([])))),
            [(
                "spec.cidrs".into(),
                "Required value: at least one CIDR required".into()
            )]
        );
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!(["10.0.0.0/24", "10.1.0.0/24", "fd00::/64"])))),
            [("spec.cidrs".into(), "Invalid value: {\"CIDRs\":[\"10.0.0.0/24\",\"10.1.0.0/24\",\"fd00::/64\"]}: may only hold up to 2 values".into())]
        );
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!(["10.0.0.0/24", "10.1.0.0/24"])))),
            [("spec.cidrs".into(), "Invalid value: [\"10.0.0.0/24\",\"10.1.0.0/24\"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64".into())]
        );
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate(&sc(json!(["10.0.0.1/24"])))),
            [(
                "spec.cidrs[0]".into(),
                "Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length"
                    .into()
            )]
        );
        let old = sc(json!(["10.0.0.0/24"]));
        assert!(ServiceCIDRStrategy
            .validate_update(&sc(json!(["10.0.0.0/24", "fd00::/64"])), &old)
            .is_empty());
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate_update(&sc(json!(["10.1.0.0/24"])), &old)),
            [(
                "spec.cidrs[0]".into(),
                "Invalid value: \"10.1.0.0/24\": field is immutable".into()
            )]
        );
        assert_eq!(
            msgs(
                &ServiceCIDRStrategy
                    .validate_update(&sc(json!(["10.0.0.0/24", "10.2.0.0/24"])), &old)
            )[0]
            .0,
            "spec.cidrs"
        );
        let two = sc(json!(["10.0.0.0/24", "fd00::/64"]));
        assert_eq!(
            msgs(&ServiceCIDRStrategy.validate_update(&old, &two)),
            [(
                "spec.cidrs".into(),
                "Invalid value: [\"10.0.0.0/24\"]: field is immutable".into()
            )]
        );
        assert_eq!(
            (SERVICE_CIDR_COLUMNS[1].cell)(&two),
            "10.0.0.0/24,fd00::/64"
        );
        let mut created =
            json!({"metadata": {"name": "x", "generation": 1}, "spec": {"cidrs": ["10.0.0.0/24"]}});
        ServiceCIDRStrategy.prepare_for_create(&mut created);
        assert_eq!(created["status"], json!({}));
        assert!(created["metadata"].get("generation").is_none());
    }
}
