package views

import (
	"os"
	"strings"
	"testing"
)

// Every section the Help menu opens is a heading of its page in docs/, with text under
// it: a page renamed or a heading reworded would leave the menu item empty.
func TestManualSectionsAreInTheDocs(t *testing.T) {
	for _, sec := range manualSections {
		md, err := os.ReadFile("../" + sec.page)
		if err != nil {
			t.Errorf("the Help menu opens %s, which is missing: %v", sec.page, err)
			continue
		}
		body := readmeSection(string(md), sec.heading)
		if len(strings.Fields(body)) < 50 {
			t.Errorf("%s has no section %q (or almost nothing under it: %q)", sec.page, sec.heading, body)
		}
	}
}
