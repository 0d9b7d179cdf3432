//! Named post-start hooks: work that runs once the server listens (as
//! upstream's `AddPostStartHook`), each with a readiness check
//! `poststarthook/<name>` that fails until the hook has finished.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::healthz::HealthCheck;

type HookFn = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>> + Send>;

pub struct PostStartHook {
    pub name: String,
    run: HookFn,
    done: Arc<AtomicBool>,
}

#[derive(Default)]
pub struct PostStartHooks {
    hooks: Vec<PostStartHook>,
}

impl PostStartHooks {
    pub fn add<F, Fut>(&mut self, name: impl Into<String>, f: F)
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        self.hooks.push(PostStartHook {
            name: name.into(),
            run: Box::new(move || Box::pin(f())),
            done: Arc::new(AtomicBool::new(false)),
        });
    }

    /// One check per hook, for `/healthz`, `/livez` and `/readyz`.
    pub fn checks(&self) -> Vec<HealthCheck> {
        self.hooks
            .iter()
            .map(|h| {
                let done = h.done.clone();
                HealthCheck::new(format!("poststarthook/{}", h.name), move || {
                    let finished = done.load(Ordering::Acquire);
                    async move {
                        if finished {
                            Ok(())
                        } else {
                            Err("not finished".to_string())
                        }
                    }
                })
            })
            .collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.hooks.iter().map(|h| h.name.clone()).collect()
    }

    /// Runs every hook concurrently; resolves when all are done. A failed
    /// hook is logged and stays unready, as upstream leaves it.
    pub async fn run_all(self) {
        let tasks = self.hooks.into_iter().map(|h| async move {
            let name = h.name;
            match (h.run)().await {
                Ok(()) => {
                    h.done.store(true, Ordering::Release);
                    tracing::debug!(hook = %name, "post-start hook finished");
                }
                Err(e) => tracing::error!(hook = %name, error = %e, "post-start hook failed"),
            }
        });
        futures::future::join_all(tasks).await;
    }
}
