#!/usr/bin/env bash
# Set up what txop needs on a fresh machine: a Rust toolchain with rustfmt and clippy,
# and flent (with matplotlib) for the tests that open txop's flent data files.
# Idempotent; prints what it does. Later stages (the emulator's tests, flent) add their
# Debian and PyPI packages here.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    elif command -v apt-get >/dev/null 2>&1; then
        echo "setup: no cargo found; installing Debian's cargo and rustc" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cargo rustc >/dev/null
    else
        echo "setup: error: no Rust toolchain (cargo) and no apt-get to install one" >&2
        exit 1
    fi
fi

if command -v rustup >/dev/null 2>&1; then
    for c in rustfmt clippy; do
        if ! rustup component list --installed 2>/dev/null | grep -q "^$c"; then
            echo "setup: adding rustup component $c" >&2
            rustup component add "$c" >&2
        fi
    done
fi

# flent (from PyPI) opens the .flent.gz files txop writes; the tests render plots with it.
if ! command -v flent >/dev/null 2>&1; then
    echo "setup: installing flent and matplotlib from PyPI" >&2
    python3 -m pip install --quiet --disable-pip-version-check flent matplotlib >&2
fi

cargo --version >&2
