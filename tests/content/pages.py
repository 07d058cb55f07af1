"""Small HTML pages that each show one quality signal, shared by the signal tests and the live tests."""

from __future__ import annotations

PROSE = [
    "The river town grew up around a ford where traders crossed with salt and wool long before the "
    "first stone bridge was built. Its market square still follows the curve of the old bank, and the "
    "houses that face it lean a little, as if listening to the water that once ran past their doors.",
    "In the eighteenth century a canal company dug a cut through the meadows to the east, and barges "
    "began to carry coal from the hills to the mills downstream. The lock keeper's cottage survives, "
    "painted white, with a garden of beans and marigolds that visitors photograph every summer.",
    "Railways arrived in 1851 and the canal trade faded within a generation. Warehouses became "
    "workshops, then flats; a brewery turned into a cinema and later a library, whose reading room "
    "keeps the brass fittings of the mash tuns as lamps above the long oak tables.",
    "Today the town is known for its autumn fair, when farmers bring cider, cheese and late apples "
    "to stalls along the towpath. Musicians play on the bridge until dusk, children race paper boats "
    "under its arches, and the smell of roasting chestnuts drifts across the water.",
    "Local historians have gathered letters, ledgers and photographs into a small museum beside the "
    "church. A volunteer guide walks visitors through the rooms on Saturday mornings, explaining how "
    "floods shaped the streets and why the oldest inn has steps leading down to a door below the road.",
    "Walkers can follow a marked path upstream through willow woods to a ruined mill, where kingfishers "
    "nest in the bank and otters have returned after decades away. The route takes about two hours and "
    "ends at a tea room that bakes its own bread in the mill's restored oven.",
]


def article(title: str = "A River Town", paragraphs: list[str] | None = None, extra_body: str = "") -> str:
    """An ordinary article page: title, description, canonical, a nav and an ``<article>``."""
    paras = "".join(f"<p>{p}</p>" for p in (paragraphs or PROSE))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title>"
        '<meta name="description" content="How a ford became a market town.">'
        '<link rel="canonical" href="https://town.example/history">'
        "</head><body>"
        '<nav><a href="/">Home</a> <a href="/visit">Visit</a> <a href="/history">History</a></nav>'
        f"<article><h1>{title}</h1>{paras}</article>"
        f"{extra_body}"
        "<footer><p>Town council</p></footer></body></html>"
    )


ARTICLE = article()

#: No semantic container and no dense region: every sentence in a ``<div>`` of its own.
FLAT = (
    "<html><head><title>Index</title></head><body>"
    + "".join(f"<div>{sentence.strip()}.</div>" for p in PROSE for sentence in p.split(". ") if sentence.strip())
    + "</body></html>"
)

#: One keyword carries a third of the long words.
STUFFED = article(
    "Cheap Watches",
    [
        " ".join(
            f"Cheap watches for every wrist, cheap {w} watches and cheap gifts, cheap and cheerful."
            for w in ("steel", "gold", "leather", "diving", "pilot", "dress", "sport", "vintage")
        )
    ],
)

#: The same two sentences over and over, with a varied vocabulary (so it is not stuffing).
REPEATED = article(
    "Repeated",
    [
        " ".join(
            [
                "Quality plumbing services across the northern district by licensed engineers available daily. "
                "Emergency repairs, boiler installation and bathroom fitting with honest quotes."
            ]
            * 12
        )
    ],
)

#: An ordinary article plus a hidden block of keywords longer than the article.
HIDDEN = article(
    extra_body='<div style="display: none">'
    + " ".join(f"casino bonus poker slots jackpot roulette {i}" for i in range(300))
    + "</div>"
)

#: A link farm: one sentence and 150 links to other sites.
LINK_FARM = (
    "<html><head><title>Best links</title></head><body><p>Useful resources.</p><ul>"
    + "".join(f'<li><a href="http://partner{i}.example/">partner site number {i}</a></li>' for i in range(150))
    + "</ul></body></html>"
)

#: Shouting.
ALL_CAPS = article("Sale", [p.upper() for p in PROSE[:3]])

PARKED_FOR_SALE = (
    "<html><head><title>river-town.example</title></head><body>"
    "<h1>river-town.example</h1><p>This domain may be for sale!</p>"
    "<p>Click here to inquire about this domain.</p></body></html>"
)

PARKED_SERVICE = (
    "<html><head><title>river-town.example</title>"
    '<script src="https://www.sedoparking.com/frmpark/river-town.example/park.js"></script>'
    "</head><body><p>Related searches</p></body></html>"
)

PARKED_SHELL = (
    "<html><head><script>window.location.href = 'http://lander.parking-network.example/?d=river-town';"
    "</script></head><body></body></html>"
)

#: A JS redirect within the same site (``/en/``) is a language switch, not parking.
SAME_SITE_SHELL = "<html><head><script>location.replace('/en/')</script></head><body></body></html>"

#: A long article that talks about domain sales and links a marketplace: not itself parked.
ABOUT_DOMAIN_SALES = article(
    "Selling a domain",
    [
        *PROSE,
        'When a notice says "this domain is for sale" the owner usually lists it on '
        '<a href="https://sedo.com/">sedo.com</a> or a similar marketplace.',
    ],
)
