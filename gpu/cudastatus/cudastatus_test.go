package cudastatus

import (
	"strings"
	"testing"
)

func TestCuDNN(t *testing.T) {
	const v8, v9 = 8907, 90600
	for _, c := range []struct {
		name          string
		version, code int
		want          Category
	}{
		{"8 success", v8, 0, OK},
		{"8 alloc failed", v8, 2, OutOfMemory},
		{"8 bad param", v8, 3, BadParameter},
		{"8 invalid value", v8, 5, BadParameter},
		{"8 arch mismatch", v8, 6, Unsupported},
		{"8 not supported", v8, 9, Unsupported},
		{"8 runtime prerequisite missing", v8, 11, BrokenInstall},
		{"8 internal error", v8, 4, MaybeOutOfMemory},
		{"8 execution failed", v8, 8, MaybeOutOfMemory},
		{"9 success", v9, 0, OK},
		{"9 not initialized", v9, 1001, BrokenInstall},
		{"9 sublibrary loading failed", v9, 1008, BrokenInstall},
		{"9 sublibrary version mismatch", v9, 1002, BrokenInstall},
		{"9 bad param", v9, 2000, BadParameter},
		{"9 bad param null pointer", v9, 2002, BadParameter},
		{"9 bad param descriptor type", v9, 2012, BadParameter},
		{"9 not supported", v9, 3000, Unsupported},
		{"9 not supported shape", v9, 3002, Unsupported},
		{"9 arch mismatch", v9, 3007, Unsupported},
		{"9 incompatible CUDA driver", v9, 3005, BrokenInstall},
		{"9 incompatible CUDA runtime", v9, 3006, BrokenInstall},
		{"9 runtime prerequisite missing", v9, 3008, BrokenInstall},
		{"9 sub-library unavailable", v9, 3009, BrokenInstall},
		{"9 not supported padding", v9, 3011, Unsupported},
		{"9 not supported cuda graph", v9, 3013, Unsupported},
		{"9 internal error", v9, 4000, MaybeOutOfMemory},
		{"9 compilation failed", v9, 4001, Failed},
		{"9 host allocation failed", v9, 4003, OutOfMemory},
		{"9 device allocation failed", v9, 4004, OutOfMemory},
		{"9 execution failed", v9, 5000, MaybeOutOfMemory},
		{"9 execution failed in the CUDA driver", v9, 5001, Failed},
		{"9 execution failed in cuBLAS", v9, 5002, MaybeOutOfMemory},
		{"9 execution failed in the CUDA runtime", v9, 5003, MaybeOutOfMemory},
		{"9 execution failed in cuRAND", v9, 5004, Failed},
		// cuDNN 8's codes mean something else under 9, and the reverse.
		{"9 reads 2 as nothing known", v9, 2, Failed},
		{"9 reads 9 as nothing known", v9, 9, Failed},
		{"8 reads 3000 as nothing known", v8, 3000, Failed},
	} {
		if got := CuDNN(c.version, c.code); got != c.want {
			t.Errorf("%s: CuDNN(%d, %d) = %v, want %v", c.name, c.version, c.code, got, c.want)
		}
	}
}

func TestCuBLAS(t *testing.T) {
	for code, want := range map[int]Category{0: OK, 1: MaybeOutOfMemory, 3: OutOfMemory, 7: BadParameter, 8: Unsupported, 15: Unsupported, 13: MaybeOutOfMemory, 14: MaybeOutOfMemory, 11: Failed} {
		if got := CuBLAS(code); got != want {
			t.Errorf("CuBLAS(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestBadParameterSaysItIsABug(t *testing.T) {
	e := &Error{Lib: "cuDNN", Call: "cudnnConvolutionForward", Text: "CUDNN_STATUS_BAD_PARAM", Code: 2000, Category: BadParameter}
	if !strings.Contains(e.Error(), "bug in cnntime-gpu") || !strings.Contains(e.Error(), "(2000)") {
		t.Errorf("bad parameter error %q does not say it is a bug with its code", e.Error())
	}
}

// TestBrokenInstallSaysWhatToDo: the statuses of a cuDNN that cannot run here at all are
// failures whose message says how to fix the install; a configuration cuDNN lacks is
// not.
func TestBrokenInstallSaysWhatToDo(t *testing.T) {
	for _, c := range []struct{ version, code int }{{90600, 3005}, {90600, 3006}, {90600, 3008}, {90600, 3009}, {90600, 1008}, {90600, 1002}, {8907, 11}} {
		hint := CuDNNHint(c.version, c.code)
		e := &Error{Lib: "cuDNN", Call: "cudnnConvolutionForward", Code: c.code, Category: CuDNN(c.version, c.code), Hint: hint}
		if e.Category != BrokenInstall || !e.InstallFault() || !strings.Contains(e.Error(), "install the cuDNN built for this CUDA") {
			t.Errorf("cuDNN %d status %d: %v, %q", c.version, c.code, e.Category, e.Error())
		}
	}
	for _, c := range []struct{ version, code int }{{90600, 3000}, {90600, 3002}, {90600, 3007}, {8907, 9}, {8907, 6}} {
		if h := CuDNNHint(c.version, c.code); h != "" {
			t.Errorf("cuDNN %d status %d (a configuration it lacks) got the broken-install hint", c.version, c.code)
		}
	}
}

// TestResolve: a failure that may be out of memory in disguise is one when the GPU has
// little left (on an 80 GB GPU, under 2.5 GB), a failure when memory is plenty; other
// categories stand whatever is free.
func TestResolve(t *testing.T) {
	const gb = 1 << 30
	for _, c := range []struct {
		cat         Category
		free, total int64
		want        Category
	}{
		{MaybeOutOfMemory, 1 * gb, 80 * gb, OutOfMemory},
		{MaybeOutOfMemory, 40 * gb, 80 * gb, Failed},
		{MaybeOutOfMemory, 200 << 20, 4 * gb, OutOfMemory},
		{MaybeOutOfMemory, 300 << 20, 4 * gb, Failed},
		{MaybeOutOfMemory, -1, 80 * gb, Failed}, // free memory unknown
		{Unsupported, 0, 80 * gb, Unsupported},
		{Failed, 0, 80 * gb, Failed},
	} {
		if got := Resolve(c.cat, c.free, c.total); got != c.want {
			t.Errorf("Resolve(%v, %d, %d) = %v, want %v", c.cat, c.free, c.total, got, c.want)
		}
	}
}
