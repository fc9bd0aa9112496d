package views

import (
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// checkTree is a searchable tree of checkable items grouped under headings: the CNNs
// by family, the machines by provider. A tap on a heading opens or closes it; in the
// search field, Enter ticks the first match and Esc clears the search.
type checkTree struct {
	tree     *widget.Tree
	search   *searchEntry
	groups   []string            // headings in order
	titles   map[string]string   // heading → text shown; the heading itself when absent
	items    map[string][]string // heading → item ids
	labels   map[string]string   // item id → text shown
	shown    map[string][]string // after the search filter
	checked  map[string]bool
	filter   func(id string) bool // an extra filter (the GPU filter); nil for none
	onToggle func(id string, on bool)
	// tooltip is what hovering an item shows (its full name and facts); nil: its label.
	tooltip func(id string) string
}

const groupPrefix = "\x00group:"

func newCheckTree(placeholder string, onToggle func(id string, on bool)) *checkTree {
	ct := &checkTree{items: map[string][]string{}, labels: map[string]string{}, shown: map[string][]string{}, checked: map[string]bool{}, onToggle: onToggle}
	ct.search = newSearchEntry()
	ct.search.SetPlaceHolder(placeholder)
	ct.search.OnChanged = func(string) { ct.applyFilter() }
	ct.search.OnSubmitted = func(string) { ct.tickFirstMatch() }
	ct.tree = widget.NewTree(ct.children, func(id widget.TreeNodeID) bool { return id == "" || strings.HasPrefix(id, groupPrefix) },
		func(branch bool) fyne.CanvasObject {
			if branch {
				return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			}
			return newHoverCheck(ct)
		},
		ct.update)
	ct.tree.OnSelected = func(id widget.TreeNodeID) {
		// A tap on a heading opens or closes it; on an item's row, outside its box, it
		// ticks or unticks it. Rows are not kept selected.
		ct.tree.UnselectAll()
		if strings.HasPrefix(id, groupPrefix) {
			ct.tree.ToggleBranch(id)
			return
		}
		ct.set(id, !ct.checked[id])
	}
	return ct
}

func (ct *checkTree) children(id widget.TreeNodeID) []widget.TreeNodeID {
	if id == "" {
		var out []string
		for _, g := range ct.groups {
			if len(ct.shown[g]) > 0 {
				out = append(out, groupPrefix+g)
			}
		}
		return out
	}
	return ct.shown[strings.TrimPrefix(id, groupPrefix)]
}

func (ct *checkTree) update(id widget.TreeNodeID, branch bool, o fyne.CanvasObject) {
	if branch {
		g := strings.TrimPrefix(id, groupPrefix)
		n := 0
		for _, item := range ct.items[g] {
			if ct.checked[item] {
				n++
			}
		}
		text := g
		if t, ok := ct.titles[g]; ok {
			text = t
		}
		if n > 0 {
			text += " (" + strconv.Itoa(n) + ")"
		}
		o.(*widget.Label).SetText(text)
		return
	}
	check := o.(*hoverCheck)
	check.id = id
	check.OnChanged = nil
	// Tree rows are reused for other items: set text and state together and refresh
	// once, since SetChecked alone repaints only when the state changes.
	check.Text = ct.labels[id]
	check.Checked = ct.checked[id]
	check.Refresh()
	check.OnChanged = func(on bool) { ct.set(id, on) }
}

func (ct *checkTree) set(id string, on bool) {
	if ct.checked[id] == on {
		return
	}
	ct.checked[id] = on
	ct.tree.Refresh()
	if ct.onToggle != nil {
		ct.onToggle(id, on)
	}
}

// tickFirstMatch ticks the first item the search shows (Enter in the search field).
func (ct *checkTree) tickFirstMatch() {
	for _, g := range ct.groups {
		if ids := ct.shown[g]; len(ids) > 0 {
			ct.set(ids[0], true)
			return
		}
	}
}

// setItems replaces the tree's contents.
func (ct *checkTree) setItems(groups []string, items map[string][]string, labels map[string]string) {
	ct.groups, ct.items, ct.labels = groups, items, labels
	ct.applyFilter()
}

// setChecked marks the checked items without calling onToggle.
func (ct *checkTree) setChecked(ids []string) {
	ct.checked = map[string]bool{}
	for _, id := range ids {
		ct.checked[id] = true
	}
	ct.tree.Refresh()
}

func (ct *checkTree) applyFilter() {
	q := strings.ToLower(strings.TrimSpace(ct.search.Text))
	ct.shown = map[string][]string{}
	for _, g := range ct.groups {
		title := g
		if t, ok := ct.titles[g]; ok {
			title = t
		}
		groupHit := q != "" && strings.Contains(strings.ToLower(title), q)
		for _, id := range ct.items[g] {
			if ct.filter != nil && !ct.filter(id) {
				continue
			}
			if q == "" || groupHit || strings.Contains(strings.ToLower(ct.labels[id]), q) || strings.Contains(strings.ToLower(id), q) {
				ct.shown[g] = append(ct.shown[g], id)
			}
		}
	}
	if q != "" {
		ct.tree.OpenAllBranches()
	}
	ct.tree.Refresh()
}

// searchEntry is a search field that Esc clears.
type searchEntry struct {
	widget.Entry
}

func newSearchEntry() *searchEntry {
	e := &searchEntry{}
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey clears the search on Esc and otherwise types as an entry does.
func (e *searchEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape {
		e.SetText("")
		return
	}
	e.Entry.TypedKey(k)
}

// tooltipDelay is how long the pointer rests on a row before its tooltip shows.
const tooltipDelay = 500 * time.Millisecond

// hoverCheck is a tree row's check box that shows the item's full name and facts
// when the pointer rests on it (row labels are cut to the panel's width).
type hoverCheck struct {
	widget.Check
	tree  *checkTree
	id    string
	timer *time.Timer
	at    fyne.Position // the pointer, absolute
}

func newHoverCheck(ct *checkTree) *hoverCheck {
	c := &hoverCheck{tree: ct}
	c.ExtendBaseWidget(c)
	return c
}

// MouseIn starts the tooltip's delay.
func (c *hoverCheck) MouseIn(e *desktop.MouseEvent) {
	c.Check.MouseIn(e)
	c.at = e.AbsolutePosition
	c.stopTimer()
	c.timer = time.AfterFunc(tooltipDelay, func() { fyne.Do(c.showTip) })
}

// MouseMoved follows the pointer.
func (c *hoverCheck) MouseMoved(e *desktop.MouseEvent) {
	c.Check.MouseMoved(e)
	c.at = e.AbsolutePosition
}

// MouseOut hides the tooltip.
func (c *hoverCheck) MouseOut() {
	c.Check.MouseOut()
	c.stopTimer()
	if l := tooltipLayerFor(c); l != nil {
		l.hide()
	}
}

func (c *hoverCheck) stopTimer() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

// TooltipText is what the row's tooltip says.
func (c *hoverCheck) TooltipText() string {
	if c.tree.tooltip != nil {
		if s := c.tree.tooltip(c.id); s != "" {
			return s
		}
	}
	return c.tree.labels[c.id]
}

func (c *hoverCheck) showTip() {
	if l := tooltipLayerFor(c); l != nil {
		if text := c.TooltipText(); text != "" {
			l.show(text, c.at)
		}
	}
}
