// Package backend holds the code the crawlstate stores (crawlstate/sqlite,
// crawlstate/postgres, crawlstate/memory) share beside their own storage:
// the checks of their arguments and their errors (Checker), how a limit
// sizes a result (Prealloc), the order a discovery batch is written in
// (KeyOrder), when a run lock may be taken (Checker.Take), and for the
// SQL stores how times and vectors are encoded and the alert, document
// and run-lock rows decoded. What differs by SQL dialect stays in each
// store.
package backend

// MaxPrealloc is the most elements a store allocates up front for the
// result of a call that takes a limit (Due, PlanRows, Claim, ...): a
// larger result grows as it is read, so what a call allocates follows
// the rows it finds, not the limit it was given.
const MaxPrealloc = 1024

// Prealloc is the capacity to give a result of up to limit elements.
func Prealloc(limit int) int { return min(max(limit, 0), MaxPrealloc) }
