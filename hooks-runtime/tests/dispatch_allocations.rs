//! The allocation promises of dispatch (docs/performance.md), counted exactly rather than timed: a chain of
//! in-place sync hooks allocates nothing, and a chain of in-place async hooks allocates one box
//! per hook (its future) and nothing for the chain itself.
//!
//! A counting global allocator (`stats_alloc`) sees the whole process, so each count is the
//! least of several runs: something else in the process (the test harness) can only add to a
//! run's count, never take from it.

use std::alloc::System;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use hooks_runtime::__bench;
use hooks_runtime::__private::ResolvedHook;
use hooks_runtime::definition::HookDef;
use hooks_runtime::prelude::*;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[hook(filter_messages, id = "tag_in_place")]
fn tag_in_place(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    if let Some(last) = messages.last_mut() {
        last.id.push('+');
    }
}

#[hook(filter_messages, id = "check_in_place")]
fn check_in_place(_state: &ThreadState, messages: &mut Vec<HookMessage>) -> Result<(), HookError> {
    if messages.is_empty() { Err(HookError::new("no messages")) } else { Ok(()) }
}

#[hook(filter_messages, id = "tag_async")]
async fn tag_async(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    if let Some(last) = messages.last_mut() {
        last.id.push('*');
    }
}

fn chain(defs: &[&'static HookDef]) -> __bench::Chain {
    let entries =
        defs.iter().map(|def| ResolvedHook::new(def, HookExecutionContext::agent("alloc_agent"), None, None)).collect();
    __bench::Chain::new(HookKind::FilterMessages, entries)
}

fn history() -> Vec<HookMessage> {
    (0..10).map(|i| HookMessage::new(format!("msg_{i}"), Role::User, format!("message {i}"), 0)).collect()
}

fn allocations() -> usize {
    let stats = GLOBAL.stats();
    stats.allocations + stats.reallocations
}

/// The least number of allocations `run` made over several runs.
fn fewest_allocations(mut run: impl FnMut()) -> usize {
    (0..20)
        .map(|_| {
            let before = allocations();
            run();
            allocations() - before
        })
        .min()
        .unwrap()
}

#[test]
fn in_place_chains_allocate_nothing_when_sync_and_one_box_per_async_hook() {
    let state = ThreadState::detached("thread_alloc", "alloc_agent");
    let mut messages = history();
    // Room for the ids to grow, so the hooks' own pushes do not allocate.
    messages.iter_mut().for_each(|message| message.id.reserve(64));

    let sync_chain = chain(&[
        <tag_in_place as Hook>::DEF,
        <check_in_place as Hook>::DEF,
        <tag_in_place as Hook>::DEF,
        <check_in_place as Hook>::DEF,
    ]);
    let sync = fewest_allocations(|| __bench::filter_messages_sync(&sync_chain, &state, &mut messages));
    assert_eq!(sync, 0, "a chain of in-place sync hooks must allocate nothing");
    assert!(messages[9].id.starts_with("msg_9++"), "the sync hooks ran: {}", messages[9].id);

    let async_chain = chain(&[
        <tag_async as Hook>::DEF,
        <tag_in_place as Hook>::DEF,
        <tag_async as Hook>::DEF,
        <tag_async as Hook>::DEF,
    ]);
    let before = messages[9].id.len();
    let asynchronous = fewest_allocations(|| {
        let mut dispatch = pin!(__bench::filter_messages(&async_chain, &state, &mut messages));
        let polled = dispatch.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(matches!(polled, Poll::Ready(())), "hooks that answer at once finish in one poll");
    });
    assert_eq!(asynchronous, 3, "three async hooks: one box each, nothing for the chain");
    assert_eq!(messages[9].id.len() - before, 4 * 20, "every hook ran in every run");
}
