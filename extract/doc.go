// Package extract turns a fetched HTML page into the Markdown of its
// readable main content, with the page's title, canonical URL and outgoing
// links, and maps page URLs to relative document paths.
//
// FromHTML works in stages:
//
//  1. The input is bounded (Options.MaxBytes, default DefaultMaxBytes); a
//     larger page fails with a *TooLargeError before anything is parsed.
//  2. The bytes are decoded to UTF-8 from the declared charset: a byte
//     order mark first, then the charset parameter of the response
//     Content-Type (Options.ContentType), then <meta charset> or
//     <meta http-equiv="Content-Type"> in the head; an undeclared page is
//     read as UTF-8 when it is valid UTF-8 and as windows-1252 otherwise.
//     A page of more elements than Options.MaxElements (default
//     DefaultMaxElements), such as a link farm, fails with
//     ErrTooManyElements: no tree is built for it, and one streaming pass
//     reads only its metadata and links, so that memory stays a small
//     multiple of the page's size.
//  3. Title, canonical URL, language, description and every link are read
//     from the whole page, resolved against <base href> or the page URL.
//  4. Type notation the parser took for markup ("Array<object>",
//     "Promise<object>", "<T>": an element HTML does not define, an
//     <object> that embeds nothing) becomes text again, so that neither it
//     nor what follows it is lost.
//  5. A documentation page is recognised by a generator Rule
//     (Options.Rules, then BuiltinRules: MkDocs and Material, Sphinx
//     themes, Docusaurus, VitePress, VuePress, mdBook, Hugo Docsy and Book,
//     just-the-docs, Antora, Starlight, Nextra, GitBook, Javadoc, rustdoc,
//     godoc and pkgsite) from its <meta name="generator"> or distinctive
//     markup. Only the rule's content container is converted, however
//     short: the rule's chrome selectors and the elements no reader sees
//     as content (scripts, forms, buttons, <nav>, hidden elements,
//     word-less heading permalinks) are removed from it, nothing by
//     keywords in ids or classes. The page title is the Markdown's first
//     line, "# Title": the container's <h1> (moved to the front when only
//     text precedes it), else the theme's title outside the container, else
//     the <title> without its site suffix; heading levels stay as written.
//     Such a page is never ErrScriptRendered.
//  6. Any other page whose text is evidently rendered in the browser fails
//     with ErrScriptRendered: it runs scripts and has no visible text at
//     all, or it has little text (under 100 words) and an empty
//     application root such as <div id="root"></div> or a <noscript>
//     asking to enable JavaScript. A long page that merely carries such a
//     <noscript> (for comments, say) or an analytics pixel is extracted as
//     usual.
//  7. Otherwise (articles, unknown sites) boilerplate is removed (scripts,
//     styles, forms, navigation, page header and footer, sidebars, cookie
//     and consent banners, hidden elements, heading permalinks, images),
//     and the readable main node is chosen by
//     codeberg.org/readeck/go-readability (Mozilla Readability's
//     algorithm).
//  8. On either path code blocks are normalised to
//     <pre><code class="language-x"> so their language survives, and the
//     chosen node is converted to Markdown by
//     github.com/JohannesKaufmann/html-to-markdown/v2 (its commonmark and
//     table plugins, and a base plugin of this package that gives the
//     library's output with cheaper passes) with links made absolute: code
//     blocks become fenced blocks tagged with their language, tables become
//     pipe tables.
//  9. A page left with no readable text fails with ErrEmpty.
//
// These named failures let a caller record why a page was not indexed
// instead of indexing it as empty; with each the Document still carries
// the page's metadata and links.
//
// DocPath maps a URL and its response content type to a safe relative file
// path for storing the document.
package extract
