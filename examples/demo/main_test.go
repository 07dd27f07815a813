package main

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDemoShowsTheSaving(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, 80, 21, 1))
	text := out.String()
	require.Contains(t, text, "15–21")
	m := regexp.MustCompile(`It downloaded (\d+) page bodies where a full recrawl downloads (\d+)`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	bodies, _ := strconv.Atoi(m[1])
	full, _ := strconv.Atoi(m[2])
	require.Less(t, bodies*3, full, "most revisits are answered 304:\n%s", text)
}
