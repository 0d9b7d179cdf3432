//! kapi: the Kubernetes API server as a library, with the `kapi` binary in
//! `cmd/` as a thin CLI over it. The map of modules follows upstream's
//! package names; see ARCHITECTURE.md in the design folder.

pub mod admission;
pub mod aggregator;
pub mod api;
pub mod apiextensions;
pub mod app;
pub mod auth;
pub mod authentication;
pub mod authorization;
pub mod cel;
pub mod clientcmd;
pub mod component_base;
pub mod config;
pub mod controlplane;
pub mod endpoints;
#[doc(hidden)]
pub mod fuzzing;
pub mod informers;
pub mod logs;
pub mod pki;
pub mod registry;
pub mod routes;
pub mod schema;
pub mod server;
pub mod storage;
pub mod templates;
#[cfg(feature = "testing")]
pub mod testing;
pub mod trace;
pub mod version;
pub mod webhook;

/// The one rustls crypto provider kapi uses (aws-lc-rs). Dependencies pull
/// in ring as well, so rustls cannot pick a default by itself; kapi names
/// its provider explicitly and installs it as the process default for
/// libraries that ask rustls for one.
pub fn crypto_provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    static PROVIDER: std::sync::OnceLock<std::sync::Arc<rustls::crypto::CryptoProvider>> =
        std::sync::OnceLock::new();
    PROVIDER
        .get_or_init(|| {
            let p = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
            // Fails only when a default is already installed, which is fine.
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
            p
        })
        .clone()
}
