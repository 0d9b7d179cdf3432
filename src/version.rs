//! The one place that says which Kubernetes kapi is. Moving kapi to a newer
//! Kubernetes means changing these constants and the `k8s-openapi` feature.

use serde::Serialize;

/// Kubernetes minor release whose API kapi serves (matches k8s-openapi's `v1_34`).
pub const KUBERNETES_MAJOR: &str = "1";
pub const KUBERNETES_MINOR: &str = "34";
/// Reported as `gitVersion`; the build metadata says it is kapi, as k3s does.
pub const KUBERNETES_GIT_VERSION: &str = concat!("v1.34.0+kapi.", env!("CARGO_PKG_VERSION"));

/// The body of `/version`, shaped as upstream's `version.Info`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    pub major: &'static str,
    pub minor: &'static str,
    pub git_version: &'static str,
    pub git_commit: &'static str,
    pub git_tree_state: &'static str,
    pub build_date: &'static str,
    pub go_version: &'static str,
    pub compiler: &'static str,
    pub platform: String,
}

pub fn info() -> Info {
    Info {
        major: KUBERNETES_MAJOR,
        minor: KUBERNETES_MINOR,
        git_version: KUBERNETES_GIT_VERSION,
        git_commit: option_env!("KAPI_GIT_COMMIT").unwrap_or(""),
        git_tree_state: "",
        build_date: option_env!("KAPI_BUILD_DATE").unwrap_or("1970-01-01T00:00:00Z"),
        // Clients print this; it names the toolchain honestly.
        go_version: concat!("rust (kapi ", env!("CARGO_PKG_VERSION"), ")"),
        compiler: "rustc",
        platform: format!("{}/{}", std::env::consts::OS, go_arch()),
    }
}

/// Go's GOARCH spelling, which clients expect in `platform`.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}
