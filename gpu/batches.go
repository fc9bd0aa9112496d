package gpu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxBatch is the largest batch size a sweep accepts.
const MaxBatch = 65536

// ParseBatches reads a batch-size list such as "1-64,96,128": comma-separated sizes and
// inclusive ranges, in any order; a range may take every s-th size ("8-64/8": 8, 16,
// … 64; "3-19/8": 3, 11, 19). It returns the sizes sorted and without repeats.
func ParseBatches(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no batch sizes given: write them like 1-64,96,128")
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("batch sizes %q have an empty item: write them like 1-64,96,128", s)
		}
		lo, hi, step := part, part, 1
		if i := strings.Index(part, "-"); i >= 0 {
			lo, hi = strings.TrimSpace(part[:i]), strings.TrimSpace(part[i+1:])
			if j := strings.Index(hi, "/"); j >= 0 {
				n, err := strconv.Atoi(strings.TrimSpace(hi[j+1:]))
				if err != nil || n < 1 || n > MaxBatch {
					return nil, fmt.Errorf("batch range %q: the step after / must be a whole number from 1 to %d", part, MaxBatch)
				}
				hi, step = strings.TrimSpace(hi[:j]), n
			}
		}
		a, err := parseBatch(lo, part)
		if err != nil {
			return nil, err
		}
		b, err := parseBatch(hi, part)
		if err != nil {
			return nil, err
		}
		if a > b {
			return nil, fmt.Errorf("batch range %q runs backwards: write %d-%d", part, b, a)
		}
		for n := a; n <= b; n += step {
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out, nil
}

// FormatBatches writes ascending batch sizes as ParseBatches reads them, as short as
// it can: runs of three or more at an even step become ranges ("1-64", "3-99/8").
func FormatBatches(sizes []int) string {
	var parts []string
	for i := 0; i < len(sizes); {
		j, step := i+1, 0
		if j < len(sizes) {
			step = sizes[j] - sizes[i]
			for j < len(sizes) && sizes[j]-sizes[j-1] == step {
				j++
			}
		}
		switch {
		case j-i >= 3 && step == 1:
			parts = append(parts, fmt.Sprintf("%d-%d", sizes[i], sizes[j-1]))
		case j-i >= 3:
			parts = append(parts, fmt.Sprintf("%d-%d/%d", sizes[i], sizes[j-1], step))
		default:
			j = i + 1
			parts = append(parts, strconv.Itoa(sizes[i]))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

func parseBatch(s, item string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("batch size %q in %q is not a whole number", s, item)
	}
	if n < 1 || n > MaxBatch {
		return 0, fmt.Errorf("batch size %d in %q is out of range: it must be positive and at most %d", n, item, MaxBatch)
	}
	return n, nil
}

// DefaultBatches is the batch grid a sweep uses when none is given, up to max: every
// size from 1 to 16, then the multiples of 8 with the neighbours of the multiples of 16
// up to 256 (where tile and wave quantization make time jump), then the multiples of 32
// with their neighbours above.
func DefaultBatches(max int) []int {
	seen := map[int]bool{}
	add := func(n int) {
		if n >= 1 && n <= max {
			seen[n] = true
		}
	}
	for n := 1; n <= 16; n++ {
		add(n)
	}
	for n := 16; n <= 256; n += 8 {
		add(n)
		if n%16 == 0 {
			add(n - 1)
			add(n + 1)
		}
	}
	for n := 288; n <= max; n += 32 {
		add(n - 1)
		add(n)
		add(n + 1)
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// batchLevel ranks a batch size for sweep order: 0 for powers of two, 1 for other
// multiples of 16, 2 for other multiples of 8, 3 for the rest. Sweeping level by level
// gives a coarse curve for every configuration first, then refines it.
func batchLevel(n int) int {
	switch {
	case n&(n-1) == 0:
		return 0
	case n%16 == 0:
		return 1
	case n%8 == 0:
		return 2
	}
	return 3
}
