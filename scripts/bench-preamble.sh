# Sourced by the callgrind benchmarks (bench-callgrind.sh, bench-kernel-rc.sh): from
# the repository's root, `bin` is the txop binary given as the first argument (or a
# release build), valgrind must be there, and `out` is a temporary directory removed
# on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
    cargo build --release -q -p txop
    bin=target/release/txop
fi
command -v valgrind >/dev/null || { echo "$(basename "$0"): valgrind not found (apt install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
