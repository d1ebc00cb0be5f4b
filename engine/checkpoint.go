package engine

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"time"
	"unsafe"
)

// Clone returns an independent copy of the lane as it is now: stepping either changes nothing
// in the other, and the copy decides exactly what the original would from here on (its
// limiters, arrival generators, client and downstream random streams, queues, recorder and
// key counters are copied, none shared). The TUI keeps clones as checkpoints, so that going
// back re-simulates from the nearest one instead of from 0 (one hour of the perf scenario is
// 36M steps; the TUI checkpoints every 65,536 of them, about 6.5 virtual seconds: tui/sim.go).
//
// The copy is made by walking the lane's values (reflect): every pointer, slice, map and
// interface is copied once, and two references to one value in the lane are two references to
// one value in the copy (a limiter's clock, laneClock{l}, points at the copy). The lane's Spec
// is shared (read only); OnEvent and OnDecide are the caller's to set on the copy (Clone
// leaves them nil). A
// lane that reads a trace file, or holds a channel or a function (which may close over the
// original's values), cannot be copied: ErrNotClonable.
func (l *Lane) Clone() (*Lane, error) {
	// The lane's configuration (Spec, with its Build function) is shared, not walked, and
	// OnEvent is not copied.
	spec, onEvent, onDecide := l.spec, l.OnEvent, l.OnDecide
	l.spec, l.OnEvent, l.OnDecide = LaneSpec{}, nil, nil
	defer func() { l.spec, l.OnEvent, l.OnDecide = spec, onEvent, onDecide }()
	c := cloner{seen: map[uintptr][]seenPtr{}}
	v := reflect.ValueOf(l)
	c.arrays(v, map[seenKey]bool{})
	sort.SliceStable(c.array, func(i, j int) bool { return c.array[i].start < c.array[j].start })
	out, err := c.value(v)
	if err != nil {
		return nil, err
	}
	cl := out.Interface().(*Lane)
	cl.spec = spec // its configuration, read only; OnEvent and OnDecide stay nil
	return cl, nil
}

// ErrNotClonable: the lane holds something Clone cannot copy (a trace file, a channel).
var ErrNotClonable = errors.New("engine: the lane cannot be copied")

// seenPtr is a pointer already copied: its type (two types can share an address, a struct
// and its first field) and its copy.
type seenPtr struct {
	t   reflect.Type
	out reflect.Value
}

type cloner struct {
	seen  map[uintptr][]seenPtr
	array []array // every slice's array in the lane, found before copying (arrays)
}

// array is a value some pointer or slice of the lane refers to: the whole array of a slice
// (full, from 0 to its capacity) or what a pointer points at (ptr). A pointer into one (the
// recorder's current bin, a peer library's state word inside its struct) points into its copy.
type array struct {
	full, ptr  reflect.Value
	start, end uintptr
	elem       reflect.Type
}

// outer is the largest value the lane refers to that holds [addr, addr+size), if any.
func (c *cloner) outer(addr, size uintptr) *array {
	// c.array is sorted by start: the candidates start at or before addr.
	i := sort.Search(len(c.array), func(i int) bool { return c.array[i].start > addr })
	var best *array
	for j := i - 1; j >= 0 && i-j <= 64; j-- {
		a := &c.array[j]
		if a.start <= addr && addr+size <= a.end && (best == nil || a.end-a.start > best.end-best.start) {
			best = a
		}
	}
	return best
}

type seenKey struct {
	addr uintptr
	t    reflect.Type
}

// arrays notes the array of every slice reachable from v, before anything is copied: a
// pointer met before the slice that holds what it points at must still point into the copy.
func (c *cloner) arrays(v reflect.Value, seen map[seenKey]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		k := seenKey{v.Pointer(), v.Type()}
		if seen[k] {
			return
		}
		seen[k] = true
		c.array = append(c.array, array{ptr: v, start: v.Pointer(), end: v.Pointer() + v.Type().Elem().Size(), elem: v.Type().Elem()})
		c.arrays(v.Elem(), seen)
	case reflect.Interface:
		if !v.IsNil() {
			c.arrays(v.Elem(), seen)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			c.arrays(v.Field(i), seen)
		}
	case reflect.Array:
		if !plain(v.Type().Elem()) {
			for i := range v.Len() {
				c.arrays(v.Index(i), seen)
			}
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		full := v.Slice3(0, v.Cap(), v.Cap())
		start := full.Index(0).Addr().Pointer()
		k := seenKey{start, v.Type()}
		if seen[k] {
			return
		}
		seen[k] = true
		size := v.Type().Elem().Size()
		c.array = append(c.array, array{full: full, start: start, end: start + uintptr(v.Cap())*size, elem: v.Type().Elem()})
		if !plain(v.Type().Elem()) {
			for i := range full.Len() {
				c.arrays(full.Index(i), seen)
			}
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		it := v.MapRange()
		for it.Next() {
			c.arrays(it.Key(), seen)
			c.arrays(it.Value(), seen)
		}
	}
}

var (
	fileType        = reflect.TypeOf(os.File{})
	traceStreamType = reflect.TypeOf(traceStream{})
)

// value returns a deep copy of v.
func (c *cloner) value(v reflect.Value) (reflect.Value, error) {
	out := reflect.New(v.Type()).Elem()
	if err := c.into(out, v); err != nil {
		return reflect.Value{}, err
	}
	return out, nil
}

// into writes a deep copy of v into dst, a settable value of v's type.
func (c *cloner) into(dst, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		p, err := c.pointer(v)
		if err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		e, err := c.value(v.Elem())
		if err != nil {
			return err
		}
		dst.Set(e)
	case reflect.Struct:
		if v.Type() == fileType || v.Type() == traceStreamType {
			return fmt.Errorf("%w: it reads a file", ErrNotClonable)
		}
		if !v.CanAddr() { // a struct held by an interface or a map: its fields need addresses
			a := reflect.New(v.Type()).Elem()
			a.Set(v)
			v = a
		}
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanInterface() || !dst.Field(i).CanSet() {
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			d := reflect.NewAt(f.Type(), unsafe.Pointer(dst.Field(i).UnsafeAddr())).Elem()
			if err := c.into(d, f); err != nil {
				return err
			}
		}
	case reflect.Array:
		if plain(v.Type().Elem()) {
			dst.Set(v)
			return nil
		}
		for i := range v.Len() {
			if err := c.into(dst.Index(i), v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Cap() == 0 {
			dst.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return nil
		}
		// Slices that start at one array share the copy of it, as they shared the original.
		n := v.Len()
		full := v.Slice3(0, v.Cap(), v.Cap())
		key := full.Index(0).Addr().Pointer()
		for _, s := range c.seen[key] {
			if s.t == v.Type() {
				dst.Set(s.out.Slice3(0, v.Len(), v.Cap()))
				return nil
			}
		}
		s := reflect.MakeSlice(v.Type(), v.Cap(), v.Cap())
		c.seen[key] = append(c.seen[key], seenPtr{t: v.Type(), out: s})
		v = full // the whole array: a later reslice of the copy reads what the original would
		if plain(v.Type().Elem()) {
			reflect.Copy(s, v)
		} else {
			for i := range v.Len() {
				if err := c.into(s.Index(i), v.Index(i)); err != nil {
					return err
				}
			}
		}
		dst.Set(s.Slice3(0, n, s.Cap()))
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			k, err := c.value(it.Key())
			if err != nil {
				return err
			}
			e, err := c.value(it.Value())
			if err != nil {
				return err
			}
			m.SetMapIndex(k, e)
		}
		dst.Set(m)
	case reflect.Chan:
		if !v.IsNil() {
			return fmt.Errorf("%w: it holds a channel", ErrNotClonable)
		}
	case reflect.Func:
		// A function may close over the lane's values (a peer library's clock reading the
		// lane's time): shared, the copy would read the original's. The lane's own (Spec's
		// Build, OnEvent) are not walked.
		if !v.IsNil() {
			return fmt.Errorf("%w: it holds a function (%s)", ErrNotClonable, v.Type())
		}
	case reflect.UnsafePointer:
		if v.Pointer() != 0 {
			return fmt.Errorf("%w: it holds an unsafe pointer", ErrNotClonable)
		}
	default: // numbers, strings, bools, functions (shared)
		dst.Set(v)
	}
	return nil
}

// pointer copies what v points at, once: a second pointer to it gets the same copy.
func (c *cloner) pointer(v reflect.Value) (reflect.Value, error) {
	addr := v.Pointer()
	for _, s := range c.seen[addr] {
		if s.t == v.Type() {
			return s.out, nil
		}
	}
	if a := c.outer(addr, v.Type().Elem().Size()); a != nil && !(a.ptr.IsValid() && a.start == addr && a.elem == v.Type().Elem()) {
		// Inside a larger value: a pointer into its copy.
		var base unsafe.Pointer
		if a.full.IsValid() {
			cp := reflect.New(a.full.Type()).Elem()
			if err := c.into(cp, a.full); err != nil {
				return reflect.Value{}, err
			}
			base = cp.Index(0).Addr().UnsafePointer()
		} else {
			cp, err := c.pointer(a.ptr)
			if err != nil {
				return reflect.Value{}, err
			}
			base = cp.UnsafePointer()
		}
		p := reflect.NewAt(v.Type().Elem(), unsafe.Add(base, addr-a.start))
		c.seen[addr] = append(c.seen[addr], seenPtr{t: v.Type(), out: p})
		return p, nil
	}
	p := reflect.New(v.Type().Elem())
	c.seen[addr] = append(c.seen[addr], seenPtr{t: v.Type(), out: p})
	if err := c.into(p.Elem(), v.Elem()); err != nil {
		return reflect.Value{}, err
	}
	return p, nil
}

// plain reports whether values of t hold no pointers, so copying their bytes copies them.
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !plain(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// Checkpoint is a lane frozen at an instant (Lane.Checkpoint), to make lanes from that go on
// from there (Restore). It holds what can still change: the lane's state and its recorder's
// current bin, not the closed bins before it (a 1,000-bin lane's are 160 kB of its ~200):
// Restore takes those from a lane of the same run that has gone at least as far, where they
// are final.
type Checkpoint struct {
	lane *Lane // a clone without bins
	bin  int   // the current bin then
	cur  Bin   // its counts then (its own Available)
}

// Checkpoint freezes the lane as it is now (see Checkpoint; Clone says what cannot be).
func (l *Lane) Checkpoint() (*Checkpoint, error) {
	bins, cur := l.rec.result.Bins, l.rec.cur
	l.rec.result.Bins, l.rec.cur = nil, nil
	cl, err := l.Clone()
	l.rec.result.Bins, l.rec.cur = bins, cur
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{lane: cl, bin: l.rec.bin}
	if c.bin < len(bins) {
		c.cur = bins[c.bin]
		c.cur.Available = slices.Clone(c.cur.Available)
	}
	return c, nil
}

// Restore makes a lane as the checkpoint's was, to go on from there; later is a lane of the
// same run (the same scenario and lane, never edited) at or past the checkpoint's instant,
// whose closed bins before it are copied. Each Restore is a new lane: a checkpoint restores
// any number of times.
func (c *Checkpoint) Restore(later *Lane) (*Lane, error) {
	l, err := c.lane.Clone()
	if err != nil {
		return nil, err
	}
	from := later.rec.result.Bins
	if later.rec.bin < c.bin && later.rec.cur != nil {
		return nil, fmt.Errorf("engine: restore: the lane given is at bin %d, before the checkpoint's %d", later.rec.bin, c.bin)
	}
	stages := 0
	if len(from) > 0 {
		stages = len(from[0].Available)
	}
	bins := make([]Bin, len(from))
	available := make([]int, len(from)*stages)
	for b := range bins {
		switch {
		case b < c.bin:
			bins[b] = from[b]
		case b == c.bin:
			bins[b] = c.cur
		default:
			bins[b].Start = time.Duration(int64(b) * l.rec.binWidth)
		}
		own := available[b*stages : (b+1)*stages : (b+1)*stages]
		copy(own, bins[b].Available)
		bins[b].Available = own
	}
	l.rec.result.Bins = bins
	l.rec.cur = nil
	if c.bin < len(bins) {
		l.rec.cur = &bins[c.bin]
	}
	return l, nil
}
