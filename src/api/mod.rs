//! The API machinery shared by every server: Status errors and, as the
//! built-in API grows, the catalog of resources, selectors and Tables.

pub mod catalog;
pub mod protobuf;
pub mod selector;
pub mod status;

pub use status::{ApiError, Reason};
