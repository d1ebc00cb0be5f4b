package limiters_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"

	"github.com/stretchr/testify/require"
)

// zeroValueTypes is every exported type of the package with methods, by name: the walk below
// calls each method of each one's zero value. TestZeroValueTableIsComplete keeps the list
// whole, so that a new exported type is walked without anyone remembering to add it.
var zeroValueTypes = map[string]reflect.Type{
	"TokenBucket": reflect.TypeFor[limiters.TokenBucket](), "LeakyBucket": reflect.TypeFor[limiters.LeakyBucket](),
	"SlidingWindow": reflect.TypeFor[limiters.SlidingWindow](), "FixedWindow": reflect.TypeFor[limiters.FixedWindow](),
	"WarmUpTokenBucket": reflect.TypeFor[limiters.WarmUpTokenBucket](), "Concurrency": reflect.TypeFor[limiters.Concurrency](),
	"Flash5Fixed": reflect.TypeFor[peers.Flash5Fixed](), "Flash5Token": reflect.TypeFor[peers.Flash5Token](),
	"XTimeRate": reflect.TypeFor[peers.XTimeRate](), "Uber": reflect.TypeFor[peers.Uber](), "Nginx": reflect.TypeFor[peers.Nginx](),
	"GuavaBursty": reflect.TypeFor[peers.GuavaBursty](), "GuavaWarmingUp": reflect.TypeFor[peers.GuavaWarmingUp](),
	"Sentinel": reflect.TypeFor[peers.Sentinel](), "Resilience4j": reflect.TypeFor[peers.Resilience4j](),
	"TwoCounter": reflect.TypeFor[peers.TwoCounter](), "KeyedLimiter": reflect.TypeFor[limiters.KeyedLimiter](),
	"MonotonicClock":  reflect.TypeFor[limiters.MonotonicClock](),
	"AdaptiveLimiter": reflect.TypeFor[limiters.AdaptiveLimiter](),
	"AIMDSpec":        reflect.TypeFor[limiters.AIMDSpec](), "VegasSpec": reflect.TypeFor[limiters.VegasSpec](),
	"GradientSpec": reflect.TypeFor[limiters.GradientSpec](), "Gradient2Spec": reflect.TypeFor[limiters.Gradient2Spec](),
	"EnvoyGradient": reflect.TypeFor[limiters.EnvoyGradient](), "EnvoyGradientSpec": reflect.TypeFor[limiters.EnvoyGradientSpec](),

	"TokenBucketSpec": reflect.TypeFor[limiters.TokenBucketSpec](), "LeakyBucketSpec": reflect.TypeFor[limiters.LeakyBucketSpec](),
	"SlidingWindowSpec": reflect.TypeFor[limiters.SlidingWindowSpec](), "FixedWindowSpec": reflect.TypeFor[limiters.FixedWindowSpec](),
	"WarmUpSpec": reflect.TypeFor[limiters.WarmUpSpec](), "ConcurrencySpec": reflect.TypeFor[limiters.ConcurrencySpec](),
	"Flash5FixedSpec": reflect.TypeFor[peers.Flash5FixedSpec](), "Flash5TokenSpec": reflect.TypeFor[peers.Flash5TokenSpec](),
	"XTimeRateSpec": reflect.TypeFor[peers.XTimeRateSpec](), "UberSpec": reflect.TypeFor[peers.UberSpec](),
	"NginxSpec": reflect.TypeFor[peers.NginxSpec](), "GuavaBurstySpec": reflect.TypeFor[peers.GuavaBurstySpec](),
	"GuavaWarmUpSpec": reflect.TypeFor[peers.GuavaWarmUpSpec](), "SentinelSpec": reflect.TypeFor[peers.SentinelSpec](),
	"Resilience4jSpec": reflect.TypeFor[peers.Resilience4jSpec](), "TwoCounterSpec": reflect.TypeFor[peers.TwoCounterSpec](),
	"KeyedSpec": reflect.TypeFor[limiters.KeyedSpec](), "KeyedConfig": reflect.TypeFor[limiters.KeyedConfig](),

	"KindInfo": reflect.TypeFor[limiters.KindInfo](), "State": reflect.TypeFor[limiters.State](), "FailurePolicy": reflect.TypeFor[limiters.FailurePolicy](),
	"Rate": reflect.TypeFor[limiters.Rate](), "Capabilities": reflect.TypeFor[limiters.Capabilities](), "SpecError": reflect.TypeFor[limiters.SpecError](),
	"SentinelStrategy": reflect.TypeFor[peers.SentinelStrategy](), "SentinelBehavior": reflect.TypeFor[peers.SentinelBehavior](),
	"Grid": reflect.TypeFor[limiters.Grid](), "FailureMode": reflect.TypeFor[limiters.FailureMode](), "Decision": reflect.TypeFor[limiters.Decision](),
	"ConfigError": reflect.TypeFor[limiters.ConfigError](), "CapabilityError": reflect.TypeFor[limiters.CapabilityError](),
	"PartitionSpec": reflect.TypeFor[limiters.PartitionSpec](), "Partitioned": reflect.TypeFor[limiters.Partitioned](),
	"PartitionedAdaptive": reflect.TypeFor[limiters.PartitionedAdaptive](),
}

// misuse is the methods documented to panic on a caller's error, as sync.Mutex.Unlock of an
// unlocked mutex does: releasing permits that are not held.
var misuse = map[string]bool{"Concurrency.Release": true, "AdaptiveLimiter.Release": true, "EnvoyGradient.Release": true,
	"Partitioned.Release": true, "PartitionedAdaptive.Release": true}

// Every exported type with a method (in the package's own files, tests aside) is in
// zeroValueTypes.
func TestZeroValueTableIsComplete(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var missing []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, e.Name(), nil, 0)
		require.NoError(t, err)
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			id, ok := recv.(*ast.Ident)
			if !ok || !id.IsExported() {
				continue
			}
			if _, ok := zeroValueTypes[id.Name]; !ok && !slices.Contains(missing, id.Name) {
				missing = append(missing, id.Name)
			}
		}
	}
	require.Empty(t, missing, "exported types with methods that the zero-value walk does not cover: add them to zeroValueTypes")
}

// The zero value of every exported type is safe: each exported method of a zero value (and
// of a pointer to one), called with zero arguments and again with small ones (n = 1, 1s, a
// key), neither panics nor admits anything. Constructors refuse nil arguments with an error.
func TestZeroValuesOfTheExportedAPI(t *testing.T) {
	names := make([]string, 0, len(zeroValueTypes))
	for name := range zeroValueTypes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		typ := zeroValueTypes[name]
		ptr := reflect.New(typ)
		for _, recv := range []reflect.Value{ptr, ptr.Elem()} {
			for i := range recv.NumMethod() {
				method := recv.Type().Method(i)
				if misuse[name+"."+method.Name] {
					continue
				}
				if strings.HasSuffix(name, "Spec") && !slices.Contains([]string{"Kind", "String", "Validate", "New"}, method.Name) {
					continue // a spec's other methods describe a valid spec: Validate refuses the zero one first
				}
				for _, small := range []bool{false, true} {
					args := zeroArgs(method.Type, small, recv.Kind() == reflect.Pointer)
					var out []reflect.Value
					require.NotPanics(t, func() { out = recv.Method(i).Call(args) }, "(%s).%s(small=%v) on the zero value", recv.Type(), method.Name, small)
					for _, v := range out {
						if d, ok := v.Interface().(limiters.Decision); ok {
							require.NotEqual(t, limiters.Admitted, d, "(%s).%s on the zero value admitted", recv.Type(), method.Name)
						}
					}
					if strings.HasPrefix(method.Name, "TryAcquire") {
						require.False(t, out[0].Bool(), "(%s).%s on the zero value admitted", recv.Type(), method.Name)
					}
				}
			}
		}
	}
}

// zeroArgs is the arguments of a method of type m (its receiver first when pointer is false
// and m comes from a value's method set, which reflect strips): zero values, or with small
// set, 1 for numbers, 1s for durations and "k" for strings.
func zeroArgs(m reflect.Type, small, _ bool) []reflect.Value {
	var args []reflect.Value
	for i := 1; i < m.NumIn(); i++ { // Method(i).Type includes the receiver
		in := m.In(i)
		v := reflect.New(in).Elem()
		if small {
			switch {
			case in == reflect.TypeFor[time.Duration]():
				v.SetInt(int64(time.Second))
			case in.Kind() >= reflect.Int && in.Kind() <= reflect.Int64:
				v.SetInt(1)
			case in.Kind() >= reflect.Uint && in.Kind() <= reflect.Uint64:
				v.SetUint(1)
			case in.Kind() == reflect.Float64:
				v.SetFloat(1)
			case in.Kind() == reflect.String:
				v.SetString("k")
			case in.Kind() == reflect.Slice && in.Elem().Kind() == reflect.Uint8:
				v.SetBytes([]byte("k"))
			}
		}
		args = append(args, v)
	}
	return args
}

// Constructors refuse nil arguments with an error rather than a panic.
func TestConstructorsRefuseNil(t *testing.T) {
	_, err := limiters.NewKeyed(nil, limiters.KeyedConfig{MaxKeys: 10}, zeroClock{})
	require.ErrorContains(t, err, "spec")
	_, err = limiters.NewKeyed(limiters.TokenBucketSpec{Capacity: 3, Rate: limiters.PerSecond(100)}, limiters.KeyedConfig{MaxKeys: 10}, nil)
	require.Error(t, err)
	for _, k := range limiters.Kinds() {
		spec, err := limiters.ParseSpec(k.Example)
		require.NoError(t, err)
		if spec.NaturalWindow() == 0 {
			continue // no time axis: no clock needed
		}
		require.NotPanics(t, func() { _, err = spec.New(nil) }, k.Example)
		require.Error(t, err, "%s on a nil clock", k.Example)
	}
}
