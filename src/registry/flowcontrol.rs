//! Strategies of flowcontrol.apiserver.k8s.io. TODO(helper): being written.

use super::strategy::Strategy;

pub struct FlowSchemaStrategy;

impl Strategy for FlowSchemaStrategy {}

pub struct PriorityLevelConfigurationStrategy;

impl Strategy for PriorityLevelConfigurationStrategy {}

