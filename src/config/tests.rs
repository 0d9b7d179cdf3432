//! Port ranges, admission plugin and authorization mode lists, service
//! CIDRs.

use super::admission::admission_plugins;
use super::authorization::parse_authorization_modes;
use super::parse::{parse_port_range, parse_service_cidr};
use super::PortRange;

use super::*;

#[test]
fn port_ranges() {
    assert_eq!(
        parse_port_range("30000-32767"),
        Ok(PortRange {
            base: 30000,
            size: 2768
        })
    );
    assert!(parse_port_range("5-1").is_err());
    assert!(parse_port_range("x").is_err());
}

#[test]
fn admission_plugin_flags() {
    let run = |e: &[&str], d: &[&str]| {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        admission_plugins(&v(e), &v(d)).map_err(|e| e.to_string())
    };
    let all = run(&[], &[]).unwrap_or_default();
    assert_eq!(all.first().map(String::as_str), Some("NamespaceLifecycle"));
    assert_eq!(all.last().map(String::as_str), Some("ResourceQuota"));
    assert_eq!(all.len(), crate::admission::DEFAULT_ON.len());
    let some = run(&["AlwaysPullImages"], &["ResourceQuota", "PodSecurity"]).unwrap_or_default();
    assert!(some.contains(&"AlwaysPullImages".to_string()));
    assert!(!some
        .iter()
        .any(|p| p == "ResourceQuota" || p == "PodSecurity"));
    assert_eq!(
        run(&["Nope"], &[]),
        Err("invalid value for --enable-admission-plugins: plugin \"Nope\" is unknown".into())
    );
    assert_eq!(
        run(&[], &["Bogus"]),
        Err("invalid value for --disable-admission-plugins: plugin \"Bogus\" is unknown".into())
    );
    assert_eq!(
        run(&["LimitRanger"], &["LimitRanger"]),
        Err("invalid value for --enable-admission-plugins: [LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped".into())
    );
}

#[test]
fn authorization_modes() {
    let modes = |v: &[&str]| {
        parse_authorization_modes(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    };
    assert_eq!(modes(&["RBAC"]).ok(), Some(vec![AuthorizationMode::Rbac]));
    assert_eq!(
        modes(&["AlwaysDeny", "RBAC"]).ok(),
        Some(vec![AuthorizationMode::AlwaysDeny, AuthorizationMode::Rbac])
    );
    assert_eq!(
        modes(&["Node", "RBAC"]).ok(),
        Some(vec![AuthorizationMode::Node, AuthorizationMode::Rbac])
    );
    assert_eq!(
        modes(&["ABAC", "RBAC"]).map_err(|e| e.to_string()).err().as_deref(),
        Some("invalid value for --authorization-mode: authorization-mode \"ABAC\" is not a valid mode (supported: AlwaysAllow, AlwaysDeny, Node, RBAC, Webhook)")
    );
    assert!(modes(&["RBAC", "RBAC"]).is_err());
    assert!(modes(&[""]).is_err());
}

#[test]
fn service_cidr_checks() {
    assert!(parse_service_cidr("10.0.0.0/24").is_ok());
    assert!(parse_service_cidr("10.0.0.1/24").is_err());
    assert!(parse_service_cidr("10.0.0.0/31").is_err());
    assert!(parse_service_cidr("nope").is_err());
}
