package db

import (
	"context"
	"io"
	"strings"
	"testing"
)

// endless is a reader that never ends: every byte is b (/dev/zero when b is 0).
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// A CSV holding what no measurement CSV holds is refused at the line at fault, read
// as a stream (an endless file is refused, not read into memory), and the cache is
// not changed.
func TestImportCSVRefusesWhatNoMeasurementCSVHolds(t *testing.T) {
	const steps = "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source\n"
	const good = "t4,resnet50,32,amp,pytorch,101,1,ok,lab\n"
	const kernels = "device,config,batch_size,precision,phase,median_ms,status\n"
	tests := []struct {
		name    string
		in      io.Reader
		wantErr string
	}{
		{"/dev/zero", endless(0), "line 1 holds a NUL byte"},
		{"endless line", endless('a'), "line 1 is longer than 1 MiB"},
		{"endless line after a header", io.MultiReader(strings.NewReader(steps+good), endless('a')), "line 3 is longer than 1 MiB"},
		{"NUL in a model name", strings.NewReader(steps + good + "t4,res\x00net,32,amp,pytorch,101,1,ok,lab\n"), "line 3 holds a NUL byte"},
		{"invalid UTF-8", strings.NewReader(steps + good + "t4,res\xffnet,32,amp,pytorch,101,1,ok,lab\n"), "line 3: model is not UTF-8 text"},
		{"ANSI escape", strings.NewReader(steps + "t4,\x1b[2Jresnet,32,amp,pytorch,101,1,ok,lab\n"), "line 2: model holds the control character U+001B"},
		{"batch 1e12", strings.NewReader(steps + "t4,resnet50,1000000000000,amp,pytorch,101,1,ok,lab\n"), "batch_size 1000000000000 is above 65536"},
		{"batch 70000", strings.NewReader(steps + "t4,resnet50,70000,amp,pytorch,101,1,ok,lab\n"), "line 2: batch_size 70000 is above 65536"},
		{"unknown GPU", strings.NewReader(steps + good + "t5,resnet50,32,amp,pytorch,101,1,ok,lab\n"), `line 3: gpu "t5" is not a GPU of the catalog`},
		{"unknown gpu: device of a kernel", strings.NewReader(kernels + "gpu:h1000,conv/1,8,fp32,fwd,1,ok\n"), `line 2: device "h1000" is not a GPU of the catalog`},
		{"kernel batch 1e12", strings.NewReader(kernels + "gpu:t4,conv/1,1000000000000,fp32,fwd,1,ok\n"), "batch_size 1000000000000 is above 65536"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			d := openTemp(t)
			d.SetImportChecks(ImportChecks{GPU: func(id string) bool { return id == "t4" }})
			_, err := d.ImportCSV(ctx, tc.in, "in.csv")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "the cache was not changed") {
				t.Fatalf("ImportCSV error = %v, want one containing %q", err, tc.wantErr)
			}
			info, err := d.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Steps != 0 || info.Measurements != 0 || len(info.Devices) != 0 {
				t.Errorf("the refused import left %d steps, %d measurements, %d devices", info.Steps, info.Measurements, len(info.Devices))
			}
		})
	}
}
