package recrawl

import "github.com/recrawl/recrawl/crawlstate"

// store is a crawlstate.State with the optional abilities the engine uses.
// Today the engine needs every one of them but Sharer: New reports a
// State that lacks one (a *ConfigError naming them), and runs without
// them are not supported yet.
type store interface {
	crawlstate.State
	crawlstate.RunLog
	crawlstate.PageDetails
	crawlstate.VectorCache
	crawlstate.AlertOutbox
	crawlstate.DocumentStore
	crawlstate.EventLog
	crawlstate.TrustStore
}

// missingAbilities names the abilities of store that st lacks.
func missingAbilities(st crawlstate.State) []string {
	var missing []string
	for _, a := range []struct {
		name string
		ok   bool
	}{
		{"crawlstate.RunLog", is[crawlstate.RunLog](st)},
		{"crawlstate.PageDetails", is[crawlstate.PageDetails](st)},
		{"crawlstate.VectorCache", is[crawlstate.VectorCache](st)},
		{"crawlstate.AlertOutbox", is[crawlstate.AlertOutbox](st)},
		{"crawlstate.DocumentStore", is[crawlstate.DocumentStore](st)},
		{"crawlstate.EventLog", is[crawlstate.EventLog](st)},
		{"crawlstate.TrustStore", is[crawlstate.TrustStore](st)},
	} {
		if !a.ok {
			missing = append(missing, a.name)
		}
	}
	return missing
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}
