"""attn.book_index on a small made-up book: which labels it finds, how it counts, what Markdown it writes."""
from pathlib import Path

import pytest

from attn import book_index
from attn.book_index import Label, Section

HEADER = "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n"

PAGE_A = HEADER + """(page-a)=
# Page A: $Q$ and `K`

```{prf:definition} Query
:label: def-query

A query.
```

````{prf:proposition} A claim
:label: prop-one

```{math}
:label: eq-inside
x = 1
```
````

```{code-cell} ipython3
print("(not-a-label)=")
# :label: def-fake
```

```python
(also-not-a-label)=
```

:::{prf:definition} Key
:label: def-key
Colon-fenced.
:::

(concept-picture)=
## The picture

(practice-own-name)=
Some paragraph, not a heading.
"""

PAGE_B = HEADER + """(page-b)=
# Page B

```{exercise} Try it
:label: practice-exercise
```
"""

TOC = """format: jb-book
root: intro
parts:
  - caption: One
    chapters:
      - file: chapters/a
      # - file: chapters/commented-out
      - file: chapters/b.md   # with a suffix and a comment
      - file: chapters/missing
"""


@pytest.fixture
def book(tmp_path: Path) -> Path:
    (tmp_path / "chapters").mkdir()
    (tmp_path / "_toc.yml").write_text(TOC)
    (tmp_path / "intro.md").write_text("(intro)=\n# Intro\n")
    (tmp_path / "chapters" / "a.md").write_text(PAGE_A)
    (tmp_path / "chapters" / "b.md").write_text(PAGE_B)
    (tmp_path / "chapters" / "commented-out.md").write_text("(hidden)=\n# Hidden\n")
    return tmp_path


def test_toc_files_in_book_order_skipping_comments_and_missing(book):
    assert book_index.toc_files(book) == [book / "intro.md", book / "chapters/a.md", book / "chapters/b.md"]


def test_find_root_walks_up(book):
    assert book_index.find_root(book / "chapters") == book
    with pytest.raises(FileNotFoundError):
        book_index.find_root(Path("/"))


def test_labels_found_with_their_roles_titles_and_places(book):
    labels = book_index.find_labels(book)
    assert list(labels) == ["intro", "page-a", "def-query", "prop-one", "eq-inside", "def-key",
                            "concept-picture", "practice-own-name", "page-b", "practice-exercise"]
    assert labels["def-query"] == Label("def-query", "prf:ref", "Query", "chapters/a", 11)
    assert labels["prop-one"].role == "prf:ref" and labels["eq-inside"].role == "eq"
    assert labels["def-key"].title == "Key"                     # colon fence
    assert labels["page-a"].title == "Page A: $Q$ and `K`" and labels["page-a"].role == "ref"
    assert labels["practice-own-name"].title == ""               # anchor before a paragraph
    assert labels["practice-exercise"].role == "ref"             # sphinx-exercise labels take {ref}


def test_labels_inside_code_are_not_labels(book):
    labels = book_index.find_labels(book)
    assert "not-a-label" not in labels and "also-not-a-label" not in labels and "def-fake" not in labels
    assert "hidden" not in labels                                # page listed only in a comment


def test_duplicate_label_is_an_error(book):
    (book / "chapters" / "b.md").write_text(PAGE_B + "\n(def-query)=\n## Again\n")
    with pytest.raises(ValueError, match="def-query.*defined twice.*chapters/a.md.*chapters/b.md"):
        book_index.find_labels(book)


def test_written_counts_closed_sections_by_list_and_open_ones_by_prefix(book):
    labels = book_index.find_labels(book)
    sections = (
        Section("basics", "def-", 3, "", ("def-query", "def-key", "def-value")),
        Section("practice", "practice-", 2, "", ("practice-suggested",), open=True),
    )
    prog = book_index.written(labels, sections)
    assert [lab.name for lab in prog["basics"].found] == ["def-query", "def-key"]
    assert prog["basics"].fraction == "2/3" and not prog["basics"].complete
    assert [lab.name for lab in prog["practice"].found] == ["practice-own-name", "practice-exercise"]
    assert prog["practice"].complete


def test_closed_section_ignores_unlisted_labels_with_its_prefix():
    labels = {"def-query": Label("def-query", "prf:ref", "Query", "a", 1),
              "def-other": Label("def-other", "prf:ref", "Other", "a", 2)}
    prog = book_index.written(labels, (Section("basics", "def-", 11, "", ("def-query",)),))
    assert prog["basics"].count == 1


def test_links_use_the_right_role_and_plain_text(book):
    labels = book_index.find_labels(book)
    assert book_index.link(labels["def-query"]) == "{prf:ref}`Query <def-query>`"
    assert book_index.link(labels["page-a"]) == "{ref}`Page A: Q and K <page-a>`"
    assert book_index.link(labels["practice-own-name"]) == "{ref}`practice-own-name <practice-own-name>`"
    assert book_index.link(labels["eq-inside"]) == "{eq}`eq-inside`"
    assert book_index.link(labels["def-query"], "the query") == "{prf:ref}`the query <def-query>`"


def test_links_markdown_and_summary():
    lab = Label("def-query", "prf:ref", "Query", "a", 1)
    md = book_index.links_markdown([lab], missing=2)
    assert md.splitlines() == ["- {prf:ref}`Query <def-query>`", "- *2 more not yet written*"]
    math = Label("theory-scaling", "ref", "Why $1/\\sqrt{d_k}$", "a", 3)  # a section title with math
    assert book_index.links_markdown([math]) == "- [Why $1/\\sqrt{d_k}$](#theory-scaling)"
    assert "theory-scaling`" not in book_index.links_markdown([lab, math])  # no label name shown
    assert book_index.links_markdown([]) == "*None written yet.*"
    prog = {"basics": book_index.Written("basics", (lab,), 11)}
    table = book_index.summary_markdown(prog, (Section("basics", "def-", 11, "definitions of the terms", ()),))
    assert table.splitlines()[2] == "| basics | 1/11 (in progress) | definitions of the terms |"


def test_pages_by_section_in_book_order_with_counts(book):
    labels = book_index.find_labels(book)
    sections = (
        Section("basics", "def-", 2, "", ("def-query", "def-key")),
        Section("concept", "concept-", 1, "", ("concept-picture",)),
        Section("practice", "practice-", 2, "", (), open=True),
    )
    pages = book_index.pages_by_section(labels, sections)
    assert pages == {"chapters/a": {"basics": 2, "concept": 1, "practice": 1}, "chapters/b": {"practice": 1}}
    assert list(pages) == ["chapters/a", "chapters/b"] and "intro" not in pages   # no item on the intro
    table = book_index.pages_markdown(labels, sections).splitlines()
    assert table[2:] == ["| {doc}`/chapters/a` | basics (2), concept (1), practice (1) |",
                         "| {doc}`/chapters/b` | practice (1) |"]


def test_the_chapters_sections():
    names = [s.name for s in book_index.SECTIONS]
    assert names == ["basics", "concept", "theory", "mathematics", "practice", "propositions", "apparatus"]
    for sec in book_index.SECTIONS:
        assert len(sec.expected) == sec.total and len(set(sec.expected)) == sec.total
        assert all(n.startswith(sec.prefix) for n in sec.expected)


def test_import_attn_does_not_import_book_index():
    import subprocess
    import sys

    code = "import sys, attn; print('attn.book_index' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
