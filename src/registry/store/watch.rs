//! watch (upstream's `Store.Watch`): a watch from the cache, starting where
//! the request's resourceVersion and sendInitialEvents say.

use super::{parse_rv, storage_err, Registry};
use crate::api::ApiError;
use crate::registry::ListParams;
use crate::storage::cacher::{CacheWatch, WatchOptions, WatchStart};

impl Registry {
    /// A watch from the cache; `rv` "" is the consistent current state,
    /// "0" any state, N after N (or, with initial events, a state not
    /// older than N). `deadline` is when the watch will end.
    pub async fn watch(
        &self,
        namespace: &str,
        name: Option<&str>,
        params: &ListParams,
        send_initial_events: bool,
        bookmarks: bool,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<CacheWatch, ApiError> {
        let mut filter = self.filter(namespace, params)?;
        if let Some(n) = name {
            filter.exact_key = Some(self.key(namespace, n));
        }
        let start = match params.resource_version.as_deref().unwrap_or("") {
            "" => WatchStart::Now { consistent: true },
            "0" => WatchStart::Now { consistent: false },
            s => WatchStart::After(parse_rv(s)?),
        };
        self.cacher()?
            .watch(WatchOptions {
                start,
                filter,
                send_initial_events,
                bookmarks,
                deadline,
            })
            .await
            .map_err(|e| storage_err(&self.resource, "watch", name.unwrap_or(""), e))
    }
}
