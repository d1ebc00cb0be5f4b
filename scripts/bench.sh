#!/usr/bin/env bash
# Every performance benchmark beside its floor and its peer, in one invocation, and the ratios:
#
#   scripts/bench.sh            run them (BENCH_COUNT times each, default 6) and print the report
#   scripts/bench.sh --readme   ... and rewrite docs/PERFORMANCE.md's generated section with it
#
# The raw go test output stays in $BENCH_OUT (default /tmp/ratelab-bench) for benchstat:
#   benchstat $BENCH_OUT/limiters.txt     benchstat -col /cpu $BENCH_OUT/cores.txt
# Benchmarks are not run in CI (.ci/run): times on shared machines say little, ratios more.
set -euo pipefail
cd "$(dirname "$0")/.."

count=${BENCH_COUNT:-6}
out=${BENCH_OUT:-/tmp/ratelab-bench}
mkdir -p "$out"
load=() # the 1-minute load average before each benchmark and at the end, for the report
sample_load() { [ -r /proc/loadavg ] && load+=("$(cut -d' ' -f1 /proc/loadavg)") || true; }
bench() { # bench FILE PACKAGE REGEX [go test flags...]: appends to FILE
	local file=$1 pkg=$2 re=$3
	shift 3
	sample_load
	echo "bench.sh: $pkg -bench '$re' -count $count $* (load ${load[-1]:-?})" >&2
	go test -run '^$' -bench "$re" -benchmem -count "$count" "$@" "$pkg" | tee -a "$out/$file" | grep -E '^(ok|FAIL|---)' >&2 || true
}
rm -f "$out"/limiters.txt "$out"/engine.txt "$out"/cores.txt

# Limiters (explicit time, serial and RunParallel) with the floor and x/time/rate in the same
# functions (the kinds the report shows); the peers beside the libraries they wrap (x/time/rate,
# uber) and the token bucket.
kinds='floor|x-time-rate|token-bucket|leaky-bucket|fixed-window|sliding-window|warm-up|warm-up-warming|concurrency'
bench limiters.txt ./limiters/ "^BenchmarkAcquireAt\$/^kind=($kinds)\$/^path=(admit|reject)\$"
bench limiters.txt ./limiters/ '^BenchmarkAcquireAtParallel$/^kind=(floor|x-time-rate|token-bucket|sliding-window)$/^path=admit$'
bench limiters.txt ./limiters/peers/ 'PeerXTimeRate|PeerUber'
# The simulator's kernel and the perf scenario's lanes, each with its floor; the variate alone;
# replay with its floors.
bench engine.txt ./engine/ 'Kernel|LanePoisson|Variate|Replay'
# The six lanes at GOMAXPROCS 1 and 2, one run of each at a time, so that a slow spell of the
# machine falls on both settings (-count would run all of one setting, then all of the other).
echo "bench.sh: ./engine/ -bench 'RunSixLanes' -cpu 1,2, $count times -count 1" >&2
for _ in $(seq "$count"); do
	sample_load
	go test -run '^$' -bench 'RunSixLanes' -benchmem -count 1 -cpu 1,2 ./engine/ | tee -a "$out/cores.txt" | grep -E '^(FAIL|---)' >&2 || true
done

# Charts at 10M requests per lane: the perf scenario over 1000 virtual seconds.
go build -o "$out/ratelab" ./cmd/ratelab
plot=$("$out/ratelab" plot scenarios/testdata/perf-poisson-1h.yaml --horizon 1000s --timing --out "$out/charts" 2>&1 >/dev/null | grep '^plot:')
echo "bench.sh: $plot" >&2

# Redis at its floor: redislimit's client and replay --redis beside redis-benchmark sending the
# same EVALSHA to the same server (skipped without redis-server / redis-benchmark).
# One run of each pair at a time, as the cores above: a slow spell falls on both clients.
rm -f "$out"/redis.txt
echo "bench.sh: ./redislimit/ -bench 'RedisFloor/depth=(1|64)/' and ./redislimit/redislanes/ -bench ReplayRedis, $count times -count 1" >&2
for _ in $(seq "$count"); do
	sample_load
	go test -run '^$' -bench 'RedisFloor/depth=(1|64)/' -benchmem -count 1 ./redislimit/ | tee -a "$out/redis.txt" | grep -E '^(FAIL|---)' >&2 || true
	go test -run '^$' -bench 'ReplayRedis' -benchmem -count 1 ./redislimit/redislanes/ | tee -a "$out/redis.txt" | grep -E '^(FAIL|---)' >&2 || true
done
# median ns/decision per benchmark, then each redislimit row's ratio to its redis-benchmark row
awk '/^Benchmark/ { for (i = 2; i < NF; i++) if ($(i+1) == "ns/decision") v[$1] = v[$1] " " $i }
	END { for (k in v) { n = split(v[k], a, " ")
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			m[k] = (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
		for (k in m) if (k !~ /redis-benchmark/) { f = k; sub(/client=[a-z]+(-[a-z]+)*/, "client=redis-benchmark", f)
			if (f in m) printf "bench.sh: %s: %.2fx redis-benchmark'"'"'s rate (median %.0f against %.0f ns/decision)\n", k, m[f] / m[k], m[k], m[f] } }' \
	"$out/redis.txt" >&2 || true

# The machine: its CPU model and the cost of one atomic Load+CompareAndSwap (the limiters'
# floor, measured above), beside every peer ratio: a ratio to x/time/rate or to Redis means
# little without them (a CAS cost 3.2 ns on one EPYC and 6 ns on another).
cpu=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
cas=$(awk '/^BenchmarkAcquireAt\/kind=floor\/path=admit/ { print $3 }' "$out/limiters.txt" | sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }')
machine="${cpu:-an unknown CPU}, $(nproc) cores; one atomic Load+CompareAndSwap ${cas:-?} ns (median of $count)"
echo "bench.sh: machine: $machine" >&2

sample_load
report=(go run ./scripts/benchreport -plot "$plot" -load "${load[*]}" -machine "$machine")
results=("$out/limiters.txt" "$out/engine.txt" "$out/cores.txt")
if [ "${1:-}" = --readme ]; then
	"${report[@]}" -readme docs/PERFORMANCE.md "${results[@]}" # (flags before the files: Go's flag package stops at the first file)
	echo "bench.sh: docs/PERFORMANCE.md's generated section rewritten" >&2
else
	"${report[@]}" "${results[@]}"
fi
