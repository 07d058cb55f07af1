"""HTML to Markdown, text, title, links, language and simhash: the extraction engines."""
