package cnn

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The documentation's count of the zoo is the zoo's: the README once said 69 where
// cnntime models lists 68.
func TestREADMECountsTheZoo(t *testing.T) {
	models, err := os.ReadFile("../../docs/models.md")
	if err != nil {
		t.Skip("no docs beside the module:", err)
	}
	m := regexp.MustCompile(`classification CNN by torchvision's name \((\d+) of them`).FindSubmatch(models)
	if m == nil {
		t.Fatal("docs/models.md no longer says how many CNNs the zoo has (\"(N of them\" in its zoo section)")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != len(Names()) {
		t.Errorf("docs/models.md says the zoo has %d CNNs; Names lists %d", n, len(Names()))
	}
	// The README and the manual's index name the count too.
	for _, page := range []string{"../../README.md", "../../docs/README.md"} {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`the (\d+) torchvision CNNs`).FindSubmatch(text)
		if m == nil {
			t.Errorf("%s no longer says \"the N torchvision CNNs\"", page)
		} else if n, _ := strconv.Atoi(string(m[1])); n != len(Names()) {
			t.Errorf("%s says the zoo has %d CNNs; Names lists %d", page, n, len(Names()))
		}
	}
}
