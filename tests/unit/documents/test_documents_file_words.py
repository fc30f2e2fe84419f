"""Words the text layer broke apart, put back whole as the file holds them."""

from __future__ import annotations

from drac.documents.office.file_structure import FileBlock, Run
from drac.documents.office.file_tables import FileTable
from drac.documents.office.file_words import file_vocabulary, respell

BLOCKS = [
    FileBlock(kind="paragraph", runs=(Run(text="Visit a store in Mumbai or Pune."),)),
    FileBlock(kind="cell", runs=(Run(text="Mumbai – Maharashtra"),)),
]
TABLE = FileTable(header=("Store", "Phone"), rows=(("Andheri East", "080-46620013"),))


def test_pieces_spelling_a_word_of_the_file_are_joined_and_its_own_words_are_not():
    vocabulary = file_vocabulary([TABLE], BLOCKS)
    pages = [
        "<!-- Page 1 -->\n\nM u m ba i – M ah ar as ht ra\n\n"
        "| A nd he ri Ea st | 080 - 466 200 13 |\n\nVisit a store in Mumbai or Pune.\n\n"
        "<!-- a n comment -->"
    ]
    assert respell(pages, vocabulary) == [
        "<!-- Page 1 -->\n\nMumbai – Maharashtra\n\n"
        "| Andheri East | 080 - 46620013 |\n\nVisit a store in Mumbai or Pune.\n\n"
        "<!-- a n comment -->"
    ]


def test_two_words_of_the_file_are_never_joined_even_where_they_spell_a_third():
    blocks = [FileBlock(kind="paragraph", runs=(Run(text="Some thing, something."),))]
    page = ["<!-- Page 1 -->\n\nSome thing, some thing."]
    assert respell(page, file_vocabulary([], blocks)) == page


def test_a_line_of_pieces_spelling_no_word_of_the_file_stays_as_it_is():
    # no run of pieces spells a word of the file (the window bounds the work per piece)
    vocabulary = file_vocabulary([], [FileBlock(kind="paragraph", runs=(Run(text="x" * 50),))])
    page = ["<!-- Page 1 -->\n\n" + " ".join(["ab"] * 20_000)]
    assert respell(page, vocabulary) == page
