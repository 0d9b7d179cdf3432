//! Strategies of resource.k8s.io. TODO(helper): being written.

use crate::registry::strategy::Strategy;

pub struct DeviceClassStrategy;

impl Strategy for DeviceClassStrategy {}

pub struct ResourceClaimStrategy;

impl Strategy for ResourceClaimStrategy {}

pub struct ResourceClaimTemplateStrategy;

impl Strategy for ResourceClaimTemplateStrategy {}

pub struct ResourceSliceStrategy;

impl Strategy for ResourceSliceStrategy {}

