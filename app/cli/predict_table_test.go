package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
)

// tableByTabwriter is predict's table as it was printed before it streamed: each row
// made with rowOf and predictTableRow, aligned by app.Table (a tabwriter) in blocks
// flushed after the curve that reaches 4096 rows.
func tableByTabwriter(t *testing.T, env *Env, eng *app.Engine, q app.Query) string {
	t.Helper()
	var out bytes.Buffer
	toTarget := q.ToTarget()
	tab := app.NewTable(&out, predictTableHeader(toTarget)...)
	pending := 0
	err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) ([]PredictRow, error) {
		rows := make([]PredictRow, len(c.Points))
		for i, p := range c.Points {
			rows[i] = rowOf(c, p)
		}
		return rows, nil
	}, func(rows []PredictRow) error {
		for _, r := range rows {
			predictTableRow(tab, r, toTarget)
		}
		if pending += len(rows); pending >= 4096 {
			pending = 0
			return tab.Flush()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tab.Flush()
	return out.String()
}

// The streamed table is, byte for byte, the table app.Table printed for the same rows:
// across blocks, with rows that do not fit, to a target, over several nodes, with a
// control character in a machine's name escaped.
func TestPredictTableStreamsWhatTheTabwriterPrinted(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache.db")
	if code, _, errOut := runCLIWithDB(t, cache, "machine", "add", "--name", "box", "--gpu", "t4", "--price", "0.5", "--region", "lab\x1b[31m"); code != 0 {
		t.Fatal(errOut)
	}
	for _, args := range [][]string{
		{"--model", "resnet18,vgg16,mobilenet_v2", "--machine", "aws/p3.2xlarge,gcp/a2-highgpu-1g,user/box", "--batches", "1-600"},
		{"--model", "resnet50", "--machine", "aws/p3.2xlarge,user/box", "--batches", "1-2048", "--train", "to-target"},
		{"--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batches", "8-40,4096", "--nodes", "4"},
		{"--model", "resnet50", "--gpu", "t4", "--batches", "16-32"},
	} {
		var stdout, stderr bytes.Buffer
		env := &Env{Ctx: context.Background(), Stdout: &stdout, Stderr: &stderr, DBPath: cache}
		_, q, eng, err := predictSetup(env, commandIndex()["predict"], args, true)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		want := tableByTabwriter(t, env, eng, q)
		if err := streamPredictTable(env, eng, q); err != nil {
			t.Fatal(err)
		}
		got := stdout.String()
		if !strings.HasPrefix(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%v: the streamed table differs from the tabwriter's at byte %d:\n got %q\nwant %q", args, i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
		}
		if strings.Count(want, "\n") < 10 {
			t.Errorf("%v: only %d lines", args, strings.Count(want, "\n"))
		}
		env.closeCache()
	}
}

// predict --json of every zoo model on every catalog machine at 1–65,536 (300 million
// rows, some 450 GB) is refused before anything is predicted, saying the size; at 1–1024
// it streams.
func TestPredictJSONRefusesWhatNoReaderTakesIn(t *testing.T) {
	cat, err := app.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var machines []string
	for _, m := range cat.Machines() {
		machines = append(machines, m.ID)
	}
	models := strings.Join(cnn.Names(), ",")
	code, out, errOut := runExportCLI(t, "--json", "predict", "--model", models, "--machine", strings.Join(machines, ","), "--batches", "1-65536")
	if code != 2 || out != "" || !strings.Contains(errOut, "--json would write about ") || !strings.Contains(errOut, "GB (") || !strings.Contains(errOut, "or write --csv (about ") {
		t.Errorf("exit %d, stdout %.100q, stderr %q; want a refusal saying the size", code, out, errOut)
	}
	if err := checkJSONSize(app.Query{Models: cnn.Names(), Targets: make([]app.Target, len(machines)), Batches: make([]int, 1024)}); err != nil {
		t.Errorf("at 1–1024: %v; want it to stream", err)
	}
}
