//! Strategy of events.k8s.io/v1 Event. TODO(helper): being written.

use super::strategy::Strategy;

pub struct EventStrategy;

impl Strategy for EventStrategy {}

