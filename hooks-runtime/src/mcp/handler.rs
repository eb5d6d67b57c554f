//! The client side of one connection: the runtime's name in the handshake, progress
//! notifications to the calls they belong to (P4), and tool-list changes (P5).

use std::sync::Weak;

use rmcp::ClientHandler;
use rmcp::model::{ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};

/// What a connection tells its server (`server.rs`).
pub(super) trait Notified: Send + Sync + 'static {
    /// A progress notification, for the call whose token it carries.
    fn progress(&self, notification: ProgressNotificationParam);
    /// `notifications/tools/list_changed`: list the tools again on `peer`.
    fn tools_changed(self: std::sync::Arc<Self>, peer: rmcp::service::Peer<RoleClient>);
}

/// Holds its server weakly: the connection does not keep the server alive.
pub(super) struct Handler {
    server: Weak<dyn Notified>,
}

impl Handler {
    pub(super) fn new(server: Weak<dyn Notified>) -> Self {
        Handler { server }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("hooks-runtime", env!("CARGO_PKG_VERSION"));
        config
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            server.progress(params);
        }
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Some(server) = self.server.upgrade() {
            server.tools_changed(context.peer);
        }
    }
}
