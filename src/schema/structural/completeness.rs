//! Completeness (upstream's validateStructuralCompleteness): whatever a
//! junctor (allOf, anyOf, oneOf, not) specifies must be in the structure
//! too.

use serde_json::Value;

use crate::api::validation::FieldError;
use crate::schema::{child, get, index, items, key, list, properties, property};

pub(super) fn completeness(s: &Value, p: &str, errs: &mut Vec<FieldError>) {
    value_completeness(s, Some(s), p, p, errs);
}

fn value_completeness(
    v: &Value,
    s: Option<&Value>,
    sp: &str,
    vp: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = s else {
        errs.push(FieldError::required(
            sp,
            format!("because it is defined in {vp}"),
        ));
        return;
    };
    nested_completeness(get(v, "not"), Some(s), sp, &child(vp, "not"), errs);
    for j in ["allOf", "anyOf", "oneOf"] {
        for (i, x) in list(v, j).iter().enumerate() {
            nested_completeness(Some(x), Some(s), sp, &index(&child(vp, j), i), errs);
        }
    }
}

fn nested_completeness(
    v: Option<&Value>,
    s: Option<&Value>,
    sp: &str,
    vp: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(v) = v else {
        return;
    };
    let Some(s) = s else {
        errs.push(FieldError::required(
            sp,
            format!("because it is defined in {vp}"),
        ));
        return;
    };
    value_completeness(v, Some(s), sp, vp, errs);
    nested_completeness(
        items(v),
        items(s),
        &child(sp, "items"),
        &child(vp, "items"),
        errs,
    );
    if let Some(props) = properties(v) {
        for (k, vf) in props {
            let sp_k = key(&child(sp, "properties"), k);
            let vp_k = key(&child(vp, "properties"), k);
            match property(s, k) {
                Some(sf) => nested_completeness(Some(vf), Some(sf), &sp_k, &vp_k, errs),
                None => errs.push(FieldError::required(
                    sp_k,
                    format!("because it is defined in {vp_k}"),
                )),
            }
        }
    }
}
