package extract

import (
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// keyedSel is a compiled selector with the one thing an element must have
// for it to match (a class, an id or a tag name), so that a walk tries it
// only on such elements.
type keyedSel struct {
	sel  cascadia.Selector
	kind byte // '.', '#', 't' (tag) or 0 (no key: try on every element)
	key  string
	// tag is set on the selectors an index holds for a rule's markers.
	owner int
}

// selectorKey reads the key of a selector's subject: the last compound of
// a single, simple enough selector ("nav.md-tags" -> class md-tags,
// "section#main-content" -> id main-content, "main" -> tag main).
// Anything it cannot read safely yields no key.
func selectorKey(sel string) (byte, string) {
	if strings.ContainsAny(sel, ",\\") {
		return 0, ""
	}
	// The subject is the last compound outside brackets and parentheses.
	depth, start := 0, 0
	for i, r := range sel {
		switch r {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case ' ', '>', '+', '~':
			if depth == 0 {
				start = i + 1
			}
		}
	}
	last := sel[start:]
	// Drop attribute and pseudo-class parts.
	if i := strings.IndexAny(last, "[:"); i >= 0 {
		last = last[:i]
	}
	ident := func(s string) string {
		end := strings.IndexAny(s, ".#")
		if end < 0 {
			end = len(s)
		}
		return s[:end]
	}
	if i := strings.IndexByte(last, '#'); i >= 0 {
		if id := ident(last[i+1:]); id != "" {
			return '#', id
		}
	}
	if i := strings.IndexByte(last, '.'); i >= 0 {
		if c := ident(last[i+1:]); c != "" {
			return '.', c
		}
	}
	if t := ident(last); t != "" && t != "*" {
		return 't', strings.ToLower(t)
	}
	return 0, ""
}

// selIndex finds the elements that match any of many selectors in one walk.
type selIndex struct {
	byClass, byID, byTag map[string][]keyedSel
	always               []keyedSel
}

func newSelIndex() *selIndex {
	return &selIndex{byClass: map[string][]keyedSel{}, byID: map[string][]keyedSel{}, byTag: map[string][]keyedSel{}}
}

// add indexes sel for owner; a selector that does not compile is skipped
// (checkRules reports those).
func (x *selIndex) add(sel string, owner int) {
	s, err := compile(sel)
	if err != nil {
		return
	}
	kind, key := selectorKey(sel)
	k := keyedSel{sel: s, kind: kind, key: key, owner: owner}
	switch kind {
	case '.':
		x.byClass[key] = append(x.byClass[key], k)
	case '#':
		x.byID[key] = append(x.byID[key], k)
	case 't':
		x.byTag[key] = append(x.byTag[key], k)
	default:
		x.always = append(x.always, k)
	}
}

// match calls found for each selector that matches element n.
func (x *selIndex) match(n *html.Node, found func(owner int)) {
	try := func(list []keyedSel) {
		for _, k := range list {
			if k.sel.Match(n) {
				found(k.owner)
			}
		}
	}
	try(x.byTag[n.Data])
	for _, a := range n.Attr {
		switch {
		case a.Namespace != "":
		case a.Key == "id" && len(x.byID) > 0:
			try(x.byID[a.Val])
		case a.Key == "class" && len(x.byClass) > 0:
			eachClass(a.Val, func(c string) { try(x.byClass[c]) })
		}
	}
	try(x.always)
}

// matches reports whether any selector of x matches element n.
func (x *selIndex) matches(n *html.Node) bool {
	try := func(list []keyedSel) bool {
		for _, k := range list {
			if k.sel.Match(n) {
				return true
			}
		}
		return false
	}
	if try(x.byTag[n.Data]) {
		return true
	}
	for _, a := range n.Attr {
		switch {
		case a.Namespace != "":
		case a.Key == "id" && len(x.byID) > 0:
			if try(x.byID[a.Val]) {
				return true
			}
		case a.Key == "class" && len(x.byClass) > 0:
			hit := false
			eachClass(a.Val, func(c string) { hit = hit || try(x.byClass[c]) })
			if hit {
				return true
			}
		}
	}
	return try(x.always)
}

// eachClass calls f with each white-space separated token of a class
// attribute, without allocating.
func eachClass(v string, f func(string)) {
	for v != "" {
		i := 0
		for i < len(v) && isClassSpace(v[i]) {
			i++
		}
		v = v[i:]
		j := 0
		for j < len(v) && !isClassSpace(v[j]) {
			j++
		}
		if j > 0 {
			f(v[:j])
		}
		v = v[j:]
	}
}

func isClassSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f'
}
