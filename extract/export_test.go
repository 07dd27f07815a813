package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// FromHTMLWithout is FromHTML with the built-in rules whose names omit
// reports left out (all of them for a func that always says true): the
// generic path of the docsites self-check.
func FromHTMLWithout(body []byte, pageURL string, omit func(name string) bool) (Document, error) {
	return fromHTMLOmitting(body, pageURL, Options{}, convert, func(i int) bool { return omit(BuiltinRules[i].Name) })
}

// RuleOf names the built-in rule that chooses the page's container, ""
// for none.
func RuleOf(body []byte) string {
	doc, err := html.Parse(bytes.NewReader(decode(body, "")))
	if err != nil {
		return ""
	}
	scan := scanPage(doc)
	restoreTextTags(scan.accidents)
	if sel, ok := chooseContainer(doc, nil, scan); ok && sel.rule != nil {
		return sel.rule.Name
	}
	return ""
}
