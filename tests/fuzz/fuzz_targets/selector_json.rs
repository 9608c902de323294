//! The JSON PositionSpec (`{"kind":"cursor",…}`): arbitrary JSON never panics, and whatever
//! is accepted prints to a canonical selector that parses back to the same print, through the
//! JSON route too (the spec serialized back to JSON) (`cargo +nightly fuzz run selector_json`).
#![no_main]

use lanser::selector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let direct = selector::parse_json(input);
    // The command line reads a string starting with `{` (after trimming, which JSON alone
    // would not do: `\v`) as JSON: the same answer.
    if input.trim().starts_with('{') {
        let direct = selector::parse_json(input.trim());
        let routed = selector::parse(input);
        assert_eq!(
            direct.as_ref().ok().map(|s| s.to_canonical()),
            routed.as_ref().ok().map(|s| s.to_canonical())
        );
    }
    let Ok(spec) = direct else {
        return;
    };
    let printed = spec.to_canonical();
    let back = selector::parse(&printed).expect("the canonical form parses");
    assert_eq!(back.to_canonical(), printed);
    let json = serde_json::to_string(&spec).expect("a spec serializes");
    let again = selector::parse_json(&json).expect("a serialized spec reads back");
    assert_eq!(again.to_canonical(), printed, "through {json}");
});
