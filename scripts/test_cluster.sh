#!/usr/bin/env bash
# End-to-end test of sweeps on a Slurm cluster (make test-cluster): starts munged,
# slurmctld and slurmd on this machine as a one-node cluster (configuration and munge
# key generated in a temporary folder, no network needed), submits the script that
# `cnntime cluster slurm` writes as a two-task array of CPU sweeps, merges the shards
# with `cnntime cache import` and checks every planned measurement arrived exactly
# once; then cancels one task part-way, requeues it and checks it resumes in its shard
# without measuring again. Then the training jobs `cnntime launch slurm` writes: two pass
# sbatch --test-only, and one trains resnet18 with cnntime's training script on this CPU
# on a tiny ImageFolder made here, and the step time it measured imports into the cache.
# Every daemon is stopped by its PID at the end, pass or fail.
#
# The nodes run the headless build (make headless: no graphics library, as a compute node
# has none), checked to link no graphics library before anything runs.
#
# Needs root (the daemons run as root here) and Debian's slurm-wlm and munge, which it
# installs when missing, and /usr/bin/python3 with PyTorch, torchvision and PIL (make
# test-deps installs them; CLUSTER_TEST_PYTHON names another). CNNTIME names a built cnntime-headless; without it one is built.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT=${CLUSTER_TEST_TIMEOUT:-300} # seconds any one wait may take

say() { printf '== %s\n' "$*"; }
fail() {
	printf 'test-cluster FAILED: %s\n' "$*" >&2
	exit 1
}

if [ "$(id -u)" != 0 ]; then
	fail "run as root (the one-node cluster's daemons run as root): sudo make test-cluster"
fi
missing=""
for p in slurm-wlm munge; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing Debian packages:$missing"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

T=$(mktemp -d /tmp/cnntime-cluster.XXXXXX)
chmod 755 "$T"
stop_all() {
	local status=$?
	for pidfile in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"; do
		if [ -s "$pidfile" ]; then
			pid=$(cat "$pidfile")
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$pid" 2>/dev/null || true
		fi
	done
	if [ "$status" != 0 ]; then
		echo "--- logs (status $status) ---" >&2
		tail -n 20 "$T"/*.log "$T"/munge/*.log "$T"/work/*.out 2>/dev/null >&2 || true
	fi
	rm -rf "$T"
	exit "$status"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# cnntime itself: the headless build, as on a cluster.
if [ -n "${CNNTIME:-}" ]; then
	cp "$CNNTIME" "$T/cnntime"
else
	say "building cnntime-headless"
	CGO_ENABLED=0 go build -tags headless -o "$T/cnntime" .
fi
bin=$T/cnntime
if libs=$(ldd "$bin" 2>&1) && grep -E 'lib(GL|GLX|EGL|X11|wayland|xkbcommon)' <<<"$libs"; then
	fail "$bin needs a graphics library, which a compute node lacks: build it with make headless"
fi
if "$bin" >/dev/null 2>&1; then
	fail "$bin opened without a command: it is not the headless build (make headless)"
fi
say "cnntime-headless: $(head -n 1 <<<"$libs")"

# munge, with a key made here and its own socket.
mkdir -p "$T/munge" && chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
socket=$T/munge/munge.socket
munged --force --key-file="$T/munge/munge.key" --socket="$socket" --pid-file="$T/munge/munged.pid" \
	--log-file="$T/munge/munged.log" --seed-file="$T/munge/munged.seed"

# A one-node cluster: this host, all its CPUs, one partition; ports away from the defaults.
host=$(hostname -s)
cpus=$(nproc)
# The node's memory, as slurmd finds it less a tenth: jobs that ask for --mem fit.
mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
mkdir -p "$T/state" "$T/spool" "$T/work"
cat >"$T/slurm.conf" <<EOF
ClusterName=cnntimetest
SlurmctldHost=$host
SlurmctldPort=${CLUSTER_TEST_PORT:-16817}
SlurmdPort=$((${CLUSTER_TEST_PORT:-16817} + 1))
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
JobRequeue=1
MinJobAge=600
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -i
slurmd

# wait_for DESCRIPTION COMMAND...: retry COMMAND each half second for LIMIT seconds.
wait_for() {
	local what=$1
	shift
	local end=$((SECONDS + LIMIT))
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || fail "timed out after ${LIMIT}s waiting for $what"
		sleep 0.5
	done
}
node_idle() { sinfo -h -n "$host" -o '%t' | grep -qx 'idle'; }
wait_for "the node to come up idle" node_idle
say "one-node cluster up: $(sinfo -h -o '%P %D %t %C')"

# measurements FILE: the measurement count of a cache file.
measurements() {
	"$bin" --db "$1" --json cache info | sed -n 's/^  "measurements": \([0-9]*\),$/\1/p'
}
# job_gone JOB: no task of the job is pending or running.
job_gone() { [ -z "$(squeue -h -j "$1" -o '%i' 2>/dev/null)" ]; }

# ---- 1. A two-task array of CPU sweeps, merged.
cd "$T/work"
"$bin" cluster slurm --models squeezenet1_1 --batches 1,2 --device cpu --array 2 \
	--shards "$T/work/shards" --cnntime "$bin" --out sweep.sbatch
grep -q '^#SBATCH --array=0-1$' sweep.sbatch || fail "the generated script has no two-task array"
job=$(sbatch --parsable sweep.sbatch)
say "submitted array job $job"
wait_for "array job $job to finish" job_gone "$job"
for t in 0 1; do
	state=$(scontrol -o show job "${job}_$t" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
	[ "$state" = COMPLETED ] || fail "task $t ended $state, not COMPLETED: $(cat cnntime-sweep-"${job}_$t".out)"
done
shopt -s nullglob
shards=(shards/shard-"$job"-*.db)
[ "${#shards[@]}" = 2 ] || fail "want 2 shards of job $job, found ${#shards[@]}: ${shards[*]}"
sum=0
for s in "${shards[@]}"; do
	n=$(measurements "$s")
	[ "$n" -gt 0 ] || fail "shard $s holds no measurements"
	say "$s: $n measurements"
	sum=$((sum + n))
done
"$bin" --db merged.db cache import "${shards[@]}" >/dev/null
merged=$(measurements merged.db)
# The same sweep in one process on this machine is the plan every task shares.
"$bin" --db reference.db sweep --models squeezenet1_1 --batches 1,2 --device cpu >/dev/null 2>&1
planned=$(measurements reference.db)
say "planned $planned, shards $sum, merged $merged"
[ "$sum" = "$planned" ] || fail "the shards hold $sum measurements, the plan $planned: a task measured something twice or missed some"
[ "$merged" = "$planned" ] || fail "the merged cache holds $merged measurements, the plan $planned"
again=$("$bin" --db merged.db sweep --models squeezenet1_1 --batches 1,2 --device cpu 2>/dev/null)
case "$again" in
*" 0 of 0 measured"*) ;;
*) fail "the merged cache lacks planned measurements: a new sweep says: $again" ;;
esac

# ---- 2. Cancel a task part-way, requeue it: it resumes in its shard.
"$bin" cluster slurm --models squeezenet1_1 --batches 1-8 --device cpu --array 2 \
	--shards "$T/work/shards" --cnntime "$bin" --job-name requeue-test --out requeue.sbatch
job=$(sbatch --parsable requeue.sbatch)
say "submitted array job $job; cancelling task 0 part-way"
shard0() { compgen -G "$T/work/shards/shard-$job-0-*.db" | head -n 1; }
started() {
	local f
	f=$(shard0) && [ -n "$f" ] && [ "$(measurements "$f" 2>/dev/null || echo 0)" -ge 20 ]
}
wait_for "task 0 to measure something" started
scancel "${job}_0"
cancelled() { scontrol -o show job "${job}_0" | grep -q 'JobState=CANCELLED'; }
wait_for "task 0 to be cancelled" cancelled
f=$(shard0)
before=$(measurements "$f")
say "task 0 cancelled with $before measurements in $f; requeueing it"
scontrol requeue "${job}_0"
wait_for "array job $job to finish" job_gone "$job"
for t in 0 1; do
	state=$(scontrol -o show job "${job}_$t" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
	[ "$state" = COMPLETED ] || fail "task $t of job $job ended $state"
done
out=requeue-test-${job}_0.out
grep -q "resuming in $f" "$out" || fail "requeued task 0 did not reopen $f: $(cat "$out")"
[ "$(shard0)" = "$f" ] || fail "task 0 has a second shard"
after=$(measurements "$f")
# The requeued run's sweeps report what they found cached; together they must be what
# the cancelled run left, and what they measured the rest.
resumed=$(sed -n '/: resuming in /,$p' "$out")
cached=$(grep -o '[0-9]* were already cached' <<<"$resumed" | awk '{s += $1} END {print s + 0}')
measured=$(grep -o '[0-9]* of [0-9]* measured' <<<"$resumed" | awk '{s += $1} END {print s + 0}')
say "task 0: $before before the requeue, $cached found cached after it, $measured measured after it, $after in the end"
[ "$cached" -ge "$before" ] || fail "the requeued task found $cached cached, fewer than the $before measured before"
[ $((before + measured)) = "$after" ] || fail "the requeued task measured $measured on top of $before, but the shard holds $after: something was measured twice"
"$bin" --db "$T/work/ref8.db" sweep --models squeezenet1_1 --batches 1-8 --device cpu >/dev/null 2>&1
all=$(measurements "$T/work/ref8.db")
sum=0
for s in shards/shard-"$job"-*.db; do sum=$((sum + $(measurements "$s"))); done
[ "$sum" = "$all" ] || fail "job $job's shards hold $sum measurements, the plan $all"
# ---- 3. The training jobs `cnntime launch slurm` writes pass sbatch --test-only
# (issue 33's check, apart from the sweeps above). This cluster hands out no GPUs, so the
# GPU machine's script asks for none (--gres none), one CPU and no memory; its nodes and
# time limit are its own. This computer's CPU, measured above, needs no such overrides.
"$bin" --db merged.db launch slurm --model resnet50 --machine aws/p4d.24xlarge --batch 256 --gres none --cpus-per-task 1 --mem none \
	--partition test --out train-gpu.sbatch >/dev/null
"$bin" --db merged.db launch slurm --model squeezenet1_1 --machine local/cpu --batch 2 --epochs 1 --out train-cpu.sbatch >/dev/null
for f in train-gpu.sbatch train-cpu.sbatch; do
	grep -q '^#SBATCH --time=[0-9]*-[0-9][0-9]:[0-9][0-9]:00$' "$f" || fail "$f has no time limit: $(cat "$f")"
	sbatch --test-only "$f" 2>test-only.err || fail "sbatch --test-only refuses $f: $(cat test-only.err)"
	say "launch slurm, $f: $(tail -n 1 test-only.err)"
done

# ---- 4. A launched training run, end to end: `cnntime launch slurm` for this computer's
# CPU on a tiny ImageFolder of 64-pixel JPEGs made here (2 classes, 12 training and 3
# validation images each), run by Slurm with cnntime's training script (the script writes
# it out beside its checkpoints) and Debian's PyTorch; the step time it measured imports
# into the cache as the run's own step.
py=${CLUSTER_TEST_PYTHON:-/usr/bin/python3}
"$py" -c 'import torch, torchvision, PIL' 2>/dev/null ||
	fail "$py has no PyTorch, torchvision and PIL for the training job: make test-deps installs python3-torch python3-torchvision"
"$py" - "$T/work/imgs" <<'PYEOF'
import os, random, sys
from PIL import Image, ImageDraw
random.seed(0)
for split, n in (("train", 12), ("val", 3)):
    for c, colour in (("red", (200, 40, 40)), ("blue", (40, 40, 200))):
        d = os.path.join(sys.argv[1], split, c)
        os.makedirs(d)
        for i in range(n):
            img = Image.new("RGB", (64, 64), colour)
            ImageDraw.Draw(img).ellipse([random.randrange(32), random.randrange(32), 40 + random.randrange(24), 40 + random.randrange(24)], fill=(230, 230, 60))
            img.save(os.path.join(d, f"{i}.jpg"), quality=85)
PYEOF
"$bin" --db merged.db --json launch slurm --model resnet18 --machine local/cpu --batch 8 --input 32 --images 24 --classes 2 --epochs 2 \
	--workers 1 --data "$T/work/imgs" --checkpoints "$T/work/train-run" --partition test --out train-run.sbatch >launch.json
sbatch --test-only train-run.sbatch 2>test-only.err || fail "sbatch --test-only refuses train-run.sbatch: $(cat test-only.err)"
job=$(PYTHON=$py OMP_NUM_THREADS=1 sbatch --parsable train-run.sbatch)
say "submitted training job $job: $(grep -E '^#SBATCH --(time|cpus-per-task|mem)=' train-run.sbatch | tr '\n' ' ')"
wait_for "training job $job to finish" job_gone "$job"
state=$(scontrol -o show job "$job" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
[ "$state" = COMPLETED ] || fail "training job $job ended $state: $(cat cnntime-train-"$job".out)"
grep -q 'epoch 2 model: top-1' cnntime-train-"$job".out || fail "the training job did not evaluate after its 2 epochs: $(cat cnntime-train-"$job".out)"
[ -s "$T/work/train-run/checkpoint.pt" ] || fail "the training job left no checkpoint in $T/work/train-run"
steps=$T/work/train-run/steps.csv
[ -s "$steps" ] || fail "the training job wrote no step times ($steps): $(cat cnntime-train-"$job".out)"
before=$("$bin" --db merged.db --json cache info | sed -n 's/^  "steps": \([0-9]*\),$/\1/p')
"$bin" --db merged.db cache import "$steps" >/dev/null
after=$("$bin" --db merged.db --json cache info | sed -n 's/^  "steps": \([0-9]*\),$/\1/p')
[ "$after" = $((before + 1)) ] || fail "importing $steps took the cache's steps from $before to $after, not one more"
"$bin" --db merged.db --json cache info | grep -q '"source": "cnntime_train.py on ' || fail "the imported step does not name cnntime_train.py as its source"
row=$("$bin" --db merged.db cache export --csv - | grep ',resnet18,8,fp32,' | grep 'cnntime_train.py') ||
	fail "the cache exports no resnet18 step at batch 8 from the training job"
say "training job $job: $(tail -n 2 cnntime-train-"$job".out | head -n 1)"
say "imported: $row"

say "test-cluster passed"
