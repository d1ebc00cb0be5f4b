package engine

import (
	"math/rand/v2"

	"github.com/ratelab/ratelab/virtualclock"
)

// Lanes run on all cores (Run), and share nothing, but the memory allocator packs small
// objects of one size side by side: six lanes' 16-byte clocks, generators or free lists, made
// one lane after the other, sit four to a 64-byte cache line, and every event of every lane
// writes its own. Each write then takes the line from the core that wrote it last (false
// sharing), and lanes that share nothing run as if they shared a lock. So every object a lane
// writes at every event (or at every draw) lies on cache lines of its own:
//
//   - an object of 512 bytes or more: Go's size classes from 512 up are multiples of 64, and a
//     span starts on a page, so such an object starts on a line and no other object shares
//     its lines (the lane's slices start at that capacity: lineSized);
//   - smaller ones are padded to a class that is a multiple of 64 (the clock, a generator,
//     flatStream), or by a line before and after their fields (rateStream, keyPicker).
//
// cores_test.go checks it on the perf scenario's six lanes, address by address.

// cacheLine is the unit of sharing between cores on amd64 and arm64 (Apple's M-series use
// 128-byte lines: there the pads halve false sharing rather than end it).
const cacheLine = 64

// lineSized is the least capacity of a slice of elements of size bytes that fills 512 bytes.
func lineSized(size uintptr) int { return int((512 + size - 1) / size) }

// clockOnOwnLine is a lane's clock (advanced whenever a stage reads it: laneClock) on a
// 64-byte allocation.
type clockOnOwnLine struct {
	clock virtualclock.Clock
	_     [cacheLine - 16]byte // the Clock is 16 bytes (cores_test.go checks)
}

func newLaneClock() *virtualclock.Clock { return &(&clockOnOwnLine{}).clock }

// pcgOnOwnLine is a PCG (16 bytes of state, written at every draw) on a 64-byte allocation.
type pcgOnOwnLine struct {
	pcg rand.PCG
	_   [cacheLine - 16]byte
}

// newRand is rand.New(rand.NewPCG(seed1, seed2)), the same stream, with the generator's
// state on a line of its own.
func newRand(seed1, seed2 uint64) *rand.Rand {
	p := &pcgOnOwnLine{}
	p.pcg.Seed(seed1, seed2)
	return rand.New(&p.pcg)
}
