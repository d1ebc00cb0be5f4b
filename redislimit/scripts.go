package redislimit

import (
	"crypto/sha1"
	"encoding/hex"
)

// luaPrelude is shared by both scripts: exact integer arithmetic on Redis's Lua numbers.
//
// Redis's Lua numbers are IEEE doubles, exact for integers up to 2^53 ≈ 9.0·10^15. A time in
// nanoseconds since the Unix epoch is about 1.75·10^18 (2025): in one double it would be
// rounded to a multiple of 256ns. So every time or span is a pair (s, ns), s·10^9 + ns with
// 0 ≤ ns < 10^9: s stays below 4.7·10^9 for any time ratelab accepts (2^62 ns past the
// origin, plus a tolerance of up to 2^62 ns), and the pairs' sums and differences stay below
// 2^34, all exact. Lua only adds, subtracts and compares pairs; every product (n·T, τ − n·T,
// the caller's window index) is formed in Go in int64 and passed as decimal text. A time is
// stored as its full decimal count of nanoseconds ("1751712345678901234"), split at its
// ninth digit from the right: what redis-cli shows is the real value.
const luaPrelude = `
local B = 1000000000
local function parse(v)
  local len = #v
  if len <= 9 then return 0, tonumber(v) end
  return tonumber(string.sub(v, 1, len - 9)), tonumber(string.sub(v, len - 8))
end
local function fmt(s, ns)
  if s == 0 then return string.format('%d', ns) end
  return string.format('%d%09d', s, ns)
end
local function less(as, ans, bs, bns)
  return as < bs or (as == bs and ans < bns)
end
local function sub(as, ans, bs, bns)
  local s, ns = as - bs, ans - bns
  if ns < 0 then return s - 1, ns + B end
  return s, ns
end
local function add(as, ans, bs, bns)
  local s, ns = as + bs, ans + bns
  if ns >= B then return s + 1, ns - B end
  return s, ns
end
-- a quotient of exact integers below 2^53: the division's rounding corrected
local function floordiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end
local function ceilms(s, ns)
  return s * 1000 + math.ceil(ns / 1000000)
end
-- Redis before 5 refuses writes after TIME unless the script replicates its effects.
if redis.replicate_commands then redis.replicate_commands() end
`

// gcraLua is one GCRA decision (the token and leaky buckets of package limiters).
//
//	KEYS[1]  the TAT, decimal ns
//	ARGV[1]  now, decimal ns; '' to read Redis's TIME
//	ARGV[2]  cost n·T, decimal ns
//	ARGV[3]  room τ − n·T, decimal ns (≥ 0)
//	ARGV[4]  the key's expiry in ms; '' for "when TAT passes" (Redis's TIME only)
//	ARGV[5]  '1' to peek: decide nothing, write nothing
//
// It admits when backlog = max(TAT, now) − now ≤ room, i.e. backlog + n·T ≤ τ, and then
// stores TAT = max(TAT, now) + n·T. It returns {code, a_s, a_ns, now_s, now_ns}: code 1 with
// nothing, code 0 with the wait backlog − room after which the request would pass, code 2
// (peek) with the backlog; now is the time decided at. With Redis's TIME the key expires when
// TAT passes, rounded up to a whole ms: a missing key and a TAT at or before now both mean a
// full bucket, so the expiry never changes a decision.
const gcraLua = luaPrelude + `
local now_s, now_ns
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now_s, now_ns = tonumber(t[1]), tonumber(t[2]) * 1000
else
  now_s, now_ns = parse(ARGV[1])
end
local tat_s, tat_ns = now_s, now_ns
local stored = redis.call('GET', KEYS[1])
if stored then
  local s, ns = parse(stored)
  if less(now_s, now_ns, s, ns) then tat_s, tat_ns = s, ns end
end
local back_s, back_ns = sub(tat_s, tat_ns, now_s, now_ns)
if ARGV[5] == '1' then return {2, back_s, back_ns, now_s, now_ns} end
local room_s, room_ns = parse(ARGV[3])
if less(room_s, room_ns, back_s, back_ns) then
  local w_s, w_ns = sub(back_s, back_ns, room_s, room_ns)
  return {0, w_s, w_ns, now_s, now_ns}
end
local cost_s, cost_ns = parse(ARGV[2])
local new_s, new_ns = add(tat_s, tat_ns, cost_s, cost_ns)
local ttl = ARGV[4]
if ttl == '' then
  ttl = string.format('%d', ceilms(add(back_s, back_ns, cost_s, cost_ns)))
end
redis.call('SET', KEYS[1], fmt(new_s, new_ns), 'PX', ttl)
return {1, 0, 0, now_s, now_ns}
`

// windowLua is one fixed-window decision (limiters.FixedWindow): the window's index and its
// count in one hash, so the script touches only its declared key (a cluster routes it) and a
// late caller counts against the newest window, as in process.
//
//	KEYS[1]  a hash: w = the window's index (decimal), c = permits used in it
//	ARGV[1]  now, decimal ns; '' to read Redis's TIME
//	ARGV[2]  n
//	ARGV[3]  the limit
//	ARGV[4]  the window: ns with the caller's time, µs with Redis's TIME
//	ARGV[5]  the caller's window index ⌊now/window⌋, decimal ('' with Redis's TIME)
//	ARGV[6]  the key's expiry in ms; '' for "at the window's end" (Redis's TIME only)
//	ARGV[7]  '1' to peek
//
// It admits when used + n ≤ limit, counting from 0 in a window newer than the stored one,
// and then HSETs the window and its count and PEXPIREs the key. It returns {code, used,
// index_s, index_ns, now_s, now_ns}: code 1 admitted, 0 refused, 2 peeked; used is the count
// before the decision; the index (split at 10^9 like a time) is the window counted against.
// With Redis's TIME the window index is ⌊now_µs / window_µs⌋: µs since the epoch are about
// 1.75·10^15, exact in a double until 2255 (2^53 µs).
const windowLua = luaPrelude + `
local n, limit, win = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now_s, now_ns, i_s, i_ns, now_us
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now_s, now_ns = tonumber(t[1]), tonumber(t[2]) * 1000
  now_us = now_s * 1000000 + tonumber(t[2])
  local index = floordiv(now_us, win)
  i_s = floordiv(index, B)
  i_ns = index - i_s * B
else
  now_s, now_ns = parse(ARGV[1])
  i_s, i_ns = parse(ARGV[5])
end
local used = 0
local stored = redis.call('HMGET', KEYS[1], 'w', 'c')
if stored[1] then
  local s, ns = parse(stored[1])
  if not less(s, ns, i_s, i_ns) then
    i_s, i_ns, used = s, ns, tonumber(stored[2])
  end
end
if ARGV[7] == '1' then return {2, used, i_s, i_ns, now_s, now_ns} end
if used + n > limit then return {0, used, i_s, i_ns, now_s, now_ns} end
local ttl = ARGV[6]
if ttl == '' then
  local left = ((i_s * B + i_ns) + 1) * win - now_us
  ttl = string.format('%d', math.ceil(left / 1000))
end
redis.call('HSET', KEYS[1], 'w', fmt(i_s, i_ns), 'c', used + n)
redis.call('PEXPIRE', KEYS[1], ttl)
return {1, used, i_s, i_ns, now_s, now_ns}
`

// script is a Lua script run by its SHA-1 (EVALSHA), so that a decision sends 40 bytes of
// digest instead of the script's 2 KB. A server that does not hold it (restarted, failed
// over, SCRIPT FLUSH) answers NOSCRIPT; the script is then sent with SCRIPT LOAD and the
// decision again (Client.exec), so the next EVALSHA finds it.
type script struct {
	src, sha string
}

func newScript(src string) *script {
	sum := sha1.Sum([]byte(src))
	return &script{src: src, sha: hex.EncodeToString(sum[:])}
}

var (
	gcraScript   = newScript(gcraLua)
	windowScript = newScript(windowLua)
)
