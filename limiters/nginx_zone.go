package limiters

import (
	"fmt"
	"time"
)

// EvictNginx is NGINX's own rule for a limit_req_zone's shared memory, for a keyed table of
// nginx: limiters: keys(max=N,evict=nginx):nginx:rate=…,burst=…, where N is the number of
// nodes (keys) the zone holds. It is read from ngx_http_limit_req_lookup and
// ngx_http_limit_req_expire in nginx's source (release-1.31; the 60s rule and the forced
// removal are as old as the module, 0.7.21):
//
//   - A request whose key has a node moves the node to the head of the zone's LRU queue,
//     refused or not, and removes nothing: expiry happens only on a key nginx has no node for.
//   - A key without a node first runs expire(1): while fewer than 2 nodes have been removed,
//     look at the queue's tail; remove it if it was last accounted at least 60s ago (|now −
//     last| ≥ 60000 ms) and its excess, decayed without the request's own 1000, is at most 0:
//     excess − ⌊R·ms/1000⌋ ≤ 0; stop at the first tail that fails either test. This happens
//     whether or not the zone is full.
//   - Then nginx allocates the node. When the zone is full it runs expire(0): the tail is
//     removed unconditionally, then up to 2 more as in expire(1), and the allocation is tried
//     again. Only if that fails too is the request refused ("could not allocate node", 503).
//
// So a new key at a full zone always gets a node, at the price of the least recently used key,
// however recently that key was seen: a zone of 2 at 1r/s with a and b seen at 0s, c at 30s
// removes a (expire(1) stops at a, 30s < 60s; expire(0) takes it anyway, then stops at b). And
// a new key at t ≥ 60s removes up to 2 idle tails even when the zone has room: with a (seen
// at 0s, excess 0) and c (30s) in a zone of 100, d at 95s removes both.
//
// The 60s test is weaker than Fresh: a node whose decayed excess is in (−1000, 0] is removed
// although its next request would be accounted above 0. At 1r/m (R = 16), burst=0, a key seen
// at 0s asking again at 60s is refused (0 − 960 + 1000 = 40 > 0): one request per 62.5s. If
// any new key arrives at 60s first, expire(1) removes the node (0 − 960 ≤ 0) and the key's
// request, now a new node's first, passes. Unrelated traffic decides.
//
// What the model leaves out, and why it does not change a decision here:
//
//   - nginx's count (a node in use is never removed, and expiry stops at it). It is non-zero
//     only between the lookup of one of several limit_req directives of a request and the
//     accounting at its last one, outside the zone's lock; ratelab decides each request of a
//     table under its shard's lock, so every node's count is 0 whenever expiry looks.
//   - The slab allocator. nginx's zone is bytes, not nodes; with keys of one length (an
//     address) every node takes one slab chunk, so "full" is a node count, and after expire(0)
//     has freed a node the retry always succeeds: "could not allocate node" never happens
//     (Stats().Full stays 0). It does in nginx with keys of mixed lengths, when the freed chunk
//     is of another size.
//   - A node made but never accounted (its first request refused by AcquireAt because nginx
//     would have held it, or refunded): nginx accounts every request it creates a node for, at
//     last = now; the table takes the key's arrival as last and 0 as excess.
//
// From a zone size to max: a node for $binary_remote_addr is an rbtree node and
// ngx_http_limit_req_node_t with a 4-byte key (84 bytes on 64-bit), which nginx's slab
// allocator keeps in a 128-byte chunk (64-byte on 32-bit). nginx's documentation counts about
// 8,000 128-byte states per megabyte (16,000 64-byte ones), so on a 64-bit server
//
//	limit_req_zone $binary_remote_addr zone=z:10m rate=10r/s;   ⇔   keys(max=80000,evict=nginx):nginx:rate=10r/s
//
// (1m: max=8000; 32-bit: twice as many). An IPv6 key (16 bytes, 96 in all) stays in 128 bytes.
//
// The table keeps one queue, as a zone does: evict=nginx takes shards=1 (the default for it at
// any max) and refuses more. A new key costs up to 4 looks at the tail and 3 removals; an
// existing key's request costs what it costs under lru (nothing is expired on a hit).
const EvictNginx Evict = "nginx"

// nginxIdle is the 60s (in ms) a node must have been idle before expire removes it.
const nginxIdle = 60_000

// nginxKindName is the nginx kind's name (limiters/peers), the only kind whose limiters are
// NginxZoned.
const nginxKindName Kind = "nginx"

// zoneMs is now in whole milliseconds, nginx's ngx_current_msec, as the nginx kind counts it.
func zoneMs(now time.Duration) int64 { return max(int64(now), 0) / int64(time.Millisecond) }

// NginxNode is what nginx's zone reads of a key's node when it expires nodes.
type NginxNode struct {
	Seen   bool  // a request has been accounted on it (false: the key's first is still to come)
	Excess int64 // milli-requests, as last accounted
	Last   int64 // ms: when last accounted (ngx_current_msec)
	Rate   int64 // R, the zone's rate in milli-requests per second
}

// NginxZoned is a limiter whose node an nginx zone (EvictNginx) can read: Nginx.
type NginxZoned interface {
	ZoneNode() NginxNode
}

// checkNginxZone refuses evict=nginx for a spec that is not nginx:…, naming the field evict:
// the rule reads an nginx node's excess and last, and its 60s means nothing to another kind
// (whose idle state lru or fresh already handle).
func checkNginxZone(spec Spec) error {
	if k := spec.Kind(); k != nginxKindName {
		return NewConfigError("keys", "evict", string(EvictNginx),
			fmt.Sprintf("is nginx's zone expiry, which reads an nginx node's excess and last: it needs an nginx:… limiter, not %s (lru and fresh work with every kind)", k))
	}
	return nil
}

// nginxAllocate is what nginx does in s (locked; a zone's table has one shard) before
// allocating a node for a new key at now: expire(1), and expire(0) when the zone is still
// full. It returns how many nodes it removed; afterwards the table has room.
func (k *KeyedLimiter) nginxAllocate(s *keyedShard, now time.Duration) int {
	ms := zoneMs(now)
	removed := s.nginxExpire(ms, 1)
	if int64(s.n) >= k.maxKeys {
		removed += s.nginxExpire(ms, 0)
	}
	k.keys.Add(-int64(removed))
	return removed
}

// nginxExpire is ngx_http_limit_req_expire(ctx, n) at ms now: from n up to 2, remove the tail,
// unconditionally while n = 0 and, from n = 1, only while it has been idle 60s with its excess
// decayed to 0.
func (s *keyedShard) nginxExpire(now int64, n int) (removed int) {
	for ; n < 3; n++ {
		i := s.tail
		if i < 0 {
			return removed
		}
		if n != 0 && !s.nginxExpired(i, now) {
			return removed
		}
		s.remove(i)
		removed++
	}
	return removed
}

// nginxExpired is expire's test of slot i's node at ms now: |now − last| ≥ 60000 and
// excess − ⌊R·|now − last|/1000⌋ ≤ 0, in nginx's unsigned arithmetic read back as signed.
func (s *keyedShard) nginxExpired(i int32, now int64) bool {
	node := s.slots[i].limiter.(NginxZoned).ZoneNode() // NewKeyed checked the kind's limiter is one
	excess, last := node.Excess, node.Last
	if !node.Seen {
		excess, last = 0, s.born[i]
	}
	ms := now - last
	if ms < 0 {
		ms = -ms
	}
	if ms < nginxIdle {
		return false
	}
	return int64(uint64(excess)-uint64(node.Rate)*uint64(ms)/1000) <= 0
}
