package libfind

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCuDNNSubLibraries(t *testing.T) {
	v9 := t.TempDir()
	touch(t, v9, "libcudnn.so.9", "libcudnn_ops.so.9", "libcudnn_graph.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
		"libcudnn_engines_precompiled.so.9", "libcudnn_heuristic.so.9")
	v8 := t.TempDir()
	touch(t, v8, "libcudnn.so.8", "libcudnn_cnn_train.so.8", "libcudnn_ops_infer.so.8", "libcudnn_ops_train.so.8", "libcudnn_cnn_infer.so.8")
	// A later cuDNN 9: sub-libraries the list above does not know, some without their
	// soname link, a stray cuDNN 8 library, libcudnn.so a link to the versioned file.
	v9new := t.TempDir()
	touch(t, v9new, "libcudnn.so.9.10.2", "libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_graph.so.9.10.2", "libcudnn_ops.so.9",
		"libcudnn_cnn.so.9.10.2", "libcudnn_engines_runtime_compiled.so.9", "libcudnn_engines_fusion.so.9",
		"libcudnn_heuristic_v2.so.9", "libcudnn_ops_infer.so.8", "libcudnn_notes.txt")
	if err := os.Symlink("libcudnn.so.9.10.2", filepath.Join(v9new, "libcudnn.so")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		want       []string
	}{
		{"soname through the loader", "libcudnn.so.9", nil},
		{"cuDNN 9 directory, graph first", filepath.Join(v9, "libcudnn.so.9"), []string{
			filepath.Join(v9, "libcudnn_graph.so.9"), filepath.Join(v9, "libcudnn_engines_precompiled.so.9"),
			filepath.Join(v9, "libcudnn_heuristic.so.9"), filepath.Join(v9, "libcudnn_ops.so.9"),
			filepath.Join(v9, "libcudnn_cnn.so.9"), filepath.Join(v9, "libcudnn_adv.so.9")}},
		{"cuDNN 8 directory, inference before training", filepath.Join(v8, "libcudnn.so.8"), []string{
			filepath.Join(v8, "libcudnn_ops_infer.so.8"), filepath.Join(v8, "libcudnn_ops_train.so.8"),
			filepath.Join(v8, "libcudnn_cnn_infer.so.8"), filepath.Join(v8, "libcudnn_cnn_train.so.8")}},
		{"cuDNN 8 name in a cuDNN 9 directory", filepath.Join(v9, "libcudnn.so.8"), nil},
		{"unversioned name finds whichever set is there", filepath.Join(v8, "libcudnn.so"), []string{
			filepath.Join(v8, "libcudnn_ops_infer.so.8"), filepath.Join(v8, "libcudnn_ops_train.so.8"),
			filepath.Join(v8, "libcudnn_cnn_infer.so.8"), filepath.Join(v8, "libcudnn_cnn_train.so.8")}},
		{"a newer cuDNN 9: what is there, sonames, new ones after the known", filepath.Join(v9new, "libcudnn.so.9"), []string{
			filepath.Join(v9new, "libcudnn_graph.so.9"), filepath.Join(v9new, "libcudnn_engines_runtime_compiled.so.9"),
			filepath.Join(v9new, "libcudnn_ops.so.9"), filepath.Join(v9new, "libcudnn_cnn.so.9.10.2"),
			filepath.Join(v9new, "libcudnn_engines_fusion.so.9"), filepath.Join(v9new, "libcudnn_heuristic_v2.so.9")}},
		{"libcudnn.so links to the cuDNN 9 library", filepath.Join(v9new, "libcudnn.so"), []string{
			filepath.Join(v9new, "libcudnn_graph.so.9"), filepath.Join(v9new, "libcudnn_engines_runtime_compiled.so.9"),
			filepath.Join(v9new, "libcudnn_ops.so.9"), filepath.Join(v9new, "libcudnn_cnn.so.9.10.2"),
			filepath.Join(v9new, "libcudnn_engines_fusion.so.9"), filepath.Join(v9new, "libcudnn_heuristic_v2.so.9")}},
	} {
		if got := CuDNNSubLibraries(c.path); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: CuDNNSubLibraries(%s) = %v, want %v", c.name, c.path, got, c.want)
		}
	}
}

func TestKernelTargets(t *testing.T) {
	for _, c := range []struct {
		major, minor, nvrtc int
		want                []Target
	}{
		{9, 0, 12, []Target{{"--gpu-architecture=sm_90", true}, {"--gpu-architecture=compute_50", false}}},
		{9, 0, 13, []Target{{"--gpu-architecture=sm_90", true}, {"--gpu-architecture=compute_75", false}}},
		{8, 6, 11, []Target{{"--gpu-architecture=sm_86", true}, {"--gpu-architecture=compute_35", false}}},
		{6, 0, 13, nil}, // CUDA 13 cannot compile for Pascal
		{6, 1, 12, []Target{{"--gpu-architecture=sm_61", true}, {"--gpu-architecture=compute_50", false}}},
	} {
		if got := KernelTargets(c.major, c.minor, c.nvrtc); !reflect.DeepEqual(got, c.want) {
			t.Errorf("KernelTargets(%d.%d, NVRTC %d) = %v, want %v", c.major, c.minor, c.nvrtc, got, c.want)
		}
	}
}
