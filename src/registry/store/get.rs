//! get (upstream's `Store.Get`): one object from the watch cache, a
//! consistent read unless the client settles for an older revision.

use bytes::Bytes;
use serde_json::json;

use super::{parse_rv, storage_err, Registry};
use crate::api::ApiError;
use crate::trace;

impl Registry {
    /// get, from the watch cache: `rv` of `None` or "" is a consistent read, "0" any.
    pub async fn get_object(
        &self,
        namespace: &str,
        name: &str,
        rv: Option<&str>,
    ) -> Result<Bytes, ApiError> {
        let consistent = rv.is_none_or(|s| s.is_empty());
        let not_older_than = match rv.filter(|s| !s.is_empty()) {
            Some(r) => parse_rv(r)?,
            None => 0,
        };
        let key = self.key(namespace, name);
        let began = trace::start_read();
        let cacher = self.cacher()?;
        // Mostly the cache has what is asked already: then no future (a
        // GET's would be the largest part of the request's).
        let obj = match cacher.get_now(&key, consistent, not_older_than) {
            Some(found) => Ok(found),
            None => Box::pin(cacher.get(&key, consistent, not_older_than)).await,
        };
        trace::stage(
            began,
            cacher.read_from(),
            if matches!(obj, Ok(Some(_))) {
                "ok"
            } else {
                "error"
            },
            || {
                json!({
                    "operation": "get",
                    "key": key,
                    "read": if consistent { "consistent (waits for the cache to reach storage's revision)" } else { "any revision at least resourceVersion" },
                    "found": matches!(obj, Ok(Some(_))),
                })
            },
        );
        let obj = obj.map_err(|e| storage_err(&self.resource, "get", name, e))?;
        let Some(o) = obj else {
            return Err(ApiError::not_found(
                &self.resource.group,
                &self.resource.plural,
                name,
            ));
        };
        let began = trace::start_read();
        let bytes = self.served(o.json.clone());
        trace::stage(began, "encode", "ok", || self.decode_detail(bytes.len()));
        Ok(bytes)
    }
}
