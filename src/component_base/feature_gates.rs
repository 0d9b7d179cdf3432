//! `--feature-gates`, checked as kube-apiserver v1.34 checks it: every gate
//! named must be one of v1.34's (`feature-gates-v1.34.tsv`: name, default,
//! stage, locked), its value a bool, and a gate locked to its default may
//! not be set otherwise. The gates in [`TOGGLED`] change what kapi does;
//! any other gate set away from its default is accepted with a warning
//! that kapi keeps v1.34's default behaviour. Like upstream's
//! `DefaultFeatureGate`, the gates are one per process.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The gates whose both settings kapi implements.
pub const TOGGLED: &[&str] = &[
    // sendInitialEvents on watches (off: refused as upstream refuses it).
    "WatchList",
    // pods/resize (off: not served, not in discovery).
    "InPlacePodVerticalScaling",
    // --requestheader-uid-headers (off: refused at start).
    "RemoteRequestHeaderUID",
];

/// Gate settings: those given, over v1.34's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates {
    set: BTreeMap<&'static str, bool>,
}

impl FeatureGates {
    /// As component-base decides: a gate's own setting, else `AllAlpha` or
    /// `AllBeta` for gates of that stage, else the default.
    pub fn enabled(&self, name: &str) -> bool {
        let Some(gate) = lookup(name) else {
            return false;
        };
        if let Some(v) = self.set.get(gate.name) {
            return *v;
        }
        let all = match gate.stage {
            "ALPHA" => self.set.get("AllAlpha"),
            "BETA" => self.set.get("AllBeta"),
            _ => None,
        };
        all.copied().unwrap_or(gate.default)
    }
}

static PROCESS: OnceLock<FeatureGates> = OnceLock::new();

/// Sets this process's gates; the first call wins, as flags are parsed once.
pub fn install(gates: FeatureGates) {
    let _ = PROCESS.set(gates);
}

/// Whether `name` is on in this process (v1.34's default unless installed).
pub fn enabled(name: &str) -> bool {
    match PROCESS.get() {
        Some(g) => g.enabled(name),
        None => lookup(name).is_some_and(|g| g.default),
    }
}

/// One gate as v1.34 has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    pub name: &'static str,
    pub default: bool,
    /// ALPHA, BETA, GA or DEPRECATED.
    pub stage: &'static str,
    pub locked: bool,
}

const TABLE: &str = include_str!("feature-gates-v1.34.tsv");

/// v1.34's gates (the table is checked by a unit test).
pub fn gates() -> &'static [Gate] {
    static GATES: OnceLock<Vec<Gate>> = OnceLock::new();
    GATES.get_or_init(|| {
        TABLE
            .lines()
            .skip(1)
            .filter_map(|l| {
                let f: Vec<&'static str> = l.split('\t').collect();
                let [name, default, stage, locked] = f.as_slice() else {
                    return None;
                };
                Some(Gate {
                    name,
                    default: *default == "true",
                    stage,
                    locked: *locked == "true",
                })
            })
            .collect()
    })
}

fn lookup(name: &str) -> Option<&'static Gate> {
    gates().iter().find(|g| g.name == name)
}

/// Checks the `--feature-gates` values given (each a comma list of
/// `[kube:]Name=bool`), as component-base's registry and feature gate do.
/// Returns the gates and upstream's warnings for GA and deprecated gates
/// (with kapi's for gates it does not toggle), or the error
/// kube-apiserver stops with.
pub fn check(values: &[String]) -> Result<(FeatureGates, Vec<String>), String> {
    let items: Vec<&str> = values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    // The flag is a colon-separated multimap: `kube:` or no prefix.
    let mut prefixed = false;
    let mut plain = false;
    let mut settings = Vec::new();
    for item in items {
        let (component, setting) = match (item.find(':'), item.find('=')) {
            (Some(c), e) if e.is_none_or(|e| c < e) => (&item[..c], &item[c + 1..]),
            _ => ("", item),
        };
        match component {
            "" => plain = true,
            "kube" => prefixed = true,
            other => return Err(format!("component not registered: {other}")),
        }
        settings.push(setting);
    }
    if prefixed && plain {
        return Err("set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use".into());
    }
    let mut parsed = Vec::new();
    for s in settings {
        let Some((k, v)) = s.split_once('=') else {
            return Err(format!("missing bool value for {}", s.trim()));
        };
        let (k, v) = (k.trim(), v.trim());
        let Some(value) = super::parse_bool(v) else {
            return Err(format!(
                "invalid value of {k}={v}, err: strconv.ParseBool: parsing \"{v}\": invalid syntax"
            ));
        };
        parsed.push((k, value));
    }
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut gates = FeatureGates::default();
    for (k, v) in parsed {
        let Some(gate) = lookup(k) else {
            errors.push(format!("unrecognized feature gate: {k}"));
            break;
        };
        gates.set.insert(gate.name, v);
        if v != gate.default && !TOGGLED.contains(&gate.name) && !gate.name.starts_with("All") {
            warnings.push(format!(
                "feature gate {k}={v}: kapi does not implement this gate and keeps v1.34's default ({})",
                gate.default
            ));
        }
        if gate.locked && gate.default != v {
            errors.push(format!(
                "cannot set feature gate {k} to {v}, feature is locked to {}",
                gate.default
            ));
            continue;
        }
        match gate.stage {
            "DEPRECATED" => warnings.push(format!(
                "Setting deprecated feature gate {k}={v}. It will be removed in a future release."
            )),
            "GA" => warnings.push(format!(
                "Setting GA feature gate {k}={v}. It will be removed in a future release."
            )),
            _ => {}
        }
    }
    match errors.len() {
        0 => Ok((gates, warnings)),
        1 => Err(errors.remove(0)),
        // utilerrors' aggregate of several.
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_whole() {
        let g = gates();
        assert_eq!(g.len(), TABLE.lines().count() - 1, "every row parses");
        assert!(g
            .iter()
            .all(|g| ["ALPHA", "BETA", "GA", "DEPRECATED"].contains(&g.stage)));
        let mut names: Vec<&str> = g.iter().map(|g| g.name).collect();
        names.dedup();
        assert_eq!(names.len(), g.len(), "no gate twice");
        assert!(lookup("AllAlpha").is_some() && lookup("AllBeta").is_some());
    }

    #[test]
    fn values_are_checked_as_upstream_checks_them() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (all, warnings) = check(&s(&["AllAlpha=true,AllBeta=false"])).expect("valid");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(
            !all.enabled("WatchList"),
            "a beta gate, under AllBeta=false"
        );
        assert!(
            all.enabled("StorageVersionAPI"),
            "an alpha gate, under AllAlpha"
        );
        let (own, _) = check(&s(&["AllBeta=false,WatchList=true"])).expect("valid");
        assert!(own.enabled("WatchList"), "a gate's own setting wins");
        assert!(!own.enabled("InPlacePodVerticalScaling"));
        assert!(FeatureGates::default().enabled("InPlacePodVerticalScaling"));
        assert_eq!(
            check(&s(&["kube:AllAlpha=true", "kube:AllBeta=false"])).map(|c| c.1),
            Ok(vec![])
        );
        assert_eq!(
            check(&s(&["StorageVersionAPI=true"])).map(|c| c.1),
            Ok(vec!["feature gate StorageVersionAPI=true: kapi does not implement this gate and keeps v1.34's default (false)".to_string()])
        );
        assert_eq!(
            check(&s(&["Foo=true"])),
            Err("unrecognized feature gate: Foo".into())
        );
        assert_eq!(
            check(&s(&["AllAlpha"])),
            Err("missing bool value for AllAlpha".into())
        );
        assert_eq!(
            check(&s(&["AllAlpha=maybe"])),
            Err("invalid value of AllAlpha=maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax".into())
        );
        assert_eq!(
            check(&s(&["kube:AllAlpha=true,AllBeta=true"])),
            Err("set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use".into())
        );
        assert_eq!(
            check(&s(&["kubelet:AllAlpha=true"])),
            Err("component not registered: kubelet".into())
        );
        let locked = gates().iter().find(|g| g.locked).expect("a locked gate");
        assert_eq!(
            check(&[format!("{}={}", locked.name, !locked.default)]),
            Err(format!(
                "cannot set feature gate {} to {}, feature is locked to {}",
                locked.name, !locked.default, locked.default
            ))
        );
        let ga = gates()
            .iter()
            .find(|g| g.stage == "GA" && !g.locked)
            .expect("a GA gate");
        assert_eq!(
            check(&[format!("{}={}", ga.name, ga.default)]).map(|c| c.1),
            Ok(vec![format!(
                "Setting GA feature gate {}={}. It will be removed in a future release.",
                ga.name, ga.default
            )])
        );
    }
}
