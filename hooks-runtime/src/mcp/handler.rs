//! The client side of one connection: the runtime's name in the handshake, progress
//! notifications to the calls they belong to (P4), and tool-list changes (P5).

use std::sync::Weak;

use rmcp::ClientHandler;
use rmcp::model::{ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};

use super::server::McpServer;

/// Holds its server weakly: the connection does not keep the server alive.
pub(super) struct Handler {
    server: Weak<McpServer>,
}

impl Handler {
    pub(super) fn new(server: Weak<McpServer>) -> Self {
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
        let server = self.server.clone();
        // Listed on a task of its own: the connection's loop must go on to read the answer.
        tokio::spawn(async move {
            if let Some(server) = server.upgrade() {
                server.relist(context.peer).await;
            }
        });
    }
}
