//! What every server and controller of kapi shares beneath the API:
//! feature gates, Go's duration and boolean syntax, and the periods the
//! built-in controllers wait on. Named after upstream's
//! `k8s.io/component-base`; it depends on nothing else of kapi, so the
//! servers and controllers can read these without reaching up into
//! `config`, which turns flags into them.

pub mod clocks;
pub mod duration;
pub mod feature_gates;

/// Go's `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}
