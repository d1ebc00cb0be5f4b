package engine

import (
	"math"
	"math/bits"
)

// expRand draws exponential variates (mean 1) for a Poisson source: the stream of
// rand.New(rand.NewPCG(seed1, seed2)).ExpFloat64, draw for draw and bit for bit, in code a
// loop can hold: flatStream.fill writes exp out, with uint64 inlined, and calls nothing but
// for the 2.2% of draws expSlow takes (TestExpRandIsMathRand counts them: 22,368 of 1M). math/rand/v2 reaches its PCG through an interface
// (ExpFloat64 calls Rand.Uint64 calls Source.Uint64), and Go saves no register across a call.
// A change of generator would have changed every seeded result.
//
// The generator is PCG-DXSM: a 128-bit linear congruential state, s ← s·M + C mod 2¹²⁸,
// each output the state's high half mixed with its low half ("double xorshift multiply").
// The variate is Marsaglia and Tsang's ziggurat (2000) over 256 layers of equal area
// v = 3.949659822581572e-3 under e^(−x), cut at r = 7.69711747013104972: a draw u gives a
// layer i (8 bits) and a position j (32 bits); x = j·w[i] is returned at once when it lies
// under the layer above (j < k[i], 97.8% of draws), else it is tested against e^(−x) (or,
// in the base layer, taken from the tail r − ln U). Tables in exptables.go, computed from the
// recurrence (TestExpTables).
type expRand struct{ hi, lo uint64 }

// newExpRand is the generator rand.NewPCG(seed1, seed2) is.
func newExpRand(seed1, seed2 uint64) expRand { return expRand{hi: seed1, lo: seed2} }

// uint64 is the next output: PCG-DXSM, as rand.PCG.Uint64.
func (p *expRand) uint64() uint64 {
	const ( // M and C, the 128-bit multiplier and increment, as high and low halves
		mulHi = 2549297995355413924
		mulLo = 4865540595714422341
		incHi = 6364136223846793005
		incLo = 1442695040888963407
	)
	hi, lo := bits.Mul64(p.lo, mulLo)
	hi += p.hi*mulLo + p.lo*mulHi
	lo, carry := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, carry)
	p.hi, p.lo = hi, lo
	const cheapMul = 0xda942042e4dd58b5 // DXSM's own multiplier
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	return hi * (lo | 1)
}

// exp is the next exponential variate, as rand.Rand.ExpFloat64; the rare draws outside a
// layer's core go to expSlow.
func (p *expRand) exp() float64 {
	u := p.uint64()
	j, i := uint32(u), uint8(u>>32)
	if j < expK[i] {
		return float64(j) * float64(expW[i])
	}
	return p.expSlow(u)
}

// expSlow finishes a draw u that fell outside its layer's core, and draws again when it is
// not under the curve.
func (p *expRand) expSlow(u uint64) float64 {
	const r = 7.69711747013104972
	for {
		j, i := uint32(u), uint8(u>>32)
		x := float64(j) * float64(expW[i])
		if j < expK[i] {
			return x
		}
		if i == 0 {
			return r - math.Log(p.float64())
		}
		if expF[i]+float32(p.float64())*(expF[i-1]-expF[i]) < float32(math.Exp(-x)) {
			return x
		}
		u = p.uint64()
	}
}

// float64 is uniform in [0, 1): 53 bits over 2⁵³, as rand.Rand.Float64.
func (p *expRand) float64() float64 { return float64(p.uint64()<<11>>11) / (1 << 53) }
