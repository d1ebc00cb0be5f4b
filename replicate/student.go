package replicate

import "math"

// TQuantile975 is Student's t quantile t(0.975, df): the half-width of a 95% two-sided
// interval in units of the standard error. 12.706 for df = 1, 2.776 for df = 4, 2.262 for
// df = 9, 2.042 for df = 30, tending to 1.960 (the normal's). NaN for df < 1.
//
// It inverts the t distribution's CDF, written with the regularized incomplete beta
// function, P(T ≤ t) = 1 − ½·I(ν/(ν+t²); ν/2, ½) for t ≥ 0, by bisection to the last bit.
func TQuantile975(df int) float64 {
	return tQuantile(0.975, float64(df))
}

// tQuantile is the p-quantile of Student's t with nu degrees of freedom, for p in (½, 1).
func tQuantile(p, nu float64) float64 {
	if !(nu >= 1) || !(p > 0.5 && p < 1) {
		return math.NaN()
	}
	tail := 1 - p // P(T > t) = ½·I(ν/(ν+t²); ν/2, ½), decreasing in t
	lo, hi := 0.0, 1.0
	for tUpper(hi, nu) > tail {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if tUpper(mid, nu) > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// tUpper is P(T > t) for t ≥ 0.
func tUpper(t, nu float64) float64 {
	return 0.5 * regIncBeta(nu/(nu+t*t), nu/2, 0.5)
}

// regIncBeta is the regularized incomplete beta function I(x; a, b), by its continued
// fraction evaluated with the modified Lentz method; the symmetry I(x; a, b) =
// 1 − I(1−x; b, a) keeps the fraction in the range where it converges fast.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	if x > (a+1)/(a+b+2) {
		return 1 - regIncBeta(1-x, b, a)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	return front * betaFraction(x, a, b) / a
}

// betaFraction is the continued fraction 1/(1+ d1/(1+ d2/(1+ …))) of the incomplete beta,
// with d(2m+1) = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and d(2m) = m(b−m)x / ((a+2m−1)(a+2m)).
func betaFraction(x, a, b float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		for _, num := range [2]float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= c * d
		}
		if math.Abs(c*d-1) < eps {
			break
		}
	}
	return f
}
