package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/predictor"
)

// encodingJSONRow is a row of predict --json as encoding/json writes it (how predict
// --json wrote every row before it wrote them field by field): an Encoder indented as
// WriteJSON indents an object in the array, without its newline.
func encodingJSONRow(r *PredictRow) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodingJSONCurve is a curve's rows as predict --json wrote them with encoding/json.
func encodingJSONCurve(c *predictor.Curve) ([]byte, error) {
	var b []byte
	for _, p := range c.Points {
		r := rowOf(c, p)
		text, err := encodingJSONRow(&r)
		if err != nil {
			return b, notFinite(c, err)
		}
		b = append(append(b, ",\n  "...), text...)
	}
	return b, nil
}

// Texts that need JSON's escapes, and some that do not.
var jsonTexts = []string{"", "resnet50", "aws/p3.2xlarge", "a,b", " lead", "=cmd|x", `quote " and \ backslash`,
	"<script>&amp;</script>", "line\nbreak\ttab\rreturn\bback\fform", "nul \x00 esc \x1b[31m del \x7f", "é ü 中文 🙂",
	"\u2028 line and \u2029 paragraph separators", "invalid \xff\xfe UTF-8 \xc3", "\u202e right to left", "~`!@#$%^*()_+{}|:?[];',./"}

// randomValue sets v, of any type a PredictRow holds, to a random value: texts from
// jsonTexts, numbers of every magnitude JSON writes in both of its forms, nil or not.
func randomValue(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(jsonTexts[rng.IntN(len(jsonTexts))])
	case reflect.Int:
		v.SetInt([]int64{0, 1, -1, 7, 224, 1 << 20, math.MaxInt32, -math.MaxInt64, math.MaxInt64}[rng.IntN(9)] + int64(rng.IntN(3)))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Float64:
		var x float64
		switch rng.IntN(6) {
		case 0: // as rowOf rounds them
			x = round(math.Exp(rng.Float64()*30-10), rng.IntN(5))
		case 1: // any magnitude, both of JSON's forms and the edges between them
			x = math.Exp(rng.Float64()*1400 - 700)
		case 2:
			x = []float64{0, math.Copysign(0, -1), 1e-6, 9.99999e-7, 1e21, 9.99999e20, 1e-4, 1e6, 5e-324, math.MaxFloat64, 0.1, 123456.789}[rng.IntN(12)]
		case 3:
			x = float64(rng.IntN(100000)) / 100
		default:
			x = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(12)-4))
		}
		if rng.IntN(2) == 0 {
			x = -x
		}
		v.SetFloat(x)
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		randomValue(rng, p.Elem())
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			randomValue(rng, v.Field(i))
		}
	default:
		panic("randomValue: a PredictRow field of kind " + v.Kind().String() + ": teach this test (and predict_json.go) about it")
	}
}

// The rows predict --json writes field by field are, byte for byte, what encoding/json
// writes: on random rows that set every field of PredictRow (a field added to it and not
// to the writer fails here), with texts that need every escape and numbers of every
// magnitude; and a number that is not finite is the same error.
func TestPredictRowJSONIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var enc jsonRowEncoder
	for i := range 100000 {
		var r PredictRow
		randomValue(rng, reflect.ValueOf(&r).Elem())
		want, werr := encodingJSONRow(&r)
		got, gerr := enc.appendRow(nil, &r)
		if werr != nil || gerr != nil {
			if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
				t.Fatalf("row %d: encoding/json's error %v, this writer's %v", i, werr, gerr)
			}
			continue
		}
		if !bytes.Equal(got, want) {
			j := 0
			for j < len(got) && j < len(want) && got[j] == want[j] {
				j++
			}
			t.Fatalf("row %d differs at byte %d:\n got %q\nwant %q", i, j, got[max(0, j-60):min(len(got), j+60)], want[max(0, j-60):min(len(want), j+60)])
		}
	}

	// Every float field, one at a time, not finite: the row is refused with
	// encoding/json's own error.
	for _, bad := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		r := fullRow()
		fields := 0
		var walk func(v reflect.Value)
		walk = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.Float64:
				fields++
				old := v.Float()
				v.SetFloat(bad)
				_, werr := encodingJSONRow(&r)
				_, gerr := enc.appendRow(nil, &r)
				if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
					t.Errorf("%v in a float field: encoding/json says %v, this writer %v", bad, werr, gerr)
				}
				v.SetFloat(old)
			case reflect.Pointer:
				if !v.IsNil() {
					walk(v.Elem())
				}
			case reflect.Struct:
				for i := range v.NumField() {
					walk(v.Field(i))
				}
			}
		}
		walk(reflect.ValueOf(&r).Elem())
		if fields < 20 {
			t.Errorf("%v: %d float fields tried", bad, fields)
		}
	}
}

// fullRow is a PredictRow with every pointer set (every float field present).
func fullRow() PredictRow {
	var r PredictRow
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			p := reflect.New(v.Type().Elem())
			fill(p.Elem())
			v.Set(p)
		case reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i))
			}
		case reflect.Float64:
			v.SetFloat(1.5)
		case reflect.Int:
			v.SetInt(3)
		case reflect.String:
			v.SetString("x")
		}
	}
	fill(reflect.ValueOf(&r).Elem())
	return r
}

// predict --json of real predictions is what encoding/json wrote: rows that fit and
// rows that do not, to a target (epochs' errors, optimizer regimes), several nodes (a
// network), a measured workstation, and a machine whose region needs escapes.
func TestPredictJSONStreamsWhatEncodingJSONWrote(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache.db")
	if code, _, errOut := runCLIWithDB(t, cache, "machine", "add", "--name", "box", "--gpu", "t4", "--price", "0.5", "--region", "lab<&>\"\x1b[31m\u2028"); code != 0 {
		t.Fatal(errOut)
	}
	rows := 0
	for _, args := range [][]string{
		{"--model", "resnet18,vgg16,mobilenet_v2", "--machine", "aws/p3.2xlarge,gcp/a2-highgpu-1g", "--batches", "1-600"},
		{"--model", "resnet50", "--machine", "aws/p3.2xlarge,user/box", "--batches", "1-2048", "--train", "to-target"},
		{"--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batches", "8-40,4096", "--nodes", "4"},
		{"--model", "resnet50", "--gpu", "t4", "--batches", "16-32", "--spot"},
		{"--model", "efficientnet_b0", "--machine", "aws/g5.xlarge", "--batches", "1-64", "--dataset", "cifar-10", "--train", "to-target"},
	} {
		var stdout, stderr bytes.Buffer
		env := &Env{Ctx: context.Background(), Stdout: &stdout, Stderr: &stderr, DBPath: cache}
		_, q, eng, err := predictSetup(env, commandIndex()["predict"], args, true)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var want bytes.Buffer
		want.WriteString("[")
		err = app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) ([]byte, error) {
			return encodingJSONCurve(c)
		}, func(text []byte) error {
			if want.Len() == 1 {
				text = text[1:]
			}
			want.Write(text)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want.WriteString("\n]\n")
		if err := streamPredict(env, eng, q, jsonRows{}); err != nil {
			t.Fatal(err)
		}
		if got := stdout.String(); got != want.String() {
			i := 0
			for i < len(got) && i < want.Len() && got[i] == want.String()[i] {
				i++
			}
			t.Errorf("%v: predict --json differs from encoding/json's at byte %d:\n got %q\nwant %q", args, i, got[max(0, i-80):min(len(got), i+80)], want.String()[max(0, i-80):min(want.Len(), i+80)])
		}
		var parsed []PredictRow
		if err := json.Unmarshal(stdout.Bytes(), &parsed); err != nil {
			t.Errorf("%v: not JSON: %v", args, err)
		}
		rows += len(parsed)
		if strings.Contains(strings.Join(args, " "), "user/box") && !strings.Contains(stdout.String(), `"price_region": "lab\u003c\u0026\u003e\"\u001b[31m\u2028"`) {
			t.Errorf("%v: the machine's region is not escaped as encoding/json escapes it", args)
		}
		env.closeCache()
	}
	if rows < 3000 {
		t.Errorf("%d rows compared", rows)
	}
}
