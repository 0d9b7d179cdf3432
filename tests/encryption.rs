//! Issue 24: encryption at rest (`--encryption-provider-config`). Secrets are
//! not readable in the store, are readable through the API, old keys keep
//! reading after a rotation and the next write re-encrypts with the new
//! key; `kapi etcd dump` shows which key and decrypts with the config.

mod common;

use std::path::Path;
use std::process::Command;

use common::etcd::{etcdctl, EtcdCluster};
use common::{kapi_bin, run, Kapi};
use serde_json::Value;

const KEY16: &str = "MTIzNDU2Nzg5MDEyMzQ1Ng==";
const KEY32: &str = "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=";
/// base64 of `topsecret-value`: how the Secret's data sits in its JSON.
const SECRET_B64: &str = "dG9wc2VjcmV0LXZhbHVl";
/// base64 of `old-plain-value`, a Secret written before encryption.
const OLD_B64: &str = "b2xkLXBsYWluLXZhbHVl";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write config");
    p.to_string_lossy().into_owned()
}

fn config(providers: &str) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources:\n  - secrets\n  providers:\n{providers}"
    )
}

fn aescbc_key1() -> String {
    format!("  - aescbc:\n      keys:\n      - name: key1\n        secret: {KEY16}\n")
}

fn secretbox_key2() -> String {
    format!("  - secretbox:\n      keys:\n      - name: key2\n        secret: {KEY32}\n")
}

const IDENTITY: &str = "  - identity: {}\n";

fn kubectl_ok(k: &Kapi, args: &[&str]) -> String {
    let (ok, out, err) = run(k.kubectl().args(args));
    assert!(ok, "kubectl {args:?}: {err}");
    out
}

/// Every byte kapi's embedded store holds on disk.
fn store_bytes(data_dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    let mut dirs = vec![data_dir.join("store")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("store dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                all.extend(std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// The one item of `kapi etcd dump ... -o json`.
fn dumped(args: &[&str]) -> Value {
    let (ok, out, err) = run(Command::new(kapi_bin())
        .args(["etcd", "dump", "-o", "json"])
        .args(args));
    assert!(ok, "dump {args:?}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let items = v["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "{out}");
    items[0].clone()
}

/// `kubectl replace` of the Secret as it is: its resourceVersion before and after.
fn replace_unchanged(k: &Kapi, name: &str) -> (String, String) {
    let rv = || {
        kubectl_ok(
            k,
            &[
                "get",
                "secret",
                name,
                "-o",
                "jsonpath={.metadata.resourceVersion}",
            ],
        )
    };
    let before = rv();
    let json = kubectl_ok(k, &["get", "secret", name, "-o", "json"]);
    let (ok, _, err) = k.kubectl_stdin(&["replace", "-f", "-"], &json);
    assert!(ok, "{err}");
    (before, rv())
}

fn secret_value(k: &Kapi, name: &str) -> String {
    kubectl_ok(
        k,
        &["get", "secret", name, "-o", "jsonpath={.data.password}"],
    )
}

#[test]
fn secrets_are_encrypted_at_rest_and_keys_rotate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let dir_s = dir.to_string_lossy().into_owned();
    // A Secret written before encryption was configured.
    let mut k = Kapi::start_in(&dir, &[]);
    kubectl_ok(
        &k,
        &[
            "create",
            "secret",
            "generic",
            "before",
            "--from-literal=password=old-plain-value",
        ],
    );
    k.terminate();

    // Encrypted with aescbc; identity still reads the old plain Secret.
    let enc1 = write(
        tmp.path(),
        "enc1.yaml",
        &config(&(aescbc_key1() + IDENTITY)),
    );
    let mut k = Kapi::start_in(&dir, &["--encryption-provider-config", &enc1]);
    kubectl_ok(
        &k,
        &[
            "create",
            "secret",
            "generic",
            "s1",
            "--from-literal=password=topsecret-value",
        ],
    );
    kubectl_ok(
        &k,
        &[
            "create",
            "configmap",
            "c1",
            "--from-literal=k=plain-configmap-value",
        ],
    );
    assert_eq!(secret_value(&k, "s1"), SECRET_B64);
    assert_eq!(secret_value(&k, "before"), OLD_B64);
    let listed = kubectl_ok(&k, &["get", "secrets", "-o", "name"]);
    assert!(
        listed.contains("secret/s1") && listed.contains("secret/before"),
        "{listed}"
    );

    let s1 = [
        "--data-dir",
        &dir_s,
        "--resource",
        "secrets",
        "-n",
        "default",
        "--name",
        "s1",
    ];
    let raw = dumped(&s1);
    assert_eq!(raw["encryption"], "aescbc:v1:key1", "{raw}");
    assert_eq!(raw["encoding"], "undecodable", "{raw}");
    let mut with_keys = s1.to_vec();
    with_keys.extend(["--encryption-provider-config", &enc1]);
    let clear = dumped(&with_keys);
    assert_eq!(clear["encryption"], "aescbc:v1:key1", "{clear}");
    assert_eq!(clear["encoding"], "json", "{clear}");
    assert_eq!(clear["value"]["data"]["password"], SECRET_B64, "{clear}");
    // Resources the configuration does not name stay as they were.
    let cm = dumped(&[
        "--data-dir",
        &dir_s,
        "--resource",
        "configmaps",
        "--name",
        "c1",
    ]);
    assert!(cm.get("encryption").is_none(), "{cm}");
    k.terminate();

    // Nothing of the new Secret is on disk in clear, while the ConfigMap is
    // (so the search itself can find what is there).
    let disk = store_bytes(&dir);
    assert!(contains(&disk, "plain-configmap-value"));
    assert!(contains(&disk, OLD_B64));
    assert!(
        !contains(&disk, SECRET_B64),
        "an encrypted Secret is on disk in clear"
    );

    // Rotation: a new key first, the old one behind it.
    let enc2 = write(
        tmp.path(),
        "enc2.yaml",
        &config(&(secretbox_key2() + &aescbc_key1() + IDENTITY)),
    );
    let k = Kapi::start_in(&dir, &["--encryption-provider-config", &enc2]);
    assert_eq!(secret_value(&k, "s1"), SECRET_B64);
    // Replacing it unchanged writes it again, with the new key.
    let (rv_before, rv_after) = replace_unchanged(&k, "s1");
    assert_ne!(rv_before, rv_after, "a stale object is written again");
    let mut with_new = s1.to_vec();
    with_new.extend(["--encryption-provider-config", &enc2]);
    let rotated = dumped(&with_new);
    assert_eq!(rotated["encryption"], "secretbox:v1:key2", "{rotated}");
    assert_eq!(
        rotated["value"]["data"]["password"], SECRET_B64,
        "{rotated}"
    );
    // Once current, an unchanged replace is a no-op again.
    let (before, after) = replace_unchanged(&k, "s1");
    assert_eq!(before, after);
    // The old plain Secret is still read (identity is listed).
    assert_eq!(secret_value(&k, "before"), OLD_B64);
}

#[test]
fn secrets_in_etcd_carry_upstreams_prefix_and_only_the_api_reads_them() {
    let etcd = EtcdCluster::start(1);
    let endpoint = etcd.endpoints()[0].clone();
    let tmp = tempfile::tempdir().expect("tempdir");
    let enc = write(
        tmp.path(),
        "enc.yaml",
        &config(&format!(
            "  - aesgcm:\n      keys:\n      - name: key1\n        secret: {KEY32}\n"
        )),
    );
    let k = Kapi::start(&[
        "--etcd-servers",
        &endpoint,
        "--encryption-provider-config",
        &enc,
    ]);
    kubectl_ok(
        &k,
        &[
            "create",
            "secret",
            "generic",
            "s1",
            "--from-literal=password=topsecret-value",
        ],
    );
    assert_eq!(secret_value(&k, "s1"), SECRET_B64);
    let (ok, out, err) = etcdctl(
        &endpoint,
        &["get", "/registry/secrets/default/s1", "--print-value-only"],
    );
    assert!(ok, "{err}");
    assert!(out.starts_with("k8s:enc:aesgcm:v1:key1:"), "{out}");
    assert!(
        !out.contains(SECRET_B64) && !out.contains("topsecret"),
        "{out}"
    );
    // Lists come from the watch cache, fed by a watch: decrypted too.
    let listed = kubectl_ok(
        &k,
        &["get", "secrets", "-o", "jsonpath={.items[*].data.password}"],
    );
    assert!(listed.contains(SECRET_B64), "{listed}");
    let item = dumped(&[
        "--etcd-servers",
        &endpoint,
        "--resource",
        "secrets",
        "--name",
        "s1",
        "--encryption-provider-config",
        &enc,
    ]);
    assert_eq!(item["encryption"], "aesgcm:v1:key1", "{item}");
    assert_eq!(item["value"]["data"]["password"], SECRET_B64, "{item}");
}

#[test]
fn a_wrong_configuration_stops_the_start_naming_the_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bad = write(
        tmp.path(),
        "bad.yaml",
        &config("  - aescbc:\n      keys:\n      - name: key1\n        secret: c2hvcnQ=\n"),
    );
    let out = Command::new(kapi_bin())
        .args(["serve", "--secure-port", "0", "--data-dir"])
        .arg(tmp.path().join("data"))
        .args(["--encryption-provider-config", &bad])
        .output()
        .expect("run kapi");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resources[0].providers[0].aescbc.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 5, expected one of [16 24 32]"),
        "{err}"
    );
}
