package failsafego

import (
	"fmt"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
)

// virtualEpoch is the instant the library is told virtual time 0 is: a constant, never the
// wall clock, so a run decides the same every time. It is the instant a testing/synctest
// bubble starts at, so the library driven on its own clock in a bubble (the tests) and the
// library driven here read the same times.
var virtualEpoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// virtualClock is what a permit's clock field is set to: Now is the lane's time, as the
// limiter last heard it. The limiter's mutex guards t.
type virtualClock struct{ t time.Time }

// Now is the virtual time.
func (c *virtualClock) Now() time.Time { return c.t }

// layout is where the library keeps what reads the wall clock: a permit's clock (an
// interface with Now() time.Time) and startTime, and the limiter's nextUpdateTime.
type layout struct {
	clock, start int // field indexes in the permit's struct
	next         int // field index in the limiter's struct
}

var (
	theLayout    layout
	layoutOnce   sync.Once
	errLayout    error
	clockType    = reflect.TypeFor[*virtualClock]()
	timeType     = reflect.TypeFor[time.Time]()
	libraryNamed = "failsafe-go v0.9.8's adaptivelimiter"
)

// layoutOf finds the fields once, on a scratch limiter and permit, or says which is missing.
func layoutOf() (layout, error) {
	layoutOnce.Do(func() { theLayout, errLayout = findLayout() })
	return theLayout, errLayout
}

func findLayout() (layout, error) {
	lib := adaptivelimiter.NewBuilder[any]().Build()
	p, ok := lib.TryAcquirePermit()
	if !ok {
		return layout{}, fmt.Errorf("%s: a fresh limiter refused its first permit", libraryNamed)
	}
	defer p.Drop()
	var lay layout
	var err error
	pt := structOf(p)
	if lay.clock, err = field(pt, "permit", "clock", func(t reflect.Type) bool {
		return t.Kind() == reflect.Interface && clockType.Implements(t)
	}); err != nil {
		return layout{}, err
	}
	if lay.start, err = field(pt, "permit", "startTime", func(t reflect.Type) bool { return t == timeType }); err != nil {
		return layout{}, err
	}
	if lay.next, err = field(structOf(lib), "limiter", "nextUpdateTime", func(t reflect.Type) bool { return t == timeType }); err != nil {
		return layout{}, err
	}
	return lay, nil
}

// structOf is the struct type behind an interface holding a pointer.
func structOf(x any) reflect.Type {
	t := reflect.TypeOf(x)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func field(t reflect.Type, what, name string, ok func(reflect.Type) bool) (int, error) {
	if t.Kind() != reflect.Struct {
		return 0, fmt.Errorf("%s: its %s is a %s, not a struct: this version cannot be driven at virtual time", libraryNamed, what, t.Kind())
	}
	f, found := t.FieldByName(name)
	if !found || len(f.Index) != 1 || !ok(f.Type) {
		return 0, fmt.Errorf("%s: its %s has no field %s of the type ratelab sets (%s): this version cannot be driven at virtual time", libraryNamed, what, name, t)
	}
	return f.Index[0], nil
}

// set writes x into the unexported field i of the struct *ptr points to (a field whose type
// x's is assignable to: layoutOf checked).
func set(ptr any, i int, x reflect.Value) {
	f := reflect.ValueOf(ptr).Elem().Field(i)
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(x)
}

// setTime writes t into the unexported time.Time field i of the struct *ptr points to
// (layoutOf checked its type), without boxing t as reflect.ValueOf would: no allocation.
func setTime(ptr any, i int, t time.Time) {
	*(*time.Time)(unsafe.Pointer(reflect.ValueOf(ptr).Elem().Field(i).UnsafeAddr())) = t
}

// pin sets permit p's clock to c and its start to start.
func (lay layout) pin(p adaptivelimiter.Permit, c *virtualClock, start time.Time) {
	set(p, lay.clock, reflect.ValueOf(c))
	setTime(p, lay.start, start)
}

// startAt sets the limiter's first window to end at t (Build set it to the wall clock's now).
func (lay layout) startAt(lib adaptivelimiter.AdaptiveLimiter[any], t time.Time) {
	setTime(lib, lay.next, t)
}
