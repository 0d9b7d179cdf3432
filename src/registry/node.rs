//! Strategies of node.k8s.io. TODO(helper): being written.

use super::strategy::Strategy;

pub struct RuntimeClassStrategy;

impl Strategy for RuntimeClassStrategy {}

