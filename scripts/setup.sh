#!/usr/bin/env bash
# Set up what txop needs on a fresh machine: a Rust toolchain with rustfmt and clippy,
# the kernel source the differential test builds (linux-source-6.12), flent (with
# matplotlib) for the tests that open txop's flent data files, the programs the
# emulator's tests run (iproute2, ping, iperf3, irtt, fping), and the Python package
# txop with what its sweeps and tests use.
# Idempotent; prints what it does.
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

# The emulator's tests run real programs through the emulated cell: ping (iputils),
# iperf3, and irtt + fping for flent's ping and voip tests; and iproute2's `ip` for the
# namespaces. Debian's packages, installed only if missing.
missing=()
for pair in ip:iproute2 ping:iputils-ping iperf3:iperf3 irtt:irtt fping:fping; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
        echo "setup: installing ${missing[*]} from Debian" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "setup: warning: ${missing[*]} missing (needs root and apt-get); the emulator tests will fail" >&2
    fi
fi

# tshark (Debian's, from the wireshark suite) reads the radiotap captures `txop run
# --pcap` writes; the capture tests check them with it. Preseeded so that installing
# it asks no question (no setuid dumpcap: txop writes files, it never captures live).
if ! command -v tshark >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
        echo "setup: installing tshark from Debian" >&2
        echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null
    else
        echo "setup: warning: tshark missing (needs root and apt-get); the capture tests will fail" >&2
    fi
fi

# The Linux kernel's source (Debian's linux-source-6.12: a tarball under /usr/src): the
# kernel-oracle crate's differential tests build the kernel's own fq, CoDel and
# minstrel_ht from it and run them beside txop's, and `rate_control =
# "minstrel_ht-kernel"` builds minstrel_ht from it at run time (txop-kernel, with the
# C compiler).
if [ ! -f /usr/src/linux-source-6.12.tar.xz ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
        echo "setup: installing linux-source-6.12 from Debian" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-source-6.12 >/dev/null
    else
        echo "setup: warning: linux-source-6.12 missing (needs root and apt-get); the kernel-oracle and kernel-code tests will fail" >&2
    fi
fi

# The Python package txop (python/txop, its native module from crates/txop-py) and what
# it, its tests and the example notebook use, from PyPI: maturin builds the wheel;
# pandas, xarray, dask.distributed, tqdm, h5netcdf (netCDF output) for sweeps; pytest,
# nbclient and ipykernel run the tests and the notebook; ruff and mypy check its code
# (the versions whose rules the code follows).
py_imports="maturin pandas xarray distributed tqdm h5netcdf h5py pytest nbclient nbformat ipykernel matplotlib ruff mypy"
if ! python3 -c "import ${py_imports// /, }" 2>/dev/null; then
    echo "setup: installing the Python package's dependencies from PyPI" >&2
    python3 -m pip install --quiet --disable-pip-version-check maturin pandas xarray \
        "dask[distributed]" tqdm h5netcdf h5py pytest nbclient nbformat ipykernel matplotlib \
        ruff==0.17.6 mypy==2.4.1 >&2
fi
# The wheel, built and installed again whenever its sources have changed since the last
# install (a hash of them beside the wheel), or when the package does not import.
repo=$(cd "$(dirname "$0")/.." && pwd)
wheels="${CARGO_TARGET_DIR:-$repo/target}/wheels"
src_hash=$(cd "$repo" && find Cargo.toml Cargo.lock pyproject.toml python/txop crates/*/Cargo.toml \
        crates/*/src crates/txop-report/assets -type f -not -name '*.pyc' -print0 \
    | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ "$(cat "$wheels/txop.source-hash" 2>/dev/null)" != "$src_hash" ] \
    || ! python3 -c "import txop._txop" 2>/dev/null; then
    echo "setup: building the Python package txop (maturin) and installing it" >&2
    mkdir -p "$wheels"
    rm -f "$wheels"/txop-*.whl "$wheels/txop.source-hash"
    (cd "$repo" && python3 -m maturin build --release --quiet -o "$wheels") >&2
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --force-reinstall --no-deps \
        "$wheels"/txop-*.whl >&2
    echo "$src_hash" > "$wheels/txop.source-hash"
fi

cargo --version >&2
