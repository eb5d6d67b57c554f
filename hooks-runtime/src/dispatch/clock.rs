//! The clock E6 reads: whether an async hook answered after its deadline.
//!
//! E6 needs the time around every async hook, even one that answers at its first poll, and the
//! precise monotonic clock is not always cheap: where the hypervisor does not let the vDSO read
//! the TSC, `Instant::now()` is a system call (about 140 ns on this project's CI machines, as much
//! as a whole async hook costs otherwise). On Linux a hook whose timeout is long next to the
//! coarse monotonic clock's resolution (at least [`COARSE_STEPS`] ticks of it, 200 ms with the
//! usual 4 ms tick) is timed with `CLOCK_MONOTONIC_COARSE`, a read of the vDSO's memory, so its
//! deadline is judged to within one tick: under 2% of its timeout. Shorter timeouts, and other
//! systems, use the precise clock.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How many ticks of the coarse clock a timeout must span to be judged with it.
pub(crate) const COARSE_STEPS: u32 = 50;

/// One reading, of the clock chosen for the hook it times.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reading {
    /// `Instant::now()`.
    Precise(Instant),
    /// `CLOCK_MONOTONIC_COARSE`, since boot.
    Coarse(Duration),
}

impl Reading {
    /// Reads the clock that suits a hook with this timeout.
    #[inline]
    pub(crate) fn now(timeout: Duration) -> Reading {
        if uses_coarse(timeout)
            && let Some(now) = coarse_now()
        {
            return Reading::Coarse(now);
        }
        Reading::Precise(Instant::now())
    }

    /// Reads the same clock as `self` again.
    #[inline]
    pub(crate) fn again(self) -> Reading {
        match self {
            Reading::Coarse(_) => coarse_now().map_or_else(|| Reading::Precise(Instant::now()), Reading::Coarse),
            Reading::Precise(_) => Reading::Precise(Instant::now()),
        }
    }

    /// Whether `self` reads the clock a hook with this timeout uses.
    #[inline]
    pub(crate) fn suits(self, timeout: Duration) -> bool {
        matches!(self, Reading::Coarse(_)) == uses_coarse(timeout)
    }

    /// The time from `self` to `later`; zero if the two read different clocks (never the case for
    /// the readings of one hook) or the clock did not move.
    #[inline]
    pub(crate) fn until(self, later: Reading) -> Duration {
        match (self, later) {
            (Reading::Precise(start), Reading::Precise(end)) => end.saturating_duration_since(start),
            (Reading::Coarse(start), Reading::Coarse(end)) => end.saturating_sub(start),
            _ => Duration::ZERO,
        }
    }
}

/// Whether a hook with this timeout is timed with the coarse clock.
#[inline]
fn uses_coarse(timeout: Duration) -> bool {
    coarse_from().is_some_and(|from| timeout >= from)
}

/// The shortest timeout timed with the coarse clock ([`COARSE_STEPS`] of its ticks), once per
/// process; `None` where there is no such clock.
fn coarse_from() -> Option<Duration> {
    static FROM: OnceLock<Option<Duration>> = OnceLock::new();
    *FROM.get_or_init(|| coarse_resolution().map(|resolution| resolution * COARSE_STEPS))
}

/// The coarse clock's resolution; `None` where there is no such clock, or a poor one.
fn coarse_resolution() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let resolution = nix::time::clock_getres(nix::time::ClockId::CLOCK_MONOTONIC_COARSE).ok()?;
        let resolution = Duration::from(resolution);
        (resolution > Duration::ZERO && resolution <= Duration::from_millis(10)).then_some(resolution)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[inline]
fn coarse_now() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC_COARSE).ok().map(Duration::from)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_timeout_reads_the_coarse_clock_on_linux_and_a_short_one_the_precise_clock() {
        let long = Reading::now(Duration::from_secs(10));
        let short = Reading::now(Duration::from_millis(5));
        assert!(matches!(short, Reading::Precise(_)));
        if cfg!(target_os = "linux") {
            assert!(matches!(long, Reading::Coarse(_)), "{long:?}");
        }
        assert!(long.suits(Duration::from_secs(10)) && short.suits(Duration::from_millis(5)));
        assert!(!short.suits(Duration::from_secs(10)) || coarse_from().is_none());
    }

    #[test]
    fn the_coarse_clock_measures_a_sleep_to_within_a_tick() {
        let Some(resolution) = coarse_resolution() else { return };
        let start = Reading::now(Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(60));
        let elapsed = start.until(start.again());
        assert!(elapsed + resolution >= Duration::from_millis(60), "{elapsed:?}");
        assert!(elapsed <= Duration::from_millis(60) + resolution * 25, "{elapsed:?}");
    }
}
