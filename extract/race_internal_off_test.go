//go:build !race

package extract

// raceBuild is true in race builds; see race_internal_on_test.go.
const raceBuild = false
