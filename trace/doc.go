// Package trace reads recorded traffic as a CSV trace: a header row, then one request per
// row, in time order. Replay (engine), fit, translate and the access-log readers all read
// traces through it; it imports only the standard library.
//
//	t_ns,permits,key,latency_ns
//	0,1,alice,1200000
//	250000,2,bob,800000
//
// Columns (by header name, in any order; others are ignored):
//   - t_ns: integer nanoseconds since the trace start, or
//   - t: an RFC 3339 timestamp (times are taken relative to the first row) or decimal
//     seconds since the start ("12.5");
//   - permits (optional, default 1): a whole number from 1 to MaxPermits (2^31−1);
//   - key (optional): who asked, for limiters kept per key;
//   - latency_ns (optional): the request's recorded latency once admitted, whole
//     nanoseconds from 0 to MaxTime; with it, engine.Replay completes each admitted request
//     that much later and tells the stages that take feedback (the adaptive kinds).
//
// Each of these five names may appear once: a header naming one twice ("t_ns,permits,t_ns")
// is refused, naming the column and both positions, rather than letting the last one win.
//
// Times must be less than MaxTime (2^62ns, about 146 years, after the start) and a trace
// holds at most MaxRows (2^32) rows, so that its permits add up exactly in an int64. A line
// may hold at most MaxLine bytes (1 MiB). Every error names its line ("line 7: …").
//
// Rows are read in one of three ways, all meaning the same thing. The plain layout, a header
// of t_ns[,permits[,key]] and rows of bare digits (and a key with no spaces around it), is
// parsed eight bytes at a time, with no allocation per row. Any other row without a quote is
// split at its commas; from the first line holding a quote (which may open a field spanning
// lines) to the end, the trace is read by encoding/csv.
package trace
