//go:build cgo

package sqlitevec

const cgoEnabled = true
