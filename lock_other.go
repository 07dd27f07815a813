//go:build !unix

package recrawl

// processAlive cannot tell on this system: a held lock is left to expire.
func processAlive(int) bool { return true }
