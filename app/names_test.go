package app

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"cnntime/db"
)

func TestCompleteNames(t *testing.T) {
	ctx := context.Background()
	d := openCache(t)
	if _, err := AddUserMachine(ctx, d, MachineSpec{Name: "lab-box", GPUID: "t4", GPUCount: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind, word string
		want       []string // every one offered
		not        []string // none of these
	}{
		{ModelNames, "resnet1", []string{"resnet101", "resnet152", "resnet18"}, []string{"resnet50"}},
		{ModelNames, "resnet50,mobilenet_v3", []string{"resnet50,mobilenet_v3_large", "resnet50,mobilenet_v3_small"}, []string{"mobilenet_v3_large"}},
		{ModelNames, "resnet18,resnet1", []string{"resnet18,resnet101"}, []string{"resnet18,resnet18"}},
		{MachineNames, "aws/p4", []string{"aws/p4d.24xlarge"}, []string{"aws/p3.2xlarge"}},
		{MachineNames, "user/", []string{"user/lab-box"}, nil},
		{GPUNames, "h1", []string{"h100-sxm", "h100-pcie"}, []string{"a100-sxm4-40gb"}},
		{RegionNames, "us-east-", []string{"us-east-1"}, []string{"us-central1"}},
	} {
		got, err := CompleteNames(ctx, d, tc.kind, tc.word)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.kind, tc.word, err)
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("CompleteNames(%s, %q) = %v, want %q among them", tc.kind, tc.word, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("CompleteNames(%s, %q) offers %q", tc.kind, tc.word, w)
			}
		}
	}
	if _, err := Names(ctx, nil, "colours"); err == nil {
		t.Error("Names of an unknown kind: no error")
	}
	if got, err := Names(ctx, nil, MachineNames); err != nil || !slices.Contains(got, "aws/p3.2xlarge") {
		t.Errorf("Names without a cache: %v, %v; want the catalog's machines", len(got), err)
	}
}

func openCache(t *testing.T) *db.DB {
	t.Helper()
	d, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
