#!/usr/bin/env bash
# Set up and run every test: formatting, lints, and the whole test suite (unit tests,
# the Bianchi validation, cell behaviour, the CLI). Tests run in release mode: the
# validation simulates hundreds of seconds of saturated channel.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

./scripts/setup.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo test"
cargo test --workspace --release
