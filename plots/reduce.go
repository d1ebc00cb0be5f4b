package plots

// Envelope reduces a line of many points (xs increasing) to at most four per column of
// (xmax−xmin)/columns: the first, lowest, highest and last point of each column, in x order.
// Drawn at one column per pixel it is indistinguishable from the full line — every column
// spans the same vertical extent — and drawing costs O(columns), whatever the number of
// points. step says the line is a post-step line; the reduction is the same (the points kept
// are real points, each holding its value until the next kept one, which is within the same
// pixel). Cost: O(len(xs)).
func Envelope(xs, ys []float64, xmin, xmax float64, columns int, step bool) ([]float64, []float64) {
	_ = step
	if columns < 1 || len(xs) <= 4*columns || xmax <= xmin {
		return xs, ys
	}
	outX := make([]float64, 0, 4*columns+2)
	outY := make([]float64, 0, 4*columns+2)
	width := (xmax - xmin) / float64(columns)
	col := func(x float64) int { return int((x - xmin) / width) }
	for i := 0; i < len(xs); {
		c := col(xs[i])
		j := i
		lo, hi := i, i
		for j+1 < len(xs) && col(xs[j+1]) == c {
			j++
			if ys[j] < ys[lo] {
				lo = j
			}
			if ys[j] > ys[hi] {
				hi = j
			}
		}
		keep := [4]int{i, min(lo, hi), max(lo, hi), j}
		last := -1
		for _, k := range keep {
			if k != last {
				outX, outY = append(outX, xs[k]), append(outY, ys[k])
				last = k
			}
		}
		i = j + 1
	}
	return outX, outY
}

// niceGroup is the smallest factor in 1, 2, 5, 10, 20, 50, … by which n bins must be grouped
// to leave at most limit.
func niceGroup(n, limit int) int {
	for g := 1; ; g *= 10 {
		for _, m := range []int{1, 2, 5} {
			if n <= limit*g*m {
				return g * m
			}
		}
	}
}

// Columns is a post-step line's range in each of columns equal columns of [xmin, xmax): the
// lowest and highest value it takes there, counting the value carried in from the left. ok
// is false for columns before the line starts. Cost: O(len(xs) + columns).
func Columns(xs, ys []float64, xmin, xmax float64, columns int) (lo, hi []float64, ok []bool) {
	lo, hi, ok = make([]float64, columns), make([]float64, columns), make([]bool, columns)
	width := (xmax - xmin) / float64(columns)
	i := 0
	have, cur := false, 0.0
	for c := range columns {
		right := xmin + float64(c+1)*width
		if have {
			lo[c], hi[c], ok[c] = cur, cur, true
		}
		for ; i < len(xs) && xs[i] < right; i++ {
			cur = ys[i]
			if !ok[c] {
				lo[c], hi[c], ok[c] = cur, cur, true
			}
			lo[c], hi[c] = min(lo[c], cur), max(hi[c], cur)
			have = true
		}
	}
	return lo, hi, ok
}
