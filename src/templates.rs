//! The files in `templates/`, compiled in and rendered with `{{name}}`
//! placeholders. Plain substitution keeps the templates readable as the
//! YAML they produce.

pub const KUBECONFIG: &str = include_str!("../templates/kubeconfig.yaml");
/// `kapi apiservice register`: the APIService, and the Service (with
/// Endpoints, or by external name) it points at.
pub const APISERVICE: &str = include_str!("../templates/apiservice.yaml");
pub const SERVICE: &str = include_str!("../templates/service.yaml");
pub const SERVICE_EXTERNAL_NAME: &str = include_str!("../templates/service-externalname.yaml");
pub const ENDPOINTS: &str = include_str!("../templates/endpoints.yaml");

/// Replaces every `{{key}}` with its value; a placeholder left unfilled is
/// a bug in the caller, reported rather than written out.
pub fn render(template: &str, values: &[(&str, &str)]) -> Result<String, String> {
    let mut out = template.to_string();
    for (key, value) in values {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    match out.find("{{") {
        Some(at) => {
            let end = out[at..].find("}}").map_or(out.len(), |e| at + e + 2);
            Err(format!(
                "template placeholder {} was not filled",
                &out[at..end]
            ))
        }
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_and_reports_missing() {
        assert_eq!(
            super::render("a {{x}} b", &[("x", "1")]),
            Ok("a 1 b".into())
        );
        assert!(super::render("a {{y}}", &[("x", "1")]).is_err());
    }
}
