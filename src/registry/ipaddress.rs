//! Strategies of networking.k8s.io's IP address allocation kinds. TODO(helper): being written.

use super::strategy::Strategy;

pub struct IPAddressStrategy;

impl Strategy for IPAddressStrategy {}

pub struct ServiceCIDRStrategy;

impl Strategy for ServiceCIDRStrategy {}

