package predictor

// denseEntries is the last per-GPU batch a dense table filled for per-GPU batch need
// holds: the table's size (tableSize, a power of two times 64, so that it grows a few
// times at most), but no batch beyond fits, the most that fits in the GPU's memory
// (below 1: unknown), which no curve reads; never less than need. The table's plans
// still probe its size's last batch (fill), so its figures are those of the whole
// table: a network that fits 300 images on a GPU works out 300 steps, not 512.
func denseEntries(need, fits int) int {
	size := tableSize(need)
	if fits >= 1 && fits < size {
		return max(fits, need)
	}
	return size
}
