#!/usr/bin/env bash
# A real Slurm cluster of one node on this machine, and a sweep run through it.
#
#   tests/slurm/run.sh               # the sweep test (needs a built boinc-sim)
#   tests/slurm/run.sh --self-test   # only the cluster: a 4-task array job
#
# It installs Debian's slurm-wlm and munge with apt-get when slurmctld or munged is
# missing (as root), starts munged, slurmctld and slurmd on loopback with everything
# (key, sockets, config, state, spool, logs) in one temporary folder, and waits for the
# node to be idle. The sweep test then emits tests/slurm/small-sweep.toml as an sbatch
# array (`boinc-sim sweep --emit-slurm`), submits it with `sbatch --wait`, merges the
# shards (`boinc-sim sweep-merge`), runs the same sweep locally, and compares the
# merged sweep.csv, sweep-summary.csv, best.json and design.json byte for byte with
# the local ones; then reruns one task after removing one of its run records (only
# that run must be redone, the tables stay the same), and checks that sweep-merge
# refuses a missing and a duplicated run.
# On exit, whatever happened, it cancels its jobs, stops the daemons it started (by
# their pids) and removes the temporary folder. See docs/cluster.md.
#
# Environment:
#   BOINC_SIM            the binary (default: $CARGO_TARGET_DIR or target/, release/boinc-sim)
#   KEEP_SLURM_TMP=1     keep the temporary folder (config, logs, outputs) for a look
#   SLURM_TEST_SHARDS    --shards for --emit-slurm (default: the command's own default)
#   SLURM_TEST_TIMEOUT   seconds for the array job (default 600)
#   SLURM_START_TIMEOUT  seconds for the daemons to come up (default 60)
#   SLURM_SELF_TEST_SLEEP  seconds each --self-test task sleeps (default 0)
#
# Exit status: 0 passed, 1 failed, 2 bad usage, 77 skipped (cannot run here: not root,
# or Slurm missing and not installable).
set -euo pipefail

readonly SKIP=77
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
readonly here repo

mode=sweep
for arg in "$@"; do
    case $arg in
        --self-test) mode=self-test ;;
        --keep) KEEP_SLURM_TMP=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "usage: $0 [--self-test] [--keep]" >&2
            exit 2
            ;;
    esac
done

# The daemons live in sbin; a non-login root shell may not have it on the PATH.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
# Our cluster only: settings inherited from a real allocation or site (SBATCH_PARTITION,
# SLURM_JOB_ID, ...) would send the test elsewhere or break it. Our own SLURM_TEST_*,
# SLURM_START_TIMEOUT and SLURM_SELF_TEST_* stay.
while read -r var; do
    unset "$var"
done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN|SQUEUE|SINFO|SCONTROL|SCANCEL)_' |
    grep -vE '^SLURM_(TEST_|START_TIMEOUT$|SELF_TEST_)' || true)

log() { echo "slurm-test: $*"; }
fail() {
    echo "slurm-test: FAIL: $*" >&2
    exit 1
}
skip() {
    echo "skipped: $*"
    exit "$SKIP"
}
# Microseconds since the epoch, and seconds (one decimal) since such a stamp.
now_us() { echo "${EPOCHREALTIME/./}"; }
since() {
    local d=$(($(now_us) - $1))
    printf '%d.%d' $((d / 1000000)) $((d % 1000000 / 100000))
}
t_script=$(now_us)
times=()
log_times() {
    local t line=
    for t in "${times[@]}"; do line+="${line:+, }$t"; done
    log "times: $line"
}

# --- what we need before touching anything -------------------------------------------
bin=
sweep_file="$here/small-sweep.toml"
if [ "$mode" = sweep ]; then
    bin=${BOINC_SIM:-${CARGO_TARGET_DIR:-$repo/target}/release/boinc-sim}
    [ -x "$bin" ] || fail "no boinc-sim binary at $bin (build it with 'cargo build --release', or set BOINC_SIM)"
    bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
    "$bin" sweep --help >/dev/null 2>&1 || fail "$bin has no 'sweep' command"
    [ -f "$sweep_file" ] || fail "no sweep file at $sweep_file"
fi
[ "$(id -u)" = 0 ] ||
    skip "tests/slurm/run.sh runs slurmctld, slurmd and munged as root; run it as root"

# --- Slurm and munge ---------------------------------------------------------------------
missing=()
for cmd in slurmctld slurmd sbatch squeue sinfo scontrol scancel munged munge; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 ||
        skip "${missing[*]} missing and there is no apt-get to install slurm-wlm and munge"
    log "installing slurm-wlm and munge with apt-get (missing: ${missing[*]})"
    t0=$(now_us)
    apt_log=$(mktemp "${TMPDIR:-/tmp}/boinc-sim-slurm-apt.XXXXXX")
    # Keep the packages' init scripts from starting system-wide daemons (no systemd
    # here): policy-rc.d exit 101 means "do not start", for the install only.
    policy=/usr/sbin/policy-rc.d
    made_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=1
    fi
    apt_ok=1
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends slurm-wlm munge; } >"$apt_log" 2>&1 || apt_ok=0
    [ "$made_policy" = 0 ] || rm -f "$policy"
    if [ "$apt_ok" = 0 ]; then
        tail -n 20 "$apt_log" >&2
        rm -f "$apt_log"
        skip "apt-get could not install slurm-wlm and munge (log above)"
    fi
    rm -f "$apt_log"
    times+=("apt install $(since "$t0") s")
    log "installed in $(since "$t0") s: $(slurmctld -V 2>/dev/null || true)"
    for cmd in "${missing[@]}"; do
        command -v "$cmd" >/dev/null 2>&1 || fail "$cmd still missing after installing slurm-wlm and munge"
    done
fi

# --- the temporary folder, and cleanup whatever happens ---------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/boinc-sim-slurm.XXXXXX")
pids=()
names=()
child=
# Runs "$@" in the background and waits for it: a signal to this script then runs the
# cleanup at once (bash runs traps only between foreground commands), which stops it.
run_waiting() {
    local rc=0
    "$@" &
    child=$!
    wait "$child" || rc=$?
    child=
    return "$rc"
}
cleanup() {
    local rc=$? i pid
    set +e
    trap - EXIT INT TERM
    if [ -n "$child" ]; then
        kill -TERM "$child" 2>/dev/null
        wait "$child" 2>/dev/null
    fi
    # Cancel our jobs first, so that no slurmstepd outlives slurmd.
    if [ -n "${SLURM_CONF:-}" ] && [ ${#pids[@]} -ge 2 ] && kill -0 "${pids[1]}" 2>/dev/null; then
        local jobs
        jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
        if [ -n "${jobs// /}" ]; then
            log "cancelling jobs still queued or running: $jobs"
            # shellcheck disable=SC2086 # one argument per job id
            timeout 10 scancel $jobs
            for _ in $(seq 100); do
                [ -z "$(timeout 5 squeue -h -o %A 2>/dev/null)" ] && break
                sleep 0.1
            done
        fi
    fi
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        pid=${pids[i]}
        kill -0 "$pid" 2>/dev/null || continue
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            log "${names[i]} (pid $pid) did not stop in 10 s: killing it"
            kill -KILL "$pid" 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
    done
    if [ "${KEEP_SLURM_TMP:-0}" = 1 ]; then
        log "kept $tmp (slurm.conf, logs/, outputs)"
    else
        rm -rf "$tmp"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$tmp"/{munge,state,spool,run,log}
# Only root can enter $tmp (mktemp -d); munged wants its socket's folder searchable.
chmod 755 "$tmp/munge"

# Prints the last $1 lines of every daemon's log, for a failure (NAME.out, the
# daemon's own stdout and stderr, only when it wrote no NAME.log).
dump_logs() {
    local f lines=${1:-40}
    for f in "$tmp"/log/*; do
        [ -s "$f" ] || continue
        case $f in *.out) [ ! -s "${f%.out}.log" ] || continue ;; esac
        echo "----- $f (last $lines lines)" >&2
        tail -n "$lines" "$f" >&2
    done
}
# Starts "$@" in the background (its output to log/NAME.out) and records its pid.
start() {
    local name=$1
    shift
    "$@" >"$tmp/log/$name.out" 2>&1 &
    pids+=($!)
    names+=("$name")
}
# A TCP port on 127.0.0.1 that nothing listens on (and not $1).
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((20000 + RANDOM % 30000))
        [ "$p" != "${1:-}" ] || continue
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# --- munged --------------------------------------------------------------------------
t_daemons=$(now_us)
key="$tmp/munge/munge.key"
socket="$tmp/munge/munge.socket"
if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --keyfile="$key" --bits=1024 >/dev/null 2>&1 || rm -f "$key"
fi
[ -s "$key" ] || dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
chmod 400 "$key"
# -F: foreground (so its pid is ours); --force: run as root and accept the temp folder.
start munged munged -F --force --key-file="$key" --socket="$socket" \
    --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" \
    --seed-file="$tmp/munge/munged.seed"
for _ in $(seq 100); do
    [ -S "$socket" ] && break
    kill -0 "${pids[0]}" 2>/dev/null || break
    sleep 0.1
done
if ! munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1; then
    dump_logs
    fail "munged did not start (socket $socket)"
fi

# --- slurm.conf, slurmctld, slurmd -----------------------------------------------------
node=$(hostname -s)
ncpus=$(nproc)
ctld_port=$(free_port) || fail "no free TCP port on 127.0.0.1"
slurmd_port=$(free_port "$ctld_port") || fail "no free TCP port on 127.0.0.1"
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# Written by tests/slurm/run.sh: one node on loopback, everything under $tmp.
ClusterName=boincsimtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
KillWait=5
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$ncpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
# -D: foreground; -c (slurmctld): start from a clean state.
start slurmctld slurmctld -D -c -f "$SLURM_CONF"
start slurmd slurmd -D -f "$SLURM_CONF"

start_timeout=${SLURM_START_TIMEOUT:-60}
deadline=$((SECONDS + start_timeout))
state=
while :; do
    for i in "${!pids[@]}"; do
        if ! kill -0 "${pids[i]}" 2>/dev/null; then
            dump_logs
            fail "${names[i]} exited while starting (logs above)"
        fi
    done
    if timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; then
        state=$(timeout 5 sinfo -h -N -n "$node" -o %T 2>/dev/null || true)
        [ "$state" = idle ] && break
    fi
    if [ $SECONDS -ge $deadline ]; then
        dump_logs
        fail "the node was not idle after ${start_timeout} s (state: ${state:-no answer}; logs above)"
    fi
    sleep 0.2
done
times+=("daemons up $(since "$t_daemons") s")
log "cluster up in $(since "$t_daemons") s: node $node, $ncpus CPUs, idle (config $SLURM_CONF)"

job_timeout=${SLURM_TEST_TIMEOUT:-600}
# Submits $1 with sbatch --wait; prints the array tasks' logs (folder $2) on failure.
submit_wait() {
    local script=$1 logs=$2 t0 rc=0
    t0=$(now_us)
    run_waiting timeout "$job_timeout" sbatch --wait "$script" || rc=$?
    times+=("array job $(since "$t0") s")
    if [ "$rc" != 0 ]; then
        local f
        for f in "$logs"/*; do
            [ -f "$f" ] || continue
            echo "----- $f" >&2
            tail -n 40 "$f" >&2
        done
        dump_logs 15
        [ "$rc" = 124 ] && fail "the array job did not finish in $job_timeout s"
        fail "sbatch --wait $script exited with $rc (task logs above)"
    fi
    log "array job finished in $(since "$t0") s"
}

# --- the self-test: a 4-task array writing its task ids ------------------------------
if [ "$mode" = self-test ]; then
    dir="$tmp/self-test"
    mkdir -p "$dir/logs"
    cat >"$dir/array.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=boinc-sim-self-test
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$dir/logs/%A_%a.out
echo "task \$SLURM_ARRAY_TASK_ID of job \$SLURM_ARRAY_JOB_ID on \$(hostname -s)"
sleep ${SLURM_SELF_TEST_SLEEP:-0}
echo "\$SLURM_ARRAY_TASK_ID" >"$dir/task-\$SLURM_ARRAY_TASK_ID.txt"
EOF
    submit_wait "$dir/array.sbatch" "$dir/logs"
    for i in 0 1 2 3; do
        [ "$(cat "$dir/task-$i.txt" 2>/dev/null)" = "$i" ] ||
            fail "array task $i did not write $dir/task-$i.txt"
    done
    times+=("whole script $(since "$t_script") s")
    log_times
    echo "PASS: Slurm self-test: a 4-task array job ran on $node and every task wrote its id"
    exit 0
fi

# --- the sweep: emit, submit, merge, compare with a local run ------------------------
out="$tmp/slurm-out"
local_out="$tmp/local"
shard_args=()
[ -z "${SLURM_TEST_SHARDS:-}" ] || shard_args=(--shards "$SLURM_TEST_SHARDS")
log "emitting the sbatch script: boinc-sim sweep ${sweep_file#"$repo"/} --emit-slurm $out ${shard_args[*]}"
"$bin" sweep "$sweep_file" --emit-slurm "$out" "${shard_args[@]}" ||
    fail "boinc-sim sweep --emit-slurm exited with $?"
[ -f "$out/sweep.sbatch" ] || fail "--emit-slurm wrote no $out/sweep.sbatch"
grep -q '^#SBATCH --array=' "$out/sweep.sbatch" || fail "$out/sweep.sbatch has no #SBATCH --array line"
# sbatch does not create the folder of --output; the emitted script's is DIR/logs.
mkdir -p "$out/logs"
log "submitting $out/sweep.sbatch:"
grep -v '^[[:space:]]*$' "$out/sweep.sbatch" | sed 's/^/    /'
submit_wait "$out/sweep.sbatch" "$out/logs"

log "merging: boinc-sim sweep-merge $out"
"$bin" sweep-merge "$out" || fail "boinc-sim sweep-merge exited with $?"

log "the same sweep locally: boinc-sim sweep ... --out $local_out --jobs 2"
t0=$(now_us)
run_waiting "$bin" sweep "$sweep_file" --out "$local_out" --jobs 2 >"$tmp/local.log" 2>&1 ||
    {
        cat "$tmp/local.log" >&2
        fail "the local sweep exited with an error (output above)"
    }
times+=("local sweep $(since "$t0") s")

# Compares the merged tables in $out with the local run's, byte for byte: sweep.csv
# and sweep-summary.csv always, best.json and design.json when the local run wrote them.
compare_with_local() {
    local f differ=()
    for f in sweep.csv sweep-summary.csv best.json design.json; do
        case $f in
            sweep.csv | sweep-summary.csv) [ -f "$local_out/$f" ] || fail "the local sweep wrote no $local_out/$f" ;;
            *) [ -f "$local_out/$f" ] || continue ;;
        esac
        [ -f "$out/$f" ] || fail "sweep-merge wrote no $out/$f (the local sweep did)"
        if ! cmp -s "$out/$f" "$local_out/$f"; then
            differ+=("$f")
            echo "----- $f: Slurm (merged, <) vs local (>)" >&2
            diff "$out/$f" "$local_out/$f" | head -n 20 >&2 || true
        fi
    done
    [ ${#differ[@]} -eq 0 ] ||
        fail "$1: the merged ${differ[*]} not byte-identical to the local run's (diff above; rerun with KEEP_SLURM_TMP=1 to keep the files)"
    compared=$(for f in sweep.csv sweep-summary.csv best.json design.json; do
        [ ! -f "$local_out/$f" ] || printf '%s ' "$f"
    done)
    log "$1: merged ${compared% } equal the local run's byte for byte"
}
compare_with_local "first submission"
rows=$(($(wc -l <"$out/sweep.csv") - 1))

# --- a failed task, rerun: its finished runs are skipped, the missing one is redone ----
mapfile -t records < <(find "$out" -path '*/runs/*' -type f -name '*.json' | sort)
[ ${#records[@]} -ge 2 ] || fail "expected the shards' run records under $out/*/runs/, found ${#records[@]}"
lost=${records[${#records[@]} - 1]}
rerun=()
if [[ $lost =~ /shard-([0-9]+)-of-[0-9]+/ ]]; then
    rerun=(--array="${BASH_REMATCH[1]}")
fi
rm -f "$lost"
marker="$tmp/before-rerun"
touch "$marker"
t0=$(now_us)
log "rerun: removed ${lost#"$out"/}, resubmitting ${rerun[*]:-the whole array}"
run_waiting timeout "$job_timeout" sbatch --wait "${rerun[@]}" "$out/sweep.sbatch" ||
    fail "the rerun (sbatch --wait ${rerun[*]}) exited with $? (logs in $out/logs)"
times+=("rerun $(since "$t0") s")
[ -f "$lost" ] || fail "the rerun did not write ${lost#"$out"/} again"
redone=$(find "$out" -path '*/runs/*' -type f -name '*.json' -newer "$marker" | sort | tr '\n' ' ')
[ "${redone% }" = "$lost" ] ||
    fail "the rerun should have redone only ${lost#"$out"/}, it wrote: ${redone:-nothing}"
"$bin" sweep-merge "$out" --quiet || fail "boinc-sim sweep-merge after the rerun exited with $?"
compare_with_local "after the rerun"

# --- what the merge checks: a missing or a duplicated run fails it (exit 1, one line) ---
# Runs sweep-merge on a copy of $out changed by "$2..." and expects that failure.
merge_must_fail() {
    local what=$1 copy="$tmp/merge-$1" rc=0 errs
    shift
    rm -rf "$copy"
    cp -a "$out" "$copy"
    "$@" "$copy"
    "$bin" sweep-merge "$copy" --quiet >"$copy.out" 2>"$copy.err" || rc=$?
    errs=$(wc -l <"$copy.err")
    [ "$rc" = 1 ] || fail "sweep-merge with a $what run exited with $rc, not 1: $(cat "$copy.err")"
    [ "$errs" = 1 ] || fail "sweep-merge with a $what run printed $errs lines on stderr, not 1: $(cat "$copy.err")"
    log "sweep-merge with a $what run: exit 1, $(cat "$copy.err")"
}
drop_one() { rm -f "$1/${records[0]#"$out"/}"; }
merge_must_fail missing drop_one
runs_dirs=$(find "$out" -type d -name runs | wc -l)
if [ "$runs_dirs" -ge 2 ]; then
    # The first record, copied into another shard's runs/ folder.
    dup_one() {
        local from=${records[0]#"$out"/} to
        to=$(find "$1" -type d -name runs | sort | grep -v "^$1/$(dirname "$from")\$" | head -n 1)
        cp "$1/$from" "$to/"
    }
    merge_must_fail duplicated dup_one
else
    log "one runs/ folder only: the duplicated-run check does not apply"
fi

times+=("whole script $(since "$t_script") s")
log_times
echo "PASS: Slurm sweep: the merged sweep.csv ($rows rows) and sweep-summary.csv equal the local run's byte for byte, also after rerunning a failed task; sweep-merge refuses a missing or duplicated run"
