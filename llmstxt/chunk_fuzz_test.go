package llmstxt

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzChunkedParse checks that parsing in pieces (cut at every place
// chunkBounds allows) gives the File, or the error, of a whole parse.
func FuzzChunkedParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"# T\n\n- [a][r]\n\n> [r]: /r\n",
		"# T\n\n- [a][r]\n\n> p\n> [r]: /r\n",
		"# T\n\n- [a][r]\n\n> ```\n>\n> [r]: /r\n> ```\n",
		"# T\n\n- [a][r]\n- b\n\n[r]:\n  /r\n  'x'\n\n## S\n- [c][r]\n",
		"# T\n\n<!--\n- [h](/h)\n\n-->\n- [a](/a)\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, werr := Parser{}.parse(data, 1<<40, 0)
		pieces, perr := Parser{}.parse(data, 0, 1)
		if werr != nil || perr != nil {
			if werr == nil || perr == nil || werr.Error() != perr.Error() {
				t.Fatalf("whole: %v; pieces: %v", werr, perr)
			}
			return
		}
		if !reflect.DeepEqual(whole, pieces) {
			t.Fatalf("pieces differ from the whole:\nwhole:  %+v\npieces: %+v", whole, pieces)
		}
	})
}
