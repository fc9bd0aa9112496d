package cudakern

// Block is the threads of every launch's block: eight warps.
const Block = 256

const (
	warp = 32
	// blocksPerSM caps a grid-stride launch's grid at this many blocks per SM: enough to
	// fill every SM several times over, few enough that each thread loops a while.
	blocksPerSM = 32
	// warpRowLimit is the widest row one warp reduces; wider rows get a block each.
	warpRowLimit = 1024
	// wgradRowsPerLane is how many rows one thread of the layer norm's weight-gradient
	// kernel sums at most before the rows are split into more chunks (up to maxChunks).
	wgradRowsPerLane = 64
	maxChunks        = 1024
)

// Launch is one kernel launch of a phase.
type Launch struct {
	Kernel      string
	Grid, Block int
	// Args are int64, float64, Buf (a buffer's address) or Seed values, in the kernel's
	// parameter order.
	Args []any
	// Serial is the most elements one thread reads one after another: a bound on how
	// long its slowest thread runs, whatever the GPU's width.
	Serial int64
	// Elems is how many elements the launch reads in all.
	Elems int64
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// maxGrid is the largest grid a grid-stride launch gets on a GPU of sms SMs.
func maxGrid(sms int) int64 { return int64(max(sms, 1)) * blocksPerSM }

func gridOf(blocks int64, sms int) int { return int(min(max(blocks, 1), maxGrid(sms))) }

// elementwise is a grid-stride launch over n elements, each reading reads elements.
func elementwise(sms int, kernel string, n, reads int64, args ...any) Launch {
	grid := gridOf(ceilDiv(n, Block), sms)
	return Launch{Kernel: kernel, Grid: grid, Block: Block, Args: args,
		Serial: ceilDiv(n, int64(grid)*Block) * reads, Elems: n * reads}
}

// VectorMultiple is the element count a 16-byte vector kernel (act_fwd_v, act_bwd_v,
// add_v) needs a multiple of: 8 FP16 or BF16 elements, two vectors of 4 FP32.
const VectorMultiple = 8

// vectorwise is a grid-stride launch of a vector kernel over n elements (a multiple of
// VectorMultiple), each thread loading 16 bytes at a time (at least 4 elements).
func vectorwise(sms int, kernel string, n, reads int64, args ...any) Launch {
	grid := gridOf(ceilDiv(n/4, Block), sms)
	return Launch{Kernel: kernel, Grid: grid, Block: Block, Args: args,
		Serial: ceilDiv(n, int64(grid)*Block*4) * 4 * reads, Elems: n * reads}
}

// Vectorised reports whether an element-wise launch over n elements runs the 16-byte
// vector kernel: n is a multiple of VectorMultiple.
func Vectorised(n int64) bool { return n > 0 && n%VectorMultiple == 0 }

// groupSize is the threads that reduce one row of cols elements when there are rows of
// them: a warp, while rows are narrow enough and plenty enough to give every SM a block
// of eight; else the whole block.
func groupSize(sms int, rows, cols int64) int64 {
	if cols <= warpRowLimit && ceilDiv(rows, Block/warp) >= int64(max(sms, 1)) {
		return warp
	}
	return Block
}

// rowwise is a launch in which a group of G threads (the last argument, appended here)
// reduces each of rows rows of cols elements, reading the row passes times.
func rowwise(sms int, kernel string, rows, cols, passes int64, args ...any) Launch {
	g := groupSize(sms, rows, cols)
	perBlock := Block / g
	grid := gridOf(ceilDiv(rows, perBlock), sms)
	return Launch{Kernel: kernel, Grid: grid, Block: Block, Args: append(args, g),
		Serial: ceilDiv(rows, int64(grid)*perBlock) * ceilDiv(cols, g) * passes, Elems: rows * cols * passes}
}

// columnSum adds up rows of partial sums per column: a warp per column (column_sum).
func columnSum(sms int, in, out Buf, rows, cols int64, scale float64) Launch {
	perBlock := int64(Block / warp)
	grid := gridOf(ceilDiv(cols, perBlock), sms)
	return Launch{Kernel: "column_sum", Grid: grid, Block: Block, Args: []any{in, out, rows, cols, scale},
		Serial: ceilDiv(cols, int64(grid)*perBlock) * ceilDiv(rows, warp), Elems: rows * cols}
}

// bnFinalize is bn_finalize: a warp per channel sums the n planes' partial sums.
func bnFinalize(sms int, mode int64, ps, pq, mean, invstd, g, b Buf, n, c int64, count float64) Launch {
	perBlock := int64(Block / warp)
	grid := gridOf(ceilDiv(c, perBlock), sms)
	return Launch{Kernel: "bn_finalize", Grid: grid, Block: Block, Args: []any{mode, ps, pq, mean, invstd, g, b, n, c, count},
		Serial: ceilDiv(c, int64(grid)*perBlock) * ceilDiv(n, warp) * 2, Elems: 2 * n * c}
}

// wgradChunks is how many runs of rows the layer norm's weight-gradient kernel splits
// rows into: enough that a thread sums at most wgradRowsPerLane rows (up to maxChunks),
// and enough blocks for every SM where there are rows for them.
func wgradChunks(sms int, rows, cols int64) int64 {
	tiles := ceilDiv(cols, warp)
	chunks := ceilDiv(rows, (Block/warp)*wgradRowsPerLane)
	chunks = max(chunks, min(ceilDiv(int64(max(sms, 1)), tiles), ceilDiv(rows, Block/warp)))
	return min(max(chunks, 1), maxChunks)
}

// wgrad is the first step of the layer norm's weight gradients (rownorm_wgrad): 32
// columns by one chunk of rows per block.
func wgrad(sms int, rows, cols, chunks int64, args ...any) Launch {
	tiles := ceilDiv(cols, warp)
	grid := gridOf(tiles*chunks, sms)
	perLane := ceilDiv(ceilDiv(rows, chunks), Block/warp)
	return Launch{Kernel: "rownorm_wgrad", Grid: grid, Block: Block, Args: append(args, chunks, Div(tiles), ceilDiv(rows, chunks)),
		Serial: ceilDiv(tiles*chunks, int64(grid)) * perLane * 2, Elems: rows * cols * 2}
}
