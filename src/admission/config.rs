//! `--admission-control-config-file`: an AdmissionConfiguration naming,
//! per plugin, its configuration inline or in a file beside it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

const API_VERSIONS: &[&str] = &[
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1alpha1",
    "apiserver.k8s.io/v1alpha1",
];

/// Each plugin's configuration object, by plugin name.
#[derive(Debug, Clone, Default)]
pub struct AdmissionConfig {
    plugins: BTreeMap<String, Value>,
}

fn read_yaml(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_saphyr::from_str::<Value>(&text).map_err(|e| format!("{}: {e}", path.display()))
}

impl AdmissionConfig {
    /// Reads the file; an error names the file and what is wrong.
    pub fn load(path: &Path) -> Result<AdmissionConfig, String> {
        let doc = read_yaml(path)?;
        let api_version = doc["apiVersion"].as_str().unwrap_or("");
        // upstream's legacy form: an unversioned file holding one of these
        // keys configures both plugins that read unversioned files.
        if doc.get("kind").is_none()
            && ["imagePolicy", "podNodeSelectorPluginConfig"]
                .iter()
                .any(|k| doc.get(*k).is_some())
        {
            let plugins = ["ImagePolicyWebhook", "PodNodeSelector"]
                .iter()
                .map(|p| (p.to_string(), doc.clone()))
                .collect();
            return Ok(AdmissionConfig { plugins });
        }
        if doc["kind"] != "AdmissionConfiguration" || !API_VERSIONS.contains(&api_version) {
            return Err(format!(
                "{}: not an AdmissionConfiguration of {}",
                path.display(),
                API_VERSIONS.join(", ")
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut plugins = BTreeMap::new();
        for p in doc["plugins"].as_array().into_iter().flatten() {
            let Some(name) = p["name"].as_str().filter(|n| !n.is_empty()) else {
                return Err(format!("{}: a plugin entry has no name", path.display()));
            };
            let config = match (
                p.get("configuration").filter(|c| !c.is_null()),
                p["path"].as_str(),
            ) {
                (Some(inline), _) => inline.clone(),
                (None, Some(file)) if !file.is_empty() => read_yaml(&dir.join(file))?,
                _ => continue,
            };
            plugins.insert(name.to_string(), config);
        }
        Ok(AdmissionConfig { plugins })
    }

    pub fn plugin(&self, name: &str) -> Option<&Value> {
        self.plugins.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_file_configurations() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("erl.yaml"),
            "apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n- type: Server\n  qps: 1\n  burst: 1\n",
        )
        .expect("write");
        let main = dir.path().join("admission.yaml");
        std::fs::write(
            &main,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  path: erl.yaml\n- name: Other\n  configuration:\n    a: 1\n",
        )
        .expect("write");
        let c = AdmissionConfig::load(&main).expect("load");
        assert_eq!(
            c.plugin("EventRateLimit").expect("erl")["limits"][0]["type"],
            "Server"
        );
        assert_eq!(c.plugin("Other").expect("other")["a"], 1);
        std::fs::write(&main, "kind: Something\n").expect("write");
        assert!(AdmissionConfig::load(&main).is_err());
    }
}
