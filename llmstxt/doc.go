// Package llmstxt parses llms.txt files (https://llmstxt.org), the Markdown
// index a site publishes to list the pages a language model should read.
//
// Parse builds a goldmark CommonMark AST and walks it; it never matches lines
// with regular expressions, so code blocks, HTML blocks, escapes and
// reference-style links behave as in any Markdown renderer.
//
// The convention, and how Parse reads it:
//
//   - The first top-level H1 is the title. A document without one is not an
//     llms.txt: Parse returns a *FormatError matching ErrNoTitle (and ErrHTML
//     when the body is an HTML page).
//   - A blockquote directly after the title is the summary.
//   - Everything between the summary (or the title) and the first section
//     heading is the details, kept as Markdown source text.
//   - Each later top-level H2 starts a section. Real files also use a second
//     H1 the same way, so a later H1 starts a section too. H3 and deeper
//     headings stay inside the current section.
//   - A section named "Optional" (any case) is marked Optional. Its links are
//     still pages: Optional is metadata for the reader, not a filter.
//
// Every Markdown link in the document is recorded where it appears: in
// File.Links when it comes before the first section (title, summary,
// details), otherwise in its section's Links. This covers files that put
// their list before any H2, links in prose and links under H3 headings.
// Inline links, resolved reference links and URL autolinks (<https://…>)
// count; images, bare URLs in text, links inside code and <a> tags inside
// HTML blocks do not. URLs are kept as written (backslash escapes and
// entities resolved, nothing else): relative URLs stay relative for the
// caller to resolve against the file's own URL.
//
// A link that starts a line of a list item or paragraph is an entry: the text
// after it, without a leading ":" or dash, is its Description. Other links
// have an empty Description.
//
// File.Pages flattens all of this into the list of pages to fetch.
//
// Parse guards against hostile input: a size cap (ErrTooLarge), binary,
// gzip or UTF-16 bodies (ErrBinary), and structures that would make
// goldmark superlinear, such as deep nesting, unclosed links and link titles
// repeated across a long paragraph, or long runs of reference definitions
// (ErrTooComplex). A linear cost estimate decides, before and while goldmark
// parses; ordinary files, however large, stay far below it.
package llmstxt
