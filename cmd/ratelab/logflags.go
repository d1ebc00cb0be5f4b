package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/ratelab/ratelab/accesslog"
)

// logFlags are how a command reads an access log given as its trace (accesslog.Options).
type logFlags struct{ opt accesslog.Options }

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.opt.Format, "log-format", "auto", "the input's `FORMAT`: auto, csv, combined, common, caddy, json, haproxy, alb, cloudfront, envoy or har; or nginx:'LOG_FORMAT', an nginx log_format string")
	fs.StringVar(&l.opt.Fields, "field", "", "a JSON log's fields as `ROLES`, e.g. time=ts,key=request.remote_ip,duration=duration (default: Caddy's)")
	fs.StringVar(&l.opt.Key, "key", "", "key requests by this log `FIELD`: remote_addr, http_x_api_key, method+path… (default: the client address)")
	fs.StringVar(&l.opt.Permits, "permits", "", "charge each request this numeric log `FIELD`, e.g. body_bytes_sent (default: 1 each)")
	fs.DurationVar(&l.opt.Reorder, "reorder", 0, "sort log rows up to this `DURATION` out of arrival order (default: longest request logged + 1s)")
	fs.StringVar(&l.opt.Spread, "spread", "none", "place requests sharing a stamp, as `MODE`: none, or uniform (evenly over the stamp's tick)")
	fs.StringVar(&l.opt.RefusedStatus, "refused-status", "", "the HTTP `STATUSES` by which the log records a refusal, e.g. 429 or 429,503, for replay --compare where the log has no $limit_req_status (default: none)")
	fs.StringVar(&l.opt.Zone, "log-zone", "", "the time `ZONE` of stamps written without one (HAProxy's): UTC, Local, +0530 or a zone name (default: UTC, or the syslog header's)")
}

// options are the flags' options, checked (a usage error when one cannot be right).
func (l *logFlags) options() (accesslog.Options, error) {
	if err := l.opt.Check(); err != nil {
		return l.opt, usageErrorf("%v", err)
	}
	return l.opt, nil
}

// openLog reads r, named source, as the flags say: the CSV trace it is or stands for.
func (l *logFlags) openLog(r io.Reader, source string) (*accesslog.Input, error) {
	in, err := accesslog.Open(r, l.opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return in, nil
}

// printNotes writes an access log's notes (none for a CSV trace) on w, one line each; on a
// terminal width columns wide (width > 0), each wrapped at prose(width) with a hanging indent.
func printNotes(w io.Writer, width int, source string, notes []string) {
	for _, n := range notes {
		line := source + ": " + n
		if width > 0 {
			line = wrapHanging(line, prose(width))
		}
		fmt.Fprintln(w, line)
	}
}

// logFlagSet is the first log flag set (of those fs.Visit found), "" when none is.
func logFlagSet(set map[string]bool) string {
	for _, name := range []string{"log-format", "field", "key", "permits", "reorder", "spread", "log-zone", "refused-status"} {
		if set[name] {
			return name
		}
	}
	return ""
}
