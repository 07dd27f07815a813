package discover

import (
	"net/url"
	"path"
	"strings"
)

// notDocumentExt lists the file extensions a crawl never requests: they
// name files that are not pages (images, archives, media, fonts,
// notebooks, source files and data, feeds, office documents).
var notDocumentExt = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`
		png jpg jpeg gif svg svgz webp ico bmp tif tiff avif heic psd
		zip tar gz tgz bz2 xz zst 7z rar whl egg jar war deb rpm dmg exe msi apk iso img bin
		mp3 mp4 m4a m4v webm ogg ogv oga wav flac aac avi mov mkv wmv mpg mpeg
		woff woff2 ttf otf eot
		ipynb py pyc pyi js mjs cjs ts tsx jsx go rs java kt scala c h cc cpp hpp cs rb php pl sh bash zsh bat ps1 r jl lua swift m
		css scss sass less map
		json jsonl yaml yml toml ini cfg conf csv tsv sql xml xsd xsl dtd rss atom
		txt rst tex bib
		pdf doc docx xls xlsx ppt pptx odt ods odp epub rtf
		parquet npy npz pkl pickle h5 hdf5 db sqlite dat onnx pt safetensors`) {
		notDocumentExt["."+e] = true
	}
}

// notDocumentDirs are path segments under which documentation generators
// put files that are not pages: Sphinx's page sources, images,
// downloads and static assets.
var notDocumentDirs = []string{"_sources", "_images", "_downloads", "_static"}

// NotDocumentPath reports whether a URL's path names a file that is not a
// page, by its extension (an image, an archive, media, a font, a notebook,
// a source or data file, a feed, an office document: .png, .zip, .mp4,
// .woff2, .ipynb, .py, .json, .xml, .rss, .txt, .pdf...) or by a
// generator's asset directory in it (Sphinx's _sources/, _images/,
// _downloads/, _static/). A crawl does not request such links. A path
// without an extension, or ending in .html, .htm or /, is a page.
func NotDocumentPath(rawURL string) bool {
	p := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		p = u.Path
	}
	p = strings.ToLower(p)
	for _, d := range notDocumentDirs {
		if strings.Contains(p, "/"+d+"/") {
			return true
		}
	}
	if strings.HasSuffix(p, "/") {
		return false
	}
	return notDocumentExt[path.Ext(p)]
}

// SkipOutOfScope is the Skip reason for a listed link whose path lies
// outside a source's Only prefix.
const SkipOutOfScope = "out_of_scope"

// inOnly reports whether rawURL's path starts with the prefix only; an
// empty prefix holds every URL.
func inOnly(only, rawURL string) bool {
	if only == "" {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return strings.HasPrefix(p, only)
}
