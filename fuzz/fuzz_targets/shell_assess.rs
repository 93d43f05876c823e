//! Fuzz target `shell_assess`: the invariants in tests/fuzz_checks/mod.rs, shared with
//! tests/fuzz_regressions.rs.
#![no_main]

#[allow(dead_code)]
#[path = "../../tests/fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(
    init: {
        // brush-parser panics on a few number overflows (`7777777777<x`); riskgate parses
        // behind `catch_unwind` and judges such a line destructive (src/tools/command/
        // syntax.rs). libfuzzer-sys's panic hook aborts before anything can catch, so let
        // panics raised inside brush-parser unwind to that guard. One that escapes it
        // still fails the check's thread, and the check then panics and aborts.
        let libfuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.location().is_some_and(|l| l.file().contains("/brush-parser-")) {
                return;
            }
            libfuzzer_hook(info);
        }));
    },
    |data: &[u8]| fuzz_checks::shell_assess(data)
);
