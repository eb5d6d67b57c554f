//! "Did you mean" for every misspelt name the macros report: kinds, `#[hook]` arguments, field
//! keys and stages all go through [`did_you_mean`], so they agree on what is close enough and on
//! which of two equally close names wins.

/// How similar (Jaro-Winkler, 0 to 1) a candidate must be to be suggested.
const THRESHOLD: f64 = 0.8;

/// The candidate most similar to `name`, if one is similar enough to suggest. Of two equally
/// similar candidates the earlier one wins, so a list's order decides, not the scoring's float
/// rounding.
pub(crate) fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(f64, &'a str)> = None;
    for candidate in candidates {
        let score = strsim::jaro_winkler(name, candidate);
        if score > THRESHOLD && best.is_none_or(|(best_score, _)| score > best_score) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggests_the_closest_candidate() {
        assert_eq!(
            did_you_mean("filter_message", ["filter_messages", "after_create_message"]),
            Some("filter_messages")
        );
        assert_eq!(did_you_mean("tiemout_ms", ["id", "timeout_ms", "blocking", "crate"]), Some("timeout_ms"));
        assert_eq!(did_you_mean("zzz", ["id", "timeout_ms"]), None);
    }

    #[test]
    fn the_earlier_of_two_equal_candidates_wins() {
        assert_eq!(did_you_mean("ab", ["abc", "abd"]), Some("abc"));
        assert_eq!(did_you_mean("ab", ["abd", "abc"]), Some("abd"));
    }
}
