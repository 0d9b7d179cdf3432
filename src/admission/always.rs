//! AlwaysAdmit and AlwaysDeny (plugin/pkg/admission/admit and deny): the
//! two plugins upstream keeps for tests and for locking a server down.

use super::common::forbidden;
use super::{Attributes, Context, MutatingPlugin};
use crate::api::ApiError;

pub struct AlwaysAdmit;

#[async_trait::async_trait]
impl MutatingPlugin for AlwaysAdmit {
    fn name(&self) -> &'static str {
        "AlwaysAdmit"
    }

    async fn admit(&self, _a: &mut Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        Ok(Vec::new())
    }
}

pub struct AlwaysDeny;

#[async_trait::async_trait]
impl MutatingPlugin for AlwaysDeny {
    fn name(&self) -> &'static str {
        "AlwaysDeny"
    }

    async fn admit(&self, a: &mut Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        Err(forbidden(a, "admission control is denying all modifications"))
    }
}
