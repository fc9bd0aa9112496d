package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"cnntime/predictor"
)

// predict --json writes hundreds of millions of rows; encoding/json, which finds each
// field by reflection and builds every row in a buffer of its own before indenting it,
// took ten times the CSV's time. The rows are written here field by field instead, byte
// for byte what encoding/json writes with WriteJSON's indentation inside the array
// (TestPredictRowJSONIsEncodingJSON holds the two to that on random rows of every field).

// jsonRows writes rows as one indented JSON array (WriteJSON's layout), a row at a time.
type jsonRows struct{}

func (jsonRows) header() []byte { return []byte("[") }

// first drops the comma before the array's first row.
func (jsonRows) first(text []byte) []byte { return text[1:] }

func (jsonRows) footer(empty bool) []byte {
	if empty {
		return []byte("]\n")
	}
	return []byte("\n]\n")
}

// curve appends every point of c as a row of predict --json.
func (jsonRows) curve(b []byte, c *predictor.Curve) ([]byte, error) {
	var (
		enc jsonRowEncoder
		row PredictRow
		v   pointValues
	)
	for i := range c.Points {
		fillRow(&row, &v, c, &c.Points[i])
		b = append(b, ",\n  "...)
		var err error
		if b, err = enc.appendRow(b, &row); err != nil { // a number that is not finite: JSON has none
			return b, notFinite(c, err)
		}
	}
	return b, nil
}

// notFinite is the error of a prediction that JSON cannot hold (err is encoding/json's
// for +Inf or NaN): the flags' ranges keep every figure finite, so it is a bug.
func notFinite(c *predictor.Curve, err error) error {
	return fmt.Errorf("a prediction of %s on %s is not a finite number (%v), which JSON cannot hold: this is a bug in cnntime; please report it with the command you ran", c.Model, c.Machine, err)
}

// jsonRowEncoder writes PredictRows; it keeps the text of the last network and CPU it
// wrote, which every row of a curve shares.
type jsonRowEncoder struct {
	network, host         any
	networkText, hostText []byte
	texts                 [jsonTextFields]jsonText
}

// jsonTextFields counts the text fields of a row (appendRow numbers them).
const jsonTextFields = 21

// jsonText is a text field's last value and how it was written: most are the same
// on every row of a curve, and a string compared with itself costs nothing.
type jsonText struct {
	s    string
	text []byte
}

// str appends key and s (jsonString), text field i of the row.
func (e *jsonRowEncoder) str(b []byte, i int, key, s string) []byte {
	t := &e.texts[i]
	if t.text == nil || t.s != s {
		t.s, t.text = s, jsonString(t.text[:0], "", s)
	}
	b = append(b, key...)
	return append(b, t.text...)
}

// strOmitEmpty is str for a field tagged omitempty.
func (e *jsonRowEncoder) strOmitEmpty(b []byte, i int, key, s string) []byte {
	if s == "" {
		return b
	}
	return e.str(b, i, key, s)
}

// Each field of a row starts on a line of its own, indented as WriteJSON indents an
// object inside the array.
const jsonFieldIndent = "\n    "

// appendRow appends r as encoding/json writes it indented inside the array: "{", its
// fields one a line, "}" at the array's indentation, no newline after.
func (e *jsonRowEncoder) appendRow(b []byte, r *PredictRow) ([]byte, error) {
	var err error
	b = append(b, '{')
	b = e.str(b, 0, jsonFieldIndent+`"model": `, r.Model)
	b = e.str(b, 1, `,`+jsonFieldIndent+`"machine": `, r.Machine)
	if r.Device != "" {
		b = e.str(b, 2, `,`+jsonFieldIndent+`"device": `, r.Device)
	}
	if r.GPU != "" {
		b = e.str(b, 2, `,`+jsonFieldIndent+`"gpu": `, r.GPU)
	}
	if r.GPUCount != 0 {
		b = jsonInt(b, `,`+jsonFieldIndent+`"gpu_count": `, r.GPUCount)
	}
	b = jsonInt(b, `,`+jsonFieldIndent+`"batch": `, r.Batch)
	b = e.str(b, 3, `,`+jsonFieldIndent+`"precision": `, r.Precision)
	for _, f := range [...]struct {
		key    string
		x      *float64
		digits int
	}{
		{`,` + jsonFieldIndent + `"iter_ms": `, r.IterMS, 3}, {`,` + jsonFieldIndent + `"images_per_s": `, r.ImagesPerS, 1},
		{`,` + jsonFieldIndent + `"epoch_s": `, r.EpochS, 1}, {`,` + jsonFieldIndent + `"total_s": `, r.TotalS, 1},
		{`,` + jsonFieldIndent + `"cost_usd": `, r.CostUSD, 4}, {`,` + jsonFieldIndent + `"energy_kwh": `, r.EnergyKWh, 4},
	} {
		if b, err = jsonFloatOrNull(b, f.key, f.x, f.digits); err != nil {
			return b, err
		}
	}
	if b, err = jsonFloat(b, `,`+jsonFieldIndent+`"memory_gb": `, r.MemoryGB, 3); err != nil {
		return b, err
	}
	b = jsonBool(b, `,`+jsonFieldIndent+`"fits": `, r.Fits)
	b = e.str(b, 4, `,`+jsonFieldIndent+`"source": `, r.Source)
	if b, err = jsonFloatOrNull(b, `,`+jsonFieldIndent+`"error_pct": `, r.ErrorPct, 1); err != nil {
		return b, err
	}
	if r.AnchoredTo != 0 {
		b = jsonInt(b, `,`+jsonFieldIndent+`"anchored_to": `, r.AnchoredTo)
	}
	if r.Nodes != 0 {
		b = jsonInt(b, `,`+jsonFieldIndent+`"nodes": `, r.Nodes)
	}
	if r.Network != nil {
		if b, err = e.appendNested(b, `,`+jsonFieldIndent+`"network": `, r.Network, &e.network, &e.networkText); err != nil {
			return b, err
		}
	}
	b = jsonInt(b, `,`+jsonFieldIndent+`"input": `, r.Input)
	b = e.str(b, 5, `,`+jsonFieldIndent+`"loader": `, r.Loader)
	if r.Workers != 0 {
		b = jsonInt(b, `,`+jsonFieldIndent+`"workers": `, r.Workers)
	}
	if b, err = jsonFloatOrNull(b, `,`+jsonFieldIndent+`"loader_images_per_s": `, r.LoaderImagesPerS, 1); err != nil {
		return b, err
	}
	b = e.strOmitEmpty(b, 6, `,`+jsonFieldIndent+`"bound": `, r.Bound)
	b = e.strOmitEmpty(b, 7, `,`+jsonFieldIndent+`"memory_format": `, r.MemoryFormat)
	b = e.strOmitEmpty(b, 8, `,`+jsonFieldIndent+`"script": `, r.Script)
	if b, err = jsonFloatOrNull(b, `,`+jsonFieldIndent+`"script_ms": `, r.ScriptMS, 3); err != nil {
		return b, err
	}
	b = e.strOmitEmpty(b, 9, `,`+jsonFieldIndent+`"framework": `, r.Framework)
	b = e.str(b, 20, `,`+jsonFieldIndent+`"software": `, r.Software)
	if r.Host != nil {
		if b, err = e.appendNested(b, `,`+jsonFieldIndent+`"host": `, r.Host, &e.host, &e.hostText); err != nil {
			return b, err
		}
	}
	if r.HostErrorPct != nil {
		if b, err = jsonFloat(b, `,`+jsonFieldIndent+`"host_error_pct": `, *r.HostErrorPct, 1); err != nil {
			return b, err
		}
	}
	if r.HostSlowPct != nil {
		if b, err = jsonFloat(b, `,`+jsonFieldIndent+`"host_slow_pct": `, *r.HostSlowPct, 1); err != nil {
			return b, err
		}
	}
	b = e.strOmitEmpty(b, 10, `,`+jsonFieldIndent+`"backend": `, r.Backend)
	if b, err = jsonFloatOrNull(b, `,`+jsonFieldIndent+`"price_usd_per_hour": `, r.PriceUSDPerHour, 4); err != nil {
		return b, err
	}
	b = e.strOmitEmpty(b, 11, `,`+jsonFieldIndent+`"price_kind": `, r.PriceKind)
	b = e.strOmitEmpty(b, 12, `,`+jsonFieldIndent+`"price_region": `, r.PriceRegion)
	b = e.strOmitEmpty(b, 13, `,`+jsonFieldIndent+`"price_date": `, r.PriceDate)
	b = append(b, `,`+jsonFieldIndent+`"price_age_days": `...)
	if r.PriceAgeDays == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*r.PriceAgeDays), 10)
	}
	if r.PriceStale {
		b = jsonBool(b, `,`+jsonFieldIndent+`"price_stale": `, true)
	}
	b = e.strOmitEmpty(b, 14, `,`+jsonFieldIndent+`"price_note": `, r.PriceNote)
	b = e.strOmitEmpty(b, 15, `,`+jsonFieldIndent+`"gpu_source": `, r.GPUSource)
	if b, err = jsonFloatOrNull(b, `,`+jsonFieldIndent+`"epochs": `, r.Epochs, 2); err != nil {
		return b, err
	}
	b = e.str(b, 16, `,`+jsonFieldIndent+`"epochs_source": `, r.EpochsSource)
	b = e.strOmitEmpty(b, 19, `,`+jsonFieldIndent+`"target": `, r.Target)
	if r.EpochsErrorPct != nil {
		if b, err = jsonFloat(b, `,`+jsonFieldIndent+`"epochs_error_pct": `, *r.EpochsErrorPct, 1); err != nil {
			return b, err
		}
	}
	if r.RunErrorPct != nil {
		if b, err = jsonFloat(b, `,`+jsonFieldIndent+`"run_error_pct": `, *r.RunErrorPct, 1); err != nil {
			return b, err
		}
	}
	b = e.strOmitEmpty(b, 17, `,`+jsonFieldIndent+`"regime": `, r.Regime)
	b = e.strOmitEmpty(b, 18, `,`+jsonFieldIndent+`"regime_note": `, r.RegimeNote)
	return append(b, "\n  }"...), nil
}

// appendNested appends key and v, an object inside the row, as encoding/json writes it
// at that depth; the text of the last v (a pointer every row of a curve shares) is kept
// in last and text.
func (e *jsonRowEncoder) appendNested(b []byte, key string, v any, last *any, text *[]byte) ([]byte, error) {
	if *last != v {
		t, err := json.MarshalIndent(v, "    ", "  ")
		if err != nil {
			return b, err
		}
		*last, *text = v, t
	}
	b = append(b, key...)
	return append(b, *text...), nil
}

// jsonString appends key and s as a JSON string as encoding/json writes it: a string of
// printable ASCII that needs no escape as it is, any other through encoding/json itself
// (its escapes: quotes, backslashes, control characters, <, > and & for HTML, U+2028
// and U+2029, invalid UTF-8).
func jsonString(b []byte, key, s string) []byte {
	b = append(b, key...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func jsonInt(b []byte, key string, n int) []byte {
	b = append(b, key...)
	return strconv.AppendInt(b, int64(n), 10)
}

func jsonBool(b []byte, key string, v bool) []byte {
	b = append(b, key...)
	return strconv.AppendBool(b, v)
}

// jsonFloatOrNull appends key and *x, or null for nil.
func jsonFloatOrNull(b []byte, key string, x *float64, digits int) ([]byte, error) {
	if x == nil {
		b = append(b, key...)
		return append(b, "null"...), nil
	}
	return jsonFloat(b, key, *x, digits)
}

// jsonFloat appends key and x as encoding/json writes a float64; digits says how x was
// rounded (a hint: any x is written right). Infinities and NaN are encoding/json's
// UnsupportedValueError.
func jsonFloat(b []byte, key string, x float64, digits int) ([]byte, error) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return b, &json.UnsupportedValueError{Value: reflect.ValueOf(x), Str: strconv.FormatFloat(x, 'g', -1, 64)}
	}
	b = append(b, key...)
	if ax := math.Abs(x); ax >= 1e-4 && ax < 1e6 {
		return appendRounded(b, x, digits), nil // %g's shortest, which is %f's there
	}
	// encoding/json: the shortest %f, or %e below 1e-6 and from 1e21 on with a
	// one-digit exponent kept short (1e-07 is written 1e-7).
	format := byte('f')
	if ax := math.Abs(x); ax != 0 && (ax < 1e-6 || ax >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, x, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
