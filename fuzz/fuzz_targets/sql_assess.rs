//! Fuzz target `sql_assess`: the invariants in tests/fuzz_checks/mod.rs, shared with
//! tests/fuzz_regressions.rs.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::sql_assess(data));
