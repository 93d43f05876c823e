#!/usr/bin/env bash
# Runs every fuzz target for a while: FUZZ_SECONDS per target (default 20, the CI run).
#
#   fuzz/run.sh                                   # CI: 20 s per target, no sanitizer
#   FUZZ_SECONDS=1800 fuzz/run.sh                 # a long run
#   FUZZ_SECONDS=1800 FUZZ_SANITIZER=address fuzz/run.sh
#   FUZZ_TARGETS="sql_assess" FUZZ_SECONDS=600 fuzz/run.sh
#
# Seeds: fuzz/seeds.py writes fuzz/corpus/<target>/ from tests/data/risk_cases.jsonl (skipped
# without python3); the kept inputs in tests/data/fuzz/<target>/ are read as seeds too.
# New inputs the fuzzer finds go to fuzz/corpus/<target>/ (gitignored), so later runs start
# from them. A crash leaves its input in fuzz/artifacts/<target>/ and fails the script once
# every target has run; README.md ("Fuzzing") says how to turn it into a regression test.
#
# Toolchain: nightly when rustup has it; otherwise the default (stable) toolchain with
# RUSTC_BOOTSTRAP=1, which lets it take the -Z flags cargo-fuzz passes. cargo-fuzz is
# installed if missing.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${FUZZ_SECONDS:-20}"
sanitizer="${FUZZ_SANITIZER:-none}"
# Longer inputs add little but time (json_objects is quadratic in the number of `{`).
max_len="${FUZZ_MAX_LEN:-4096}"
read -r -a targets <<<"${FUZZ_TARGETS:-json_protocol shell_assess sql_assess}"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
if command -v rustup >/dev/null 2>&1 && rustup toolchain list | grep -q '^nightly'; then
  fuzz=(cargo +nightly fuzz)
else
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi

if command -v python3 >/dev/null 2>&1; then
  python3 seeds.py
else
  echo "fuzz: no python3; seeding from tests/data/fuzz only" >&2
fi

started=$(date +%s)
"${fuzz[@]}" build --sanitizer "$sanitizer"
echo "fuzz: build took $(($(date +%s) - started)) s"

failed=()
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  echo "fuzz: $target for $seconds s (sanitizer $sanitizer)"
  # -timeout: one input taking 10 s is a hang, reported as a crash.
  if ! "${fuzz[@]}" run --sanitizer "$sanitizer" "$target" "corpus/$target" "../tests/data/fuzz/$target" -- \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1; then
    failed+=("$target")
  fi
done

echo "fuzz: all targets took $(($(date +%s) - started)) s"
if ((${#failed[@]})); then
  echo "fuzz: crashes in ${failed[*]}; the inputs are in fuzz/artifacts/" >&2
  exit 1
fi
