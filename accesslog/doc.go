// Package accesslog reads proxies' access logs as the requests a limiter saw: each request's
// arrival (rebased so that the first is at 0), its client key and the permits it is charged,
// streamed as the CSV trace ("t_ns,permits,key") that trace.Reader reads, so that every
// command that reads a trace reads a log too; engine.Replay reads the same requests as rows
// (Reader.NextRow), without that text. It imports only the standard library.
//
// Formats (Options.Format, told by the first 8 lines when "auto", a HAR by its first bytes):
//
//	combined, common   nginx's predefined log_formats (and Apache's, which write the same)
//	nginx:FORMAT       any nginx log_format string, its variables understood by name:
//	                   $msec, $time_local, $time_iso8601, $request_time, $remote_addr,
//	                   $binary_remote_addr, $http_NAME, $status, $body_bytes_sent,
//	                   $limit_req_status, …; others are opaque fields
//	caddy, json        Caddy's JSON access log as it writes it; any JSON lines with the
//	                   fields named by role (time=ts,key=request.remote_ip,duration=duration)
//	haproxy            HAProxy's option httplog line, with or without a syslog header;
//	                   captured headers are the fields hr and hs; HAProxy's own
//	                   messages ("Proxy lab stopped …") are counted and skipped
//	alb                AWS Application Load Balancer access logs: arrival = time less the
//	                   request, target and response processing times (each -1 left out)
//	cloudfront         CloudFront standard logs (W3C: #Fields names the tab-separated columns):
//	                   arrival = date and time (UTC, 1s) less time-taken
//	envoy              Envoy's default access log format (either of its two defaults):
//	                   [%START_TIME%] is the arrival; the RL response flag is a logged refusal
//	har                a HAR file (one JSON document, read an entry at a time): each entry's
//	                   startedDateTime, keyed by the URL's host; errors name log.entries[i]
//	csv                a trace already, passed through untouched (its fast path intact)
//
// Time said out loud: nginx stamps $time_local and $msec when the response ends, and Caddy's
// ts is taken after the handler returns, so a request's arrival is the stamp less
// $request_time (or duration) where the log has it; without it, the notes say that times are
// completion times. A request of 500ms stamped at 10:00:00.500 arrived at 10:00:00.000.
// Completion stamps are out of arrival order: rows wait in a queue ordered by arrival for the
// reorder window (Options.Reorder; by default the longest request of the first 10,000 rows
// plus 1s) and a row later than that is counted and named by line in the notes, never
// dropped. The stamps' resolution is reported: a combined log's 1s stamps hide every burst
// shorter than 1s, so a burst measured from them is a lower bound. Spread "uniform" places
// the i-th of n requests sharing a stamp at i/n of its tick, deterministically.
//
// Time zones are honoured: nginx and Caddy write theirs. HAProxy's %tr is its host's local
// time with no zone: an RFC 5424 syslog header's offset gives it ("2026-12-02T17:02:09.021+05:30"
// makes [02/Dec/2026:17:02:08.005] 11:32:08.005 UTC); without one, Options.Zone does (UTC by
// default, said in the notes). A constant offset moves no rebased time; a daylight-saving
// change inside the log moves every time after it by an hour unless the zone is named.
//
// Production's decisions: Record.Logged is what the real limiter decided, where the log says
// — nginx's $limit_req_status (PASSED, DELAYED admitted; REJECTED refused), Envoy's response
// flags (RL, its rate-limit filters' refusal, refused; anything else admitted), or the statuses
// Options.RefusedStatus names ("429" for a HAProxy stick table's deny). Compare runs a model
// over the same arrivals and counts agreement: against a real nginx (10r/s, burst=2 nodelay,
// 35 requests of 3 clients in bursts), ratelab's nginx kind agreed on all 35, the 2 or 3
// within 20ms of a decision's boundary included.
//
// gzip is read transparently (by its magic bytes); one line is held at a time besides the
// reorder window, so memory does not grow with the log's length.
package accesslog
