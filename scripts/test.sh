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
echo "== cargo test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --release 2>&1 | tee "$log" || status=$?
awk '/^test result:/ {
        for (i = 1; i <= NF; i++) {
            if ($(i + 1) ~ /^passed;?$/) p += $i
            if ($(i + 1) ~ /^failed;?$/) f += $i
        }
    }
    END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
