//! Priority and fairness configuration at run time: upstream's config
//! producer (the bootstrap FlowSchemas and PriorityLevelConfigurations kept
//! in storage) and config consumer (the stored configuration followed into
//! the server's [`Apf`] filter, and each FlowSchema's `Dangling` condition).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::registry::flowcontrol::bootstrap;
use crate::server::flowcontrol::Apf;

/// Keeps the bootstrap objects (upstream's config producer): mandatory ones
/// exist and, while they carry the autoupdate annotation, have upstream's
/// spec; suggested ones are created when missing and kept the same way.
pub async fn ensure_configuration(registries: &crate::registry::Registries) -> Result<(), String> {
    use crate::registry::WriteOptions;
    for (plural, objects) in [
        ("prioritylevelconfigurations", bootstrap::mandatory()),
        ("flowschemas", bootstrap::mandatory()),
        ("prioritylevelconfigurations", bootstrap::suggested()),
        ("flowschemas", bootstrap::suggested()),
    ] {
        let reg = registries
            .get("flowcontrol.apiserver.k8s.io", "v1", plural)
            .ok_or_else(|| format!("{plural} are not served"))?;
        let kind = if plural == "flowschemas" {
            "FlowSchema"
        } else {
            "PriorityLevelConfiguration"
        };
        for want in objects.into_iter().filter(|o| o["kind"] == kind) {
            let name = want["metadata"]["name"].as_str().unwrap_or("").to_string();
            let current = match reg.get_object("", &name, None).await {
                Ok(bytes) => serde_json::from_slice::<Value>(&bytes).ok(),
                Err(e) if e.code == 404 => None,
                Err(e) => return Err(format!("reading {plural} {name}: {e}")),
            };
            match current {
                None => match reg.create("", want, &WriteOptions::default()).await {
                    Ok(_) => {}
                    Err(e) if e.code == 409 => {}
                    Err(e) => return Err(format!("creating {plural} {name}: {e}")),
                },
                Some(mut cur) => {
                    let auto = cur["metadata"]["annotations"][bootstrap::AUTOUPDATE] == "true";
                    if !auto {
                        continue;
                    }
                    // A spec already as wanted (once defaulted, as stored)
                    // is left alone without going through the update path.
                    let mut defaulted = want.clone();
                    if let Some(strategy) =
                        crate::registry::strategy::for_kind("flowcontrol.apiserver.k8s.io", kind)
                    {
                        strategy.default(&mut defaulted);
                    }
                    if cur["spec"] == defaulted["spec"] {
                        continue;
                    }
                    // Otherwise the update path decides; an unchanged
                    // object is not written again.
                    tracing::debug!(%plural, %name, "bootstrap APF object: spec differs");
                    cur["spec"] = want["spec"].clone();
                    match reg
                        .update("", &name, cur, None, &WriteOptions::default())
                        .await
                    {
                        Ok(_) => {}
                        Err(e) if e.code == 409 || e.code == 404 => {}
                        Err(e) => return Err(format!("updating {plural} {name}: {e}")),
                    }
                }
            }
        }
    }
    Ok(())
}

/// The field manager of the status kapi writes, as upstream's.
const FIELD_MANAGER: &str = "api-priority-and-fairness-config-consumer-v1";

/// Keeps each FlowSchema's `Dangling` condition: whether the priority level
/// it names exists (`kubectl get flowschemas` shows it as MISSINGPL).
async fn sync_dangling(
    registries: &crate::registry::Registries,
    levels: &[Value],
    schemas: &[Value],
) {
    use crate::registry::WriteOptions;
    let Some(reg) = registries.get("flowcontrol.apiserver.k8s.io", "v1", "flowschemas") else {
        return;
    };
    let mandatory: Vec<Value> = bootstrap::mandatory();
    let exists = |name: &str| {
        levels.iter().any(|l| l["metadata"]["name"] == name)
            || mandatory
                .iter()
                .any(|m| m["kind"] == "PriorityLevelConfiguration" && m["metadata"]["name"] == name)
    };
    for fs in schemas {
        let level = fs["spec"]["priorityLevelConfiguration"]["name"]
            .as_str()
            .unwrap_or("");
        let dangling = !exists(level);
        let quoted = crate::api::go_quote(level);
        let (status, reason, message) = if dangling {
            ("True", "NotFound", format!("This FlowSchema references the PriorityLevelConfiguration object named {quoted} but there is no such object"))
        } else {
            ("False", "Found", format!("This FlowSchema references the PriorityLevelConfiguration object named {quoted} and it exists"))
        };
        let conditions = fs["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let current = conditions.iter().find(|c| c["type"] == "Dangling");
        if current.is_some_and(|c| {
            c["status"] == status && c["reason"] == reason && c["message"] == message.as_str()
        }) {
            continue;
        }
        let mut updated = fs.clone();
        let mut others: Vec<Value> = conditions
            .into_iter()
            .filter(|c| c["type"] != "Dangling")
            .collect();
        others.push(serde_json::json!({
            "type": "Dangling",
            "status": status,
            "lastTransitionTime": chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            "reason": reason,
            "message": message,
        }));
        updated["status"] = serde_json::json!({"conditions": others});
        let name = fs["metadata"]["name"].as_str().unwrap_or("").to_string();
        let opts = WriteOptions {
            field_manager: Some(FIELD_MANAGER.into()),
            ..WriteOptions::default()
        };
        if let Err(e) = reg.update("", &name, updated, Some("status"), &opts).await {
            tracing::debug!(flowschema = %name, error = %e, "updating the Dangling condition");
        }
    }
}

/// Follows the stored configuration into `apf`, and keeps the bootstrap
/// objects in place (deleted mandatory ones come back at once; the rest
/// every minute, as upstream's producer).
pub async fn run(
    apf: Arc<Apf>,
    registries: crate::registry::Registries,
    informers: crate::informers::Informers,
    stop: tokio_util::sync::CancellationToken,
) {
    let group = "flowcontrol.apiserver.k8s.io";
    let (Some(levels), Some(schemas)) = (
        informers.get(group, "v1", "prioritylevelconfigurations"),
        informers.get(group, "v1", "flowschemas"),
    ) else {
        return;
    };
    let wake = crate::informers::Wakeup::on(&[&levels, &schemas]);
    if !(levels.wait_synced(&stop).await && schemas.wait_synced(&stop).await) {
        return;
    }
    loop {
        let l: Vec<Value> = levels.list().iter().map(|v| (**v).clone()).collect();
        let s: Vec<Value> = schemas.list().iter().map(|v| (**v).clone()).collect();
        apf.configure(&l, &s);
        sync_dangling(&registries, &l, &s).await;
        // On every change (a deleted mandatory object comes back at once, a
        // spec changed under autoupdate is put back) and every minute.
        if let Err(e) = ensure_configuration(&registries).await {
            tracing::debug!(error = %e, "priority and fairness configuration");
        }
        tokio::select! {
            _ = wake.changed() => {}
            _ = tokio::time::sleep(Duration::from_secs(60)) => {}
            _ = stop.cancelled() => return,
        }
    }
}
