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

    async fn admit(
        &self,
        _a: &mut Attributes<'_>,
        _ctx: &Context,
    ) -> Result<Vec<String>, ApiError> {
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
        Err(forbidden(
            a,
            "admission control is denying all modifications",
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::common::testing::{create_attrs, env};
    use super::*;

    /// Tested in process: a server with AlwaysDeny cannot write its own
    /// bootstrap objects either (as upstream's cannot), so it never
    /// becomes ready for an end-to-end test.
    #[tokio::test]
    async fn always_deny_refuses_and_always_admit_lets_through() {
        let env = env().await;
        let ctx = Context {
            registries: env.registries.clone(),
        };
        let cms = env.resource("", "v1", "configmaps");
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        let mut a = create_attrs(&cms, "default", "x", cm.clone());
        let e = AlwaysDeny.admit(&mut a, &ctx).await.expect_err("denied");
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "configmaps \"x\" is forbidden: admission control is denying all modifications"
        );
        let mut a = create_attrs(&cms, "default", "x", cm.clone());
        assert!(AlwaysAdmit.admit(&mut a, &ctx).await.is_ok());
        assert_eq!(a.object, Some(cm));
    }
}
