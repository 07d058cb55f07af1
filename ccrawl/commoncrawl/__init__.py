"""Common Crawl's own data: the crawl list, path manifests, bulk downloads, record fetches, exports."""
