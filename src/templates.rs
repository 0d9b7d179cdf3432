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
/// `kapi scaffold crd`: a CustomResourceDefinition with a schema, a status
/// subresource, printer columns and a CEL rule to start from.
pub const CRD: &str = include_str!("../templates/crd.yaml");

/// Names of a custom resource, checked as the CRD's validation would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrdNames {
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub version: String,
    pub namespaced: bool,
}

impl CrdNames {
    /// Names from a group and kind; the plural defaults to upstream's
    /// naive pluralisation of the lowercased kind (`Policy` -> `policies`).
    pub fn new(
        group: &str,
        kind: &str,
        plural: Option<&str>,
        version: &str,
        namespaced: bool,
    ) -> Result<CrdNames, String> {
        let dns_label = |s: &str| {
            !s.is_empty()
                && s.len() <= 63
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !s.starts_with('-')
                && !s.ends_with('-')
        };
        if !group.contains('.') || !group.split('.').all(dns_label) {
            return Err(format!(
                "--group {group:?}: should be a domain with at least one dot, like example.com"
            ));
        }
        let kind_ok = kind.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && kind.chars().all(|c| c.is_ascii_alphanumeric());
        if !kind_ok {
            return Err(format!(
                "--kind {kind:?}: should be CamelCase letters and digits, like Widget"
            ));
        }
        let singular = kind.to_ascii_lowercase();
        let plural = match plural {
            Some(p) => p.to_string(),
            None => pluralize(&singular),
        };
        if !dns_label(&plural) {
            return Err(format!(
                "--plural {plural:?}: should be a lowercase DNS label"
            ));
        }
        let version_ok = version.starts_with('v')
            && dns_label(version)
            && version[1..].starts_with(|c: char| c.is_ascii_digit());
        if !version_ok {
            return Err(format!(
                "--version {version:?}: should look like v1, v1beta1 or v2alpha1"
            ));
        }
        Ok(CrdNames {
            group: group.into(),
            kind: kind.into(),
            plural,
            singular,
            version: version.into(),
            namespaced,
        })
    }

    pub fn render(&self) -> Result<String, String> {
        render(
            CRD,
            &[
                ("group", &self.group),
                ("kind", &self.kind),
                ("plural", &self.plural),
                ("singular", &self.singular),
                ("version", &self.version),
                (
                    "scope",
                    if self.namespaced {
                        "Namespaced"
                    } else {
                        "Cluster"
                    },
                ),
            ],
        )
    }
}

/// upstream's (kubebuilder's) simple English plural of a lowercase word.
fn pluralize(word: &str) -> String {
    if let Some(stem) = word.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            return format!("{stem}ies");
        }
    }
    if word.ends_with('s') || word.ends_with("sh") || word.ends_with("ch") || word.ends_with('x') {
        return format!("{word}es");
    }
    format!("{word}s")
}

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

    #[test]
    fn crd_names() {
        let n = super::CrdNames::new("example.com", "Policy", None, "v1", true).unwrap();
        assert_eq!(n.plural, "policies");
        let n = super::CrdNames::new("example.com", "Box", None, "v1", true).unwrap();
        assert_eq!(n.plural, "boxes");
        let n = super::CrdNames::new("example.com", "Key", None, "v1", true).unwrap();
        assert_eq!(n.plural, "keys");
        assert!(super::CrdNames::new("example", "Widget", None, "v1", true).is_err());
        assert!(super::CrdNames::new("example.com", "widget", None, "v1", true).is_err());
        assert!(super::CrdNames::new("example.com", "Widget", None, "1", true).is_err());
    }
}
