//! The kubelet and CertificateSigningRequests: requests to the kubelet
//! signers must carry the node's own name.

use super::{str_at, unexpected_type, NODE_USER_PREFIX};
use crate::admission::certificates::parse_csr;
use crate::admission::common::forbidden;
use crate::admission::{Attributes, Operation};
use crate::api::ApiError;

/// The signers whose requests must carry the node's own name.
const KUBELET_SERVING_SIGNER: &str = "kubernetes.io/kubelet-serving";
const KUBELET_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client-kubelet";

/// AllowInsecureKubeletCertificateSigningRequests is off in v1.34: a
/// node's requests to the kubelet signers must name the node itself.
pub(super) fn admit_csr(node: &str, a: &Attributes<'_>) -> Result<(), ApiError> {
    if a.operation != Operation::Create {
        return Ok(());
    }
    let csr = a.object.as_ref().ok_or_else(|| unexpected_type(a))?;
    let signer = str_at(csr, &["spec", "signerName"]);
    if signer != KUBELET_SERVING_SIGNER && signer != KUBELET_CLIENT_SIGNER {
        return Ok(());
    }
    let subject = parse_csr(&csr["spec"]["request"])
        .map_err(|e| forbidden(a, format!("unable to parse csr: {e}")))?;
    if subject.common_name != format!("{NODE_USER_PREFIX}{node}") {
        return Err(forbidden(
            a,
            format!("can only create a node CSR with CN={NODE_USER_PREFIX}{node}"),
        ));
    }
    Ok(())
}
