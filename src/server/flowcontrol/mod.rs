//! API Priority and Fairness (upstream's `util/flowcontrol` and the
//! priority-and-fairness filter). Each request is classified by the
//! FlowSchemas (lowest `matchingPrecedence` first) into a priority level
//! and a flow; the level's [`QueueSet`] gives it seats now, queues it
//! fairly among flows, or sheds it with a 429. Exempt levels (system:masters,
//! health probes) never wait. The configuration is the stored
//! flowcontrol.apiserver.k8s.io objects, followed through informers and kept
//! to upstream's bootstrap set by `crate::controlplane::apf_config`.

pub mod queueset;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;

use parking_lot::{Mutex, RwLock};
use serde_json::Value;

use crate::auth::UserInfo;
use crate::registry::flowcontrol::bootstrap;
use crate::server::RequestInfo;
pub use queueset::{Admission, Limit, Permit, QueueSet, Queued, Rejected};

/// Object counts by resource plural, for the width of lists.
pub type ObjectCounts = Arc<dyn Fn(&str) -> Option<i64> + Send + Sync>;

/// The most seats a list may take (upstream's `MaximumListSeatsLimit`).
const MAX_LIST_SEATS: u32 = 10;
/// Objects a seat covers in a list (upstream's `objectsPerSeat`).
const OBJECTS_PER_SEAT: i64 = 100;

#[derive(Debug, Clone, PartialEq)]
enum Distinguisher {
    None,
    ByUser,
    ByNamespace,
}

/// A FlowSchema as requests are matched against it: its rules read out of
/// the stored object once, not looked up by key on every request.
#[derive(Debug, Clone)]
struct Schema {
    name: Arc<str>,
    /// The `X-Kubernetes-PF-FlowSchema-UID` answer header.
    uid: Option<HeaderValue>,
    precedence: i64,
    level: Arc<str>,
    distinguisher: Distinguisher,
    rules: Vec<Rule>,
    /// Requests dispatched through this schema (the `flow_schema` label of
    /// `apiserver_flowcontrol_dispatched_requests_total`; counted here so
    /// a request takes no lock to count itself).
    dispatched: Arc<AtomicU64>,
}

/// One `PolicyRulesWithSubjects`.
#[derive(Debug, Clone, Default)]
struct Rule {
    subjects: Vec<Subject>,
    resource_rules: Vec<ResourceRule>,
    non_resource_rules: Vec<NonResourceRule>,
}

#[derive(Debug, Clone)]
enum Subject {
    User(String),
    Group(String),
    ServiceAccount { namespace: String, name: String },
}

#[derive(Debug, Clone, Default)]
struct ResourceRule {
    verbs: Vec<String>,
    api_groups: Vec<String>,
    resources: Vec<String>,
    cluster_scope: bool,
    namespaces: Vec<String>,
}

#[derive(Debug, Clone, Default)]
struct NonResourceRule {
    verbs: Vec<String>,
    urls: Vec<String>,
}

#[derive(Clone)]
struct Level {
    /// The `X-Kubernetes-PF-PriorityLevel-UID` answer header.
    uid: Option<HeaderValue>,
    set: Arc<QueueSet>,
}

#[derive(Default)]
struct Compiled {
    schemas: Vec<Schema>,
    levels: HashMap<Arc<str>, Level>,
}

/// What a request was classified as.
pub struct Classification {
    pub flow_schema: Arc<str>,
    pub flow_schema_uid: Option<HeaderValue>,
    pub priority_level: Arc<str>,
    pub priority_level_uid: Option<HeaderValue>,
    flow: u64,
    set: Arc<QueueSet>,
    dispatched: Arc<AtomicU64>,
}

#[derive(Default)]
struct Counters {
    /// Dispatches through schemas since replaced by a reconfiguration,
    /// kept so the counter never goes down.
    dispatched: BTreeMap<(Arc<str>, Arc<str>), u64>,
    rejected: BTreeMap<(Arc<str>, Arc<str>, &'static str), u64>,
}

/// The dispatcher: classification, seats and the metrics of both.
pub struct Apf {
    config: RwLock<Arc<Compiled>>,
    /// Queue sets by level name, kept across reconfigurations whose limit
    /// did not change (so waiting requests and seats in use carry over).
    sets: Mutex<HashMap<String, Arc<QueueSet>>>,
    server_seats: u32,
    wait_limit: Duration,
    counts: ObjectCounts,
    counters: Mutex<Counters>,
}

impl std::fmt::Debug for Apf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apf")
            .field("server_seats", &self.server_seats)
            .finish_non_exhaustive()
    }
}

impl Apf {
    /// `server_seats` is `--max-requests-inflight` plus
    /// `--max-mutating-requests-inflight`; a request waits in a queue at
    /// most a quarter of `--request-timeout`, as upstream.
    pub fn new(server_seats: u32, request_timeout: Duration, counts: ObjectCounts) -> Arc<Apf> {
        let apf = Arc::new(Apf {
            config: RwLock::new(Arc::new(Compiled::default())),
            sets: Mutex::new(HashMap::new()),
            server_seats: server_seats.max(1),
            wait_limit: request_timeout / 4,
            counts,
            counters: Mutex::new(Counters::default()),
        });
        // Until the stored objects are read: the mandatory ones.
        let mandatory = bootstrap::mandatory();
        let (levels, schemas): (Vec<Value>, Vec<Value>) = mandatory
            .into_iter()
            .partition(|o| o["kind"] == "PriorityLevelConfiguration");
        apf.configure(&levels, &schemas);
        apf
    }

    /// Takes a new configuration: the stored levels and schemas. A
    /// mandatory level that is missing is imagined from its bootstrap
    /// spec until it is recreated, as upstream does.
    pub fn configure(&self, levels: &[Value], schemas: &[Value]) {
        let mut levels = levels.to_vec();
        for m in bootstrap::mandatory()
            .into_iter()
            .filter(|o| o["kind"] == "PriorityLevelConfiguration")
        {
            if !levels
                .iter()
                .any(|l| l["metadata"]["name"] == m["metadata"]["name"])
            {
                levels.push(m);
            }
        }
        let levels = &levels[..];
        let total_shares: i64 = levels
            .iter()
            .filter(|l| l["spec"]["type"] == "Limited")
            .map(|l| {
                l["spec"]["limited"]["nominalConcurrencyShares"]
                    .as_i64()
                    .unwrap_or(30)
            })
            .sum::<i64>()
            .max(1);
        let mut sets = self.sets.lock();
        let previous = self.config.read().clone();
        let mut compiled = Compiled::default();
        for l in levels {
            let name = l["metadata"]["name"].as_str().unwrap_or("").to_string();
            let spec = &l["spec"];
            let limit = if spec["type"] == "Exempt" {
                Limit::Exempt
            } else {
                let limited = &spec["limited"];
                let shares = limited["nominalConcurrencyShares"].as_i64().unwrap_or(30);
                // NominalCL = ceil(ServerCL * NCS / sum(NCS)).
                let seats = ((i64::from(self.server_seats) * shares + total_shares - 1)
                    / total_shares)
                    .max(1) as u32;
                let response = &limited["limitResponse"];
                if response["type"] == "Queue" {
                    let q = &response["queuing"];
                    Limit::Queue {
                        seats,
                        queues: q["queues"].as_u64().unwrap_or(64) as u32,
                        hand_size: q["handSize"].as_u64().unwrap_or(8) as u32,
                        queue_length_limit: q["queueLengthLimit"].as_u64().unwrap_or(50) as u32,
                    }
                } else {
                    Limit::Reject { seats }
                }
            };
            let set = match sets.get(&name) {
                Some(s) if s.limit() == limit => s.clone(),
                _ => QueueSet::new(limit),
            };
            sets.insert(name.clone(), set.clone());
            compiled.levels.insert(
                name.into(),
                Level {
                    uid: uid_header(l),
                    set,
                },
            );
        }
        sets.retain(|name, _| compiled.levels.contains_key(name.as_str()));
        for s in schemas {
            let spec = &s["spec"];
            let level: Arc<str> = spec["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap_or("")
                .into();
            // A schema naming a level that does not exist is dangling:
            // it classifies nothing.
            if !compiled.levels.contains_key(&level) {
                continue;
            }
            let name: Arc<str> = s["metadata"]["name"].as_str().unwrap_or("").into();
            // A schema that stays (same name and level) keeps counting on.
            let dispatched = previous
                .schemas
                .iter()
                .find(|p| p.name == name && p.level == level)
                .map_or_else(Default::default, |p| p.dispatched.clone());
            compiled.schemas.push(Schema {
                name,
                uid: uid_header(s),
                precedence: spec["matchingPrecedence"].as_i64().unwrap_or(1000),
                level,
                distinguisher: match spec["distinguisherMethod"]["type"].as_str() {
                    Some("ByUser") => Distinguisher::ByUser,
                    Some("ByNamespace") => Distinguisher::ByNamespace,
                    _ => Distinguisher::None,
                },
                rules: spec["rules"]
                    .as_array()
                    .map(|rules| rules.iter().map(Rule::of).collect())
                    .unwrap_or_default(),
                dispatched,
            });
        }
        compiled
            .schemas
            .sort_by(|a, b| a.precedence.cmp(&b.precedence).then(a.name.cmp(&b.name)));
        // Schemas that go (or move to another level) leave their count behind.
        let mut counters = self.counters.lock();
        for p in &previous.schemas {
            let kept = compiled
                .schemas
                .iter()
                .any(|c| Arc::ptr_eq(&c.dispatched, &p.dispatched));
            let n = p.dispatched.load(Ordering::Relaxed);
            if !kept && n > 0 {
                *counters
                    .dispatched
                    .entry((p.name.clone(), p.level.clone()))
                    .or_default() += n;
            }
        }
        drop(counters);
        *self.config.write() = Arc::new(compiled);
    }

    /// The first schema (by precedence, then name) whose rules match.
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<Classification> {
        let config = self.config.read().clone();
        let resource = if info.subresource.is_empty() {
            std::borrow::Cow::Borrowed(info.resource.as_str())
        } else {
            std::borrow::Cow::Owned(format!("{}/{}", info.resource, info.subresource))
        };
        let schema = config.schemas.iter().find(|s| {
            s.rules
                .iter()
                .any(|r| matches_subjects(r, user) && matches_request(r, info, &resource))
        })?;
        let level = config.levels.get(&schema.level)?;
        let distinguisher = match schema.distinguisher {
            Distinguisher::None => "",
            Distinguisher::ByUser => user.name.as_str(),
            Distinguisher::ByNamespace => info.namespace.as_str(),
        };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&*schema.name, distinguisher).hash(&mut h);
        Some(Classification {
            flow_schema: schema.name.clone(),
            flow_schema_uid: schema.uid.clone(),
            priority_level: schema.level.clone(),
            priority_level_uid: level.uid.clone(),
            flow: h.finish(),
            set: level.set.clone(),
            dispatched: schema.dispatched.clone(),
        })
    }

    /// The seats a request takes: one, or for a list one per hundred
    /// objects it may return (up to ten), as upstream's width estimator.
    pub fn width(&self, info: &RequestInfo, limit: Option<i64>) -> u32 {
        if !info.is_resource_request || info.verb != "list" || !info.name.is_empty() {
            return 1;
        }
        // apiserver_storage_objects names resources by plural.
        let stored = (self.counts)(&info.resource).unwrap_or(0);
        let objects = match limit {
            Some(l) if l > 0 && l < stored => l,
            _ => stored,
        };
        let seats = (objects + OBJECTS_PER_SEAT - 1) / OBJECTS_PER_SEAT;
        seats.clamp(1, i64::from(MAX_LIST_SEATS)) as u32
    }

    /// Seats for a classified request, why it is shed, or a queue place
    /// to [`Apf::wait`] in.
    pub fn enter(&self, c: &Classification, seats: u32) -> Admission {
        let entered = c.set.enter(c.flow, seats);
        if let Admission::Now(got) = &entered {
            self.count(c, got);
        }
        entered
    }

    /// Waits in the queue [`Apf::enter`] placed a request in.
    pub async fn wait(&self, c: &Classification, queued: Queued) -> Result<Permit, Rejected> {
        let got = queued.wait(self.wait_limit).await;
        self.count(c, &got);
        got
    }

    fn count(&self, c: &Classification, got: &Result<Permit, Rejected>) {
        match got {
            Ok(_) => {
                c.dispatched.fetch_add(1, Ordering::Relaxed);
            }
            Err(why) => {
                let mut counters = self.counters.lock();
                *counters
                    .rejected
                    .entry((
                        c.flow_schema.clone(),
                        c.priority_level.clone(),
                        why.reason(),
                    ))
                    .or_default() += 1
            }
        }
    }

    /// `apiserver_flowcontrol_*` in the text exposition format.
    pub fn render(&self, out: &mut String) {
        let counters = self.counters.lock();
        let mut dispatched = counters.dispatched.clone();
        for schema in &self.config.read().schemas {
            let n = schema.dispatched.load(Ordering::Relaxed);
            if n > 0 {
                *dispatched
                    .entry((schema.name.clone(), schema.level.clone()))
                    .or_default() += n;
            }
        }
        out.push_str("# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_dispatched_requests_total counter\n");
        for ((fs, pl), n) in &dispatched {
            let _ = writeln!(out, "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {n}");
        }
        out.push_str("# HELP apiserver_flowcontrol_rejected_requests_total [BETA] Number of requests rejected by API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_rejected_requests_total counter\n");
        for ((fs, pl, reason), n) in &counters.rejected {
            let _ = writeln!(out, "apiserver_flowcontrol_rejected_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\",reason=\"{reason}\"}} {n}");
        }
        drop(counters);
        let sets: Vec<(String, Arc<QueueSet>)> = self
            .sets
            .lock()
            .iter()
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect();
        for (name, help, pick) in [
            ("apiserver_flowcontrol_current_inqueue_requests", "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem", 0),
            ("apiserver_flowcontrol_current_executing_requests", "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem", 1),
            ("apiserver_flowcontrol_current_executing_seats", "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem", 2),
            ("apiserver_flowcontrol_nominal_limit_seats", "[BETA] Nominal number of execution seats configured for each priority level", 3),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            for (level, set) in &sets {
                let (waiting, executing, seats) = set.load();
                let v = match pick {
                    0 => waiting as u64,
                    1 => u64::from(executing),
                    2 => u64::from(seats),
                    _ => u64::from(set.seats()),
                };
                let _ = writeln!(out, "{name}{{priority_level=\"{level}\"}} {v}");
            }
        }
    }
}

/// The `X-Kubernetes-PF-*-UID` header of an object: empty for a mandatory
/// one imagined until it is stored, as upstream sends it.
fn uid_header(o: &Value) -> Option<HeaderValue> {
    HeaderValue::from_str(o["metadata"]["uid"].as_str().unwrap_or("")).ok()
}

/// What `f` makes of each element of the array `v` (none when `v` is not
/// an array; an element `f` refuses is left out).
fn each<T>(v: &Value, f: impl FnMut(&Value) -> Option<T>) -> Vec<T> {
    v.as_array()
        .map(|l| l.iter().filter_map(f).collect())
        .unwrap_or_default()
}

fn strings(v: &Value) -> Vec<String> {
    each(v, |s| s.as_str().map(String::from))
}

impl Rule {
    fn of(rule: &Value) -> Rule {
        let name = |v: &Value| v["name"].as_str().unwrap_or("").to_string();
        let subjects = each(&rule["subjects"], |s| match s["kind"].as_str() {
            Some("User") => Some(Subject::User(name(&s["user"]))),
            Some("Group") => Some(Subject::Group(name(&s["group"]))),
            Some("ServiceAccount") => Some(Subject::ServiceAccount {
                namespace: s["serviceAccount"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .into(),
                name: name(&s["serviceAccount"]),
            }),
            _ => None,
        });
        let resource_rules = each(&rule["resourceRules"], |r| {
            Some(ResourceRule {
                verbs: strings(&r["verbs"]),
                api_groups: strings(&r["apiGroups"]),
                resources: strings(&r["resources"]),
                cluster_scope: r["clusterScope"].as_bool().unwrap_or(false),
                namespaces: strings(&r["namespaces"]),
            })
        });
        let non_resource_rules = each(&rule["nonResourceRules"], |r| {
            Some(NonResourceRule {
                verbs: strings(&r["verbs"]),
                urls: strings(&r["nonResourceURLs"]),
            })
        });
        Rule {
            subjects,
            resource_rules,
            non_resource_rules,
        }
    }
}

fn list_has(list: &[String], want: &str) -> bool {
    list.iter().any(|v| v == "*" || v == want)
}

fn matches_subjects(rule: &Rule, user: &UserInfo) -> bool {
    rule.subjects.iter().any(|s| match s {
        Subject::User(n) => n == "*" || *n == user.name,
        Subject::Group(n) => n == "*" || user.groups.iter().any(|g| g == n),
        Subject::ServiceAccount { namespace, name } => user
            .name
            .strip_prefix("system:serviceaccount:")
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(n, sa)| n == namespace && (name == "*" || name == sa)),
    })
}

/// `resource` is `resource/subresource` when there is one.
fn matches_request(rule: &Rule, info: &RequestInfo, resource: &str) -> bool {
    if info.is_resource_request {
        rule.resource_rules.iter().any(|r| {
            list_has(&r.verbs, &info.verb)
                && list_has(&r.api_groups, &info.api_group)
                && list_has(&r.resources, resource)
                && if info.namespace.is_empty() {
                    r.cluster_scope
                } else {
                    list_has(&r.namespaces, &info.namespace)
                }
        })
    } else {
        rule.non_resource_rules.iter().any(|r| {
            list_has(&r.verbs, &info.verb)
                && r.urls.iter().any(|u| {
                    u == "*"
                        || *u == info.path
                        || u.strip_suffix('*')
                            .is_some_and(|prefix| info.path.starts_with(prefix))
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        }
    }

    fn info(method: &str, path: &str) -> RequestInfo {
        let (path, query) = path
            .split_once('?')
            .map_or((path, None), |(p, q)| (p, Some(q)));
        RequestInfo::parse(&method.parse().expect("method"), path, query)
    }

    fn configured() -> Arc<Apf> {
        let apf = Apf::new(600, Duration::from_secs(60), Arc::new(|_| Some(5000)));
        let all: Vec<Value> = bootstrap::mandatory()
            .into_iter()
            .chain(bootstrap::suggested())
            .collect();
        let (levels, schemas): (Vec<Value>, Vec<Value>) = all
            .into_iter()
            .partition(|o| o["kind"] == "PriorityLevelConfiguration");
        apf.configure(&levels, &schemas);
        apf
    }

    #[test]
    fn requests_are_classified_as_upstreams_bootstrap_configuration_does() {
        let apf = configured();
        let cases = [
            (
                user("admin", &["system:masters", "system:authenticated"]),
                "GET",
                "/api/v1/pods",
                "exempt",
            ),
            (
                user("system:anonymous", &["system:unauthenticated"]),
                "GET",
                "/readyz",
                "probes",
            ),
            (
                user("system:kube-controller-manager", &["system:authenticated"]),
                "PUT",
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcm",
                "system-leader-election",
            ),
            (
                user("system:kube-controller-manager", &["system:authenticated"]),
                "GET",
                "/api/v1/namespaces/default/pods",
                "kube-controller-manager",
            ),
            (
                user(
                    "system:serviceaccount:kube-system:foo",
                    &["system:serviceaccounts", "system:authenticated"],
                ),
                "GET",
                "/api/v1/pods",
                "kube-system-service-accounts",
            ),
            (
                user(
                    "system:serviceaccount:default:foo",
                    &["system:serviceaccounts", "system:authenticated"],
                ),
                "GET",
                "/api/v1/pods",
                "service-accounts",
            ),
            (
                user("system:node:n1", &["system:nodes", "system:authenticated"]),
                "PUT",
                "/api/v1/nodes/n1/status",
                "system-node-high",
            ),
            (
                user("alice", &["system:authenticated"]),
                "GET",
                "/api/v1/namespaces/default/configmaps",
                "global-default",
            ),
        ];
        for (u, method, path, want) in cases {
            let c = apf.classify(&u, &info(method, path)).expect("classified");
            assert_eq!(&*c.flow_schema, want, "{} {method} {path}", u.name);
        }
    }

    #[test]
    fn levels_share_the_servers_seats_by_their_shares() {
        let apf = configured();
        let c = apf
            .classify(
                &user("alice", &["system:authenticated"]),
                &info("GET", "/api/v1/pods"),
            )
            .expect("classified");
        // 600 * 20 / (5 + 30 + 40 + 10 + 40 + 100 + 20) rounded up.
        assert_eq!(c.set.seats(), 49);
        // A list of 5,000 objects is ten seats; a get or a limited list fewer.
        assert_eq!(apf.width(&info("GET", "/api/v1/pods"), None), 10);
        assert_eq!(apf.width(&info("GET", "/api/v1/pods"), Some(250)), 3);
        assert_eq!(
            apf.width(&info("GET", "/api/v1/namespaces/default/pods/p"), None),
            1
        );
        assert_eq!(
            apf.width(&info("POST", "/api/v1/namespaces/default/pods"), None),
            1
        );
    }

    #[test]
    fn a_dangling_schema_classifies_nothing_and_missing_mandatory_levels_are_imagined() {
        let apf = configured();
        // No stored levels at all: the mandatory ones are imagined, so the
        // exempt schema still exempts.
        let mut schemas: Vec<Value> = bootstrap::mandatory()
            .into_iter()
            .filter(|o| o["kind"] == "FlowSchema")
            .collect();
        schemas.push(
            serde_json::json!({"metadata": {"name": "orphan", "uid": "u"}, "spec": {
            "priorityLevelConfiguration": {"name": "nowhere"}, "matchingPrecedence": 100,
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}),
        );
        apf.configure(&[], &schemas);
        let admin = user("admin", &["system:masters", "system:authenticated"]);
        let c = apf
            .classify(&admin, &info("GET", "/api"))
            .expect("classified");
        assert_eq!((&*c.flow_schema, &*c.priority_level), ("exempt", "exempt"));
        let alice = user("alice", &["system:authenticated"]);
        let c = apf
            .classify(&alice, &info("GET", "/api"))
            .expect("classified");
        assert_eq!(
            &*c.flow_schema, "catch-all",
            "the orphan schema is dangling"
        );
    }
}
