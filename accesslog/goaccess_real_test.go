//go:build unix

package accesslog

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// logswanExample is the example log Debian's logswan package ships: 34 requests of 7 clients
// on 9 Dec 2018, in nginx's combined format (its referers written "" when none). It is read
// where the package put it, not copied here.
const logswanExample = "/usr/share/doc/logswan/examples/logswan.log"

// counts is how many requests a reading found, in all and by status.
type counts struct {
	total    int
	byStatus map[int]int
}

// ratelabCounts reads a combined log with ratelab's reader, told by its content.
func ratelabCounts(t *testing.T, path string) counts {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	in, err := Open(f, Options{})
	require.NoError(t, err)
	require.Equal(t, "nginx combined", in.Log().Format())
	c := counts{byStatus: map[int]int{}}
	for {
		rec, err := in.Log().Next()
		if err == io.EOF {
			return c
		}
		require.NoError(t, err)
		c.total++
		c.byStatus[rec.Status]++
	}
}

// goaccessReport is the part of goaccess --output=json's report compared.
type goaccessReport struct {
	General struct {
		Total  int `json:"total_requests"`
		Valid  int `json:"valid_requests"`
		Failed int `json:"failed_requests"`
	} `json:"general"`
	StatusCodes struct {
		Data []struct {
			Items []struct {
				Data string `json:"data"` // "404 - Not Found: Requested resource could not be found"
				Hits struct {
					Count int `json:"count"`
				} `json:"hits"`
			} `json:"items"`
		} `json:"data"`
	} `json:"status_codes"`
}

// runGoaccess runs goaccess on path as a combined log, with no configuration file, writing
// its JSON report to a file; bounded to a minute. It returns the report (nil when goaccess
// failed) and what goaccess printed.
func runGoaccess(t *testing.T, bin, path string) (*goaccessReport, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, path, "--log-format=COMBINED", "--no-global-config", "--output="+out)
	cmd.Stdin = nil // /dev/null: goaccess reads the file named, not a pipe
	printed, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "goaccess took more than a minute")
	if err != nil {
		return nil, string(printed)
	}
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var r goaccessReport
	require.NoError(t, json.Unmarshal(data, &r), "goaccess's report")
	return &r, string(printed)
}

// byStatus is goaccess's requests per status, read from each item's "404 - Not Found…".
func (r *goaccessReport) byStatus(t *testing.T) map[int]int {
	t.Helper()
	m := map[int]int{}
	for _, class := range r.StatusCodes.Data {
		for _, it := range class.Items {
			var code int
			_, err := fmt.Sscanf(it.Data, "%d", &code)
			require.NoError(t, err, "goaccess's status item %q", it.Data)
			m[code] += it.Hits.Count
		}
	}
	return m
}

// logswanReport is logswan's JSON: its hits, and hits per status.
type logswanReport struct {
	Hits struct {
		Total int `json:"total"`
	} `json:"hits"`
	Invalid int `json:"invalid_lines"`
	Status  []struct {
		Data int `json:"data"`
		Hits int `json:"hits"`
	} `json:"status"`
}

func runLogswan(t *testing.T, bin, path string) logswanReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, path).Output()
	require.NoError(t, err, "logswan %s", path)
	var r logswanReport
	require.NoError(t, json.Unmarshal(out, &r), "logswan's report")
	return r
}

func (r logswanReport) byStatus() map[int]int {
	m := map[int]int{}
	for _, s := range r.Status {
		m[s.Data] += s.Hits
	}
	return m
}

// writeCombinedFixture writes n requests in nginx's combined format (seeded, so the same
// every run) with what real logs hold besides plain requests: a TLS handshake sent to the
// HTTP port (nginx logs its bytes escaped, status 400), a request line nginx could not read
// ("-"), an empty one (""), nginx's own 444 and 499, an IPv6 client, quotes escaped in a user
// agent, "-" for no bytes, and statuses 600 and 999, which nginx logs for a `return 600;`.
// It returns the path and the lines it wrote that name a status above 599, and those with an
// empty request line.
func writeCombinedFixture(t *testing.T, n int) (path string, over599, emptyRequest int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 3))
	statuses := []int{200, 200, 200, 200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 404, 429, 429, 499, 500, 502, 503, 504}
	methods := []string{"GET", "GET", "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"}
	agents := []string{"curl/8.5.0", `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36`,
		`python-requests/2.31.0`, `Go-http-client/1.1`, `Mozilla/5.0 (compatible; \"quoted\" bot/1.0)`, "-"}
	var b strings.Builder
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.FixedZone("", 3600))
	for i := 0; i < n; i++ {
		at = at.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		client := fmt.Sprintf("198.51.100.%d", 1+rng.IntN(40))
		if rng.IntN(20) == 0 {
			client = fmt.Sprintf("2001:db8::%x", 1+rng.IntN(8))
		}
		status := statuses[rng.IntN(len(statuses))]
		request := fmt.Sprintf("%s /api/v1/items/%d?page=%d HTTP/1.1", methods[rng.IntN(len(methods))], rng.IntN(500), rng.IntN(9))
		bytesSent := fmt.Sprint(rng.IntN(20000))
		switch i % 97 {
		case 11:
			request, status = `\x16\x03\x01\x02\x00\x01\x00\x01\xFC\x03\x03`, 400
		case 23:
			request, status = "-", 400
		case 37:
			request, status, bytesSent = "", 400, "0"
			emptyRequest++
		case 41:
			status = 444
		case 53:
			bytesSent = "-"
		case 71:
			status = 600 + rng.IntN(2)*399 // 600 or 999
			over599++
		}
		referer := "-"
		if rng.IntN(3) == 0 {
			referer = "https://www.example.com/page?id=" + fmt.Sprint(rng.IntN(100))
		}
		fmt.Fprintf(&b, "%s - - [%s] \"%s\" %d %s \"%s\" \"%s\"\n", client, at.Format("02/Jan/2006:15:04:05 -0700"),
			request, status, bytesSent, referer, agents[rng.IntN(len(agents))])
	}
	path = filepath.Join(t.TempDir(), "access.log")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path, over599, emptyRequest
}

// goaccess (Debian's 1.7) and ratelab read the same combined logs alike: the total of
// requests and the requests per status are goaccess --output=json's, on the example log
// Debian's logswan package ships (34 requests: 22 of status 200, 12 of 404) and on a
// generated log of 3,000 requests with what real logs hold besides plain requests.
//
// Where they differ, by design: goaccess refuses a status above 599 ("Token '600' doesn't
// match specifier '%s'": counted in failed_requests, not in valid_requests nor by status),
// though nginx logs whatever status it returned (`return 600;` is valid nginx) and ratelab
// reads it. The test holds goaccess to that and nothing else: its failed requests are
// exactly the lines with a status above 599, and goaccess given one such line alone says why.
func TestGoaccessAgreesOnRequestsAndStatuses(t *testing.T) {
	bin := realBinary(t, "goaccess", "/usr/bin/goaccess", "goaccess")

	// (a) logswan's example, read in place.
	if _, err := os.Stat(logswanExample); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (.ci/run installs Debian's logswan)", logswanExample, err)
		}
		t.Skipf("%s: %v", logswanExample, err)
	}
	ours := ratelabCounts(t, logswanExample)
	report, printed := runGoaccess(t, bin, logswanExample)
	require.NotNil(t, report, "goaccess failed: %s", printed)
	require.Equal(t, 34, ours.total)
	require.Equal(t, map[int]int{200: 22, 404: 12}, ours.byStatus)
	require.Equal(t, ours.total, report.General.Total)
	require.Equal(t, ours.total, report.General.Valid)
	require.Zero(t, report.General.Failed)
	require.Equal(t, ours.byStatus, report.byStatus(t))

	// (b) the generated log.
	path, over599, _ := writeCombinedFixture(t, 3000)
	ours = ratelabCounts(t, path)
	report, printed = runGoaccess(t, bin, path)
	require.NotNil(t, report, "goaccess failed: %s", printed)
	require.Equal(t, 3000, ours.total)
	require.Equal(t, ours.total, report.General.Total, "every line is a request to both")
	require.Equal(t, over599, report.General.Failed, "goaccess's failed requests are the statuses above 599")
	require.Equal(t, ours.total-over599, report.General.Valid)
	inRange := map[int]int{}
	seen := 0
	for code, n := range ours.byStatus {
		if code <= 599 {
			inRange[code] = n
		} else {
			seen += n
		}
	}
	require.Equal(t, over599, seen)
	require.Equal(t, inRange, report.byStatus(t))
	require.Len(t, inRange, 17, "every status of the fixture, 444 and 499 included")

	// The evidence: a 600 alone is refused by goaccess, and a 599 is not.
	one := filepath.Join(t.TempDir(), "one.log")
	line := `192.0.2.8 - - [02/Dec/2026:10:00:08 +0100] "GET /f HTTP/1.1" 600 0 "-" "curl/8"` + "\n"
	require.NoError(t, os.WriteFile(one, []byte(line), 0o644))
	report, printed = runGoaccess(t, bin, one)
	require.Nil(t, report)
	require.Contains(t, printed, "Token '600' doesn't match specifier '%s'")
	require.NoError(t, os.WriteFile(one, []byte(strings.Replace(line, " 600 ", " 599 ", 1)), 0o644))
	report, printed = runGoaccess(t, bin, one)
	require.NotNil(t, report, printed)
	require.Equal(t, 1, report.General.Valid)
	require.Zero(t, report.General.Failed)
	// (goaccess lists a status it has no description for, 599, as "Unknown" in its class:
	// every status of the logs above has one, so each is counted under its own code.)
	require.Equal(t, "Unknown", report.StatusCodes.Data[0].Items[0].Data)
}

// logswan (Debian's 2.1) counts the same hits as ratelab on both logs, and the same hits per
// status but for two kinds of line it leaves out of its status counts (while counting them
// as hits): a status above 599, and an empty request line ("", which nginx writes for a
// connection closed before a request): logswan given one such line alone reports 1 hit and
// no status.
func TestLogswanAgreesOnHitsAndStatuses(t *testing.T) {
	bin := realBinary(t, "logswan", "/usr/bin/logswan", "logswan")
	if _, err := os.Stat(logswanExample); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (.ci/run installs Debian's logswan)", logswanExample, err)
		}
		t.Skipf("%s: %v", logswanExample, err)
	}
	ours := ratelabCounts(t, logswanExample)
	theirs := runLogswan(t, bin, logswanExample)
	require.Equal(t, ours.total, theirs.Hits.Total)
	require.Zero(t, theirs.Invalid)
	require.Equal(t, ours.byStatus, theirs.byStatus())

	path, over599, empty := writeCombinedFixture(t, 3000)
	ours = ratelabCounts(t, path)
	theirs = runLogswan(t, bin, path)
	require.Equal(t, ours.total, theirs.Hits.Total)
	require.Zero(t, theirs.Invalid)
	left := ours.byStatus
	for code := range left {
		if code > 599 {
			delete(left, code)
		}
	}
	left[400] -= empty // the empty request lines are all 400s
	require.Equal(t, left, theirs.byStatus())
	require.Positive(t, over599)
	require.Positive(t, empty)

	// The evidence, line by line.
	one := filepath.Join(t.TempDir(), "one.log")
	for _, line := range []string{
		`192.0.2.5 - - [02/Dec/2026:10:00:04 +0100] "" 400 0 "-" "-"`,
		`192.0.2.8 - - [02/Dec/2026:10:00:08 +0100] "GET /f HTTP/1.1" 600 0 "-" "curl/8"`,
	} {
		require.NoError(t, os.WriteFile(one, []byte(line+"\n"), 0o644))
		r := runLogswan(t, bin, one)
		require.Equal(t, 1, r.Hits.Total, line)
		require.Empty(t, r.Status, line)
		require.Equal(t, 1, ratelabCounts(t, one).total)
	}
}
