//! Y14: a command runs in a process group of its own, and the whole group is killed at the
//! timeout, when the command is done, when its hook's future is dropped and when the async
//! runtime shuts down. Only a process that leaves the group on purpose (`setsid`) lives on.
//!
//! Processes are found by a `sleep` argument unique to the test (`/proc/*/cmdline`); a killed
//! process that is a zombie has an empty command line, so it does not count as alive.

#![cfg(feature = "declarative")]
#![cfg(target_os = "linux")]

use crate::declarative_support;
use crate::support_processes::processes_with_arg;

use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use declarative_support::{Logs, ScratchDir, ctx};
use hooks_runtime::declarative::{DeclarativeHookRegistry, DefaultHookExecutor, HookAction, HookConfig, HookEvent};

/// How long a killed process may take to disappear on a busy machine.
const SETTLE: Duration = Duration::from_secs(10);

fn on_stop(command: String, timeout: Duration) -> DeclarativeHookRegistry {
    DeclarativeHookRegistry::of([HookConfig::new(HookEvent::OnStop, None, HookAction::command(command))])
        .with_executor(DefaultHookExecutor::new().with_command_timeout(timeout))
}

/// A `sleep` duration that no other process on the machine uses: 200+ seconds, with this test
/// process's id as the fraction.
fn unique_sleep() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{}.{}", 200 + NEXT.fetch_add(1, Ordering::SeqCst), std::process::id())
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < SETTLE, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until a process with `arg` runs, then gives up on `fire` (drops it).
async fn drop_once_running(fire: impl Future<Output = ()>, arg: &str) {
    let running = wait_until("the command runs", || !processes_with_arg(arg).is_empty());
    tokio::select! {
        () = fire => panic!("the command finished on its own"),
        () = running => {}
    }
}

#[tokio::test]
async fn y14_background_job_is_killed_at_the_timeout() {
    // The case this guards: with only `sh` killed, the background subshell would write `survivor`.
    let (logs, _guard) = Logs::capture();
    let dir = ScratchDir::new("y14-background");
    let survivor = dir.file("survivor");
    let sleep = unique_sleep();
    let registry = on_stop(format!("(sleep {sleep}; touch '{survivor}') & sleep 60"), Duration::from_millis(300));

    // A hook that waited for its command would take its 60 s: the guard fails first.
    tokio::time::timeout(Duration::from_secs(30), registry.fire_event(HookEvent::OnStop, &ctx(&[])))
        .await
        .expect("the command was not killed at its timeout");
    assert!(logs.text().contains("did not finish within 300ms and was killed"), "{}", logs.text());

    // The background job's `sleep` goes with the group; a surviving job would keep it running.
    wait_until("the background job is gone", || processes_with_arg(&sleep).is_empty()).await;
    assert!(!Path::new(&survivor).exists(), "a background job of the command outlived its hook");
}

#[tokio::test]
async fn y14_grandchild_of_a_nested_shell_is_killed_at_the_timeout() {
    let sleep = unique_sleep();
    let registry = on_stop(format!("sh -c \"sh -c 'exec sleep {sleep}'; true\""), Duration::from_secs(3));
    let context = ctx(&[]);
    let fire = registry.fire_event(HookEvent::OnStop, &context);
    // The grandchild must have run, or the check below would prove nothing.
    let seen = std::sync::atomic::AtomicBool::new(false);
    let watch = async {
        wait_until("the grandchild runs", || !processes_with_arg(&sleep).is_empty()).await;
        seen.store(true, Ordering::SeqCst);
        std::future::pending::<()>().await;
    };
    tokio::select! {
        () = fire => {}
        () = watch => unreachable!(),
    }
    assert!(seen.load(Ordering::SeqCst), "the grandchild never ran");
    wait_until("the grandchild is gone", || processes_with_arg(&sleep).is_empty()).await;
}

#[tokio::test]
async fn y14_background_child_of_a_finished_command_is_killed_when_the_hook_ends() {
    let (logs, _guard) = Logs::capture();
    let sleep = unique_sleep();
    // The shell exits 0 at once and leaves `sleep` running with its output elsewhere.
    let registry = on_stop(format!("sleep {sleep} > /dev/null 2>&1 &"), Duration::from_secs(30));
    registry.fire_event(HookEvent::OnStop, &ctx(&[])).await;
    wait_until("the background child is gone", || processes_with_arg(&sleep).is_empty()).await;
    assert_eq!(logs.events("WARN"), Vec::<String>::new(), "a command that succeeded is no failure");
}

#[tokio::test]
async fn y14_dropping_the_hook_future_kills_the_group() {
    let sleep = unique_sleep();
    let registry = on_stop(format!("sleep {sleep} & sleep {sleep}"), Duration::from_secs(60));
    let context = ctx(&[]);
    drop_once_running(registry.fire_event(HookEvent::OnStop, &context), &sleep).await;
    wait_until("every sleep is gone", || processes_with_arg(&sleep).is_empty()).await;
}

#[test]
fn y14_runtime_shutdown_kills_the_group() {
    let sleep = unique_sleep();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let registry = on_stop(format!("sleep {sleep} & sleep {sleep}"), Duration::from_secs(60));
    runtime.spawn(async move { registry.fire_event(HookEvent::OnStop, &ctx(&[])).await });
    let probe = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    probe.block_on(wait_until("the command runs", || processes_with_arg(&sleep).len() == 2));

    drop(runtime);
    probe.block_on(wait_until("every sleep is gone", || processes_with_arg(&sleep).is_empty()));
}

#[tokio::test]
async fn y14_a_child_that_calls_setsid_leaves_the_group_and_lives_on() {
    // The documented limit: a daemon that starts a session of its own is out of the group's
    // reach, once it has left (hence the shell's `sleep 2`). This test kills it itself.
    let sleep = unique_sleep();
    let registry =
        on_stop(format!("setsid sleep {sleep} > /dev/null 2>&1 < /dev/null & sleep 2"), Duration::from_secs(30));
    registry.fire_event(HookEvent::OnStop, &ctx(&[])).await;
    // The hook has ended, and its group was killed as it ended.
    wait_until("the daemon runs", || !processes_with_arg(&sleep).is_empty()).await;
    let daemons = processes_with_arg(&sleep);
    // Alive in a session (and so a group) of its own, which the group kill did not reach.
    let sessions: Vec<_> = daemons.iter().map(|pid| session_and_group(*pid)).collect();
    for pid in &daemons {
        let _ = std::process::Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
    }
    assert_eq!(daemons.len(), 1, "the setsid child should have outlived its hook");
    assert_eq!(sessions, [Some((daemons[0], daemons[0]))], "the daemon leads a session and group of its own");
}

/// A process's session and process group ids (`/proc/PID/stat`), if it is still there.
fn session_and_group(pid: u32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name in parentheses: state, ppid, pgrp, session.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some((fields.get(3)?.parse().ok()?, fields.get(2)?.parse().ok()?))
}
