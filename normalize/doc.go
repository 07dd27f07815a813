// Package normalize gives every page one canonical URL: its identity.
//
// The normalized URL is the key under which recrawl stores a page's state,
// indexes its chunks and names it in alerts, so two spellings of one page
// must normalize to the same string, and it must be computed before
// anything touches state. Without it, "https://Example.com/docs/?utm_source=x#top"
// and "https://example.com/docs" would be two rows and two fetches.
//
// URL normalizes an absolute URL; Resolve resolves a link found in a page
// against the page's URL (RFC 3986 section 5.2) and then normalizes it.
// A Policy holds the few choices a site may need to change; its zero value
// is the default policy, which the package-level functions use.
//
// # The default policy
//
// Every rule below is applied, and the result is a fixed point: normalizing
// a normalized URL returns it unchanged.
//
//   - Surrounding white space is trimmed. Any other control character
//     (including a tab or newline inside the URL) is rejected rather than
//     guessed at. Input or output longer than MaxLength is rejected.
//   - Only http and https are accepted; the scheme is lowercased. A
//     relative reference is an error for URL (use Resolve).
//   - Userinfo ("user:pass@") is rejected, not dropped: a credential must
//     not end up in the state database, the index or an alert, and
//     dropping it would silently give the page another identity (and
//     "https://example.com@evil.example/" is a known disguise).
//   - The host is lowercased; percent-escapes in it are decoded; an
//     international name becomes punycode (UTS #46, non-transitional, as
//     browsers do: "Bücher.example" → "xn--bcher-kva.example"). Only
//     letters, digits, "-", "." and "_" may remain; empty labels and names
//     beyond DNS limits are rejected; one trailing dot (a fully qualified
//     name) is kept, since a server may treat it as another host. IPv6
//     literals are written in their canonical form; zones are rejected.
//   - The port is dropped when it is the scheme's default (80 for http,
//     443 for https) or empty; leading zeros are removed; anything not in
//     1-65535 is an error.
//   - Percent-encoding is normalized everywhere after the host: escapes of
//     unreserved characters (A-Z a-z 0-9 - . _ ~) are decoded ("%7E" → "~"),
//     other escapes are kept with uppercase hex ("%3a" → "%3A"; "%2F",
//     "%3F", "%26", "%3D" are never decoded, because decoding them changes
//     the URL's structure), and bytes that may not appear literally (space,
//     quotes, brackets, non-ASCII) are percent-encoded as UTF-8. A "%" that
//     does not begin a valid escape ("100%") is encoded as "%25" rather
//     than rejected: such links are common in real pages, and "%25" is
//     the only reading that a server can decode.
//   - "+" and "%20" are kept as written, in the path and in the query. Only
//     HTML form decoding reads "+" as a space; for a path or a non-form
//     query they differ, and merging them could merge two pages.
//   - Dot segments are removed (RFC 3986 section 5.2.4), after escapes are
//     normalized, so "%2E%2E" counts as "..". An encoded slash "%2F" never
//     separates segments.
//   - An empty path becomes "/". Trailing slashes are removed except at the
//     root ("/docs/" → "/docs"). All of them are removed, not just one, so
//     that the rule is idempotent. Policy.KeepTrailingSlash keeps them for
//     sites that serve different pages at /docs and /docs/.
//   - The fragment is dropped: it never reaches the server.
//     Policy.KeepFragment keeps it for hash-routed applications.
//   - Query parameters (separated by "&"; ";" is not a separator) whose
//     key is a tracking key are removed: utm_*, gclid, fbclid, mc_cid,
//     mc_eid and ref, compared ignoring case (Policy.Tracking changes the
//     list). Empty parameters ("&&") are dropped. The rest are sorted by
//     key, then by value, byte-wise on their normalized form; duplicate
//     keys, duplicate pairs and blank values ("a", "a=") are all kept.
//     If no parameter remains, the "?" goes too.
//   - A backslash in the scheme's slashes, the authority's end or the path
//     is a slash, as the WHATWG URL standard (and every browser) reads
//     http and https URLs: "https:\\Example.com\docs\intro" is
//     "https://example.com/docs/intro", and so is a link "\docs\intro"
//     resolved against a page of that host. In the query and the fragment
//     it is data, written "%5C"; so is an escaped one ("%5C") anywhere.
//
// One thing is deliberately not done: numeric IPv4 forms such as
// "0x7f.1" are not rewritten; they are rare in links that lead to real
// pages.
//
// Normalizing is pure computation without regular expressions: for a plain
// ASCII host the only allocation is the result, and none at all when the
// input is already normalized. All functions are safe for concurrent use.
package normalize
