//! One contract, two backends: every storage semantic runs against the
//! embedded store and against a real etcd started for the test.

mod common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kapi::storage::backend::{Backend, BackendError, EventKind, WatchItem};
use kapi::storage::cacher::{
    Cacher, EventType, Filter, ObjectAttrs, WatchMessage, WatchOptions, WatchStart,
};
use kapi::storage::store::{ListOptions, Preconditions, RvMatch, StorageError, Store};
use tokio_util::sync::CancellationToken;

/// Keeps whatever the backend needs alive (a temp dir or an etcd).
enum Keeper {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Etcd(#[allow(dead_code)] common::etcd::EtcdCluster),
}

async fn embedded() -> (Arc<dyn Backend>, Keeper) {
    let dir = tempfile::tempdir().expect("tmp");
    let b = kapi::storage::embedded::Embedded::open(dir.path()).expect("open");
    (Arc::new(b), Keeper::Dir(dir))
}

async fn etcd() -> (Arc<dyn Backend>, Keeper) {
    let cluster = tokio::task::spawn_blocking(|| common::etcd::EtcdCluster::start(1))
        .await
        .expect("etcd");
    let cfg = kapi::storage::etcd::EtcdConfig {
        endpoints: cluster.endpoints(),
        ..Default::default()
    };
    let b = kapi::storage::etcd::Etcd::connect(&cfg, "/registry")
        .await
        .expect("connect");
    (Arc::new(b), Keeper::Etcd(cluster))
}

fn obj(name: &str, uid: &str, n: i64) -> Bytes {
    Bytes::from(
        serde_json::to_vec(&serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "uid": uid, "labels": {"n": n.to_string()}},
            "data": {"n": n.to_string()}
        }))
        .expect("json"),
    )
}

fn n_of(value: &[u8]) -> i64 {
    let v: serde_json::Value = serde_json::from_slice(value).expect("json");
    v["data"]["n"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("n")
}

fn attrs() -> kapi::storage::cacher::AttrsFn {
    Arc::new(|raw: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(raw).ok()?;
        let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
        Some(ObjectAttrs {
            labels: v["metadata"]["labels"]
                .as_object()
                .map(|l| l.iter().map(|(k, val)| (k.as_str(), text(val))).collect())
                .unwrap_or_default(),
            fields: [("metadata.name", text(&v["metadata"]["name"]))]
                .into_iter()
                .collect(),
        })
    })
}

async fn create_get_and_already_exists(b: Arc<dyn Backend>) {
    let s = Store::new(b);
    let rv = s
        .create("/registry/configmaps/ns/a", obj("a", "u1", 1))
        .await
        .expect("create");
    assert!(rv > 0);
    let got = s.get("/registry/configmaps/ns/a").await.expect("get");
    assert_eq!(got.resource_version, rv);
    let v: serde_json::Value = serde_json::from_slice(&got.to_json()).expect("json");
    assert_eq!(v["metadata"]["resourceVersion"], rv.to_string());
    assert!(matches!(
        s.create("/registry/configmaps/ns/a", obj("a", "u2", 2))
            .await,
        Err(StorageError::KeyExists { .. })
    ));
    assert!(matches!(
        s.get("/registry/configmaps/ns/missing").await,
        Err(StorageError::NotFound { .. })
    ));
}

async fn list_pagination_and_exact(b: Arc<dyn Backend>) {
    let s = Store::new(b.clone());
    let mut rvs = Vec::new();
    for i in 0..10 {
        rvs.push(
            s.create(
                &format!("/registry/configmaps/ns/cm{i:02}"),
                obj(&format!("cm{i:02}"), "u", i),
            )
            .await
            .expect("create"),
        );
    }
    s.create("/registry/configmaps/other/x", obj("x", "u", 99))
        .await
        .expect("create");
    let all = s
        .list("/registry/configmaps/ns/", &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(all.items.len(), 10);
    assert!(all.continue_token.is_none());
    // Pages of 3: 3 + 3 + 3 + 1, with remainingItemCount counting down.
    let mut opts = ListOptions {
        limit: 3,
        ..Default::default()
    };
    let mut seen = Vec::new();
    let mut remaining = Vec::new();
    loop {
        let page = s
            .list("/registry/configmaps/ns/", &opts)
            .await
            .expect("page");
        seen.extend(page.items.iter().map(|o| n_of(&o.value)));
        remaining.push(page.remaining_item_count);
        match page.continue_token {
            Some(c) => opts.continue_token = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
    assert_eq!(remaining, vec![Some(7), Some(4), Some(1), None]);
    // A predicate filters while pages stay full.
    let odd: kapi::storage::store::Predicate = Arc::new(|v: &[u8]| n_of(v) % 2 == 1);
    let page = s
        .list(
            "/registry/configmaps/ns/",
            &ListOptions {
                limit: 2,
                predicate: Some(odd),
                ..Default::default()
            },
        )
        .await
        .expect("odd");
    assert_eq!(
        page.items
            .iter()
            .map(|o| n_of(&o.value))
            .collect::<Vec<_>>(),
        vec![1, 3]
    );
    assert!(page.continue_token.is_some() && page.remaining_item_count.is_none());
    // Exact: the state at an older revision.
    let at = ListOptions {
        resource_version: Some(rvs[4]),
        rv_match: Some(RvMatch::Exact),
        ..Default::default()
    };
    let old = s
        .list("/registry/configmaps/ns/", &at)
        .await
        .expect("exact");
    assert_eq!(old.items.len(), 5);
    assert_eq!(old.resource_version, rvs[4]);
}

async fn compaction_expires_old_reads(b: Arc<dyn Backend>) {
    let s = Store::new(b.clone());
    let first = s
        .create("/registry/configmaps/ns/a", obj("a", "u", 1))
        .await
        .expect("create");
    for i in 0..5 {
        s.create(&format!("/registry/configmaps/ns/b{i}"), obj("b", "u", i))
            .await
            .expect("create");
    }
    let page = s
        .list(
            "/registry/configmaps/ns/",
            &ListOptions {
                limit: 2,
                ..Default::default()
            },
        )
        .await
        .expect("page");
    let token = page.continue_token.expect("more pages");
    let cm = s.get("/registry/configmaps/ns/a").await.expect("get");
    s.guaranteed_update(
        "/registry/configmaps/ns/a",
        &Preconditions::default(),
        false,
        |_| Ok(Some(obj("a", "u", 2))),
    )
    .await
    .expect("update");
    let current = b.current_revision().await.expect("rev");
    b.compact(current).await.expect("compact");
    let exact = ListOptions {
        resource_version: Some(first),
        rv_match: Some(RvMatch::Exact),
        ..Default::default()
    };
    match s.list("/registry/configmaps/ns/", &exact).await {
        Err(StorageError::Expired(m)) => assert!(m.contains("too old"), "{m}"),
        other => panic!("want Expired, got {other:?}"),
    }
    let cont = ListOptions {
        continue_token: Some(token),
        limit: 2,
        ..Default::default()
    };
    let fresh = match s.list("/registry/configmaps/ns/", &cont).await {
        Err(StorageError::ExpiredContinue {
            message,
            continue_token,
        }) => {
            assert!(
                message.contains("continue parameter is too old"),
                "{message}"
            );
            continue_token
        }
        other => panic!("want Expired for the continue token, got {other:?}"),
    };
    // The token it hands back goes on from the same key at the latest revision.
    let rest = s
        .list(
            "/registry/configmaps/ns/",
            &ListOptions {
                continue_token: Some(fresh),
                ..Default::default()
            },
        )
        .await
        .expect("an inconsistent continue");
    assert!(!rest.items.is_empty());
    // The state at the compaction revision is intact.
    let now = s
        .list("/registry/configmaps/ns/", &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(now.items.len(), 6);
    assert!(
        s.get("/registry/configmaps/ns/a")
            .await
            .expect("get")
            .resource_version
            > cm.resource_version
    );
    // Watching from before the compaction is refused.
    match b.watch("/registry/configmaps/", first).await {
        Err(BackendError::Compacted { .. }) => {}
        Ok(mut w) => match tokio::time::timeout(Duration::from_secs(5), w.recv()).await {
            Ok(Some(Err(BackendError::Compacted { .. }))) => {}
            other => panic!("want a compacted error, got {other:?}"),
        },
        Err(e) => panic!("want Compacted, got {e}"),
    }
}

async fn concurrent_guaranteed_updates(b: Arc<dyn Backend>) {
    let s = Store::new(b);
    s.create("/registry/configmaps/ns/counter", obj("counter", "u", 0))
        .await
        .expect("create");
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            s.guaranteed_update(
                "/registry/configmaps/ns/counter",
                &Preconditions::default(),
                false,
                |cur| {
                    let n = cur.map(|o| n_of(&o.value)).unwrap_or(0);
                    Ok(Some(obj("counter", "u", n + 1)))
                },
            )
            .await
            .expect("update")
        }));
    }
    for t in tasks {
        t.await.expect("join");
    }
    let end = s.get("/registry/configmaps/ns/counter").await.expect("get");
    assert_eq!(n_of(&end.value), 64);
}

async fn preconditions_and_delete(b: Arc<dyn Backend>) {
    let s = Store::new(b);
    let rv = s
        .create("/registry/configmaps/ns/p", obj("p", "uid-1", 1))
        .await
        .expect("create");
    let wrong_uid = Preconditions {
        uid: Some("uid-2".into()),
        ..Default::default()
    };
    match s
        .delete("/registry/configmaps/ns/p", &wrong_uid, |_| Ok(()))
        .await
    {
        Err(StorageError::Conflict { message, .. }) => {
            assert_eq!(
                message,
                // upstream's StorageError text, which its 409 Conflict carries.
                "StorageError: invalid object, Code: 4, Key: /registry/configmaps/ns/p, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: uid-2, UID in object meta: uid-1"
            )
        }
        other => panic!("{other:?}"),
    }
    let wrong_rv = Preconditions {
        resource_version: Some((rv + 100).to_string()),
        ..Default::default()
    };
    assert!(matches!(
        s.delete("/registry/configmaps/ns/p", &wrong_rv, |_| Ok(()))
            .await,
        Err(StorageError::Conflict { .. })
    ));
    assert!(matches!(
        s.guaranteed_update("/registry/configmaps/ns/p", &wrong_uid, false, |_| Ok(
            Some(obj("p", "uid-1", 2))
        ))
        .await,
        Err(StorageError::Conflict { .. })
    ));
    // A no-op update keeps the resourceVersion.
    let same = s
        .guaranteed_update(
            "/registry/configmaps/ns/p",
            &Preconditions::default(),
            false,
            |cur| Ok(cur.map(|o| o.value.clone())),
        )
        .await
        .expect("noop");
    assert_eq!(same.resource_version, rv);
    let right = Preconditions {
        uid: Some("uid-1".into()),
        resource_version: Some(rv.to_string()),
    };
    let deleted = s
        .delete("/registry/configmaps/ns/p", &right, |_| Ok(()))
        .await
        .expect("delete");
    assert_eq!(n_of(&deleted.value), 1);
    assert!(matches!(
        s.get("/registry/configmaps/ns/p").await,
        Err(StorageError::NotFound { .. })
    ));
    assert!(matches!(
        s.delete(
            "/registry/configmaps/ns/p",
            &Preconditions::default(),
            |_| Ok(())
        )
        .await,
        Err(StorageError::NotFound { .. })
    ));
}

async fn watch_from_revision(b: Arc<dyn Backend>) {
    let s = Store::new(b.clone());
    let start = s
        .create("/registry/configmaps/ns/w", obj("w", "u", 1))
        .await
        .expect("create");
    s.guaranteed_update(
        "/registry/configmaps/ns/w",
        &Preconditions::default(),
        false,
        |_| Ok(Some(obj("w", "u", 2))),
    )
    .await
    .expect("update");
    s.create("/registry/secrets/ns/not-watched", obj("s", "u", 0))
        .await
        .expect("other prefix");
    s.delete(
        "/registry/configmaps/ns/w",
        &Preconditions::default(),
        |_| Ok(()),
    )
    .await
    .expect("delete");
    // Resume from the first revision: history replays in order.
    let mut w = b
        .watch("/registry/configmaps/", start)
        .await
        .expect("watch");
    let mut got = Vec::new();
    while got.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(10), w.recv())
            .await
            .expect("event in time")
        {
            Some(Ok(WatchItem::Event(e))) => got.push(e),
            Some(Ok(WatchItem::Progress(_))) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        got.iter().map(|e| e.kind).collect::<Vec<_>>(),
        vec![EventKind::Put, EventKind::Put, EventKind::Delete]
    );
    assert_eq!(got[0].kv.mod_revision, start);
    assert_eq!(got[1].kv.version, 2);
    let prev = got[2].prev.as_ref().expect("previous object on delete");
    assert_eq!(n_of(&prev.value), 2);
    // And live events after that.
    s.create("/registry/configmaps/ns/live", obj("live", "u", 7))
        .await
        .expect("create");
    loop {
        match tokio::time::timeout(Duration::from_secs(10), w.recv())
            .await
            .expect("live event")
        {
            Some(Ok(WatchItem::Event(e))) => {
                assert_eq!(e.kv.key, "/registry/configmaps/ns/live");
                break;
            }
            Some(Ok(WatchItem::Progress(_))) => {}
            other => panic!("{other:?}"),
        }
    }
}

async fn cacher_lists_and_fans_out(b: Arc<dyn Backend>) {
    let s = Store::new(b);
    for i in 0..5 {
        s.create(
            &format!("/registry/configmaps/ns/c{i}"),
            obj(&format!("c{i}"), "u", i),
        )
        .await
        .expect("create");
    }
    let stop = CancellationToken::new();
    let cache = Cacher::new(
        "/registry/configmaps/".into(),
        (String::new(), "configmaps".into()),
        s.clone(),
        attrs(),
        stop.clone(),
    );
    // A consistent list sees every write acknowledged before it.
    s.create("/registry/configmaps/ns/c5", obj("c5", "u", 5))
        .await
        .expect("create");
    let l = cache
        .list(&Filter::default(), &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(l.items.len(), 6);
    let sel = Filter {
        label: kapi::api::selector::LabelSelector::parse("n in (1,2)").expect("sel"),
        ..Default::default()
    };
    assert_eq!(
        cache
            .list(&sel, &ListOptions::default())
            .await
            .expect("list")
            .items
            .len(),
        2
    );
    // Many watchers, one storage watch: each sees the change once.
    let mut watchers = Vec::new();
    for _ in 0..500 {
        let opts = WatchOptions {
            start: WatchStart::After(l.resource_version),
            filter: Filter::default(),
            send_initial_events: false,
            bookmarks: false,
            deadline: None,
        };
        watchers.push(cache.watch(opts).await.expect("watch"));
    }
    let sel_opts = WatchOptions {
        start: WatchStart::After(l.resource_version),
        filter: sel,
        send_initial_events: false,
        bookmarks: false,
        deadline: None,
    };
    let mut selective = cache.watch(sel_opts).await.expect("watch");
    s.guaranteed_update(
        "/registry/configmaps/ns/c1",
        &Preconditions::default(),
        false,
        |_| Ok(Some(obj("c1", "u", 9))),
    )
    .await
    .expect("update");
    for w in watchers.iter_mut() {
        match tokio::time::timeout(Duration::from_secs(10), w.recv())
            .await
            .expect("in time")
        {
            Some(WatchMessage::Event {
                kind: EventType::Modified,
                object,
                ..
            }) => assert!(object.key.ends_with("/c1")),
            other => panic!("{other:?}"),
        }
    }
    // Leaving the selector is a DELETED for that watcher.
    match tokio::time::timeout(Duration::from_secs(10), selective.recv())
        .await
        .expect("in time")
    {
        Some(WatchMessage::Event {
            kind: EventType::Deleted,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // Watch from 0 starts with the current state.
    let mut w0 = cache
        .watch(WatchOptions {
            start: WatchStart::Now { consistent: false },
            filter: Filter::default(),
            send_initial_events: true,
            bookmarks: true,
            deadline: None,
        })
        .await
        .expect("watch");
    let mut added = 0;
    loop {
        match tokio::time::timeout(Duration::from_secs(10), w0.recv())
            .await
            .expect("in time")
        {
            Some(WatchMessage::Event {
                kind: EventType::Added,
                ..
            }) => added += 1,
            Some(WatchMessage::InitialEventsEnd(_)) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(added, 6);
    // Older than anything the cache holds: 410 Gone, as upstream's cacher answers.
    let old = WatchOptions {
        start: WatchStart::After(1),
        filter: Filter::default(),
        send_initial_events: false,
        bookmarks: false,
        deadline: None,
    };
    match cache.watch(old).await {
        Err(StorageError::Gone(m)) => {
            assert!(m.starts_with("too old resource version: 1 ("), "{m}")
        }
        other => panic!("want Gone, got {:?}", other.map(|_| ())),
    }
    stop.cancel();
}

/// Many gets at once, of different keys, some missing (on etcd they are
/// gathered into shared transactions): each answers its own key, and each
/// sees the write acknowledged before it was asked.
async fn concurrent_gets_answer_their_own_keys(b: Arc<dyn Backend>) {
    const KEYS: i64 = 200;
    let mut revisions = Vec::new();
    for i in 0..KEYS {
        let key = format!("/registry/configmaps/ns/g{i}");
        match b.create(&key, obj(&format!("g{i}"), "u", i)).await {
            Ok(kapi::storage::backend::TxnOutcome::Applied { revision }) => {
                revisions.push(revision)
            }
            other => panic!("create {key}: {other:?}"),
        }
    }
    // Each reader overwrites its key, then reads it back at once, while
    // the others do the same: a get must never answer an older value.
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..KEYS {
        let (b, rev) = (b.clone(), revisions[i as usize]);
        tasks.spawn(async move {
            let key = format!("/registry/configmaps/ns/g{i}");
            let written = match b
                .update(&key, obj(&format!("g{i}"), "u", i + 1000), rev)
                .await
            {
                Ok(kapi::storage::backend::TxnOutcome::Applied { revision }) => revision,
                other => panic!("update {key}: {other:?}"),
            };
            let (kv, header) = b.get(&key).await.expect("get");
            let kv = kv.unwrap_or_else(|| panic!("{key} missing"));
            assert_eq!(kv.key, key);
            assert_eq!(n_of(&kv.value), i + 1000, "{key} answered another value");
            assert_eq!(kv.mod_revision, written);
            assert!(
                header >= written,
                "{key}: read at {header}, written at {written}"
            );
            let (missing, _) = b
                .get(&format!("/registry/configmaps/ns/none{i}"))
                .await
                .expect("get missing");
            assert!(missing.is_none());
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("reader");
    }
}

/// A cache whose resource sees no writes is still current when read: a
/// flood of writes to another resource does not leave a consistent read of
/// it behind (or waiting), and its answer's resourceVersion is storage's,
/// at least that of the last write acknowledged before the read.
async fn quiet_caches_stay_current_under_a_flood_of_other_writes(b: Arc<dyn Backend>) {
    let s = Store::new(b);
    let stop = CancellationToken::new();
    let cache = |plural: &str| {
        Cacher::new(
            format!("/registry/{plural}/"),
            (String::new(), plural.to_string()),
            s.clone(),
            attrs(),
            stop.clone(),
        )
    };
    let (quiet, busy) = (cache("secrets"), cache("configmaps"));
    s.create("/registry/secrets/ns/s0", obj("s0", "u", 0))
        .await
        .expect("create");
    for c in [&quiet, &busy] {
        c.list(&Filter::default(), &ListOptions::default())
            .await
            .expect("first list");
    }
    for round in 0..3 {
        let mut writers = tokio::task::JoinSet::new();
        for w in 0..16 {
            let s = s.clone();
            writers.spawn(async move {
                let mut last = 0;
                for i in 0..20 {
                    let name = format!("r{round}-w{w}-{i}");
                    let key = format!("/registry/configmaps/ns/{name}");
                    last = s.create(&key, obj(&name, "u", i)).await.expect("create");
                }
                last
            });
        }
        let mut last = 0;
        while let Some(r) = writers.join_next().await {
            last = last.max(r.expect("writer"));
        }
        let began = std::time::Instant::now();
        let l = quiet
            .list(&Filter::default(), &ListOptions::default())
            .await
            .expect("consistent list of the quiet resource");
        assert!(
            l.resource_version >= last,
            "round {round}: list at {}, last write at {last}",
            l.resource_version
        );
        assert_eq!(l.items.len(), 1 + round);
        // Well under the 5 s a cache waits before it gives up on storage.
        assert!(
            began.elapsed() < Duration::from_secs(2),
            "round {round}: the read waited {:?}",
            began.elapsed()
        );
        // A write to the quiet resource is seen by the next read.
        let key = format!("/registry/secrets/ns/t{round}");
        let rv = s.create(&key, obj("t", "u", 1)).await.expect("create");
        let l = quiet
            .list(&Filter::default(), &ListOptions::default())
            .await
            .expect("list after a write");
        assert!(l.resource_version >= rv);
        assert_eq!(l.items.len(), 2 + round);
    }
    stop.cancel();
}

/// etcd's compaction keeps each key's state at the compacted revision; a
/// key deleted after one compaction and compacted again is gone for good,
/// however many compactions its records lived through.
async fn deleted_keys_stay_deleted_across_compactions(b: Arc<dyn Backend>) {
    let s = Store::new(b.clone());
    let key = "/registry/configmaps/ns/ghost";
    s.create(key, obj("ghost", "u", 1)).await.expect("create");
    // A compaction that keeps the key's only record.
    b.compact(b.current_revision().await.expect("rev"))
        .await
        .expect("compact");
    s.guaranteed_update(key, &Preconditions::default(), false, |_| {
        Ok(Some(obj("ghost", "u", 2)))
    })
    .await
    .expect("update");
    s.create("/registry/configmaps/ns/other", obj("other", "u", 1))
        .await
        .expect("create");
    b.compact(b.current_revision().await.expect("rev"))
        .await
        .expect("compact");
    s.delete(key, &Preconditions::default(), |_| Ok(()))
        .await
        .expect("delete");
    s.create("/registry/configmaps/ns/after", obj("after", "u", 1))
        .await
        .expect("create");
    // The deletion compacted away: what remains must still say "gone".
    b.compact(b.current_revision().await.expect("rev"))
        .await
        .expect("compact");
    match s.get(key).await {
        Err(StorageError::NotFound { .. }) => {}
        other => panic!("deleted key came back: {other:?}"),
    }
    let list = s
        .list("/registry/configmaps/ns/", &ListOptions::default())
        .await
        .expect("list");
    assert_eq!(
        list.items.len(),
        2,
        "{:?}",
        list.items.iter().map(|o| &o.key).collect::<Vec<_>>()
    );
    s.create(key, obj("ghost", "u2", 3))
        .await
        .expect("created again");
    assert_eq!(n_of(&s.get(key).await.expect("get").value), 3);
}

macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod on_embedded {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (b, _keep) = super::embedded().await;
                    super::$name(b).await;
                }
            )*
        }
        mod on_etcd {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (b, _keep) = super::etcd().await;
                    super::$name(b).await;
                }
            )*
        }
    };
}

contract!(
    create_get_and_already_exists,
    list_pagination_and_exact,
    compaction_expires_old_reads,
    deleted_keys_stay_deleted_across_compactions,
    concurrent_guaranteed_updates,
    preconditions_and_delete,
    watch_from_revision,
    cacher_lists_and_fans_out,
    concurrent_gets_answer_their_own_keys,
    quiet_caches_stay_current_under_a_flood_of_other_writes,
);
