//! REST handlers: one request on one resource, from the URL and query to
//! the registry and back, with upstream's content negotiation, list and
//! watch framing, Tables and error bodies.
//!
//! One request on a resource goes: `handler` (ownership, routing, the verb
//! dispatch) reads its `query` options and its `body` (or its
//! `delete_options`), calls the registry, and answers through `transform`
//! (object, list, Table, PartialObjectMetadata) and `responses` (the
//! negotiated encoding). `watch` streams; `subresources` dispatches the
//! parts of an object with their own answers: `scale`, `binding`, `token`,
//! `proxy`.

pub mod componentstatus;
pub mod discovery;
pub mod negotiation;
pub mod openapi;
pub mod openapi_pb;
pub mod responses;
pub mod table;

mod body;
mod delete_options;
mod handler;
mod proxy;
mod query;
mod scale;
mod subresources;
mod transform;
mod watch;

pub use body::declared_too_large;
pub use handler::ResourceHandler;

/// upstream's limit on request bodies.
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Items above which a list's body is built off the runtime thread: from
/// about here a body is a millisecond or so of work, well above what
/// handing the worker to another thread costs (kapi runs one worker per
/// core but one, so without this a flood of lists would use one core).
const BIG_LIST: usize = 200;

/// The big lists whose bodies are built at once: one per core.
fn big_list_encoders() -> &'static tokio::sync::Semaphore {
    static ENCODERS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    ENCODERS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        tokio::sync::Semaphore::new(cores)
    })
}
