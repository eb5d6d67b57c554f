//! Lower-case hexadecimal, as ids and SHA-256 digests are written: from a table, two digits a
//! byte (`format!("{:02x}")` per byte took a fifth of a tool turn's instructions for the
//! decision record's hashes).

use sha2::{Digest, Sha256};

/// The digits, by value.
pub(crate) const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` in lower-case hex, two digits a byte.
pub(crate) fn lower(bytes: &[u8]) -> String {
    let mut hex = Vec::with_capacity(2 * bytes.len());
    for byte in bytes {
        hex.push(DIGITS[usize::from(byte >> 4)]);
        hex.push(DIGITS[usize::from(byte & 0xf)]);
    }
    // Every byte pushed is an ASCII digit.
    String::from_utf8(hex).unwrap_or_default()
}

/// The SHA-256 of `bytes`, in lower-case hex.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    lower(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_what_format_writes() {
        let bytes = [0x00, 0x0f, 0x10, 0xab, 0xff];
        let expected: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        assert_eq!(lower(&bytes), expected);
        assert_eq!(sha256(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
