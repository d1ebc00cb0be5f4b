// Package sweep runs a grid of limiter parameters over one scenario: for each combination of
// the values of one or two fields, the scenario's lane with those values, run alone on the
// scenario's traffic, and what it measured (refused %, waits, overshoot of the nominal rate,
// downstream failures).
//
// A dimension names a field and its values (see Dimension):
//
//	token-bucket.capacity=1..100        capacity 1 12 23 34 45 56 67 78 89 100 (10 steps)
//	token-bucket.rate=50/1s..200/1s     rate 50 67 83 100 117 133 150 167 183 200 per second
//	token-bucket.capacity=1..1000       on a log scale: capacity 1 2 5 10 22 46 100 215 464 1000
//	x-time-rate.mode=try,wait           the values listed
//
// The grid is every combination, for every lane of the scenario that each dimension applies
// to (a "template"): the two above over the replay scenario are 100 cells of its one
// token-bucket lane, cell 0 token-bucket:capacity=1,rate=50/1s and cell 99
// token-bucket:capacity=100,rate=200/1s (see Grid for the numbering).
//
// Every cell runs alone, on the scenario's seed: each sees the same offered traffic (common
// random numbers), so neighbouring cells differ by their parameters and not by noise, and a
// cell's numbers are those of `ratelab run` with the same lane. Cells run on all cores; the
// rows come out in cell order, whatever the cores or the order the cells finish in.
//
// A grid too large for one machine runs as shards: shard i of n is every n-th cell from the
// i-th, and Merge joins the shards' rows into exactly the rows one machine would have written;
// MergeCSV does it from the shards' CSV as it reads them, holding a row of each at a time.
package sweep
