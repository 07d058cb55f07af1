"""URL toolkit throughput: native vs pure-Python twin vs the best PyPI peer, median ops/s.

Run from the repository root (after ``python setup.py build_ext --inplace``)::

    python bench/bench_url.py               # about 40 s on a 2-core machine
    python bench/bench_url.py --quick       # about 10 s, for a smoke check

Inputs: the 990 real URLs of the shared corpus (``html-eval/evaldata.json``, found through
``$CCRAWL_CORPUS`` or ``../shared/corpus``) plus deterministic synthetic URLs with query strings,
tracking parameters, ports and IDNs, 5,000 in all. Peers: the ``surt`` package for SURT;
``publicsuffix2`` and ``tldextract`` loaded with *our* vendored list (so they answer the same
question) for registered domains. Each figure is the median of ``--repeats`` passes, each pass
bounded by ``--seconds``; the whole run is bounded by ``--budget`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def corpus_urls() -> list[str]:
    env = os.environ.get("CCRAWL_CORPUS")
    for root in ([Path(env)] if env else []) + [REPO.parent / "shared" / "corpus"]:
        data = root / "html-eval" / "evaldata.json"
        if data.is_file():
            return list(json.loads(data.read_text()))
    return []


def synthetic_urls(count: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    tlds = ["com", "co.uk", "de", "org", "net", "com.au", "github.io", "blogspot.com", "jp", "fr", "xn--p1ai"]
    words = ["news", "shop", "blog", "archive", "data", "item", "page", "index", "story", "2024", "a-b", "x_y"]
    params = ["id", "page", "q", "utm_source", "utm_medium", "fbclid", "sid", "lang", "ref", "gclid"]
    out = []
    for i in range(count):
        host = ".".join([*rng.choices(words, k=rng.randint(0, 2)), f"site{i % 997}", rng.choice(tlds)])
        if rng.random() < 0.5:
            host = "www." + host
        path = "/".join(rng.choices(words, k=rng.randint(0, 4)))
        url = f"{rng.choice(['http', 'https'])}://{host}{rng.choice(['', '', ':8080', ':443'])}/{path}"
        if rng.random() < 0.3:
            url += "/"
        if rng.random() < 0.6:
            fields = [
                f"{rng.choice(params)}={rng.randint(0, 10 ** rng.randint(1, 20))}" for _ in range(rng.randint(1, 4))
            ]
            url += "?" + "&".join(fields)
        out.append(url)
    return out


def measure(func: Callable[[Any], Any], inputs: Sequence[Any], repeats: int, seconds: float) -> float:
    """Median ops/s over ``repeats`` passes; each pass loops over ``inputs`` until ``seconds`` pass."""
    rates = []
    for _ in range(repeats):
        done = 0
        start = time.perf_counter()
        while True:
            for item in inputs:
                func(item)
            done += len(inputs)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        rates.append(done / elapsed)
    return statistics.median(rates)


def safe(func: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def call(item: Any) -> Any:
        try:
            return func(item)
        except Exception:  # a peer's failure on one URL must not stop the benchmark
            return None

    return call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=5000, help="how many URLs (corpus first, then synthetic)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.6, help="length of one timed pass")
    parser.add_argument("--budget", type=float, default=55.0, help="stop starting new rows after this many seconds")
    parser.add_argument("--quick", action="store_true", help="--urls 1000 --repeats 3 --seconds 0.15")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    if args.quick:
        args.urls, args.repeats, args.seconds = 1000, 3, 0.15

    import ccrawl._native.canon as native_canon
    import ccrawl._native.domain as native_domain
    import ccrawl._native.surt as native_surt
    from ccrawl.url import canon, domain
    from ccrawl.url import surt as our_surt

    urls = corpus_urls()[: args.urls]
    urls += synthetic_urls(args.urls - len(urls))
    hosts = [h for h in (domain.host_of(u) for u in urls) if h]
    table = native_domain.SuffixTable(*domain.rules())
    rules = canon.tracking_rules()
    canonicalizer = native_canon.Canonicalizer(rules.names, rules.prefixes, rules.token_names)
    keys = [k.encode() for k in (domain.shard_key_py(u) for u in urls)]

    rows: list[tuple[str, str, Callable[[Any], Any], Sequence[Any]]] = [
        ("surt", "native", native_surt.surt, urls),
        ("surt", "twin", our_surt.surt_py, urls),
    ]
    import surt as ia_surt

    rows.append(("surt", "peer: surt 0.3.1 (IA)", safe(ia_surt.surt), urls))
    rows += [
        ("registered_domain", "native", table.registered_domain, hosts),
        ("registered_domain", "twin", domain.registered_domain_py, hosts),
    ]
    import publicsuffix2

    psl2 = publicsuffix2.PublicSuffixList(psl_file=str(domain.PSL_PATH))
    rows.append(("registered_domain", "peer: publicsuffix2 (same list)", lambda h: psl2.get_sld(h, strict=True), hosts))
    import tldextract

    extract = tldextract.TLDExtract(
        suffix_list_urls=(domain.PSL_PATH.as_uri(),),
        cache_dir=tempfile.mkdtemp(prefix="ccrawl-bench-tld-"),
        fallback_to_snapshot=False,
        include_psl_private_domains=True,
    )
    rows.append(
        (
            "registered_domain",
            "peer: tldextract (same list)",
            lambda h: extract(h).top_domain_under_public_suffix,
            hosts,
        )
    )
    rows += [
        ("shard_of(url, 7)", "native", lambda u: table.shard_of(u, 7), urls),
        ("shard_of(url, 7)", "twin", lambda u: domain.shard_of_py(u, 7), urls),
        ("fnv1a64(key)", "native", native_domain.fnv1a64, keys),
        ("fnv1a64(key)", "twin", domain.fnv1a64_py, keys),
        ("canonicalize", "native", safe(canonicalizer.canonicalize), urls),
        ("canonicalize", "twin", safe(canon.canonicalize_py), urls),
        ("url_key(canonical)", "blake3", canon.url_key, [c for c in map(safe(canon.canonicalize_py), urls) if c]),
    ]

    started = time.perf_counter()
    results = []
    print(
        f"# {len(urls)} URLs ({min(len(corpus_urls()), args.urls)} from the corpus), {len(hosts)} hosts; "
        f"python {platform.python_version()}, {platform.machine()}",
        flush=True,
    )
    print(f"{'function':<22} {'implementation':<34} {'ops/s':>12}", flush=True)
    for name, impl, func, inputs in rows:
        if time.perf_counter() - started > args.budget:
            print(f"# budget of {args.budget:.0f} s spent; skipped the remaining rows", flush=True)
            break
        rate = measure(func, inputs, args.repeats, args.seconds)
        results.append({"function": name, "implementation": impl, "ops_per_s": round(rate)})
        print(f"{name:<22} {impl:<34} {rate:>12,.0f}", flush=True)
    print(f"# total {time.perf_counter() - started:.1f} s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
