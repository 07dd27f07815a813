package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunPrintsTable(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"-mix", "C", "-seeds", "1", "-pages", "200", "-days", "20", "-classes"}, &out)
	require.NoError(t, err)
	for _, want := range []string{
		"mix C, 200 pages, 20 days measured after 0 days of warm-up",
		"Halving", "Nutch", "Uniform", "Optimal (estimated)", "Optimal (true rates)", "Halving, raw bytes",
		"volatile alerts", "hourly",
	} {
		require.Contains(t, out.String(), want)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	var out bytes.Buffer
	require.ErrorContains(t, run([]string{"-mix", "Z"}, &out), "use A, B or C")
	require.Error(t, run([]string{"-pages", "x"}, &out))
	require.ErrorContains(t, run([]string{"-pages", "-5"}, &out), "must not be negative")
}
