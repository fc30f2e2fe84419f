from drac.evaluation.judge import (
    STOP_WORDS,
    content_words,
    coverage,
    covers,
    facts_covered,
    is_relevant,
    tokens,
)


def test_content_words_lowercase_drop_stop_words_and_punctuation():
    assert content_words("The Premium, for a Policy-Term of 16 years!") == {
        "premium",
        "policy",
        "term",
        "16",
        "years",
    }


def test_markdown_emphasis_links_and_page_comments_are_not_words():
    text = "<!-- Page 3 --> Our **TakeBack+** program: [trade in](https://x.example/t) __today__"
    assert content_words(text) == {"takeback", "program", "trade", "today"}


def test_apostrophes_split_and_single_letters_dropped():
    assert tokens("Velvera’s plan") == ["velvera", "s", "plan"]
    assert content_words("Velvera's plan") == {"velvera", "plan"}


def test_stop_words_only_fact_is_never_relevant():
    fact = "It is what it is, and so on."
    assert content_words(fact) == frozenset()
    assert not is_relevant("it is what it is and so on", [fact])


def test_threshold_is_inclusive_at_sixty_percent():
    fact = content_words("alpha beta gamma delta epsilon")
    assert covers(fact, content_words("alpha beta gamma"))  # 3/5 = 0.6
    assert not covers(fact, content_words("alpha beta"))  # 2/5
    assert coverage(fact, content_words("alpha beta")) == 0.4


def test_markdown_chunk_not_penalised_against_plain_fact():
    fact = "Earn up to 1,500 in green credits via TakeBack+."
    chunk = "- **Earn** up to *1,500* in `green` credits via __TakeBack+__"
    assert coverage(content_words(fact), content_words(chunk)) == 1.0


def test_fact_split_across_two_chunks_is_relevant_in_neither():
    fact = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    first = "alpha beta gamma delta epsilon"  # 5/10
    second = "zeta eta theta iota kappa"  # 5/10
    assert not is_relevant(first, [fact])
    assert not is_relevant(second, [fact])
    assert is_relevant(first + " " + second, [fact])


def test_relevant_when_one_of_several_facts_is_covered():
    facts = ["alpha beta gamma", "omega psi chi"]
    assert is_relevant("text about omega and chi and psi", facts)
    words = [content_words(f) for f in facts]
    assert facts_covered(words, content_words("alpha gamma beta omega")) == {0}


def test_stop_word_list_is_lowercase_and_has_no_content_words():
    assert all(w == w.lower() for w in STOP_WORDS)
    assert not {"premium", "policy", "years", "velvera", "16"} & STOP_WORDS
