//! Where threads and their messages persist: the [`MessageStore`] trait, the capabilities a
//! store may add ([`InboxStore`], [`ApprovalStore`], [`RememberedApprovalStore`], [`RunOwnership`],
//! [`EventLog`]), and the
//! three stores.
//!
//! | store | feature | for |
//! |---|---|---|
//! | [`InMemoryStore`] | always | tests and examples; the runtime's default; gone with the process |
//! | `SqliteStore` | `sqlite` (default) | one process: an embedded, bundled SQLite file (`SqliteStore::open(path)`) |
//! | `PostgresStore` | `postgres` | many processes sharing one database (`PostgresStore::connect(url)`), tables in the schema `agent_hooks` by default |
//!
//! Give one to [`RuntimeBuilder::store`](crate::RuntimeBuilder::store); every store passes the
//! same store suite.

mod approval_store;
mod error;
mod event_log;
mod inbox;
mod memory;
mod message_store;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
mod remembered_store;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
mod run_ownership;
#[cfg(feature = "sqlite")]
mod sqlite;
mod thread_record;
mod user_values;

pub use approval_store::ApprovalStore;
pub use error::{StoreError, StoreErrorKind};
pub use event_log::{EventLog, EventSubscription, StoredEvent};
pub use inbox::{InboxEntry, InboxStore, InputTake, TakeStatus};
pub use memory::InMemoryStore;
pub use message_store::{IntoMessageStore, MessageStore};
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{DEFAULT_SCHEMA, PostgresOptions, PostgresStore};
pub use remembered_store::RememberedApprovalStore;
pub use run_ownership::{RunOwnership, RunPermit};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;
pub use thread_record::ThreadRecord;
pub use user_values::{UserChange, UserChangeKind, UserValue};

pub use crate::events::ThreadStatus;
pub use crate::reasons::{FailReason, StopReason};
