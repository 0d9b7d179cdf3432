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
