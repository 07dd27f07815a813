// Package sitemap is a streaming parser for sitemaps.org documents: XML
// url sets, sitemap indexes, plain-text sitemaps and the RSS 2.0 / Atom feeds
// the protocol also accepts as sitemaps.
//
// [Parse] reads a document token by token and hands each entry to a callback,
// so memory does not grow with the number of entries. The document's kind is
// taken from its content, never from a file name or Content-Type:
//
//   - gzip is detected by its magic bytes (1f 8b) and decompressed
//     transparently, up to two nested layers;
//   - a UTF-8 byte order mark is dropped; a UTF-16 one selects UTF-16;
//     other encodings named in the XML declaration are decoded with
//     golang.org/x/text;
//   - if the first non-blank byte is '<' the document is XML and its root
//     element decides: urlset → [URLSet], sitemapindex → [Index], rss or
//     rdf:RDF → [RSS], feed → [Atom]; HTML or any other root is a
//     [*FormatError] (errors.Is(err, [ErrNotSitemap]));
//   - otherwise it is a plain-text sitemap ([Text]): one absolute http(s) URL
//     per line.
//
// # What is read
//
// Elements are matched by local name, so a missing or wrong namespace does
// not matter; only the direct children of an entry element are read, so
// extensions (image:, video:, news:, xhtml:link) never leak their own loc or
// link elements into the result. Text may use entities and CDATA and is
// trimmed of surrounding whitespace. Unknown or hostile DOCTYPE entities are
// never expanded (encoding/xml does not expand custom entities; a reference
// such as &lol9; stays literal text).
//
// For feeds an entry's Loc is the item's link (RSS: <link>, else a permalink
// <guid>; Atom: the first <link> whose rel is empty or "alternate", else an
// http(s) <id>), and its LastMod is pubDate / dc:date (RSS) or updated,
// modified, published or issued (Atom).
//
// LastMod accepts every W3C-datetime form (YYYY, YYYY-MM, YYYY-MM-DD,
// YYYY-MM-DDThh:mmTZD, YYYY-MM-DDThh:mm:ssTZD, with a fraction of any
// length, TZD being Z or ±hh:mm) and these real-world deviations: a space or
// lowercase t instead of T, lowercase z, a missing time zone (taken as UTC),
// offsets written ±hhmm or ±hh or spelled UTC or GMT, a blank before the
// offset, and RFC 1123 / RFC 822 dates as used by RSS (with the zone names
// RFC 822 defines).
// Values are returned in UTC; anything else leaves LastMod zero.
//
// # What is left out
//
// An entry whose Loc is empty, or longer than [Parser.MaxLocBytes], is
// skipped, and so is a text line that is not an absolute http(s) URL; each
// skip is reported to [Parser.OnSkip] when it is set. Blank lines and lines
// starting with '#' (comments) are ignored silently. XML locs are not
// validated further: resolving and normalizing them is the caller's job.
// An entry is yielded only once its closing tag was read.
//
// # Errors
//
// Every failure is typed. A truncated or malformed document yields the
// entries read so far and then a [*SyntaxError] (errors.Is(err,
// [ErrMalformed])); a caller must not treat URLs absent from such a document
// as removed. Input beyond [Parser.MaxBytes] of uncompressed data stops with
// a [*TooLargeError] (errors.Is(err, [ErrTooLarge])), which also defuses gzip
// bombs. Because encoding/xml buffers a whole text node or tag, an XML
// document with more than 1 MiB between two '<', or with elements nested
// more than 100 deep, is a *SyntaxError too; no sitemap comes near either
// bound, and memory stays small and flat whatever the number of entries.
// An error returned by the yield callback stops parsing and is
// returned wrapped, so errors.Is finds it. A failing reader's error is
// returned wrapped as well.
package sitemap
