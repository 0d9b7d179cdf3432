//! Server-side Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`)
//! and PartialObjectMetadata.

use bytes::Bytes;
use serde_json::{json, Value};

use crate::registry::strategy::{AGE_DESCRIPTION, NAME_DESCRIPTION};
use crate::registry::Registry;

/// `PartialObjectMetadata` of an object.
pub fn partial(v: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": v.get("metadata").cloned().unwrap_or(json!({}))})
}

/// A Table of `objs` with the resource's columns (upstream's default Name
/// and Created At when it has no printer).
pub fn table(
    registry: &Registry,
    objs: &[Value],
    rv: &str,
    cont: Option<&str>,
    remaining: Option<i64>,
    include_object: bool,
) -> Bytes {
    let dynamic = registry.strategy.dynamic_columns();
    let (defs, rows): (Vec<Value>, Vec<Value>) = match (dynamic, registry.strategy.columns()) {
        (Some((defs, cells)), _) => {
            let rows = objs
                .iter()
                .map(|o| row(cells(o), o, include_object))
                .collect();
            (defs, rows)
        }
        (None, cols) => match cols {
            Some(cols) => {
                let defs = cols
                .iter()
                .map(|c| json!({"name": c.name, "type": c.kind, "format": c.format, "description": c.description, "priority": c.priority}))
                .collect();
                let rows = objs
                    .iter()
                    .map(|o| {
                        let cells: Vec<Value> = cols.iter().map(|c| (c.cell)(o)).collect();
                        row(cells, o, include_object)
                    })
                    .collect();
                (defs, rows)
            }
            None => {
                let defs = vec![
                    json!({"name": "Name", "type": "string", "format": "name", "description": NAME_DESCRIPTION, "priority": 0}),
                    json!({"name": "Created At", "type": "date", "format": "", "description": AGE_DESCRIPTION, "priority": 0}),
                ];
                let rows = objs
                    .iter()
                    .map(|o| {
                        row(
                            vec![
                                o["metadata"]["name"].clone(),
                                o["metadata"]["creationTimestamp"].clone(),
                            ],
                            o,
                            include_object,
                        )
                    })
                    .collect();
                (defs, rows)
            }
        },
    };
    let mut meta = serde_json::Map::new();
    meta.insert("resourceVersion".into(), json!(rv));
    if let Some(c) = cont {
        meta.insert("continue".into(), json!(c));
    }
    if let Some(n) = remaining {
        meta.insert("remainingItemCount".into(), json!(n));
    }
    let t = json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": defs, "rows": rows});
    Bytes::from(crate::api::go_json::to_vec(&t))
}

fn row(cells: Vec<Value>, o: &Value, include_object: bool) -> Value {
    let object = if include_object {
        o.clone()
    } else {
        partial(o)
    };
    json!({"cells": cells, "object": object})
}
