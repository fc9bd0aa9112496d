package libfind

import (
	"strings"
	"testing"
)

// TestCompatible: a driver runs its own CUDA major's libraries and older ones; CUDA 13
// has no code for a V100 (7.0), CUDA 12 none for a K80 (3.7).
func TestCompatible(t *testing.T) {
	for _, c := range []struct {
		major, driver, cc int
		ok                bool
		why               string
	}{
		{13, 13000, 90, true, ""},
		{13, 12080, 90, false, "driver runs CUDA 12.8 at most"}, // an R570 driver
		{12, 12080, 90, true, ""},
		{12, 13000, 90, true, ""},
		{13, 13000, 70, false, "compute capability 7.0"}, // a V100
		{12, 13000, 70, true, ""},
		{12, 12020, 37, false, "compute capability 3.7"},
		{0, 12000, 90, true, ""},
	} {
		ok, why := Compatible(c.major, c.driver, c.cc)
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("Compatible(%d, %d, %d) = %v, %q; want %v, %q", c.major, c.driver, c.cc, ok, why, c.ok, c.why)
		}
	}
}

// TestConsistentPicksOneCUDA: with CUDA 13 and 12 cuBLAS found, an R570 driver (CUDA
// 12.8) skips the 13 one, saying why, and loads the 12 one although 13 came first in the
// search; a cuDNN built for CUDA 12 puts cuBLAS 12 first on a CUDA 13 driver too; a V100
// never gets CUDA 13.
func TestConsistentPicksOneCUDA(t *testing.T) {
	cands := []Candidate{
		{Library: "cuBLAS", Path: "/venv/site-packages/nvidia/cu13/lib/libcublas.so.13", Verdict: Load},
		{Library: "cuBLAS", Path: "/usr/local/cuda/lib64/libcublas.so.12", Verdict: Found},
		{Library: "cuBLAS", Path: "/usr/lib/x86_64-linux-gnu/libcublas.so.11", Verdict: Found},
		{Library: "cuBLAS", Dir: "/opt/empty", Verdict: Absent},
	}
	for _, c := range []struct {
		name                string
		want, driver, cc    int
		load, skippedSuffix string
	}{
		{"R570 on an H100", 0, 12080, 90, "libcublas.so.12", "libcublas.so.13"},
		{"cuDNN for CUDA 12 on a CUDA 13 driver", 12, 13000, 90, "libcublas.so.12", ""},
		{"CUDA 13 everywhere", 13, 13000, 90, "libcublas.so.13", ""},
		{"a V100 on a CUDA 13 driver", 0, 13000, 70, "libcublas.so.12", "libcublas.so.13"},
	} {
		got := Consistent(cands, c.want, c.driver, c.cc)
		chosen, ok := Chosen(got)
		if !ok || !strings.HasSuffix(chosen.Path, c.load) {
			t.Errorf("%s: loads %q, want %s", c.name, chosen.Path, c.load)
		}
		if c.skippedSuffix != "" {
			for _, g := range got {
				if strings.HasSuffix(g.Path, c.skippedSuffix) && (g.Verdict != Skipped || !strings.Contains(g.Why, "CUDA 13 library")) {
					t.Errorf("%s: %s is %s (%s), want skipped saying why", c.name, g.Path, g.Verdict, g.Why)
				}
			}
		}
		loads := 0
		for _, g := range got {
			if g.Verdict == Load {
				loads++
			}
		}
		if loads != 1 || len(got) != len(cands) {
			t.Errorf("%s: %d candidates to load first of %d, want one of %d", c.name, loads, len(got), len(cands))
		}
	}
	if CUDAMajorOf("/x/nvidia/cu13/lib/libnvrtc.so.13") != 13 || CUDAMajorOf("/y/libnvrtc.so.11.2") != 11 || CUDAMajorOf("/z/nvidia/cudnn/lib/libcudnn.so.9") != 0 {
		t.Error("CUDAMajorOf misreads a soname, the cu13 wheels' directory, or takes cuDNN's own version for a CUDA major")
	}
}
