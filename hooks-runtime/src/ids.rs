//! Identifiers and clock readings: the one place the crate reads the wall clock for them.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Time since the Unix epoch; zero for a clock set before it. A reading of the wall clock,
/// which on a virtual machine whose hypervisor hides the TSC from the vDSO is a system call:
/// a message's id and time come from one reading ([`new_id_at`], [`ms`]).
pub(crate) fn since_epoch() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    ms(since_epoch())
}

/// A time since the Unix epoch in milliseconds.
pub(crate) fn ms(since_epoch: Duration) -> i64 {
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// This process's id, read once: `getpid` is a system call, and an id is written for every
/// message. A child forked without `exec` keeps its parent's; ids stay apart through the clock
/// and the counter, as they do between processes whose ids agree in their last 16 bits.
fn process_id() -> u32 {
    static PID: OnceLock<u32> = OnceLock::new();
    *PID.get_or_init(std::process::id)
}

/// A new id with `prefix`, unique in this process and, through the clock, across processes
/// that share a store one after the other: `{prefix}_{nanos:x}{count:06x}{pid & 0xffff:04x}`,
/// written digit by digit (`format!` took a tenth of a text turn's instructions for its three
/// ids).
pub(crate) fn new_id(prefix: &str) -> String {
    new_id_at(prefix, since_epoch())
}

/// [`new_id`] with the clock read by the caller (`now`, since the Unix epoch), who keeps the
/// same reading as the message's time.
pub(crate) fn new_id_at(prefix: &str, now: Duration) -> String {
    let nanos = now.as_nanos();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Bytes, sized for the longest id up front, so that it never grows; a `String` checks each
    // `char` it is pushed.
    let mut id = Vec::with_capacity(prefix.len() + 1 + 32 + 16 + 4);
    id.extend_from_slice(prefix.as_bytes());
    id.push(b'_');
    push_hex(&mut id, nanos, 1);
    push_hex(&mut id, u128::from(count), 6);
    push_hex(&mut id, u128::from(process_id() & 0xffff), 4);
    String::from_utf8(id).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// Appends `value` in lower-case hex, zero-padded to at least `min_digits` (at most 32), as
/// `{:0N$x}` does: written from the last digit back into a buffer on the stack, one shift a
/// digit.
fn push_hex(id: &mut Vec<u8>, value: u128, min_digits: u32) {
    let digits = (128 - value.leading_zeros()).div_ceil(4).clamp(min_digits, 32) as usize;
    let mut buffer = [b'0'; 32];
    let mut rest = value;
    for digit in buffer[32 - digits..].iter_mut().rev() {
        *digit = crate::hex::DIGITS[(rest & 0xf) as usize];
        rest >>= 4;
    }
    id.extend_from_slice(&buffer[32 - digits..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_keep_their_prefix() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_id("msg")).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.starts_with("msg_")));
    }

    #[test]
    fn ids_are_written_as_format_writes_them() {
        let id = new_id("msg");
        let (nanos, rest) = id["msg_".len()..].split_at(id.len() - "msg_".len() - 6 - 4);
        assert!(u128::from_str_radix(nanos, 16).is_ok() && !nanos.starts_with('0'), "{id}");
        assert_eq!(&rest[6..], format!("{:04x}", std::process::id() & 0xffff), "{id}");
        for (value, min) in [(0u128, 1), (0, 6), (0xabc, 6), (0x1234567, 6), (u128::MAX, 1), (0xffff, 4)] {
            let mut text = Vec::new();
            push_hex(&mut text, value, min);
            assert_eq!(String::from_utf8(text).unwrap(), format!("{value:0width$x}", width = min as usize));
        }
    }

    #[test]
    fn now_ms_reads_the_wall_clock_in_milliseconds() {
        let before = i64::try_from(since_epoch().as_millis()).unwrap();
        let now = now_ms();
        assert!(now >= before && now > 1_600_000_000_000, "{now}");
    }
}
