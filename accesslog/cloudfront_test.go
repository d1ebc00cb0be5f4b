package accesslog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// CloudFront's documented example record (a Hit from 192.0.2.100) under its #Version and
// #Fields header, a Miss from another viewer that took 750ms, finished in the same second,
// and a LimitExceeded (CloudFront's own quota) a second later.
const cloudFrontLog = "#Version: 1.0\n" +
	"#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end\n" +
	"2019-12-04\t21:02:31\tLAX1\t392\t192.0.2.100\tGET\td111111abcdef8.cloudfront.net\t/index.html\t200\t-\tMozilla/5.0%20(Windows%20NT%2010.0;%20Win64;%20x64)\t-\t-\tHit\tSOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==\td111111abcdef8.cloudfront.net\thttps\t23\t0.001\t-\tTLSv1.2\tECDHE-RSA-AES128-GCM-SHA256\tHit\tHTTP/2.0\t-\t-\t11040\t0.001\tHit\ttext/html\t78\t-\t-\n" +
	"2019-12-04\t21:02:31\tLAX1\t392\t192.0.2.101\tGET\td111111abcdef8.cloudfront.net\t/index.html\t200\t-\tcurl/7.68.0\t-\t-\tMiss\tk6WGMNkEzR5BEM_SaF47gjtX9zBDO2m349OY2an0QPEaUum1ZOLrow==\td111111abcdef8.cloudfront.net\thttps\t23\t0.750\t-\tTLSv1.2\tECDHE-RSA-AES128-GCM-SHA256\tMiss\tHTTP/2.0\t-\t-\t11041\t0.700\tMiss\ttext/html\t78\t-\t-\n" +
	"2019-12-04\t21:02:32\tSEA19-C1\t0\t192.0.2.100\tGET\td111111abcdef8.cloudfront.net\t/api\t503\t-\tcurl/7.68.0\t-\t-\tLimitExceeded\t1Cqk5I2fsEBM6g6MuLZDeT9cPJEMNOnyjn-yyJzAzuGLFm3i5NZBNA==\td111111abcdef8.cloudfront.net\thttps\t23\t0.000\t-\tTLSv1.2\tECDHE-RSA-AES128-GCM-SHA256\tLimitExceeded\tHTTP/2.0\t-\t-\t11042\t0.000\tLimitExceeded\t-\t-\t-\t-\n" +
	""

// The same records under a #Fields line of its own order and subset, with a column this
// reader does not know (x-custom).
const cloudFrontSubset = "#Version: 1.0\n" +
	"#Fields: time date c-ip sc-status time-taken x-edge-result-type x-custom\n" +
	"21:02:31\t2019-12-04\t192.0.2.100\t200\t0.001\tHit\tzz\n" +
	"21:02:31\t2019-12-04\t192.0.2.101\t200\t0.750\tMiss\tzz\n" +
	"21:02:32\t2019-12-04\t192.0.2.100\t503\t0.000\tLimitExceeded\tzz\n" +
	""

// CloudFront's logs, told by their content: the #Fields line names the columns, date and
// time (UTC, to the second) are completion times, less time-taken; the key is c-ip.
func TestCloudFront(t *testing.T) {
	want := []string{
		"0s 192.0.2.101 200 unlogged 4",    // 21:02:31 - 0.750 = 21:02:30.250
		"749ms 192.0.2.100 200 unlogged 3", // 21:02:31 - 0.001 = 21:02:30.999
		"1.75s 192.0.2.100 503 unlogged 5", // 21:02:32 - 0
	}
	for _, log := range []string{cloudFrontLog, cloudFrontSubset} {
		rows, notes := recordsOf(t, log, Options{})
		require.Equal(t, want, rows)
		all := strings.Join(notes, "\n")
		require.Contains(t, all, "read as cloudfront (detected), 3 requests, keyed by c-ip")
		require.Contains(t, all, "arrival = date and time - time-taken")
		require.Contains(t, all, "1s resolution")
		require.Contains(t, all, "1 requests were out of arrival order in the file and were sorted")
	}
	require.Equal(t, "Miss,Hit,LimitExceeded", strings.Join(keysOf(t, cloudFrontSubset, Options{Key: "x-edge-result-type"}), ","))
	require.Equal(t, "GET /index.html,GET /index.html,GET /api", strings.Join(keysOf(t, cloudFrontLog, Options{Key: "method+path"}), ","))
	require.Equal(t, "11041,11040,11042", strings.Join(keysOf(t, cloudFrontLog, Options{Key: "c-port"}), ","))
	_, err := Open(strings.NewReader(cloudFrontSubset), Options{Format: "cloudfront", Key: "x-custom"})
	require.ErrorContains(t, err, `cloudfront has no field "x-custom"`)

	// Without its header (cut off by a tool), the documented order is read; files
	// concatenated, each with its header, read as one.
	headless := strings.SplitN(cloudFrontLog, "\n", 3)[2]
	rows, _ := recordsOf(t, headless, Options{Format: "cloudfront"})
	require.Equal(t, []string{"0s 192.0.2.101 200 unlogged 2", "749ms 192.0.2.100 200 unlogged 1", "1.75s 192.0.2.100 503 unlogged 3"}, rows)
	rows, _ = recordsOf(t, headless, Options{})
	require.Len(t, rows, 3, "told by content without its header too")
	rows, _ = recordsOf(t, cloudFrontLog+cloudFrontSubset, Options{})
	require.Len(t, rows, 6)
}

// A record that does not fit the #Fields line, or a #Fields line with no date, is named by
// line and column.
func TestCloudFrontErrorsNameLineAndColumn(t *testing.T) {
	head := "#Version: 1.0\n#Fields: date time c-ip sc-status time-taken\n"
	for _, c := range []struct{ log, want string }{
		{head + "2019-12-04\t21:02:31\t192.0.2.1\t200\n", "line 3, column 34: cloudfront: expected 5 tab-separated values, as the #Fields line names, but the line ends after 4"},
		{head + "2019-12-04\t21:02:31\t192.0.2.1\t200\t0.1\tx\n", "line 3, column 38: cloudfront: expected the line to end after the 5 tab-separated values"},
		{head + "2019/12/04\t21:02:31\t192.0.2.1\t200\t0.1\n", "line 3, column 1: cloudfront: expected the date such as 2019-12-04"},
		{head + "2019-12-04\t21:02:61\t192.0.2.1\t200\t0.1\n", `line 3, column 1: cloudfront: date and time "2019-12-04": with time "21:02:61": expected a time such as`},
		{head + "2019-12-04\t21:02:31\t192.0.2.1\t20\t0.1\n", "line 3, column 31: cloudfront: expected sc-status, 3 digits"},
		{head + "2019-12-04\t21:02:31\t192.0.2.1\t200\tfast\n", `line 3, column 35: cloudfront: time-taken "fast" is not a duration`},
		{"#Version: 1.0\n#Fields: c-ip sc-status\n192.0.2.1\t200\n", "line 2, column 1: cloudfront: the #Fields line names no date and time columns"},
	} {
		err := readErr(t, c.log, Options{Format: "cloudfront"})
		require.ErrorContains(t, err, c.want)
	}
}
