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

	"github.com/ratelab/ratelab/engine"
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

// LinkIn finds a permalink's text in arg: arg itself when it is one ("r1.…"), or the fragment
// of a URL that carries one ("https://host/ratelab/#r1.…", "file:///…/index.html#r1.…"). It
// reports false for anything else, which is then a scenario's name or file.
func LinkIn(arg string) (string, bool) {
	arg = strings.TrimSpace(arg)
	if i := strings.IndexByte(arg, '#'); i >= 0 {
		arg = arg[i+1:]
	}
	if !strings.HasPrefix(arg, linkVersion+".") || strings.Count(arg, ".") != 3 {
		return "", false
	}
	return arg, true
}

// LoadLink is the scenario a permalink's text carries (its sources include the bursts injected
// on the page), read as a scenario file named "permalink" (errors read "permalink:3:7: …"; the
// caller validates it, as for a file): `ratelab run LINK` runs it to its horizon, the moment
// in the link does not change a run's result.
func LoadLink(link string) (*engine.Scenario, error) {
	text, _, err := DecodeLink(link)
	if err != nil {
		return nil, err
	}
	return scenarios.Load("permalink", []byte(text))
}
