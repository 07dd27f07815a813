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

// attrKey reads the attribute a selector made of one attribute selector
// alone needs: "[vp-content]" -> vp-content; "[class*=nextra-]" -> class,
// holding "nextra-". ok is false for any other selector.
func attrKey(sel string) (name, holds string, ok bool) {
	if len(sel) < 3 || sel[0] != '[' || sel[len(sel)-1] != ']' {
		return "", "", false
	}
	body := sel[1 : len(sel)-1]
	name, value, op := body, "", false
	if i := strings.Index(body, "*="); i >= 0 {
		name, value, op = body[:i], body[i+2:], true
	}
	if !plainIdent(name) {
		return "", "", false
	}
	if !op {
		return name, "", true
	}
	if n := len(value); n >= 2 && (value[0] == '"' || value[0] == '\'') && value[n-1] == value[0] {
		value = value[1 : n-1]
	}
	if value == "" || !plainIdent(value) {
		return "", "", false
	}
	return name, value, true
}

// plainIdent reports whether s is made of lower-case ASCII letters,
// digits, "-" and "_" only: no escapes, quotes, case flags or operators.
func plainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// selIndex finds the elements that match any of many selectors in one walk.
type selIndex struct {
	byClass, byID map[string][]keyedSel
	// byTag is short (a rule has few selectors keyed by a tag alone): a
	// scan compares lengths first and costs less than hashing every
	// element's name.
	byTag []tagSels
	// byAttr holds the selectors made of one attribute selector: they are
	// tried on elements with that attribute (holding the text the
	// selector's "*=" needs).
	byAttr []attrSels
	always []keyedSel
	// classKeys and idKeys are filters of the keys of byClass and byID:
	// a class or id that fails them is in neither map.
	classKeys, idKeys keyFilter
}

type tagSels struct {
	tag  string
	sels []keyedSel
}

type attrSels struct {
	name, holds string
	sels        []keyedSel
}

// keyFilter is a set of key lengths and first bytes: most class names of
// a page fail it, which costs less than a map lookup.
type keyFilter struct {
	lens  uint64    // bit i: a key of length i (63: 63 or longer)
	first [4]uint64 // bit b: a key starting with byte b
}

func (f *keyFilter) add(key string) {
	f.lens |= 1 << min(len(key), 63)
	f.first[key[0]>>6] |= 1 << (key[0] & 63)
}

func (f *keyFilter) mayHold(key string) bool {
	return key != "" && f.lens&(1<<min(len(key), 63)) != 0 && f.first[key[0]>>6]&(1<<(key[0]&63)) != 0
}

func newSelIndex() *selIndex {
	return &selIndex{byClass: map[string][]keyedSel{}, byID: map[string][]keyedSel{}}
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
		x.classKeys.add(key)
	case '#':
		x.byID[key] = append(x.byID[key], k)
		x.idKeys.add(key)
	case 't':
		for i := range x.byTag {
			if x.byTag[i].tag == key {
				x.byTag[i].sels = append(x.byTag[i].sels, k)
				return
			}
		}
		x.byTag = append(x.byTag, tagSels{key, []keyedSel{k}})
	default:
		if name, holds, ok := attrKey(sel); ok {
			x.byAttr = append(x.byAttr, attrSels{name, holds, []keyedSel{k}})
			return
		}
		x.always = append(x.always, k)
	}
}

// candidates calls try with each list of selectors that may match element
// n, until try returns true; it reports whether one did.
func (x *selIndex) candidates(n *html.Node, try func([]keyedSel) bool) bool {
	for i := range x.byTag {
		if x.byTag[i].tag == n.Data && try(x.byTag[i].sels) {
			return true
		}
	}
	for _, a := range n.Attr {
		// As cascadia does, whatever the attribute's namespace.
		for i := range x.byAttr {
			if s := &x.byAttr[i]; s.name == a.Key && strings.Contains(a.Val, s.holds) && try(s.sels) {
				return true
			}
		}
		switch {
		case a.Namespace != "":
		case a.Key == "id":
			if x.idKeys.mayHold(a.Val) && try(x.byID[a.Val]) {
				return true
			}
		case a.Key == "class":
			if x.classKeys.lens == 0 {
				continue
			}
			hit := false
			eachClass(a.Val, func(c string) {
				hit = hit || x.classKeys.mayHold(c) && try(x.byClass[c])
			})
			if hit {
				return true
			}
		}
	}
	return try(x.always)
}

// match calls found for each selector that matches element n.
func (x *selIndex) match(n *html.Node, found func(owner int)) {
	x.candidates(n, func(list []keyedSel) bool {
		for _, k := range list {
			if k.sel.Match(n) {
				found(k.owner)
			}
		}
		return false
	})
}

// matches reports whether any selector of x matches element n.
func (x *selIndex) matches(n *html.Node) bool {
	return x.candidates(n, func(list []keyedSel) bool {
		for _, k := range list {
			if k.sel.Match(n) {
				return true
			}
		}
		return false
	})
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
