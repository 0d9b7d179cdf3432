//! Targets `json_patch`, `merge_patch`, `strategic_merge_patch` and
//! `server_side_apply`: a patch of each type on a live base object.

use super::env::{block_on, dry_run, env};
use crate::registry::{FieldValidation, PatchType};

/// The first byte picks the live object and options:
/// bits 0-2 the base object (Deployment, Pod, ConfigMap, Service, Widget,
/// Namespace, ClusterRole, the Widget CRD), bit 3 the status subresource,
/// bit 4 strict field validation, bit 5 `force` (apply), bit 6 the field
/// manager (`kubectl`, who owns the base's fields, or `fuzz`). The rest
/// is the patch body, sent as `patch_type`.
pub fn patch_object(input: &[u8], patch_type: PatchType) {
    let Some((&sel, patch)) = input.split_first() else {
        return;
    };
    let e = env();
    let base = &e.bases[sel as usize % e.bases.len()];
    let r = &base.resource;
    let Some(registry) = e.registries.get(&r.group, &r.version, &r.plural) else {
        return;
    };
    let ns = if r.namespaced { "default" } else { "" };
    let sub = (sel & 0x08 != 0 && r.subresource("status").is_some()).then_some("status");
    let validation = if sel & 0x10 != 0 {
        FieldValidation::Strict
    } else {
        FieldValidation::Warn
    };
    let manager = if sel & 0x40 != 0 { "kubectl" } else { "fuzz" };
    let mut opts = dry_run(manager, validation);
    opts.force = patch_type == PatchType::Apply && sel & 0x20 != 0;
    let _ = block_on(registry.patch(ns, &base.name, patch_type, patch, sub, &opts));
}
