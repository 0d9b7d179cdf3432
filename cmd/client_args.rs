//! The flags every client command shares, with kubectl's names.

use std::path::PathBuf;

use kapi::clientcmd::Selection;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClientArgs {
    /// The kubeconfig file (default: every file of $KUBECONFIG, merged as
    /// kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use (default: its current-context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl ClientArgs {
    pub fn selection(&self) -> Selection {
        Selection {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            server: None,
        }
    }
}
