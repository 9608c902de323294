//! The selector parser never panics, and whatever it accepts prints to a canonical form that
//! parses back to the same print (`cargo +nightly fuzz run selector`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = lanser::selector::parse(input) {
        let printed = spec.to_canonical();
        let back = lanser::selector::parse(&printed).expect("the canonical form parses");
        assert_eq!(back.to_canonical(), printed);
    }
});
