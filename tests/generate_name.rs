//! Generated names never collide into a 409 (KEP-4420, RetryGenerateName,
//! on in v1.34): 20,000 creates with `generateName` at 32 clients all
//! succeed. Five random characters give 27^5 (about 14 million) names, so
//! 20,000 of them collide about 14 times (n^2 / 2N), and the chance of no
//! collision at all is about e^-14: without the retry this test fails.
//! (The 50,000 take two minutes on a debug build; 20,000 prove the
//! same thing in under one.)

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{runtime, Kapi};
use serde_json::json;

const CREATES: usize = 20_000;
const CLIENTS: usize = 32;

#[test]
fn generated_names_are_retried_not_refused() {
    let k = Kapi::start(&[]);
    let next = Arc::new(AtomicUsize::new(0));
    let failures = runtime().block_on(async {
        let url = format!("{}/api/v1/namespaces/default/configmaps", k.url);
        let body = serde_json::to_vec(&json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"generateName": "g-"},
            "data": {"k": "v"}
        }))
        .expect("json");
        let mut tasks = Vec::new();
        for _ in 0..CLIENTS {
            let (client, url, body, next) =
                (k.admin_client(), url.clone(), body.clone(), next.clone());
            tasks.push(tokio::spawn(async move {
                let mut failures = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < CREATES {
                    let r = client
                        .post(&url)
                        .header("Content-Type", "application/json")
                        .body(body.clone())
                        .send()
                        .await;
                    match r {
                        Ok(r) if r.status() == 201 => {}
                        Ok(r) => {
                            let code = r.status();
                            failures
                                .push(format!("{code}: {}", r.text().await.unwrap_or_default()));
                        }
                        Err(e) => failures.push(e.to_string()),
                    }
                }
                failures
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("task"));
        }
        all
    });
    assert!(
        failures.is_empty(),
        "{} of {CREATES} generateName creates failed; first: {:?}",
        failures.len(),
        failures.first()
    );
}
