"""The conversion answer guards (issue 20): an answer repeating the prompt, a page answer that
is not its page's text, and the layers that prove nothing either way."""

from __future__ import annotations

from drac.documents.vision.check import (
    ECHO_SHARE,
    LAYER_SHARE,
    echo_share,
    foreign_pages,
    layer_share,
)
from drac.documents.vision.prompt import batch_prompt, conversion_system_prompt

PAGE = (
    "Warranty claims are handled within thirty days by the service team after the receipt "
    "is checked carefully by trained staff at the nearest authorised centre."
)


def test_the_prompt_repeated_is_an_echo_and_a_page_is_not() -> None:
    prompt = f"{conversion_system_prompt()}\n{batch_prompt([1, 2], 2)}"
    echoed = "<!-- Page 1 -->\n\n" + conversion_system_prompt()[:1500]
    assert echo_share(echoed, prompt) >= ECHO_SHARE
    assert echo_share(f"<!-- Page 1 -->\n\n{PAGE}", prompt) < 0.1
    assert echo_share("<!-- Page 1 -->\n\nVerbatim text.", prompt) == 0.0  # too short to judge


def test_a_page_answer_is_judged_against_its_own_layer() -> None:
    layer = (PAGE + " ") * 2
    assert layer_share(PAGE, layer) == 1.0
    bananas = "Bananas grow in tropical climates; ripe fruit turns yellow, then brown spots "
    share = layer_share(bananas + "appear while sugars develop inside the peel quickly.", layer)
    assert share is not None and share < LAYER_SHARE
    assert layer_share(PAGE, "short layer") is None  # no layer worth the name
    assert layer_share("Few words here.", layer) is None  # too little answer to judge
    assert layer_share(PAGE, "\ue001\ue002 \u2022\u2022 " * 80) is None  # glyph codes: no proof


def test_foreign_pages_names_only_the_page_that_is_not_itself() -> None:
    markdown = (
        f"<!-- Page 1 -->\n\n{PAGE}\n\n<!-- Page 2 -->\n\n"
        + "Bananas grow in tropical climates; ripe fruit turns yellow, then brown spots "
        "appear while sugars develop inside the peel quickly."
    )
    layers = {1: (PAGE + " ") * 2, 2: (PAGE + " ") * 2, 3: ""}
    assert set(foreign_pages(markdown, layers)) == {2}
