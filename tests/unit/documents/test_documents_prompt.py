import re

import pytest

from drac.documents.vision.prompt import batch_prompt, conversion_system_prompt, page_marker

RULES = {
    "verbatim": [r"word for word", r"[Dd]o not summarise", r"skip"],
    "tables as prose": [r"Tables become prose", r"one self-contained sentence", r"column headers"],
    "table syntax forbidden": [r"Markdown table syntax is forbidden"],
    "no merge": [r"Never merge rows", r"16 or 20 years"],
    "images omitted": [r"Omit logos, charts", r"[Nn]ever describe them", r"captions"],
    "heading hierarchy": [r"`#`", r"`##`", r"`###`"],
    "page markers": [r"<!-- Page N -->", r"number in the whole document"],
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_the_system_prompt_states_every_rule_of_the_method(rule: str):
    prompt = conversion_system_prompt()
    for pattern in RULES[rule]:
        assert re.search(pattern, prompt), f"{rule}: {pattern!r} missing"


def test_the_example_sentence_of_the_method_is_in_the_prompt():
    assert "For a Policy Term of 16 years, the Premium Payment Term is 8 years" in (
        conversion_system_prompt()
    )


def test_the_batch_prompt_names_the_document_page_numbers_of_its_images():
    prompt = batch_prompt([6, 7, 8], total_pages=12)
    assert "pages 6 to 8 of a 12-page document" in prompt
    assert "image 1 is page 6" in prompt and "image 3 is page 8" in prompt
    assert prompt.index("<!-- Page 6 -->") < prompt.index("<!-- Page 8 -->")
    assert "<!-- Page 1 -->" not in prompt


def test_a_single_page_batch_and_gaps():
    assert "image is page 3 of a 3-page document" in batch_prompt([3], 3)
    assert "pages 2, 5" in batch_prompt([2, 5], 9)
    with pytest.raises(ValueError):
        batch_prompt([], 1)


def test_page_marker_format():
    assert page_marker(12) == "<!-- Page 12 -->"
