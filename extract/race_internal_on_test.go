//go:build race

package extract

// raceBuild is true in race builds, which run the corpus-wide tests of
// this package on a sample: the race detector slows them about tenfold.
const raceBuild = true
