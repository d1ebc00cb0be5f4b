package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/limiters"
)

// Keys: who a request is from. A source's requests carry a key (Source.Key, a script's or a
// trace's own), or draw one from a population (Source.Keys): n clients sharing the traffic
// uniformly or by a Zipf law, a noisy neighbour taking a share of it, an attacker cycling
// through its keys. A stage written keys(max=…,evict=…):spec (limiters.KeyedSpec) decides
// each request with its key's own limiter, in a bounded table (limiters.KeyedLimiter). Every
// lane counts what each key was offered, admitted and refused (KeyResults), keyed or not, so a
// global limiter's unfairness and a keyed one's fairness show side by side.
//
// Memory grows with keys, never with requests: a population's names are made once, a keyed
// table holds at most its max keys, and the per-key counters at most MaxTrackedKeys.

// PopulationKind names a key population.
type PopulationKind string

// The key populations.
const (
	PopulationUniform PopulationKind = "uniform"         // Clients keys, each as likely
	PopulationZipf    PopulationKind = "zipf"            // Clients keys, the i-th (from 1) drawn ∝ 1/i^Exponent
	PopulationNoisy   PopulationKind = "noisy-neighbour" // one key (Noisy) takes Share of the requests, Clients others share the rest uniformly
	PopulationCycle   PopulationKind = "cycle"           // an attacker: Clients keys in turn, 0, 1, …, Clients−1, 0, …
)

// KeyPopulation is who a source's requests come from.
type KeyPopulation struct {
	Kind     PopulationKind
	Clients  int     // the number of keys (besides the noisy neighbour)
	Exponent float64 // zipf: s > 0; 1 is the classic law (the top key of 1000 takes 13%)
	Share    float64 // noisy-neighbour: the neighbour's share of requests, in (0, 1]
	Prefix   string  // key names are Prefix + index; default "client-" ("attacker-" for cycle)
	Noisy    string  // noisy-neighbour: the neighbour's key; default "noisy-neighbour"
}

// MaxClients is the largest population: its names and (zipf) its distribution are held in
// memory, 2^20 of each.
const MaxClients = 1 << 20

// MaxTrackedKeys is how many distinct keys a lane counts one by one; later ones are counted
// together (KeyResults.Untracked).
const MaxTrackedKeys = 1 << 20

// KeyListLimit is how many keys KeyResults.PerKey lists (in order of first arrival).
const KeyListLimit = 1000

// TopRefusedKeys is how many keys KeyResults.TopRefused lists.
const TopRefusedKeys = 10

func (p *KeyPopulation) validate(field string) error {
	switch p.Kind {
	case PopulationUniform, PopulationZipf, PopulationNoisy, PopulationCycle:
	default:
		return fieldErr(field+".kind", "unknown key population %q (uniform, zipf, noisy-neighbour, cycle)", p.Kind)
	}
	if p.Clients < 1 || p.Clients > MaxClients {
		return fieldErr(field+".clients", "must be between 1 and %d, got %d", MaxClients, p.Clients)
	}
	if p.Kind == PopulationZipf && (math.IsNaN(p.Exponent) || p.Exponent <= 0 || p.Exponent > 10) {
		return fieldErr(field+".exponent", "must be in (0, 10], got %v", p.Exponent)
	}
	if p.Kind != PopulationZipf && p.Exponent != 0 {
		return fieldErr(field+".exponent", "only a zipf population has an exponent")
	}
	if p.Kind == PopulationNoisy && (math.IsNaN(p.Share) || p.Share <= 0 || p.Share > 1) {
		return fieldErr(field+".share", "must be in (0, 1], got %v", p.Share)
	}
	if p.Kind != PopulationNoisy && (p.Share != 0 || p.Noisy != "") {
		return fieldErr(field+".share", "only a noisy-neighbour population has a share and a neighbour")
	}
	return nil
}

// keyPicker draws the key of each request of a population, from its own random stream.
type keyPicker struct {
	_     [cacheLine]byte // next is written at every arrival: lines of its own (lines.go)
	pop   KeyPopulation
	names []string
	noisy string
	cdf   []float64 // zipf: cdf[i] = P(key ≤ i)
	rng   *rand.Rand
	next  int // cycle: the next key
	_     [cacheLine]byte
}

func newKeyPicker(p KeyPopulation, index int, seed uint64) *keyPicker {
	prefix := p.Prefix
	if prefix == "" {
		prefix = "client-"
		if p.Kind == PopulationCycle {
			prefix = "attacker-"
		}
	}
	k := &keyPicker{pop: p, names: make([]string, p.Clients), noisy: cmp.Or(p.Noisy, "noisy-neighbour"),
		rng: newRand(seed, 0x6b657900+uint64(index))}
	for i := range k.names {
		k.names[i] = prefix + strconv.Itoa(i)
	}
	if p.Kind == PopulationZipf {
		k.cdf = make([]float64, p.Clients)
		sum := 0.0
		for i := range k.cdf {
			sum += math.Pow(float64(i+1), -p.Exponent)
			k.cdf[i] = sum
		}
		for i := range k.cdf {
			k.cdf[i] /= sum
		}
	}
	return k
}

func (k *keyPicker) pick() string {
	switch k.pop.Kind {
	case PopulationCycle:
		name := k.names[k.next]
		k.next = (k.next + 1) % len(k.names)
		return name
	case PopulationZipf:
		u := k.rng.Float64()
		return k.names[min(sort.SearchFloat64s(k.cdf, u), len(k.names)-1)]
	case PopulationNoisy:
		if k.rng.Float64() < k.pop.Share {
			return k.noisy
		}
	}
	return k.names[k.rng.IntN(len(k.names))]
}

// populated gives a stream's arrivals keys drawn from a population.
type populated struct {
	stream
	keys *keyPicker
}

func (p *populated) next() (arrival, bool, error) {
	a, ok, err := p.stream.next()
	if ok {
		a.key = p.keys.pick()
	}
	return a, ok, err
}

// newKeyedStage builds a keyed stage's table, and the limiter it shows before any request
// has come (a new key's).
func newKeyedStage(ks limiters.KeyedSpec, clock limiters.Clock) (*limiters.KeyedLimiter, limiters.Limiter, error) {
	table, err := limiters.NewKeyed(ks.Spec, ks.Keys, clock)
	if err != nil {
		return nil, nil, err
	}
	shown, err := ks.Spec.New(clock)
	if err != nil {
		return nil, nil, err
	}
	return table, shown, nil
}

// Keyed reports whether some stage is keyed.
func (s *Stack) Keyed() bool { return s.keyed != nil || s.router != nil }

// Bind points each keyed stage at key's limiter for what follows (Acquire, Reserve,
// RetryAfter), making it on the key's first request. When a stage's table is full and can
// evict nothing, Bind stops there and returns that stage and false: the request is refused
// by it. A keyed stage shows, between requests, the state of the last key bound.
func (s *Stack) Bind(now time.Duration, key string) (stage int, ok bool) {
	if s.router != nil {
		s.router.route(key)
	}
	for k, table := range s.keyed {
		if table == nil {
			continue
		}
		lim, outcome := table.Get(now, key)
		if outcome == limiters.KeyFull {
			return k, false
		}
		s.stages[k] = lim
		s.caps[k] = limiters.CapabilitiesOf(lim)
	}
	return len(s.stages), true
}

// Decide is one open-loop decision of permits for key at now, as replay and a server make
// it: Bind (a keyed stage whose table is full refuses, as that stage), then Reserve when
// some stage waits (SetWaits) and Acquire when none does. wait is how long an admitted
// request waits before it goes on (0 without waiting stages).
func (s *Stack) Decide(now time.Duration, key string, permits int) (d limiters.Decision, stage int, wait time.Duration) {
	if k, ok := s.Bind(now, key); !ok {
		return limiters.Rejected, k, 0
	}
	if s.shapes() {
		return s.Reserve(now, permits, nil)
	}
	d, stage, _ = s.Acquire(now, permits, nil)
	return d, stage, 0
}

// BindHeld points each keyed stage at key's limiter if its table still holds it, to give an
// admitted request's permits back (Complete, Release); a stage whose table has forgotten the
// key gives nothing back and takes no feedback.
func (s *Stack) BindHeld(key string) {
	for k, table := range s.keyed {
		if table == nil {
			continue
		}
		if lim, ok := table.Peek(key); ok {
			s.stages[k] = lim
			s.caps[k] = limiters.CapabilitiesOf(lim)
		} else {
			s.caps[k] = limiters.Capabilities{}
		}
	}
}

// KeyTables is each keyed stage's table (nil for a stage that is not keyed), or nil.
func (s *Stack) KeyTables() []*limiters.KeyedLimiter { return s.keyed }

// KeyResults is what each key was offered, admitted and refused in one lane.
type KeyResults struct {
	Distinct   int        `json:"distinct"`  // keys offered
	Untracked  int64      `json:"untracked"` // requests of keys past MaxTrackedKeys, counted in no key
	Fairness   float64    `json:"fairness"`  // Jain's index of admitted permits over the keys offered
	TopRefused []KeyCount `json:"top_refused"`
	PerKey     []KeyCount `json:"per_key"` // in order of first arrival, at most KeyListLimit
	Tables     []KeyTable `json:"tables,omitempty"`
}

// KeyCount is one key's counts, in the lane's words (Totals): its requests ended admitted,
// refused, timed out or gave up (or are waiting: the rest of Offered); RefusedAttempts counts
// refusals of tries (a retried request can be refused many times).
type KeyCount struct {
	Key             string `json:"key"`
	Offered         int64  `json:"offered"`
	Admitted        int64  `json:"admitted"` // requests
	Permits         int64  `json:"admitted_permits"`
	Refused         int64  `json:"refused"`
	TimedOut        int64  `json:"timed_out"`
	GaveUp          int64  `json:"gave_up"`
	RefusedAttempts int64  `json:"refused_attempts"`
}

// NotAdmitted is the key's requests that ended refused, timed out or given up.
func (k KeyCount) NotAdmitted() int64 { return k.Refused + k.TimedOut + k.GaveUp }

// ended counts a request of the key that ended without admission, as end says.
func (k *KeyCount) ended(end ending) {
	switch end {
	case endRefused:
		k.Refused++
	case endTimedOut:
		k.TimedOut++
	default:
		k.GaveUp++
	}
}

// KeyTable is what a keyed stage's table did.
type KeyTable struct {
	Stage   int    `json:"stage"` // from 1
	MaxKeys int    `json:"max_keys"`
	Evict   string `json:"evict"`
	Held    int    `json:"held"` // keys held at the end
	Created uint64 `json:"created"`
	Evicted uint64 `json:"evicted"`
	Full    uint64 `json:"full"` // requests refused because the table could evict no key
}

// keyCounts is a lane's per-key counters: a slot per key, found by name once per request.
type keyCounts struct {
	index     map[string]int32
	counts    []KeyCount
	untracked int64
	lastKey   string
	last      int32
	scratch   KeyCount // where untracked keys are counted, and forgotten
	// single: every request of the lane carries one key known before the run (no population,
	// trace or scripted key, no keyed stage), so the counts would never be reported (report
	// is nil for one key): slot is −1 at once, and nothing is counted.
	single bool
}

// singleKey reports whether every arrival of sources carries the same key, known before the
// run: no key population, no trace (whose rows name keys), no scripted key but that one.
func singleKey(sources []Source) bool {
	if len(sources) == 0 {
		return true
	}
	key := sources[0].Key
	for _, src := range sources {
		if src.Keys != nil || src.Kind == SourceTrace || src.Key != key {
			return false
		}
		for _, a := range src.Script {
			if a.Key != "" && a.Key != key {
				return false
			}
		}
	}
	return true
}

// slot is key's counter slot, made on its first request; −1 past MaxTrackedKeys.
func (c *keyCounts) slot(key string) int32 {
	if c.single {
		return -1
	}
	if c.index != nil && key == c.lastKey {
		return c.last
	}
	return c.slotOf(key)
}

// slotOf is slot for a key other than the last one.
func (c *keyCounts) slotOf(key string) int32 {
	if c.index == nil {
		c.index = make(map[string]int32)
		c.counts = make([]KeyCount, 0, lineSized(unsafe.Sizeof(KeyCount{}))) // lines.go
	}
	i, ok := c.index[key]
	if !ok {
		if len(c.counts) >= MaxTrackedKeys {
			c.untracked++
			return -1
		}
		i = int32(len(c.counts))
		c.counts = append(c.counts, KeyCount{Key: key})
		c.index[key] = i
	}
	c.lastKey, c.last = key, i
	return i
}

func (c *keyCounts) at(i int32) *KeyCount {
	if i < 0 {
		return &c.scratch // counted nowhere
	}
	return &c.counts[i]
}

// report is the per-key results: nil for a lane whose requests all had one key and no
// stage keyed.
func (c *keyCounts) report(stack *Stack) *KeyResults {
	if len(c.counts) <= 1 && stack.keyed == nil {
		return nil
	}
	r := &KeyResults{Distinct: len(c.counts), Untracked: c.untracked, Fairness: jain(c.counts)}
	r.PerKey = slices.Clone(c.counts[:min(len(c.counts), KeyListLimit)])
	top := slices.Clone(c.counts)
	slices.SortStableFunc(top, func(a, b KeyCount) int {
		return cmp.Or(cmp.Compare(b.NotAdmitted(), a.NotAdmitted()), cmp.Compare(b.RefusedAttempts, a.RefusedAttempts))
	})
	for _, k := range top[:min(len(top), TopRefusedKeys)] {
		if k.NotAdmitted() > 0 || k.RefusedAttempts > 0 {
			r.TopRefused = append(r.TopRefused, k)
		}
	}
	for k, table := range stack.KeyTables() {
		if table == nil {
			continue
		}
		st, cfg := table.Stats(), table.Config()
		r.Tables = append(r.Tables, KeyTable{Stage: k + 1, MaxKeys: cfg.MaxKeys, Evict: string(cmp.Or(cfg.Evict, limiters.EvictLRU)),
			Held: st.Keys, Created: st.Created, Evicted: st.Evicted, Full: st.Full})
	}
	return r
}

// jain is Jain's fairness index of the admitted permits x_i of the n keys offered:
// (Σx)² / (n·Σx²), 1 when every key got the same, 1/n when one key got everything (and 1
// when none got anything: nobody was favoured). Three keys admitted 10, 10, 10: 1; 30, 0, 0:
// 1/3; 20, 5, 5: 900/(3·450) = 0.667.
func jain(counts []KeyCount) float64 {
	var sum, squares float64
	for _, k := range counts {
		x := float64(k.Permits)
		sum += x
		squares += x * x
	}
	if squares == 0 {
		return 1
	}
	return sum * sum / (float64(len(counts)) * squares)
}

// String is "client-3: 40 offered, 12 admitted, 28 refused", with the requests that timed
// out or gave up when there are any.
func (k KeyCount) String() string {
	s := fmt.Sprintf("%s: %d offered, %d admitted, %d refused", k.Key, k.Offered, k.Admitted, k.Refused)
	if k.TimedOut > 0 {
		s += fmt.Sprintf(", %d timed out", k.TimedOut)
	}
	if k.GaveUp > 0 {
		s += fmt.Sprintf(", %d gave up", k.GaveUp)
	}
	return s
}

// TopOffered is up to n of the lane's keys that were offered the most requests so far, most
// first (ties in order of first arrival), with what each was admitted and refused: where
// KeyResults.TopRefused lists the most refused, this lists the busiest. It reads every
// tracked key (KeyResults.PerKey lists only the first KeyListLimit), in O(keys × n), and
// changes nothing: the workbench asks it mid-run. 101 keys of which one sends 60%: that one
// first.
func (l *Lane) TopOffered(n int) []KeyCount {
	top := make([]KeyCount, 0, min(n, len(l.keys.counts)))
	for _, k := range l.keys.counts {
		if len(top) == n && (n == 0 || k.Offered <= top[n-1].Offered) {
			continue
		}
		at := len(top)
		for at > 0 && top[at-1].Offered < k.Offered { // strictly more: an earlier key keeps its tie
			at--
		}
		if len(top) < n {
			top = append(top, KeyCount{})
		}
		copy(top[at+1:], top[at:len(top)-1])
		top[at] = k
	}
	return top
}
