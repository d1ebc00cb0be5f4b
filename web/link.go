package web

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/scenarios"
)

// A permalink's text (the page's URL fragment after #) is the whole scenario — lanes, sources,
// seed, injected bursts — and the moment shown:
//
//	r1.<scenario file, deflated, base64url without padding>.<steps>.<now in ns>
//
// The default scenario's file (1.4 kB of YAML) is about 600 characters of link. Decoding
// inflates at most scenarios.MaxFileSize bytes.
const linkVersion = "r1"

// EncodeLink is the permalink text of the scenario text at moment m.
func EncodeLink(text string, m Moment) (string, error) {
	var buf bytes.Buffer
	zw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := io.WriteString(zw, text); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s.%s.%d.%d", linkVersion, base64.RawURLEncoding.EncodeToString(buf.Bytes()), m.Steps, int64(m.Now)), nil
}

// DecodeLink reads a permalink's text back: the scenario text and the moment. A leading '#'
// is skipped, so the whole fragment can be passed.
func DecodeLink(link string) (string, Moment, error) {
	link = strings.TrimPrefix(strings.TrimSpace(link), "#")
	parts := strings.Split(link, ".")
	if len(parts) != 4 || parts[0] != linkVersion {
		return "", Moment{}, fmt.Errorf("link: not a ratelab permalink (%s.SCENARIO.STEPS.NOW)", linkVersion)
	}
	packed, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", Moment{}, fmt.Errorf("link: the scenario is not base64url: %v", err)
	}
	data, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(packed)), scenarios.MaxFileSize+1))
	if err != nil {
		return "", Moment{}, fmt.Errorf("link: the scenario does not inflate: %v", err)
	}
	if len(data) > scenarios.MaxFileSize {
		return "", Moment{}, fmt.Errorf("link: the scenario inflates past %d bytes", scenarios.MaxFileSize)
	}
	steps, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil {
		return "", Moment{}, fmt.Errorf("link: steps %q: not a whole number", parts[2])
	}
	now, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || now < 0 {
		return "", Moment{}, fmt.Errorf("link: time %q: not a whole number of ns", parts[3])
	}
	return string(data), Moment{Steps: steps, Now: time.Duration(now)}, nil
}
