package replicate

import "math"

// Interval is the mean of N replications' values with its 95% confidence interval,
// Mean ± HalfWidth (Student's t). HalfWidth and StdDev are NaN when N < 2.
type Interval struct {
	N         int
	Mean      float64
	StdDev    float64 // the sample standard deviation, with N − 1 in the denominator
	HalfWidth float64
	Min, Max  float64
}

// Estimate is the interval of values, in their order (the sums are taken in that order, so
// the same values give the same bits). No values: N = 0 and everything NaN.
func Estimate(values []float64) Interval {
	n := len(values)
	iv := Interval{N: n, Mean: math.NaN(), StdDev: math.NaN(), HalfWidth: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if n == 0 {
		return iv
	}
	sum := 0.0
	iv.Min, iv.Max = values[0], values[0]
	for _, v := range values {
		sum += v
		iv.Min, iv.Max = min(iv.Min, v), max(iv.Max, v)
	}
	iv.Mean = sum / float64(n)
	if iv.Min == iv.Max {
		// Every replication agrees (a deterministic scenario): the mean is that value, not
		// the sum's rounding of it, and the interval has no width.
		iv.Mean = iv.Min
		if n >= 2 {
			iv.StdDev, iv.HalfWidth = 0, 0
		}
		return iv
	}
	if n < 2 {
		return iv
	}
	squares := 0.0
	for _, v := range values {
		squares += (v - iv.Mean) * (v - iv.Mean)
	}
	iv.StdDev = math.Sqrt(squares / float64(n-1))
	iv.HalfWidth = TQuantile975(n-1) * iv.StdDev / math.Sqrt(float64(n))
	return iv
}

// Defined reports whether the interval exists: two replications at least.
func (iv Interval) Defined() bool { return iv.N >= 2 }

// Low and High are the interval's ends (NaN when not Defined).
func (iv Interval) Low() float64  { return iv.Mean - iv.HalfWidth }
func (iv Interval) High() float64 { return iv.Mean + iv.HalfWidth }

// Contains reports whether x lies in the closed interval; false when it is not Defined.
func (iv Interval) Contains(x float64) bool {
	return iv.Defined() && iv.Low() <= x && x <= iv.High()
}
