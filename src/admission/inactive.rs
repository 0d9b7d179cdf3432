//! Plugins upstream enables by default whose subject is off in v1.34's
//! defaults, so upstream's own plugin does nothing either:
//! ClusterTrustBundleAttest (ClusterTrustBundle is a beta API, not served
//! by default), PodTopologyLabels (the PodTopologyLabelsAdmission gate is
//! alpha) and MutatingAdmissionPolicy (a beta API, not served by default).
//! They are in the chain by name so that `--disable-admission-plugins`
//! and the list of enabled plugins read as upstream's.

use super::{Attributes, Context, ValidatingPlugin};
use crate::api::ApiError;

pub struct Inactive(pub &'static str);

#[async_trait::async_trait]
impl ValidatingPlugin for Inactive {
    fn name(&self) -> &'static str {
        self.0
    }

    async fn validate(&self, _a: &Attributes<'_>, _ctx: &Context) -> Result<Vec<String>, ApiError> {
        Ok(Vec::new())
    }
}
