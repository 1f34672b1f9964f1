"""reStructuredText files (the pages Sphinx builds a project's docs from) as documents, parsed by docutils.

The title is a section that opens the file (RST has no level-1 mark: the first adornment is the top),
else the file name; its text is the opening section, and each section below it is a section whose heading
carries its parents below the title ("Install › Linux"), as a Markdown page's do. A paragraph, a list
item, a field or a definition is a line of its own; literal blocks, `code-block`s and doctests are kept
as code blocks and tables (grid, simple, `list-table`, `csv-table`) as table blocks (`assistant.blocks`).
A callout (`.. note::`, `.. versionadded:: 0.4`) is its title and its text, as the site shows it.

docutils knows no Sphinx directive or role. A role it does not know reads as its text ("the guide" of
:ref:`the guide <install>`, `backward` of :meth:`~Accelerator.backward`); a directive it does not know is
read as a callout or code by the name Sphinx gives it (`site_markup`'s MyST lists), and what only builds
the site (`toctree`, `automodule`) is no text. The names are registered with docutils' registries, which
are the process's: this is the only reader of RST here.

Nothing outside the file is read: `include`, `raw` and a table's `:file:` or `:url:` are refused by the
parser's settings, and no docutils.conf can turn them back on, so a page cannot pull `/etc/passwd` into the
index. A page docutils cannot read, or one over MAX_RST_CHARS, is read as plain text, with a note.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, ClassVar, cast

from docutils import nodes
from docutils.core import publish_doctree
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Directive, Parser, directives, roles
from docutils.parsers.rst.languages import en as language_en
from docutils.utils import new_document

from assistant.blocks import fenced, table_text
from assistant.knowledge.documents import MAX_PARENT_CHARS, SEPARATOR, Document, Section
from assistant.knowledge.site_markup import MYST_CODE, MYST_HIDDEN, MYST_TITLES
from assistant.knowledge.text_reader import read_text_document
from assistant.text import clean

# docutils reads about 40,000 characters a second of markup-dense RST here: a larger file would hold a sync
MAX_RST_CHARS = 2_000_000
SETTINGS = {
    "_disable_config": True,  # a docutils.conf where the sync runs cannot turn the bounds below back on
    "file_insertion_enabled": False,  # no `include`, no `:file:` or `:url:` of a table: a page reads only itself
    "raw_enabled": False,
    "report_level": 5,  # the parser's complaints are no text of the page
    "halt_level": 5,
    "warning_stream": False,
    "syntax_highlight": "none",  # no Pygments classes inside a code block
    "doctitle_xform": False,  # the opening section stays a section: its text is the page's opening
    "sectsubtitle_xform": False,
    "input_encoding": "unicode",
}
DIRECTIVE_NAME = re.compile(r"^\s*\.\.\s+([\w:+.-]+)::", re.M)
ROLE_NAME = re.compile(r"(?<![\w`]):([\w:+.-]+):`")
ROLE_TARGET = re.compile(r"^(?P<text>.*?)\s*<[^<>]*>$", re.S)  # "the guide <install>" shows "the guide"


class AnyOption(dict[str, Any]):
    """An option spec that takes any option as text: Sphinx's `:caption:`, `:linenos:`, `:emphasize-lines:`."""

    def __contains__(self, key: object) -> bool:
        return True

    def __bool__(self) -> bool:  # docutils refuses every option of a directive whose spec is empty
        return True

    def __getitem__(self, key: str) -> Any:
        return directives.unchanged


class CodeDirective(Directive):
    """`code-block`, `sourcecode`, `code`: its content as a code block in the language it names, after its
    caption."""

    optional_arguments = 1
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = AnyOption()

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        language = self.arguments[0] if self.arguments else ""
        block = nodes.literal_block(code, code, language=language)
        caption = self.options.get("caption")  # shown above the block: "Install from PyPI"
        return [nodes.paragraph(caption, caption), block] if caption else [block]


class CalloutDirective(Directive):
    """A directive docutils does not know that shows text: Sphinx's `versionadded`, `seealso`, a tab or a
    card. Its title (the label Sphinx shows, then its argument) is a paragraph, its content read as RST."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = AnyOption()

    def run(self) -> list[nodes.Node]:
        label = MYST_TITLES.get(self.name, "")
        box = nodes.container()
        if (label or self.arguments) and self.name not in UNTITLED:
            # the argument runs on into the first lines of text when no blank line parts them (Sphinx's own
            # `versionadded:: 0.4` then "The ``--offline`` flag."): it is read as inline text, roles and all
            argument = " ".join(self.arguments)
            if self.name in VERSION_NOTES and " " in argument:  # "New in version 0.4: The --offline flag."
                version, argument = argument.split(None, 1)
                label = f"{label} {version}:"
            words, _ = self.state.inline_text(argument, self.lineno)
            box += nodes.paragraph("", f"{label} " if label and words else label, *words)
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


class HiddenDirective(Directive):
    """A directive that only builds the site (`toctree`, `automodule`, `index`): no text of the page."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = AnyOption()

    def run(self) -> list[nodes.Node]:
        return []


def role_text(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None, content: Any = None
) -> tuple[list[nodes.Node], list[nodes.Node]]:
    """A role docutils does not know, as the words Sphinx shows: the text before a `<target>`, and of a `~`
    name its last part."""
    shown = text
    target = ROLE_TARGET.match(text)
    if target and target["text"]:
        shown = target["text"]
    elif shown.startswith("~"):
        shown = shown[1:].rsplit(".", 1)[-1]
    return [nodes.literal(rawtext, shown.lstrip("!"))], []


@lru_cache(maxsize=1)
def lookup_document() -> nodes.document:
    """A blank document to ask docutils' registries with (they report what they do not know to it)."""
    settings = get_default_settings(Parser)
    settings.report_level = 5
    settings.warning_stream = False
    return new_document("<names>", settings)


def learn_names(text: str) -> None:
    """Register with docutils each directive and role the text uses that docutils does not know."""
    document = lookup_document()
    language = cast(Any, language_en)  # the stubs ask for a protocol the module is
    for name in set(DIRECTIVE_NAME.findall(text)):
        directive, _ = directives.directive(name, language, document)
        if name in MYST_CODE:
            directives.register_directive(name, CodeDirective)
        elif directive is None:
            hidden = name in MYST_HIDDEN or name in EXTRA_HIDDEN or name.startswith(HIDDEN_PREFIXES)
            directives.register_directive(name, HiddenDirective if hidden else CalloutDirective)
    for name in set(ROLE_NAME.findall(text)):
        role, _ = roles.role(name, language, 0, document.reporter)
        if role is None:
            roles.register_local_role(name, cast(Any, role_text))  # the stubs say a role makes references only


VERSION_NOTES = {"versionadded", "versionchanged", "deprecated", "versionremoved"}
HIDDEN_PREFIXES = ("auto", "py:", "c:", "cpp:", "js:")  # autodoc stubs and domain object descriptions
EXTRA_HIDDEN = {"currentmodule", "module", "index", "highlight", "tabularcolumns"}
UNTITLED = {"only", "tab-set", "grid"}  # their argument is a condition or a layout, not words the page shows
HIDDEN_ELEMENTS = (nodes.comment, nodes.target, nodes.substitution_definition, nodes.system_message, nodes.raw)
CALLOUT_TITLES = {kind: title for kind, title in MYST_TITLES.items() if title.endswith(":")}


def read_rst(text: str, notes: list[str] | None = None) -> Document:
    """The document of a reStructuredText file; `notes` gets a line when it was read as plain text instead
    (over MAX_RST_CHARS, or markup docutils cannot read)."""
    if len(text) > MAX_RST_CHARS:
        return as_plain_text(text, f"over {MAX_RST_CHARS:,} characters", notes)
    try:
        learn_names(text)
        return document_of(publish_doctree(text, settings_overrides=SETTINGS))
    except Exception as error:  # a page docutils cannot read (or nests past recursion) is still the user's text
        return as_plain_text(text, f"docutils could not read it ({type(error).__name__})", notes)


def document_of(tree: nodes.document) -> Document:
    """The document of a parsed page: its opening section's title is the page's."""
    parts = [child for child in tree.children if not isinstance(child, HIDDEN_ELEMENTS)]
    sections: list[Section] = []
    title = ""
    if parts and isinstance(parts[0], nodes.section):
        opening = parts[0]
        title = heading_text(opening)
        sections.append(Section("", "\n".join(body_lines(opening)), line_of(opening)))
        read_sections(opening, [], sections)
        parts = parts[1:]
    else:
        body = [line for part in parts if not isinstance(part, nodes.section) for line in element_lines(part)]
        sections.append(Section("", "\n".join(body), 1))
    for part in parts:
        if isinstance(part, nodes.section):
            add_section(part, [], sections)
    return Document(title, [section for section in sections if section.heading or section.text])


def as_plain_text(text: str, why: str, notes: list[str] | None) -> Document:
    if notes is not None:
        notes.append(f"{why}: read as plain text, not as reStructuredText")
    return read_text_document(text)


def read_sections(parent: nodes.Element, parents: list[str], sections: list[Section]) -> None:
    for child in parent.children:
        if isinstance(child, nodes.section):
            add_section(child, parents, sections)


def add_section(section: nodes.section, parents: list[str], sections: list[Section]) -> None:
    words = heading_text(section)
    sections.append(Section(SEPARATOR.join([*parents, words]), "\n".join(body_lines(section)), line_of(section)))
    read_sections(section, [*parents, words[:MAX_PARENT_CHARS]], sections)


def title_of(element: nodes.Element) -> nodes.title | None:
    """A section's or a callout's own title, if it has one."""
    return next((child for child in element.children if isinstance(child, nodes.title)), None)


def words_of(node: nodes.Node) -> str:
    """A node's text as one line."""
    return clean(node.astext())


def heading_text(section: nodes.Element) -> str:
    title = title_of(section)
    return words_of(title) if title is not None else ""


def line_of(section: nodes.Element) -> int:
    """The line a section starts on: its title's (docutils counts a title at its underline)."""
    title = title_of(section)
    return max(1, title.line - 1) if title is not None and title.line else 1


def body_lines(section: nodes.Element) -> list[str]:
    """The section's own text: its children but its title and its subsections."""
    return [
        line
        for child in section.children
        if not isinstance(child, (nodes.title, nodes.section))
        for line in element_lines(child)
    ]


def element_lines(node: nodes.Node) -> Iterator[str]:
    """The lines of a body element: a paragraph a line, a code block or a table a block."""
    if isinstance(node, (*HIDDEN_ELEMENTS, nodes.Invisible)):
        return
    if isinstance(node, (nodes.literal_block, nodes.doctest_block, nodes.math_block)):
        code = node.astext().rstrip("\n")
        if code.strip():
            language = node.get("language", "") or ("pycon" if isinstance(node, nodes.doctest_block) else "")
            yield fenced(language, code.split("\n")) + "\n"
        return
    if isinstance(node, nodes.table):
        rows = [[words_of(entry) for entry in row.findall(nodes.entry)] for row in node.findall(nodes.row)]
        rows = [row for row in rows if any(row)]
        if rows:
            yield table_text(rows) + "\n"
        return
    if isinstance(node, (nodes.paragraph, nodes.rubric, nodes.line, nodes.caption, nodes.attribution)):
        words = words_of(node)
        if words:
            yield words
        return
    if isinstance(node, nodes.Admonition) and isinstance(node, nodes.Element):
        yield from labelled(admonition_title(node), *node.children)
        return
    if isinstance(node, (nodes.definition_list_item, nodes.field, nodes.option_list_item)):
        head, *rest = [child for child in node.children if isinstance(child, nodes.Element)] or [node]
        yield from labelled(words_of(head) + ":", *rest)
        return
    if isinstance(node, nodes.topic) and "contents" in node.get("classes", []):
        return  # a table of contents: the headings again
    if isinstance(node, nodes.image):
        return
    if isinstance(node, nodes.Element):
        for child in node.children:
            if not isinstance(child, nodes.title) or isinstance(node, (nodes.topic, nodes.sidebar, nodes.table)):
                yield from element_lines(child)
        return
    words = words_of(node)
    if words:
        yield words


def admonition_title(node: nodes.Element) -> str:
    """A callout's title as the site shows it: "Note:", or a generic admonition's own title."""
    own = title_of(node)
    if own is not None:
        return words_of(own)
    kind = node.tagname
    return CALLOUT_TITLES.get(kind, kind.capitalize() + ":")


def labelled(label: str, *parts: nodes.Node) -> Iterator[str]:
    """`label` and the lines of `parts`, the first of which follows the label on its line."""
    lines = [line for part in parts if not isinstance(part, nodes.title) for line in element_lines(part)]
    if lines and not lines[0].endswith("\n"):
        yield f"{label} {lines[0]}"
        yield from lines[1:]
    else:
        yield label
        yield from lines
