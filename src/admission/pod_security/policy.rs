//! The policy a namespace asks for: the Pod Security Standards levels and
//! versions, the `pod-security.kubernetes.io/*` labels that choose them per
//! mode, and the defaults (upstream's `api` package: `PolicyToEvaluate`).
//! Apart from the checks because it says which checks run, not what they
//! check.

use std::fmt;

use serde_json::{Map, Value};

use crate::registry::validation::FieldError;

pub const ENFORCE_LEVEL_LABEL: &str = "pod-security.kubernetes.io/enforce";

pub const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";

pub const AUDIT_LEVEL_LABEL: &str = "pod-security.kubernetes.io/audit";

pub const AUDIT_VERSION_LABEL: &str = "pod-security.kubernetes.io/audit-version";

pub const WARN_LEVEL_LABEL: &str = "pod-security.kubernetes.io/warn";

pub const WARN_VERSION_LABEL: &str = "pod-security.kubernetes.io/warn-version";

/// The newest policy version any check has (`hostProbesAndHostLifecycle`,
/// 1.34): `latest` and newer versions evaluate as this one.
const MAX_MINOR: u32 = 34;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    pub fn parse(s: &str) -> Result<Level, String> {
        match s {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err("must be one of privileged, baseline, restricted".into()),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// A policy version: `None` is `latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Version(pub Option<u32>);

impl Version {
    pub const LATEST: Version = Version(None);

    pub fn parse(s: &str) -> Result<Version, String> {
        if s == "latest" {
            return Ok(Version::LATEST);
        }
        let err = || r#"must be "latest" or "v1.x""#.to_string();
        let minor = s.strip_prefix("v1.").ok_or_else(err)?;
        let valid = !minor.is_empty()
            && minor.bytes().all(|b| b.is_ascii_digit())
            && (minor == "0" || !minor.starts_with('0'));
        if !valid {
            return Err(err());
        }
        minor.parse().map(|m| Version(Some(m))).map_err(|_| err())
    }

    /// The minor version the checks are evaluated at.
    pub(super) fn minor(self) -> u32 {
        self.0.map_or(MAX_MINOR, |m| m.min(MAX_MINOR))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("latest"),
            Some(m) => write!(f, "v1.{m}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.as_str(), self.version)
    }
}

const PRIVILEGED_LATEST: LevelVersion = LevelVersion {
    level: Level::Privileged,
    version: Version::LATEST,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Policy {
    pub const DEFAULT: Policy = Policy {
        enforce: PRIVILEGED_LATEST,
        audit: PRIVILEGED_LATEST,
        warn: PRIVILEGED_LATEST,
    };

    pub(super) fn fully_privileged(&self) -> bool {
        [self.enforce, self.audit, self.warn]
            .iter()
            .all(|lv| lv.level == Level::Privileged)
    }
}

/// upstream's `api.PolicyToEvaluate`: the namespace's labels over the
/// defaults; a bad level enforces `restricted` (audit and warn fail open),
/// a bad version means `latest`. Also returns the label errors.
pub fn policy_to_evaluate(labels: &Map<String, Value>) -> (Policy, Vec<FieldError>) {
    let mut p = Policy::DEFAULT;
    let mut errs = Vec::new();
    let mut err = |label: &str, value: &str, e: String| {
        errs.push(FieldError::invalid(
            format!("metadata.labels[{label}]"),
            Value::String(value.to_string()),
            e,
        ))
    };
    let get = |k: &str| labels.get(k).map(|v| v.as_str().unwrap_or(""));
    let mut has_enforce_level = false;
    if let Some(l) = get(ENFORCE_LEVEL_LABEL) {
        p.enforce.level = Level::parse(l).unwrap_or_else(|e| {
            err(ENFORCE_LEVEL_LABEL, l, e);
            Level::Restricted
        });
        has_enforce_level = Level::parse(l).is_ok();
    }
    if let Some(v) = get(ENFORCE_VERSION_LABEL) {
        p.enforce.version = Version::parse(v).unwrap_or_else(|e| {
            err(ENFORCE_VERSION_LABEL, v, e);
            Version::LATEST
        });
    }
    if let Some(l) = get(AUDIT_LEVEL_LABEL) {
        p.audit.level = Level::parse(l).unwrap_or_else(|e| {
            err(AUDIT_LEVEL_LABEL, l, e);
            Level::Privileged
        });
    }
    if let Some(v) = get(AUDIT_VERSION_LABEL) {
        p.audit.version = Version::parse(v).unwrap_or_else(|e| {
            err(AUDIT_VERSION_LABEL, v, e);
            Version::LATEST
        });
    }
    if let Some(l) = get(WARN_LEVEL_LABEL) {
        p.warn.level = Level::parse(l).unwrap_or_else(|e| {
            err(WARN_LEVEL_LABEL, l, e);
            Level::Privileged
        });
    }
    if let Some(v) = get(WARN_VERSION_LABEL) {
        p.warn.version = Version::parse(v).unwrap_or_else(|e| {
            err(WARN_VERSION_LABEL, v, e);
            Version::LATEST
        });
    }
    // warn defaults to a stricter (valid) enforce level, and then to its
    // version unless one is given (kubernetes#113491, 1.26).
    if get(WARN_LEVEL_LABEL).is_none() && has_enforce_level && p.enforce.level > p.warn.level {
        p.warn.level = p.enforce.level;
        if get(WARN_VERSION_LABEL).is_none() {
            p.warn.version = p.enforce.version;
        }
    }
    (p, errs)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn labels_parse_like_upstream() {
        let labels = json!({
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "v1.30",
            "pod-security.kubernetes.io/warn": "baseline",
        });
        let (p, errs) = policy_to_evaluate(labels.as_object().unwrap_or(&Map::new()));
        assert!(errs.is_empty());
        assert_eq!(p.enforce.to_string(), "restricted:v1.30");
        assert_eq!(p.warn.to_string(), "baseline:latest");
        assert_eq!(p.audit.to_string(), "privileged:latest");

        // warn follows a stricter enforce when not given.
        let labels = json!({
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/enforce-version": "v1.29",
        });
        let (p, _) = policy_to_evaluate(labels.as_object().unwrap_or(&Map::new()));
        assert_eq!(p.warn.to_string(), "baseline:v1.29");

        let labels = json!({
            "pod-security.kubernetes.io/enforce": "strict",
            "pod-security.kubernetes.io/warn": "nope",
            "pod-security.kubernetes.io/audit-version": "1.2",
        });
        let (p, errs) = policy_to_evaluate(labels.as_object().unwrap_or(&Map::new()));
        assert_eq!(p.enforce.level, Level::Restricted, "enforce fails closed");
        assert_eq!(p.warn.level, Level::Privileged, "warn fails open");
        let msgs: Vec<String> = errs
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message()))
            .collect();
        assert_eq!(
            msgs,
            [
                "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted",
                "metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: \"1.2\": must be \"latest\" or \"v1.x\"",
                "metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: \"nope\": must be one of privileged, baseline, restricted",
            ]
        );
        assert!(Version::parse("v1.01").is_err());
        assert_eq!(Version::parse("v1.0"), Ok(Version(Some(0))));
    }
}
