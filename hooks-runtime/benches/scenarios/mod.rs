//! The dispatch scenarios, shared by the timing binary (`dispatch`) and the allocation-counting
//! binary (`dispatch_allocs`).
//!
//! Hooks are `#[hook]` functions marked `#[inline(never)]`, so that the direct-call baseline
//! calls them as the runtime does (a hook of another crate is not inlined either) instead of
//! folding them away. Each hook moves its value through and touches it with `black_box`.

#![allow(dead_code, unreachable_pub, missing_docs)]

use std::collections::HashMap;
use std::future::Future;
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use hooks_runtime::__bench::{self, AssemblyChains, WriteRule};
use hooks_runtime::prelude::*;
use hooks_runtime::{ActiveContext, HookDef, ResolvedHook, Side};

use crate::harness::Variant;

/// The chain lengths measured.
pub const LENGTHS: [usize; 4] = [0, 1, 4, 16];
/// Messages in the `Vec` the chains move through.
pub const CHAIN_MESSAGES: usize = 10;
/// Messages in the context assembly's snapshot.
pub const ASSEMBLY_MESSAGES: usize = 100;

#[inline(always)]
fn touch<T>(mut value: T) -> T {
    black_box(&mut value);
    value
}

macro_rules! define_hooks {
    ($($sync:ident $sync_id:tt $fallible:ident $fallible_id:tt $async_:ident $async_id:tt $record:ident $record_id:tt;)*) => {
        $(
            #[hook(filter_messages, id = $sync_id)]
            #[inline(never)]
            pub fn $sync(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
                touch(messages)
            }

            #[hook(filter_messages, id = $fallible_id)]
            #[inline(never)]
            pub fn $fallible(_state: &ThreadState, messages: Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> {
                Ok(touch(messages))
            }

            #[hook(filter_messages, id = $async_id)]
            #[inline(never)]
            pub async fn $async_(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
                touch(messages)
            }

            #[hook(before_create_message, id = $record_id)]
            #[inline(never)]
            pub fn $record(_state: &ThreadState, record: MessageRecord) -> MessageRecord {
                touch(record)
            }
        )*

        pub const SYNC_DEFS: [&HookDef; 16] = [$(<$sync as Hook>::DEF),*];
        pub const FALLIBLE_DEFS: [&HookDef; 16] = [$(<$fallible as Hook>::DEF),*];
        pub const ASYNC_DEFS: [&HookDef; 16] = [$(<$async_ as Hook>::DEF),*];
        pub const RECORD_DEFS: [&HookDef; 16] = [$(<$record as Hook>::DEF),*];
        pub const SYNC_FNS: [SyncFn; 16] = [$($sync),*];
        pub const ASYNC_BOXED_FNS: [AsyncFn; 16] = [$(|state, messages| Box::pin($async_(state, messages))),*];
    };
}

pub type SyncFn = fn(&ThreadState, Vec<HookMessage>) -> Vec<HookMessage>;
pub type BoxedFuture<'a> = Pin<Box<dyn Future<Output = Vec<HookMessage>> + Send + 'a>>;
pub type AsyncFn = for<'a> fn(&'a ThreadState, Vec<HookMessage>) -> BoxedFuture<'a>;

define_hooks! {
    s00 "s00" f00 "f00" a00 "a00" r00 "r00";
    s01 "s01" f01 "f01" a01 "a01" r01 "r01";
    s02 "s02" f02 "f02" a02 "a02" r02 "r02";
    s03 "s03" f03 "f03" a03 "a03" r03 "r03";
    s04 "s04" f04 "f04" a04 "a04" r04 "r04";
    s05 "s05" f05 "f05" a05 "a05" r05 "r05";
    s06 "s06" f06 "f06" a06 "a06" r06 "r06";
    s07 "s07" f07 "f07" a07 "a07" r07 "r07";
    s08 "s08" f08 "f08" a08 "a08" r08 "r08";
    s09 "s09" f09 "f09" a09 "a09" r09 "r09";
    s10 "s10" f10 "f10" a10 "a10" r10 "r10";
    s11 "s11" f11 "f11" a11 "a11" r11 "r11";
    s12 "s12" f12 "f12" a12 "a12" r12 "r12";
    s13 "s13" f13 "f13" a13 "a13" r13 "r13";
    s14 "s14" f14 "f14" a14 "a14" r14 "r14";
    s15 "s15" f15 "f15" a15 "a15" r15 "r15";
}

/// Sync direct calls: `s00(state, v)`, `s01(state, v)`, ... by name (the match on the const
/// `N` is folded).
#[inline(never)]
pub fn sync_direct<const N: usize>(state: &ThreadState, v: Vec<HookMessage>) -> Vec<HookMessage> {
    let mut v = v;
    macro_rules! calls { ($($f:ident)*) => {{ $( v = black_box($f(state, v)); )* }}; }
    match N {
        0 => {}
        1 => calls!(s00),
        4 => calls!(s00 s01 s02 s03),
        16 => calls!(s00 s01 s02 s03 s04 s05 s06 s07 s08 s09 s10 s11 s12 s13 s14 s15),
        _ => unreachable!(),
    }
    v
}

/// Sync direct calls of the `Result`-returning hooks: `f00(state, v)?`, ... by name (an error
/// would end the sequence, as `?` does).
#[inline(never)]
pub fn fallible_direct<const N: usize>(
    state: &ThreadState,
    v: Vec<HookMessage>,
) -> Result<Vec<HookMessage>, HookError> {
    let mut v = v;
    macro_rules! calls { ($($f:ident)*) => {{ $( v = black_box($f(state, v)?); )* }}; }
    match N {
        0 => {}
        1 => calls!(f00),
        4 => calls!(f00 f01 f02 f03),
        16 => calls!(f00 f01 f02 f03 f04 f05 f06 f07 f08 f09 f10 f11 f12 f13 f14 f15),
        _ => unreachable!(),
    }
    Ok(v)
}

/// Sync direct calls of the `MessageRecord` hooks.
#[inline(never)]
pub fn record_direct<const N: usize>(state: &ThreadState, v: MessageRecord) -> MessageRecord {
    let mut v = v;
    macro_rules! calls { ($($f:ident)*) => {{ $( v = black_box($f(state, v)); )* }}; }
    match N {
        0 => {}
        1 => calls!(r00),
        4 => calls!(r00 r01 r02 r03),
        16 => calls!(r00 r01 r02 r03 r04 r05 r06 r07 r08 r09 r10 r11 r12 r13 r14 r15),
        _ => unreachable!(),
    }
    v
}

/// Hand-written boxed futures: `Box::pin(a00(state, v)).await`, ... by name.
pub async fn async_boxed<const N: usize>(state: &ThreadState, v: Vec<HookMessage>) -> Vec<HookMessage> {
    let mut v = v;
    macro_rules! calls {
        ($($f:ident)*) => {{ $( {
            let future: BoxedFuture<'_> = Box::pin($f(state, v));
            v = black_box(future.await);
        } )* }};
    }
    match N {
        0 => {}
        1 => calls!(a00),
        4 => calls!(a00 a01 a02 a03),
        16 => calls!(a00 a01 a02 a03 a04 a05 a06 a07 a08 a09 a10 a11 a12 a13 a14 a15),
        _ => unreachable!(),
    }
    v
}

/// Polls a future once with a no-op waker: a chain of sync hooks completes at once.
#[inline(always)]
pub fn poll_now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("a chain of sync hooks did not complete at once"),
    }
}

/// A string-keyed dynamic registry, as dynamic-language runtimes keep one: looked up per dispatch.
/// A boxed sync hook of the dynamic registry.
pub type DynSync = Box<dyn Fn(&ThreadState, Vec<HookMessage>) -> Vec<HookMessage> + Send + Sync>;
/// A boxed async hook of the dynamic registry.
pub type DynAsync = Box<dyn for<'a> Fn(&'a ThreadState, Vec<HookMessage>) -> BoxedFuture<'a> + Send + Sync>;

pub struct DynamicRegistry {
    sync: HashMap<String, Vec<DynSync>>,
    r#async: HashMap<String, Vec<DynAsync>>,
}

impl DynamicRegistry {
    /// A registry with every kind's name as a key and the first `n` hooks under `filter_messages`.
    pub fn new(n: usize) -> Self {
        let mut registry = DynamicRegistry { sync: HashMap::new(), r#async: HashMap::new() };
        for kind in HookKind::ALL {
            registry.sync.insert(kind.name().to_owned(), Vec::new());
            registry.r#async.insert(kind.name().to_owned(), Vec::new());
        }
        let sync = registry.sync.get_mut("filter_messages").unwrap();
        for f in &SYNC_FNS[..n] {
            let f = *f;
            sync.push(Box::new(f));
        }
        let r#async = registry.r#async.get_mut("filter_messages").unwrap();
        for f in &ASYNC_BOXED_FNS[..n] {
            let f = *f;
            r#async.push(Box::new(f));
        }
        registry
    }

    #[inline(never)]
    pub fn dispatch_sync(&self, kind: &str, state: &ThreadState, mut v: Vec<HookMessage>) -> Vec<HookMessage> {
        if let Some(hooks) = self.sync.get(kind) {
            for hook in hooks {
                v = black_box(hook(state, v));
            }
        }
        v
    }

    pub async fn dispatch_async(&self, kind: &str, state: &ThreadState, mut v: Vec<HookMessage>) -> Vec<HookMessage> {
        if let Some(hooks) = self.r#async.get(kind) {
            for hook in hooks {
                v = black_box(hook(state, v).await);
            }
        }
        v
    }
}

// --- context assembly -------------------------------------------------------------------------

#[hook(after_system_message, id = "asm_system")]
#[inline(never)]
fn asm_system(_state: &ThreadState, _system: &str) -> Option<String> {
    None
}

#[hook(filter_messages, id = "asm_filter")]
#[inline(never)]
fn asm_filter(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    touch(messages)
}

#[hook(prefilter_llm_history, id = "asm_prefilter")]
#[inline(never)]
fn asm_prefilter(_state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    touch(messages)
}

define_prompt! {
    name: bench_prompt,
    model: "bench",
    prompt: "You are {{role}} for {{owner}}. Answer briefly and cite the messages you used.",
    tools: [],
}

define_agent! {
    name: bench_agent,
    side_a: { prompt: bench_prompt },
    side_b: { human: true },
}

define_prompt! {
    name: bench_hooked_prompt,
    model: "bench",
    prompt: "You are {{role}} for {{owner}}. Answer briefly and cite the messages you used.",
    tools: [],
    hooks: [asm_system, asm_filter, asm_prefilter],
}

define_agent! {
    name: bench_hooked_agent,
    side_a: { prompt: bench_hooked_prompt },
    side_b: { human: true },
}

// --- fixture ---------------------------------------------------------------------------------

pub fn messages(count: usize) -> Vec<HookMessage> {
    (0..count)
        .map(|i| {
            let role = match i % 3 {
                0 => Role::User,
                1 => Role::Assistant,
                _ => Role::Tool,
            };
            let mut message = MessageRecord::new(
                role,
                format!("Message {i}: a line of conversation of ordinary length, about sixty-four characters."),
            )
            .into_message();
            message.id = format!("msg_{i:06}");
            message.created_at = 1_700_000_000 + i as i64;
            if role == Role::Tool {
                message.tool_call_id = Some(format!("call_{i}"));
            }
            message
        })
        .collect()
}

pub fn chain(defs: &[&'static HookDef]) -> Vec<ResolvedHook> {
    defs.iter()
        .map(|def| ResolvedHook {
            hook: def,
            context: HookExecutionContext::agent("bench_agent"),
            requirement: None,
            optional_slot: None,
        })
        .collect()
}

pub struct Fixture {
    pub state: ThreadState,
    pub tokio: tokio::runtime::Runtime,
    pub chain_messages: Vec<HookMessage>,
    pub record: MessageRecord,
    pub sync_chains: Vec<Vec<ResolvedHook>>,
    pub fallible_chains: Vec<Vec<ResolvedHook>>,
    pub async_chains: Vec<Vec<ResolvedHook>>,
    pub record_chains: Vec<Vec<ResolvedHook>>,
    pub registries: Vec<DynamicRegistry>,
    pub plain_agent: ResolvedAgent,
    pub hooked_agent: ResolvedAgent,
    pub snapshot: Vec<HookMessage>,
}

impl Fixture {
    pub fn new() -> Self {
        let mut state = ThreadState::detached("thread_bench", "bench_agent");
        state.arguments.insert("role".into(), "an assistant".into());
        state.arguments.insert("owner".into(), "octo".into());
        let registry = Registry::linked();
        registry.verify().expect("unique hook ids");
        let mut record =
            MessageRecord::new(Role::Assistant, "A reply of ordinary length, about sixty-four characters long.");
        record.id = "msg_record".into();
        Fixture {
            state,
            tokio: tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap(),
            chain_messages: messages(CHAIN_MESSAGES),
            record,
            sync_chains: LENGTHS.iter().map(|&n| chain(&SYNC_DEFS[..n])).collect(),
            fallible_chains: LENGTHS.iter().map(|&n| chain(&FALLIBLE_DEFS[..n])).collect(),
            async_chains: LENGTHS.iter().map(|&n| chain(&ASYNC_DEFS[..n])).collect(),
            record_chains: LENGTHS.iter().map(|&n| chain(&RECORD_DEFS[..n])).collect(),
            registries: LENGTHS.iter().map(|&n| DynamicRegistry::new(n)).collect(),
            plain_agent: ResolvedAgent::resolve(<bench_agent as Agent>::DEF, &registry).unwrap(),
            hooked_agent: ResolvedAgent::resolve(<bench_hooked_agent as Agent>::DEF, &registry).unwrap(),
            snapshot: messages(ASSEMBLY_MESSAGES),
        }
    }

    fn assembly_chains(agent: &ResolvedAgent) -> AssemblyChains<'_> {
        let active = ActiveContext::Side(Side::A);
        AssemblyChains {
            after_system_message: agent.chain(active, HookKind::AfterSystemMessage),
            filter_messages: agent.chain(active, HookKind::FilterMessages),
            prefilter_llm_history: agent.chain(active, HookKind::PrefilterLlmHistory),
        }
    }
}

/// Runs `n` steps on a value, timing only the steps.
#[inline(always)]
fn run_sync<V>(n: u64, value: V, mut step: impl FnMut(V) -> V) -> Duration {
    let mut value = value;
    let started = Instant::now();
    for _ in 0..n {
        value = black_box(step(value));
    }
    let took = started.elapsed();
    drop(value);
    took
}

macro_rules! run_async {
    ($tokio:expr, $n:expr, $value:expr, |$v:ident| $step:expr) => {{
        let value = $value;
        let n = $n;
        $tokio.block_on(async move {
            let mut $v = value;
            let started = Instant::now();
            for _ in 0..n {
                $v = black_box($step);
            }
            let took = started.elapsed();
            drop($v);
            took
        })
    }};
}

pub const DIRECT: &str = "direct calls";
pub const RUNTIME_PLAIN: &str = "runtime (plain-returning: 1 copy per chain)";
pub const RUNTIME_FALLIBLE: &str = "runtime (Result-returning: 1 copy per hook)";
pub const RUNTIME_ASYNC: &str = "runtime (async: 1 copy per hook)";
pub const REGISTRY: &str = "dynamic registry";
pub const LEN_CHECK: &str = "runtime, caller checks chain.is_empty() first";
pub const BOXED: &str = "hand-written boxed futures";
pub const PREVENT: &str = "runtime, Prevent (no copy)";
pub const KEEP: &str = "runtime, KeepLastGood (1 copy per chain)";
pub const PLAIN: &str = "no hook machinery";
pub const NO_HOOKS: &str = "runtime, no hooks";
pub const ONE_HOOK: &str = "runtime, 1 sync hook per point";
pub const MOVE: &str = "move only (no copy)";
pub const COPY_VEC: &str = "E1 copy of the Vec of 10 messages";
pub const COPY_RECORD: &str = "E1 copy of the MessageRecord";

pub fn sync_title(n: usize) -> String {
    format!("sync filter_messages, {n} hooks, Vec of {CHAIN_MESSAGES} messages")
}
pub fn fallible_title(n: usize) -> String {
    format!("sync filter_messages, {n} Result-returning hooks, Vec of {CHAIN_MESSAGES} messages")
}
pub fn record_title(n: usize) -> String {
    format!("sync before_create_message, {n} hooks, MessageRecord")
}
pub fn async_title(n: usize) -> String {
    format!("async filter_messages, {n} hooks, Vec of {CHAIN_MESSAGES} messages")
}
pub fn copy_title() -> String {
    "E1 copy, alone".to_owned()
}
pub fn assembly_title() -> String {
    format!("context assembly, {ASSEMBLY_MESSAGES} messages")
}

/// Every comparison group: a title and its variants, the baseline first.
pub fn groups(f: &Fixture) -> Vec<(String, Vec<Variant<'_>>)> {
    let mut groups = Vec::new();
    let state = &f.state;
    for (index, &n) in LENGTHS.iter().enumerate() {
        let chain = &f.sync_chains[index][..];
        let registry = &f.registries[index];
        let value = &f.chain_messages;
        let direct: fn(&ThreadState, Vec<HookMessage>) -> Vec<HookMessage> = match n {
            0 => sync_direct::<0>,
            1 => sync_direct::<1>,
            4 => sync_direct::<4>,
            _ => sync_direct::<16>,
        };
        let mut variants = vec![
            Variant::new(DIRECT, move |iters| run_sync(iters, value.clone(), |v| direct(state, v))),
            Variant::new(RUNTIME_PLAIN, move |iters| {
                run_sync(iters, value.clone(), |v| poll_now(__bench::filter_messages(chain, state, v)))
            }),
            Variant::new(REGISTRY, move |iters| {
                run_sync(iters, value.clone(), |v| registry.dispatch_sync(black_box("filter_messages"), state, v))
            }),
        ];
        if n == 0 {
            variants.push(Variant::new(LEN_CHECK, move |iters| {
                run_sync(iters, value.clone(), |v| {
                    if chain.is_empty() { v } else { poll_now(__bench::filter_messages(chain, state, v)) }
                })
            }));
        }
        groups.push((sync_title(n), variants));
    }
    for (index, &n) in LENGTHS.iter().enumerate() {
        let chain = &f.fallible_chains[index][..];
        let registry = &f.registries[index];
        let value = &f.chain_messages;
        let direct: fn(&ThreadState, Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> = match n {
            0 => fallible_direct::<0>,
            1 => fallible_direct::<1>,
            4 => fallible_direct::<4>,
            _ => fallible_direct::<16>,
        };
        groups.push((
            fallible_title(n),
            vec![
                Variant::new(DIRECT, move |iters| run_sync(iters, value.clone(), |v| direct(state, v).unwrap())),
                Variant::new(RUNTIME_FALLIBLE, move |iters| {
                    run_sync(iters, value.clone(), |v| poll_now(__bench::filter_messages(chain, state, v)))
                }),
                Variant::new(REGISTRY, move |iters| {
                    run_sync(iters, value.clone(), |v| registry.dispatch_sync(black_box("filter_messages"), state, v))
                }),
            ],
        ));
    }
    for (index, &n) in LENGTHS.iter().enumerate() {
        let chain = &f.record_chains[index][..];
        let value = &f.record;
        let direct: fn(&ThreadState, MessageRecord) -> MessageRecord = match n {
            0 => record_direct::<0>,
            1 => record_direct::<1>,
            4 => record_direct::<4>,
            _ => record_direct::<16>,
        };
        groups.push((
            record_title(n),
            vec![
                Variant::new(DIRECT, move |iters| run_sync(iters, value.clone(), |v| direct(state, v))),
                Variant::new(PREVENT, move |iters| {
                    run_sync(iters, value.clone(), |v| {
                        poll_now(__bench::before_create_message(chain, state, v, WriteRule::Prevent)).unwrap()
                    })
                }),
                Variant::new(KEEP, move |iters| {
                    run_sync(iters, value.clone(), |v| {
                        poll_now(__bench::before_create_message(chain, state, v, WriteRule::KeepLastGood)).unwrap()
                    })
                }),
            ],
        ));
    }
    for (index, &n) in LENGTHS.iter().enumerate() {
        let chain = &f.async_chains[index][..];
        let registry = &f.registries[index];
        let value = &f.chain_messages;
        let tokio = &f.tokio;
        macro_rules! boxed {
            ($n:literal) => {
                Variant::new(BOXED, move |iters| {
                    run_async!(tokio, iters, value.clone(), |v| async_boxed::<$n>(state, v).await)
                })
            };
        }
        let boxed = match n {
            0 => boxed!(0),
            1 => boxed!(1),
            4 => boxed!(4),
            _ => boxed!(16),
        };
        groups.push((
            async_title(n),
            vec![
                boxed,
                Variant::new(RUNTIME_ASYNC, move |iters| {
                    run_async!(tokio, iters, value.clone(), |v| __bench::filter_messages(chain, state, v).await)
                }),
                Variant::new(REGISTRY, move |iters| {
                    run_async!(tokio, iters, value.clone(), |v| {
                        registry.dispatch_async(black_box("filter_messages"), state, v).await
                    })
                }),
            ],
        ));
    }
    let record = &f.record;
    let value = &f.chain_messages;
    groups.push((
        copy_title(),
        vec![
            Variant::new(MOVE, move |iters| run_sync(iters, value.clone(), |v| v)),
            Variant::new(COPY_VEC, move |iters| {
                run_sync(iters, value.clone(), |v| {
                    drop(black_box(v.clone()));
                    v
                })
            }),
            Variant::new(COPY_RECORD, move |iters| {
                run_sync(iters, record.clone(), |v| {
                    drop(black_box(v.clone()));
                    v
                })
            }),
        ],
    ));
    let snapshot = &f.snapshot;
    let prompt = <bench_prompt as Prompt>::DEF;
    let hooked_prompt = <bench_hooked_prompt as Prompt>::DEF;
    let plain_chains = Fixture::assembly_chains(&f.plain_agent);
    let hooked_chains = Fixture::assembly_chains(&f.hooked_agent);
    assert!(plain_chains.filter_messages.is_empty() && hooked_chains.filter_messages.len() == 1);
    groups.push((
        assembly_title(),
        vec![
            Variant::new(PLAIN, move |iters| {
                run_sync(iters, 0usize, |_| black_box(__bench::assemble_plain(state, prompt, snapshot.clone())).len())
            }),
            Variant::new(NO_HOOKS, move |iters| {
                run_sync(iters, 0usize, |_| {
                    poll_now(__bench::assemble(plain_chains, state, prompt, snapshot.clone())).unwrap().len()
                })
            }),
            Variant::new(ONE_HOOK, move |iters| {
                run_sync(iters, 0usize, |_| {
                    poll_now(__bench::assemble(hooked_chains, state, hooked_prompt, snapshot.clone())).unwrap().len()
                })
            }),
        ],
    ));
    groups
}
