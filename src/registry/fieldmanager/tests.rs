use super::*;

#[test]
fn smoke() {
    let v = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"a":"1"}});
    let out = update(None, &v, "m", "v1", "", "io.k8s.api.core.v1.ConfigMap");
    println!("{out:#}");
}
