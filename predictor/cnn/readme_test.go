package cnn

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The README's count of the zoo is the zoo's: it once said 69 where cnntime models
// lists 68.
func TestREADMECountsTheZoo(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Skip("no README beside the module:", err)
	}
	m := regexp.MustCompile(`classification CNN by torchvision's name \((\d+) of them`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README no longer says how many CNNs the zoo has (\"(N of them\" in its models section)")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != len(Names()) {
		t.Errorf("the README says the zoo has %d CNNs; Names lists %d", n, len(Names()))
	}
}
