//! A kube-runtime controller tested against kapi, in-process: the server
//! starts with the controller's CRD installed, the controller reconciles a
//! `Widget` by writing a ConfigMap it owns, and the test waits for it.
//!
//! Run: `cargo run --example controller --features testing`
//! (its test runs in `./scripts/test`).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, CustomResource, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The custom resource the controller owns.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Widget", namespaced)]
pub struct WidgetSpec {
    pub colour: String,
}

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct ReconcileError(#[from] kube::Error);

/// Makes `<widget>-colour`, a ConfigMap owned by the Widget, hold its colour.
async fn reconcile(widget: Arc<Widget>, client: Arc<Client>) -> Result<Action, ReconcileError> {
    let ns = widget.namespace().unwrap_or_else(|| "default".into());
    let owner = widget.controller_owner_ref(&()).into_iter().collect();
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{}-colour", widget.name_any())),
            owner_references: Some(owner),
            ..Default::default()
        },
        data: Some([("colour".to_string(), widget.spec.colour.clone())].into()),
        ..Default::default()
    };
    let api: Api<ConfigMap> = Api::namespaced((*client).clone(), &ns);
    api.patch(
        cm.metadata.name.as_deref().unwrap_or_default(),
        &kube::api::PatchParams::apply("widget-controller").force(),
        &kube::api::Patch::Apply(&cm),
    )
    .await?;
    Ok(Action::await_change())
}

fn error_policy(_: Arc<Widget>, _: &ReconcileError, _: Arc<Client>) -> Action {
    Action::requeue(Duration::from_millis(200))
}

/// Runs the controller until `stop` resolves.
pub async fn run_controller(
    client: Client,
    stop: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let widgets: Api<Widget> = Api::all(client.clone());
    let configmaps: Api<ConfigMap> = Api::all(client.clone());
    Controller::new(widgets, watcher::Config::default())
        .owns(configmaps, watcher::Config::default())
        .graceful_shutdown_on(stop)
        .run(reconcile, error_policy, Arc::new(client))
        .for_each(|_| async {})
        .await;
}

/// Starts kapi with the Widget CRD, runs the controller, creates a Widget
/// and waits for its ConfigMap: the whole test, as a test suite would run it.
pub async fn demo() -> Result<String, Box<dyn std::error::Error>> {
    let server = kapi::testing::Server::builder()
        .crd_for::<Widget>()
        .start()
        .await?;
    let client = server.client();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let controller = tokio::spawn(run_controller(client.clone(), async move {
        let _ = stop_rx.await;
    }));
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
    let w = Widget::new(
        "w",
        WidgetSpec {
            colour: "teal".into(),
        },
    );
    widgets.create(&PostParams::default(), &w).await?;
    let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut colour = None;
    for _ in 0..200 {
        if let Some(cm) = configmaps.get_opt("w-colour").await? {
            colour = cm.data.and_then(|d| d.get("colour").cloned());
            let owned = cm
                .metadata
                .owner_references
                .unwrap_or_default()
                .iter()
                .any(|o| o.kind == Widget::kind(&()) && o.name == "w");
            if colour.is_some() && owned {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let _ = stop_tx.send(());
    let _ = controller.await;
    server.shutdown().await;
    colour.ok_or_else(|| "the controller never wrote the ConfigMap".into())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let colour = demo().await?;
    println!("the controller reconciled the Widget: colour {colour}");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_controller_reconciles_a_widget_against_kapi() {
        let colour = super::demo().await.expect("demo");
        assert_eq!(colour, "teal");
    }
}
