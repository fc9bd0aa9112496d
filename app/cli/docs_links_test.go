package cli

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// docLink is one link or image of a page, as Markdown parses it.
type docLink struct {
	page, target string
}

// parsedPage is a page's links and its headings' anchors.
type parsedPage struct {
	links   []docLink
	anchors map[string]bool
}

// parseDocPage reads a page (a path from the repository's root) with goldmark: its
// links and images (code blocks and spans hold none) and the anchors GitHub gives its
// headings.
func parseDocPage(t *testing.T, page string) parsedPage {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, page))
	if err != nil {
		t.Fatal(err)
	}
	doc := goldmark.New().Parser().Parse(text.NewReader(src))
	p := parsedPage{anchors: map[string]bool{}}
	seen := map[string]int{}
	err = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			slug := githubSlug(inlineText(n, src))
			if k := seen[slug]; k > 0 {
				p.anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				p.anchors[slug] = true
			}
			seen[slug]++
		case *ast.Link:
			p.links = append(p.links, docLink{page, string(n.Destination)})
		case *ast.Image:
			p.links = append(p.links, docLink{page, string(n.Destination)})
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// inlineText is the text of a heading as GitHub reads it for its anchor: its words and
// its code spans' contents, without the Markdown around them.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		default:
			b.WriteString(inlineText(c, src))
		}
	}
	return b.String()
}

// githubSlug is the anchor GitHub gives a heading: lower case, letters, digits, '-' and
// '_' kept, spaces made '-', everything else dropped (a second heading of the same
// text gets "-1", which parseDocPage adds).
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsLinksResolve checks every relative link and image of the README and the docs
// pages: the file it names exists in the repository, and an #anchor names a heading of
// the page it points into. Links to the web are left alone.
func TestDocsLinksResolve(t *testing.T) {
	pages := map[string]parsedPage{}
	for _, page := range docPages(t) {
		pages[page] = parseDocPage(t, page)
	}
	checked := 0
	for _, page := range docPages(t) {
		for _, l := range pages[page].links {
			u, err := url.Parse(l.target)
			if err != nil {
				t.Errorf("%s: link %q does not parse: %v", page, l.target, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // the web
			}
			checked++
			target := page
			if u.Path != "" {
				target = path.Clean(path.Join(path.Dir(page), u.Path))
				if target == ".." || strings.HasPrefix(target, "../") {
					t.Errorf("%s: link %q leaves the repository", page, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(target))); err != nil {
					t.Errorf("%s: link %q: no file %s in the repository", page, l.target, target)
					continue
				}
			}
			if u.Fragment == "" {
				continue
			}
			to, ok := pages[target]
			if !ok {
				if !strings.HasSuffix(target, ".md") {
					t.Errorf("%s: link %q: an anchor into %s, which is not a Markdown page", page, l.target, target)
					continue
				}
				to = parseDocPage(t, target)
				pages[target] = to
			}
			if !to.anchors[u.Fragment] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", page, l.target, target, u.Fragment)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d relative links; the README and docs pages link to each other more than that", checked)
	}
}
