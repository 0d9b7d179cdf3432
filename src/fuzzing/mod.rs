//! Entry points for the fuzz targets in `fuzz/` (`cargo fuzz`, see
//! `scripts/fuzz`): thin wrappers that take client bytes through the same
//! parsers and write paths the server runs on them. Not an API: hidden from
//! the docs and free to change with the targets.
//!
//! No function here may panic, hang or grow memory without bound for any
//! input: the fuzzer reports each of those as a bug of the code it calls.
//!
//! Writes go through the real [`Registry`] (decode, defaulting, admission
//! with an empty chain, managedFields, validation) as dry runs, over a
//! storage backend that holds one valid object per resource prefix (every
//! name under a prefix reads as that object): patches, updates and applies
//! meet a realistic live object and nothing is ever written.
//!
//! Where the server's own function is private, the few lines it runs are
//! repeated here and named at the place they stand in for:
//! `endpoints::body::decode_body`, `apiextensions::controller::resources_of`
//! and `registry::Registry::with_scope`.
//!
//! One file per target (or family of targets): `decode`, `patch`,
//! `selectors`, `request_info`, `resource_version`, `cel`, `crd_schema`,
//! `local_files`; what they share is in `env` (built once), `backend` and
//! `widget`.

mod backend;
mod cel;
mod crd_schema;
mod decode;
mod env;
mod local_files;
mod patch;
mod request_info;
mod resource_version;
mod selectors;
mod widget;

use env::env;

pub use crate::endpoints::negotiation::BodyFormat as Format;
pub use crate::registry::PatchType as Patch;
pub use cel::cel_expression;
pub use crd_schema::crd_schema;
pub use decode::{decode_object, decode_protobuf_message};
pub use local_files::{kubeconfig, token_file};
pub use patch::patch_object;
pub use request_info::request_info;
pub use resource_version::{continue_token, resource_version};
pub use selectors::{field_selector, label_selector};
pub use widget::{widget_crd, widget_schema};

const PREFIX: &str = "/registry";
/// The revision the fuzz backend is at; every object was written at it.
const REV: i64 = 42;

/// Sources whose panics kapi catches on purpose (`apiextensions::cel::env`
/// runs the `cel` crate's parser and interpreter under `catch_unwind`).
const CAUGHT_PANICS: &[&str] = &["/cel-0.", "/kube-cel-"];

/// Call from the target's `init`: builds everything the targets share (the
/// catalog, schemas, base objects) ahead of the first input, and lets
/// panics that kapi catches itself pass (libfuzzer-sys aborts on every
/// panic, caught or not); each such place is printed once.
pub fn init() {
    let abort = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let caught = info
            .location()
            .is_some_and(|l| CAUGHT_PANICS.iter().any(|c| l.file().contains(c)));
        if !caught {
            return abort(info);
        }
        static SEEN: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
            std::sync::Mutex::new(None);
        let at = info.location().map(|l| l.to_string()).unwrap_or_default();
        if let Ok(mut seen) = SEEN.lock() {
            if seen.get_or_insert_with(Default::default).insert(at.clone()) {
                eprintln!("kapi-fuzz: panic caught by kapi (not a crash) at {at}: {info}");
            }
        }
    }));
    let _ = env();
}
