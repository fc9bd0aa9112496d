package published

import (
	"strings"
	"testing"
)

// Read refuses what a figures file must not hold and says the file, the line
// and the column; a good file's rows reach parse in order, an optional column read
// where the header has it.
func TestRead(t *testing.T) {
	const header = "source,batch,set,note\n"
	for _, tc := range []struct {
		name, data string
		want       string // the error; "" reads the file
		rows       string // "source batch note" of each row parsed, ";"-separated
	}{
		{"good rows", header + "a,64,tuning,first\nb,128,held out,\n", "", "a 64 first;b 128 "},
		{"a missing column", "source,set\na,tuning\n", `figures.csv: the header lacks column "batch"`, ""},
		{"another set", header + "a,64,tuning,\nb,64,test,\n", `figures.csv line 3, set: "test" is neither tuning nor held out`, ""},
		{"a number that is not", header + "a,abc,tuning,\n", `figures.csv line 2, batch: "abc" is not a positive number`, ""},
		{"a negative number", header + "a,-8,tuning,\n", `figures.csv line 2, batch: "-8" is not a positive number`, ""},
		{"an infinite number", header + "a,Inf,tuning,\n", `figures.csv line 2, batch: "Inf" is not a positive number`, ""},
		{"parse's own check", header + "a,64,tuning,\n,64,tuning,\n", "figures.csv line 3: a row needs its source", ""},
		{"a ragged row", header + "a,64\n", "figures.csv: record on line 2: wrong number of fields", ""},
	} {
		var rows []string
		err := Read("figures.csv", []byte(tc.data), []string{"source", "batch", "set"}, func(f *Row) error {
			if f.Num("batch", true); f.Err() != nil {
				return f.Err()
			}
			if f.Text("source") == "" {
				return f.Errorf("a row needs its source")
			}
			rows = append(rows, strings.Join([]string{f.Text("source"), f.Text("batch"), f.Text("note")}, " "))
			return nil
		})
		switch {
		case tc.want == "" && (err != nil || strings.Join(rows, ";") != tc.rows):
			t.Errorf("%s: rows %q, error %v; want %q", tc.name, rows, err, tc.rows)
		case tc.want != "" && (err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: error %v; want %q", tc.name, err, tc.want)
		}
	}
}
