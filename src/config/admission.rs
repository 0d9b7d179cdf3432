//! `--enable-admission-plugins` and `--disable-admission-plugins`: the
//! plugins that run, as upstream's admission options resolve them.

use super::complete::FlagError;

/// upstream's admission options: the names must be known and not both
/// enabled and disabled; the default-on plugins minus the disabled ones,
/// plus the enabled ones, in upstream's order.
pub(super) fn admission_plugins(
    enable: &[String],
    disable: &[String],
) -> Result<Vec<String>, FlagError> {
    let clean = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let (enable, disable) = (clean(enable), clean(disable));
    let known = |n: &str| crate::admission::ORDER.contains(&n);
    for (flag, names) in [
        ("enable-admission-plugins", &enable),
        ("disable-admission-plugins", &disable),
    ] {
        if let Some(n) = names.iter().find(|n| !known(n)) {
            return Err(FlagError {
                flag,
                message: format!("plugin {} is unknown", crate::api::go_quote(n)),
            });
        }
    }
    if let Some((n, why)) = crate::admission::NOT_IMPLEMENTED
        .iter()
        .find(|(n, _)| enable.iter().any(|e| e == n))
    {
        return Err(FlagError {
            flag: "enable-admission-plugins",
            message: format!(
                "plugin {} is not supported by kapi: {why}",
                crate::api::go_quote(n)
            ),
        });
    }
    let mut both: Vec<&String> = enable.iter().filter(|n| disable.contains(n)).collect();
    if !both.is_empty() {
        both.sort();
        both.dedup();
        let list: Vec<&str> = both.iter().map(|s| s.as_str()).collect();
        return Err(FlagError {
            flag: "enable-admission-plugins",
            message: format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                list.join(" ")
            ),
        });
    }
    let on = |n: &str| {
        enable.iter().any(|e| e == n)
            || (crate::admission::DEFAULT_ON.contains(&n) && !disable.iter().any(|d| d == n))
    };
    let out: Vec<String> = crate::admission::ORDER
        .iter()
        .filter(|n| on(n))
        .map(|n| n.to_string())
        .collect();
    Ok(out)
}
