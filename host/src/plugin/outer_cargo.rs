/// What an outer cargo sets for its own build (flags, jobserver, target)
/// and a nested `cargo build` of wasm plugins must not inherit. Included
/// by host/build.rs too, so both builds of plugins drop the same list.
pub const OUTER_CARGO_VARS: [&str; 8] =
    ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS", "CARGO_PRIMARY_PACKAGE"];
