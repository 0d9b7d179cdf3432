//! The built-in catalog `kapi serve` starts with.

use crate::api::catalog::{Catalog, Resource};

/// The catalog `kapi serve` starts with: every built-in resource.
pub fn builtin_catalog() -> Catalog {
    let catalog = Catalog::default();
    for def in crate::api::builtin::BUILTINS {
        catalog.add(Resource::from_builtin(def));
    }
    catalog
}
