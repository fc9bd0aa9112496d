#!/usr/bin/env bash
# bench_predict.sh BEFORE AFTER: the predictor's two big cases as whole processes, two
# cnntime builds side by side in one run (build each with: go build -tags headless -o …):
#   best     10 CNNs × 10 GPUs at every batch 1–1024 (goal 0.25 s)
#   csv      predict --csv of every zoo CNN on every catalog machine at 1–1024 (goal 2 s)
# For each: wall time (hyperfine when installed, else the best of RUNS runs with
# /usr/bin/time), peak memory, instructions counted by valgrind's callgrind when
# installed (steady on a machine other programs load; CALLGRIND=0 skips them, the CSV's
# take minutes), and whether the two builds print the same bytes.
set -euo pipefail
before=$(realpath "$1") after=$(realpath "$2")
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/before.db" # the BEFORE build's own cache (dbs below)
models=$("$before" --db "$db" models --json | python3 -c 'import json,sys; print(",".join(m["name"] for m in json.load(sys.stdin)))')
machines=$("$before" --db "$db" machines --json | python3 -c '
import json,sys
d=json.load(sys.stdin)
ms=d["machines"] if isinstance(d,dict) else d
print(",".join(m["id"] for m in ms if "/" in m["id"] and not m["id"].startswith(("local/","gpu/"))))')
ten=resnet18,resnet50,resnet152,vgg16,densenet121,mobilenet_v2,efficientnet_b0,inception_v3,convnext_tiny,regnet_y_1_6gf
gpus=t4,a10g,l4,a100-sxm4-80gb,h100-sxm,v100-sxm2-16gb,rtx-4090,l40s,h200,b200
declare -A args
args[best]="best --model $ten --gpu $gpus --batches 1-1024"
args[csv]="predict --batches 1-1024 --csv --model $models --machine $machines"
# Each build reads a cache of its own: a newer build may upgrade a cache's schema, which
# an older one then refuses.
declare -A dbs=([before]="--db $work/before.db" [after]="--db $work/after.db")

for c in ${CASES:-best csv}; do
	echo "== $c: cnntime ${args[$c]:0:120}…"
	for b in before after; do
		bin=${!b}
		# shellcheck disable=SC2086
		"$bin" ${dbs[$b]} ${args[$c]} | sha256sum > "$work/$c.$b.sha"
		# shellcheck disable=SC2086
		/usr/bin/time -f "%M" -o "$work/$c.$b.mem" "$bin" ${dbs[$b]} ${args[$c]} > /dev/null
		echo "$b: output sha256 $(cut -c1-16 "$work/$c.$b.sha"), peak memory $(( $(cat "$work/$c.$b.mem") / 1024 )) MB"
	done
	if cmp -s "$work/$c.before.sha" "$work/$c.after.sha"; then echo "same output"; else echo "OUTPUTS DIFFER"; fi
	if command -v hyperfine > /dev/null; then
		hyperfine -N -w 1 -r "$runs" -n before "$before ${dbs[before]} ${args[$c]}" -n after "$after ${dbs[after]} ${args[$c]}" --output=null 2>&1 | grep -E "Time|User|±|faster|^  (before|after)|rror"
	else
		for b in before after; do
			bin=${!b} bestwall=""
			for _ in $(seq "$runs"); do
				# shellcheck disable=SC2086
				/usr/bin/time -f "%e %U" -o "$work/t" "$bin" ${dbs[$b]} ${args[$c]} > /dev/null
				read -r wall user < "$work/t"
				if [ -z "$bestwall" ] || awk "BEGIN{exit !($wall < $bestwall)}"; then bestwall=$wall bestuser=$user; fi
			done
			echo "$b: best of $runs: ${bestwall} s wall, ${bestuser} s user"
		done
	fi
	if [ "${CALLGRIND:-1}" != 0 ] && command -v valgrind > /dev/null; then
		for b in before after; do
			bin=${!b}
			# Go's runtime reads the time stamp counter with RDTSCP, which valgrind 3.19 does
			# not know, and preempts with signals callgrind mishandles: both off. A command
			# runs in a child process of cnntime's (the supervisor): children traced too.
			# shellcheck disable=SC2086
			GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 valgrind --tool=callgrind --trace-children=yes \
				--callgrind-out-file="$work/cg.$b.%p" "$bin" ${dbs[$b]} ${args[$c]} > /dev/null 2> /dev/null
			n=$(cat "$work"/cg.$b.* | awk '/^summary:/{s+=$2} END{printf "%.0f", s}')
			rm -f "$work"/cg.$b.*
			echo "$b: $(awk -v n="$n" 'BEGIN{printf "%.2f", n/1e9}') G instructions"
		done
	fi
done
