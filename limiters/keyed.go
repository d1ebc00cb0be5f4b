package limiters

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/internal/wording"
)

// KeyedLimiter is one limiter per client key, all of one spec: NGINX's limit_req_zone keyed by
// $binary_remote_addr, Flash5's guard.limit("ip", …). A key's limiter is built from the spec
// on the key's first request and kept in a table of at most MaxKeys keys; a new key arriving
// at a full table takes the place of another, chosen by the eviction policy:
//
//   - lru: the least recently used key. Its state is lost: when it comes back it starts
//     fresh, with a full burst. An attacker cycling through k+1 keys against a table of k
//     finds every one of its keys evicted before it returns, so every request is a fresh
//     key's first and is admitted (up to the first burst: a token bucket's capacity, a
//     window's limit) — the table admits everything.
//   - fresh: only a key whose state has forgotten everything (Fresh: it would decide every
//     later request as a new limiter would), so eviction never changes a decision. When none
//     of the least recently used keys looked at is fresh, the new key's request is refused and
//     counted as Full: the table trades memory for correctness openly instead of quietly.
//   - nginx: NGINX's own zone expiry, for nginx: limiters only (EvictNginx, nginx_zone.go): a
//     new key first removes up to 2 least recently used keys idle 60s with their excess
//     drained, full or not; at a full table it then removes the least recently used key
//     unconditionally (and up to 2 more idle ones). A new key is never refused.
//
// lru and fresh look at the evictScan least recently used keys of the new key's shard and
// take the first that qualifies; lru never takes a key of a releasing kind (a bulkhead) that
// holds permits, as its callers still owe them back.
//
// # Capacity
//
// MaxKeys bounds the whole table, not each shard: one count of the keys held, over all
// shards, lets a new key in while it is below MaxKeys, so max=N holds N keys however they
// fall into shards (a round robin over exactly N keys evicts nothing after its first pass).
// Before, each shard held MaxKeys/shards: max=1048576 held 1,045,589 keys, and a round robin
// over 1,048,576 evicted on 0.456 of its requests. At a full table a new key evicts from its
// own shard (its least recently used), so shards keep the sizes the first fill gave them
// (with 64 shards of 16,384 keys, within about ±1% of each other), and a set of keys crafted
// to fall into one shard churns that shard only. A shard holding no key takes the place of the
// least recently used key of the next shard, in order, that holds one: it unlocks its own
// lock first, so no caller ever holds two, and looks the key up again after.
//
// # Locking
//
// The table is split into shards by a hash of the key (FNV-1a, mixed; fixed, so that which key
// shares a shard with which is the same on every run); each shard is an index from key to
// slot (open addressing over the same hash: keyedShard), the slots in one slice with a doubly
// linked recency list through them, and a mutex. A decision locks the key's shard, finds (or
// makes) the key's limiter, moves it to the front of the list, decides, and unlocks. The
// wrapped limiters are lock-free; the table is not, and deciding under the shard's lock is
// what makes eviction safe: no caller can be deciding on a limiter that another is evicting.
// With 64 shards, callers on different keys rarely meet. A table below 4096 keys has one
// shard, so that its LRU order is exact over all keys (what the golden guarantees derive
// formulas from); above, each shard keeps its own order. An nginx table has one shard at any
// size, one lock and one queue, as an nginx zone has (nginx locks the zone's shared memory for
// every lookup). The same calls from one goroutine give the same decisions on every run.
//
// # Cost
//
// An existing key: one FNV-1a pass over the key, a probe of the shard's index (usually one
// word, at most 3/4 full), four index writes of the recency list and the limiter's own
// decision, under one uncontended lock; no allocation (a []byte key is looked up without
// copying it). Round robin over 1M keys of a table that holds them all costs 1.15× (0.76–1.46
// in 6 interleaved runs) a map[string]int64 of TATs with GCRA's arithmetic inline
// (BenchmarkKeyedDistinctKeys/floor-map-gcra); it was 4.05× (3.19–15.5), evictions included.
// A new key in a table not yet full allocates its key's buffer (and, but for a compact table,
// its limiter); the index and the slot slice grow to the table's size and stay there. Once
// the table is full a new key takes an evicted key's slot, its key buffer refilled and its
// state reset (resetForReuse): no allocation; a new key evicting another on every request
// (lru-churn) costs 2.32× the floor (1.57–3.38; was 3.41×, 2 allocations).
//
// A compact table (the token and leaky buckets and the fixed window, whose whole state is one
// word) keeps a key's word in its slot and decides it on the shard's scratch limiter, under
// the shard's lock; a key has a limiter of its own only once Get or Peek asks for it. A key
// then takes 56 bytes of slot, its bytes (16 for "client-123456") and 16 of index at 1M keys:
// 97.5 bytes a key in all (BenchmarkKeyedMemory; was 205.6 with a limiter and a map entry a
// key), plus 80 for a token bucket of its own if Get or Peek made one (as the simulator's
// Stack.Bind does for every key it binds). Bounded by MaxKeys.
//
// The zero value grants nothing: every request is Never (Invalid for n ≤ 0), no key is held
// and no method panics; NewKeyed makes a working one.
type KeyedLimiter struct {
	spec   Spec
	config KeyedConfig
	clock  Clock
	shards []keyedShard
	shift  uint // a key's shard is its hash >> shift (64 − log2 shards); 64 for one shard
	maxN   int  // MaxPermits of every key's limiter
	policy Evict
	reuse  bool // an evicted key's limiter is reset for the next new key (reusesLimiters)
	// compact: a key decided only through AcquireKeyAt keeps its limiter's one word of state
	// in its slot, decided by its shard's scratch limiter (compactWord); Get and Peek give it
	// a limiter of its own.
	compact bool
	// keys counts the keys held over all shards, and those being made: never above maxKeys.
	keys    atomic.Int64
	maxKeys int64
}

var _ Keyed = (*KeyedLimiter)(nil)

// KeyedConfig bounds a keyed table: "max=1000,evict=lru".
type KeyedConfig struct {
	MaxKeys int   // the most keys held at once, at least 1
	Evict   Evict // lru (the default when empty), fresh or nginx
	Shards  int   // a power of two, at most MaxKeys; 0: 1 below 4096 keys, else up to 64 (nginx: 1)
}

// Evict names an eviction policy.
type Evict string

// The eviction policies.
const (
	EvictLRU   Evict = "lru"
	EvictFresh Evict = "fresh"
)

// evictScan is how many of a shard's least recently used keys an eviction looks at.
const evictScan = 8

// MaxKeyedKeys is the largest MaxKeys: slots are numbered in int32.
const MaxKeyedKeys = 1 << 30

// KeyOutcome is what a lookup did to the table.
type KeyOutcome uint8

// The outcomes of a lookup.
const (
	KeyFound   KeyOutcome = iota // the key was in the table
	KeyCreated                   // a new key, in a free slot
	KeyEvicted                   // a new key, in the slot of a key the policy evicted
	KeyFull                      // a new key, and no key could be evicted: refused
)

// KeyedStats counts what a table has done since it was made.
type KeyedStats struct {
	Keys    int    // held now
	Created uint64 // keys made, including those that took an evicted key's slot
	Evicted uint64
	Full    uint64 // requests refused because no key could be evicted
}

// ParseKeyedConfig reads "max=1000,evict=lru" (evict and shards optional; evict= with no
// value is refused, not read as lru). Errors name the field.
func ParseKeyedConfig(text string) (KeyedConfig, error) {
	var c KeyedConfig
	fail := func(field, value, reason string) (KeyedConfig, error) {
		return KeyedConfig{}, &SpecError{Spec: "keys(" + text + ")", Field: field, Value: value, Reason: reason}
	}
	seen := map[string]bool{}
	parts, empty := wording.SplitList(text, ",", "field")
	if empty != "" {
		return fail("", "", empty+": fields are FIELD=VALUE joined by single commas")
	}
	for _, part := range parts {
		key, value, ok := strings.Cut(part, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok {
			return fail(key, "", "expected key=value")
		}
		if seen[key] {
			return fail(key, value, "given twice")
		}
		seen[key] = true
		switch key {
		case "max":
			n, err := strconv.Atoi(value)
			if err != nil {
				return fail(key, value, fmt.Sprintf("%q is not a whole number", value))
			}
			c.MaxKeys = n
		case "evict":
			if value == "" { // Evict's zero value means lru, but an empty evict= is a slip
				return fail(key, value, "empty: must be lru, fresh or nginx (or leave evict out for lru)")
			}
			c.Evict = Evict(value)
		case "shards":
			n, err := strconv.Atoi(value)
			if err != nil {
				return fail(key, value, fmt.Sprintf("%q is not a whole number", value))
			}
			c.Shards = n
		default:
			return fail(key, value, "not a field of keys"+wording.DidYouMean(key, []string{"max", "evict", "shards"})+" (fields: max, evict, shards)")
		}
	}
	if !seen["max"] {
		return fail("max", "", "missing (e.g. max=1000,evict=lru)")
	}
	if err := c.Validate(); err != nil {
		return KeyedConfig{}, err
	}
	return c, nil
}

// String is "max=1000,evict=lru" (and shards when set).
func (c KeyedConfig) String() string {
	s := fmt.Sprintf("max=%d,evict=%s", c.MaxKeys, c.policy())
	if c.Shards != 0 {
		s += fmt.Sprintf(",shards=%d", c.Shards)
	}
	return s
}

func (c KeyedConfig) policy() Evict {
	if c.Evict == "" {
		return EvictLRU
	}
	return c.Evict
}

// Validate refuses MaxKeys outside [1, 2³⁰], an unknown policy, a shard count that is not a
// power of two or exceeds MaxKeys, and more than one shard for nginx (whose zone has one
// queue), with a *ConfigError naming the field.
func (c KeyedConfig) Validate() error {
	if c.MaxKeys < 1 || c.MaxKeys > MaxKeyedKeys {
		return NewConfigError("keys", "max", fmt.Sprint(c.MaxKeys), "must be between 1 and 2^30")
	}
	p := c.policy()
	if p != EvictLRU && p != EvictFresh && p != EvictNginx {
		return NewConfigError("keys", "evict", string(c.Evict), "must be lru, fresh or nginx")
	}
	if c.Shards < 0 || c.Shards > c.MaxKeys || (c.Shards > 0 && c.Shards&(c.Shards-1) != 0) {
		return NewConfigError("keys", "shards", fmt.Sprint(c.Shards), fmt.Sprintf("must be a power of two at most max=%d (0: automatic)", c.MaxKeys))
	}
	if p == EvictNginx && c.Shards > 1 {
		return NewConfigError("keys", "shards", fmt.Sprint(c.Shards), "must be 1 (or 0) with evict=nginx: an nginx zone has one LRU queue")
	}
	return nil
}

// shardCount is Shards, or automatically 1 below 4096 keys (and for nginx), else the power of
// two nearest MaxKeys/4096 from below, at most 64.
func (c KeyedConfig) shardCount() int {
	if c.Shards > 0 {
		return c.Shards
	}
	if c.MaxKeys < 4096 || c.policy() == EvictNginx {
		return 1
	}
	return min(64, 1<<(bits.Len(uint(c.MaxKeys/4096))-1))
}

// NewKeyed returns a keyed table of limiters of spec on clock, bounded by config. It refuses
// what spec.Validate and config.Validate refuse, a spec New cannot build on clock, and
// evict=nginx for a spec that is not nginx:… (or whose limiter is not NginxZoned).
func NewKeyed(spec Spec, config KeyedConfig, clock Clock) (*KeyedLimiter, error) {
	if spec == nil {
		return nil, NewConfigError("keys", "spec", "nil", "a keyed table needs the spec of its keys' limiter, e.g. token-bucket:capacity=3,rate=100/1s")
	}
	if err := config.Validate(); err != nil {
		return nil, err
	}
	if config.policy() == EvictNginx {
		if err := checkNginxZone(spec); err != nil {
			return nil, err
		}
	}
	probe, err := spec.New(clock) // the spec and the clock, checked once
	if err != nil {
		return nil, err
	}
	if _, ok := probe.(NginxZoned); config.policy() == EvictNginx && !ok {
		return nil, NewConfigError("keys", "evict", string(EvictNginx), fmt.Sprintf("needs a limiter whose node the zone can read (limiters.NginxZoned); %T is not one", probe))
	}
	n := config.shardCount()
	k := &KeyedLimiter{spec: spec, config: config, clock: clock, shards: make([]keyedShard, n), shift: 64,
		maxN: probe.MaxPermits(), policy: config.policy(), maxKeys: int64(config.MaxKeys), reuse: reusesLimiters(spec)}
	if n > 1 {
		k.shift = uint(64 - bits.TrailingZeros(uint(n)))
	}
	k.compact = k.reuse && compactKind(probe)
	for i := range k.shards {
		k.shards[i].head, k.shards[i].tail = -1, -1
		if k.compact {
			if k.shards[i].scratch, err = spec.New(clock); err != nil {
				return nil, err
			}
		}
	}
	return k, nil
}

// keyedShard is one shard: an index from key to slot, and the slots in recency order (head:
// most recent).
//
// The index is open addressing with linear probing over a power-of-two array of words, each
// the key's hash (its low 32 bits) << 32 | slot+1, 0 for an empty place; grown (doubled) when
// it would pass 3/4 full, a removed key's place closed by shifting its followers back (no
// tombstones). A lookup reads words until the hash matches and compares the key's bytes only
// then (a false match: about 1 in 2^(32−log2 places), 1 in 2048 at 2^21). 8 bytes a place,
// 3/8 to 3/4 full: 10.7 to 21.3 bytes a key, 16 in a shard of 2^14 keys (1M keys in 64
// shards). The hash is the one that picks the shard, so a key is hashed once.
type keyedShard struct {
	mu         sync.Mutex
	index      []uint64
	slots      []keyedSlot
	born       []int64 // nginx tables only: ms (nginxMs) of each slot's key's arrival, nginx's last for a node not yet accounted
	free       []int32 // slots emptied by removal (each with its limiter and key buffer kept for reuse)
	scratch    Limiter // compact tables: decides a slot's word (compactWord)
	n          int32   // keys held
	head, tail int32
	created    uint64
	evicted    uint64
	full       uint64
	_          [64]byte // keep neighbouring shards' locks off one cache line
}

// keyedSlot is one key's: its bytes (a buffer the next key to take the slot reuses when it
// fits), its limiter (nil in a compact table until Get or Peek asks for it: then word is its
// state), and its neighbours in recency. 56 bytes.
type keyedSlot struct {
	key        []byte
	limiter    Limiter
	word       uint64
	prev, next int32 // towards head, towards tail; −1 at the ends
}

// acquireAt decides n permits at now for slot i of s (locked): on its limiter, or on the
// shard's scratch limiter holding the slot's word.
func (s *keyedShard) acquireAt(i int32, now time.Duration, n int) Decision {
	sl := &s.slots[i]
	if sl.limiter != nil {
		return sl.limiter.AcquireAt(now, n)
	}
	if b, ok := s.scratch.(*TokenBucket); ok { // the common kind, its decision inlined
		b.arrival.Store(int64(sl.word))
		d := b.AcquireAt(now, n)
		sl.word = uint64(b.arrival.Load())
		return d
	}
	setCompactWord(s.scratch, sl.word)
	d := s.scratch.AcquireAt(now, n)
	sl.word = compactWord(s.scratch)
	return d
}

// view is slot i's state as a limiter to read (not to decide on): its own, or the shard's
// scratch holding its word.
func (s *keyedShard) view(i int32) Limiter {
	sl := &s.slots[i]
	if sl.limiter != nil {
		return sl.limiter
	}
	setCompactWord(s.scratch, sl.word)
	return s.scratch
}

// limiterOf is slot i's limiter, made from its word if it has none yet (the caller keeps it).
func (k *KeyedLimiter) limiterOf(s *keyedShard, i int32) Limiter {
	sl := &s.slots[i]
	if sl.limiter == nil {
		sl.limiter = k.newLimiter()
		setCompactWord(sl.limiter, sl.word)
	}
	return sl.limiter
}

func (k *KeyedLimiter) newLimiter() Limiter {
	lim, err := k.spec.New(k.clock)
	if err != nil { // NewKeyed built one from the same spec and clock
		panic(fmt.Sprintf("limiters: keyed %s: %v", k.spec, err))
	}
	return lim
}

// fnv1a is the 64-bit FNV-1a hash of key, with murmur3's finalizer so that its top bits (the
// shard) depend on every byte: FNV-1a alone puts "k0" … "k199" in 2 of 16 shards. Fixed, so
// that shards are the same on every run. Its top bits pick the shard, its low 32 the place
// in the shard's index.
func fnv1a[K string | []byte](key K) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// shardOf is the shard of a key of hash h.
func (k *KeyedLimiter) shardOf(h uint64) *keyedShard {
	if k.shift == 64 {
		return &k.shards[0]
	}
	return &k.shards[h>>k.shift]
}

// find is key's slot in s (locked), or −1.
func (s *keyedShard) find(h uint64, key string) int32 {
	if len(s.index) == 0 {
		return -1
	}
	mask := uint64(len(s.index) - 1)
	tag := h << 32
	for p := h & mask; ; p = (p + 1) & mask {
		w := s.index[p]
		if w == 0 {
			return -1
		}
		if w&^0xffff_ffff == tag {
			if i := int32(uint32(w)) - 1; string(s.slots[i].key) == key {
				return i
			}
		}
	}
}

// indexAdd puts slot i, of a key of hash h, in s's index, growing it first if it would pass
// 3/4 full.
func (s *keyedShard) indexAdd(h uint64, i int32) {
	if 4*(int(s.n)+1) > 3*len(s.index) {
		old := s.index
		s.index = make([]uint64, max(8, 2*len(old)))
		for _, w := range old {
			if w != 0 {
				s.place(w)
			}
		}
	}
	s.place(h<<32 | uint64(uint32(i+1)))
}

// place puts word w at the first empty place from its hash's.
func (s *keyedShard) place(w uint64) {
	mask := uint64(len(s.index) - 1)
	p := (w >> 32) & mask
	for s.index[p] != 0 {
		p = (p + 1) & mask
	}
	s.index[p] = w
}

// indexRemove takes slot i, of a key of hash h, out of s's index, and moves back each word
// after it in the run that may now sit nearer its hash's place (Knuth's algorithm R), so that
// every word stays reachable from its hash's place without passing an empty one.
func (s *keyedShard) indexRemove(h uint64, i int32) {
	mask := uint64(len(s.index) - 1)
	w := h<<32 | uint64(uint32(i+1))
	p := h & mask
	for s.index[p] != w {
		p = (p + 1) & mask
	}
	for {
		s.index[p] = 0
		q := p
		for {
			q = (q + 1) & mask
			v := s.index[q]
			if v == 0 {
				return
			}
			// v may fill p when p is on its way: its hash's place is no nearer q than p is.
			if (q-v>>32)&mask >= (q-p)&mask {
				s.index[p] = v
				p = q
				break
			}
		}
	}
}

// AcquireKeyAt takes n permits from key's limiter at now, making it on the key's first
// request (evicting another key when the table is full). A request that finds the table full
// with nothing to evict is Rejected (and counted in Stats().Full); n ≤ 0 is Invalid and
// n > MaxPermits() Never before any key is made.
func (k *KeyedLimiter) AcquireKeyAt(now time.Duration, key string, n int) Decision {
	d, _ := k.acquire(now, key, n)
	return d
}

// AcquireKeyBytesAt is AcquireKeyAt for a key held as bytes, which are read during the call
// and never kept (a new key's are copied).
func (k *KeyedLimiter) AcquireKeyBytesAt(now time.Duration, key []byte, n int) Decision {
	d, _ := k.acquire(now, unsafe.String(unsafe.SliceData(key), len(key)), n)
	return d
}

// TryAcquireKey reports whether n permits were taken from key's limiter now, by the table's
// clock.
func (k *KeyedLimiter) TryAcquireKey(key string, n int) bool {
	return k.AcquireKeyAt(ReadClock(k.clock), key, n) == Admitted
}

func (k *KeyedLimiter) acquire(now time.Duration, key string, n int) (Decision, KeyOutcome) {
	if len(k.shards) == 0 {
		return CheckN(n, 0), KeyFull // the zero table grants nothing and holds no key
	}
	h := fnv1a(key)
	s := k.shardOf(h)
	s.mu.Lock()
	if i := s.find(h, key); i >= 0 {
		s.touch(i)
		d := s.acquireAt(i, now, n)
		s.mu.Unlock()
		return d, KeyFound
	}
	if d := CheckN(n, k.maxN); d != Admitted {
		s.mu.Unlock()
		return d, KeyFound // nothing made for a request no limiter could grant
	}
	i, outcome := k.insert(s, now, key, h)
	if i < 0 {
		s.mu.Unlock()
		return Rejected, outcome
	}
	d := s.acquireAt(i, now, n)
	s.mu.Unlock()
	return d, outcome
}

// Get is key's limiter, made (evicting another key when the table is full) if the key is new,
// and moved to the front of its shard's recency list; nil with KeyFull when the table is full
// and nothing can be evicted. In a compact table the key gets a limiter of its own here (once;
// it decides as the word it held). The limiter is the key's until it is evicted; then the
// table resets it and gives it to a later new key (resetForReuse), so a caller that keeps it
// past another key's Get (which may evict it) may decide for that other key. The simulator,
// which runs one lane on one goroutine and binds a key's limiter before each of its
// requests, decides through it; a concurrent caller should use AcquireKeyAt, which decides
// under the shard's lock.
func (k *KeyedLimiter) Get(now time.Duration, key string) (Limiter, KeyOutcome) {
	if len(k.shards) == 0 {
		return nil, KeyFull
	}
	h := fnv1a(key)
	s := k.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(h, key); i >= 0 {
		s.touch(i)
		return k.limiterOf(s, i), KeyFound
	}
	i, outcome := k.insert(s, now, key, h)
	if i < 0 {
		return nil, outcome
	}
	return k.limiterOf(s, i), outcome
}

// Peek is key's limiter if the table holds it (in a compact table, made from the key's word
// on the first Peek or Get), without making a key or touching its recency.
func (k *KeyedLimiter) Peek(key string) (Limiter, bool) {
	if len(k.shards) == 0 {
		return nil, false
	}
	h := fnv1a(key)
	s := k.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.find(h, key); i >= 0 {
		return k.limiterOf(s, i), true
	}
	return nil, false
}

// KeyState is Peek: the key's state as an ordinary Limiter (the Keyed interface).
func (k *KeyedLimiter) KeyState(key string) (Limiter, bool) { return k.Peek(key) }

// reserve counts one more key in the table if it has room.
func (k *KeyedLimiter) reserve() bool {
	for {
		held := k.keys.Load()
		if held >= k.maxKeys {
			return false
		}
		if k.keys.CompareAndSwap(held, held+1) {
			return true
		}
	}
}

// insert makes key (of hash h) a slot in s (locked) and returns it, or −1 with KeyFull. Under
// lru and fresh: a place the table has room for; at a full table, the place of the key the
// policy evicts from s's least recently used; and when s holds no key at all, the place of
// one evicted from the next shard that holds one (s is unlocked meanwhile, so that no caller
// holds two shards' locks; the key is looked up again after). Under nginx the zone's expiry
// removes first (KeyEvicted when it removed any).
func (k *KeyedLimiter) insert(s *keyedShard, now time.Duration, key string, h uint64) (int32, KeyOutcome) {
	outcome := KeyCreated
	switch {
	case k.policy == EvictNginx:
		if k.nginxAllocate(s, now) > 0 {
			outcome = KeyEvicted
		}
		if !k.reserve() { // nginxAllocate leaves room; this is only a guard
			s.full++
			return -1, KeyFull
		}
	case k.reserve():
	case s.n > 0:
		i := s.victim(now, k.policy)
		if i < 0 {
			s.full++
			return -1, KeyFull
		}
		s.remove(i) // its place in the count goes to key
		outcome = KeyEvicted
	default:
		s.mu.Unlock()
		took := k.evictElsewhere(int(h>>k.shift), now) // shift < 64: with one shard, s.n = 0 means the table is not full
		s.mu.Lock()
		if !took {
			s.full++
			return -1, KeyFull
		}
		if i := s.find(h, key); i >= 0 { // another caller made key meanwhile
			k.keys.Add(-1)
			s.touch(i)
			return i, KeyFound
		}
		outcome = KeyEvicted
	}
	return s.add(k, now, key, h), outcome
}

// evictElsewhere evicts one key of another shard than the from'th (unlocked), for it: from the next
// shard that holds a key, in shard order after s; its place in the count goes to s's new key.
// It reports false when no shard holding keys had one the policy lets go (fresh: no fresh
// key among its evictScan least recently used). It happens only when s is empty and the
// table full, so at most once per key of s's in a round.
func (k *KeyedLimiter) evictElsewhere(from int, now time.Duration) bool {
	for j := 1; j < len(k.shards); j++ {
		o := &k.shards[(from+j)&(len(k.shards)-1)]
		o.mu.Lock()
		if o.n > 0 {
			i := o.victim(now, k.policy)
			if i >= 0 {
				o.remove(i)
			}
			o.mu.Unlock()
			return i >= 0
		}
		o.mu.Unlock()
	}
	return false
}

// add makes key (of hash h) a slot in s (locked), in a slot removal emptied when there is
// one, with its limiter reset (a kind resetForReuse knows) and its key buffer refilled: no
// allocation once the table has been full.
func (s *keyedShard) add(k *KeyedLimiter, now time.Duration, key string, h uint64) int32 {
	var i int32
	if n := len(s.free); n > 0 {
		i, s.free = s.free[n-1], s.free[:n-1]
	} else {
		i = int32(len(s.slots))
		s.slots = append(s.slots, keyedSlot{})
		if k.policy == EvictNginx {
			s.born = append(s.born, 0)
		}
	}
	sl := &s.slots[i]
	switch {
	case sl.limiter != nil && k.reuse && resetForReuse(sl.limiter):
	case sl.limiter == nil && k.compact:
		sl.word = 0 // what New leaves
	default:
		sl.limiter = k.newLimiter()
	}
	sl.key = append(sl.key[:0], key...)
	if k.policy == EvictNginx {
		s.born[i] = zoneMs(now)
	}
	s.indexAdd(h, i)
	s.n++
	s.pushFront(i)
	s.created++
	return i
}

// victim is the slot to evict: the first of the evictScan least recently used that the
// policy allows, or −1.
func (s *keyedShard) victim(now time.Duration, policy Evict) int32 {
	i := s.tail
	for range evictScan {
		if i < 0 {
			return -1
		}
		if evictable(s.view(i), now, policy) {
			return i
		}
		i = s.slots[i].prev
	}
	return -1
}

// evictable: fresh evicts only a Fresh limiter that is fresh at now; lru anything, except a
// releasing limiter (a bulkhead) that still holds permits.
func evictable(l Limiter, now time.Duration, policy Evict) bool {
	f, canTell := l.(Fresh)
	if policy == EvictFresh {
		return canTell && f.FreshAt(now)
	}
	if _, releases := l.(Releaser); releases {
		return canTell && f.FreshAt(now)
	}
	return true
}

// remove forgets slot i's key (an eviction): the slot, with its limiter and key buffer, goes
// to the free list. The table's count is the caller's to settle.
func (s *keyedShard) remove(i int32) {
	s.unlink(i)
	s.indexRemove(fnv1a(s.slots[i].key), i)
	s.n--
	s.free = append(s.free, i)
	s.evicted++
}

func (s *keyedShard) touch(i int32) {
	if s.head != i {
		s.unlink(i)
		s.pushFront(i)
	}
}

func (s *keyedShard) unlink(i int32) {
	sl := &s.slots[i]
	if sl.prev >= 0 {
		s.slots[sl.prev].next = sl.next
	} else {
		s.head = sl.next
	}
	if sl.next >= 0 {
		s.slots[sl.next].prev = sl.prev
	} else {
		s.tail = sl.prev
	}
	sl.prev, sl.next = -1, -1
}

func (s *keyedShard) pushFront(i int32) {
	sl := &s.slots[i]
	sl.prev, sl.next = -1, s.head
	if s.head >= 0 {
		s.slots[s.head].prev = i
	}
	s.head = i
	if s.tail < 0 {
		s.tail = i
	}
}

// MaxPermits is the most any key's limiter can grant at once (the same for every key).
func (k *KeyedLimiter) MaxPermits() int { return k.maxN }

// Stats is what the table has done, summed over its shards.
func (k *KeyedLimiter) Stats() KeyedStats {
	var st KeyedStats
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		st.Keys += int(s.n)
		st.Created += s.created
		st.Evicted += s.evicted
		st.Full += s.full
		s.mu.Unlock()
	}
	return st
}

// Len is the number of keys held.
func (k *KeyedLimiter) Len() int { return k.Stats().Keys }

// Spec is the spec every key's limiter is built from.
func (k *KeyedLimiter) Spec() Spec { return k.spec }

// Config is the table's bounds.
func (k *KeyedLimiter) Config() KeyedConfig { return k.config }

// String is "keys(max=1000,evict=lru):token-bucket:capacity=3,rate=100/1s".
func (k *KeyedLimiter) String() string {
	if k.spec == nil {
		return "keys(" + k.config.String() + "):" // the zero table: no spec
	}
	return "keys(" + k.config.String() + "):" + k.spec.String()
}

// KeyedSpec is a spec whose limiter is one per client key, in a table bounded by Keys:
// "keys(max=1000,evict=lru):token-bucket:capacity=3,rate=100/1s". It describes each key's
// limiter (Kind, NominalRate, InitialPermits and NaturalWindow are the inner spec's) but
// promises no bound over all keys: an attacker with more keys gets more, so AdmissionBound is
// false, and the per-key bound is Spec.AdmissionBound. New refuses: the table is built by
// NewKeyed (the simulator's stacks do that), since a KeyedLimiter decides for a key.
type KeyedSpec struct {
	Spec Spec
	Keys KeyedConfig
}

// keyedPrefix opens a keyed spec.
const keyedPrefix = "keys("

// IsKeyedSpec reports whether text is written as a keyed spec ("keys(…):…").
func IsKeyedSpec(text string) bool { return strings.HasPrefix(strings.TrimSpace(text), keyedPrefix) }

// ParseKeyedSpec reads "keys(max=1000,evict=lru):token-bucket:capacity=3,rate=100/1s";
// evict=nginx only over an nginx:… spec.
func ParseKeyedSpec(text string) (KeyedSpec, error) {
	rest := strings.TrimSpace(text)
	if !strings.HasPrefix(rest, keyedPrefix) {
		return KeyedSpec{}, &SpecError{Spec: text, Reason: "a keyed spec starts with keys(…): e.g. keys(max=1000,evict=lru):token-bucket:capacity=3,rate=100/1s"}
	}
	config, inner, ok := strings.Cut(rest[len(keyedPrefix):], ")")
	if !ok {
		return KeyedSpec{}, &SpecError{Spec: text, Reason: "keys( has no closing )"}
	}
	inner, ok = strings.CutPrefix(strings.TrimSpace(inner), ":")
	if !ok {
		return KeyedSpec{}, &SpecError{Spec: text, Reason: "expected : and the limiter after keys(…), e.g. keys(max=1000):token-bucket:capacity=3,rate=100/1s"}
	}
	keys, err := ParseKeyedConfig(config)
	if err != nil {
		return KeyedSpec{}, err
	}
	spec, err := ParseSpec(inner)
	if err != nil {
		return KeyedSpec{}, err
	}
	if keys.policy() == EvictNginx {
		if err := checkNginxZone(spec); err != nil {
			return KeyedSpec{}, err
		}
	}
	return KeyedSpec{Spec: spec, Keys: keys}, nil
}

// Kind is the inner spec's kind: each key's limiter is one of it.
func (s KeyedSpec) Kind() Kind {
	if s.Spec == nil {
		return "keys" // the zero spec, which Validate refuses
	}
	return s.Spec.Kind()
}

// String is "keys(max=1000,evict=lru):" and the inner spec.
func (s KeyedSpec) String() string {
	if s.Spec == nil {
		return keyedPrefix + s.Keys.String() + "):" // the zero spec, which Validate refuses
	}
	return keyedPrefix + s.Keys.String() + "):" + s.Spec.String()
}

// Validate checks the table's bounds and the inner spec.
func (s KeyedSpec) Validate() error {
	if s.Spec == nil {
		return NewConfigError("keys", "spec", "nil", "a keyed spec needs a limiter spec")
	}
	if err := s.Keys.Validate(); err != nil {
		return err
	}
	if s.Keys.policy() == EvictNginx {
		if err := checkNginxZone(s.Spec); err != nil {
			return err
		}
	}
	return s.Spec.Validate()
}

// New refuses: a keyed spec's limiter is a table (NewKeyed), which decides for a key.
func (s KeyedSpec) New(Clock) (Limiter, error) {
	return nil, NewConfigError(s.Kind(), "keys", s.Keys.String(), "a keyed spec builds a table of limiters (limiters.NewKeyed), not one limiter")
}

// AdmissionBound is false: over all keys a keyed table bounds nothing (each new key brings
// its own burst); Spec.AdmissionBound is the bound per key.
func (s KeyedSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is the inner spec's.
func (s KeyedSpec) NaturalWindow() time.Duration { return s.Spec.NaturalWindow() }

// NominalRate is the inner spec's: each key's rate.
func (s KeyedSpec) NominalRate() (Rate, bool) { return s.Spec.NominalRate() }

// InitialPermits is the inner spec's: what a new key starts with.
func (s KeyedSpec) InitialPermits() int { return s.Spec.InitialPermits() }

// CallerWait is the inner spec's, when its callers wait (Waiting), else 0.
func (s KeyedSpec) CallerWait() time.Duration {
	if w, ok := s.Spec.(Waiting); ok {
		return w.CallerWait()
	}
	return 0
}
