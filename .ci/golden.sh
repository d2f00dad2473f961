#!/usr/bin/env bash
# Hashes every output file of every shipped scenario (the benchmarks aside), audit
# trail and job log included, so that a refactoring can be checked byte for byte:
#
#   .ci/golden.sh target/release/boinc-sim > before.sha256
#   ... change the code, cargo build --release ...
#   .ci/golden.sh target/release/boinc-sim > after.sha256 && diff before.sha256 after.sha256
#
# Not part of CI (it takes a few minutes on 2 cores). Runs two scenarios at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(readlink -f "${1:-target/release/boinc-sim}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
find scenarios -name '*.toml' ! -path 'scenarios/sweeps/*' ! -path 'scenarios/populations/*' ! -name 'bench-*' | sort >"$work/list"
run_one() {
    local bin=$1 work=$2 scenario=$3
    local name=${scenario//\//_}
    if ! "$bin" run "$scenario" --audit --job-log --quiet --out "$work/$name" >"$work/$name.log" 2>&1; then
        # A scenario that is not meant to run (credit replay input) still has a fixed exit.
        echo "exit $? $(head -c 200 "$work/$name.log" | tr '\n' ' ')" >"$work/$name.status"
    fi
}
export -f run_one
xargs -P 2 -I{} bash -c 'run_one "$@"' _ "$bin" "$work" {} <"$work/list"
# The science-error sweep: small (15 runs), and it covers the sweep tables.
"$bin" sweep scenarios/sweeps/science-error-quorum.toml --quiet --no-plots -j 2 --out "$work/sweep-science" >/dev/null
rm -rf "$work/sweep-science/runs"
cd "$work"
find . -type f ! -name '*.log' | sort | xargs sha256sum
