//! Patch formats kapi applies itself: strategic merge patch and the
//! per-field patch metadata of the built-in types.

pub mod json;
pub mod meta;
pub mod strategic;
