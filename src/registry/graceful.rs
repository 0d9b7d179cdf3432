//! Graceful deletion (upstream's `rest.BeforeDelete` and the generic
//! store's `updateForGracefulDeletionAndFinalizers`): what a DELETE does to
//! an object before, or instead of, removing it from storage.
//!
//! A kind whose strategy has a grace period (pods) is first marked with
//! `deletionTimestamp` = now + grace and `deletionGracePeriodSeconds`; it
//! stays while the grace period is above zero, for a kubelet to stop its
//! containers and delete it with grace 0. An object with finalizers is
//! marked with grace 0 and stays until they are gone. Anything else is
//! removed at once.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{json, Value};

use super::meta;
use super::strategy::Strategy;

/// What a delete request does to an object, decided on the object as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// The kind is not deleted gracefully, or the object's grace already
    /// ran out: finalizers decide whether it stays.
    NotGraceful,
    /// A graceful deletion is under way and this request does not shorten
    /// it: the object is answered unchanged.
    Pending,
    /// Mark the object: deleted at `deletion_timestamp`, after `period` s.
    Graceful {
        deletion_timestamp: String,
        period: i64,
    },
}

/// upstream's BeforeDelete, minus preconditions (checked by storage).
/// `requested` is DeleteOptions.gracePeriodSeconds as sent.
pub fn plan(strategy: &dyn Strategy, obj: &Value, requested: Option<i64>) -> Plan {
    plan_at(strategy, obj, requested, Utc::now())
}

fn plan_at(
    strategy: &dyn Strategy,
    obj: &Value,
    requested: Option<i64>,
    now: DateTime<Utc>,
) -> Plan {
    // A negative grace period means "as soon as possible", which upstream
    // turns into one second (zero is reserved for forced deletion).
    let requested = requested.map(|g| if g < 0 { 1 } else { g });
    let Some(kind_period) = strategy.graceful_delete_period(obj, requested) else {
        return Plan::NotGraceful;
    };
    let marked = obj["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc));
    if !obj["metadata"]["deletionTimestamp"].is_null() {
        let current = obj["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .map(|g| if g < 0 { 1 } else { g });
        let (Some(current), Some(marked)) = (current.filter(|g| *g != 0), marked) else {
            // Marked with no grace left (or a timestamp that cannot be
            // read): whatever was asked, it goes now.
            return Plan::NotGraceful;
        };
        // Only a shorter grace period may be asked for once marked.
        let Some(period) = requested.filter(|p| *p < current) else {
            return Plan::Pending;
        };
        let mut at = marked - Duration::seconds(current) + Duration::seconds(period);
        let mut period = period;
        if at < now {
            at = now;
            if period != 0 {
                period = 1;
            }
        }
        return Plan::Graceful {
            deletion_timestamp: rfc3339(at),
            period,
        };
    }
    Plan::Graceful {
        deletion_timestamp: rfc3339(now + Duration::seconds(kind_period)),
        period: kind_period,
    }
}

/// Writes a [`Plan::Graceful`] into the object, bumping a tracked
/// generation on the first mark as upstream does.
pub fn mark(obj: &mut Value, deletion_timestamp: &str, period: i64) {
    let first = obj["metadata"]["deletionTimestamp"].is_null();
    let m = meta::meta_mut(obj);
    if first {
        if let Some(g) = m
            .get("generation")
            .and_then(Value::as_i64)
            .filter(|g| *g > 0)
        {
            m.insert("generation".into(), json!(g + 1));
        }
    }
    m.insert("deletionTimestamp".into(), json!(deletion_timestamp));
    m.insert("deletionGracePeriodSeconds".into(), json!(period));
}

/// upstream's markAsDeleting, for an object kept by its finalizers: marked
/// now (or kept at an earlier mark) with no grace period.
pub fn mark_as_deleting(obj: &mut Value) {
    let now = Utc::now();
    let first = obj["metadata"]["deletionTimestamp"].is_null();
    let later = obj["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .is_some_and(|t| t.with_timezone(&Utc) > now);
    let m = meta::meta_mut(obj);
    if first {
        if let Some(g) = m
            .get("generation")
            .and_then(Value::as_i64)
            .filter(|g| *g > 0)
        {
            m.insert("generation".into(), json!(g + 1));
        }
    }
    if first || later {
        m.insert("deletionTimestamp".into(), json!(rfc3339(now)));
    }
    m.insert("deletionGracePeriodSeconds".into(), json!(0));
}

/// Whether an update of an object that a delete marked removes it: its
/// finalizers are gone and no grace period is running (upstream's
/// ShouldDeleteDuringUpdate, which looks at the stored object's grace).
pub fn delete_during_update(new: &Value, old: &Value) -> bool {
    meta::finalizers(new).is_empty()
        && !old["metadata"]["deletionTimestamp"].is_null()
        && old["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .is_none_or(|g| g == 0)
}

/// Now, as a deletion timestamp is written.
pub fn now_rfc3339() -> String {
    rfc3339(Utc::now())
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::core::PodStrategy;
    use crate::registry::strategy::Strategy;

    struct Plain;
    impl Strategy for Plain {}

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .expect("time")
    }

    const NOW: &str = "2026-01-01T00:00:00Z";

    fn pod(node: &str, grace: Option<i64>, phase: &str) -> Value {
        json!({"metadata": {"name": "p"},
               "spec": {"nodeName": node, "terminationGracePeriodSeconds": grace},
               "status": {"phase": phase}})
    }

    fn graceful(ts: &str, period: i64) -> Plan {
        Plan::Graceful {
            deletion_timestamp: ts.into(),
            period,
        }
    }

    #[test]
    fn kinds_without_a_grace_period_are_not_graceful() {
        assert_eq!(
            plan_at(&Plain, &json!({}), Some(30), at(NOW)),
            Plan::NotGraceful
        );
    }

    #[test]
    fn scheduled_pods_get_their_grace_period() {
        let p = pod("n1", Some(30), "Running");
        assert_eq!(
            plan_at(&PodStrategy, &p, None, at(NOW)),
            graceful("2026-01-01T00:00:30Z", 30)
        );
        assert_eq!(
            plan_at(&PodStrategy, &p, Some(5), at(NOW)),
            graceful("2026-01-01T00:00:05Z", 5)
        );
        assert_eq!(
            plan_at(&PodStrategy, &p, Some(-3), at(NOW)),
            graceful("2026-01-01T00:00:01Z", 1)
        );
        assert_eq!(
            plan_at(&PodStrategy, &p, Some(0), at(NOW)),
            graceful(NOW, 0)
        );
    }

    #[test]
    fn unscheduled_or_finished_pods_go_at_once() {
        for p in [
            pod("", Some(30), "Pending"),
            pod("n1", Some(30), "Succeeded"),
            pod("n1", Some(30), "Failed"),
        ] {
            assert_eq!(
                plan_at(&PodStrategy, &p, Some(10), at(NOW)),
                graceful(NOW, 0),
                "{p}"
            );
        }
    }

    #[test]
    fn a_marked_pod_only_gets_a_shorter_grace_period() {
        let mut p = pod("n1", Some(30), "Running");
        mark(&mut p, "2026-01-01T00:00:30Z", 30);
        assert_eq!(plan_at(&PodStrategy, &p, None, at(NOW)), Plan::Pending);
        assert_eq!(plan_at(&PodStrategy, &p, Some(30), at(NOW)), Plan::Pending);
        assert_eq!(
            plan_at(&PodStrategy, &p, Some(10), at(NOW)),
            graceful("2026-01-01T00:00:10Z", 10)
        );
        // Shortened into the past: now, with one second (or zero when forced).
        let later = at("2026-01-01T00:00:20Z");
        assert_eq!(
            plan_at(&PodStrategy, &p, Some(10), later),
            graceful("2026-01-01T00:00:20Z", 1)
        );
        assert_eq!(
            plan_at(&PodStrategy, &p, Some(0), later),
            graceful("2026-01-01T00:00:20Z", 0)
        );
        mark(&mut p, NOW, 0);
        assert_eq!(plan_at(&PodStrategy, &p, None, at(NOW)), Plan::NotGraceful);
    }

    #[test]
    fn marks_bump_a_tracked_generation_once() {
        let mut p = json!({"metadata": {"generation": 2}});
        mark(&mut p, NOW, 30);
        mark(&mut p, NOW, 10);
        assert_eq!(p["metadata"]["generation"], 3);
        assert_eq!(p["metadata"]["deletionGracePeriodSeconds"], 10);
        let mut o = json!({"metadata": {"finalizers": ["f"]}});
        mark_as_deleting(&mut o);
        assert_eq!(o["metadata"]["deletionGracePeriodSeconds"], 0);
        assert!(o["metadata"]["generation"].is_null());
    }

    #[test]
    fn updates_remove_only_marked_objects_without_grace_or_finalizers() {
        let marked = json!({"metadata": {"deletionTimestamp": NOW, "deletionGracePeriodSeconds": 0, "finalizers": ["f"]}});
        let cleared =
            json!({"metadata": {"deletionTimestamp": NOW, "deletionGracePeriodSeconds": 0}});
        assert!(delete_during_update(&cleared, &marked));
        let running =
            json!({"metadata": {"deletionTimestamp": NOW, "deletionGracePeriodSeconds": 30}});
        assert!(!delete_during_update(&running, &running));
        assert!(!delete_during_update(&json!({}), &json!({})));
    }
}
