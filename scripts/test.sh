#!/usr/bin/env bash
# Set up and run every test: formatting, lints, and the whole test suite (unit tests,
# the Bianchi validation, cell behaviour, the transmit-path experiments, the CLI).
# Tests run in release mode: the validations simulate hundreds of seconds of channel.
# Ends with one line totalling every test binary's results.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

./scripts/setup.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== examples"
cargo run --release -q -p txop-core --example drive_cell
echo "== python lint"
python3 -m ruff check python/
python3 -m mypy python/txop
echo "== cargo test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --release 2>&1 | tee "$log" || status=$?
# The Python package (installed by setup.sh) against the txop binary just built, its
# sweeps, and the example notebook.
echo "== pytest"
cargo build --release -q -p txop
pylog=$(mktemp)
trap 'rm -f "$log" "$pylog"' EXIT
TXOP_BIN="${CARGO_TARGET_DIR:-target}/release/txop" python3 -m pytest -q -p no:cacheprovider python/tests \
    2>&1 | tee "$pylog" || status=$?
awk '/^test result:/ {
        for (i = 1; i <= NF; i++) {
            if ($(i + 1) ~ /^passed;?$/) p += $i
            if ($(i + 1) ~ /^failed;?$/) f += $i
        }
    }
    END { printf "%d %d\n", p, f }' "$log" > "$log.cargo"
# pytest's last line: "3 failed, 19 passed, 1 error in 9.1s" (errors count as failed).
tail -n 1 "$pylog" | awk -v totals="$(cat "$log.cargo")" '{
        split(totals, t, " "); p = t[1]; f = t[2]
        for (i = 2; i <= NF; i++) {
            if ($i ~ /^passed,?$/) p += $(i - 1)
            if ($i ~ /^(failed|errors?),?$/) f += $(i - 1)
        }
        printf "tests: %d passed, %d failed\n", p, f
    }'
rm -f "$log.cargo"
exit "$status"
