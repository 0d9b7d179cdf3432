//! The controllers behind the server: kube-controller-manager's, and the
//! aggregator's, started as post-start hooks.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::aggregator;
use crate::component_base::clocks::Clocks;
use crate::controlplane;
use crate::informers::Informers;
use crate::pki::Pki;
use crate::registry::Registries;
use crate::server::hooks::PostStartHooks;

use super::auth::ClientTrust;

/// kube-controller-manager's controllers, run by the instance holding its
/// lease.
pub(super) fn controller_manager(
    informers: &Informers,
    registries: &Registries,
    pki: &Pki,
    clocks: Clocks,
) -> controlplane::manager::Manager {
    let mut manager = controlplane::manager::Manager::default();
    let i = informers.clone();
    manager.add("namespace", move |stop| {
        controlplane::namespace::run(i.clone(), clocks, stop)
    });
    let i = informers.clone();
    manager.add("garbagecollector", move |stop| {
        controlplane::gc::run(i.clone(), stop)
    });
    let i = informers.clone();
    manager.add("serviceaccount", move |stop| {
        controlplane::serviceaccounts::run_service_accounts(i.clone(), stop)
    });
    let (i, ca_pem) = (informers.clone(), pki.ca.cert_pem.clone());
    manager.add("root-ca-cert-publisher", move |stop| {
        controlplane::serviceaccounts::run_root_ca_publisher(i.clone(), ca_pem.clone(), stop)
    });
    let i = informers.clone();
    manager.add("podgc", move |stop| {
        controlplane::podgc::run(i.clone(), clocks, stop)
    });
    let i = informers.clone();
    manager.add("pvc-protection", move |stop| {
        controlplane::storage_protection::run_pvc_protection(i.clone(), stop)
    });
    let i = informers.clone();
    manager.add("pv-protection", move |stop| {
        controlplane::storage_protection::run_pv_protection(i.clone(), stop)
    });
    let i = informers.clone();
    manager.add("resourcequota", move |stop| {
        controlplane::resourcequota::run(i.clone(), clocks, stop)
    });
    let r = registries.clone();
    manager.add("service-allocation-repair", move |stop| {
        controlplane::repair::run(r.clone(), stop)
    });
    manager
}

/// The aggregator's post-start hooks, named as upstream's.
pub(super) fn add_aggregator_hooks(
    hooks: &mut PostStartHooks,
    registries: &Registries,
    proxy: &Arc<aggregator::proxy::Proxy>,
    autoregister: &Arc<aggregator::autoregister::AutoRegister>,
    trust: &ClientTrust,
    background: &CancellationToken,
    informers: &Informers,
) {
    let (i, stop) = (informers.clone(), background.child_token());
    let trust = aggregator::authentication_info::data(&trust.client_ca_bundle, &trust.front_proxy);
    hooks.add(
        "start-cluster-authentication-info-controller",
        move || async move {
            tokio::spawn(aggregator::authentication_info::run(i, trust, stop));
            Ok(())
        },
    );
    let (r, i, stop, auto) = (
        registries.clone(),
        informers.clone(),
        background.child_token(),
        autoregister.clone(),
    );
    hooks.add("kube-apiserver-autoregistration", move || async move {
        // The first pass is part of starting: ready means registered.
        if let Err(e) = auto.start(&r).await {
            tracing::warn!(error = %e, "initial APIService registration");
        }
        tokio::spawn(auto.run(i, stop));
        Ok(())
    });
    let (i, stop) = (informers.clone(), background.child_token());
    hooks.add(
        "apiservice-status-local-available-controller",
        move || async move {
            tokio::spawn(aggregator::available::run_local(i, stop));
            Ok(())
        },
    );
    let (p, i, stop) = (proxy.clone(), informers.clone(), background.child_token());
    hooks.add(
        "apiservice-status-remote-available-controller",
        move || async move {
            tokio::spawn(aggregator::available::run_remote(p, i, stop));
            Ok(())
        },
    );
}
