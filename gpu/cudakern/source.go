package cudakern

import _ "embed"

// Source is the CUDA C source of the worker's kernels (kernels.cu).
//
//go:embed kernels.cu
var Source string

// Names lists the kernels Source defines.
var Names = []string{"act_fwd", "act_bwd", "act_fwd_v", "act_bwd_v", "add_v", "binary", "plane_stats", "bn_finalize", "bn_apply", "touch", "plane_dot", "plane_mean", "column_sum", "drop", "copy_runs",
	"transpose", "pool_fwd", "pool_bwd", "rownorm_fwd", "rownorm_bwd", "rownorm_wgrad", "xent_fwd", "xent_bwd", "spin"}
