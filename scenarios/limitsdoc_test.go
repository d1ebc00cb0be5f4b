package scenarios

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
	// Every kind registers, so that the table has the peers' rows and failsafe-adaptive's.
	_ "github.com/ratelab/ratelab/limiters/failsafego"
	_ "github.com/ratelab/ratelab/limiters/peers"
)

var update = flag.Bool("update", false, "rewrite docs/LIMITS.md from the validation code")

const limitsFile = "../docs/LIMITS.md"

// docs/LIMITS.md is what the validation code accepts: it is generated from the constants
// validation uses, and its limiter table from the registry (each kind's KindInfo.Ranges,
// beside its Validate), whose rows are checked against Validate
// (TestLimiterRangesAreTheValidation). A changed range without it fails here.
func TestLimitsDocIsCurrent(t *testing.T) {
	want := limitsMarkdown()
	got, err := os.ReadFile(limitsFile)
	if err == nil && string(got) == want {
		return
	}
	if !*update {
		t.Fatalf("docs/LIMITS.md is stale (or missing: %v); rewrite it with: go test ./scenarios -run TestLimitsDoc -update", err)
	}
	require.NoError(t, os.WriteFile(limitsFile, []byte(want), 0o644))
}

// limiterRange is one row of the limiter table: a field's range from its kind's registry
// entry (KindInfo.Ranges, defined beside the kind's Validate).
type limiterRange struct {
	kind limiters.Kind
	limiters.FieldRange
}

// limiterRanges are every registered kind's field ranges, in registry order.
func limiterRanges() []limiterRange {
	var rows []limiterRange
	for _, k := range limiters.Kinds() {
		for _, r := range k.Ranges {
			rows = append(rows, limiterRange{k.Kind, r})
		}
	}
	return rows
}

// The limiter table says what each kind's Validate does: specs at its edges are accepted,
// specs just past them refused, and every field of every kind has a row. A row whose range
// opens with two whole numbers ("1 to 1000000") has a valid spec at each of them, so a
// stated edge the code refuses (nginx's burst documented from 0) fails here.
func TestLimiterRangesAreTheValidation(t *testing.T) {
	rows := map[string]bool{}
	plainRange := regexp.MustCompile(`^(\d+) to (\d+)(?:$|[ ,;(])`)
	for _, r := range limiterRanges() {
		rows[string(r.kind)+"."+r.Field] = true
		if edges := plainRange.FindStringSubmatch(r.Accepted); edges != nil {
			for _, edge := range edges[1:] {
				at := regexp.MustCompile(`[:,]` + regexp.QuoteMeta(r.Field+"="+edge) + `(\D|$)`)
				found := false
				for _, text := range r.Valid {
					found = found || at.MatchString(text)
				}
				assert.True(t, found, "%s.%s: the range %q states %s, but no valid spec has %s=%s", r.kind, r.Field, r.Accepted, edge, r.Field, edge)
			}
		}
		for _, text := range r.Valid {
			spec, err := limiters.ParseSpec(text)
			if assert.NoError(t, err, text) {
				assert.NoError(t, spec.Validate(), "%s.%s: %s is accepted", r.kind, r.Field, text)
			}
		}
		for _, text := range r.Invalid {
			spec, err := limiters.ParseSpec(text)
			if err == nil {
				assert.Error(t, spec.Validate(), "%s.%s: %s is refused", r.kind, r.Field, text)
			}
		}
	}
	for _, k := range limiters.Kinds() {
		for _, f := range k.Fields {
			assert.True(t, rows[string(k.Kind)+"."+f.Name], "docs/LIMITS.md has no row for %s's %s", k.Kind, f.Name)
		}
	}
}

func limitsMarkdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	table := func(rows ...[3]string) {
		p("| Value | Accepted | Why |\n|---|---|---|\n")
		for _, r := range rows {
			p("| %s | %s | %s |\n", r[0], r[1], r[2])
		}
		p("\n")
	}
	maxTime := fmt.Sprintf("2^62 ns = %v, about 146 years", engine.MaxTime)
	p(`# Limits

Every range ratelab accepts, and why. A value outside its range is refused before the run starts,
as ` + "`file:line:col: field: reason`" + ` for a scenario file, with the line for a trace, or with the
flag's name; nothing past these ranges reaches the engine. Flags that set scenario values
(` + "`--horizon`, `--bins`, `--seed`, `--limiter`" + `) are checked against the same ranges.

<!-- Generated from the validation code: go test ./scenarios -run TestLimitsDoc -update -->

## Times and durations

`)
	table(
		[3]string{"every time and duration: `horizon`, `from`, `until`, `on`, `off`, `period`, a burst's `at` and `spread`, " +
			"an arrival's `at`, the client's `delay`, `max_delay`, `timeout` and `max_elapsed`, a phase's `from`, a service time's `mean`, " +
			"`median`, `min` and `max`, `windows`, a trace's times, `--horizon`",
			"from 0 to less than " + maxTime,
			"two such values add up without overflowing int64 (2^63 ns, 292 years), so no time the engine derives " +
				"(an arrival's from + at, now + a delay) wraps into the past"},
		[3]string{"an arrival's or a burst's `from` + `at`", "less than 2^62 ns", "it is the arrival's time"},
		[3]string{"each limiter stage's window (`window`, or a rate's window: `rate=1000/2000000h`)", "less than 2^62 ns in a scenario",
			"the guarantee meters measure over it, and a bound over a longer window overflows"},
		[3]string{"`horizon`", "positive", ""},
		[3]string{"`until`", "0 (the horizon) or after `from`", "the source's active period must not be empty"},
		[3]string{"`on`, `period`", "positive", ""},
		[3]string{"`delay`", "positive for retry, backoff, retry-after, retry-after-header and header-paced; for aws-standard, aws-adaptive, retryablehttp, " +
			"retryablehttp-linear, cenkalti-backoff, stripe and stripe-lock-timeout positive, or 0 or absent for the library's default " +
			fmt.Sprintf("(1s, 1s, 1s, 1s, 500ms, %v, %v); absent for octokit, which waits for the reset", clients.StripeMinRetryDelay, clients.StripeMinRetryDelay),
			"a retry never runs at the instant of its refusal"},
		[3]string{"`max_delay`", fmt.Sprintf("0 or more; absent for a library policy: its default (20s, 20s, 30s, 30s, 60s, %v, %v); absent for octokit",
			clients.StripeMaxRetryDelay, clients.StripeMaxRetryDelay), "0 means no cap for backoff and retry-after-header"},
		[3]string{"`group`", "octokit only: " + strings.Join(clients.OctokitGroupNames, ", ") + "; absent: global",
			fmt.Sprintf("@octokit/plugin-throttling's Bottleneck groups: at least 0, %v, %v and %v between attempts",
				clients.OctokitWriteMinTime, clients.OctokitSearchMinTime, clients.OctokitNotificationsMinTime)},
		[3]string{"`max_elapsed`", fmt.Sprintf("cenkalti-backoff only: positive, or 0 or absent for the library's %v", clients.CenkaltiMaxElapsedTime),
			"Retry gives up when the time since the first attempt plus the next wait would pass it"},
		[3]string{"`timeout`", "positive for queue", ""},
		[3]string{"`downstream.phases`", "the first `from` 0, then increasing", "a phase is in force from its `from` to the next"},
		[3]string{"a `uniform` service time", "`min` at most `max`", ""},
		[3]string{"bursts, arrivals", "in time order", ""},
	)
	p("## Rates\n\n")
	table(
		[3]string{"`rate`, `rate_to`", fmt.Sprintf("0 to %s requests per second; `rate` positive for constant, poisson, on-off and sine",
			strings.Replace(fmt.Sprintf("%g", engine.MaxRate), "e+0", "e", 1)),
			"one request per nanosecond is the clock's resolution; a rate as low as 1e-10 is fine: an arrival it puts past 2^62 ns never comes"},
		[3]string{"a ramp's `rate` and `rate_to`", "not both 0", "a ramp from 0 to 0 offers nothing"},
		[3]string{"`amplitude`", "0 to `rate`", "the sine's rate, rate ± amplitude, cannot go negative"},
	)
	p("## Counts\n\n")
	table(
		[3]string{"`permits` (a source's, an arrival's, a trace row's)", fmt.Sprintf("1 to %d (2^31−1; 0 or absent: 1)", engine.MaxPermits),
			fmt.Sprintf("the permits of up to 2^32 requests (a trace holds at most %d rows) add up exactly in an int64", int64(trace.MaxRows))},
		[3]string{"`bins`, `--bins`", fmt.Sprintf("1 to %d (0 or absent: %d)", engine.MaxBins, engine.DefaultBins),
			"each lane keeps a bin of counters, and a reading of every stage, per bin; a horizon shorter than the bins in nanoseconds gets fewer"},
		[3]string{"a burst's `count`", "at least 1", "the arrivals are made one at a time, as the run reaches them"},
		[3]string{"`max_attempts`", "at least 1 for retry, backoff, retry-after, retry-after-header and header-paced (attempts in all, the first included); " +
			"for aws-standard, aws-adaptive, retryablehttp, retryablehttp-linear, cenkalti-backoff, octokit, stripe and stripe-lock-timeout 0 or absent is the library's default " +
			fmt.Sprintf("(%d, %d, %d, %d, no limit, %d, %d, %d)", clients.AWSMaxAttempts, clients.AWSMaxAttempts, clients.RetryableMaxAttempts,
				clients.RetryableMaxAttempts, clients.OctokitMaxAttempts, clients.StripeMaxAttempts, clients.StripeMaxAttempts), ""},
		[3]string{"`retry_quota`", fmt.Sprintf("aws-standard and aws-adaptive only: at least 1 token, or `none`; absent: the SDK's %d", clients.AWSQuotaTokens),
			fmt.Sprintf("one quota per lane, as one SDK client's callers share one: a throttled retry costs %d tokens and fails at once without them", clients.AWSThrottleCost)},
		[3]string{"`queue_size`", "at least 1 for queue", ""},
		[3]string{"`pool`", "0 (unlimited) or more", ""},
		[3]string{"`sigma`", fmt.Sprintf("more than 0, at most %v", engine.MaxSigma),
			"e^(5σ) already spans ten orders of magnitude; drawn service times are capped at 2^62 ns"},
		[3]string{"`seed`, `--seed`", "decimal digits, 0 to 2^64−1, in a scenario file and on the command line alike; hex, octal and binary (`0x1f`), a leading zero (`010`) and `_` (`1_000`) are refused, saying what they would have meant (`0x1f`: " + refusal(ParseSeed("0x1f")) + ")",
			"Go's flag package read `--seed 0x1f` as 31 and `010` as 8, where the scenario file refused the one and read the other as 10: a seed that means one thing in one place and another elsewhere is refused everywhere"},
		[3]string{"`trace: true`", fmt.Sprintf("keeps the first %d decisions of each lane", engine.TraceLimit),
			"later ones are dropped and the lane says its trace was truncated"},
	)
	p("## Budgets\n\n")
	table(
		[3]string{"a run's events (`run`, `plot`, `sweep` (all its cells), `fit SCENARIO`: `--max-events`)", fmt.Sprintf("at most %s by default (0: no limit)", engine.SI(engine.DefaultBudget.MaxEvents)),
			fmt.Sprintf("estimated before the run from its sources, clients and lanes (about %s an event on one core): "+
				"a horizon of 100000h is refused at once instead of running for days", limiters.FormatDuration(engine.DefaultEventCost))},
		[3]string{"a run's memory (`--max-memory`)", fmt.Sprintf("at most %s by default (0: no limit)", engine.Bytes(engine.DefaultBudget.MaxMemory)),
			"estimated from its bins, trace, window meters (what a meter holds is bounded by the lane's limit in its window) and key tables"},
	)
	p("## Traces\n\n")
	table(
		[3]string{"`t_ns`", "a whole number of nanoseconds from 0 to less than 2^62", "as every time"},
		[3]string{"`t`, decimal seconds", "at most 9 decimal places, less than 2^62 ns", "nanoseconds are the clock's resolution"},
		[3]string{"`t`, RFC 3339", "less than 2^62 ns after the first row's time", "times are taken relative to the first row"},
		[3]string{"rows", fmt.Sprintf("in time order, at most %d", int64(trace.MaxRows)), "so that their permits add up exactly"},
		[3]string{"`permits`", fmt.Sprintf("1 to %d", engine.MaxPermits), "as a source's"},
	)
	p("## Scenario files\n\n")
	table(
		[3]string{"size", fmt.Sprintf("at most %d bytes (16 MiB)", MaxFileSize),
			"far beyond any hand-written scenario; a wrong path (a log, a disk image) is refused at once instead of read into memory"},
		[3]string{"kind of file", "a regular file (a symlink to one is followed), whatever it is called: `s.yaml`, or a path of another name, which is read to see whether it is a scenario file; a scenario from a pipe comes on standard input, `-`",
			"a directory, a FIFO, a device or a socket is refused before it is opened, by any name (a FIFO would block the open, a device never ends)"},
		[3]string{"YAML documents", "one (an empty one after it, such as a trailing `---`, is ignored)",
			"a second document is refused where it starts rather than silently ignored"},
		[3]string{"anchors and aliases", fmt.Sprintf("`&name`, `*name` and merge keys `<<: *name`, adding at most %d nodes once expanded", MaxAliasNodes),
			"a document whose aliases nest into billions of nodes (an alias bomb) is refused in time linear in its size; an alias inside the node it names is refused"},
	)
	p("## Limiter specs\n\n")
	_, trailing := engine.ParseStack("token-bucket:capacity=10,rate=100/1s,")
	_, plus := engine.ParseStack("token-bucket:capacity=10,rate=100/1s+")
	p("A spec is `KIND:FIELD=VALUE,…`, a stack specs joined by `+`, a keyed stage `keys(max=N,…):SPEC`, the\n")
	p("same in a scenario file and in every `--limiter`. Fields and stages are joined by single commas and\n")
	p("`+`: an empty one (a trailing comma or `+`, two in a row, one at the start) is refused rather than\n")
	p("skipped, as a field lost in an edit may be: `%s`; `%s`.\n\n", trailing, plus)
	p("Each kind's `Validate` (and the constructor behind it) refuses what is outside these ranges; in a\n")
	p("scenario, a stage's window must also be less than 2^62 ns (above).\n\n")
	p("| Kind | Field | Accepted | Why |\n|---|---|---|---|\n")
	for _, r := range limiterRanges() {
		p("| `%s` | `%s` | %s | %s |\n", r.kind, r.Field, r.Accepted, r.Why)
	}
	return b.String()
}

// refusal is the reason err gives, for a row that quotes the code's own words.
func refusal(_ uint64, err error) string {
	if err == nil {
		panic("limits doc: the example is accepted")
	}
	return err.Error()
}
