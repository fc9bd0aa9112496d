package app

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestRunDataFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    RunData
		wantErr string
	}{
		{nil, RunData{Dataset: "imagenet-1k", Loader: "pytorch", MemoryFormat: "nchw"}, ""},
		{[]string{"--dataset", "CIFAR-10", "--loader", "synthetic", "--memory-format", "nhwc"}, RunData{Dataset: "cifar-10", Loader: "synthetic", MemoryFormat: "nhwc"}, ""},
		{[]string{"--input", "160", "--classes", "200", "--workers", "6", "--loader", "dali"}, RunData{Dataset: "imagenet-1k", Input: 160, Classes: 200, Loader: "dali", Workers: 6, MemoryFormat: "nchw"}, ""},
		{[]string{"--dataset", "mnist"}, RunData{}, "--dataset: unknown dataset \"mnist\""},
		{[]string{"--loader", "tfdata"}, RunData{}, "--loader: unknown loader"},
		{[]string{"--memory-format", "chwn"}, RunData{}, "--memory-format: unknown memory format"},
		{[]string{"--input", "-3"}, RunData{}, "--input -3"},
		{[]string{"--workers", "-1"}, RunData{}, "--workers -1"},
		{[]string{"--input", "9000"}, RunData{}, "--input: input size 9000"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var rf runDataFlags
		rf.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := rf.runData()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}
