//! Raw HTTPS requests with a JSON body, answered as (status, JSON body).

use serde_json::Value;

pub async fn send(
    c: &reqwest::Client,
    method: &str,
    url: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut r = c.request(method.parse().expect("method"), url);
    if let Some(b) = body {
        r = r
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let resp = r.send().await.expect("send");
    answer(resp).await
}

/// The status and JSON body; an error's `Status` message is checked for
/// Rust Debug shapes.
async fn answer(resp: reqwest::Response) -> (u16, Value) {
    let code = resp.status().as_u16();
    let body = resp.json::<Value>().await.unwrap_or(Value::Null);
    if code >= 400 {
        if let Some(m) = body["message"].as_str() {
            super::assert_no_debug_shapes("a Status message", m);
        }
    }
    (code, body)
}

pub async fn merge_patch(c: &reqwest::Client, url: &str, body: Value) -> (u16, Value) {
    let resp = c
        .patch(url)
        .header("Content-Type", "application/merge-patch+json")
        .body(body.to_string())
        .send()
        .await
        .expect("patch");
    answer(resp).await
}

/// A review webhook on 127.0.0.1 (TokenReview, SubjectAccessReview, ...):
/// each POST to `path` is kept and answered with the same apiVersion and
/// kind, and `answer(review)` as its status. Runs on the caller's runtime.
pub async fn review_webhook<F>(
    path: &'static str,
    answer: F,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>)
where
    F: Fn(&Value) -> Value + Clone + Send + Sync + 'static,
{
    use axum::{routing::post, Json, Router};
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = got.clone();
    let app = Router::new().route(
        path,
        post(move |Json(review): Json<Value>| {
            let (seen, answer) = (seen.clone(), answer.clone());
            async move {
                let reply = serde_json::json!({"apiVersion": review["apiVersion"],
                    "kind": review["kind"], "status": answer(&review)});
                seen.lock().expect("lock").push(review);
                Json(reply)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}{path}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, got)
}

/// A kubeconfig naming `server` for kapi's outgoing webhooks (token and
/// authorization reviews, audit events), written to `dir/<name>`; `token`
/// is the bearer token kapi sends, if any. Returns its path.
pub fn webhook_kubeconfig(
    dir: &std::path::Path,
    name: &str,
    server: &str,
    token: Option<&str>,
) -> String {
    let path = dir.join(name);
    let user = token.map_or("{}".to_string(), |t| format!("{{token: {t}}}"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: backend\n  cluster: {{server: \"{server}\"}}\n\
             users:\n- name: kapi\n  user: {user}\ncontexts:\n- name: backend\n  context: {{cluster: backend, user: kapi}}\n\
             current-context: backend\n"
        ),
    )
    .expect("write");
    path.to_string_lossy().into_owned()
}
