//! Storage with Kubernetes semantics: resourceVersion is the storage
//! revision. Two backends keep one raw contract ([`backend::Backend`]): the
//! embedded MVCC store and etcd v3. [`store::Store`] adds upstream's
//! `storage.Interface` semantics on top; the watch cache sits in front.

pub mod backend;
pub mod cache_watch;
pub mod cacher;
pub mod cacher_set;
pub mod codec;
pub mod dump;
pub mod embedded;
pub mod encryption;
pub mod etcd;
pub mod predicate;
pub mod routed;
pub mod rv;
pub mod seed;
pub mod store;
pub mod uncached;
pub mod undelivered;

pub use backend::{Backend, BackendError, Event, EventKind, KeyValue};
