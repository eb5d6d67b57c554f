//! The dispatch scenarios, shared by the timing binary (`dispatch`) and the allocation-counting
//! binary (`dispatch_allocs`).
//!
//! Hooks are `#[hook]` functions that touch their value with `black_box` and change nothing, so
//! every variant of a group does the same work on the same 10 messages except the machinery
//! around the calls. The by-value ones are marked `#[inline(never)]` so that the direct-call
//! baseline calls them instead of folding them away. The in-place ones are not: the floor calls
//! them through opaque fn pointers, and the runtime through its adapter, which `#[hook]` emits
//! beside the function, where the compiler may inline a small hook as it would in a user's crate;
//! either way one indirect call per hook is left.

#![allow(dead_code, unreachable_pub, missing_docs)]

use std::future::Future;
use std::hint::black_box;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use hooks_runtime::__bench::{self, AssemblyChains};
use hooks_runtime::__private::{ActiveContext, ResolvedHook};
use hooks_runtime::definition::HookDef;
use hooks_runtime::prelude::*;
use hooks_runtime::types::Side;

use crate::harness::Variant;

/// The chain lengths measured.
pub const LENGTHS: [usize; 4] = [0, 1, 4, 16];
/// Messages in the `Vec` the chains transform.
pub const CHAIN_MESSAGES: usize = 10;
/// Messages in the context assembly's snapshot.
pub const ASSEMBLY_MESSAGES: usize = 100;
/// The Node 20 chain (async hooks awaited from a name map), ns per dispatch at 1 / 4 / 16 hooks,
/// measured with Node 20; fixed reference figures, not re-measured by the bench.
pub const NODE_NS: [(usize, f64); 3] = [(1, 221.0), (4, 421.0), (16, 1_093.0)];

#[inline(always)]
fn touch<T>(mut value: T) -> T {
    black_box(&mut value);
    value
}

macro_rules! define_hooks {
    ($($ip:ident $ip_id:literal $ir:ident $ir_id:literal $ia:ident $ia_id:literal $bp:ident $bp_id:literal $br:ident $br_id:literal $ba:ident $ba_id:literal;)*) => {
        $(
            #[hook(filter_messages, id = $ip_id)]
            pub fn $ip(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
                black_box(messages);
            }

            #[hook(filter_messages, id = $ir_id)]
            pub fn $ir(_state: &ThreadState, messages: &mut Vec<HookMessage>) -> Result<(), HookError> {
                black_box(messages);
                Ok(())
            }

            #[hook(filter_messages, id = $ia_id)]
            pub async fn $ia(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
                black_box(messages);
            }

            #[hook(filter_messages, id = $bp_id)]
            #[inline(never)]
            pub fn $bp(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
                touch(messages)
            }

            #[hook(filter_messages, id = $br_id)]
            #[inline(never)]
            pub fn $br(_state: &ThreadState, messages: Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> {
                Ok(touch(messages))
            }

            #[hook(filter_messages, id = $ba_id)]
            #[inline(never)]
            pub async fn $ba(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
                touch(messages)
            }
        )*

        /// The chains' definitions, one array per form.
        pub const FORM_DEFS: [[&HookDef; 16]; 6] = [
            [$(<$ip as Hook>::DEF),*],
            [$(<$ir as Hook>::DEF),*],
            [$(<$ia as Hook>::DEF),*],
            [$(<$bp as Hook>::DEF),*],
            [$(<$br as Hook>::DEF),*],
            [$(<$ba as Hook>::DEF),*],
        ];
        /// The in-place plain functions, for the floor loop.
        pub const IN_PLACE_FNS: [InPlaceFn; 16] = [$($ip),*];
        /// The in-place `Result` functions, for the floor loop.
        pub const IN_PLACE_RESULT_FNS: [InPlaceResultFn; 16] = [$($ir),*];
        /// The in-place async functions, boxed by hand.
        pub const IN_PLACE_ASYNC_FNS: [InPlaceAsyncFn; 16] = [$(|state, messages| Box::pin($ia(state, messages))),*];
    };
}

pub type InPlaceFn = fn(&ThreadState, &mut Vec<HookMessage>);
pub type InPlaceResultFn = fn(&ThreadState, &mut Vec<HookMessage>) -> Result<(), HookError>;
pub type UnitFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
pub type InPlaceAsyncFn = for<'a> fn(&'a ThreadState, &'a mut Vec<HookMessage>) -> UnitFuture<'a>;

define_hooks! {
    ip00 "ip00" ir00 "ir00" ia00 "ia00" bp00 "bp00" br00 "br00" ba00 "ba00";
    ip01 "ip01" ir01 "ir01" ia01 "ia01" bp01 "bp01" br01 "br01" ba01 "ba01";
    ip02 "ip02" ir02 "ir02" ia02 "ia02" bp02 "bp02" br02 "br02" ba02 "ba02";
    ip03 "ip03" ir03 "ir03" ia03 "ia03" bp03 "bp03" br03 "br03" ba03 "ba03";
    ip04 "ip04" ir04 "ir04" ia04 "ia04" bp04 "bp04" br04 "br04" ba04 "ba04";
    ip05 "ip05" ir05 "ir05" ia05 "ia05" bp05 "bp05" br05 "br05" ba05 "ba05";
    ip06 "ip06" ir06 "ir06" ia06 "ia06" bp06 "bp06" br06 "br06" ba06 "ba06";
    ip07 "ip07" ir07 "ir07" ia07 "ia07" bp07 "bp07" br07 "br07" ba07 "ba07";
    ip08 "ip08" ir08 "ir08" ia08 "ia08" bp08 "bp08" br08 "br08" ba08 "ba08";
    ip09 "ip09" ir09 "ir09" ia09 "ia09" bp09 "bp09" br09 "br09" ba09 "ba09";
    ip10 "ip10" ir10 "ir10" ia10 "ia10" bp10 "bp10" br10 "br10" ba10 "ba10";
    ip11 "ip11" ir11 "ir11" ia11 "ia11" bp11 "bp11" br11 "br11" ba11 "ba11";
    ip12 "ip12" ir12 "ir12" ia12 "ia12" bp12 "bp12" br12 "br12" ba12 "ba12";
    ip13 "ip13" ir13 "ir13" ia13 "ia13" bp13 "bp13" br13 "br13" ba13 "ba13";
    ip14 "ip14" ir14 "ir14" ia14 "ia14" bp14 "bp14" br14 "br14" ba14 "ba14";
    ip15 "ip15" ir15 "ir15" ia15 "ia15" bp15 "bp15" br15 "br15" ba15 "ba15";
}

/// The six forms a `filter_messages` hook can be written in, in the order of [`FORM_DEFS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    InPlacePlain,
    InPlaceResult,
    InPlaceAsync,
    ByValuePlain,
    ByValueResult,
    ByValueAsync,
}

impl Form {
    pub const ALL: [Form; 6] = [
        Form::InPlacePlain,
        Form::InPlaceResult,
        Form::InPlaceAsync,
        Form::ByValuePlain,
        Form::ByValueResult,
        Form::ByValueAsync,
    ];
    pub const SYNC: [Form; 4] = [Form::InPlacePlain, Form::InPlaceResult, Form::ByValuePlain, Form::ByValueResult];
    pub const ASYNC: [Form; 2] = [Form::InPlaceAsync, Form::ByValueAsync];

    /// The variant's name in the groups: the runtime dispatching a chain of this form.
    pub fn name(self) -> &'static str {
        match self {
            Form::InPlacePlain => "runtime, in place, sync plain",
            Form::InPlaceResult => "runtime, in place, sync Result",
            Form::InPlaceAsync => "runtime, in place, async",
            Form::ByValuePlain => "runtime, by value, sync plain",
            Form::ByValueResult => "runtime, by value, sync Result",
            Form::ByValueAsync => "runtime, by value, async",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The floor of a runtime-resolved, panic-isolated chain: opaque fn pointers called in a loop,
/// each under `catch_unwind`.
#[inline(never)]
pub fn floor(fns: &[InPlaceFn], state: &ThreadState, messages: &mut Vec<HookMessage>) {
    for f in fns {
        let f = black_box(*f);
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(state, &mut *messages))) {
            drop(black_box(payload));
        }
    }
}

/// [`floor`] for `Result`-returning functions: an error is looked at and the loop goes on.
#[inline(never)]
pub fn floor_result(fns: &[InPlaceResultFn], state: &ThreadState, messages: &mut Vec<HookMessage>) {
    for f in fns {
        let f = black_box(*f);
        match catch_unwind(AssertUnwindSafe(|| f(state, &mut *messages))) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => drop(black_box(error)),
            Err(payload) => drop(black_box(payload)),
        }
    }
}

/// Direct by-value calls: `bp00(state, v)`, `bp01(state, v)`, ... by name (the match on the
/// const `N` is folded).
#[inline(never)]
pub fn by_value_direct<const N: usize>(state: &ThreadState, v: Vec<HookMessage>) -> Vec<HookMessage> {
    let mut v = v;
    macro_rules! calls { ($($f:ident)*) => {{ $( v = black_box($f(state, v)); )* }}; }
    match N {
        0 => {}
        1 => calls!(bp00),
        4 => calls!(bp00 bp01 bp02 bp03),
        16 => calls!(bp00 bp01 bp02 bp03 bp04 bp05 bp06 bp07 bp08 bp09 bp10 bp11 bp12 bp13 bp14 bp15),
        _ => unreachable!(),
    }
    v
}

/// Direct by-value calls of the `Result`-returning functions, with `?`.
#[inline(never)]
pub fn by_value_result_direct<const N: usize>(
    state: &ThreadState,
    v: Vec<HookMessage>,
) -> Result<Vec<HookMessage>, HookError> {
    let mut v = v;
    macro_rules! calls { ($($f:ident)*) => {{ $( v = black_box($f(state, v)?); )* }}; }
    match N {
        0 => {}
        1 => calls!(br00),
        4 => calls!(br00 br01 br02 br03),
        16 => calls!(br00 br01 br02 br03 br04 br05 br06 br07 br08 br09 br10 br11 br12 br13 br14 br15),
        _ => unreachable!(),
    }
    Ok(v)
}

fn by_value_direct_fn(n: usize) -> fn(&ThreadState, Vec<HookMessage>) -> Vec<HookMessage> {
    match n {
        0 => by_value_direct::<0>,
        1 => by_value_direct::<1>,
        4 => by_value_direct::<4>,
        _ => by_value_direct::<16>,
    }
}

fn by_value_result_direct_fn(n: usize) -> fn(&ThreadState, Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> {
    match n {
        0 => by_value_result_direct::<0>,
        1 => by_value_result_direct::<1>,
        4 => by_value_result_direct::<4>,
        _ => by_value_result_direct::<16>,
    }
}

/// How the hand-written async loop reads the clock for E6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Not at all (the baseline the target names).
    None,
    /// Before and after each hook: two reads per hook.
    AroundEach,
    /// Once before the chain and once after each hook, the end of one hook being the start of
    /// the next: one read per hook, plus one.
    Shared,
}

/// `catch_unwind` of a closure called once (so it may hand out what it borrows).
fn caught<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    catch_unwind(AssertUnwindSafe(f))
}

/// Hand-written boxed futures of the in-place async functions, each built and polled under
/// `catch_unwind`, with a lazy timeout: the timer is armed only if the future is pending after
/// its first poll. With a [`Clock`] other than `None`, the clock is also read so that an answer
/// after the deadline is discarded (what E6 asks of the runtime); context only.
pub async fn boxed_lazy_timeout(
    fns: &[InPlaceAsyncFn],
    state: &ThreadState,
    messages: &mut Vec<HookMessage>,
    timeout: Duration,
    clock: Clock,
) {
    let mut chain_clock = (clock == Clock::Shared).then(Instant::now);
    for f in fns {
        let f = black_box(*f);
        let started_at = if clock == Clock::AroundEach { Some(Instant::now()) } else { chain_clock };
        let Ok(mut future) = caught(|| f(state, &mut *messages)) else { continue };
        let mut poll_hook = |cx: &mut Context<'_>| catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)));
        let first = std::future::poll_fn(|cx| Poll::Ready(poll_hook(cx))).await;
        let finished = match first {
            Ok(Poll::Ready(())) => true,
            Err(_) => false,
            Ok(Poll::Pending) => {
                let mut deadline = pin!(tokio::time::sleep(timeout));
                let mut hook_polled = true;
                std::future::poll_fn(|cx| {
                    if !std::mem::take(&mut hook_polled) {
                        match poll_hook(cx) {
                            Ok(Poll::Ready(())) => return Poll::Ready(true),
                            Err(_) => return Poll::Ready(false),
                            Ok(Poll::Pending) => {}
                        }
                    }
                    deadline.as_mut().poll(cx).map(|()| false)
                })
                .await
            }
        };
        let in_time = match started_at {
            None => true,
            Some(at) => {
                let now = Instant::now();
                if clock == Clock::Shared {
                    chain_clock = Some(now);
                }
                now.duration_since(at) <= timeout
            }
        };
        black_box(finished && in_time);
    }
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

/// What a `clone_from` written field by field for `HookMessage` would do: reuse each string's
/// buffer (the derived `Clone` has no `clone_from`, so `Vec::clone_from` clones every message
/// afresh). Used only to measure that option.
pub fn clone_from_field_by_field(into: &mut Vec<HookMessage>, from: &[HookMessage]) {
    into.truncate(from.len());
    let (init, tail) = from.split_at(into.len());
    for (to, from) in into.iter_mut().zip(init) {
        to.id.clone_from(&from.id);
        to.role = from.role;
        to.content.clone_from(&from.content);
        to.name.clone_from(&from.name);
        to.tool_calls.clone_from(&from.tool_calls);
        to.tool_call_id.clone_from(&from.tool_call_id);
        to.created_at = from.created_at;
        to.parent_id.clone_from(&from.parent_id);
        to.depth = from.depth;
        to.silent = from.silent;
        to.extra.clone_from(&from.extra);
    }
    into.extend_from_slice(tail);
}

/// The snapshot option measured against the others: [`HookMessage`] with every string shared
/// copy-on-write (`Arc<str>`), so a clone copies pointers and bumps reference counts.
#[derive(Clone)]
#[allow(dead_code)]
pub struct CowMessage {
    id: Arc<str>,
    role: Role,
    content: Option<Arc<str>>,
    name: Option<Arc<str>>,
    tool_calls: Option<Arc<str>>,
    tool_call_id: Option<Arc<str>>,
    created_at: i64,
    parent_id: Option<Arc<str>>,
    depth: Option<u32>,
    silent: Option<bool>,
    extra: Arc<serde_json::Map<String, serde_json::Value>>,
}

impl From<&HookMessage> for CowMessage {
    fn from(m: &HookMessage) -> Self {
        let shared = |s: &Option<String>| s.as_deref().map(Arc::from);
        CowMessage {
            id: Arc::from(m.id.as_str()),
            role: m.role,
            content: shared(&m.content),
            name: shared(&m.name),
            tool_calls: shared(&m.tool_calls),
            tool_call_id: shared(&m.tool_call_id),
            created_at: m.created_at,
            parent_id: shared(&m.parent_id),
            depth: m.depth,
            silent: m.silent,
            extra: Arc::new(m.extra.clone()),
        }
    }
}

// --- context assembly -------------------------------------------------------------------------

#[hook(after_system_message, id = "asm_system")]
#[inline(never)]
fn asm_system(_state: &ThreadState, system: &mut String) {
    black_box(system);
}

#[hook(filter_messages, id = "asm_filter")]
#[inline(never)]
fn asm_filter(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    black_box(messages);
}

#[hook(prefilter_llm_history, id = "asm_prefilter")]
#[inline(never)]
fn asm_prefilter(_state: &ThreadState, messages: &mut Vec<LlmMessage>) {
    black_box(messages);
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
            let mut message = HookMessage::new(
                format!("msg_{i:06}"),
                role,
                format!("Message {i}: a line of conversation of ordinary length, about sixty-four characters."),
                1_700_000_000 + i as i64,
            );
            if role == Role::Tool {
                message.tool_call_id = Some(format!("call_{i}"));
            }
            message
        })
        .collect()
}

pub fn chain(defs: &[&'static HookDef]) -> __bench::Chain {
    let entries =
        defs.iter().map(|def| ResolvedHook::new(def, HookExecutionContext::agent("bench_agent"), None, None)).collect();
    __bench::Chain::new(HookKind::FilterMessages, entries)
}

pub struct Fixture {
    pub state: ThreadState,
    pub tokio: tokio::runtime::Runtime,
    pub chain_messages: Vec<HookMessage>,
    /// Per form (the order of [`Form::ALL`]), per length (the order of [`LENGTHS`]).
    pub chains: Vec<Vec<__bench::Chain>>,
    /// The context assembly's three chains, of the agent without hooks and of the one with.
    pub plain_assembly: [__bench::Chain; 3],
    pub hooked_assembly: [__bench::Chain; 3],
    pub snapshot: Vec<HookMessage>,
}

impl Fixture {
    pub fn new() -> Self {
        let mut state = ThreadState::detached("thread_bench", "bench_agent");
        state.arguments.insert("role".into(), "an assistant".into());
        state.arguments.insert("owner".into(), "octo".into());
        let registry = Registry::linked();
        registry.verify().expect("unique hook ids");
        Fixture {
            state,
            tokio: tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap(),
            chain_messages: messages(CHAIN_MESSAGES),
            chains: FORM_DEFS.iter().map(|defs| LENGTHS.iter().map(|&n| chain(&defs[..n])).collect()).collect(),
            plain_assembly: Self::assembly(&ResolvedAgent::resolve(<bench_agent as Agent>::DEF, &registry).unwrap()),
            hooked_assembly: Self::assembly(
                &ResolvedAgent::resolve(<bench_hooked_agent as Agent>::DEF, &registry).unwrap(),
            ),
            snapshot: messages(ASSEMBLY_MESSAGES),
        }
    }

    pub fn chain(&self, form: Form, length_index: usize) -> &__bench::Chain {
        &self.chains[form.index()][length_index]
    }

    fn assembly(agent: &ResolvedAgent) -> [__bench::Chain; 3] {
        let active = ActiveContext::Side(Side::A);
        [HookKind::AfterSystemMessage, HookKind::FilterMessages, HookKind::PrefilterLlmHistory]
            .map(|kind| __bench::Chain::resolved(agent, active, kind))
    }

    fn assembly_chains(chains: &[__bench::Chain; 3]) -> AssemblyChains<'_> {
        let [after_system_message, filter_messages, prefilter_llm_history] = chains;
        AssemblyChains { after_system_message, filter_messages, prefilter_llm_history }
    }
}

/// Runs `n` steps on a value, timing only the steps. Every variant moves its value through the
/// step, in-place ones included, so the loop around the work is the same for all.
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

pub const NO_CALL: &str = "no call";
pub const LEN_CHECK: &str = "runtime, caller checks chain.is_empty() first";
pub const FLOOR: &str = "floor: fn pointers + catch_unwind, plain";
pub const FLOOR_RESULT: &str = "floor: fn pointers + catch_unwind, Result";
pub const DIRECT: &str = "direct by-value calls, plain";
pub const DIRECT_RESULT: &str = "direct by-value calls, Result with ?";
pub const BOXED: &str = "boxed futures + catch_unwind + lazy timeout";
pub const BOXED_CLOCK: &str = "the same + 2 clock reads per hook (E6)";
pub const BOXED_CLOCK_SHARED: &str = "the same + 1 clock read per hook, 1 per chain (E6)";
pub const PLAIN: &str = "no hook machinery";
pub const NO_HOOKS: &str = "runtime, no hooks";
pub const ONE_HOOK: &str = "runtime, 1 in-place sync hook per point";
pub const MOVE: &str = "move only (no copy)";
pub const CLONE_FROM: &str = "snapshot: clone_from into a reused buffer";
pub const FRESH_CLONE: &str = "fresh deep clone()";
pub const FIELD_BY_FIELD: &str = "option: field-by-field clone_from";
pub const COW_CLONE_FROM: &str = "option: copy-on-write contents (Arc<str>), clone_from";
pub const COW_FRESH_CLONE: &str = "option: copy-on-write contents (Arc<str>), fresh clone()";

pub fn sync_title(n: usize) -> String {
    format!("sync filter_messages, {n} hooks, Vec of {CHAIN_MESSAGES} messages")
}
pub fn async_title(n: usize) -> String {
    format!("async filter_messages, {n} hooks, Vec of {CHAIN_MESSAGES} messages")
}
pub fn snapshot_title() -> String {
    format!("by-value snapshot of a Vec of {CHAIN_MESSAGES} messages")
}
pub fn assembly_title() -> String {
    format!("context assembly, {ASSEMBLY_MESSAGES} messages")
}

/// Every comparison group: a title and its variants, the baseline first.
pub fn groups(f: &Fixture) -> Vec<(String, Vec<Variant<'_>>)> {
    let mut groups = Vec::new();
    let state = &f.state;
    let value = &f.chain_messages;
    for (index, &n) in LENGTHS.iter().enumerate() {
        let direct = by_value_direct_fn(n);
        let direct_result = by_value_result_direct_fn(n);
        let fns = &IN_PLACE_FNS[..n];
        let result_fns = &IN_PLACE_RESULT_FNS[..n];
        let mut variants = vec![
            Variant::new(FLOOR, move |iters| {
                run_sync(iters, value.clone(), |mut v| {
                    floor(fns, state, &mut v);
                    v
                })
            }),
            Variant::new(FLOOR_RESULT, move |iters| {
                run_sync(iters, value.clone(), |mut v| {
                    floor_result(result_fns, state, &mut v);
                    v
                })
            }),
            Variant::new(DIRECT, move |iters| run_sync(iters, value.clone(), |v| direct(state, v))),
            Variant::new(DIRECT_RESULT, move |iters| {
                run_sync(iters, value.clone(), |v| direct_result(state, v).unwrap())
            }),
        ];
        for form in Form::SYNC {
            let chain = f.chain(form, index);
            variants.push(Variant::new(form.name(), move |iters| {
                run_sync(iters, value.clone(), |mut v| {
                    __bench::filter_messages_sync(chain, state, &mut v);
                    v
                })
            }));
        }
        if n == 0 {
            let chain = f.chain(Form::InPlacePlain, index);
            variants.push(Variant::new(NO_CALL, move |iters| run_sync(iters, value.clone(), |v| v)));
            variants.push(Variant::new(LEN_CHECK, move |iters| {
                run_sync(iters, value.clone(), |v| {
                    let mut v = v;
                    if !chain.is_empty() {
                        __bench::filter_messages_sync(chain, state, &mut v);
                    }
                    v
                })
            }));
        }
        groups.push((sync_title(n), variants));
    }
    for (index, &n) in LENGTHS.iter().enumerate() {
        let tokio = &f.tokio;
        let fns = &IN_PLACE_ASYNC_FNS[..n];
        let timeout = __bench::TIMEOUT;
        let mut variants = vec![
            Variant::new(BOXED, move |iters| {
                run_async!(tokio, iters, value.clone(), |v| {
                    let mut v = v;
                    boxed_lazy_timeout(fns, state, &mut v, timeout, Clock::None).await;
                    v
                })
            }),
            Variant::new(BOXED_CLOCK, move |iters| {
                run_async!(tokio, iters, value.clone(), |v| {
                    let mut v = v;
                    boxed_lazy_timeout(fns, state, &mut v, timeout, Clock::AroundEach).await;
                    v
                })
            }),
            Variant::new(BOXED_CLOCK_SHARED, move |iters| {
                run_async!(tokio, iters, value.clone(), |v| {
                    let mut v = v;
                    boxed_lazy_timeout(fns, state, &mut v, timeout, Clock::Shared).await;
                    v
                })
            }),
        ];
        for form in Form::ASYNC {
            let chain = f.chain(form, index);
            variants.push(Variant::new(form.name(), move |iters| {
                run_async!(tokio, iters, value.clone(), |v| {
                    let mut v = v;
                    __bench::filter_messages(chain, state, &mut v).await;
                    v
                })
            }));
        }
        groups.push((async_title(n), variants));
    }
    let mut buffer = value.clone();
    let mut field_buffer = value.clone();
    let cow_value: Vec<CowMessage> = value.iter().map(CowMessage::from).collect();
    let cow_value = &*Box::leak(Box::new(cow_value));
    let mut cow_buffer = cow_value.clone();
    groups.push((
        snapshot_title(),
        vec![
            Variant::new(MOVE, move |iters| run_sync(iters, value.clone(), |v| v)),
            Variant::new(CLONE_FROM, move |iters| {
                run_sync(iters, value.clone(), |v| {
                    black_box(&mut buffer).clone_from(&v);
                    v
                })
            }),
            Variant::new(FRESH_CLONE, move |iters| {
                run_sync(iters, value.clone(), |v| {
                    drop(black_box(v.clone()));
                    v
                })
            }),
            Variant::new(FIELD_BY_FIELD, move |iters| {
                run_sync(iters, value.clone(), |v| {
                    clone_from_field_by_field(black_box(&mut field_buffer), &v);
                    v
                })
            }),
            Variant::new(COW_CLONE_FROM, move |iters| {
                run_sync(iters, cow_value.clone(), |v| {
                    black_box(&mut cow_buffer).clone_from(&v);
                    v
                })
            }),
            Variant::new(COW_FRESH_CLONE, move |iters| {
                run_sync(iters, cow_value.clone(), |v| {
                    drop(black_box(v.clone()));
                    v
                })
            }),
        ],
    ));
    let snapshot = &f.snapshot;
    let prompt = <bench_prompt as Prompt>::DEF;
    let hooked_prompt = <bench_hooked_prompt as Prompt>::DEF;
    let plain_chains = Fixture::assembly_chains(&f.plain_assembly);
    let hooked_chains = Fixture::assembly_chains(&f.hooked_assembly);
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
