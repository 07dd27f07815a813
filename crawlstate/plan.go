package crawlstate

import "context"

// PlanLister is the optional ability of a State to list a source's live
// rows with only the columns that planning a run reads, cheaper than
// reading them whole through Due. A crawler finds it by type assertion.
type PlanLister interface {
	// PlanRows returns up to limit live (not gone) rows of source whose
	// URL sorts after after, in URL order, with only Source, URL,
	// LastFetched, NextCheck, Interval, ContentHash, Visits, Changes and
	// Stats set; the other fields are zero. A limit below 1 is an error.
	PlanRows(ctx context.Context, source, after string, limit int) ([]Row, error)
}

// LiveLister is the optional ability of a State to list a source's live
// rows whole, every field as Due returns it, in URL order. A crawler that
// plans a run over every live row and then fetches the due ones can read
// each row once with it instead of twice (PlanRows, then Due). A crawler
// finds it by type assertion.
type LiveLister interface {
	// LiveRows returns up to limit live (not gone) rows of source whose
	// URL sorts after after, in URL order, every field set. A limit below
	// 1 is an error.
	LiveRows(ctx context.Context, source, after string, limit int) ([]Row, error)
}
