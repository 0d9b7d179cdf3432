//! Strategies of discovery.k8s.io. TODO(helper): being written.

use super::strategy::Strategy;

pub struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {}

