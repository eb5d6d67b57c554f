//! The message lifecycle (M1-M5): every insert through `before_create_message` and
//! `after_create_message`, every update through `before_update_message` and
//! `after_update_message`. Which writes a hook may prevent is the caller's `FailureRule`. Each
//! chain's hook point is noted first, so that a hook call back into the thread refused past the
//! re-entrancy limit (E8) can name where it came from.

use hooks_core::{HookError, HookKind, HookMessage, MessageRecord, MessageUpdate, ThreadState};

use super::journal::Origin;
use super::pipeline::Pipeline;
use super::reentry::note_point;
use crate::dispatch::{self, FailureRule};
use crate::store::StoreError;

/// Why a message was not created.
#[derive(Debug)]
pub(crate) enum CreateError {
    /// A `before_create_message` hook prevented it (M2).
    Prevented(HookError),
    /// The store failed.
    Store(StoreError),
    /// The inbox entry the message came from was no longer there: another run took it.
    Taken,
}

impl CreateError {
    pub(crate) fn into_hook_error(self) -> HookError {
        match self {
            CreateError::Prevented(error) => error,
            CreateError::Store(error) => HookError::new(error.to_string()).with_source(error),
            CreateError::Taken => HookError::new("the queued message was already taken by another run"),
        }
    }
}

/// M1-M3: fills id and time, runs `before_create_message` under `rule`, inserts what it
/// returned, then runs `after_create_message`, whose failures leave the message stored. The
/// message is handed to the store uncopied.
pub(crate) async fn create(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    record: MessageRecord,
    rule: FailureRule,
) -> Result<(), CreateError> {
    create_keeping(pipeline, state, record, rule, Origin::Run, |_| ()).await
}

/// [`create`], returning the message as stored (for a caller that hands it back, as
/// `inject_message` does): a copy of it made before the store takes it.
pub(crate) async fn create_returning(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    record: MessageRecord,
    rule: FailureRule,
) -> Result<HookMessage, CreateError> {
    create_keeping(pipeline, state, record, rule, Origin::Run, HookMessage::clone).await
}

/// [`create`] for a message from `origin`.
pub(crate) async fn create_from(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    record: MessageRecord,
    rule: FailureRule,
    origin: Origin<'_>,
) -> Result<(), CreateError> {
    create_keeping(pipeline, state, record, rule, origin, |_| ()).await
}

/// [`create_from`], returning what `keep` takes of the message before it is stored.
async fn create_keeping<T>(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    mut record: MessageRecord,
    rule: FailureRule,
    origin: Origin<'_>,
    keep: impl FnOnce(&HookMessage) -> T,
) -> Result<T, CreateError> {
    // One reading of the clock for the id and the time.
    if record.id.is_empty() || record.created_at == 0 {
        let now = crate::ids::since_epoch();
        if record.id.is_empty() {
            record.id = crate::ids::new_id_at("msg", now);
        }
        if record.created_at == 0 {
            record.created_at = crate::ids::ms(now);
        }
    }
    note_point(pipeline.shared, HookKind::BeforeCreateMessage);
    if let Some(chain) = pipeline.chain(HookKind::BeforeCreateMessage) {
        let prevented = dispatch::await_point_boxed!(dispatch::before_create_message(&chain, state, &mut record, rule));
        if let Err(error) = prevented {
            // M7, M10: what the origin writes goes on without the message.
            pipeline.shared.journal.store_prevented(origin).await.map_err(CreateError::Store)?;
            return Err(CreateError::Prevented(error));
        }
    }
    let message = message_of(&mut record, pipeline.chain(HookKind::AfterCreateMessage).is_some());
    let kept = keep(&message);
    if !pipeline.shared.journal.store_message(message, origin).await.map_err(CreateError::Store)? {
        return Err(CreateError::Taken);
    }
    note_point(pipeline.shared, HookKind::AfterCreateMessage);
    if let Some(chain) = pipeline.chain(HookKind::AfterCreateMessage) {
        dispatch::await_point_boxed!(dispatch::after_create_message(&chain, state, &record));
    }
    Ok(kept)
}

/// The message to insert. The record outlives the insert only for `after_create_message` hooks
/// (`kept`): without them it becomes the message as it is, uncopied, and an empty record stays.
fn message_of(record: &mut MessageRecord, kept: bool) -> HookMessage {
    if kept {
        record.clone().into_message()
    } else {
        // An empty record of the same role allocates nothing.
        std::mem::replace(record, MessageRecord::new(record.role, "")).into_message()
    }
}

/// M4-M5: `before_update_message` (its failure prevents the update and is returned), the
/// update, then `after_update_message`.
pub(crate) async fn update(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    message_id: &str,
    mut update: MessageUpdate,
) -> Result<HookMessage, HookError> {
    note_point(pipeline.shared, HookKind::BeforeUpdateMessage);
    if let Some(chain) = pipeline.chain(HookKind::BeforeUpdateMessage) {
        dispatch::await_point!(dispatch::before_update_message(&chain, state, message_id, &mut update))?;
    }
    let stored = pipeline
        .shared
        .journal
        .update_message(message_id, &update)
        .await
        .map_err(|error| HookError::new(error.to_string()).with_source(error))?;
    note_point(pipeline.shared, HookKind::AfterUpdateMessage);
    if let Some(chain) = pipeline.chain(HookKind::AfterUpdateMessage) {
        dispatch::await_point!(dispatch::after_update_message(&chain, state, &stored));
    }
    Ok(stored)
}
