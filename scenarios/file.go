package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratelab/ratelab/internal/wording"

	"go.yaml.in/yaml/v3"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// FileError is a problem in a scenario file, located to the line and column:
// "my.yaml:12:9: sources[0].rate: must be positive".
type FileError struct {
	File   string
	Line   int
	Column int
	Field  string
	Reason string
}

func (e *FileError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Reason)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Field, e.Reason)
}

// MaxFileSize is the largest scenario file LoadFile and Load read: 16 MiB, far beyond any
// hand-written scenario (a script of a hundred thousand arrivals is about 3 MiB), so that a
// wrong path (a log, a disk image) is refused at once instead of parsed into memory.
const MaxFileSize = 16 << 20

// MaxAliasNodes is how many nodes YAML aliases (*name, and merge keys <<: *name) may add to a
// scenario once expanded: aliases are resolved, but a document whose aliases nest into
// billions of nodes (an "alias bomb") is refused in time and memory linear in its size.
const MaxAliasNodes = 100_000

// LoadFile reads a YAML scenario file (see README, "Scenario files"). Relative trace paths are
// taken relative to the file's folder. Only a regular file of at most MaxFileSize bytes is
// read: a directory, a FIFO or a device is refused before it is opened.
func LoadFile(path string) (*engine.Scenario, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regularFile(path, info); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have been replaced between the two looks: check what was opened.
	if info, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regularFile(path, info); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	return load(path, data, true)
}

// regularFile refuses, naming path, what is not a regular file or is larger than MaxFileSize.
func regularFile(path string, info os.FileInfo) error {
	if err := CheckFileKind(path, info); err != nil {
		return err
	}
	if info.Size() > MaxFileSize {
		return tooLarge(path, info.Size())
	}
	return nil
}

// CheckFileKind refuses, naming path, what is not a regular file: a directory, a FIFO, a
// device, a socket. Every way a scenario file is named (path.yaml, or a path of any other
// name, which ratelab reads to see whether it is a scenario file) is checked by it before it
// is opened: opening a FIFO waits for a writer, and a device (/dev/zero) never ends. A
// scenario from a pipe comes on standard input (-).
func CheckFileKind(path string, info os.FileInfo) error {
	mode := info.Mode()
	switch {
	case mode.IsDir():
		return fmt.Errorf("%s: is a directory, not a scenario file", path)
	case mode&os.ModeNamedPipe != 0:
		return fmt.Errorf("%s: is a FIFO (named pipe), not a scenario file: only regular files are read", path)
	case mode&os.ModeSocket != 0:
		return fmt.Errorf("%s: is a socket, not a scenario file: only regular files are read", path)
	case mode&os.ModeDevice != 0:
		return fmt.Errorf("%s: is a device, not a scenario file: only regular files are read", path)
	case !mode.IsRegular():
		return fmt.Errorf("%s: is not a regular file (%v): only regular files are read", path, mode.Type())
	}
	return nil
}

func tooLarge(name string, size int64) error {
	return fmt.Errorf("%s: is %d bytes: a scenario file may hold at most %d (16 MiB)", name, size, MaxFileSize)
}

// Load reads a YAML scenario; name is used in error messages and to resolve trace paths.
// Unknown fields, wrong types and bad values are errors naming file, line, column and field;
// the scenario is then validated as a whole, and its errors point at the offending field too.
// The text must be one YAML document of at most MaxFileSize bytes; aliases are resolved
// (adding at most MaxAliasNodes nodes).
func Load(name string, data []byte) (*engine.Scenario, error) { return load(name, data, false) }

// load is Load; onDisk says that name is the file's real path, so that a trace it names and
// that is missing is refused where the file names it (text from elsewhere may name files
// relative to a folder that is not there: the run says so).
func load(name string, data []byte, onDisk bool) (*engine.Scenario, error) {
	if len(data) > MaxFileSize {
		return nil, tooLarge(name, int64(len(data)))
	}
	doc, err := parse(name, data)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: name, dir: filepath.Dir(name), where: map[string]*yaml.Node{}, onDisk: onDisk}
	sc := &engine.Scenario{Seed: 1, Client: engine.Client{Policy: engine.PolicyDrop}}
	if err := d.scenario(doc.Content[0], sc); err != nil {
		return nil, err
	}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	// A fault past the file's own horizon is a mistake in the file; Validate leaves it to
	// ValidateFaultTimes, so that --horizon may end a run before a fault (see engine.Fault).
	for _, check := range []func() error{sc.Validate, sc.ValidateFaultTimes} {
		if err := check(); err != nil {
			var fe *engine.FieldError
			if errors.As(err, &fe) {
				n := d.locate(fe.Field, doc.Content[0])
				return nil, &FileError{File: name, Line: n.Line, Column: n.Column, Field: fe.Field, Reason: fe.Reason}
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return sc, nil
}

// parse reads the file's one YAML document and resolves its aliases. A second document is
// refused where it starts (yaml.Unmarshal would silently ignore it); empty documents (a
// trailing "---") are harmless.
func parse(name string, data []byte) (*yaml.Node, error) {
	if err := checkUTF8(name, data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FileError{File: name, Line: 1, Column: 1, Reason: "the file is empty"}
		}
		return nil, yamlSyntaxError(name, data, err)
	}
	if len(doc.Content) == 0 {
		return nil, &FileError{File: name, Line: 1, Column: 1, Reason: "the file is empty"}
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlSyntaxError(name, data, err)
		}
		if !emptyDocument(&next) {
			return nil, &FileError{File: name, Line: next.Line, Column: next.Column,
				Reason: "a second YAML document starts here: a scenario file holds one document (remove this \"---\" and what follows, or split the file)"}
		}
	}
	x := &expander{file: name, resolved: map[*yaml.Node]int{}, active: map[*yaml.Node]bool{}, budget: MaxAliasNodes}
	root, _, err := x.resolve(doc.Content[0])
	if err != nil {
		return nil, err
	}
	doc.Content[0] = root
	return &doc, nil
}

// emptyDocument is a document with nothing in it: "---" followed by nothing but comments.
func emptyDocument(doc *yaml.Node) bool {
	for _, n := range doc.Content {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!null" || n.Value != "" || n.Style != 0 {
			return false
		}
	}
	return true
}

// expander resolves a document's aliases in place: an alias node is replaced by the node it
// names (shared, not copied: the decoder only reads), and a mapping's merge keys (<<: *base
// or <<: [*a, *b]) by the merged fields, keys written in the mapping overriding merged ones
// and earlier merged mappings overriding later ones, as YAML specifies. Each alias is
// charged the size of what it names, as a tree; the document is refused once the charges pass
// MaxAliasNodes, so the decoder never walks more than the file's nodes plus MaxAliasNodes,
// however the aliases nest.
type expander struct {
	file     string
	resolved map[*yaml.Node]int  // anchored nodes already resolved → their size as a tree
	active   map[*yaml.Node]bool // anchored nodes being resolved: an alias to one is a cycle
	budget   int                 // nodes aliases may still add
}

func (x *expander) fail(n *yaml.Node, format string, args ...any) error {
	return &FileError{File: x.file, Line: n.Line, Column: n.Column, Reason: fmt.Sprintf(format, args...)}
}

// resolve returns n with its aliases resolved, and its size as a tree (an upper bound when it
// merged mappings).
func (x *expander) resolve(n *yaml.Node) (*yaml.Node, int, error) {
	if n.Kind == yaml.AliasNode {
		target := n.Alias
		if target == nil {
			return nil, 0, x.fail(n, "alias *%s names no anchor", n.Value)
		}
		if x.active[target] {
			return nil, 0, x.fail(n, "alias *%s is inside the node it names: it would expand forever", n.Value)
		}
		resolved, size, err := x.resolve(target)
		if err != nil {
			return nil, 0, err
		}
		if x.budget -= size; x.budget < 0 {
			return nil, 0, x.fail(n, "alias *%s: the document's aliases expand to more than %d nodes (an alias bomb?)", n.Value, MaxAliasNodes)
		}
		return resolved, size, nil
	}
	if n.Anchor != "" {
		if size, ok := x.resolved[n]; ok {
			return n, size, nil
		}
		x.active[n] = true
		defer delete(x.active, n)
	}
	size := 1
	for i, c := range n.Content {
		r, s, err := x.resolve(c)
		if err != nil {
			return nil, 0, err
		}
		n.Content[i] = r
		size = min(size+s, math.MaxInt32) // the budget stops the document long before
	}
	if n.Kind == yaml.MappingNode {
		if err := x.merge(n); err != nil {
			return nil, 0, err
		}
	}
	if n.Anchor != "" {
		x.resolved[n] = size
	}
	return n, size, nil
}

func isMerge(key *yaml.Node) bool { return key.Kind == yaml.ScalarNode && key.ShortTag() == "!!merge" }

// merge replaces a resolved mapping's merge keys by the fields they merge.
func (x *expander) merge(n *yaml.Node) error {
	explicit := map[string]bool{}
	merges := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMerge(n.Content[i]) {
			merges = true
		} else {
			explicit[n.Content[i].Value] = true
		}
	}
	if !merges {
		return nil
	}
	merged := map[string]bool{}
	content := make([]*yaml.Node, 0, len(n.Content))
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if !isMerge(key) {
			content = append(content, key, value)
			continue
		}
		sources := []*yaml.Node{value}
		if value.Kind == yaml.SequenceNode {
			sources = value.Content
		}
		for _, m := range sources {
			if m.Kind != yaml.MappingNode {
				return x.fail(m, "<<: expected a mapping or a list of mappings to merge, got %s", describe(m))
			}
			for j := 0; j+1 < len(m.Content); j += 2 {
				k := m.Content[j].Value
				if explicit[k] || merged[k] {
					continue
				}
				merged[k] = true
				content = append(content, m.Content[j], m.Content[j+1])
			}
		}
	}
	n.Content = content
	return nil
}

// checkUTF8 refuses a file that is not UTF-8 text at its first bad byte, by line and column
// (counted in characters, as yaml counts them), where yaml says only "invalid leading UTF-8
// octet" about the whole file. A file that opens with a UTF-16 byte-order mark is yaml's to
// read.
func checkUTF8(name string, data []byte) error {
	if bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || utf8.Valid(data) {
		return nil
	}
	line, column := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return &FileError{File: name, Line: line, Column: column,
				Reason: fmt.Sprintf("byte 0x%02x is not UTF-8 text, which a scenario file must be: save the file as UTF-8 (in a double-quoted string, \\u00ff writes ÿ)", data[i])}
		}
		if r == '\n' {
			line, column = line+1, 0
		}
		i += size
		column++
	}
	return nil
}

func yamlSyntaxError(name string, data []byte, err error) error {
	msg := err.Error()
	// yaml.v3 says "yaml: line 3: mapping values are not allowed in this context". Its line
	// is often not the offending one: for parser errors it is the 0-based line of the
	// enclosing construct.
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, reason, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, reason
			}
		}
	}
	return &FileError{File: name, Line: firstBadLine(data, line), Column: 1, Reason: msg}
}

// reparseBudget is how many bytes firstBadLine may parse again, twice over (once searching
// from the end, once checking yaml's own line), looking for the line where the file stops
// being YAML: refusing a broken file of any size costs one parse and at most 1 MB more,
// never one parse per line.
const reparseBudget = 512 << 10

// reparse parses a prefix of the file; a variable so that a test can count the work.
var reparse = func(prefix []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(prefix))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// firstBadLine is the line the document stops being YAML: one past the longest prefix of
// whole lines that still parses, searched from the end within reparseBudget. When the
// search cannot afford to reach it, the line is yaml's own, hint: for a parser error that
// is the 0-based line of the enclosing construct (an unclosed "["), for a scanner error
// the 1-based line of the problem, so it is taken as the next line when the lines before
// it parse (checked when they fit in reparseBudget) and as is otherwise.
func firstBadLine(data []byte, hint int) int {
	starts := []int{0} // starts[j]: the length of the prefix of j whole lines
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	budget := reparseBudget
	for j := len(starts) - 1; j >= 0 && starts[j] <= budget; j-- {
		budget -= starts[j]
		if reparse(data[:starts[j]]) == nil {
			return j + 1
		}
	}
	if hint < 1 {
		return 1
	}
	if hint < len(starts) && starts[hint] <= reparseBudget && reparse(data[:starts[hint]]) == nil {
		return hint + 1
	}
	return min(hint, len(starts))
}

// decoder walks the YAML tree by hand so that every error knows its node's position, and
// remembers where each field was so that the scenario's own validation can point there too.
type decoder struct {
	file  string
	dir   string
	where map[string]*yaml.Node // field path → the node of its value
	// onDisk: file is the real path of the file (LoadFile), so the files it names are
	// checked against the folder it is in.
	onDisk bool
}

func (d *decoder) fail(n *yaml.Node, field, format string, args ...any) error {
	return &FileError{File: d.file, Line: n.Line, Column: n.Column, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// traceFile refuses, where the file names it, a trace that is not a regular file: every lane opens the trace and reads it from its start, so a FIFO or a device (read
// once) would give the first lane its rows and leave the next waiting for a writer forever.
func (d *decoder) traceFile(n *yaml.Node, field, path string) error {
	if path == "" {
		return nil
	}
	info, err := os.Stat(path)
	switch {
	case err != nil && d.onDisk:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return d.fail(n, field, "%s: %v", path, err)
	case err != nil:
		return nil // text from elsewhere (Load): the run says what is missing
	case info.IsDir():
		return d.fail(n, field, "%s: is a directory, not a trace", path)
	case !info.Mode().IsRegular():
		return d.fail(n, field, "%s: is %s: every lane reads the trace from its start, so only a regular file is read (a pipe's or a device's data is read once)",
			path, describeFileMode(info.Mode()))
	}
	return nil
}

func describeFileMode(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return fmt.Sprintf("not a regular file (%v)", m.Type())
}

// locate finds the node of path, or of its longest known prefix.
func (d *decoder) locate(path string, root *yaml.Node) *yaml.Node {
	for p := path; p != ""; {
		if n, ok := d.where[p]; ok {
			return n
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return root
}

type fieldFunc func(n *yaml.Node, path string) error

// mapping decodes a mapping node whose keys must be among fields.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]fieldFunc) error {
	if n.Kind != yaml.MappingNode {
		return d.fail(n, path, "expected a mapping of fields, got %s", describe(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		field := key.Value
		if path != "" {
			field = path + "." + key.Value
		}
		fn, ok := fields[key.Value]
		if !ok {
			names := strings.Split(knownFields(fields), ", ")
			return d.fail(key, field, "unknown field%s (known: %s)", wording.DidYouMean(key.Value, names), knownFields(fields))
		}
		if seen[key.Value] {
			return d.fail(key, field, "given twice")
		}
		seen[key.Value] = true
		d.where[field] = value
		if err := fn(value, field); err != nil {
			return err
		}
	}
	return nil
}

func knownFields(fields map[string]fieldFunc) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

func (d *decoder) sequence(n *yaml.Node, path string, each func(n *yaml.Node, path string) error) error {
	if n.Kind != yaml.SequenceNode {
		return d.fail(n, path, "expected a list, got %s", describe(n))
	}
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.where[p] = item
		if err := each(item, p); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) scalar(n *yaml.Node, path, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.fail(n, path, "expected %s, got %s", what, describe(n))
	}
	return n.Value, nil
}

func (d *decoder) str(dst *string) fieldFunc {
	return func(n *yaml.Node, path string) (err error) {
		*dst, err = d.scalar(n, path, "a string")
		return err
	}
}

func (d *decoder) integer(dst *int) fieldFunc {
	return func(n *yaml.Node, path string) error {
		v, err := d.scalar(n, path, "a whole number")
		if err != nil {
			return err
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return d.fail(n, path, "expected a whole number, got %q", v)
		}
		*dst = i
		return nil
	}
}

// seed reads a seed as ParseSeed does: decimal digits.
func (d *decoder) seed(dst *uint64) fieldFunc {
	return func(n *yaml.Node, path string) error {
		v, err := d.scalar(n, path, "a whole number")
		if err != nil {
			return err
		}
		seed, err := ParseSeed(v)
		if err != nil {
			return d.fail(n, path, "%q: %v", v, err)
		}
		*dst = seed
		return nil
	}
}

func (d *decoder) number(dst *float64) fieldFunc {
	return func(n *yaml.Node, path string) error {
		v, err := d.scalar(n, path, "a number")
		if err != nil {
			return err
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return d.fail(n, path, "expected a number, got %q", v)
		}
		*dst = f
		return nil
	}
}

func (d *decoder) boolean(dst *bool) fieldFunc {
	return func(n *yaml.Node, path string) error {
		v, err := d.scalar(n, path, "true or false")
		if err != nil {
			return err
		}
		switch v {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			return d.fail(n, path, "expected true or false, got %q", v)
		}
		return nil
	}
}

func (d *decoder) duration(dst *time.Duration) fieldFunc {
	return func(n *yaml.Node, path string) error {
		v, err := d.scalar(n, path, "a duration")
		if err != nil {
			return err
		}
		t, err := time.ParseDuration(v)
		if err != nil {
			if v == "0" {
				t = 0
			} else {
				return d.fail(n, path, "expected a duration such as 10s, 250ms or 1m30s, got %q", v)
			}
		}
		*dst = t
		return nil
	}
}

func (d *decoder) scenario(n *yaml.Node, sc *engine.Scenario) error {
	return d.mapping(n, "", map[string]fieldFunc{
		"name": d.str(&sc.Name),
		"description": func(n *yaml.Node, path string) error {
			err := d.str(&sc.Description)(n, path)
			sc.Description = strings.TrimSpace(sc.Description) // a folded block (>) ends in a newline
			return err
		},
		"seed":    d.seed(&sc.Seed),
		"horizon": d.duration(&sc.Horizon),
		"bins":    d.integer(&sc.Bins),
		"trace":   d.boolean(&sc.Trace),
		"windows": func(n *yaml.Node, path string) error {
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				var w time.Duration
				if err := d.duration(&w)(n, path); err != nil {
					return err
				}
				sc.Windows = append(sc.Windows, w)
				return nil
			})
		},
		"sources": func(n *yaml.Node, path string) error {
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				var src engine.Source
				if err := d.source(n, path, &src); err != nil {
					return err
				}
				sc.Sources = append(sc.Sources, src)
				return nil
			})
		},
		"client": func(n *yaml.Node, path string) error { return d.client(n, path, &sc.Client) },
		"limiters": func(n *yaml.Node, path string) error {
			if n.Kind == yaml.SequenceNode && n.Style&yaml.FlowStyle != 0 {
				// [token-bucket:capacity=20,rate=100/1s] is two items to YAML, split at the
				// comma: say so where the second begins, not "rate=: missing" of the first.
				for i, item := range n.Content {
					if i > 0 && item.Kind == yaml.ScalarNode && item.Style == 0 && strings.Contains(item.Value, "=") && !strings.Contains(item.Value, ":") {
						return d.fail(item, fmt.Sprintf("%s[%d]", path, i), "%q looks like the rest of the spec before it: in a flow list [a, b] YAML splits at every comma; quote each spec "+
							"([\"%s,%s\"]) or write one per line (- %s,%s)", item.Value, n.Content[i-1].Value, item.Value, n.Content[i-1].Value, item.Value)
					}
				}
			}
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				lane, err := d.lane(n, path)
				if err != nil {
					return err
				}
				sc.Lanes = append(sc.Lanes, lane)
				return nil
			})
		},
		"downstream": func(n *yaml.Node, path string) error {
			sc.Downstream = &engine.Downstream{}
			return d.downstream(n, path, sc.Downstream)
		},
		"fleet": func(n *yaml.Node, path string) error {
			sc.Fleet = &engine.Fleet{}
			return d.fleet(n, path, sc.Fleet)
		},
		"faults": func(n *yaml.Node, path string) error {
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				var f engine.Fault
				if err := d.fault(n, path, &f); err != nil {
					return err
				}
				sc.Faults = append(sc.Faults, f)
				return nil
			})
		},
	})
}

func (d *decoder) source(n *yaml.Node, path string, src *engine.Source) error {
	var kind string
	err := d.mapping(n, path, map[string]fieldFunc{
		"kind":      d.str(&kind),
		"rate":      d.number(&src.Rate),
		"rate_to":   d.number(&src.RateTo),
		"from":      d.duration(&src.From),
		"until":     d.duration(&src.Until),
		"poisson":   d.boolean(&src.Poisson),
		"on":        d.duration(&src.On),
		"off":       d.duration(&src.Off),
		"amplitude": d.number(&src.Amplitude),
		"period":    d.duration(&src.Period),
		"permits":   d.integer(&src.Permits),
		"key":       d.str(&src.Key),
		"class":     d.str(&src.Class),
		"keys": func(n *yaml.Node, path string) error {
			src.Keys = &engine.KeyPopulation{}
			var kind string
			err := d.mapping(n, path, map[string]fieldFunc{
				"kind": d.str(&kind), "clients": d.integer(&src.Keys.Clients), "exponent": d.number(&src.Keys.Exponent),
				"share": d.number(&src.Keys.Share), "prefix": d.str(&src.Keys.Prefix), "noisy": d.str(&src.Keys.Noisy),
			})
			if err == nil && kind == "" {
				return d.fail(n, path+".kind", "missing (uniform, zipf, noisy-neighbour, cycle)")
			}
			src.Keys.Kind = engine.PopulationKind(kind)
			return err
		},
		"file": func(n *yaml.Node, path string) error {
			if err := d.str(&src.TraceFile)(n, path); err != nil {
				return err
			}
			if src.TraceFile != "" && !filepath.IsAbs(src.TraceFile) {
				src.TraceFile = filepath.Join(d.dir, src.TraceFile)
			}
			return d.traceFile(n, path, src.TraceFile)
		},
		"data": d.str(&src.TraceData), // a trace's CSV inline (what show writes for a built-in's)
		// How an access log given as file is read (accesslog.Options): its format, the
		// fields of a JSON log, the field keying its requests.
		"log_format": func(n *yaml.Node, path string) error {
			if err := d.str(&src.Log.Format)(n, path); err != nil {
				return err
			}
			if err := (accesslog.Options{Format: src.Log.Format}).Check(); err != nil {
				return d.fail(n, path, "%v", strings.TrimPrefix(err.Error(), "--log-format "))
			}
			return nil
		},
		"log_fields": d.str(&src.Log.Fields),
		"log_key":    d.str(&src.Log.Key),
		"bursts": func(n *yaml.Node, path string) error {
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				var b engine.Burst
				err := d.mapping(n, path, map[string]fieldFunc{
					"at": d.duration(&b.At), "count": d.integer(&b.Count), "spread": d.duration(&b.Spread),
				})
				src.Bursts = append(src.Bursts, b)
				return err
			})
		},
		"arrivals": func(n *yaml.Node, path string) error {
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				var a engine.Arrival
				err := d.mapping(n, path, map[string]fieldFunc{
					"at": d.duration(&a.At), "permits": d.integer(&a.Permits), "key": d.str(&a.Key),
				})
				src.Script = append(src.Script, a)
				return err
			})
		},
	})
	if err != nil {
		return err
	}
	if kind == "" {
		return d.fail(n, path+".kind", "missing (constant, poisson, bursts, on-off, ramp, sine, script, trace)")
	}
	src.Kind = engine.SourceKind(kind)
	return nil
}

func (d *decoder) client(n *yaml.Node, path string, c *engine.Client) error {
	*c = engine.Client{}
	var policy, discipline string
	err := d.mapping(n, path, map[string]fieldFunc{
		"policy":       d.str(&policy),
		"discipline":   d.str(&discipline),
		"delay":        d.duration(&c.Delay),
		"max_delay":    d.duration(&c.MaxDelay),
		"jitter":       d.boolean(&c.Jitter),
		"max_attempts": d.integer(&c.MaxAttempts),
		"queue_size":   d.integer(&c.QueueSize),
		"timeout":      d.duration(&c.Timeout),
		"retry_quota":  d.retryQuota(&c.RetryQuota),
		"max_elapsed":  d.duration(&c.MaxElapsed),
		"group":        d.str(&c.Group),
	})
	if err != nil {
		return err
	}
	if policy == "" {
		return d.fail(n, path+".policy", "missing (%s)", engine.PolicyNames())
	}
	c.Policy = engine.Policy(policy)
	c.Discipline = engine.QueueDiscipline(discipline)
	return nil
}

// retryQuota reads aws-standard's retry_quota: a whole number of tokens, at least 1, or
// none (no quota).
func (d *decoder) retryQuota(dst *int) fieldFunc {
	return func(n *yaml.Node, path string) error {
		v, err := d.scalar(n, path, "a whole number of tokens or none")
		if err != nil {
			return err
		}
		if v == "none" {
			*dst = engine.NoRetryQuota
			return nil
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 1 {
			return d.fail(n, path, "expected a whole number of tokens, at least 1, or none, got %q", v)
		}
		*dst = i
		return nil
	}
}

// lane reads either a spec string or a mapping {spec, name, client, refund, max_wait, keys}.
// keys: {max, evict, shards} keys every stage the spec does not key itself.
func (d *decoder) lane(n *yaml.Node, path string) (engine.LaneSpec, error) {
	var lane engine.LaneSpec
	var text string
	var keys *limiters.KeyedConfig
	var keysNode *yaml.Node
	specNode := n
	if n.Kind == yaml.ScalarNode {
		text = n.Value
	} else {
		err := d.mapping(n, path, map[string]fieldFunc{
			"spec": func(v *yaml.Node, p string) error { specNode = v; return d.str(&text)(v, p) },
			"name": d.str(&lane.Name),
			"client": func(v *yaml.Node, p string) error {
				lane.Client = &engine.Client{}
				return d.client(v, p, lane.Client)
			},
			"max_wait": d.duration(&lane.MaxWait),
			"fleet": func(v *yaml.Node, p string) error {
				lane.Fleet = &engine.LaneFleet{}
				return d.laneFleet(v, p, lane.Fleet)
			},
			"keys": func(v *yaml.Node, p string) error {
				keys, keysNode = &limiters.KeyedConfig{}, v
				var evict string
				err := d.mapping(v, p, map[string]fieldFunc{
					"max": d.integer(&keys.MaxKeys), "shards": d.integer(&keys.Shards),
					"evict": func(e *yaml.Node, p string) error {
						if err := d.str(&evict)(e, p); err != nil {
							return err
						}
						if evict == "" { // the zero Evict is lru, but an empty evict: is a slip
							return d.fail(e, p, "empty: must be lru, fresh or nginx (or leave evict out for lru)")
						}
						return nil
					},
				})
				keys.Evict = limiters.Evict(evict)
				return err
			},
			"refund": func(v *yaml.Node, p string) error {
				refund := true
				if err := d.boolean(&refund)(v, p); err != nil {
					return err
				}
				lane.Waste = !refund
				return nil
			},
		})
		if err != nil {
			return lane, err
		}
		if text == "" {
			return lane, d.fail(n, path+".spec", "missing, e.g. token-bucket:capacity=3,rate=100/1s")
		}
	}
	stack, err := engine.ParseStack(text)
	if err != nil {
		var se *limiters.SpecError
		if errors.As(err, &se) {
			return lane, d.fail(specNode, path, "%s", se.Error())
		}
		return lane, d.fail(specNode, path, "%v", err)
	}
	if keys != nil {
		if err := keys.Validate(); err != nil {
			var ce *limiters.ConfigError
			if errors.As(err, &ce) {
				field := path + ".keys." + ce.Field
				at := keysNode
				if v, ok := d.where[field]; ok {
					at = v
				}
				return lane, d.fail(at, field, "%s", ce.Reason)
			}
			return lane, d.fail(keysNode, path+".keys", "%v", err)
		}
		for i, spec := range stack {
			if _, keyed := spec.(limiters.KeyedSpec); !keyed {
				stack[i] = limiters.KeyedSpec{Spec: spec, Keys: *keys}
			}
		}
	}
	for i, spec := range stack {
		if err := spec.Validate(); err != nil {
			return lane, d.fail(specNode, path, "stage %d: %v", i+1, err)
		}
	}
	lane.Stack = stack
	return lane, nil
}

func (d *decoder) downstream(n *yaml.Node, path string, ds *engine.Downstream) error {
	var single *engine.Distribution
	err := d.mapping(n, path, map[string]fieldFunc{
		"pool": d.integer(&ds.Pool),
		"server": func(n *yaml.Node, path string) error {
			ds.Server = &engine.Server{}
			var discipline, from string
			err := d.mapping(n, path, map[string]fieldFunc{
				"cores":        d.integer(&ds.Server.Cores),
				"discipline":   d.str(&discipline),
				"network":      d.duration(&ds.Server.Network),
				"timeout":      d.duration(&ds.Server.Timeout),
				"timeout_from": d.str(&from),
			})
			ds.Server.Discipline = engine.Discipline(discipline)
			ds.Server.TimeoutFrom = engine.TimeoutFrom(from)
			if err == nil && ds.Server.Cores == 0 && d.where[path+".cores"] == nil {
				return d.fail(n, path+".cores", "missing: how many cores serve the requests (e.g. cores: 4)")
			}
			return err
		},
		"service": func(n *yaml.Node, path string) error {
			single = &engine.Distribution{}
			return d.distribution(n, path, single)
		},
		"phases": func(n *yaml.Node, path string) error {
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				var p engine.Phase
				err := d.mapping(n, path, map[string]fieldFunc{
					"from":       d.duration(&p.From),
					"service":    func(n *yaml.Node, path string) error { return d.distribution(n, path, &p.Service) },
					"cores":      d.integer(&p.Cores),
					"black_hole": d.boolean(&p.BlackHole),
					"errors":     d.number(&p.Errors),
				})
				ds.Phases = append(ds.Phases, p)
				return err
			})
		},
	})
	if err != nil {
		return err
	}
	if single != nil {
		if len(ds.Phases) > 0 {
			return d.fail(n, path+".service", "give either service (one distribution) or phases, not both")
		}
		ds.Phases = []engine.Phase{{Service: *single}}
		// Validation names phases[0]; point its fields at what the file wrote under service.
		from, to := path+".service", path+".phases[0].service"
		for field, n := range d.where {
			if field == from || strings.HasPrefix(field, from+".") {
				d.where[to+strings.TrimPrefix(field, from)] = n
			}
		}
	}
	return nil
}

func (d *decoder) distribution(n *yaml.Node, path string, dist *engine.Distribution) error {
	var kind string
	err := d.mapping(n, path, map[string]fieldFunc{
		"kind":   d.str(&kind),
		"mean":   d.duration(&dist.Mean),
		"median": d.duration(&dist.Mean),
		"min":    d.duration(&dist.Min),
		"max":    d.duration(&dist.Max),
		"sigma":  d.number(&dist.Sigma),
	})
	if err != nil {
		return err
	}
	if kind == "" {
		return d.fail(n, path+".kind", "missing (constant, uniform, exponential, lognormal)")
	}
	// mean and median are one field (the lognormal's median); validation names either.
	if v, ok := d.where[path+".mean"]; ok {
		d.where[path+".median"] = v
	} else if v, ok := d.where[path+".median"]; ok {
		d.where[path+".mean"] = v
	}
	dist.Kind = engine.DistKind(kind)
	return nil
}
